"""A whole ``--groupby`` estimate of a single-cell study at full size: every group, every stage.

    python benchmarks/bench_single_cell.py [--cells 2000,10000] [--genes 20000] [--density 0.05] \
        [--groups 10] [--n-estimators 50] [--workers 2] [--json OUT.json]

For each ``--cells`` size, one ``.h5ad`` of ``--cells`` x ``--genes`` at ``--density``
(CSR float32, ``--groups`` cell types of equal size; each type's 20 marker genes raised
in 70 % of its cells, so that no one split tells a type from the rest), then, in a fresh
process so that its peak memory is its own: the file read as ``ensstab estimate --data``
reads it (X kept sparse), and ``estimate_groups`` of every group against the rest, with
every default but the forest's ``--n-estimators``, on a local cluster of ``--workers``
single-threaded worker processes, under distributed's task stream.

Per size: the wall time of the load and of the whole estimate; the one submission of
every group's real runs (wall seconds); the compute seconds of every task the workers ran
(the real runs', and the few the statistics send: the arcs' tops); each group's
statistics, stage by stage, from its estimate's recorded seconds; the client's peak
resident memory and each worker's (Linux's ``VmHWM``); and the time predicted for 16
workers: the tasks' compute seconds over 16 (the runs are independent tasks of equal
size) plus the statistics as measured (their stages, one group after another, counted
again in full: an upper bound). Comparing the sizes, each stage's growth beside the runs': with the runs'
number fixed, a stage that grows faster than they do with the samples is named.
Results and the commands that made them: docs/performance.md ("A single-cell study at
full size").
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MARKERS = 20  # per type


def write_study(path: Path, *, cells: int, genes: int, density: float, groups: int, seed: int = 0) -> None:
    """``groups`` cell types of ``cells / groups`` each; type t's markers are genes
    ``t*20 .. t*20+19``, raised by 1 + |N(0, 1)| in 70 % of its cells; CSR float32 .h5ad."""
    import anndata
    import pandas as pd
    import scipy.sparse

    rng = np.random.default_rng(seed)
    X = scipy.sparse.random(cells, genes, density=density, format="csr", random_state=rng, dtype=np.float32)
    kind = np.arange(cells) % groups
    rng.shuffle(kind)
    marked = np.zeros((cells, groups * MARKERS), dtype=np.float32)
    for t in range(groups):
        rows = np.flatnonzero((kind == t) & (rng.random(cells) < 0.7))
        marked[np.ix_(rows, np.arange(t * MARKERS, (t + 1) * MARKERS))] = 1.0 + np.abs(
            rng.normal(size=(rows.size, MARKERS))
        )
    lead = X[:, : groups * MARKERS].toarray() + marked
    X = scipy.sparse.hstack([scipy.sparse.csr_matrix(lead), X[:, groups * MARKERS :]]).tocsr().astype(np.float32)
    obs = pd.DataFrame({"cell_type": pd.Categorical([f"type{t}" for t in kind])}, index=[f"c{i}" for i in range(cells)])
    anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=[f"g{j}" for j in range(genes)])).write_h5ad(path)


def _peak_mib() -> float:
    """This process's peak resident memory (Linux's VmHWM)."""
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024  # kB


def one_size(path: Path, *, n_estimators: int, workers: int) -> dict:
    """The whole estimate of every group of ``path``, in this process."""
    from distributed import Client, get_task_stream

    import ensstab_dask as es
    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.real.datasets import load_dataset

    t0 = time.perf_counter()
    data = load_dataset(path, label="cell_type")
    load = time.perf_counter() - t0
    with local_cluster(n_workers=workers) as cluster, Client(cluster) as client:
        client.run(lambda: None)  # the workers up before the clock starts
        t0 = time.perf_counter()
        with get_task_stream(client) as stream:
            res = es.estimate_groups(
                data.X,
                data.y,
                20,
                groupby="cell_type",
                feature_names=data.feature_names,
                selector=es.default_selector(n_estimators),
                client=client,
                progress=False,
            )
        wall = time.perf_counter() - t0
        worker_peaks = sorted(client.run(_peak_mib).values())
    compute = sum(
        part["stop"] - part["start"]
        for task in stream.data
        for part in task.get("startstops", ())
        if part.get("action") == "compute"
    )
    stages = {g: {k: float(v) for k, v in est.cost.seconds.items()} for g, est in res.estimates.items()}
    stats = {g: sum(v for k, v in s.items() if k != "real_runs") for g, s in stages.items()}
    markers = res.markers()
    return {
        "cells": int(data.X.shape[0]),
        "genes": int(data.X.shape[1]),
        "load_s": load,
        "estimate_wall_s": wall,
        "runs_wall_s": res.seconds,
        "runs_compute_s": compute,
        "runs_per_group": res.estimates[res.groups[0]].real_runs,
        "stages": stages,
        "statistics_s": stats,
        "client_peak_MiB": _peak_mib(),
        "worker_peaks_MiB": worker_peaks,
        "markers_found": {
            g: sum(1 for n in names if int(n[1:]) // MARKERS == int(g[4:])) for g, names in markers.items()
        },
        "markers_kept": {g: len(names) for g, names in markers.items()},
    }


def _summary(row: dict, workers: int) -> dict:
    groups = len(row["stages"])
    stats = sum(row["statistics_s"].values())
    return {
        "wall_per_group_s": row["estimate_wall_s"] / groups,
        "runs_share": row["runs_wall_s"] / row["estimate_wall_s"],
        "statistics_s": stats,
        "statistics_over_runs": stats / row["runs_wall_s"],
        "predicted_16_workers_s": row["runs_compute_s"] / 16 + stats,
        "busy_share": row["runs_compute_s"] / (workers * row["runs_wall_s"]),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default="2000,10000", help="comma-separated sizes")
    ap.add_argument("--genes", type=int, default=20_000)
    ap.add_argument("--density", type=float, default=0.05)
    ap.add_argument("--groups", type=int, default=10)
    ap.add_argument("--n-estimators", type=int, default=50)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--one", metavar="FILE", help=argparse.SUPPRESS)  # one size, in this process
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one_size(Path(args.one), n_estimators=args.n_estimators, workers=args.workers)))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for cells in (int(c) for c in args.cells.split(",")):
            path = Path(tmp) / f"cells-{cells}.h5ad"
            write_study(path, cells=cells, genes=args.genes, density=args.density, groups=args.groups)
            print(f"{cells} cells x {args.genes} genes at {args.density:.0%}: {path.stat().st_size / 2**20:.0f} MiB")
            cmd = [sys.executable, __file__, "--one", str(path), "--n-estimators", str(args.n_estimators)]
            out = subprocess.run([*cmd, "--workers", str(args.workers)], check=True, capture_output=True, text=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            row["summary"] = _summary(row, args.workers)
            rows.append(row)
            s = row["summary"]
            print(
                f"  estimate {row['estimate_wall_s']:.0f} s ({s['wall_per_group_s']:.0f} s a group); runs "
                f"{row['runs_wall_s']:.0f} s wall, {row['runs_compute_s']:.0f} s of tasks "
                f"(busy {s['busy_share']:.0%}); "
                f"statistics {s['statistics_s']:.1f} s ({s['statistics_over_runs']:.1%} of the runs); "
                f"16 workers: about {s['predicted_16_workers_s']:.0f} s; client peak {row['client_peak_MiB']:.0f} MiB, "
                f"workers {' / '.join(f'{v:.0f}' for v in row['worker_peaks_MiB'])} MiB; "
                f"markers kept {row['markers_kept']}, of them true {row['markers_found']}"
            )
    growth = {}
    if len(rows) > 1:
        small, large = rows[0], rows[-1]
        runs = large["runs_compute_s"] / small["runs_compute_s"]
        stages = {k for row in (small, large) for s in row["stages"].values() for k in s} - {"real_runs"}
        for stage in sorted(stages):  # a stage may run at one size alone (a round, the moments)
            a = sum(s.get(stage, 0.0) for s in small["stages"].values())
            b = sum(s.get(stage, 0.0) for s in large["stages"].values())
            growth[stage] = b / a if a > 0 else float("nan")
        faster = [k for k, v in growth.items() if v > runs]
        print(
            f"\n{small['cells']} -> {large['cells']} cells: the runs' compute x{runs:.2f}; stages: "
            + ", ".join(f"{k} x{v:.2f}" for k, v in growth.items())
            + f"; faster than the runs: {faster or 'none'}"
        )
        growth["real_runs_compute"] = runs
    if args.json:
        Path(args.json).write_text(json.dumps({"settings": vars(args), "rows": rows, "growth": growth}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
