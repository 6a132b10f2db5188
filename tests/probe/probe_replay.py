"""Replay the probe's cases and count their classes.

    python tests/probe/probe_replay.py [--only 2,5] [--list]

The cases come from ``probe_cases_silent`` (silently wrong answers, lost files), where
they are present ``probe_cases_loud`` (hangs, tracebacks, noisy output), and the fourth
round's ``probe_cases_outputs``, ``probe_cases_stores``, ``probe_cases_data`` and
``probe_cases_schedulers`` (numbered 100 + the item), and the fifth round's
``probe_cases_trust`` and ``probe_cases_inputs`` (numbered 200 + the item), and the sixth
round's ``probe_cases_round6`` (numbered 300 + the item); each defines
``CASES``, a list of :class:`probe_cases_common.Case`. Every case runs in its own empty
temporary folder and returns its class (:data:`probe_cases_common.CLASSES`): ``error``,
a clear one-line error; ``right``, the right answer; or ``silent``, ``hang``,
``traceback``, ``signal`` (killed by a signal), ``noisy``. A probe that itself raises is counted as ``traceback``, with
its last line printed. One line per case, ``number class name``, then a count per class.
Exit status 1 when any case is silent, hung, a traceback or killed by a signal, else 0.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import pathlib
import sys
import tempfile
import time
import traceback

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]  # the repository: tests/probe/..
sys.path[:0] = [str(HERE), str(ROOT)]

from probe_cases_common import CLASSES, FAILING  # noqa: E402

MODULES = (
    "probe_cases_silent",
    "probe_cases_loud",
    # round 4: numbered 100 + the item
    "probe_cases_outputs",
    "probe_cases_stores",
    "probe_cases_data",
    "probe_cases_schedulers",
    # round 5: numbered 200 + the item
    "probe_cases_trust",
    "probe_cases_inputs",
    # round 6: numbered 300 + the item
    "probe_cases_round6",
)


def load_cases() -> list:
    cases = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # the module is there but something it imports is not
                raise
            print(f"({name}.py not present: its cases are not replayed)")
            continue
        cases += module.CASES
    return sorted(cases, key=lambda c: c.number)  # stable: each module's order within a number


def run_case(case) -> tuple[str, float, str]:
    """The case's class, its seconds, and a note when the probe itself failed."""
    start = time.perf_counter()
    note = ""
    with tempfile.TemporaryDirectory(prefix=f"probe-{case.number}-") as tmp:
        try:
            cls = case.run(pathlib.Path(tmp))
        except Exception as exc:  # noqa: BLE001 - a probe that fails is reported, the rest still run
            cls = "traceback"
            note = "".join(traceback.format_exception_only(exc)).strip().splitlines()[-1]
    if cls not in CLASSES:
        note, cls = f"the probe returned {cls!r}", "traceback"
    return cls, time.perf_counter() - start, note


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="replay only these case numbers, like 2,5")
    parser.add_argument("--list", action="store_true", help="list the cases without running them")
    args = parser.parse_args(argv)
    cases = load_cases()
    if args.only:
        wanted = {int(n) for n in args.only.split(",")}
        cases = [c for c in cases if c.number in wanted]
    if args.list:
        for c in cases:
            print(f"{c.number:>2} {c.name}")
        return 0
    counts: collections.Counter[str] = collections.Counter()
    for case in cases:
        cls, seconds, note = run_case(case)
        counts[cls] += 1
        print(f"{case.number:>2} {cls:<9} {case.name}  ({seconds:.0f} s){'  ' + note if note else ''}", flush=True)
    print("; ".join(f"{cls}: {counts[cls]}" for cls in CLASSES), f"({len(cases)} cases)")
    return 1 if any(counts[c] for c in FAILING) else 0


if __name__ == "__main__":
    raise SystemExit(main())
