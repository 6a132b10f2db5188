"""The default estimate where the truth is known: a synthetic harness of real-like runs.

    python benchmarks/bench_synthetic_truth.py [--replicates 1000] [--regimes flat,between,steep,tied] \
        [--seed 0] [--json OUT.json] [--compare] [--no-bound] [--naive-copies 20] [--naive-draws 200] \
        [--oracle-copies 600] [--oracle-members 400]

A fast generator of real-like weak selectors replaces the random forest. Feature ``f``
has a mean score ``mu_f`` (``n_signal`` graded signal features, the rest 0); ensemble
copy ``c`` (its own half of the data) shifts it by ``tau * Z[c, f]``, and weak selector
``j`` of that copy adds ``sigma * W[c, j, f]``; a score below 0 is 0 (a forest's
importance of a feature it never used), so null features tie often, and the ranks break
ties at random as real runs do (:func:`ensstab_dask.rank_scores`). The regimes differ by
how much of the noise is the copy's (``tau``, which no ensemble averages away) and how
much the weak selector's (``sigma``, which an ensemble of ``m`` divides by ``sqrt(m)``):
``flat`` (the curve settles early), ``steep`` (it still climbs at m = 200),
``between``, and ``tied``: ``between`` with its scores rounded down to whole numbers and
20 signal features repeated as columns, so that scores tie as on discretized data.

The true curve at each size is a mean over ``--truth-copies`` copies of ``m`` weak
selectors (every pair of copies; its standard error is printed and is far below the
estimate's). Each replicate draws 10 fresh copies of 20 weak selectors and runs them
through the default estimate's own code (``estimate_from_runs`` on those copies, as
``estimate`` does after its real runs), then records, per size: the point, its SE, the
95 % interval and the self-check's verdict. Per regime and size it reports the bias (and
over the mean SE), the SE's calibration (the spread of the points over the mean SE), the
interval's coverage of the truth, and how often the self-check fails (a false alarm
where the model's bias is within a quarter of its SE, power where it is not).

The bound (issue 36; ``--no-bound`` skips it): per regime and size, the equal-precision
speed-up EPS(m) = (naive runs x naive var) / (estimate runs x estimate var) that no
estimator from G copies of B weak selectors (COPY_DESIGN) can beat, and the one the
estimate reached. The naive check is ``--naive-copies`` copies of m weak selectors
(``validate``'s 20 by default), its variance the spread of ``--naive-draws`` simulated
naive checks. The oracle knows each copy's ensemble of m exactly (member noise removed):
its variance is that of the mean over pairs of G copies of their expected similarity,
measured on ``--oracle-copies`` copies with two independent ensembles of
``--oracle-members`` weak selectors each (see :func:`bound`). The achieved EPS comes from
the points' real spread over the replicates, and with their bias from their RMSE against
the truth, never from the reported SE (:func:`achieved`); achieved / bound is the
oracle's variance over the estimate's. Fewer naive draws, oracle copies or members make
the run shorter and the bound noisier (roughly sqrt(2 / draws) relative on the naive
variance, which cancels in achieved / bound).

``--compare`` also scores other extrapolants on each replicate's copies (lines in
``1 / m``, ``a - b / (m + c)``, the law on other fit sizes), by their mean error and RMSE
against the truth beyond B. Results and the commands that made them:
benchmarks/results/synthetic-truth.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_regimes import (  # noqa: E402
    COPY_DESIGN,
    N_FEATURE,
    N_TARGET,
    REGIMES,
    SIZES,
    Regime,
    eiv_point,
    true_curve,
)


def _pair_moments(P: np.ndarray, Q: np.ndarray) -> tuple[float, float, float]:
    """Unbiased E[h(c, d) h(c, d)], E[h(c, d) h(c, e)] and E[h(c, d) h(e, f)] (distinct
    copies) of a kernel ``h`` measured twice as the symmetric matrices ``P`` and ``Q``
    (n x n, diagonal ignored) whose noises are independent given the copies, so that the
    products carry no noise variance: the pairs' squared mean, the copy's covariance and
    the mean's square of the U-statistic's decomposition."""
    n = len(P)
    P, Q = P.astype(np.float64).copy(), Q.astype(np.float64).copy()
    np.fill_diagonal(P, 0.0)
    np.fill_diagonal(Q, 0.0)
    pq = float((P * Q).sum())
    r, s = P.sum(axis=1), Q.sum(axis=1)
    rs = float(r @ s)
    same = pq / (n * (n - 1))
    one = (rs - pq) / (n * (n - 1) * (n - 2))
    # Every ordered pair of pairs, less those sharing a copy (4 rs - 2 pq of them).
    none = (r.sum() * s.sum() - 4.0 * rs + 2.0 * pq) / (n * (n - 1) * (n - 2) * (n - 3))
    return same, one, float(none)


def u_variance(P: np.ndarray, Q: np.ndarray, copies: int) -> float:
    """The variance of the mean over pairs of ``copies`` copies of the kernel that ``P``
    and ``Q`` measure (see :func:`_pair_moments`): (2 (G - 2) zeta_1 + zeta_2) / C(G, 2)."""
    same, one, none = _pair_moments(P, Q)
    G = copies
    return (2 * (G - 2) * (one - none) + (same - none)) / (G * (G - 1) / 2)


def _tops(ranks: np.ndarray, m: int, blocks: int, rng: np.random.Generator) -> np.ndarray:
    """The 0/1 membership (n_copies * blocks, N_FEATURE) of the top N_TARGET of each
    copy's ``blocks`` disjoint ensembles of ``m`` members (its first ``blocks * m``)."""
    from ensstab_dask.aggregation import aggregate_rankings

    n = len(ranks)
    tops = aggregate_rankings(ranks[:, : blocks * m].reshape(n * blocks, m, N_FEATURE), N_TARGET, seed=rng)
    z = np.zeros((n * blocks, N_FEATURE))
    z[np.arange(n * blocks)[:, None], tops] = 1.0
    return z


