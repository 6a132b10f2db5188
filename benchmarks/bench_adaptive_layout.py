"""An adaptive layout on the synthetic harness: 20 copies of 10, grown to 20 x 20 when the curve still climbs.

    python benchmarks/bench_adaptive_layout.py --regimes flat,between,steep,plateau --replicates 1000 \
        --seed 0 --truth-from-dir benchmarks/results --json OUT.json

Each replicate draws 20 copies of 20 weak selectors of a regime of
``bench_synthetic_truth.py`` (same generator, same per-replicate seeds) and runs the
default estimate's own code twice on them: on the 20 x 10 prefix (every copy's first
10 members, the first round, 200 real runs) and on all 20 x 20 (400 real runs, the grown
round, which reuses the first). It records both answers (point, SE, interval, model band,
the law's c, the member split's z) and the seconds each took, so that any rule deciding
from the first round whether to grow can be scored afterwards on the same replicates
(:func:`score`): bias, sd / SE, coverage, the mean cost and the equal-precision speed-up
EPS from the points' real spread (and RMSE), never from the reported SE. The naive
variance behind EPS is the truth's U-statistic variance scaled from its copies to the
naive check's 20, as the harness's older speed-up tables take it.

The rules (``--rule NAME:K``, several allowed): ``rise`` grows when the first round's
predicted rise from m = 10 to the largest size exceeds K of its SE there; ``band`` when
the model band there exceeds K of the SE; ``check`` when the member split's ``|z|``
exceeds K; ``split-or-band:KZ/KB`` when either the member split's ``|z|`` exceeds KZ or
the band exceeds KB of the SE; ``shipped``: the library's own rule
(:meth:`~ensstab_dask.models.anchored.Anchored.grown_design`, recorded per replicate);
``never`` and ``always`` are the two fixed layouts. Choose K on seed 0, report
seed 1. ``--n-boot 20`` (the minimum) gives the same points, SEs and intervals as the
default's 200 (the interval is Student's t with the band, the bootstrap only shapes the
replicates kept beside it) in a third less time.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from synthetic_regimes import N_FEATURE, N_TARGET, REGIMES, SIZES, Regime, true_curve

FIRST, GROWN = (20, 10), (20, 20)
FIELDS = ("point", "se", "lower", "upper", "band")


def _answer(est) -> dict:
    curve = est.curve
    check = est.self_check
    nan = [float("nan")] * len(SIZES)
    out = {
        "point": curve["stability"].values.tolist(),
        "se": curve["stability_std"].values.tolist(),
        "lower": curve["stability_lower"].values.tolist() if "stability_lower" in curve else nan,
        "upper": curve["stability_upper"].values.tolist() if "stability_upper" in curve else nan,
        "band": curve["stability_band"].values.tolist() if "stability_band" in curve else nan,
        "law_c": float(curve.attrs.get("law_c", float("nan"))),
        "check_z": float(check.z[0]) if check is not None else float("nan"),
        "check_passed": None if check is None else bool(check.passed),
    }
    return out


def one_replicate(regime: Regime, rep: int, seed: int, n_boot: int) -> dict:
    """Both rounds of one replicate, on the same copies (the first round's a prefix)."""
    from ensstab_dask.estimates.stages.pipeline import estimate_from_runs
    from ensstab_dask.models import get_model
    from ensstab_dask.real.runs import runs_from_copies
    from ensstab_dask.settings import EstimateSettings

    rng = np.random.default_rng([seed, rep])
    big = regime.copies(GROWN[0], GROWN[1], rng)
    settings = EstimateSettings(
        n_feature=N_FEATURE, n_target=N_TARGET, m_ensemble=SIZES, n_boot=n_boot, seed=rep, model="anchored"
    )
    out = {}
    for name, (G, B) in (("first", FIRST), ("grown", GROWN)):
        copies = np.ascontiguousarray(big[:G, :B])
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = estimate_from_runs(
                runs_from_copies(copies, N_TARGET), settings, client="synchronous", copy_ranks=copies
            )
        out[name] = _answer(est) | {"seconds": time.perf_counter() - t0}
        if name == "first":  # the library's own rule, read off the same first round
            out[name]["shipped"] = get_model("anchored").grown_design(FIRST, est.curve, est.self_check) is not None
    return out


def grows(first: dict, rule: str, k: float | tuple[float, float], at: int = SIZES[-1]) -> bool:
    """Whether ``rule`` at threshold ``k`` grows the layout, read off the first round at size ``at``."""
    if rule == "never":
        return False
    if rule == "always":
        return True
    if rule == "shipped":  # the library's Anchored.grown_design, as one_replicate recorded it
        return bool(first["shipped"])
    point, se, band = (np.asarray(first[f], dtype=float) for f in ("point", "se", "band"))
    if not np.isfinite(point[-1]) or not se[-1] > 0:
        return True  # no curve, or no SE to judge it by: measure further
    if rule == "rise":
        at_b = SIZES.index(FIRST[1])
        return bool(point[-1] - point[at_b] > k * se[-1])
    i = SIZES.index(at)
    if rule == "band":
        return bool(band[i] > k * se[i])
    if rule == "check":  # the member split's |z| (a law whose shape is wrong over the measured sizes)
        return bool(not abs(first["check_z"]) <= k)
    if rule == "split-or-band":  # K = (|z| limit, band / SE limit at ``at``)
        return bool(not abs(first["check_z"]) <= k[0] or band[i] > k[1] * se[i])
    raise ValueError(f"rule must be one of never, always, rise, band, check, split-or-band; got {rule!r}")


def score(truth: np.ndarray, naive_var: np.ndarray, reps: list[dict], rule: str, k, at: int = SIZES[-1]) -> dict:
    """The rule's answers over the replicates: per size bias (and over the mean SE), sd /
    SE, coverage, EPS from the spread and from the RMSE at the rule's mean cost."""
    grown = np.array([grows(r["first"], rule, k, at) for r in reps])
    pick = [r["grown"] if g else r["first"] for r, g in zip(reps, grown)]
    arr = {f: np.array([p[f] for p in pick], dtype=float) for f in FIELDS}
    runs = float(np.mean(np.where(grown, GROWN[0] * GROWN[1], FIRST[0] * FIRST[1])))
    # A grown replicate ran both rounds' stages.
    seconds = float(
        np.mean([r["first"]["seconds"] + (r["grown"]["seconds"] if g else 0.0) for r, g in zip(reps, grown)])
    )
    rows = []
    for i, m in enumerate(SIZES):
        p = arr["point"][:, i]
        ok = np.isfinite(p)
        sd, mean_se = float(np.std(p[ok], ddof=1)), float(np.mean(arr["se"][ok, i]))
        bias = float(p[ok].mean() - truth[i])
        mse = float(np.mean((p[ok] - truth[i]) ** 2))
        cover = (arr["lower"][ok, i] <= truth[i]) & (truth[i] <= arr["upper"][ok, i])
        work = 20 * m * naive_var[i]
        rows.append(
            dict(
                m=m,
                truth=float(truth[i]),
                bias=bias,
                bias_over_se=bias / mean_se,
                bias_over_sd=bias / sd,
                sd_over_se=sd / mean_se,
                coverage=float(cover.mean()),
                eps_spread=work / (runs * sd**2),
                eps_rmse=work / (runs * mse),
            )
        )
    alarms = np.array([(r["grown"] if g else r["first"])["check_passed"] is False for r, g in zip(reps, grown)])
    return dict(
        rule=rule,
        k=k,
        decided_at=at,
        grown=float(grown.mean()),
        runs_mean=runs,
        seconds_mean=seconds,
        alarms=float(alarms.mean()),
        no_curve=int(np.sum(~np.isfinite(arr["point"][:, -1]))),
        rows=rows,
    )


def _truth(name: str, seed: int, directory: Path | None, copies: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The regime's true curve and its SE: from a harness JSON of the same seed in
    ``directory`` when one holds it, else measured here on ``copies`` copies."""
    for path in sorted(directory.glob("synthetic-truth*.json")) if directory else []:
        data = json.loads(path.read_text())
        if data.get("seed") == seed and name in data["regimes"] and "truth_se" in data["regimes"][name]:
            rows = data["regimes"][name]["rows"][:-1]
            return (
                np.array([r["truth"] for r in rows]),
                np.array(data["regimes"][name]["truth_se"]),
                int(data.get("truth_copies") or 2000),
            )
    truth, se = true_curve(REGIMES[name], n_copies=copies, seed=seed)
    return truth, se, copies


def _print(name: str, s: dict) -> None:
    print(
        f"\n{name}, {s['rule']} {s['k']}: grown {s['grown']:.1%}, mean runs {s['runs_mean']:.0f}, "
        f"estimate seconds {s['seconds_mean']:.2f}, alarms {s['alarms']:.1%}, no curve {s['no_curve']}"
    )
    print("| m | truth | bias / SE | bias / SD | sd / SE | coverage | EPS (spread) | EPS (RMSE) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in s["rows"]:
        print(
            f"| {r['m']} | {r['truth']:.4f} | {r['bias_over_se']:+.2f} | {r['bias_over_sd']:+.2f} | "
            f"{r['sd_over_se']:.2f} | {r['coverage']:.1%} | {r['eps_spread']:.1f}x | {r['eps_rmse']:.1f}x |"
        )


def _rule(text: str) -> tuple[str, float | tuple[float, ...]]:
    """``NAME[:K]`` or ``NAME:K1/K2``."""
    name, _, k = text.partition(":")
    values = tuple(float(v) for v in k.split("/")) if k else (0.0,)
    return name, values if len(values) > 1 else values[0]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--regimes", default="flat,between,steep,plateau")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--truth-copies", type=int, default=2000)
    ap.add_argument("--truth-from-dir", default=None, help="a folder of harness JSONs holding the true curves")
    ap.add_argument("--rule", action="append", default=None, help="NAME:K, e.g. rise:2 (several allowed)")
    ap.add_argument("--decide-at", type=int, default=SIZES[-1], help="the size the band is read at (the largest asked)")
    ap.add_argument("--replicates-from", default=None, help="score the replicates of a JSON this script wrote")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rules = [_rule(r) for r in args.rule or ["never", "always"]]
    directory = Path(args.truth_from_dir) if args.truth_from_dir else None
    saved = json.loads(Path(args.replicates_from).read_text()) if args.replicates_from else None
    out = {"seed": args.seed, "first": FIRST, "grown": GROWN, "sizes": SIZES, "regimes": {}}
    from concurrent.futures import ProcessPoolExecutor

    for name in args.regimes.split(","):
        truth, truth_se, copies = _truth(name, args.seed, directory, args.truth_copies)
        naive_var = (truth_se * np.sqrt(copies / 20)) ** 2
        t0 = time.perf_counter()
        if saved:
            reps = saved["regimes"][name]["replicates"]
        else:
            n = args.replicates
            with ProcessPoolExecutor(args.workers) as pool:
                reps = list(
                    pool.map(
                        one_replicate, [REGIMES[name]] * n, range(n), [args.seed] * n, [args.n_boot] * n, chunksize=5
                    )
                )
        print(f"\n## {name}: {len(reps)} replicates, {time.perf_counter() - t0:.0f} s")
        scores = [score(truth, naive_var, reps, rule, k, args.decide_at) for rule, k in rules]
        for s in scores:
            _print(name, s)
        out["regimes"][name] = {"truth": truth.tolist(), "naive_var": naive_var.tolist(), "scores": scores}
        out["regimes"][name]["replicates"] = reps
    if args.json:
        Path(args.json).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
