"""The README's main command, timed as users run it: ``ensstab estimate`` with every default.

    python benchmarks/bench_main_command.py [--repeats 3] [--json benchmarks/results/main-command.json]

Runs ``ensstab estimate --json OUT`` (the embedded default, the default model, a local
cluster of one worker process per core) ``--repeats`` times, one after the other, each
in a fresh process with an empty cache of real runs (``XDG_CACHE_HOME`` a new folder), as
a user's first run would be, and reports the wall time of each run (process
start to exit: imports, the cluster's start and shutdown included), their median, the
machine's cores, and the real runs the estimate made. The README's claim "on N cores,
about T s" is this median, rounded, and tests/test_readme.py checks the claim against
the file this writes.
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


def run_once() -> tuple[float, dict]:
    """One ``ensstab estimate`` as a user runs it: its wall seconds and its JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "estimate.json"
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "ensstab_dask.cli", "estimate", "--quiet", "--json", str(out)],
            check=True,
            stdout=subprocess.DEVNULL,
            env=dict(os.environ, XDG_CACHE_HOME=tmp),  # a first run: its real runs are made, not read back
        )
        seconds = time.perf_counter() - start
        return seconds, json.loads(out.read_text())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs to take the median of")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    seconds, real_runs = [], set()
    for i in range(args.repeats):
        s, d = run_once()
        seconds.append(s)
        real_runs.add(d["real_runs"])
        print(f"run {i + 1}: {s:.1f} s, {d['real_runs']} real runs, model {d['model']}", flush=True)
    (runs,) = real_runs  # the same command makes the same real runs every time
    result = {
        "command": "ensstab estimate",
        "cores": os.cpu_count(),
        "seconds": [round(s, 1) for s in seconds],
        "median_seconds": round(statistics.median(seconds), 1),
        "real_runs": runs,
        "python": platform.python_version(),
        "machine": platform.platform(),
    }
    print(f"on {result['cores']} cores, median {result['median_seconds']} s of {args.repeats} runs, {runs} real runs")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
