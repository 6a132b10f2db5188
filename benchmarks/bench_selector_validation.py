"""The new named selectors' estimates against pooled independent naive checks.

    ENSSTAB_DATA_DIR=/work/shared/data python benchmarks/bench_selector_validation.py \
        [--datasets colon,prostate] [--selectors l1-logistic,linear-svm,f-test] [--seed 1] \
        [--naive-seeds 101,102,103] [--m-stability 20] [--m-ensemble 1,5,10,20,30,50] \
        [--mutual-info-runs 10] [--json benchmarks/results/selector-validation-seed1.json]

For each dataset (n_target 20) and each selector of
:data:`~ensstab_dask.real.named_selectors.NAMED_SELECTORS` in ``--selectors``, on one
local Dask cluster (one single-threaded worker per core):

* the estimate, ``es.estimate(X, y, 20, selector=..., seed=SEED, m_ensemble=...)`` with
  every other setting at its default (model ``anchored``, no predictor);
* the reference: the naive checks of ``--naive-seeds`` (``naive_check``, ``m_stability``
  copies each, to the largest size), pooled by ``real.naive.pool_naive_checks``; cached
  in ``--cache-dir`` like every naive check, so that a rerun pays only for the estimates;
* per size: predicted, its SE (``est.curve_se()``), the pooled real value and its SE,
  ``z = (pred - real) / sqrt(se_pred^2 + se_real^2)`` (flagged where ``|z| > 2``), and
  beside it the project's combined z (``estimates.validation.comparison.compare``: it
  adds half the model band beyond the measured sizes);
* each side's real runs and seconds.

``--mutual-info-runs N`` (0 to skip): time N real runs of ``mutual-info`` on the first
dataset (runs on random halves, as the estimate's pool makes them) and project the cost of
an estimate and of the naive checks from their counts of real runs; its naive checks are
not run (thousands of runs of seconds each).

The JSON is rewritten after each (dataset, selector), so an interrupted run keeps what it did.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

N_TARGET = 20


def validate_one(X, y, name, args, *, client) -> dict:
    """One selector on one dataset: the estimate, the pooled naive checks, the table's rows."""
    import ensstab_dask as es
    from ensstab_dask.estimates.validation.comparison import compare
    from ensstab_dask.estimates.validation.harness import naive_check
    from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
    from ensstab_dask.real.naive import pool_naive_checks
    from ensstab_dask.real.named_selectors import named_selector
    from ensstab_dask.real.selectors import DEFAULT_TREES

    sizes = [int(v) for v in args.m_ensemble.split(",")]
    selector = named_selector(name, DEFAULT_TREES, "classification")
    load = [os.getloadavg()]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = es.estimate(
            X, y, N_TARGET, selector=selector, seed=args.seed, m_ensemble=sizes, client=client, progress=False
        )
    est_seconds = time.perf_counter() - t0
    load.append(os.getloadavg())
    checks, naive_seconds = [], []
    for naive_seed in (int(v) for v in args.naive_seeds.split(",")):
        t0 = time.perf_counter()
        settings = NaiveSettings(m_ensemble=sizes, m_stability=args.m_stability, selector=selector, seed=naive_seed)
        checks.append(naive_check(X, y, N_TARGET, settings, cache_dir=args.cache_dir, client=client, progress=False))
        naive_seconds.append(time.perf_counter() - t0)
    load.append(os.getloadavg())
    reference = pool_naive_checks(checks)
    rows = compare(est, reference)
    per_m = {}
    for m, r in rows.items():
        z = (r["predicted"] - r["real"]) / float(np.hypot(r["predicted_se"], r["real_se"]))
        per_m[str(m)] = {
            "predicted": r["predicted"],
            "predicted_se": r["predicted_se"],
            "band": r["band"],
            "real": r["real"],
            "real_se": r["real_se"],
            "z": float(z),
            "flagged": bool(abs(z) > 2),
            "z_combined": r["z"],
        }
    return {
        "selector": name,
        "reliable": bool(est.reliable),
        "warnings": list(est.warnings),
        "estimate_real_runs": int(est.real_runs),
        "estimate_seconds": est_seconds,
        "naive_seeds": [int(ds.attrs["seed"]) for ds in checks],
        "naive_real_runs": int(sum(int(ds.attrs["real_runs"]) for ds in checks)),
        # Wall seconds as measured here (a cached check's is the seconds of reading it)...
        "naive_seconds": float(sum(naive_seconds)),
        # ...and as each check recorded when it was measured.
        "naive_seconds_as_made": float(sum(float(ds.attrs["seconds"]) for ds in checks)),
        "naive_cached": [int(ds.attrs.get("cached", 0)) for ds in checks],
        "naive_copies": {
            str(int(m)): int(c) for m, c in zip(reference["m_ensemble"].values, reference["copies"].values)
        },
        "load_average": [list(v) for v in load],
        "per_m": per_m,
    }


