"""A stop signal while the ``ensstab`` command imports its libraries ends it in one line.

The command's own handling of Ctrl-C, SIGTERM and SIGHUP (:mod:`ensstab_dask.cli._stop`)
starts once its modules are imported, which takes seconds on a busy machine; a signal
before that would print Python's traceback of the import. Imported first by
:mod:`ensstab_dask.cli` (the package itself imports almost nothing before it: its names
are lazy), this installs a handler that ends the process at once with the command's line
and exit status, and only in the ``ensstab`` process itself (the console script, or
``python -m ensstab_dask.cli``): a program that imports the library or the command's
module keeps its own, and importing the library never reads ``sys.argv``.
"""

from __future__ import annotations

import os
import signal
import sys

#: The line and exit status of each stop signal, as the command says them.
_ENDINGS: dict[int, tuple[str, int]] = {signal.SIGINT: ("interrupted", 130), signal.SIGTERM: ("terminated", 143)}
if hasattr(signal, "SIGHUP"):
    _ENDINGS[signal.SIGHUP] = ("terminated", 129)


def _is_the_command() -> bool:
    """Whether this process is the ``ensstab`` command, not a program that imports us."""
    if os.path.basename(sys.argv[0] if sys.argv else "") == "ensstab":  # the console script
        return True
    argv = list(getattr(sys, "orig_argv", []))  # python [options] -m ensstab_dask.cli ...
    return "-m" in argv and argv[argv.index("-m") + 1 :][:1] == ["ensstab_dask.cli"]


def end(signum: int, frame) -> None:
    """The handler: the command's line for ``signum`` on stderr, and its exit status at once."""
    word, status = _ENDINGS[signum]
    os.write(2, f"ensstab: {word}\n".encode())
    os._exit(status)  # nothing is computed yet: no output to finish, no cluster to close


def install() -> None:
    """Install the handlers when this process is the command and its main thread imports us."""
    if not _is_the_command():
        return
    try:
        for signum in _ENDINGS:
            if signal.getsignal(signum) in (signal.default_int_handler, signal.SIG_DFL):
                signal.signal(signum, end)
    except ValueError:  # not the main thread: the command's own handling will do
        pass


install()
