"""How a command stops: Ctrl-C, SIGTERM and SIGHUP, each ending it with one line and
within :data:`GRACE_S` seconds.

Ctrl-C (SIGINT) raises ``KeyboardInterrupt``; SIGTERM (``kill``, a job scheduler's stop)
and SIGHUP (the terminal closed) raise :class:`Terminated`, a ``KeyboardInterrupt`` too,
so that every ``finally`` and context manager on the way out runs as for a Ctrl-C: the
cluster is closed, an output being written is left whole or not at all. Exit status 130,
or 128 + the signal's number (143, 129).

That orderly shutdown has :data:`GRACE_S` seconds. A wait it cannot cut short (a
scheduler that stopped answering, a cluster half-started) would otherwise keep a
stopped command alive for a minute or more, so the process then ends regardless
(:meth:`Stop.arm`): what it leaves is safe, as after a kill (outputs are written under
temporary names and renamed; a store's blocks are marked done only once written).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from ensstab_dask.cli import _early_stop

__all__ = ["GRACE_S", "Stop", "Terminated", "stop_signals_handled", "close_interrupted_clusters"]

#: Seconds the orderly shutdown has after a stop signal; then the process ends regardless.
GRACE_S = 2.0


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: handled as Ctrl-C is, exit status 128 + the signal's number."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.status = 128 + int(signum)


def _stop_signals() -> tuple[int, ...]:
    return tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stop:
    """One command's way out: its last line, said once, and the deadline after a stop signal.

    ``line(terminated)`` makes the line a stop ends with (it may read the command's
    arguments, known only once they are parsed). After SIGTERM or SIGHUP the deadline
    stands until the process has exited: the process was asked to end. After Ctrl-C it
    stands too when the process is the command (its exit, interrupted mid-import, can
    hang on a thread a module left behind), and is lifted when ``main``, called in a
    notebook or a test, returns (:meth:`done`): it must not end the interpreter it
    returned to.
    """

    def __init__(self, line):
        self._line = line
        self._lock = threading.Lock()
        self._said = False
        self._armed = False
        self._returned = threading.Event()

    def say(self, text: str) -> None:
        """Print ``text`` (the command's last line) on stderr unless a line was said already."""
        with self._lock:
            if self._said:
                return
            self._said = True
        print(text, file=sys.stderr, flush=True)

    def on_signal(self, signum, frame) -> None:
        """The handler of the stop signals: the shutdown's reports silenced, the deadline
        armed, and ``KeyboardInterrupt`` (or :class:`Terminated`) raised.

        From here on the process only stops: closing the cluster with tasks still running
        makes distributed log errors, and asyncio reports each future left pending ("Task
        exception was never retrieved") when it is collected, as late as the
        interpreter's exit. None of it is news after a Ctrl-C, and it would bury the one
        line that is.
        """
        logging.disable(logging.CRITICAL)
        warnings.simplefilter("ignore")
        terminated = signum != signal.SIGINT
        self.arm(128 + int(signum) if terminated else 130, terminated)
        raise Terminated(signum) if terminated else KeyboardInterrupt

    def arm(self, status: int, terminated: bool) -> None:
        """End the process with ``status`` :data:`GRACE_S` seconds from now, unless it has
        ended by then (or, after Ctrl-C, the command has returned). A second signal
        changes nothing: the first one's deadline holds."""
        with self._lock:
            if self._armed:
                return
            self._armed = True

        def end() -> None:
            if terminated:
                time.sleep(GRACE_S)  # past the command's return too: the process was asked to end
            elif self._returned.wait(GRACE_S):
                return
            try:
                self.say(self._line(terminated))
                _before_hard_exit()
            finally:
                os._exit(status)

        threading.Thread(target=end, name="ensstab-deadline", daemon=True).start()

    def done(self) -> None:
        """The command has returned: a Ctrl-C's deadline is lifted."""
        self._returned.set()


def _before_hard_exit() -> None:
    """What the interpreter's exit would have done that matters outside this process: kill
    its children (a local cluster's worker processes), all but multiprocessing's resource
    tracker, and remove the named semaphores its queues made (:func:`_unlink_semaphores`),
    so that the tracker finds nothing left to report as leaked."""
    from multiprocessing import resource_tracker

    import psutil

    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)  # no public accessors here
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process().children(recursive=True):
            if child.pid != tracker:
                with contextlib.suppress(psutil.Error):
                    child.kill()
    _unlink_semaphores()