def _block_similarity(z: np.ndarray, n: int, blocks: int, chunk: int = 50) -> np.ndarray:
    """The Jaccard similarity of copy c's ensembles in ``z`` (see :func:`_tops`) with copy
    d's, averaged over the pairs of their blocks: (n, n), the diagonal meaningless. Made
    ``chunk`` copies at a time (every top list holds N_TARGET features, so the Jaccard of
    an intersection i is i / (2 N_TARGET - i), as ``similarity_matrix`` gives it)."""
    out = np.empty((n, n))
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        inter = z[start * blocks : stop * blocks] @ z.T
        sim = inter / (2.0 * N_TARGET - inter)
        out[start:stop] = sim.reshape(stop - start, blocks, n, blocks).mean(axis=(1, 3))
    return out


def _jackknife_se(P: np.ndarray, Q: np.ndarray, copies: int, groups: int = 10) -> float:
    """The grouped jackknife's SE (over ``groups`` groups of the measuring copies) of
    :func:`u_variance`: how well the oracle's copies pin it."""
    n = len(P)
    parts = np.array_split(np.arange(n), groups)
    values = []
    for part in parts:
        keep = np.setdiff1d(np.arange(n), part)
        values.append(u_variance(P[np.ix_(keep, keep)], Q[np.ix_(keep, keep)], copies))
    values = np.array(values)
    return float(np.sqrt((groups - 1) / groups * np.sum((values - values.mean()) ** 2)))


