"""A busy machine on demand: CPU hogs beside whatever runs, as on a shared laptop or CI runner.

:func:`cpu_hogs` starts busy processes (two per core by default) for the length of a
``with`` block. ``tests/under_load.py`` runs the signal tests, the tests that bound a wall
time, a sweep and a notebook beside them and counts how often each holds; in a pytest run,
``ENSSTAB_TEST_HOGS=1`` starts them around each test that asks for the ``busy_machine``
fixture (tests/conftest.py).

:func:`as_a_foreground_job` gives a command the signal dispositions a terminal's
foreground job has, whatever this process inherited.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

#: The busy loop each hog runs, at normal priority: work of the same standing as the tests'.
_SPIN = "while True:\n    pass\n"


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@contextlib.contextmanager
def cpu_hogs(n: int | None = None) -> Iterator[list[subprocess.Popen]]:
    """``n`` processes (default: two per core) each spinning one core at 100 % until the block ends."""
    count = 2 * cores() if n is None else n
    hogs = [subprocess.Popen([sys.executable, "-c", _SPIN], stdin=subprocess.DEVNULL) for _ in range(count)]
    try:
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


def wanted() -> bool:
    """Whether this test run asked for hogs beside the tests that take them (``ENSSTAB_TEST_HOGS=1``)."""
    return os.environ.get("ENSSTAB_TEST_HOGS", "") not in ("", "0")


def as_a_foreground_job() -> None:
    """``preexec_fn`` of a command that must take the stop signals as a terminal's foreground job does.

    A shell starts a background job (``pytest ... &``) with SIGINT ignored, ``nohup`` one
    with SIGHUP ignored, and their children inherit that; the CLI then rightly leaves the
    ignored signal alone, and a test that sent it saw the command run to its end (exit 0,
    nothing on stderr).
    """
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