def time_mutual_info(X, y, n_runs: int, seed: int, *, client) -> dict:
    """Wall seconds of ``n_runs`` real runs of ``mutual-info`` on random halves, on ``client``."""
    from ensstab_dask.real.named_selectors import named_selector
    from ensstab_dask.real.runs import real_subsets
    from ensstab_dask.real.selectors import DEFAULT_TREES
    from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive

    selector = named_selector("mutual-info", DEFAULT_TREES, "classification")
    load = os.getloadavg()
    t0 = time.perf_counter()
    real_subsets(
        X,
        y,
        N_TARGET,
        n_runs=n_runs,
        resample="half",
        seed=derive(as_seed_sequence(seed), Stream.ESTIMATE, Stage.REAL),
        selector=selector,
        client=client,
    )
    seconds = time.perf_counter() - t0
    return {"runs": n_runs, "seconds": seconds, "seconds_per_run": seconds / n_runs, "load_before": list(load)}


def print_tables(results: list[dict]) -> None:
    for res in results:
        print(
            f"\n### {res['data']}, {res['selector']} (seed {res['seed']}; "
            f"reliable: {'yes' if res['reliable'] else 'no'})"
            f"\n\nestimate: {res['estimate_real_runs']} real runs, {res['estimate_seconds']:.0f} s; naive checks "
            f"(seeds {', '.join(map(str, res['naive_seeds']))}): {res['naive_real_runs']} real runs, "
            f"{res['naive_seconds_as_made']:.0f} s\n"
        )
        for w in res["warnings"]:
            print(f"warning: {w}\n")
        print("| m | predicted | SE | pooled real | SE | z | combined z (with band) |")
        print("|---|---|---|---|---|---|---|")
        for m, r in res["per_m"].items():
            flag = " **x**" if r["flagged"] else ""
            print(
                f"| {m} | {r['predicted']:.3f} | {r['predicted_se']:.3f} | {r['real']:.3f} | {r['real_se']:.3f} | "
                f"{r['z']:+.1f}{flag} | {r['z_combined']:+.1f} |"
            )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="colon,prostate", help="comma-separated reference datasets")
    ap.add_argument("--selectors", default="l1-logistic,linear-svm,f-test", help="comma-separated named selectors")
    ap.add_argument("--seed", type=int, default=1, help="the estimate's seed")
    ap.add_argument("--naive-seeds", default="101,102,103", help="comma-separated, each an independent naive check")
    ap.add_argument("--m-stability", type=int, default=20, help="copies per naive check")
    ap.add_argument("--m-ensemble", default="1,5,10,20,30,50")
    ap.add_argument("--mutual-info-runs", type=int, default=10, help="real runs of mutual-info to time (0: none)")
    ap.add_argument("--cache-dir", default=str(Path(__file__).parent / ".cache"))
    ap.add_argument("--json", default=str(Path(__file__).parent / "results" / "selector-validation-seed1.json"))
    ap.add_argument("--report", help="no runs: print the tables of these JSON files (comma-separated, from --json)")
    args = ap.parse_args(argv)
    if args.report:
        for path in args.report.split(","):
            with open(path) as f:
                saved = json.load(f)
            print_tables(saved["results"])
            print_mutual_info(saved)
        return 0
    if len(set(args.naive_seeds.split(","))) < 2:
        ap.error("--naive-seeds: give two seeds or more, each an independent naive check")

    from distributed import Client

    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.real.datasets import reference_dataset

    os.makedirs(args.cache_dir, exist_ok=True)
    out: dict = {"n_target": N_TARGET, "m_stability": args.m_stability, "cpus": os.cpu_count(), "results": []}

    def save():
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)

    with local_cluster() as cluster, Client(cluster) as client:
        for d, data_name in enumerate(args.datasets.split(",")):
            data = reference_dataset(data_name)
            if d == 0 and args.mutual_info_runs > 0:
                out["mutual_info"] = {
                    "data": data_name,
                    **time_mutual_info(data.X, data.y, args.mutual_info_runs, args.seed, client=client),
                }
                save()
                print(f"mutual-info: {out['mutual_info']['seconds_per_run']:.2f} s per run", flush=True)
            for name in args.selectors.split(","):
                res = {"data": data_name, "shape": list(data.X.shape), "seed": args.seed}
                res.update(validate_one(data.X, data.y, name, args, client=client))
                out["results"].append(res)
                save()
                print(f"{data_name} {name}: done", flush=True)
    print_tables(out["results"])
    print_mutual_info(out)
    return 0


def print_mutual_info(out: dict) -> None:
    """The timed runs of ``mutual-info`` and what an estimate and the naive checks would cost at that pace."""
    if "mutual_info" not in out:
        return
    mi = out["mutual_info"]
    per_run = mi["seconds_per_run"]
    print(
        f"\nmutual-info on {mi['data']}: {mi['runs']} real runs in {mi['seconds']:.1f} s ({per_run:.2f} s per run, "
        f"wall, on the cluster); at that pace an estimate (200 runs) takes {200 * per_run / 60:.0f} min and three "
        f"naive checks of 20 copies to m = 50 (3,000 runs) {3000 * per_run / 3600:.1f} h"
    )


if __name__ == "__main__":
    raise SystemExit(main())
