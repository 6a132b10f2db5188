"""The package's one way to run tasks where a ``client`` says (see
:mod:`ensstab_dask.cluster.clients`): the data sent once, results in order or streamed as
they land, a progress bar in completion order."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ensstab_dask.cluster.clients import ClientLike, connect
from ensstab_dask.cluster.progress import note_dashboard, progress_bar

__all__ = ["map_shared", "run_tasks", "Display"]


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
    remote = c.scatter(list(shared), broadcast=True, hash=False) if shared else []
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
        for fut in running:
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
                del in_flight[fut.key]
                on_result(i, fut.result())
                fut.release()
                for new in submit(1):
                    running.add(new)
        # Gathered only once every task has finished (or one failed): a gather interrupted
        # by Ctrl-C leaves one waiter per task, each logging "Task exception was never
        # retrieved" when the client closes.
        futures = [f for f, _ in in_flight.values()]
        gathered = c.gather(futures)
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
        c.cancel([f for f, _ in in_flight.values()])
        raise


def map_shared(fn, shared: tuple, tasks: list[tuple], *, client: ClientLike = None) -> list:
    """``[fn(*shared, *task) for task in tasks]``, run where ``client`` says, the data
    sent to the workers once: :func:`run_tasks` without a bar."""
    return run_tasks(fn, tasks, shared=shared, client=client)  # type: ignore[return-value]
