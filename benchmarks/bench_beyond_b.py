"""Beyond the measured members (issue 60): the default's prediction at sizes nobody ran.

    python benchmarks/bench_beyond_b.py truth --seed 1 [--copies 2000]
    python benchmarks/bench_beyond_b.py run --seed 1 [--replicates 1000] [--regimes ...] \\
        [--json benchmarks/results/beyond-b-seed1.json]

``truth``: every regime of the synthetic harness (:mod:`bench_synthetic_truth`, with
``polygenic`` and ``late_plateau`` added for this issue) measured on ``--copies`` copies
of ensembles of every size in TRUTH_SIZES (to m = 500), every pair of copies, written to
``benchmarks/results/beyond-b-truth-seed{S}.json`` for ``run`` to read.

``run``: each replicate draws 10 fresh copies of 20 weak selectors and runs them through
the shipped default's own code (``estimate_from_runs``, as ``estimate`` does after its
real runs), then records per size the point, its SE, the 95 % interval, whether the
size was flagged (the data cannot tell: the two predictions disagree, or the verdict
says not to believe it) and the stages' seconds. Per regime and size it reports the
bias over the points' real spread (SD over the replicates, never the reported SE), the
interval's coverage of the truth, the share of estimates flagged, and the equal-precision
speed-up over a 20-copy naive check from the points' real spread, EPS = (20 m naive var)
/ (200 x the points' variance), the naive variance from the truth's own copies (the
U-statistic's variance of 20 copies, from the 2,000 the truth was measured on). The
summary (``--json``) is ``{"regimes": {NAME: {M: {"bias_sd", "coverage", "flagged",
"eps"}}}}`` plus the stage times and the flag's hit rates; results and commands:
benchmarks/results/beyond-b.md.
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

from synthetic_regimes import N_FEATURE, N_TARGET, REGIMES, SIZES, Regime  # noqa: E402

TRUTH_SIZES = (*SIZES, 500)
RESULTS = Path(__file__).resolve().parent / "results"


def true_curve(regime: Regime, *, n_copies: int, seed: int, sizes=TRUTH_SIZES) -> dict:
    """The Jaccard stability at each of ``sizes`` over ``n_copies`` copies (every pair), its
    SE, and the variance of a 20-copy naive check's mean over pairs (the U-statistic's,
    from the same copies: (2 (G - 2) zeta_1 + zeta_2) / C(G, 2) at G = 20)."""
    from ensstab_dask.aggregation import aggregate_rankings
    from ensstab_dask.indices import similarity_matrix, u_statistic_se

    rng = np.random.default_rng([seed, 99])
    tops = {m: [] for m in sizes}
    batch = 20
    for start in range(0, n_copies, batch):
        ranks = regime.copies(min(batch, n_copies - start), max(sizes), rng)
        for m in sizes:
            tops[m].append(aggregate_rankings(ranks[:, :m], N_TARGET, seed=rng))
    out = {"value": [], "se": [], "naive_var": []}
    for m in sizes:
        top = np.concatenate(tops[m])
        n = len(top)
        z = np.zeros((n, N_FEATURE))
        z[np.arange(n)[:, None], top] = 1.0
        sim = similarity_matrix(z, N_FEATURE, "jaccard")
        off = ~np.eye(n, dtype=bool)
        mean = sim[off].mean()
        row = np.where(off, sim, 0.0).sum(axis=1) / (n - 1)
        zeta1 = float(np.var(row, ddof=1))  # the copy's share (a slight overstatement: its own noise)
        zeta2 = float(np.var(sim[off], ddof=1))
        G = 20
        out["value"].append(float(mean))
        out["se"].append(float(u_statistic_se(sim)))
        out["naive_var"].append((2 * (G - 2) * zeta1 + zeta2) / (G * (G - 1) / 2))
    out["sizes"] = list(sizes)
    return out


def truth_file(seed: int) -> Path:
    return RESULTS / f"beyond-b-truth-seed{seed}.json"


def main_truth(args) -> None:
    path = truth_file(args.seed)
    known = json.loads(path.read_text()) if path.exists() else {"seed": args.seed, "copies": args.copies, "regimes": {}}
    for name in args.regimes.split(","):
        if name in known["regimes"]:
            continue
        t0 = time.perf_counter()
        known["regimes"][name] = true_curve(REGIMES[name], n_copies=args.copies, seed=args.seed)
        known["regimes"][name]["seconds"] = time.perf_counter() - t0
        path.write_text(json.dumps(known, indent=1))
        v = known["regimes"][name]["value"]
        print(
            name,
            " ".join(f"{m}: {x:.4f}" for m, x in zip(TRUTH_SIZES, v)),
            f"({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )


def one_estimate(regime: Regime, rep: int, seed: int, n_boot: int) -> dict:
    """One replicate: 10 fresh copies of 20 weak selectors through the shipped default's code."""
    from ensstab_dask.estimates.stages.pipeline import estimate_from_runs
    from ensstab_dask.real.runs import runs_from_copies
    from ensstab_dask.settings import EstimateSettings

    rng = np.random.default_rng([seed, rep])
    copies = regime.copies(10, 20, rng)
    settings = EstimateSettings(n_feature=N_FEATURE, n_target=N_TARGET, m_ensemble=SIZES, n_boot=n_boot, seed=rep)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = estimate_from_runs(runs_from_copies(copies, N_TARGET), settings, client="synchronous", copy_ranks=copies)
    seconds = time.perf_counter() - t0
    curve = est.curve
    nan = [float("nan")] * len(SIZES)

    def values(key):
        return curve[key].values.tolist() if key in curve else nan

    return {
        "point": values("stability"),
        "se": values("stability_std"),
        "lower": values("stability_lower"),
        "upper": values("stability_upper"),
        "law": values("stability_law"),
        "law_sd": values("stability_law_std"),
        "undecided": curve["undecided"].values.tolist() if "undecided" in curve else [False] * len(SIZES),
        "reliable": bool(est.reliable),
        "warnings": list(est.warnings),
        "stages": dict(est.cost.seconds),
        "seconds": seconds,
    }


