"""The ``ensstab`` command line.

Bad input is reported as one line on stderr, ``ensstab: error: ...``, in the command
line's words (``--n-target``, not the library's ``n_target``), with exit status 2, never
a traceback. Ctrl-C (to this process alone, or to its whole process group, as a
terminal sends it) ends any command with one line, ``ensstab: interrupted``, and exit
status 130; SIGTERM and SIGHUP with ``ensstab: terminated`` and 143 or 129, each within
a couple of seconds (:mod:`ensstab_dask.cli._stop`). Everything printed has its control
characters made visible (a name from the data never reaches the terminal raw). The
library's log messages of level INFO and above (logger
``ensstab_dask``: a sweep's resume note and its task count, the dashboard link) go to
stderr, one line each, as plain lines; ``--quiet`` keeps only warnings.
"""

from __future__ import annotations

from ensstab_dask.cli import _early_stop  # noqa: F401 - first: a stop signal during the imports below

# isort: split
import contextlib
import errno
import logging
import os
import sys
import warnings
from collections.abc import Iterator, Sequence

from ensstab_dask.cli._common import STDOUT, OptionSpelling, UsageError, dask_config, message_of, parse_values
from ensstab_dask.cli._parser import attach_negative_values, build_parser
from ensstab_dask.cli._stop import Stop, Terminated, close_interrupted_clusters, stop_signals_handled
from ensstab_dask.exceptions import EnsstabError, SchedulerLost
from ensstab_dask.outputs.visible import visible
from ensstab_dask.wording import Text, spell

__all__ = ["main", "parse_values", "build_parser", "UsageError"]


class _CliWordsFormatter(logging.Formatter):
    """A log record's message alone, the settings it names as this command's options
    (:class:`~ensstab_dask.cli._common.OptionSpelling`)."""

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__("%(message)s")
        self.spelling = OptionSpelling(options)

    def format(self, record: logging.LogRecord) -> str:
        if isinstance(record.msg, Text) and not record.args:
            return record.msg.spelled(self.spelling)
        return super().format(record)


@contextlib.contextmanager
def _log_to_stderr(level: int, options: dict[str, str] | None = None) -> Iterator[None]:
    """Show the ``ensstab_dask`` logger's messages of ``level`` and above on stderr while
    a command runs: the message alone, one line each, like the CLI's own lines, in the
    command line's words (``options``: each option by its dest).

    The handler is removed afterwards, so that ``main`` called again in one process
    (the tests, a notebook) does not print each message twice.
    """
    log = logging.getLogger("ensstab_dask")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_CliWordsFormatter(options or {}))
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


@contextlib.contextmanager
def _json_on_stdout(args) -> Iterator[None]:
    """With ``--json -``, standard output carries the JSON alone: the command's printed
    lines go to stderr meanwhile, and the JSON to the stream that was stdout."""
    if getattr(args, "json", None) != STDOUT:
        yield
        return
    args.json_stream = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        yield


@contextlib.contextmanager
def _warnings_in_one_line() -> Iterator[None]:
    """A warning that reaches the command (a library's, the selector's summary) is one line
    on stderr, ``ensstab: warning: MESSAGE (CATEGORY)``, not Python's two lines with the
    file, line and source that raised it."""

    def one_line(message, category, filename, lineno, line=None) -> str:
        text = " ".join(str(message).split())
        return f"ensstab: warning: {text} ({category.__name__})\n"

    # The format, not the display: what records warnings (catch_warnings, a notebook's
    # hook) keeps working.
    previous = warnings.formatwarning
    warnings.formatwarning = one_line
    try:
        yield
    finally:
        warnings.formatwarning = previous


def _local_session(args):
    """With --workers, the command's one local cluster of that many workers (started by the
    first call that runs work, after the data and options are checked); else nothing."""
    from ensstab_dask.cluster.clients import local_kind
    from ensstab_dask.cluster.session import session

    workers = getattr(args, "workers", None)
    kind = local_kind(args.scheduler or "processes") if hasattr(args, "scheduler") else None
    if not isinstance(workers, int) or workers < 1 or kind not in ("processes", "threads"):
        return contextlib.nullcontext()  # a bad --workers is refused where the options are read
    return session(kind, workers)


