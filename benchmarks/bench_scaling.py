"""Scaling on a real cluster: the sweep, the estimate (every model) and the naive check.

    ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_scaling.py [--workers 1,2] [--repeats 1]
        [--markdown benchmarks/results/scaling.md] [--json benchmarks/results/scaling.json]

On LocalClusters of 1, 2, 4, ... worker processes (one thread each) up to the
machine's cores, started and warmed up (every worker has imported scikit-learn and
fitted a forest) before any timer, one after the other:

* the sweep, a 320-cell and a 1,280-cell grid (n_feature 2000, n_target 20);
* the estimate with each model, on Colon (when ``ENSSTAB_DATA_DIR`` holds it) and on
  the embedded default: RF-300, n_target 20, m_ensemble 1, 5, 10, 20, 30, 50,
  m_stability 20, seed 0;
* at the largest cluster only, the naive check on the same data (m_stability 20 x 50
  weak selectors: 1,000 real runs).

Per run, from distributed's task stream: the wall time; the speed-up over 1 worker;
the busy fraction, compute seconds / (workers x wall); the client seconds, in which no
task ran anywhere (work on the client, or waiting on it); and for the estimate, the
client seconds within each stage (``Estimate.cost.seconds.spans``; ``other`` is what lies
between the stages: checks, the cluster's connection, assembling the result). The real
runs' rate is runs / seconds of the real-run stage; the naive check's is runs / seconds
until its last task ended (its aggregation runs after, on the client). Repeats are
interleaved and the median reported. Markdown tables on stdout (and in ``--markdown``),
every row in ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

MODELS = ("anchored", "onda", "two-level", "random-effects")
M_LIST = (1, 5, 10, 20, 30, 50)
N_TARGET, M_STABILITY, N_TREES = 20, 20, 300
SWEEPS = {
    # cells = n_useful x p x m_ensemble
    320: dict(
        n_useful=[40, 60, 80, 120, 160, 240, 320, 480],
        p=[round(0.1 * i, 1) for i in range(1, 11)],
        m_ensemble=[1, 5, 10, 20],
    ),
    1280: dict(
        n_useful=[40, 50, 60, 80, 100, 120, 160, 200, 240, 280, 320, 360, 400, 440, 480, 520],
        p=[round(0.05 * i, 2) for i in range(1, 21)],
        m_ensemble=[1, 5, 10, 20],
    ),
}


def worker_counts(cores: int) -> list[int]:
    """1, 2, 4, ... up to ``cores`` (and ``cores`` itself)."""
    counts, n = [], 1
    while n < cores:
        counts.append(n)
        n *= 2
    return counts + [cores]


def _compute_spans(stream) -> list[tuple[float, float]]:
    return [(s["start"], s["stop"]) for t in stream for s in t.get("startstops", ()) if s["action"] == "compute"]


def _union(spans, t0: float, t1: float) -> float:
    """Seconds of [t0, t1] covered by at least one span."""
    covered, end = 0.0, t0
    for a, b in sorted((max(a, t0), min(b, t1)) for a, b in spans if b > t0 and a < t1):
        if b > end:
            covered += b - max(a, end)
            end = b
    return covered


def measure(client, workers: int, job, *, stages=False) -> dict:
    """Run ``job()`` under the task stream; wall, busy fraction, client seconds (and per stage)."""
    from distributed import get_task_stream

    with get_task_stream(client) as ts:
        t0 = time.time()
        result = job()
        t1 = time.time()
    spans = _compute_spans(ts.data)
    wall = t1 - t0
    row = {
        "wall": wall,
        "busy": sum(b - a for a, b in spans) / (workers * wall),
        "client_s": wall - _union(spans, t0, t1),
        "last_task_end": max((b for _, b in spans), default=t1) - t0,
    }
    if stages:
        clock = result.cost.seconds
        per = {name: (b - a) - _union(spans, a, b) for name, (a, b) in clock.spans.items()}
        per["other"] = row["client_s"] - sum(per.values())
        row.update(stage_client_s=per, stage_s=dict(clock), real_runs=result.real_runs)
    elif hasattr(result, "attrs") and "real_runs" in result.attrs:
        row["real_runs"] = int(result.attrs["real_runs"])
    return row


def warm_up(client) -> None:
    """Every worker imports what a task needs and fits a forest once, before any timer."""

    def fit():
        import numpy as np

        import ensstab_dask  # noqa: F401
        from ensstab_dask.real.selectors import default_selector

        rng = np.random.default_rng(0)
        default_selector(20).fit(rng.standard_normal((40, 200)), np.repeat([0, 1], 20))

    client.run(fit)


def _median(rows: list[dict]) -> dict:
    out = dict(rows[0])
    for key in ("wall", "busy", "client_s", "last_task_end"):
        out[key] = statistics.median(r[key] for r in rows)
    if "stage_client_s" in rows[0]:
        out["stage_client_s"] = {
            k: statistics.median(r["stage_client_s"][k] for r in rows) for k in rows[0]["stage_client_s"]
        }
        out["stage_s"] = {k: statistics.median(r["stage_s"][k] for r in rows) for k in rows[0]["stage_s"]}
    out["repeats"] = len(rows)
    return out


def run(args) -> list[dict]:
    import warnings

    from distributed import Client

    from ensstab_dask import estimate, real_ensemble_stability, sweep
    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.real.datasets import make_microarray, reference_dataset
    from ensstab_dask.real.selectors import default_selector

    warnings.simplefilter("ignore")  # an unreliable estimate warns; its timing is what is measured here
    datasets = {"default": make_microarray(seed=0)}
    if os.environ.get("ENSSTAB_DATA_DIR") and "colon" in args.datasets:
        datasets = {"colon": reference_dataset("colon"), **datasets}
    datasets = {k: v for k, v in datasets.items() if k in args.datasets}
    selector = default_selector(N_TREES)
    rows = []
    for workers in args.workers:
        with local_cluster(n_workers=workers, host="127.0.0.1") as cluster, Client(cluster) as client:
            warm_up(client)
            # The estimate and the naive check on the same selector, sizes, seed and cluster.
            common = dict(
                selector=selector, m_ensemble=M_LIST, m_stability=M_STABILITY, seed=0, client=client, progress=False
            )
            jobs = {}
            for cells in args.sweeps:
                jobs[("sweep", f"{cells} cells", "")] = (
                    lambda g=SWEEPS[cells]: sweep(
                        2000, N_TARGET, m_stability=M_STABILITY, repeats=4, seed=0, client=client, progress=False, **g
                    ),
                    False,
                )
            for name, data in datasets.items():
                for model in args.models:
                    jobs[("estimate", name, model)] = (
                        lambda d=data, m=model, kw=common: estimate(d.X, d.y, N_TARGET, model=m, **kw),
                        True,
                    )
            if workers == max(args.workers) and args.naive:
                for name, data in datasets.items():
                    jobs[("naive", name, "")] = (
                        lambda d=data, kw=common: real_ensemble_stability(d.X, d.y, N_TARGET, **kw),
                        False,
                    )
            measured: dict = {key: [] for key in jobs}
            for _ in range(args.repeats):  # interleaved: the machine's speed drifts
                for key, (job, stages) in jobs.items():
                    measured[key].append(measure(client, workers, job, stages=stages))
                    print(f"{workers} workers {key}: {measured[key][-1]['wall']:.1f} s", file=sys.stderr, flush=True)
            for (kind, data_name, model), reps in measured.items():
                rows.append(dict(_median(reps), kind=kind, data=data_name, model=model, workers=workers))
    return rows


def _f(v, fmt=".1f") -> str:
    return "" if v is None else format(v, fmt)


def tables(rows: list[dict], *, cores: int) -> str:
    """The markdown docs/performance.md shows."""
    one = {(r["kind"], r["data"], r["model"]): r["wall"] for r in rows if r["workers"] == 1}
    lines = [
        f"Machine: {cores} cores ({platform.machine()}, {platform.system()}); LocalCluster of 1 process per worker.",
        "",
        "| job | data | model | workers | wall s | speed-up | busy | client s | real runs | runs/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        key = (r["kind"], r["data"], r["model"])
        speed = one[key] / r["wall"] if key in one else None
        runs = r.get("real_runs")
        seconds = r.get("stage_s", {}).get("real_runs") or (r["last_task_end"] if r["kind"] == "naive" else None)
        rate = runs / seconds if runs and seconds else None
        lines.append(
            f"| {r['kind']} | {r['data']} | {r['model']} | {r['workers']} | {r['wall']:.1f} | {_f(speed, '.2f')} | "
            f"{r['busy']:.0%} | {r['client_s']:.2f} | {runs or ''} | {_f(rate, '.2f')} |"
        )
    est = [r for r in rows if r["kind"] == "estimate"]
    if est:
        # In the order the stages ran, ``other`` last.
        stages = [k for k in dict.fromkeys(k for r in est for k in r["stage_client_s"]) if k != "other"] + ["other"]
        head = "| data | model | workers | " + " | ".join(stages) + " |"
        lines += [
            "",
            "Client seconds (no task running) within each stage of the estimate:",
            "",
            head,
            "|---|---|---|" + "---|" * len(stages),
        ]
        for r in est:
            cells = [_f(r["stage_client_s"].get(k), ".2f") for k in stages]
            lines.append(f"| {r['data']} | {r['model']} | {r['workers']} | " + " | ".join(cells) + " |")
    top = max(r["workers"] for r in rows)
    naive = {r["data"]: r for r in rows if r["kind"] == "naive" and r["workers"] == top}
    if naive:
        lines += [
            "",
            f"Against the naive check, {top} workers:",
            "",
            "| data | model | wall ratio | real-run ratio | wall / real-run ratio | runs/s vs naive |",
            "|---|---|---|---|---|---|",
        ]
        for r in est:
            n = naive.get(r["data"])
            if r["workers"] != top or n is None:
                continue
            wall_ratio, run_ratio = n["wall"] / r["wall"], n["real_runs"] / r["real_runs"]
            rate = (r["real_runs"] / r["stage_s"]["real_runs"]) / (n["real_runs"] / n["last_task_end"])
            lines.append(
                f"| {r['data']} | {r['model']} | {wall_ratio:.1f}x | {run_ratio:.1f}x | "
                f"{wall_ratio / run_ratio:.0%} | {rate:.0%} |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    cores = os.cpu_count() or 1
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default=",".join(map(str, worker_counts(cores))), help="comma-separated")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--datasets", default="colon,default")
    ap.add_argument("--sweeps", default="320,1280", help="comma-separated cell counts, or 'none'")
    ap.add_argument("--no-naive", dest="naive", action="store_false", help="skip the naive check")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--markdown", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    args.workers = sorted(int(w) for w in args.workers.split(","))
    args.models = args.models.split(",")
    args.datasets = args.datasets.split(",")
    args.sweeps = [] if args.sweeps == "none" else [int(c) for c in args.sweeps.split(",")]
    rows = run(args)
    text = tables(rows, cores=cores)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({"cores": cores, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
