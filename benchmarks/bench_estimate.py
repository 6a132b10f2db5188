"""The estimate against the naive real check on Colon: wall time, real runs, curves.

    ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_estimate.py [--m-stability 20]

Colon (62 x 2000), the default random forest (300 trees), n_target=20,
m_ensemble = 1, 5, 10, 20, 30, 50, m_stability = 20, on the default local cluster, in
one run: ``estimate`` (its real runs, all simulations and the bootstrap behind its
intervals) in the default ``calibration_layout="ensemble"`` and in the paper's
``"paper"``, three times each, interleaved, then ``real_ensemble_stability``
(m_stability x 50 real runs) freshly, not from a cache. Prints the ratio of the
median wall times and the validation tables (predicted [interval], real +- SE, z,
covered, within 2 SE).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="colon")
    ap.add_argument("--n-target", type=int, default=20)
    ap.add_argument("--m-stability", type=int, default=20)
    ap.add_argument("--n-estimators", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="runs of each estimate (the median is reported)")
    args = ap.parse_args(argv)

    from distributed import Client

    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.estimates.stages.pipeline import estimate
    from ensstab_dask.estimates.validation.comparison import compare
    from ensstab_dask.estimates.validation.harness import Validation
    from ensstab_dask.real.datasets import reference_dataset
    from ensstab_dask.real.naive import real_ensemble_stability
    from ensstab_dask.real.selectors import default_selector

    data = reference_dataset(args.dataset)
    m_list = (1, 5, 10, 20, 30, 50)
    selector = default_selector(args.n_estimators)
    layouts = ("ensemble", "paper")
    times: dict[str, list[float]] = {k: [] for k in layouts}
    with local_cluster() as cluster, Client(cluster) as client:
        # All on the same running cluster, with the same selector, sizes and seed.
        # The paper's model: its calibration layouts are what this compares.
        common = dict(
            selector=selector,
            m_ensemble=m_list,
            m_stability=args.m_stability,
            seed=args.seed,
            client=client,
            model="onda",
        )
        est = {}
        for _ in range(args.repeats):  # interleaved: the machine's speed drifts
            for layout in layouts:
                t = time.perf_counter()
                est[layout] = estimate(data.X, data.y, args.n_target, calibration_layout=layout, **common)
                times[layout].append(time.perf_counter() - t)
        t = time.perf_counter()
        real = real_ensemble_stability(data.X, data.y, args.n_target, **common)
        t_real = time.perf_counter() - t
    print(f"{args.dataset}: naive check {t_real:.1f} s with {real.attrs['real_runs']} real runs")
    for layout in layouts:
        e, t_est = est[layout], float(np.median(times[layout]))
        print(f"\n### calibration_layout={layout!r}\n\n{e.summary()}\n")
        print(
            f"estimate (with its {e.settings['n_boot']}-replicate intervals): median {t_est:.1f} s of "
            f"{[round(x, 1) for x in times[layout]]} with {e.real_runs} real runs: {t_real / t_est:.1f}x faster "
            f"than the naive check (real runs {real.attrs['real_runs'] / e.real_runs:.1f}x fewer)\n"
        )
        print(Validation(e, real, compare(e, real), {"estimate": t_est, "naive": t_real}).table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
