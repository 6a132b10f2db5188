"""The default estimate's measured part against the naive check, on the reference datasets.

    ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_measured_bias.py \
        [--datasets colon,lymphoma,prostate,prostate-3level] [--estimates 10] [--first-seed 100] \
        [--naive-seed 1[,2,...]] [--naive-m-ensemble 1,5,10,20,30,50,100] [--sizes 10,20] \
        [--estimates-from EARLIER.json] [--json OUT.json]

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
z is the test of a bias. With several ``--naive-seed`` values, each naive check is
independent: the estimates are compared with each, and with their mean (a reference of 20
copies per seed, its SE that of a mean of independent checks), which shares less error.
``--estimates-from`` takes the estimates of an earlier run's JSON (the same sizes) instead
of running them again, so that a larger reference costs only its naive checks.
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


def _naive_reference(data, n_target, seeds, naive_sizes, *, cache_dir, client) -> list:
    """One 20-copy naive check per seed, each independent (``validate``'s, cached)."""
    from ensstab_dask.estimates.validation.harness import naive_check
    from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
    from ensstab_dask.real.selectors import default_selector

    checks = []
    for seed in seeds:
        settings = NaiveSettings(m_ensemble=naive_sizes, m_stability=20, selector=default_selector(), seed=seed)
        checks.append(
            naive_check(data.X, data.y, n_target, settings, cache_dir=cache_dir, client=client, progress=False)
        )
    return checks


def _estimates(data, n_target, sizes, seeds, *, client) -> tuple[np.ndarray, np.ndarray]:
    """The measured S(m) and its SE of a default estimate at each seed: (seeds, sizes) each."""
    from ensstab_dask import estimate

    points, ses = [], []
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = estimate(data.X, data.y, n_target, m_ensemble=sizes, seed=seed, client=client, progress=False)
        points.append(est.curve["stability"].values)
        ses.append(est.curve["stability_std"].values)
    return np.array(points), np.array(ses)


def compare(points: np.ndarray, ses: np.ndarray, ref: float, ref_se: float) -> dict:
    """The estimates at one size against one reference value: each one's combined z, their
    mean, and the pooled z of their mean (its SE from their real spread and the reference's)."""
    z = (points - ref) / np.sqrt(ses**2 + ref_se**2)
    sd = float(points.std(ddof=1))
    pooled = (points.mean() - ref) / np.sqrt(sd**2 / len(points) + ref_se**2)
    return dict(naive=ref, naive_se=ref_se, z=z.tolist(), mean_z=float(z.mean()), pooled_z=float(pooled), sd=sd)


def _row(name, n_target, sizes, points, ses, checks, naive_seeds, seconds) -> dict:
    row = {"data": name, "n_target": n_target, "estimates": len(points), "naive_seeds": naive_seeds}
    row["seconds"] = seconds
    print(f"\n## {name} (n_target {n_target}): {len(points)} estimates, {seconds:.0f} s")
    print("| m | naive check (seed): value (SE) | estimates: mean (sd) | mean SE | mean z | pooled z |")
    print("|---|---|---|---|---|---|")
    for j, m in enumerate(sizes):
        refs = [(float(c["stability"].sel(m_ensemble=m)), float(c["stability_se"].sel(m_ensemble=m))) for c in checks]
        against = [compare(points[:, j], ses[:, j], r, r_se) for r, r_se in refs]
        first = dict(against[0], points=points[:, j].tolist(), ses=ses[:, j].tolist())
        if len(refs) > 1:  # the independent checks' mean: a reference of 20 x len(refs) copies
            mean = float(np.mean([r for r, _ in refs]))
            mean_se = float(np.sqrt(sum(r_se**2 for _, r_se in refs))) / len(refs)
            first["each_naive"] = against
            first["pooled_naive"] = compare(points[:, j], ses[:, j], mean, mean_se)
            against = [*against, first["pooled_naive"]]
            labels = [*map(str, naive_seeds), f"mean of {len(refs)}"]
        else:
            labels = [str(naive_seeds[0])]
        row[str(m)] = first
        for label, a in zip(labels, against):
            print(
                f"| {m} | {label}: {a['naive']:.4f} ({a['naive_se']:.4f}) | {points[:, j].mean():.4f} "
                f"({a['sd']:.4f}) | {ses[:, j].mean():.4f} | {a['mean_z']:+.2f} | {a['pooled_z']:+.2f} |"
            )
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--estimates", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=100)
    ap.add_argument("--naive-seed", default="1", help="comma-separated: one independent 20-copy naive check each")
    ap.add_argument("--naive-m-ensemble", default="1,5,10,20,30,50,100", help="the naive check's sizes (its cache key)")
    ap.add_argument("--sizes", default="10,20", help="the measured sizes compared")
    ap.add_argument("--cache-dir", default=str(Path(__file__).parent / ".cache"))
    ap.add_argument("--estimates-from", default=None, help="a JSON this script wrote: its estimates, not rerun")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    from distributed import Client

    from ensstab_dask.cluster import local_cluster

    sizes = [int(v) for v in args.sizes.split(",")]
    naive_sizes = [int(v) for v in args.naive_m_ensemble.split(",")]
    naive_seeds = [int(v) for v in args.naive_seed.split(",")]
    known = {}
    if args.estimates_from:
        known = {r["data"]: r for r in json.loads(Path(args.estimates_from).read_text())}
    out = []
    with local_cluster() as cluster, Client(cluster) as client:
        for name in args.datasets.split(","):
            data, n_target = load(name), DATASETS[name]
            t0 = time.perf_counter()
            checks = _naive_reference(data, n_target, naive_seeds, naive_sizes, cache_dir=args.cache_dir, client=client)
            if name in known:
                points = np.array([known[name][str(m)]["points"] for m in sizes]).T
                ses = np.array([known[name][str(m)]["ses"] for m in sizes]).T
            else:
                seeds = range(args.first_seed, args.first_seed + args.estimates)
                points, ses = _estimates(data, n_target, sizes, seeds, client=client)
            out.append(_row(name, n_target, sizes, points, ses, checks, naive_seeds, time.perf_counter() - t0))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
