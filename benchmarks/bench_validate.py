"""The validation harness on the four datasets: the estimate against the naive check.

    ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_validate.py [--variants] [--model two-level|random-effects]

For the embedded default and Colon, Lymphoma and Prostate (their paper settings,
n_target 20, 20, 40, 60), with the default random forest (300 trees), m_stability = 20
and m_ensemble 1, 5, 10, 20, 30, 50, on one local Dask cluster:

* ``validate`` with the estimate's defaults: the table per m (predicted [interval],
  real +- SE, z, covered, within 2 SE), both real-run counts and both wall times. The
  naive curves are cached in ``--cache-dir`` (default ``benchmarks/.cache``), so a rerun
  only pays for the estimates.
* ``--variants``: the calibration layouts and ``n_runs`` side by side. Pools of real
  runs are made once per dataset (100 on random halves, 50 in the weak-selector layout,
  with the streams ``estimate`` uses), and every variant is ``estimate_from_runs`` on the
  first runs of those pools: exactly what ``estimate`` with those options would give.
  Prints, per variant: the fitted (u, p), the predicted curve, how many sizes the
  interval covers, how many are within 2 SE, and the mean |z|.

A dataset whose file is missing is skipped, saying so.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

DATASETS = {"default": 20, "colon": 20, "lymphoma": 40, "prostate": 60}
VARIANTS = [
    ("paper", 50),
    ("ensemble", 50),
    ("ensemble-all", 50),
    ("paper", 20),
    ("paper", 100),
    ("ensemble", 20),
    ("ensemble", 100),
]
M_LIST = [1, 5, 10, 20, 30, 50]


def load(name):
    from ensstab_dask.datasets import make_microarray, reference_dataset

    return make_microarray(seed=0) if name == "default" else reference_dataset(name)


def variants(data, n_target, naive, *, selector, m_stability, seed, client) -> list[str]:
    from ensstab_dask.algorithm import _MEMBER_RUNS, _REAL, assemble_runs, estimate_from_runs, real_subsets
    from ensstab_dask.seeding import Stream, as_seed_sequence, derive
    from ensstab_dask.selectors import describe_selector
    from ensstab_dask.validation import compare

    ss = as_seed_sequence(seed)
    t0 = time.perf_counter()
    common = dict(selector=selector, client=client)
    half = real_subsets(
        data.X, data.y, n_target, n_runs=100, resample="half", seed=derive(ss, Stream.ESTIMATE, _REAL), **common
    )
    member = real_subsets(
        data.X,
        data.y,
        n_target,
        n_runs=50,
        resample="bagging",
        seed=derive(ss, Stream.ESTIMATE, _MEMBER_RUNS),
        **common,
    )
    lines = [
        f"pools: 100 runs on halves, 50 in the bagging layout, {time.perf_counter() - t0:.0f} s",
        "| layout | n_runs | real runs | u | p | "
        + " | ".join(f"m={m}" for m in M_LIST)
        + " | covered | within 2 SE | mean abs z |",
        "|---" * (8 + len(M_LIST)) + "|",
    ]
    for layout, n_runs in VARIANTS:
        runs = assemble_runs(layout, n_runs=n_runs, m_stability=m_stability, half=half, member=member)
        settings = dict(
            m_stability=m_stability, n_runs=n_runs, repeats=20, p_method="bisect", aggregate="mean_rank",
            index="jaccard", resample="half", calibration_layout=layout, member_resample="bagging", n_boot=200,
            confidence=0.95, seed=seed, selector=describe_selector(selector),
        )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            est = estimate_from_runs(
                runs, data.X.shape[1], n_target, m_ensemble=M_LIST, n_runs=n_runs, repeats=20, p_method="bisect",
                verify=True, calibrate=False, n_boot=200, confidence=0.95, aggregate="mean_rank", index="jaccard",
                settings=settings, seed=seed, client=client,
            )  # fmt: skip
        rows = compare(est, naive)
        z = np.array([r["z"] for r in rows.values()])
        cells = [
            "n/a" if not np.isfinite(r["predicted"]) else f"{r['predicted']:.3f} [{r['lower']:.3f}, {r['upper']:.3f}]"
            for r in rows.values()
        ]
        lines.append(
            f"| {layout} | {n_runs} | {runs.count} | {est.n_useful_mean:.1f} | {est.p:.3f} | "
            + " | ".join(cells)
            + f" | {sum(r['covered'] for r in rows.values())} | {sum(r['within_2se'] for r in rows.values())} | "
            f"{np.nanmean(np.abs(z)):.1f} |"
            + ("" if est.reliable else " (unreliable: " + "; ".join(w.split(":")[0] for w in est.warnings) + ")")
        )
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated, from " + ", ".join(DATASETS))
    ap.add_argument("--m-stability", type=int, default=20)
    ap.add_argument("--n-estimators", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache-dir", default=str(Path(__file__).parent / ".cache"))
    ap.add_argument("--variants", action="store_true", help="also compare calibration layouts and n_runs")
    ap.add_argument("--model", default="onda", choices=("onda", "two-level", "random-effects"),
                    help="the estimate's model")  # fmt: skip
    args = ap.parse_args(argv)

    from distributed import Client

    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.selectors import default_selector
    from ensstab_dask.validation import validate

    os.makedirs(args.cache_dir, exist_ok=True)
    selector = default_selector(args.n_estimators)
    with local_cluster() as cluster, Client(cluster) as client:
        for name in args.datasets.split(","):
            n_target = DATASETS[name]
            try:
                data = load(name)
            except ValueError as exc:
                print(f"\n## {name}: skipped ({exc})")
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res = validate(
                    data.X, data.y, n_target, m_ensemble=M_LIST, m_stability=args.m_stability, selector=selector,
                    seed=args.seed, cache_dir=args.cache_dir, client=client, data=name, model=args.model,
                )  # fmt: skip
            e, n = res.estimate, res.naive
            print(f"\n## {name} ({data.X.shape[0]} x {data.X.shape[1]}, n_target {n_target})\n")
            print(
                f"estimate: {e.real_runs} real runs, {res.seconds['estimate']:.0f} s (u = {e.n_useful}, p = {e.p:.3f}, "
                f"calibration on {e.settings['calibration_layout']} runs, model {e.model}"
                + ("" if e.h is None else f", h = {e.h}")
                + f", reliable: {'yes' if e.reliable else 'no'}); "
                f"naive check: {int(n.attrs['real_runs'])} real runs, {res.seconds['naive']:.0f} s"
                + (" (cached)" if int(n.attrs.get("cached", 0)) else "")
            )
            for w in e.warnings:
                print(f"warning: {w}")
            print()
            print(res.table())
            print(
                f"\ninterval covers the naive value at {res.covered} of {len(res.per_m)}; "
                f"within 2 SE at {res.within_2se} of {len(res.per_m)}"
            )
            if args.variants:
                print()
                print(
                    "\n".join(
                        variants(data, n_target, n, selector=selector, m_stability=args.m_stability, seed=args.seed,
                                 client=client)
                    )
                )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
