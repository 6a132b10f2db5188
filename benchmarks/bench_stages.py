"""The estimate's stages, fresh and from the cache, at 2,000, 7,129 and 20,000 features.

    python benchmarks/bench_stages.py [--features 2000,7129,20000] [--repeats 3] \
        [--n-estimators 300] [--json benchmarks/results/stages-2-cores.json]

For each size, the generator's data (``make_microarray(n_feature=N, n_samples=S, seed=0)``,
S = 62 at 2,000 features and 72 above, as the microarrays the project meets) is written
to a ``.npz`` file, then, ``--repeats`` times and interleaved:

* **fresh**: ``ensstab estimate --data FILE --cache-dir EMPTY --json OUT --quiet`` in a
  fresh process (a local cluster of one worker per core, every default but the forest's
  ``--n-estimators`` when given: the test suite's smoke run uses few trees), its wall time
  from process start to exit, and each stage's seconds from the JSON;
* **cached**: the same command again on the same cache folder: every real run is read
  back, no cluster is started, and only the statistics run.

The statistics' share is the stages after the real runs (the measured curve, the
self-check, the features and the rest) over the real runs' seconds, in the fresh run.
Then, once per size, the estimate in this process on a local cluster of 2 worker
processes (started and warmed up first), under distributed's task stream: the busy share
is the tasks' compute seconds over (2 x the estimate's wall time), the client seconds those
in which no task ran anywhere (benchmarks/bench_scaling.py's measure). Medians of the
repeats; every row in ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ensstab_dask.real.datasets import make_microarray

AFTER_RUNS = ("n_useful_and_stability", "measured", "self_check", "features")


def _data(n_feature: int, folder: Path) -> Path:
    data = make_microarray(n_feature=n_feature, n_samples=62 if n_feature <= 2000 else 72, seed=0)
    path = folder / f"microarray-{n_feature}.npz"
    np.savez(path, X=data.X, y=data.y)
    return path


def _estimate(data: Path, cache: Path, out: Path, trees: int) -> tuple[float, dict]:
    """One ``ensstab estimate`` in a fresh process: its wall seconds and its JSON."""
    command = [sys.executable, "-m", "ensstab_dask.cli", "estimate", "--data", str(data)]
    command += ["--cache-dir", str(cache), "--json", str(out), "--quiet", "--n-estimators", str(trees)]
    out.unlink(missing_ok=True)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, json.loads(out.read_text())


def _row(wall: float, result: dict) -> dict:
    stages = result["seconds"]
    after = sum(v for k, v in stages.items() if k != "real_runs")
    return {
        "wall": wall,
        "stages": stages,
        "after_runs": after,
        "runs_made": result["runs_made"],
        "runs_reused": result["runs_reused"],
    }


def _median(rows: list[dict]) -> dict:
    out = {k: statistics.median(r[k] for r in rows) for k in ("wall", "after_runs")}
    out["stages"] = {k: statistics.median(r["stages"][k] for r in rows) for k in rows[0]["stages"]}
    out["walls"] = [round(r["wall"], 2) for r in rows]
    out["runs_made"], out["runs_reused"] = rows[0]["runs_made"], rows[0]["runs_reused"]
    return out


def busy_share(data: Path, cache: Path, trees: int) -> dict:
    """The estimate in this process on 2 warmed-up worker processes, under the task stream."""
    import warnings

    sys.path.insert(0, str(Path(__file__).parent))
    from bench_scaling import measure, warm_up

    import ensstab_dask as es
    from ensstab_dask.cluster import connect

    loaded = np.load(data)
    with connect("processes", n_workers=2) as client, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm_up(client)
        row = measure(
            client,
            2,
            lambda: es.estimate(
                loaded["X"],
                loaded["y"],
                20,
                selector=es.default_selector(trees),
                client=client,
                progress=False,
                cache_dir=cache,
            ),
            stages=True,
        )
    return {k: row[k] for k in ("wall", "busy", "client_s", "stage_client_s", "stage_s")}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--features", default="2000,7129,20000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-estimators", type=int, default=300, help="the forest's trees (default: the CLI's)")
    ap.add_argument("--no-busy", action="store_true", help="skip the task stream's busy share")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    sizes = [int(n) for n in args.features.split(",")]
    out = {"cores": os.cpu_count(), "python": platform.python_version(), "machine": platform.platform(), "sizes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {n: _data(n, root) for n in sizes}
        rows: dict[int, dict[str, list]] = {n: {"fresh": [], "cached": []} for n in sizes}
        for rep in range(args.repeats):
            for n in sizes:  # interleaved: a slow spell of the machine falls on every size
                cache = root / f"cache-{n}-{rep}"
                cache.mkdir()
                for kind in ("fresh", "cached"):
                    wall, result = _estimate(files[n], cache, root / "out.json", args.n_estimators)
                    rows[n][kind].append(_row(wall, result))
                    print(f"{n} features, {kind}, repeat {rep + 1}: {wall:.1f} s", flush=True)
        for n in sizes:
            fresh, cached = _median(rows[n]["fresh"]), _median(rows[n]["cached"])
            share = fresh["after_runs"] / fresh["stages"]["real_runs"]
            entry = {"fresh": fresh, "cached": cached, "statistics_over_runs": share}
            if not args.no_busy:
                cache = root / f"cache-{n}-busy"
                cache.mkdir()
                entry["busy_2_workers"] = busy_share(files[n], cache, args.n_estimators)
            out["sizes"][str(n)] = entry
            print(
                f"{n} features: fresh {fresh['wall']:.1f} s (runs {fresh['stages']['real_runs']:.1f} s, after them "
                f"{fresh['after_runs']:.2f} s: {100 * share:.1f} %); cached {cached['wall']:.1f} s"
                + (f"; busy {100 * entry['busy_2_workers']['busy']:.0f} % at 2 workers" if not args.no_busy else ""),
                flush=True,
            )
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
