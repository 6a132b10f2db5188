"""Sweep throughput, scheduling overhead, and graph build cost for 100,000 cells.

    python benchmarks/bench_sweep.py [--repeats 3]

Measured in one run on this machine (2 cores), against clusters started before the
timers:

A. throughput of one sweep (n_feature=2000, n_target=20, 108 cells of m_ensemble 1, 5,
   10) on a LocalCluster with 1 worker process, 2 worker processes, and 1 process with
   2 threads; and, as the machine's own ceiling, the same tasks (``compute_block`` on
   the same blocks) on a plain ``concurrent.futures`` pool of 1 and 2 processes, no
   Dask. All runs interleaved in every repeat; medians; ratios. The 2-core VMs this
   project runs on do not always deliver two cores' worth of work, so the Dask
   speed-up is to be read against the plain pool's.
B. the share of wall time lost to scheduling with the default batch size on the
   2-process cluster: 1 - (time workers spent computing) / (2 x wall time), from
   distributed's task stream.
C. building and submitting the graph of a 100,000-cell sweep (100 n_useful x 100 p x
   10 m_ensemble): time for the plan (all blocks), the store template, and submitting
   the first window of tasks (sweep keeps a sliding window of 4 tasks per worker thread,
   at least 16, in flight; each later task is submitted as one finishes), and the
   client's memory (tracemalloc peak of Python allocations, and growth of its RSS).
   For scale, submitting all tasks at once is also timed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import tracemalloc

import numpy as np


def _grid():
    return dict(
        n_useful=[40, 80, 160, 320],
        p=[round(0.1 * i, 1) for i in range(1, 10)],
        m_ensemble=[1, 5, 10],
        m_stability=50,
        repeats=4,
        seed=0,
    )


def _single_threaded() -> None:
    # What Dask's nanny does for its workers: one BLAS/OpenMP thread per process.
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    import psutil
    from distributed import Client, get_task_stream

    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.sweeps.storage import SweepStore
    from ensstab_dask.sweeps.sweep import SweepRequest, compute_block, make_plan, sweep

    quiet = dict(dashboard_address=":0")
    setups = {  # the library's own local default, as sweep(client=None) makes it
        "1 process": local_cluster("processes", 1, **quiet),
        "2 processes": local_cluster("processes", 2, **quiet),
        "1 process, 2 threads": local_cluster("threads", 2, **quiet),
    }
    clients = {name: Client(c) for name, c in setups.items()}
    from concurrent.futures import ProcessPoolExecutor

    pools = {
        "plain pool, 1 process": ProcessPoolExecutor(1, initializer=_single_threaded),
        "plain pool, 2 processes": ProcessPoolExecutor(2, initializer=_single_threaded),
    }
    small = make_plan(SweepRequest(2000, 20, **_grid()))
    small_args = [small.task_args(b) for b in small.blocks()]
    for pool in pools.values():
        list(pool.map(compute_block, *zip(*small_args[:2])))
    for c in clients.values():  # warm up: imports on the workers
        sweep(2000, 20, client=c, progress=False, **dict(_grid(), n_useful=[40], p=[0.5], m_ensemble=[1]))

    # A. throughput
    times: dict[str, list[float]] = {name: [] for name in list(clients) + list(pools)}
    for _ in range(args.repeats):
        for name, c in clients.items():
            t = time.perf_counter()
            sweep(2000, 20, client=c, progress=False, **_grid())
            times[name].append(time.perf_counter() - t)
        for name, pool in pools.items():
            t = time.perf_counter()
            list(pool.map(compute_block, *zip(*small_args)))
            times[name].append(time.perf_counter() - t)
    med = {name: statistics.median(v) for name, v in times.items()}
    print(f"A. sweep of 108 cells in {len(small_args)} tasks, medians over {args.repeats} repeats")
    print("| setup | seconds | speed-up over its 1-process run |")
    print("|---|---|---|")
    for name, v in med.items():
        base = med["plain pool, 1 process"] if name.startswith("plain") else med["1 process"]
        print(f"| {name} | {v:.2f} | {base / v:.2f}x |")

    # B. scheduling overhead, default batch size, 2 processes
    c = clients["2 processes"]
    shares = []
    for _ in range(args.repeats):
        with get_task_stream(c) as ts:
            t = time.perf_counter()
            sweep(2000, 20, client=c, progress=False, **_grid())
            wall = time.perf_counter() - t
        busy = sum(s["stop"] - s["start"] for task in ts.data for s in task["startstops"] if s["action"] == "compute")
        shares.append(1 - busy / (2 * wall))
    plan = make_plan(SweepRequest(2000, 20, **_grid()))
    n_tasks = len(plan.blocks())
    print(
        f"B. scheduling overhead with the default batch size ({n_tasks} tasks for 108 cells): "
        f"{100 * statistics.median(shares):.1f} % of 2 x wall time (median of {args.repeats})"
    )

    # C. graph build and submission for 100,000 cells
    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    tracemalloc.start()
    t0 = time.perf_counter()
    big = make_plan(
        SweepRequest(
            2000,
            20,
            n_useful=list(range(20, 1020, 10)),
            p=[round(0.01 * i, 2) for i in range(1, 101)],
            m_ensemble=[1, 2, 3, 5, 10, 15, 20, 30, 40, 50],
        )
    )
    blocks = big.blocks()
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        SweepStore.open_or_create(os.path.join(tmp, "big.zarr"), big.template(), big.store_settings())
        t2 = time.perf_counter()
        client = clients["2 processes"]
        window = max(16, 4 * sum(client.nthreads().values()))
        futures = client.map(compute_block, *zip(*(big.task_args(b) for b in blocks[:window])), pure=True)
        t3 = time.perf_counter()
        _, peak = tracemalloc.get_traced_memory()
        rss = proc.memory_info().rss - rss0
        client.cancel(futures)
        t4 = time.perf_counter()
        futures = client.map(compute_block, *zip(*(big.task_args(b) for b in blocks)), pure=True)
        t5 = time.perf_counter()
        client.cancel(futures)
    tracemalloc.stop()
    cells = int(np.prod(big.shape))
    print(f"C. {cells} cells in {len(blocks)} tasks:")
    print(
        f"   plan {t1 - t0:.2f} s, store template {t2 - t1:.2f} s, first window of {window} tasks "
        f"{t3 - t2:.2f} s: {t3 - t0:.2f} s in all"
    )
    print(f"   client memory: tracemalloc peak {peak / 2**20:.0f} MB, RSS growth {rss / 2**20:.0f} MB")
    print(f"   (all {len(blocks)} tasks at once would take {t5 - t4:.1f} s to submit)")

    for pool in pools.values():
        pool.shutdown()
    for c in clients.values():
        c.close()
    for cl in setups.values():
        cl.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
