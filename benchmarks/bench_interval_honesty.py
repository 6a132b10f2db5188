"""Is the reported interval honest? Its width against the spread over independent seeds.

    python benchmarks/bench_interval_honesty.py [--seeds 12] [--dataset default]

Runs the estimate with the CLI's defaults (random forest of 300 trees, m_stability 30,
n_runs 50, n_boot 200, 95 % intervals) once per seed on one local Dask cluster. A new
seed means new real runs (new resamples of the data and new forests) and new
simulations: the spread of the point estimates over seeds is the estimate's real
uncertainty. If the interval is honest, its mean width is about 2 x 1.96 x that spread.
Prints, per quantity (n_useful, p, real stability, each predicted stability), the
standard deviation over seeds, the mean reported width, and their ratio
``width / (2 * 1.96 * sd)``; the goal is a ratio between 0.6 and 1.6 (with 12 seeds the
sd itself is known to within about 20 %).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

Z = 1.959964


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=12)
    ap.add_argument("--dataset", default="default", help="default (embedded), colon, lymphoma or prostate")
    ap.add_argument("--n-target", type=int, default=20)
    ap.add_argument("--m-stability", type=int, default=30)
    ap.add_argument("--calibration-layout", default=None, help="default: the library's")
    args = ap.parse_args(argv)

    from distributed import Client

    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.estimates.stages.pipeline import estimate
    from ensstab_dask.real.datasets import make_microarray, reference_dataset
    from ensstab_dask.real.selectors import default_selector

    data = make_microarray(seed=0) if args.dataset == "default" else reference_dataset(args.dataset)
    layout = {} if args.calibration_layout is None else {"calibration_layout": args.calibration_layout}
    rows: dict[str, list] = {}
    t0 = time.perf_counter()
    with local_cluster() as cluster, Client(cluster) as client:
        for seed in range(args.seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                e = estimate(
                    data.X,
                    data.y,
                    args.n_target,
                    selector=default_selector(300),
                    model="onda",
                    m_stability=args.m_stability,
                    seed=seed,
                    client=client,
                    **layout,
                )
            p = float("nan") if e.fit is None else e.fit.p  # no fit where the method had nothing to say
            got = {
                "n_useful (A[f] mean)": (e.single.n_useful_mean, e.prediction.intervals.get("n_useful")),
                "p": (p, e.prediction.intervals.get("p")),
                "real stability": (e.single.real_stability, e.prediction.intervals.get("real_stability")),
            }
            for m, (lo, hi) in e.curve_interval().items():
                got[f"predicted, m={m}"] = (e.predicted()[m], (lo, hi))
            for k, v in got.items():
                rows.setdefault(k, []).append(v)
            print(
                f"seed {seed}: u={e.single.n_useful_mean:.1f} p={p:.3f} reliable={e.reliable} "
                f"curve={[round(v, 3) for v in e.predicted().values()]}",
                flush=True,
            )
    print(f"\n{args.seeds} seeds, {args.dataset}, {time.perf_counter() - t0:.0f} s\n")
    print("| quantity | mean | sd over seeds | mean 95% width | width / (2 x 1.96 x sd) |")
    print("|---|---|---|---|---|")
    ratios = []
    for k, vals in rows.items():
        points = np.array([v[0] for v in vals])
        widths = np.array([v[1][1] - v[1][0] for v in vals if v[1] is not None])
        sd = points.std(ddof=1)
        ratio = widths.mean() / (2 * Z * sd) if sd > 0 else float("nan")
        if k.startswith("predicted"):
            ratios.append(ratio)
        print(f"| {k} | {points.mean():.4f} | {sd:.4f} | {widths.mean():.4f} | {ratio:.2f} |")
    print(f"\npredicted stability: median ratio {np.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
