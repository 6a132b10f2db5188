"""The default estimate's measured part against the naive check, on the reference datasets.

    ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_measured_bias.py [--datasets colon,lymphoma,prostate] \
        [--estimates 10] [--first-seed 100] [--naive-seed 1] [--naive-m-ensemble 1,5,10,20,30,50,100] \
        [--sizes 10,20] [--json OUT.json]

At ``m <= B`` the default estimate measures the stability on its 10 real ensemble copies of
20 weak selectors, with no model: it should agree with a naive check of the same layout up
to sampling error. Per dataset (its paper settings' n_target, the default random forest),
one naive check of 20 copies (``validate``'s, read from the same cache, ``--cache-dir``,
so the naive check of a ``bench_validate.py --m-ensemble`` run is reused), then
``--estimates`` default estimates at the seeds ``--first-seed`` onwards, each with its own
copies. Per size: each estimate's measured S(m) and SE, the combined z of each against the
naive check, their mean, and the pooled z of the estimates' mean against the naive value,
its SE from the estimates' real spread (sd / sqrt(N)) and the naive SE. Every z shares the
one naive check's error, so the mean z is not an average of independent draws; the pooled
z is the test of a bias.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from bench_validate import load

DATASETS = {"colon": 20, "lymphoma": 40, "prostate": 60, "prostate-3level": 60}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--estimates", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=100)
    ap.add_argument("--naive-seed", type=int, default=1)
    ap.add_argument("--naive-m-ensemble", default="1,5,10,20,30,50,100", help="the naive check's sizes (its cache key)")
    ap.add_argument("--sizes", default="10,20", help="the measured sizes compared")
    ap.add_argument("--cache-dir", default=str(Path(__file__).parent / ".cache"))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    from distributed import Client

    from ensstab_dask import estimate
    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.estimates.validation import NaiveSettings, naive_check
    from ensstab_dask.real.selectors import default_selector

    sizes = [int(v) for v in args.sizes.split(",")]
    naive_sizes = [int(v) for v in args.naive_m_ensemble.split(",")]
    out = []
    with local_cluster() as cluster, Client(cluster) as client:
        for name in args.datasets.split(","):
            data, n_target = load(name), DATASETS[name]
            t0 = time.perf_counter()
            settings = NaiveSettings(
                m_ensemble=naive_sizes, m_stability=20, selector=default_selector(), seed=args.naive_seed
            )
            naive = naive_check(
                data.X, data.y, n_target, settings, cache_dir=args.cache_dir, client=client, progress=False
            )
            points, ses = [], []
            for seed in range(args.first_seed, args.first_seed + args.estimates):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = estimate(data.X, data.y, n_target, m_ensemble=sizes, seed=seed, client=client, progress=False)
                points.append(est.curve["stability"].values)
                ses.append(est.curve["stability_std"].values)
            points, ses = np.array(points), np.array(ses)
            row = {"data": name, "n_target": n_target, "estimates": len(points), "seconds": time.perf_counter() - t0}
            print(f"\n## {name} (n_target {n_target}): {len(points)} estimates, {row['seconds']:.0f} s")
            print("| m | naive (SE) | estimates: mean (sd) | mean SE | mean z | pooled z |")
            print("|---|---|---|---|---|---|")
            for j, m in enumerate(sizes):
                r = float(naive["stability"].sel(m_ensemble=m))
                r_se = float(naive["stability_se"].sel(m_ensemble=m))
                z = (points[:, j] - r) / np.sqrt(ses[:, j] ** 2 + r_se**2)
                sd = float(points[:, j].std(ddof=1))
                pooled = (points[:, j].mean() - r) / np.sqrt(sd**2 / len(points) + r_se**2)
                row[str(m)] = dict(
                    naive=r,
                    naive_se=r_se,
                    points=points[:, j].tolist(),
                    ses=ses[:, j].tolist(),
                    z=z.tolist(),
                    mean_z=float(z.mean()),
                    pooled_z=float(pooled),
                    sd=sd,
                )
                print(
                    f"| {m} | {r:.4f} ({r_se:.4f}) | {points[:, j].mean():.4f} ({sd:.4f}) | {ses[:, j].mean():.4f} | "
                    f"{z.mean():+.2f} | {pooled:+.2f} |"
                )
            out.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