def summarise(truth: dict, reps: list[dict]) -> dict:
    """Per size: the bias over the points' real spread, the coverage, the share flagged (the
    size undecided, or the whole estimate not reliable), and EPS from the points' spread;
    and the flag's hit rates beyond B (see the module's docstring)."""
    tv = dict(zip(truth["sizes"], truth["value"]))
    nv = dict(zip(truth["sizes"], truth["naive_var"]))
    point = np.array([r["point"] for r in reps], dtype=float)
    lower = np.array([r["lower"] for r in reps], dtype=float)
    upper = np.array([r["upper"] for r in reps], dtype=float)
    law = np.array([r["law"] for r in reps], dtype=float)
    undecided = np.array([r["undecided"] for r in reps], dtype=bool)
    unreliable = np.array([not r["reliable"] for r in reps])
    flagged = undecided | unreliable[:, None]
    rows, right, wrong = {}, [], []
    for i, m in enumerate(SIZES):
        t = tv[m]
        sd = float(np.nanstd(point[:, i], ddof=1))
        bias = float(np.nanmean(point[:, i]) - t)
        covered = (lower[:, i] <= t) & (t <= upper[:, i])
        calm = ~flagged[:, i]
        rows[m] = {
            "truth": t,
            "bias": bias,
            "sd": sd,
            "bias_sd": bias / sd if sd > 0 else float("nan"),
            "coverage": float(covered.mean()),
            "flagged": float(flagged[:, i].mean()),
            "undecided": float(undecided[:, i].mean()),
            "bias_sd_unflagged": float((np.nanmean(point[calm, i]) - t) / sd) if calm.any() and sd > 0 else None,
            "coverage_unflagged": float(covered[calm].mean()) if calm.any() else None,
            "eps": float(20 * m * nv[m] / (200 * sd**2)) if sd > 0 else float("nan"),
        }
        if m > 20:
            law_sd = float(np.nanstd(law[:, i], ddof=1))
            off = np.abs(point[:, i] - t) > 2 * sd
            both = ~off & (np.abs(law[:, i] - t) <= 2 * law_sd)
            right.append(undecided[both, i])
            wrong.append(undecided[off, i])
    right, wrong = np.concatenate(right), np.concatenate(wrong)
    stages = {}
    for key in sorted({k for r in reps for k in r["stages"]}):
        stages[key] = float(np.median([r["stages"].get(key, 0.0) for r in reps]))
    return {
        "sizes": rows,
        "flag_where_both_right": {"estimates": int(right.size), "flagged": float(right.mean()) if right.size else None},
        "flag_where_shipped_off_2sd": {
            "estimates": int(wrong.size),
            "flagged": float(wrong.mean()) if wrong.size else None,
        },
        "unreliable": float(unreliable.mean()),
        "stage_seconds_median": stages,
        "seconds_median": float(np.median([r["seconds"] for r in reps])),
    }