def _unlink_semaphores(*, within_s: float = 1.0) -> None:
    """Remove every named semaphore this process made, its other threads running on.

    The resource tracker reports as leaked, when the process has gone, every name
    registered with it and not unregistered, even one removed a moment before. Here the
    finalizers that would unregister them at exit are run while other threads may still
    make and finalize semaphores (a local cluster's loop starting a worker makes its
    queues; a queue collected runs its own finalizer). So, first, a semaphore made from
    now on is removed as it is made, as under the fork start method, and never
    registered; then this waits for the threads already making one, runs the
    finalizers, and waits for those other threads had begun. Gives up after
    ``within_s`` seconds: the process ends regardless.
    """
    import types
    from multiprocessing import synchronize, util

    made = synchronize._multiprocessing  # type: ignore[attr-defined]  # private, as below

    def removed_at_once(kind, value, maxvalue, name, unlink):
        return made.SemLock(kind, value, maxvalue, name, True)

    # SemLock looks its maker up in the module each time; there is no public hook.
    synchronize._multiprocessing = types.SimpleNamespace(**{**vars(made), "SemLock": removed_at_once})  # type: ignore[attr-defined]
    give_up = time.monotonic() + within_s
    _wait_for(synchronize.SemLock.__init__, give_up)
    cleanup = synchronize.SemLock._cleanup  # type: ignore[attr-defined]
    for finalizer in list(getattr(util, "_finalizer_registry", {}).values()):
        if getattr(finalizer, "_callback", None) is cleanup:
            with contextlib.suppress(Exception):
                finalizer()
    _wait_for(util.Finalize.__call__, give_up)


def _other_threads_frames() -> list[FrameType]:
    """Every frame the other threads are in now, innermost first."""
    me = threading.get_ident()
    frames = []
    for ident, top in sys._current_frames().items():
        frame: FrameType | None = top
        while ident != me and frame is not None:
            frames.append(frame)
            frame = frame.f_back
    return frames


def _wait_for(function: Callable[..., Any], give_up: float) -> None:
    """Until the calls of ``function`` that other threads are in now have returned, or the
    monotonic clock reads ``give_up``. Later calls are not waited for."""
    waiting = [f for f in _other_threads_frames() if f.f_code is function.__code__]
    while waiting and time.monotonic() < give_up:
        time.sleep(0.005)
        running = {id(f) for f in _other_threads_frames()}
        waiting = [f for f in waiting if id(f) in running]


@contextlib.contextmanager
def stop_signals_handled(stop: Stop) -> Iterator[None]:
    """The stop signals raise through ``stop.on_signal`` while a command runs.

    Only where they have their default handling: a SIGINT ignored (a background job) or
    handled by someone else is left alone, and so is everything off the main thread
    (where handlers cannot be set). Without a handler, SIGTERM and SIGHUP kill the
    process at once, mid-write, and the semaphores of its worker processes are reported
    leaked.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    defaults: dict[int, Any] = {signal.SIGINT: signal.default_int_handler}
    # The command's own handler of the imports (ensstab_dask.cli._early_stop) counts as the default.
    taken = [s for s in _stop_signals() if signal.getsignal(s) in (defaults.get(s, signal.SIG_DFL), _early_stop.end)]
    for s in taken:
        signal.signal(s, stop.on_signal)
    watcher = _Watcher(stop) if signal.SIGINT in taken else None
    try:
        yield
    finally:
        if watcher is not None:
            watcher.close()
        for s in taken:
            signal.signal(s, defaults.get(s, signal.SIG_DFL))


class _Watcher:
    """Starts the deadline the moment a stop signal arrives, whatever the main thread is doing.

    Python runs a signal's handler in the main thread, between two of its bytecodes: a
    main thread waiting for a local cluster to start (which on a loaded machine takes
    10 s or more) with SIGINT blocked (so that the worker processes inherit the block:
    :func:`ensstab_dask.cluster.local_cluster`) runs it only once the cluster is up. The
    C-level handler, in whichever thread the kernel chose, writes the signal's number to
    the wakeup file descriptor at once; this thread reads it there and arms the deadline
    (:meth:`Stop.arm`), which the handler then finds armed.
    """

    def __init__(self, stop: Stop):
        import socket

        self._read, self._write = socket.socketpair()
        self._write.setblocking(False)
        self._previous = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        self._thread = threading.Thread(target=self._watch, args=(stop,), name="ensstab-signals", daemon=True)
        self._thread.start()

    def _watch(self, stop: Stop) -> None:
        while True:
            try:
                got = self._read.recv(64)
            except OSError:  # closed: the command returned
                return
            if not got:
                return
            for signum in got:
                if signum in _stop_signals():
                    terminated = signum != signal.SIGINT
                    stop.arm(128 + signum if terminated else 130, terminated)

    def close(self) -> None:
        signal.set_wakeup_fd(self._previous)
        self._write.close()  # the watcher's recv returns empty
        self._thread.join(1.0)
        self._read.close()


def close_interrupted_clusters() -> None:
    """Close what a Ctrl-C left half-started, quietly.

    Interrupted while its workers start, a LocalCluster stays registered with
    distributed's exit hook, which then fails to close it (``AssertionError:
    Status.init``) and prints a traceback after our one line. The package's local
    clusters hold a Ctrl-C back until they are up (:func:`ensstab_dask.cluster.local_cluster`),
    so this is the fallback for one started otherwise (or stopped by SIGTERM). Close such
    clusters here, swallowing that failure, and drop the hook: nothing is left for it to do.
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