def _resumable(args) -> bool:
    """Whether a rerun of this command resumes: a sweep whose store has been made."""
    return getattr(args, "command", None) == "sweep" and bool(args.store) and os.path.exists(args.store)


def _stopped_line(args, terminated: bool) -> str:
    """The line a command stopped by a signal ends with."""
    hint = "; finished blocks are in the store, rerun the same command to resume" if _resumable(args) else ""
    return f"ensstab: {'terminated' if terminated else 'interrupted'}{hint}"


def _stdout_to_devnull() -> None:
    """Point standard output at /dev/null: the interpreter's last flush of what is left would
    meet the closed pipe again, and print a warning about it."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (a notebook's stdout): nothing to flush there
        pass


class _VisibleStream:
    """A standard stream that writes what the command prints with its control characters
    made visible (:func:`~ensstab_dask.outputs.visible.visible`), but for newlines, tabs and a
    progress bar's carriage returns: a name from the data never reaches the terminal raw."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(visible(text, keep="\n\t\r"))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def _visible_streams() -> Iterator[None]:
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _VisibleStream(out), _VisibleStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def main(argv: Sequence[str] | None = None) -> int:
    """The ``ensstab`` command; ``argv`` the words after it (default: the process's)."""
    with _visible_streams():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = None
    options: dict[str, str] = {}

    def error(message: str) -> None:
        print(f"ensstab: error: {spell(message, OptionSpelling(options))}", file=sys.stderr)

    stop = Stop(lambda terminated: _stopped_line(args, terminated))
    try:
        with stop_signals_handled(stop):
            words = sys.argv[1:] if argv is None else list(argv)
            args = parser.parse_args(attach_negative_values(words))
            args.typed = {word.split("=")[0] for word in words if word.startswith("--")}
            if args.command is None:
                parser.print_help()
                return 2
            options = args.cli_options
            if (check_alone := getattr(args, "check_alone", None)) is not None:
                check_alone(args)  # a mistake the options show alone: said before the seconds of imports below
            import dask  # here, as the commands' modules (cli._parser._command): not for --help nor a refused line

            with (
                _log_to_stderr(logging.WARNING if getattr(args, "quiet", False) else logging.INFO, options),
                dask.config.set(dask_config(args)),
                _json_on_stdout(args),
                _warnings_in_one_line(),
                _local_session(args),
            ):
                return args.func(args)
    except SchedulerLost as exc:  # before OSError: it is a ConnectionError
        error(
            message_of(exc) + "; rerun the same command to resume from the store"
            if _resumable(args)
            else message_of(exc)
        )
        return 1
    except UsageError as exc:  # in the command line's words already
        print(f"ensstab: error: {exc}", file=sys.stderr)
        return 2
    except EnsstabError as exc:  # the user's to fix: bad input, unreachable scheduler, damaged store
        error(message_of(exc))
        return 2
    except BrokenPipeError:  # the reader left (`| head`): end quietly, as a killed pipeline's writer does
        _stdout_to_devnull()
        return 128 + 13  # SIGPIPE's status
    except OSError as exc:  # the machine's, not a bug: a path not ours to write, a full disk
        if not isinstance(exc, PermissionError) and exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        error(f"{exc.strerror}: {exc.filename!r}" if exc.filename else str(exc))
        return 2
    except MemoryError:
        error("out of memory; lower --m-ensemble, --m-stability, --n-runs or the grid")
        return 2
    # Anything else is a bug: it keeps its traceback, and the exit status is 1.
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, Terminated)
        stop.say(_stopped_line(args, terminated))  # at once: closing what is left may take a while
        close_interrupted_clusters()
        return exc.status if isinstance(exc, Terminated) else 130
    finally:
        if argv is not None:  # called in a notebook or a test, not as the command (which then exits)
            stop.done()


if __name__ == "__main__":
    raise SystemExit(main())
