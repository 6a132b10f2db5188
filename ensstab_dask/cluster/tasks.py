"""The package's one way to run tasks where a ``client`` says (see
:mod:`ensstab_dask.cluster.clients`): the data sent once, results in order or streamed as
they land, a progress bar in completion order."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ensstab_dask.cluster.clients import ClientLike, connect
from ensstab_dask.cluster.progress import note_dashboard, progress_bar
from ensstab_dask.exceptions import SchedulerLost, WorkersLost

__all__ = ["map_shared", "run_tasks", "Display", "SILENCE_NOTED_AFTER", "WORKERLESS_ENDS_AFTER"]

logger = logging.getLogger("ensstab_dask.cluster")  # the public name, not the private module's

#: Seconds without a finished task, without a connected worker or a sign of life from one
#: (its heartbeats, as the scheduler records them), after which a line on the
#: ``ensstab_dask.cluster`` logger says so and what to do; again at doubling intervals
#: while it lasts. The work goes on waiting: on a shared cluster workers come back and
#: join (a batch queue, an autoscaler), and Ctrl-C stops it.
SILENCE_NOTED_AFTER = 20.0
#: Seconds without a worker connected and answering, once the work has had one, after
#: which the work ends (:class:`~ensstab_dask.exceptions.WorkersLost`; a sweep's store
#: keeps its finished blocks and resumes): its last worker was killed, or stopped, and
#: none came back. Work that has not had a worker yet (a batch queue starting them) waits
#: without end, said. Dask's config key ``ensstab.workerless-ends-after`` sets another
#: (``DASK_ENSSTAB__WORKERLESS_ENDS_AFTER=600``, for a queue that replaces workers slowly).
WORKERLESS_ENDS_AFTER = 120.0
#: Seconds without a finished task before the cluster is asked whether it is still there;
#: then asked every _CHECK_EVERY s, each question given _ASK_WITHIN s to be answered.
_QUIET, _CHECK_EVERY, _ASK_WITHIN = 5.0, 2.0, 5.0


@dataclass(frozen=True)
class Display:
    """How :func:`run_tasks` shows its progress: a bar named ``desc`` counting ``unit``,
    advanced by ``sizes[i]`` (default 1) as task ``i`` finishes; nothing unless ``enabled``."""

    desc: str = ""
    unit: str = "task"
    sizes: Sequence[int] | None = None
    enabled: bool = False


def run_tasks(
    fn,
    tasks: Sequence[tuple],
    *,
    shared: tuple = (),
    client: ClientLike = None,
    display: Display = Display(),
    on_result: Callable[[int, Any], None] | None = None,
    window: int | None = None,
    pure: bool = False,
) -> list | None:
    """``fn(*shared, *tasks[i])`` for every task, where ``client`` says (module docstring):
    the package's one way to run tasks and show their progress.

    * ``shared`` (the data) goes to the workers once, by broadcast scatter, not once per
      task.
    * Without ``on_result``, the results come back in the order of ``tasks``, gathered
      once every task has finished (or one failed: its error is raised).
    * With ``on_result``, ``on_result(i, result)`` runs on this thread as each task lands
      and the task's memory is released at once (a sweep streams blocks into its store);
      ``window`` then bounds the tasks in flight, so that the client and the scheduler
      hold a few futures, not one per block of a 100,000-cell sweep. Returns None.
    * The bar (``display``) advances as each task finishes, in completion order: a slow
      task does not hold back the count of later ones.
    * ``pure``: keys from the arguments (tasks that are pure functions of them).
    """
    sizes = [1] * len(tasks) if display.sizes is None else list(display.sizes)
    with connect(client) as c:
        note_dashboard(c, display.enabled)  # before the bar: see note_dashboard
        with progress_bar(sum(sizes), display.desc, unit=display.unit, enabled=display.enabled) as bar:

            def advance(i: int) -> None:
                bar.update(sizes[i])

            if c is None:
                results: list = [None] * len(tasks)
                for i, task in enumerate(tasks):
                    out = fn(*shared, *task)
                    if on_result is None:
                        results[i] = out
                    else:
                        on_result(i, out)
                    advance(i)
                return None if on_result is not None else results
            return _run_on_cluster(c, fn, tasks, shared, advance, on_result=on_result, window=window, pure=pure)


def _run_on_cluster(c, fn, tasks, shared, advance, *, on_result, window, pure) -> list | None:
    """:func:`run_tasks` on a Dask client; ``advance(i)`` as task ``i`` finishes."""
    from distributed import as_completed

    # hash=False: content-hashed keys would be shared by back-to-back calls with the same
    # data, and releasing one call's futures can then delete the next call's inputs
    # (dask/distributed#4612).
    watch = _Watch(c)
    remote = _scatter(c, shared, watch) if shared else []
    todo = iter(range(len(tasks)))
    in_flight: dict = {}

    def submit(n: int) -> list:
        futures = []
        for i in itertools.islice(todo, n):
            fut = c.submit(fn, *remote, *tasks[i], pure=pure)
            in_flight[fut.key] = (fut, i)
            futures.append(fut)
        return futures

    # The client's own loop: as_completed would otherwise look for a default client, and
    # a client connected by address is deliberately not the default.
    running = as_completed(submit(len(tasks) if window is None else window), loop=c.loop)
    try:
        while (fut := _next_landed(running, watch)) is not None:
            watch.progress()
            if fut.status in ("error", "cancelled"):
                break  # raised by the gather below
            if fut.status != "finished":
                # Finished, then its result was lost with the worker that held it: the
                # scheduler computes it again, and it is handed on when it lands.
                running.add(fut)
                continue
            _, i = in_flight[fut.key]
            advance(i)
            if on_result is not None:
                on_result(i, _gathered(c, [fut], watch)[0])
                # Only now: a fetch that fails (its worker lost) leaves it to be cancelled below.
                del in_flight[fut.key]
                fut.release()
                for new in submit(1):
                    running.add(new)
        # Gathered once every task has finished (or one failed: the gather raises its error),
        # watched as the wait for them was.
        gathered = _gathered(c, [f for f, _ in in_flight.values()], watch)
        if on_result is None:
            results: list = [None] * len(tasks)
            for (_, i), out in zip(in_flight.values(), gathered):
                results[i] = out
            return results
        if in_flight or next(todo, None) is not None:
            # Every task's result must have reached on_result: a sweep must not return
            # with a block silently missing.
            raise RuntimeError(f"{len(in_flight)} tasks finished without their results being handed on")
        return None
    except BaseException:
        # Best effort, and never in place of what is being raised: a client whose scheduler
        # has just died is closed, and cancelling on it raises ClosedClientError.
        if c.status == "running":
            with contextlib.suppress(Exception):
                c.cancel([f for f, _ in in_flight.values()])
        raise


def _scatter(c, shared: tuple, watch: _Watch) -> list:
    """``shared`` on every worker, once there is one, the wait watched as a task's is.

    distributed's scatter waits for a worker as long as the client's timeout, then raises
    TimeoutError ("No valid workers found"): here the wait goes on, said in one line as any
    wait for a worker is. And it waits without end, and without a word, for a worker that
    is connected but takes nothing (stopped): so it runs in a thread of its own while this
    one asks the cluster (``watch``), which says so, and raises SchedulerLost for a
    scheduler that stops answering."""

    def send(outcome: list) -> None:
        try:
            outcome.append(c.scatter(list(shared), broadcast=True, hash=False))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome.append(exc)

    while True:
        outcome: list = []
        sending = threading.Thread(target=send, args=(outcome,), name="ensstab-scatter", daemon=True)
        sending.start()
        while sending.is_alive():
            sending.join(0.1)
            if sending.is_alive():
                watch.check()
        if not isinstance(outcome[0], BaseException):
            return outcome[0]
        if not isinstance(outcome[0], TimeoutError):
            raise outcome[0]
        if c.status != "running" or watch.workers() not in (0, None):
            raise outcome[0]  # a lost scheduler (reported as such by connect), or not for want of a worker
        watch.wait_for_a_worker()


def _gathered(c, futures: list, watch: _Watch) -> list:
    """The results of ``futures``, which have finished (a failed one's error is raised),
    fetched by one gather on the client's loop. Fetching asks the scheduler where each
    result is, and a result lost with its worker is computed again first: the wait is
    cut into short ones, and ``watch`` raises WorkersLost or SchedulerLost once the
    cluster has been without a worker, or silent, too long.

    Not ``fut.result(timeout=...)`` or ``c.gather`` in a loop: distributed cancels its
    gather at each timeout (and at Ctrl-C), leaving a task per future behind; cancelled
    with the work on the way out, each then logged "Task exception was never retrieved
    ... AllExit" under the one-line error. The one gather here is never cancelled: it ends
    when its futures finish, or are cancelled by the caller on the way out or by the
    client's close, its outcome taken by the concurrent future that runs it.
    """
    fetching = asyncio.run_coroutine_threadsafe(c.gather(futures, asynchronous=True), c.loop.asyncio_loop)
    # Waited for, not asked for its result with a timeout: a task's own TimeoutError would
    # read as the wait's.
    while not concurrent.futures.wait([fetching], timeout=_ASK_WITHIN).done:
        watch.workers()
    from dask.utils import shorten_traceback

    with shorten_traceback():  # as distributed's own gather: a failed task's frames, not the client's
        return fetching.result()


def _next_landed(running, watch: _Watch):
    """The next future of ``running`` to land, or None once none is left; ``watch``
    looks at the cluster meanwhile (a plain ``next`` waits without a word)."""
    # as_completed's own wait: woken as soon as a future lands, else every 0.1 s.
    landed = getattr(running, "thread_condition", None)
    while not running.has_ready():
        if running.is_empty():
            return None
        watch.check()
        if landed is None:
            time.sleep(0.05)
        else:
            with landed:
                landed.wait(timeout=0.1)
    return next(running)


class _Watch:
    """Whether a cluster that has finished no task for a while is still there: its
    scheduler answering, a worker connected and alive. Says so in one line
    (:data:`SILENCE_NOTED_AFTER`) where none is; raises :class:`WorkersLost` once the work,
    having had a worker, has had none answering for :data:`WORKERLESS_ENDS_AFTER`; and
    raises :class:`SchedulerLost` once
    the scheduler has not answered for dask's ``distributed.comm.timeouts.tcp`` (how long
    an open connection may stay silent before distributed declares it dead; a stopped
    scheduler keeps its connections open, so nothing else ever would)."""

    def __init__(self, c) -> None:
        import dask
        from dask.utils import parse_timedelta

        self.c = c
        self.address = c.scheduler.address
        self.gone_after = parse_timedelta(dask.config.get("distributed.comm.timeouts.tcp"), default="seconds") or 30.0
        self.heartbeat: float | None = None  # the newest worker heartbeat the scheduler had, at the last look
        ends_after = dask.config.get("ensstab.workerless-ends-after", WORKERLESS_ENDS_AFTER)
        self.ends_after = parse_timedelta(ends_after, default="seconds")
        self.noted: dict[str, float] = {}  # what was noted: when to note it again
        self._reset(time.monotonic())
        self.had_workers = False  # whether the work has had a worker: then, without one for long, it ends

    def progress(self) -> None:
        """A task has landed: the cluster works, and has had a worker."""
        now = time.monotonic()
        if self.noted:
            logger.warning("the Dask cluster at %s works again: the work goes on", self.address)
        self._reset(now)
        self.had_workers = True

    def _reset(self, now: float) -> None:
        self.checked_at = self.scheduler_at = self.worker_at = self.quiet_since = now
        self.noted = {}

    def check(self) -> None:
        """Ask the scheduler, if nothing has landed for a while and it is time to."""
        now = time.monotonic()
        if now - self.quiet_since >= _QUIET and now - self.checked_at >= _CHECK_EVERY:
            self.workers()

    def wait_for_a_worker(self) -> None:
        """Return once the scheduler has a worker, asking every few seconds meanwhile."""
        while not self.workers():
            time.sleep(_CHECK_EVERY)

    def workers(self) -> int | None:
        """How many workers the scheduler has (None: it did not answer), and a line on
        what is wrong if it has been so too long; SchedulerLost once it has not answered
        for ``gone_after`` seconds."""
        self.checked_at = time.monotonic()
        try:
            info = self.c.sync(self.c.scheduler.identity, n_workers=-1, callback_timeout=_ASK_WITHIN)
        except TimeoutError:  # asyncio's too; a closed connection is an OSError, raised as it is
            info = None
        now = time.monotonic()
        if info is None:
            silent = now - self.scheduler_at
            if silent >= self.gone_after:
                raise SchedulerLost(
                    f"the Dask scheduler at {self.address} has not answered for {silent:.0f} s while work was running "
                    "(stopped, overloaded, or cut off from this machine?)"
                )
            return None
        self.scheduler_at = now
        workers = info.get("workers") or {}
        heartbeat = max((w.get("last_seen") or 0.0 for w in workers.values()), default=None)
        if heartbeat is not None and (self.heartbeat is None or heartbeat > self.heartbeat):
            self.worker_at = now  # a heartbeat since the last look, or a worker where there was none
        self.heartbeat = heartbeat
        self.had_workers = self.had_workers or bool(workers)
        silent = now - self.worker_at
        if self.had_workers and silent >= self.ends_after:
            what = "no worker connected" if not workers else f"{len(workers)} connected, none answering"
            raise WorkersLost(
                f"the Dask cluster at {self.address} has had no worker answering for {silent:.0f} s while work was "
                f"running ({what}: its workers killed, stopped, or cut off?), and none came back"
            )
        ends = f", or ends in {self.ends_after - silent:.0f} s if none does" if self.had_workers else ""
        if not workers:
            self._note(
                "none",
                silent,
                f"no worker has been connected to the Dask scheduler at {self.address} for {silent:.0f} s: the work "
                f"waits for one to join (start one with: dask worker {self.address}){ends}; Ctrl-C stops it",
            )
        else:
            self._note(
                "silent",
                silent,
                f"no worker of the Dask scheduler at {self.address} has answered for {silent:.0f} s ({len(workers)} "
                "connected, none sending heartbeats: stopped, or its machine overloaded or cut off?): the work waits "
                f"for one to answer or to join{ends}; Ctrl-C stops it",
            )
        return len(workers)

    def _note(self, what: str, silent: float, line: str) -> None:
        due = self.noted.get(what, SILENCE_NOTED_AFTER)
        if silent >= due:
            logger.warning("%s", line)
            self.noted[what] = min(2 * silent, silent + 600.0)


def map_shared(fn, shared: tuple, tasks: list[tuple], *, client: ClientLike = None) -> list:
    """``[fn(*shared, *task) for task in tasks]``, run where ``client`` says, the data
    sent to the workers once: :func:`run_tasks` without a bar."""
    return run_tasks(fn, tasks, shared=shared, client=client)  # type: ignore[return-value]
