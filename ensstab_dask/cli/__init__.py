"""The ``ensstab`` command line.

Bad input is reported as one line on stderr, ``ensstab: error: ...``, in the command
line's words (``--n-target``, not the library's ``n_target``), with exit status 2, never
a traceback. Ctrl-C (to this process alone, or to its whole process group, as a
terminal sends it) ends any command with one line, ``ensstab: interrupted``, and exit
status 130. The library's log messages of level INFO and above (logger
``ensstab_dask``: a sweep's resume note and its task count, the dashboard link) go to
stderr, one line each, as plain lines; ``--quiet`` keeps only warnings.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence

import dask

from ensstab_dask.cli._common import UsageError, _dask_config, cli_words, parse_values
from ensstab_dask.cli._parser import _attach_negative_values, build_parser
from ensstab_dask.exceptions import EnsstabError, SchedulerLost

__all__ = ["main", "parse_values", "build_parser", "UsageError"]


def _close_interrupted_clusters() -> None:
    """Close what a Ctrl-C left half-started, quietly.

    Interrupted while its workers start, a LocalCluster stays registered with
    distributed's exit hook, which then fails to close it (``AssertionError:
    Status.init``) and prints a traceback after our one line. The package's local
    clusters hold a Ctrl-C back until they are up (:func:`ensstab_dask.cluster.local_cluster`),
    so this is the fallback for one started otherwise. Close such clusters here,
    swallowing that failure, and drop the hook: nothing is left for it to do.
    """
    spec = sys.modules.get("distributed.deploy.spec")
    if spec is None:
        return
    for cluster in list(spec.SpecCluster._instances):
        try:
            cluster.close(timeout=10)
        except (Exception, KeyboardInterrupt):  # noqa: BLE001 - best effort on the way out
            pass
    atexit.unregister(spec.close_clusters)


@contextlib.contextmanager
def _log_to_stderr(level: int) -> Iterator[None]:
    """Show the ``ensstab_dask`` logger's messages of ``level`` and above on stderr while
    a command runs: the message alone, one line each, like the CLI's own lines.

    The handler is removed afterwards, so that ``main`` called again in one process
    (the tests, a notebook) does not print each message twice.
    """
    log = logging.getLogger("ensstab_dask")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.setLevel(level)
    previous = log.level
    if log.getEffectiveLevel() > level:
        log.setLevel(level)
    log.addHandler(handler)
    try:
        from tqdm.contrib.logging import logging_redirect_tqdm

        # A note logged while a bar is live goes above the bar, not onto its line.
        with logging_redirect_tqdm(loggers=[log]):
            yield
    finally:
        log.removeHandler(handler)
        log.setLevel(previous)


def _resumable(args) -> bool:
    """Whether a rerun of this command resumes: a sweep whose store has been made."""
    return getattr(args, "command", None) == "sweep" and bool(args.store) and os.path.exists(args.store)


class _Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a job scheduler's stop): handled as Ctrl-C is, exit status 143."""


def _on_ctrl_c(signum, frame):
    """Python's KeyboardInterrupt, with the reports of the shutdown that follows silenced.

    From here on the process only stops: closing the cluster with tasks still running
    makes distributed log errors, and asyncio reports each future left pending ("Task
    exception was never retrieved") when it is collected, as late as the interpreter's
    exit. None of it is news after a Ctrl-C, and it would bury the one line that is.
    """
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    raise _Terminated if signum == signal.SIGTERM else KeyboardInterrupt


@contextlib.contextmanager
def _ctrl_c_handled() -> Iterator[None]:
    """Ctrl-C raises through :func:`_on_ctrl_c` while a command runs; where SIGINT has
    another handler (ignored, as for a background job), or off the main thread (where
    handlers cannot be set), it is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, _on_ctrl_c)
    # SIGTERM too, where nothing else handles it: without this the process dies at once,
    # mid-write, and the semaphores of its worker processes are reported leaked.
    term = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if term:
        signal.signal(signal.SIGTERM, _on_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if term:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = None
    options: dict[str, str] = {}

    def error(message: str) -> None:
        print(f"ensstab: error: {cli_words(message, options)}", file=sys.stderr)

    try:
        with _ctrl_c_handled():
            args = parser.parse_args(_attach_negative_values(sys.argv[1:] if argv is None else argv))
            if args.command is None:
                parser.print_help()
                return 2
            options = args.cli_options
            with (
                _log_to_stderr(logging.WARNING if getattr(args, "quiet", False) else logging.INFO),
                dask.config.set(_dask_config(args)),
            ):
                return args.func(args)
    except SchedulerLost as exc:  # before OSError: it is a ConnectionError
        error(f"{exc}; rerun the same command to resume from the store" if _resumable(args) else str(exc))
        return 1
    except UsageError as exc:  # in the command line's words already
        print(f"ensstab: error: {exc}", file=sys.stderr)
        return 2
    except EnsstabError as exc:  # the user's to fix: bad input, unreachable scheduler, damaged store
        error(str(exc))
        return 2
    except MemoryError:
        error("out of memory; lower --m-ensemble, --m-stability, --n-runs or the grid")
        return 2
    # Anything else is a bug: it keeps its traceback, and the exit status is 1.
    except KeyboardInterrupt as exc:
        _close_interrupted_clusters()
        hint = "; finished blocks are in the store, rerun the same command to resume" if _resumable(args) else ""
        terminated = isinstance(exc, _Terminated)
        print(f"ensstab: {'terminated' if terminated else 'interrupted'}{hint}", file=sys.stderr)
        return 143 if terminated else 130


if __name__ == "__main__":
    raise SystemExit(main())