def bound(
    regime: Regime,
    *,
    seed: int,
    design: tuple[int, int] = COPY_DESIGN,
    naive_copies: int = 20,
    naive_draws: int = 200,
    oracle_copies: int = 600,
    oracle_members: int = 400,
    max_blocks: int = 16,
) -> dict:
    """The naive check's variance and the oracle's at each of SIZES, and the bound on the
    equal-precision speed-up of a design of ``design`` = (G, B) copies x members.

    The naive check (``naive_copies`` copies of m weak selectors, ``naive_copies * m``
    real runs; ``validate``'s default is 20): its statistic, the mean over pairs of copies
    of the top-N_TARGET Jaccard of their aggregated ensembles, drawn ``naive_draws``
    times (each draw's copies of max(SIZES) members, their first m at size m, as the
    truth takes them); its variance is the draws' spread. The same variance from the
    oracle's copies (below, one ensemble of m per copy, by the U-statistic's
    decomposition) is given too, as a check.

    The oracle knows each copy's ensemble of m exactly (member noise removed): the
    kernel h_m(c, d), the expected similarity of an ensemble of m of copy c with one of
    copy d, and over G copies its mean over pairs. Its variance, (2 (G - 2) zeta_1 +
    zeta_2) / C(G, 2), is the least any estimator from G copies can have. The zetas come
    from ``oracle_copies`` copies, each with two independent ensembles of
    ``oracle_members`` weak selectors (A and B): h_m(c, d) is measured once from the A
    ensembles (the mean over up to ``max_blocks`` disjoint blocks of m of each) and once
    from the B ones, so that products of the two carry no member noise and the zetas
    are unbiased whatever the pool size. The bound EPS(m) = (naive runs x naive var) /
    (G B x oracle var)."""
    from ensstab_dask.aggregation import aggregate_rankings
    from ensstab_dask.indices import similarity_matrix

    G, B = design
    top = max(SIZES)
    rng = np.random.default_rng([seed, 99, 1])
    naive = {m: [] for m in SIZES}
    for _ in range(naive_draws):
        ranks = regime.copies(naive_copies, top, rng)
        for m in SIZES:
            z = np.zeros((naive_copies, N_FEATURE))
            z[np.arange(naive_copies)[:, None], aggregate_rankings(ranks[:, :m], N_TARGET, seed=rng)] = 1.0
            sim = similarity_matrix(z, N_FEATURE, "jaccard")
            naive[m].append(sim[~np.eye(naive_copies, dtype=bool)].mean())
    rng = np.random.default_rng([seed, 99, 2])
    K = max(oracle_members, top)
    blocks = {m: max(1, min(max_blocks, K // m)) for m in SIZES}
    za = {m: [] for m in SIZES}
    zb = {m: [] for m in SIZES}
    batch = max(1, 10_000 // K)
    for start in range(0, oracle_copies, batch):
        ranks = regime.copies(min(batch, oracle_copies - start), 2 * K, rng)
        for m in SIZES:
            za[m].append(_tops(ranks[:, :K], m, blocks[m], rng))
            zb[m].append(_tops(ranks[:, K:], m, blocks[m], rng))
    rows = []
    for m in SIZES:
        a, b = np.concatenate(za[m]), np.concatenate(zb[m])
        P = _block_similarity(a, oracle_copies, blocks[m])
        Q = _block_similarity(b, oracle_copies, blocks[m])
        a1 = a.reshape(oracle_copies, blocks[m], N_FEATURE)[:, 0]
        P1 = similarity_matrix(a1, N_FEATURE, "jaccard")  # one ensemble of m per copy: the naive kernel
        naive_var = float(np.var(naive[m], ddof=1)) if naive_draws > 1 else float("nan")
        oracle_var = u_variance(P, Q, G)
        oracle_se = _jackknife_se(P, Q, G)
        naive_runs = naive_copies * m
        rows.append(
            dict(
                m=m,
                naive_mean=float(np.mean(naive[m])) if naive_draws else float("nan"),
                naive_var=naive_var,
                naive_var_from_oracle_copies=u_variance(P1, P1, naive_copies),
                oracle_var=float(oracle_var),
                oracle_var_se=oracle_se,
                oracle_blocks=blocks[m],
                naive_runs=naive_runs,
                bound_eps=float(naive_runs * naive_var / (G * B * oracle_var)),
                bound_eps_rel_se=float(oracle_se / oracle_var),
            )
        )
    return dict(
        design=list(design),
        naive_copies=naive_copies,
        naive_draws=naive_draws,
        oracle_copies=oracle_copies,
        oracle_members=K,
        rows=rows,
    )


def achieved(rows: list[dict], reps: list[dict], bound_rows: list[dict], runs: float) -> list[dict]:
    """The equal-precision speed-up the estimate reached at each size, from its points'
    real spread over the replicates (never the reported SE), and with its bias, from the
    RMSE against the truth: (naive runs x naive var) / (``runs`` x the estimate's variance,
    or its mean squared error); and each over the bound."""
    point = np.array([r["point"] for r in reps], dtype=float)
    out = []
    for i, (r, b) in enumerate(zip(rows, bound_rows)):
        err = point[:, i] - r["truth"]
        var = float(np.nanvar(point[:, i], ddof=1))
        mse = float(np.nanmean(err**2))
        work = b["naive_runs"] * b["naive_var"]
        eps, eps_mse = work / (runs * var), work / (runs * mse)
        out.append(
            dict(
                m=r["m"],
                naive_var=b["naive_var"],
                sd=float(np.sqrt(var)),
                rmse=float(np.sqrt(mse)),
                eps_spread=float(eps),
                eps_rmse=float(eps_mse),
                bound_eps=b["bound_eps"],
                spread_over_bound=float(eps / b["bound_eps"]),
                rmse_over_bound=float(eps_mse / b["bound_eps"]),
            )
        )
    return out


def _grid_fit(shape, grid, sizes, values, cov, targets, *, shrink: float = 0.5) -> np.ndarray:
    """a - b * shape(m, c), c on ``grid``, (a, b) by generalised least squares under the
    covariance shrunk towards its diagonal; evaluated at ``targets`` with the c of the
    smallest residual."""
    x = np.asarray(sizes, dtype=float)
    w = np.linalg.pinv((1 - shrink) * cov + shrink * np.diag(np.diag(cov)) + 1e-12 * np.eye(len(x)))
    best = None
    for c in grid:
        X = np.column_stack([np.ones_like(x), -shape(x, c)])
        beta = np.linalg.solve(X.T @ w @ X, X.T @ w @ values)
        r = values - X @ beta
        rss = float(r @ w @ r)
        if best is None or rss < best[0]:
            best = (rss, c, beta)
    _, c, (a, b) = best
    return a - b * shape(np.asarray(targets, dtype=float), c)


def _hyperbola(sizes, values, cov, targets, *, shrink: float = 0.5) -> np.ndarray:
    """a - b / (m + c), c >= 0 on a grid."""
    grid = np.concatenate([[0.0], np.geomspace(0.1, 100.0, 60)])
    return _grid_fit(lambda m, c: 1.0 / (m + c), grid, sizes, values, cov, targets, shrink=shrink)


def _root(sizes, values, cov, targets, *, shrink: float = 0.5) -> np.ndarray:
    """a - b * sqrt(c + 1 / m), c >= 0 on a grid (c = 0 is the line in 1 / sqrt(m); a large
    c is 1 / m)."""
    grid = np.concatenate([[0.0], np.geomspace(1e-4, 10.0, 60)])
    return _grid_fit(lambda m, c: np.sqrt(c + 1.0 / m), grid, sizes, values, cov, targets, shrink=shrink)


def candidates(copies: np.ndarray, seed: int) -> dict[str, list[float]]:
    """Extrapolants beyond B on the replicate's own copies, at SIZES > B."""
    from ensstab_dask.models.measured import (
        copy_similarities,
        curve_covariance,
        extrapolation_weights,
        fit_sizes,
        pair_means,
    )

    G, B, _ = copies.shape
    sizes = list(range(1, B + 1))
    sim = copy_similarities(copies, N_TARGET, sizes, seed=seed)
    curve = pair_means(sim)
    cov = curve_covariance(sim)
    targets = [m for m in SIZES if m > B]
    upper = fit_sizes(B)
    out = {"sqrt_line_upper": (curve[np.array(upper) - 1] @ extrapolation_weights(upper, targets).T).tolist()}
    for lo in (2, B // 2):
        x = 1.0 / np.arange(lo, B + 1)
        X = np.column_stack([np.ones_like(x), x])
        beta = np.linalg.lstsq(X, curve[lo - 1 :], rcond=None)[0]
        out[f"inv_line_{lo}"] = (beta[0] + beta[1] / np.array(targets, dtype=float)).tolist()
    for lo in (1, 3):
        idx = np.arange(lo - 1, B)
        out[f"hyperbola_{lo}"] = _hyperbola(idx + 1, curve[idx], cov[np.ix_(idx, idx)], targets).tolist()
        out[f"hyperbola_{lo}_wls"] = _hyperbola(
            idx + 1, curve[idx], cov[np.ix_(idx, idx)], targets, shrink=1.0
        ).tolist()
    for lo in (1, 3, 5):
        idx = np.arange(lo - 1, B)
        out[f"root_{lo}"] = _root(idx + 1, curve[idx], cov[np.ix_(idx, idx)], targets).tolist()
        out[f"root_{lo}_wls"] = _root(idx + 1, curve[idx], cov[np.ix_(idx, idx)], targets, shrink=1.0).tolist()
    # The errors-in-variables extrapolation (issue 36): per feature, each copy's mean rank
    # shrunk towards the overall mean as its ensemble of m would be, no curve fit.

    x = copies.astype(float)
    out["eiv"] = [eiv_point(x.mean(axis=1), x.var(axis=1, ddof=1).mean(axis=0), B, m) for m in targets]
    return out


def one_estimate(
    regime: Regime,
    rep: int,
    seed: int,
    n_boot: int,
    compare: bool = False,
    precision: tuple | None = None,
    design: tuple[int, int] = COPY_DESIGN,
) -> dict:
    """One replicate: fresh copies through the default estimate's code; with ``precision``
    = (half-width, cap), through its rounds (the library's own ``spend_in_rounds``) on
    copies drawn once for the largest design the cap allows and taken as prefixes, as
    the real runs are."""
    from ensstab_dask.estimates.stages.pipeline import estimate_from_runs
    from ensstab_dask.estimates.stages.rounds import spend_in_rounds
    from ensstab_dask.real.runs import runs_from_copies
    from ensstab_dask.settings import EstimateSettings

    rng = np.random.default_rng([seed, rep])
    G, B = design
    big = regime.copies(precision[1] // B, max(SIZES), rng) if precision else regime.copies(G, B, rng)
    settings = EstimateSettings(
        n_feature=N_FEATURE, n_target=N_TARGET, m_ensemble=SIZES, n_boot=n_boot, seed=rep, model="anchored"
    )

    def on(design):
        copies = np.ascontiguousarray(big[: design[0], : design[1]])
        return estimate_from_runs(runs_from_copies(copies, N_TARGET), settings, client="synchronous", copy_ranks=copies)

    spent = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = on(design)
        if precision:
            est, spent = spend_in_rounds(
                est, design, lambda old, new: on(new), precision=precision[0], max_real_runs=precision[1]
            )
    copies = big[:G, :B]
    curve = est.curve
    check = est.self_check
    return {
        "point": curve["stability"].values.tolist(),
        "se": curve["stability_std"].values.tolist(),
        "lower": curve["stability_lower"].values.tolist() if "stability_lower" in curve else None,
        "upper": curve["stability_upper"].values.tolist() if "stability_upper" in curve else None,
        "check_passed": None if check is None else bool(check.passed),
        "reliable": bool(est.reliable),
        "candidates": candidates(copies, rep) if compare else {},
        "spending": None if spent is None else spent.to_dict(),
    }


def summarise(truth: np.ndarray, reps: list[dict], design: tuple[int, int] = COPY_DESIGN) -> list[dict]:
    nan = [float("nan")] * len(SIZES)  # an estimate with no curve (a guard rail blocked it) covers nothing
    point = np.array([r["point"] for r in reps], dtype=float)
    se = np.array([r["se"] for r in reps], dtype=float)
    lower = np.array([r["lower"] or nan for r in reps], dtype=float)
    upper = np.array([r["upper"] or nan for r in reps], dtype=float)
    alarms = np.array([r["check_passed"] is False for r in reps])
    # Bias, spread and coverage over the same replicates: those with a point at the size
    # (an estimate with no curve said the method has nothing to say: counted in no_curve).
    rows = []
    answered = [~np.isnan(point[:, i]) for i in range(len(SIZES))]
    covers = [(lower[:, i] <= truth[i]) & (truth[i] <= upper[:, i]) for i in range(len(SIZES))]
    for i, m in enumerate(SIZES):
        bias = np.nanmean(point[:, i]) - truth[i]
        mean_se = np.nanmean(se[:, i])
        rows.append(
            dict(
                m=m,
                truth=float(truth[i]),
                bias=float(bias),
                bias_over_se=float(bias / mean_se) if mean_se > 0 else float("nan"),
                mean_se=float(mean_se),
                sd=float(np.nanstd(point[:, i], ddof=1)),
                sd_over_se=float(np.nanstd(point[:, i], ddof=1) / mean_se) if mean_se > 0 else float("nan"),
                coverage=float(np.mean(covers[i][answered[i]])) if answered[i].any() else float("nan"),
                coverage_all=float(np.mean((lower[:, i] <= truth[i]) & (truth[i] <= upper[:, i]))),
                zero_se=int((se[:, i] <= 0).sum()),
            )
        )
    beyond = [i for i, m in enumerate(SIZES) if m > design[1]]
    errors: dict = {}
    for name in reps[0]["candidates"]:
        values = np.array([r["candidates"][name] for r in reps])
        err = values - truth[beyond]
        errors[name] = {"mean": err.mean(axis=0).tolist(), "rmse": np.sqrt((err**2).mean(axis=0)).tolist()}
    no_curve = int(np.isnan(point).all(axis=1).sum())
    # The alarm's power where the estimate is wrong: among replicates whose error at the
    # largest size exceeds 2 (3) of their own SE, the share that the self-check flagged.
    with np.errstate(invalid="ignore", divide="ignore"):
        off = np.abs(point[:, -1] - truth[-1]) / se[:, -1]
    power = {
        f"error_over_{k}_se": dict(
            replicates=int((off > k).sum()), alarmed=float(alarms[off > k].mean()) if (off > k).any() else None
        )
        for k in (2, 3)
    }
    spent = [r["spending"] for r in reps if r.get("spending")]
    spending = None
    if spent:
        runs = np.array([s["rounds"][-1]["real_runs"] for s in spent])
        widths = np.array([s["rounds"][-1]["half_width"] for s in spent], dtype=float)
        spending = dict(
            reached=float(np.mean([s["reached"] for s in spent])),
            runs_median=float(np.median(runs)),
            runs_mean=float(runs.mean()),
            runs_max=int(runs.max()),
            half_width_median=float(np.nanmedian(widths)),
            half_width_p95=float(np.nanpercentile(widths, 95)),
            designs=sorted({"{copies}x{members}".format(**s["rounds"][-1]) for s in spent}),
        )
    return rows + [
        dict(
            alarm_rate=float(alarms.mean()),
            replicates=len(reps),
            no_curve=no_curve,
            extrapolants=errors,
            spending=spending,
            power=power,
        )
    ]


def speed_up(rows: list[dict], truth_se: np.ndarray, truth_copies: int, runs: float) -> list[float]:
    """Equal-precision speed-up over the naive check at each size: (naive runs x naive
    variance) / (estimate runs x the estimate's variance over the replicates). The naive
    check is 20 copies of m weak selectors (20 m real runs), its SE the truth's U-statistic
    SE scaled from ``truth_copies`` copies to 20 (as 1 / sqrt(copies))."""
    naive_var = (np.asarray(truth_se) * np.sqrt(truth_copies / 20)) ** 2
    return [float(20 * r["m"] * v / (runs * r["sd"] ** 2)) for r, v in zip(rows, naive_var)]


def _print_bound(limit: dict, runs: float) -> None:
    G, B = limit["design"]
    print(
        f"\nthe bound for {G} x {B} against a naive check of {limit['naive_copies']} copies "
        f"({limit['naive_draws']} naive draws; the oracle from {limit['oracle_copies']} copies of two ensembles "
        f"of {limit['oracle_members']}; {limit['seconds']:.0f} s), the estimate at {runs:.0f} real runs, "
        "its EPS from the points' spread over the replicates (and their RMSE against the truth):"
    )
    print(
        "| m | naive var (from the oracle's copies) | oracle sd | estimate sd | estimate RMSE "
        "| achieved EPS (spread) | achieved EPS (RMSE) | bound EPS (rel. SE) | achieved / bound (spread, RMSE) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for b, a in zip(limit["rows"], limit["achieved"]):
        print(
            f"| {a['m']} | {b['naive_var']:.2e} ({b['naive_var_from_oracle_copies']:.2e}) | "
            f"{np.sqrt(max(b['oracle_var'], 0.0)):.4f} | {a['sd']:.4f} | {a['rmse']:.4f} | {a['eps_spread']:.1f}x | "
            f"{a['eps_rmse']:.1f}x | {a['bound_eps']:.1f}x ({b['bound_eps_rel_se']:.0%}) | "
            f"{a['spread_over_bound']:.2f}, {a['rmse_over_bound']:.2f} |"
        )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--regimes", default=",".join(REGIMES))
    ap.add_argument("--truth-copies", type=int, default=400)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="processes for the replicates")
    ap.add_argument("--json", default=None)
    ap.add_argument("--compare", action="store_true", help="also score other extrapolants on the same copies")
    ap.add_argument("--precision", type=float, default=None, help="spend runs in rounds to this half-width at m = 200")
    ap.add_argument("--max-real-runs", type=int, default=1000, help="the rounds' cap, with --precision")
    ap.add_argument("--truth-from", default=None, help="a JSON this script wrote for the same seed: its true curves")
    ap.add_argument("--no-bound", action="store_true", help="skip the naive check's and the oracle's variances")
    ap.add_argument("--naive-copies", type=int, default=20, help="copies of the naive check the bound compares with")
    ap.add_argument("--naive-draws", type=int, default=200, help="simulated naive checks for its variance")
    ap.add_argument("--oracle-copies", type=int, default=600, help="copies the oracle's variance is measured on")
    ap.add_argument("--oracle-members", type=int, default=400, help="weak selectors of each of a copy's two ensembles")
    ap.add_argument("--design", default="10x20", help="copies x weak selectors per copy, GxB (the default's 10x20)")
    args = ap.parse_args(argv)
    design = tuple(int(v) for v in args.design.split("x"))
    known = None
    if args.truth_from:
        with open(args.truth_from) as fh:
            known = json.load(fh)
        if known["seed"] != args.seed:
            ap.error(f"--truth-from {args.truth_from} holds seed {known['seed']}'s truth, not --seed {args.seed}'s")
    precision = None if args.precision is None else (args.precision, args.max_real_runs)
    from concurrent.futures import ProcessPoolExecutor

    out = {
        "sizes": SIZES,
        "copy_design": design,
        "seed": args.seed,
        "truth_copies": args.truth_copies,
        "precision": precision,
        "regimes": {},
    }
    for name in args.regimes.split(","):
        regime = REGIMES[name]
        t0 = time.perf_counter()
        if known and name in known["regimes"]:  # a regime the file lacks gets its truth here
            rows = known["regimes"][name]["rows"][:-1]
            truth, truth_se = np.array([r["truth"] for r in rows]), np.array(known["regimes"][name]["truth_se"])
        else:
            truth, truth_se = true_curve(regime, n_copies=args.truth_copies, seed=args.seed)
        with ProcessPoolExecutor(args.workers) as pool:
            reps = list(
                pool.map(
                    one_estimate,
                    [regime] * args.replicates,
                    range(args.replicates),
                    [args.seed] * args.replicates,
                    [args.n_boot] * args.replicates,
                    [args.compare] * args.replicates,
                    [precision] * args.replicates,
                    [design] * args.replicates,
                    chunksize=10,
                )
            )
        rows = summarise(truth, reps, design)
        spent = rows[-1]["spending"]
        runs = spent["runs_mean"] if spent else design[0] * design[1]
        truth_copies = (known or {}).get("truth_copies", args.truth_copies)  # what truth_se was measured on
        rows[-1]["speed_up"] = speed_up(rows[:-1], truth_se, truth_copies, runs)
        out["regimes"][name] = {"regime": vars(regime), "truth_se": truth_se.tolist(), "rows": rows}
        if not args.no_bound:
            t1 = time.perf_counter()
            limit = bound(
                regime,
                seed=args.seed,
                design=design,
                naive_copies=args.naive_copies,
                naive_draws=args.naive_draws,
                oracle_copies=args.oracle_copies,
                oracle_members=args.oracle_members,
            )
            limit["seconds"] = time.perf_counter() - t1
            limit["achieved"] = achieved(rows[:-1], reps, limit["rows"], runs)
            out["regimes"][name]["bound"] = limit
        print(
            f"\n## {name} (tau {regime.tau}, sigma {regime.sigma}); {len(reps)} replicates, "
            f"{time.perf_counter() - t0:.0f} s; self-check alarms {rows[-1]['alarm_rate']:.1%}; "
            f"no curve {rows[-1]['no_curve']}"
        )
        print("| m | truth (SE) | bias | bias / SE | sd / SE | 95% coverage (with a curve) | of all | SE = 0 |")
        print("|---|---|---|---|---|---|---|---|")
        for r, tse in zip(rows[:-1], truth_se):
            print(
                f"| {r['m']} | {r['truth']:.4f} ({tse:.4f}) | {r['bias']:+.4f} | {r['bias_over_se']:+.2f} | "
                f"{r['sd_over_se']:.2f} | {r['coverage']:.1%} | {r['coverage_all']:.1%} | {r['zero_se']} |"
            )
        print(
            "equal-precision speed-up over the naive check: "
            + ", ".join(f"m = {m}: {x:.1f}x" for m, x in zip(SIZES, rows[-1]["speed_up"]))
        )
        for k, p in rows[-1]["power"].items():
            share = "-" if p["alarmed"] is None else f"{p['alarmed']:.0%}"
            print(f"alarm where |error| at m = {max(SIZES)} > {k.split('_')[2]} SE: {share} of {p['replicates']}")
        if precision:
            spent = rows[-1]["spending"]
            print(
                f"\nprecision {args.precision} at m = {max(SIZES)} (cap {args.max_real_runs} real runs): reached in "
                f"{spent['reached']:.1%} of replicates; real runs median {spent['runs_median']:.0f}, "
                f"max {spent['runs_max']}; half-width median {spent['half_width_median']:.4f}, "
                f"95th percentile {spent['half_width_p95']:.4f}"
            )
        if not args.no_bound:
            _print_bound(limit, runs)
        beyond = [m for m in SIZES if m > design[1]]
        if not args.compare:
            continue
        print("\n| extrapolant | " + " | ".join(f"m = {m}: mean error, RMSE" for m in beyond) + " |")
        print("|---|" + "---|" * len(beyond))
        for cand, e in rows[-1]["extrapolants"].items():
            print(f"| {cand} | " + " | ".join(f"{a:+.4f}, {b:.4f}" for a, b in zip(e["mean"], e["rmse"])) + " |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
