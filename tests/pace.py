"""Wall-time bounds that hold on a busy machine: each scales with a reference run timed here.

A bound in fixed seconds holds on an idle machine only. On 2 cores running other work
(load 6 to 14), a CLI run that refuses a malformed address at once took 26.9 s against a
20 s bound: starting Python and importing the libraries is most of any CLI
run, and it slows with the load. So a bound here is what the behaviour itself waits (a
timeout it was given, a silence it must notice) plus a few *reference runs*: the wall
time, now, of a fresh Python importing what every ``--scheduler`` run of the CLI imports
(about 2 s on 2 idle cores). A test that takes far longer than the machine's pace still
fails; one slowed as everything else is slowed does not.

A test times the reference before its work starts (one timed in this process less than
:data:`FRESH_FOR` seconds ago serves), and again whenever a bound would fail with it: the
load may have risen since, and the bound then uses the slower of the two. Beside CPU hogs
(``ENSSTAB_TEST_HOGS=1``, tests/busy.py), the tests that take ``busy_machine`` time it
beside them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What a CLI run with ``--scheduler`` imports before it does anything (``python -X importtime``).
REFERENCE = "import ensstab_dask.cli._commands, distributed"
#: Reference runs allowed beside the waits: a CLI run's own work is about one, and the load
#: can rise between the reference and the run it bounds (beside CPU hogs and a full test
#: suite, at load 12 to 15, a CLI run took 2.2 reference runs timed for the case before it).
RUNS = 4.0
#: Seconds a reference time serves the tests that follow in this process (the cases of one
#: parametrised test, say), so that each does not pay a run of its own.
FRESH_FOR = 30.0

#: This process's latest reference: when it ended (time.monotonic()) and its seconds.
_latest: list[tuple[float, float]] = []


def reference_seconds() -> float:
    """Time one reference run now (and remember it for the tests that follow)."""
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", REFERENCE],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        check=True,
        capture_output=True,
        timeout=900,
    )
    end = time.monotonic()
    _latest[:] = [(end, end - start)]
    return end - start


class Pace:
    """This machine's pace for one test: the reference seconds its bounds are made of,
    timed now unless this process timed it less than :data:`FRESH_FOR` seconds ago.
    Make it before the work it bounds starts: the reference run takes seconds."""

    def __init__(self) -> None:
        recent = bool(_latest) and time.monotonic() - _latest[0][0] < FRESH_FOR
        self.seconds = _latest[0][1] if recent else reference_seconds()

    def bound(self, waits: float, runs: float = RUNS) -> float:
        """``waits`` seconds that the behaviour waits by design (for a limit against a hang,
        what it allowed on an idle machine), and ``runs`` reference runs."""
        return waits + runs * self.seconds

    def _again(self) -> None:
        # Slower of the two: the run being bounded may have met the heavier load.
        self.seconds = max(self.seconds, reference_seconds())

    def _said(self, waits: float, runs: float) -> str:
        return f"{waits:g} s of waits and {runs:g} reference runs of {self.seconds:.1f} s"

    def assert_within(self, took: float, waits: float, runs: float = RUNS, what: str = "it") -> None:
        """Fail unless ``took`` is under the bound, the reference timed again before failing."""
        if took >= self.bound(waits, runs):
            self._again()
        print(f"pace: {what} took {took:.1f} s; bound {self.bound(waits, runs):.1f} s ({self._said(waits, runs)})")
        assert took < self.bound(waits, runs), f"{what} took {took:.1f} s: more than {self._said(waits, runs)}"

    def wait_until(
        self, condition: Callable[[], bool], waits: float, runs: float = RUNS, what: str = "it", every: float = 0.05
    ) -> float:
        """Seconds until ``condition()`` held, polled every ``every`` s; fail once the bound
        has passed without it (the reference timed again first, the wait going on if that
        widens the bound)."""
        start = time.monotonic()
        timed_again = False
        while not condition():
            took = time.monotonic() - start
            if took >= self.bound(waits, runs):
                assert not timed_again, f"no {what} after {took:.1f} s: more than {self._said(waits, runs)}"
                self._again()
                timed_again = True
            time.sleep(every)
        took = time.monotonic() - start
        print(f"pace: {what} after {took:.1f} s; bound {self.bound(waits, runs):.1f} s ({self._said(waits, runs)})")
        return took
