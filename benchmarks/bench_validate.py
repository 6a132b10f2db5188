"""The validation harness on five datasets: the estimate against the naive check.

    ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_validate.py [--seeds 0,1] [--models onda,anchored] \
        [--json OUT.json] [--variants] [--m-ensemble 1,5,10,20,30,50] [--layout fixed|adaptive]

For the embedded default, Colon, Lymphoma and Prostate (their paper settings, n_target
20, 20, 40, 60) and Prostate cut into three levels per feature as Colon and Lymphoma are
(``prostate-3level``, n_target 60; ``real.datasets.discretize``), with the default random
forest (300 trees), m_stability = 20 and m_ensemble 1, 5, 10, 20, 30, 50 (or
``--m-ensemble``), on one local Dask cluster:

* ``validate`` with the estimate's defaults, for each model in ``--models`` and each
  seed in ``--seeds`` (independent naive checks and estimates: choose settings on seed 0,
  report seed 1 untouched): the table per m (predicted [interval], its SE, real +- SE,
  the combined z, covered, within 2 SE), both real-run counts and both wall times. The
  naive curves are cached in ``--cache-dir`` (default ``benchmarks/.cache``), so a rerun
  only pays for the estimates.
* the scorecard per model (its targets: docs/validation.md), over every table: sizes
  within combined |z| <= 2 per table, the median interval half-width over the naive SE,
  the mean signed z and how often each sign holds, coverage, real runs, and whether
  ``reliable: yes`` was printed for a table with two or more misses. ``--json`` keeps
  every row.
* ``--variants``: the calibration layouts and ``n_runs`` side by side. Pools of real
  runs are made once per dataset (100 on random halves, 50 in the weak-selector layout,
  with the streams ``estimate`` uses), and every variant is ``estimate_from_runs`` on the
  first runs of those pools: exactly what ``estimate`` with those options would give.
  Prints, per variant: the fitted (u, p), the predicted curve, how many sizes the
  interval covers, how many are within 2 SE, and the mean |z|.

``--layout adaptive`` validates the anchored model's adaptive layout (``layout`` of
:func:`~ensstab_dask.estimate`) instead of its fixed one; the JSON records the layout.

A dataset whose file is missing is skipped, saying so.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

from ensstab_dask.checks import COPY_LAYOUTS, MODELS

DATASETS = {"default": 20, "colon": 20, "lymphoma": 40, "prostate": 60, "prostate-3level": 60, "prostate-gene": 40}
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
    """A dataset by name: ``default`` (the embedded one), a reference dataset, or one with
    ``-3level`` appended, cut into -2 / 0 / 2 per feature (:func:`discretize`) as
    scikit-feature's discretized sets are (Colon and Lymphoma already are; Prostate is not),
    or ``-gene``: a regression task, the gene of largest variance predicted from the others
    (:func:`gene_target`)."""
    from ensstab_dask.real.datasets import discretize, make_microarray, reference_dataset

    base, _, cut = name.partition("-")
    data = make_microarray(seed=0) if base == "default" else reference_dataset(base)
    return discretize(data) if cut == "3level" else gene_target(data) if cut == "gene" else data


def gene_target(data):
    """The regression task of a dataset: its feature of largest variance (the first, on a
    tie) as the target ``y``, the other features as ``X`` (the class labels are dropped)."""
    target = int(np.argmax(data.X.var(axis=0)))
    names = None if data.feature_names is None else np.delete(data.feature_names, target)
    return data._replace(X=np.delete(data.X, target, axis=1), y=data.X[:, target].copy(), feature_names=names)


def variants(data, n_target, naive, *, selector, m_stability, seed, client) -> list[str]:
    from ensstab_dask.estimates.stages.pipeline import assemble_runs, estimate_from_runs, real_subsets
    from ensstab_dask.estimates.validation.comparison import compare
    from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive
    from ensstab_dask.settings import EstimateSettings

    ss = as_seed_sequence(seed)
    t0 = time.perf_counter()
    common = dict(selector=selector, client=client)
    half = real_subsets(
        data.X, data.y, n_target, n_runs=100, resample="half", seed=derive(ss, Stream.ESTIMATE, Stage.REAL), **common
    )
    member = real_subsets(
        data.X,
        data.y,
        n_target,
        n_runs=50,
        resample="bagging",
        seed=derive(ss, Stream.ESTIMATE, Stage.MEMBER_RUNS),
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
        # The paper's simulator (model="onda"), as estimate() would run it on these pools.
        settings = EstimateSettings(
            n_feature=data.X.shape[1],
            n_target=n_target,
            m_ensemble=M_LIST,
            m_stability=m_stability,
            n_runs=n_runs,
            calibration_layout=layout,
            seed=seed,
            selector=selector,
            model="onda",
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            est = estimate_from_runs(runs, settings, client=client)
        rows = compare(est, naive)
        z = np.array([r["z"] for r in rows.values()])
        cells = [
            "n/a" if not np.isfinite(r["predicted"]) else f"{r['predicted']:.3f} [{r['lower']:.3f}, {r['upper']:.3f}]"
            for r in rows.values()
        ]
        lines.append(
            f"| {layout} | {n_runs} | {runs.count} | {est.single.n_useful_mean:.1f} | {est.fit.p:.3f} | "
            + " | ".join(cells)
            + f" | {sum(r['covered'] for r in rows.values())} | {sum(r['within_2se'] for r in rows.values())} | "
            f"{np.nanmean(np.abs(z)):.1f} |"
            + ("" if est.reliable else " (unreliable: " + "; ".join(w.split(":")[0] for w in est.warnings) + ")")
        )
    return lines


def scorecard(results: list[dict]) -> list[str]:
    """Per model and seed, the scorecard's targets over the tables in ``results`` (rows of :func:`main`)."""
    lines = [
        "| model | seed | within combined 2 SE, per table | tables with >= 5 of 6 | median half-width / naive SE "
        "(worst table) | mean signed z | z > 0 / z < 0 | covered | reliable: yes with >= 2 misses | real runs |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    keys = sorted({(r["model"], r["seed"]) for r in results}, key=lambda k: (k[0], k[1]))
    for model, seed in keys:
        rows = sorted(
            (r for r in results if r["model"] == model and r["seed"] == seed),
            key=lambda r: list(DATASETS).index(r["data"]),
        )
        cells = [c for r in rows for c in r["per_m"].values()]
        z = np.array([c["z"] if c["z"] is not None else np.nan for c in cells], dtype=float)
        within = [sum(bool(c["within_2se"]) for c in r["per_m"].values()) for r in rows]
        ratio = [
            float(
                np.median(
                    [
                        (c["upper"] - c["lower"]) / 2 / c["real_se"]
                        for c in r["per_m"].values()
                        if c["upper"] is not None
                    ]
                )
            )
            if all(c["upper"] is not None for c in r["per_m"].values())
            else float("nan")
            for r in rows
        ]
        bad = [r["data"] for r, w in zip(rows, within) if r["reliable"] and len(r["per_m"]) - w >= 2]
        lines.append(
            f"| {model} | {seed} | "
            + ", ".join(f"{r['data']} {w}" for r, w in zip(rows, within))
            + f" | {sum(w >= 5 for w in within)} of {len(rows)} | {np.nanmedian(ratio):.2f} ({np.nanmax(ratio):.2f}) | "
            f"{np.nanmean(z):+.2f} | {int((z > 0).sum())} / {int((z < 0).sum())} | "
            f"{sum(bool(c['covered']) for c in cells)} of {len(cells)} | {', '.join(bad) or 'none'} | "
            + ", ".join(sorted({str(r["real_runs"]) for r in rows}))
            + " |"
        )
    return lines


def compact_tables(rows: list[dict]) -> list[str]:
    """One line per table: predicted [interval] / real +- SE / combined z at each m."""
    sizes = sorted({int(m) for r in rows for m in r["per_m"]})
    lines = [
        "| dataset | seed | reliable | " + " | ".join(f"m = {m}" for m in sizes) + " |",
        "|---|---|---|" + "---|" * len(sizes),
    ]
    for r in sorted(rows, key=lambda r: (r["seed"], list(DATASETS).index(r["data"]))):
        cells = []
        for m in (m for m in sizes if str(m) in r["per_m"]):
            c = r["per_m"][str(m)]
            cells.append(
                f"{c['predicted']:.3f} [{c['lower']:.3f}, {c['upper']:.3f}] / {c['real']:.3f} +- {c['real_se']:.3f} / "
                f"{c['z']:+.1f}" + ("" if c["within_2se"] else " **x**")
            )
        lines.append(f"| {r['data']} | {r['seed']} | {'yes' if r['reliable'] else 'no'} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated, from " + ", ".join(DATASETS))
    ap.add_argument("--m-stability", type=int, default=20)
    ap.add_argument("--n-estimators", type=int, default=300)
    ap.add_argument("--seeds", default="0", help="comma-separated seeds, each an independent naive check and estimate")
    ap.add_argument("--cache-dir", default=str(Path(__file__).parent / ".cache"))
    ap.add_argument("--variants", action="store_true", help="also compare calibration layouts and n_runs")
    ap.add_argument("--models", default="onda", help="comma-separated, from " + ", ".join(MODELS))
    ap.add_argument("--json", help="write every table's rows here")
    ap.add_argument("--m-ensemble", default=",".join(map(str, M_LIST)), help="comma-separated ensemble sizes")
    ap.add_argument(
        "--naive-seeds",
        default=None,
        help="comma-separated: judge each estimate against these independent naive checks pooled "
        "(real.naive.pool_naive_checks): the first to every size, the others to --pool-up-to",
    )
    ap.add_argument("--pool-up-to", type=int, default=20, help="the largest size the pooled naive checks share")
    ap.add_argument("--layout", default="fixed", choices=COPY_LAYOUTS, help="the anchored model's layout")
    ap.add_argument(
        "--report",
        help="no runs: print the scorecard and the tables of --models from these JSON files "
        "(comma-separated, written by --json)",
    )
    args = ap.parse_args(argv)
    if args.report:
        # A later file's table replaces an earlier one's (same model, seed and dataset).
        latest = {}
        for path in args.report.split(","):
            with open(path) as f:
                latest.update({(r["model"], r["seed"], r["data"]): r for r in json.load(f)})
        rows = list(latest.values())
        print("\n".join(scorecard(rows)))
        for model in args.models.split(","):
            print("\n" + "\n".join(compact_tables([r for r in rows if r["model"] == model])))
        return 0
    if args.naive_seeds and len(set(args.naive_seeds.split(","))) < 2:
        ap.error("--naive-seeds: give two seeds or more, each an independent naive check")
    models = args.models.split(",")
    for m in models:
        if m not in MODELS:
            ap.error(f"--models: {m!r} is not one of " + ", ".join(MODELS))

    from distributed import Client

    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.estimates.validation.harness import validate
    from ensstab_dask.real.datasets import check_data
    from ensstab_dask.real.selectors import default_selector
    from ensstab_dask.real.targets import task_of

    os.makedirs(args.cache_dir, exist_ok=True)
    results = []
    with local_cluster() as cluster, Client(cluster) as client:
        for seed in (int(v) for v in args.seeds.split(",")):
            for name in args.datasets.split(","):
                n_target = DATASETS[name]
                try:
                    data = load(name)
                except ValueError as exc:
                    print(f"\n## {name}: skipped ({exc})")
                    continue
                selector = default_selector(args.n_estimators, task=task_of(check_data(data.X, data.y)[1]))
                for model in models:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        res = validate(
                            data.X,
                            data.y,
                            n_target,
                            m_ensemble=[int(v) for v in args.m_ensemble.split(",")],
                            m_stability=args.m_stability,
                            selector=selector,
                            seed=seed,
                            cache_dir=args.cache_dir,
                            client=client,
                            data=name,
                            model=model,
                            progress=False,
                            **({"layout": args.layout} if model == "anchored" else {}),
                        )
                    if args.naive_seeds:
                        res = pooled(res, data, n_target, args, selector=selector, client=client)
                    print_table(res, name, data, n_target, seed)
                    d = res.to_dict()
                    results.append(
                        {
                            "model": model,
                            "seed": seed,
                            "data": name,
                            "reliable": d["reliable"],
                            "warnings": d["warnings"],
                            "per_m": d["per_m"],
                            "real_runs": d["estimate_real_runs"],
                            "layout": args.layout if model == "anchored" else None,
                            "seconds": res.seconds,
                            "self_check": d["estimate"].get("self_check"),  # none where nothing was predicted
                            # The naive copies behind each size (the pooled checks', with --naive-seeds).
                            "naive_copies": naive_copies(res.naive),
                            "naive_seeds": [int(v) for v in np.atleast_1d(res.naive.attrs.get("seeds", seed))],
                        }
                    )
                    if args.variants and model == "onda":
                        print()
                        print(
                            "\n".join(
                                variants(
                                    data,
                                    n_target,
                                    res.naive,
                                    selector=selector,
                                    m_stability=args.m_stability,
                                    seed=seed,
                                    client=client,
                                )
                            )
                        )
    print("\n## Scorecard\n")
    print("\n".join(scorecard(results)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def pooled(res, data, n_target, args, *, selector, client):
    """``res`` judged against the naive checks of ``--naive-seeds`` pooled: the first to
    every size, the others up to ``--pool-up-to`` (each cached as any naive check)."""
    import dataclasses

    from ensstab_dask.estimates.validation.comparison import compare
    from ensstab_dask.estimates.validation.harness import naive_check
    from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
    from ensstab_dask.real.naive import pool_naive_checks

    sizes = [int(v) for v in args.m_ensemble.split(",")]
    checks = []
    for i, naive_seed in enumerate(int(v) for v in args.naive_seeds.split(",")):
        m_list = sizes if i == 0 else [m for m in sizes if m <= args.pool_up_to]
        settings = NaiveSettings(m_ensemble=m_list, m_stability=args.m_stability, selector=selector, seed=naive_seed)
        checks.append(
            naive_check(data.X, data.y, n_target, settings, cache_dir=args.cache_dir, client=client, progress=False)
        )
    reference = pool_naive_checks(checks)
    seconds = dict(res.seconds, naive=float(reference.attrs["seconds"]))
    return dataclasses.replace(res, naive=reference, per_m=compare(res.estimate, reference), seconds=seconds)


def naive_copies(naive) -> dict[str, int]:
    """The real ensemble copies behind each size of a naive check (pooled or not)."""
    m_list = [int(m) for m in naive["m_ensemble"].values]
    if "copies" in naive:
        return {str(m): int(c) for m, c in zip(m_list, naive["copies"].values)}
    return {str(m): int(naive.attrs["m_stability"]) for m in m_list}


def print_table(res, name, data, n_target, seed) -> None:
    e, n = res.estimate, res.naive
    model, h = e.prediction.model, e.prediction.h
    p = float("nan") if e.fit is None else e.fit.p  # a model without the simulator has no p
    print(f"\n## {name} ({data.X.shape[0]} x {data.X.shape[1]}, n_target {n_target}), model {model}, seed {seed}\n")
    print(
        f"estimate: {e.real_runs} real runs, {res.seconds['estimate']:.0f} s (u = {e.single.n_useful}, p = {p:.3f}"
        + ("" if h is None else f", h = {h}")
        + f", reliable: {'yes' if e.reliable else 'no'}); "
        f"naive check: {int(n.attrs['real_runs'])} real runs, {res.seconds['naive']:.0f} s"
        + (" (cached)" if int(n.attrs.get("cached", 0)) else "")
    )
    for w in e.warnings:
        print(f"warning: {w}")
    print()
    print(res.table())
    copies = naive_copies(n)
    if len(set(copies.values())) > 1:
        print("naive copies per size: " + ", ".join(f"m = {m}: {c}" for m, c in copies.items()))
    print(
        f"\ninterval covers the naive value at {res.covered} of {len(res.per_m)}; "
        f"within 2 combined SE at {res.within_2se} of {len(res.per_m)}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
