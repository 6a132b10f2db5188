"""One local cluster for several calls: :func:`session`, which ``connect(None)`` (every
function's default ``client``) picks up."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ensstab_dask.checks import check_int
from ensstab_dask.cluster.clients import (
    SESSIONS,
    busy_machine_config,
    local_cluster,
    local_kind,
    quiet_when_closing,
    workers_killed_on_exit,
)
from ensstab_dask.exceptions import InvalidParameterError

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["session", "Session"]


class Session:
    """The local cluster of a :func:`session`: started by the first call that runs work
    (``client=None``), closed when the session ends.

    Attributes
    ----------
    kind : str
        ``"processes"`` or ``"threads"`` (:func:`local_cluster`).
    n_workers : int or None
        Its workers (threads for ``"threads"``); None: one per core.
    client : distributed.Client or None
        Its client, once started; None before, and once closed.
    closed : bool
        Whether the session has ended (its ``with`` block is over).
    """

    def __init__(self, kind: str, n_workers: int | None) -> None:
        self.kind, self.n_workers = kind, n_workers
        self.client: Client | None = None
        self.closed = False
        self._stack = contextlib.ExitStack()

    def start(self) -> Client:
        """The session's client, the cluster started now if it has not been; refused once the
        session has ended (nothing would close a cluster started then)."""
        if self.closed:
            raise InvalidParameterError(
                "this session has ended (its with block is over): start() would start a cluster that nothing "
                "closes; open a new one with ensstab_dask.session()"
            )
        if self.client is None:
            import dask
            from distributed import Client

            stack = contextlib.ExitStack()
            with stack:
                closing = stack.enter_context(quiet_when_closing())
                stack.enter_context(dask.config.set(busy_machine_config()))
                cluster = stack.enter_context(local_cluster(self.kind, self.n_workers))
                client = stack.enter_context(Client(cluster, set_as_default=False))
                stack.enter_context(workers_killed_on_exit(cluster))
                stack.callback(closing)  # first on the way out: quiet before anything closes
                self._stack, self.client = stack.pop_all(), client
        return self.client

    def close(self) -> None:
        """Close the cluster, if it was started; the session is over: :meth:`start` is refused."""
        self.closed, self.client = True, None
        self._stack.close()


@contextlib.contextmanager
def session(kind: str = "processes", n_workers: int | None = None) -> Iterator[Session]:
    """One local cluster for every call in the block that runs work with ``client=None``
    (every function's default): :func:`~ensstab_dask.estimate`, :func:`~ensstab_dask.validate`
    and :func:`~ensstab_dask.sweep` then share it instead of each starting and closing its own.

    Parameters
    ----------
    kind : {"processes", "threads"}, default "processes"
        As for :func:`local_cluster` (dask's aliases accepted).
    n_workers : int, optional
        Worker processes (``"processes"``) or threads (``"threads"``); default one per core.

    The cluster starts with the first call that needs it (a call refused before any work
    starts none) and is closed when the block ends, also on error or Ctrl-C. Calls given
    a client of their own (``"synchronous"``, an address, a Client) use that one.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> with es.session(n_workers=2) as s:  # doctest: +SKIP
    ...     est = es.estimate(X, y, 20)
    ...     val = es.validate(X, y, 20)  # the same cluster
    """
    if not isinstance(kind, str) or local_kind(kind) not in ("processes", "threads"):
        raise InvalidParameterError(
            f"kind must be 'processes' or 'threads' (or 'multiprocessing', 'threading'); got {kind!r}"
        )
    if n_workers is not None:
        n_workers = check_int(n_workers, "n_workers", minimum=1)
    opened = Session(kind, n_workers)
    SESSIONS.append(opened)
    try:
        yield opened
    finally:
        SESSIONS.remove(opened)
        opened.close()
