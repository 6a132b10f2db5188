"""A sparse single-cell matrix from the file to the workers, against the dense path.

    python benchmarks/bench_sparse.py [--cells 10000] [--genes 20000] [--density 0.05] \
        [--n-estimators 50] [--runs 8] [--workers 2] [--repeats 1] [--json OUT.json]

Writes one ``.h5ad`` of ``--cells`` x ``--genes`` at ``--density`` (CSR float32, two cell
types, the first 20 genes shifted in one), then, each path in a fresh process so that its
peak memory is its own:

* ``sparse``: ``load_dataset`` keeps X sparse (CSC float32), and ``real_runs`` sends it
  to the workers once and runs ``--runs`` real runs of a ``--n-estimators``-tree forest;
* ``dense``: the same file read as the package read it before it kept X sparse (the
  matrix made a dense float64 array), then the same runs.

Per path: the client's peak resident memory (Linux's ``VmHWM``), each worker's peak
(the worker processes' ``VmHWM``, read at the end), the seconds to load and the
seconds of the runs on a local cluster of ``--workers`` single-threaded workers, and
whether both paths ranked every feature the same (they must: the trees fit the same
float32 values). The median over ``--repeats`` of each time; memory is the largest seen.
Results and the commands that made them: benchmarks/results/sparse.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_study(path: Path, *, cells: int, genes: int, density: float, seed: int = 0) -> None:
    """A two-type study of ``cells`` x ``genes`` counts-like values, CSR float32, as .h5ad."""
    import anndata
    import pandas as pd
    import scipy.sparse

    rng = np.random.default_rng(seed)
    X = scipy.sparse.random(cells, genes, density=density, format="csr", random_state=rng, dtype=np.float32)
    kind = rng.integers(0, 2, cells)
    shifted = X[:, :20].toarray()
    shifted[kind == 1] += 1.0  # the marker genes of type 1: present in every cell of it
    X = scipy.sparse.hstack([scipy.sparse.csr_matrix(shifted), X[:, 20:]]).tocsr().astype(np.float32)
    obs = pd.DataFrame(
        {"cell_type": pd.Categorical(np.where(kind == 1, "B", "A"))}, index=[f"c{i}" for i in range(cells)]
    )
    anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=[f"g{j}" for j in range(genes)])).write_h5ad(path)


def _peak_mib() -> float:
    """This process's peak resident memory: Linux's VmHWM (``ru_maxrss`` can carry a
    forking parent's peak into a child)."""
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024  # kB


def one_path(path: Path, kind: str, *, runs: int, n_estimators: int, workers: int) -> dict:
    """Load ``path`` as ``kind`` and run ``runs`` real runs on a fresh local cluster."""
    from distributed import Client

    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.real.datasets import load_dataset
    from ensstab_dask.real.runs import Pool, real_runs
    from ensstab_dask.real.selectors import default_selector

    t0 = time.perf_counter()
    data = load_dataset(path, label="cell_type")
    X = data.X.toarray().astype(np.float64) if kind == "dense" else data.X  # the package's path before sparse
    load = time.perf_counter() - t0
    with local_cluster(n_workers=workers) as cluster, Client(cluster) as client:
        t0 = time.perf_counter()
        ranks = real_runs(X, data.y, 20, Pool(runs, seed=0), selector=default_selector(n_estimators), client=client)
        seconds = time.perf_counter() - t0
        worker_peaks = sorted(client.run(_peak_mib).values())
    return {
        "path": kind,
        "X_MiB": (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if kind == "sparse" else X.nbytes) / 2**20,
        "load_s": load,
        "runs_s": seconds,
        "client_peak_MiB": _peak_mib(),
        "worker_peaks_MiB": worker_peaks,
        "ranks_digest": hashlib.sha256(ranks.tobytes()).hexdigest(),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=10_000)
    ap.add_argument("--genes", type=int, default=20_000)
    ap.add_argument("--density", type=float, default=0.05)
    ap.add_argument("--n-estimators", type=int, default=50)
    ap.add_argument("--runs", type=int, default=8, help="real runs per path (a multiple of --workers)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--one", nargs=2, metavar=("FILE", "PATH"), help=argparse.SUPPRESS)  # one path, in this process
    args = ap.parse_args(argv)
    if args.one:
        result = one_path(
            Path(args.one[0]), args.one[1], runs=args.runs, n_estimators=args.n_estimators, workers=args.workers
        )
        print(json.dumps(result))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cells.h5ad"
        write_study(path, cells=args.cells, genes=args.genes, density=args.density)
        print(
            f"{args.cells} cells x {args.genes} genes at {args.density:.0%}: "
            f"{path.stat().st_size / 2**20:.0f} MiB as .h5ad"
        )
        results = {"sparse": [], "dense": []}
        for _ in range(args.repeats):
            for kind in ("sparse", "dense"):  # side by side in each repeat
                cmd = [sys.executable, __file__, "--one", str(path), kind, "--runs", str(args.runs)]
                cmd += ["--n-estimators", str(args.n_estimators), "--workers", str(args.workers)]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                results[kind].append(json.loads(out.strip().splitlines()[-1]))
    rows = {}
    for kind, reps in results.items():
        rows[kind] = {
            "X_MiB": reps[0]["X_MiB"],
            "load_s": float(np.median([r["load_s"] for r in reps])),
            "runs_s": float(np.median([r["runs_s"] for r in reps])),
            "client_peak_MiB": max(r["client_peak_MiB"] for r in reps),
            "worker_peak_MiB": max(max(r["worker_peaks_MiB"]) for r in reps),
            "worker_peaks_MiB": reps[-1]["worker_peaks_MiB"],
        }
    same = results["sparse"][0]["ranks_digest"] == results["dense"][0]["ranks_digest"]
    print(
        f"\n{args.runs} real runs of a {args.n_estimators}-tree forest on {args.workers} workers; ranks equal: {same}\n"
    )
    print("| path | X in memory | client peak | each worker's peak | load | runs |")
    print("|---|---|---|---|---|---|")
    for kind, r in rows.items():
        peaks = " / ".join(f"{v:,.0f}" for v in r["worker_peaks_MiB"])
        print(
            f"| {kind} | {r['X_MiB']:,.0f} MiB | {r['client_peak_MiB']:,.0f} MiB | {peaks} MiB | {r['load_s']:.1f} s "
            f"| {r['runs_s']:.1f} s |"
        )
    s, d = rows["sparse"], rows["dense"]
    print(
        f"\nsparse / dense: client peak {s['client_peak_MiB'] / d['client_peak_MiB']:.2f}, worker peak "
        f"{s['worker_peak_MiB'] / d['worker_peak_MiB']:.2f}, runs {s['runs_s'] / d['runs_s']:.2f}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"settings": vars(args), "rows": rows, "ranks_equal": same}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
