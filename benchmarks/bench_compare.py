"""Wall time of the comparison command users run, on the default local cluster.

    python benchmarks/bench_compare.py [--repeats 3] [--json benchmarks/results/compare-2-cores.json]

Times exactly ``python -m ensstab_dask.cli compare --selectors rf,extra-trees,l1-logistic,f-test
--quiet --no-cache`` (the embedded default data; the default local cluster, as a user gets it,
not ``--scheduler synchronous``), each repeat in a fresh process, and records the load
average (``os.getloadavg``) before and after each repeat, so that a reader knows how busy
the machine was. The first repeat's printed sentences (the choice) are kept verbatim.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMAND = [
    sys.executable,
    "-m",
    "ensstab_dask.cli",
    "compare",
    "--selectors",
    "rf,extra-trees,l1-logistic,f-test",
    "--quiet",
    "--no-cache",
]


def one_run() -> dict:
    """One fresh process of :data:`COMMAND`: its wall time, output and the load around it."""
    before = os.getloadavg()
    t0 = time.perf_counter()
    done = subprocess.run(COMMAND, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    after = os.getloadavg()
    return {
        "seconds": seconds,
        "returncode": done.returncode,
        "load_before": list(before),
        "load_after": list(after),
        "stdout": done.stdout,
        "stderr_tail": done.stderr[-2000:],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=str(Path(__file__).parent / "results" / "compare-2-cores.json"))
    args = ap.parse_args(argv)

    runs = []
    for i in range(args.repeats):
        r = one_run()
        runs.append(r)
        print(f"repeat {i + 1}: {r['seconds']:.1f} s (rc {r['returncode']})", file=sys.stderr, flush=True)
    times = [r["seconds"] for r in runs]
    out = {
        "command": " ".join(["python", *COMMAND[1:]]),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "seconds": times,
        "median_seconds": statistics.median(times),
        "runs": runs,
    }
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)

    print(f"`{out['command']}`, {os.cpu_count()} cores\n")
    print("| repeat | wall time | exit | load average before (1 / 5 / 15 min) | after (1 / 5 / 15 min) |")
    print("|---|---|---|---|---|")
    for i, r in enumerate(runs, 1):
        lb, la = (" / ".join(f"{v:.2f}" for v in r[k]) for k in ("load_before", "load_after"))
        print(f"| {i} | {r['seconds']:.1f} s | {r['returncode']} | {lb} | {la} |")
    print(f"\nmedian: {out['median_seconds']:.1f} s\n\nprinted by repeat 1:\n")
    print("\n".join("    " + line for line in runs[0]["stdout"].splitlines()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