def main_run(args) -> None:
    from concurrent.futures import ProcessPoolExecutor

    truth = json.loads(truth_file(args.seed).read_text())["regimes"]
    missing = [name for name in args.regimes.split(",") if name not in truth]
    if missing:
        raise SystemExit(f"no truth for {', '.join(missing)} at seed {args.seed}: run `truth --seed {args.seed}` first")
    out = {"seed": args.seed, "replicates": args.replicates, "design": [10, 20], "regimes": {}, "detail": {}}
    if args.json and Path(args.json).exists():  # the regimes already there (same seed and replicates) are kept
        known = json.loads(Path(args.json).read_text())
        if (known["seed"], known["replicates"]) == (args.seed, args.replicates):
            out = known
    for name in args.regimes.split(","):
        t0 = time.perf_counter()
        n = args.replicates
        with ProcessPoolExecutor(args.workers) as pool:
            reps = list(
                pool.map(one_estimate, [REGIMES[name]] * n, range(n), [args.seed] * n, [args.n_boot] * n, chunksize=10)
            )
        summary = summarise(truth[name], reps)
        out["regimes"][name] = {
            str(m): {k: r[k] for k in ("bias_sd", "coverage", "flagged", "eps")} for m, r in summary["sizes"].items()
        }
        out["detail"][name] = summary
        print(
            f"\n## {name}: {n} replicates, {time.perf_counter() - t0:.0f} s; unreliable {summary['unreliable']:.1%}; "
            f"stages (median s): {summary['stage_seconds_median']}"
        )
        print("| m | truth | bias / SD | coverage | flagged | undecided | bias / SD, coverage (unflagged) | EPS |")
        print("|---|---|---|---|---|---|---|---|")
        for m, r in summary["sizes"].items():
            uf = r["bias_sd_unflagged"]
            ucov = r["coverage_unflagged"]
            un = "-" if uf is None else f"{uf:+.2f}, {ucov:.1%}"
            print(
                f"| {m} | {r['truth']:.4f} | {r['bias_sd']:+.2f} | {r['coverage']:.1%} | {r['flagged']:.1%} | "
                f"{r['undecided']:.1%} | {un} | {r['eps']:.1f}x |"
            )
        print(
            f"flag where both right: {summary['flag_where_both_right']}; where shipped off > 2 SD: "
            f"{summary['flag_where_shipped_off_2sd']}",
            flush=True,
        )
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    t = sub.add_parser("truth")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--copies", type=int, default=2000)
    t.add_argument("--regimes", default=",".join(REGIMES))
    r = sub.add_parser("run")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--replicates", type=int, default=1000)
    r.add_argument("--regimes", default=",".join(REGIMES))
    r.add_argument("--workers", type=int, default=2)
    r.add_argument("--n-boot", type=int, default=200)
    r.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.what == "truth":
        main_truth(args)
    else:
        main_run(args)


if __name__ == "__main__":
    main()
