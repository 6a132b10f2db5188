"""Where the work runs: the current Dask client, a local cluster, or any cluster by address.

``client`` arguments across the package (and the CLI's ``--scheduler``) accept the
values below; this is the one place that documents them.

* ``None`` (the default): inside a :func:`~ensstab_dask.cluster.session.session`, its one local cluster (started by
  the first call that needs it, closed when the session ends); otherwise Dask's
  convention, as for ``dask.compute``: the current client (:func:`current_client`: the
  :class:`distributed.Client` made last in this process and not closed, e.g. in a
  notebook) when there is one, used as is and left open; otherwise a local cluster as
  for ``"processes"``, closed when the work is done.
* ``"processes"`` (or dask's alias ``"multiprocessing"``): worker processes on this
  machine, one single-threaded process per core. The default without a current client:
  the simulator holds the GIL for much of its time, so processes beat threads
  (docs/performance.md, "Sweeps").
* ``"threads"`` (or ``"threading"``): one thread per core, all in this process.
* ``"synchronous"`` (or ``"sync"``, ``"single-threaded"``): no cluster, everything in
  this thread, one task after another (debugging, tiny jobs).
* a :class:`distributed.Client`: used as is and left open.
* an address such as ``"tcp://10.0.0.5:8786"`` (or ``tls://...``): a client is
  connected within dask's connect timeout or :class:`SchedulerUnreachable` is raised:
  the connection, distributed's handshake and the scheduler's first answer all within
  it (a stopped scheduler, or another service on the port, is refused in that time, and
  nothing it sends is unpickled: :mod:`~ensstab_dask.cluster.handshake`); a malformed
  address raises ValueError at once.

How long to wait for a scheduler and the certificates of a ``tls://`` one come from
dask's own configuration, as for ``distributed.Client(address)``:
``distributed.comm.timeouts.connect`` and ``distributed.comm.tls`` (a dask config file,
``DASK_*`` environment variables, or ``dask.config.set`` around the call; the CLI's
``--timeout`` and ``--tls-*`` set them). Or connect a :class:`distributed.Client`
yourself, with whatever it needs, and pass it. No other function takes them: one way to
say where work runs.

Local clusters made here (``"processes"``, ``"threads"``, :func:`local_cluster`) allow
for a busy machine: dask's timeouts are raised to at least :data:`BUSY_MACHINE` while
they start and, under :func:`connect`, while they run (:func:`busy_machine_config`).

The three names mean what they mean for ``dask.compute(scheduler=...)``, and dask's
aliases are accepted: where the work runs and how many tasks run at once, ignoring any
current client. Only the machinery differs: ``"processes"`` and ``"threads"`` start a
:class:`distributed.LocalCluster` (``processes=True`` or ``False``) rather than dask's
process or thread pool, so that the dashboard, the progress bar, sending the data to
the workers once and restarting a worker that dies work as on any cluster.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import signal
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Union

from ensstab_dask.checks import check_real
from ensstab_dask.cluster.addresses import check_address, check_security, warn_if_plain_and_remote
from ensstab_dask.cluster.handshake import handshake
from ensstab_dask.exceptions import InvalidParameterError, SchedulerLost, SchedulerUnreachable
from ensstab_dask.wording import param

# distributed is imported inside the functions that use it: it takes half a second to import,
# and neither `import ensstab_dask` nor the synchronous scheduler needs it.

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "SchedulerUnreachable",
    "SchedulerLost",
    "connect",
    "current_client",
    "running_client",
    "task_slots",
    "check_address",
    "local_cluster",
    "BUSY_MACHINE",
    "busy_machine_config",
    "ClientLike",
    "LOCAL_KINDS",
]

#: Where work runs (see the module docstring): None, a name, an address, or a Client.
ClientLike = Union[None, str, "Client"]
#: The local kinds, where work runs on this machine: see the module docstring.
LOCAL_KINDS = ("processes", "threads", "synchronous")
#: The local kinds by every accepted name (dask's aliases included).
_KINDS = {
    **{kind: kind for kind in LOCAL_KINDS},
    "multiprocessing": "processes",
    "threading": "threads",
    "sync": "synchronous",
    "single-threaded": "synchronous",
}
_ACCEPTED = (
    f"None, {', '.join(map(repr, LOCAL_KINDS))} (or dask's aliases "
    f"{', '.join(repr(name) for name in _KINDS if name not in LOCAL_KINDS)}), a scheduler address like "
    "'tcp://host:8786' or a distributed.Client"
)


#: The least of dask's timeouts that the local clusters made here run with. On a machine
#: busy with other work (a load of 2 to 6 times its cores), a process can wait seconds for
#: a core and a GIL-holding task starves its event loop: with dask's defaults (30 s) a
#: worker's heartbeat or the client's connection was then declared dead (a notebook lost
#: its client: "Scheduler->Client already closed"). On one machine a dead process is seen
#: at once anyway (its sockets close), so waiting longer costs nothing:
#:
#: * ``distributed.comm.timeouts.connect``: a connection being opened (a worker
#:   registering, a heartbeat's connection, the client connecting);
#: * ``distributed.comm.timeouts.tcp``: an open connection that does not answer (the
#:   kernel's keepalive and TCP_USER_TIMEOUT that distributed sets from it);
#: * ``distributed.scheduler.worker-ttl``: a worker whose heartbeats stop.
BUSY_MACHINE = {
    "distributed.comm.timeouts.connect": "120s",
    "distributed.comm.timeouts.tcp": "600s",
    "distributed.scheduler.worker-ttl": "900s",
}


def busy_machine_config() -> dict[str, str]:
    """:data:`BUSY_MACHINE`, each timeout kept at the dask config's value where that is longer:
    for ``dask.config.set`` around a local cluster and its client (a notebook's too).

    Examples
    --------
    >>> import dask
    >>> from ensstab_dask.cluster import busy_machine_config
    >>> with dask.config.set(busy_machine_config()):
    ...     print(dask.config.get("distributed.comm.timeouts.tcp"))
    600s
    """
    import dask
    import distributed  # noqa: F401 - its defaults enter dask's config on import
    from dask.utils import parse_timedelta

    config = {}
    for key, least in BUSY_MACHINE.items():
        current = dask.config.get(key, None)
        if current is None:  # no limit at all (a worker-ttl of None): longer than any
            continue
        seconds = parse_timedelta(current, default="seconds")
        config[key] = least if seconds < parse_timedelta(least) else f"{seconds:g}s"
    return config


def running_client() -> Client | None:
    """The client ``client=None`` would use without starting anything: the innermost
    :func:`~ensstab_dask.cluster.session.session`'s once it started, else the current client;
    None when ``connect(None)`` would start a local cluster."""
    if SESSIONS and SESSIONS[-1].client is not None:
        return SESSIONS[-1].client
    return current_client()


def current_client() -> Client | None:
    """The current :class:`distributed.Client` of this process, or None: never makes one.

    :func:`distributed.default_client` is the documented way to find it without
    creating a client (:func:`distributed.get_client` would connect one inside a task).
    A client that is closing or closed is not current.
    """
    from distributed import default_client

    try:
        c = default_client()
    except ValueError:  # no client in this process
        return None
    return c if c.status == "running" else None


def task_slots(client) -> int:
    """How many tasks ``client`` runs at once: its workers' threads (at least 1); 1 where
    no cluster runs them (``"synchronous"``, None)."""
    nthreads = getattr(client, "nthreads", None)
    return max(1, sum(nthreads().values())) if callable(nthreads) else 1


def local_kind(name: str) -> str | None:
    """The local kind ``name`` stands for (dask's aliases included), or None."""
    return _KINDS.get(name.strip().lower())


#: Errors a broken connection surfaces as: a closed comm or socket, a timed-out call, and
#: every pending future cancelled (distributed cancels them when it loses the scheduler).
_CONNECTION_ERRORS = (
    OSError,
    TimeoutError,
    asyncio.TimeoutError,
    concurrent.futures.CancelledError,
    asyncio.CancelledError,
)


def _connection_lost(exc: BaseException, c: Client) -> bool:
    """Whether ``exc``, raised while ``c`` was in use, means the scheduler is gone."""
    from distributed.client import ClosedClientError
    from distributed.comm.core import CommClosedError

    if isinstance(exc, CommClosedError):
        return True
    # The same types also mean other things (a full disk, a task cancelled by the user):
    # only a client that is no longer running ("connecting" while it tries to reconnect,
    # then "closing", "closed") says the scheduler went. A client that closed itself
    # once the scheduler was gone refuses work with ClosedClientError.
    return isinstance(exc, (*_CONNECTION_ERRORS, ClosedClientError)) and getattr(c, "status", "running") != "running"


@contextlib.contextmanager
def _reporting_loss(c: Client, where: str) -> Iterator[Client]:
    try:
        yield c
    except SchedulerLost:  # told already, by a connect() nested in this one
        raise
    except BaseException as exc:  # asyncio.CancelledError is a BaseException
        if _connection_lost(exc, c):
            raise SchedulerLost(f"lost the connection to the Dask scheduler {where} while work was running") from exc
        raise


@contextlib.contextmanager
def _ctrl_c_held_back() -> Iterator[None]:
    """Block SIGINT in this thread while a local cluster starts; a Ctrl-C meanwhile is
    raised (KeyboardInterrupt) on the way out.

    A thread's signal mask is inherited by the threads it starts and kept by the
    processes they spawn, across exec. The cluster's event-loop thread starts here, and
    every worker process (a restarted one too) is spawned from a thread it starts, so
    they all block SIGINT for good: a Ctrl-C in the terminal, which reaches the whole
    process group, interrupts only this process, which then shuts the workers down
    itself. Without this, each worker dies on its own KeyboardInterrupt and prints a
    traceback (dask/distributed#1925), or, caught while it starts, an import's. In a
    process with no other thread taking SIGINT (the CLI), a Ctrl-C during start-up also
    waits for the cluster to be up, rather than leave one half-started that
    distributed's exit hook cannot close.
    """
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no signal masks; nothing held back
        yield
        return
    from multiprocessing import resource_tracker

    # The thread that starts multiprocessing's resource tracker ends up with SIGINT
    # unblocked (the stdlib unblocks it rather than restore the mask): start it now, so
    # that the cluster's threads, which would start it, keep the mask they inherit.
    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # runs a pending Ctrl-C's handler


def _kill_workers(cluster) -> None:
    """Kill the worker processes of a local ``cluster`` at once, before it closes.

    A worker closed by its nanny while the scheduler closes too can log errors with
    tracebacks (a heartbeat cut short by the closing connection pool, data a departed
    peer held; under load in most shutdowns), and a worker still running a task answers
    late, so anything it prints would land after whatever the caller prints last. By
    then the workers hold nothing anyone needs: the results are gathered, or the work is
    abandoned (an error, Ctrl-C). A killed process says nothing. The nanny is told first
    not to restart it, and distributed removes the killed workers' scratch folders when
    it next starts one. Workers in this process (``"threads"``) have no process to kill.
    """
    from distributed import Nanny

    for nanny in list(getattr(cluster, "workers", {}).values()):
        if not isinstance(nanny, Nanny):
            continue
        nanny.close_gracefully(reason="shutdown")  # no restart when its process dies
        pid = nanny.pid
        if pid is not None:
            # Best effort: a process that has just exited is gone already.
            with contextlib.suppress(OSError):
                os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))  # Windows has no SIGKILL


@contextlib.contextmanager
def workers_killed_on_exit(cluster) -> Iterator[None]:
    """On the way out, whatever the way (done, an error, Ctrl-C or SIGTERM), kill the
    local cluster's worker processes before the client and the cluster close: see
    :func:`_kill_workers`."""
    try:
        yield
    finally:
        _kill_workers(cluster)


#: distributed's loggers that report a comm closing under them: while a local cluster
#: closes, its own workers and scheduler go away mid-message, which is expected.
_CLOSING_LOGGERS = ("distributed.batched", "distributed.comm", "distributed.client", "distributed.core")


@contextlib.contextmanager
def quiet_when_closing() -> Iterator[Any]:
    """Yield a function that quiets :data:`_CLOSING_LOGGERS` below ERROR from then on, until
    the block ends: a local cluster's close would otherwise log "Batched Comm Closed" with
    a traceback, now and then, after work that ended well."""
    saved: dict[str, int] = {}

    def closing() -> None:
        for name in _CLOSING_LOGGERS:
            log = logging.getLogger(name)
            saved.setdefault(name, log.level)
            log.setLevel(max(log.getEffectiveLevel(), logging.ERROR))

    try:
        yield closing
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def _usable_cores() -> int:
    """The cores this process may run on (a container's, ``taskset``'s or a batch job's
    share), not every core of the machine: one worker per core is one per usable core."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def local_cluster(kind: str = "processes", n_workers: int | None = None, **kwargs):
    """A :class:`distributed.LocalCluster` for ``kind`` ``"processes"`` or ``"threads"``
    (or dask's aliases; see the module docstring).

    ``"processes"``: ``n_workers`` (default: one per core) single-threaded worker
    processes; ``"threads"``: one worker in this process with that many threads.

    Worker processes start without Dask's ``MALLOC_TRIM_THRESHOLD_=65536``: it makes
    glibc hand freed memory back to the OS at once, and the simulator's megabyte-sized
    temporaries then page-fault on every block (docs/performance.md, "Sweeps"). They ignore
    Ctrl-C: this process stops them (see :func:`_ctrl_c_held_back`); a Ctrl-C while the
    cluster starts is raised once it has started, and the cluster is then closed.

    The cluster starts with dask's timeouts at least :data:`BUSY_MACHINE`, and its
    scheduler and workers keep them. A :class:`distributed.Client` made afterwards reads
    dask's config as it is then: make it inside ``dask.config.set(busy_machine_config())``
    too (as :func:`connect` does), or it keeps dask's defaults.
    """
    import dask
    from distributed import LocalCluster

    resolved = local_kind(kind) if isinstance(kind, str) else None
    if resolved not in ("processes", "threads"):
        raise InvalidParameterError(
            f"kind must be 'processes' or 'threads' (or 'multiprocessing', 'threading'); got {kind!r}"
        )
    cores = n_workers or _usable_cores()
    options = dict(dashboard_address=":0", silence_logs=logging.ERROR)
    options.update(kwargs)
    if resolved == "threads":
        options.update(n_workers=1, threads_per_worker=cores, processes=False)
    else:
        options.update(n_workers=cores, threads_per_worker=1, processes=True)
    # A Nanny copies its pre-spawn environment into this process's os.environ (and
    # children inherit it), so an earlier default cluster leaves the variable behind.
    inherited = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    cluster = None
    config = {**busy_machine_config(), "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
    try:
        with (
            dask.config.set(config),
            _ctrl_c_held_back(),
        ):
            cluster = LocalCluster(**options)
    except BaseException:
        if cluster is not None:  # started, then the Ctrl-C held back during start-up was raised
            _kill_workers(cluster)
            cluster.close()
        raise
    finally:
        if inherited is not None:
            os.environ["MALLOC_TRIM_THRESHOLD_"] = inherited
    return cluster


@contextlib.contextmanager
def connect(
    client: ClientLike = None, *, timeout: float | None = None, n_workers: int | None = None, security=None
) -> Iterator[Any]:
    """Yield a :class:`distributed.Client` for ``client``, or None for ``"synchronous"``.

    Parameters
    ----------
    client : None, str or distributed.Client
        Where to run: see the module docstring for the accepted values.
    timeout : float, optional
        Seconds to wait for a scheduler given by address to connect and answer (a
        positive number); default dask's ``distributed.comm.timeouts.connect``.
    n_workers : int, optional
        Workers (``"processes"``) or threads (``"threads"``) of a local cluster made
        here; default one per core.
    security : distributed.security.Security, optional
        Certificates for a ``tls://`` address; default dask's ``distributed.comm.tls``.

    Clusters and clients made here are closed on exit, also on error or Ctrl-C; a Client
    passed in, or the current client found for ``None``, is left open.

    Examples
    --------
    >>> from ensstab_dask.cluster import connect
    >>> with connect("synchronous") as client:
    ...     print(client)
    None
    """
    from distributed import Client

    if client is None:
        client = (SESSIONS[-1].start() if SESSIONS else None) or current_client() or "processes"
    if isinstance(client, Client):
        with _reporting_loss(client, f"at {client.scheduler.address}"):
            yield client
        return
    if not isinstance(client, str):
        raise InvalidParameterError(param("client") + f" must be {_ACCEPTED}; got {type(client).__name__}")
    kind = local_kind(client)
    if kind == "synchronous":
        yield None
        return
    if kind is not None:
        # Not the default client: work elsewhere in this process keeps using the user's.
        import dask

        with (
            quiet_when_closing() as closing,
            dask.config.set(busy_machine_config()),
            local_cluster(kind, n_workers) as cluster,
        ):
            with (
                Client(cluster, set_as_default=False) as c,
                _reporting_loss(c, "of the local cluster") as c,
                workers_killed_on_exit(cluster),
            ):
                try:
                    yield c
                finally:
                    closing()
        return
    if ":" not in client:  # neither a name nor host:port; most likely a misspelt name
        raise InvalidParameterError(param("client") + f" must be {_ACCEPTED}; got {client!r}")
    address = check_address(client.strip())
    warn_if_plain_and_remote(address)
    security = check_security(address, security)
    if timeout is None:
        import dask
        from dask.utils import parse_timedelta

        timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds")
    timeout = check_real(timeout, "timeout", minimum=0.0, open_minimum=True)
    failure: SchedulerUnreachable | None = None
    try:
        handshake(address, timeout, security)
        c = Client(address, timeout=f"{timeout}s", security=security, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        # tornado's "IOStream is not idle; cannot convert to SSL": the TLS handshake began on
        # a connection that a tcp:// scheduler had already closed (a race, seen once in CI).
        tls_refused = isinstance(exc, ValueError) and "SSL" in str(exc) and address.startswith("tls://")
        if isinstance(exc, ValueError) and not tls_refused:
            raise
        _close_unstarted(exc)
        if address.startswith("tls://") and (tls_refused or not str(exc)):
            # A scheduler that does not speak TLS (a tcp:// one) answers the handshake with
            # nothing: distributed's error then has no words of its own.
            reason = "no TLS handshake: is the scheduler a tcp:// one, or is the address's port a different service?"
        else:
            reason = str(exc) or type(exc).__name__
        failure = SchedulerUnreachable(
            f"could not reach the Dask scheduler at {address} within {timeout:g} s ({reason})"
        )
    except Exception as exc:  # noqa: BLE001 - distributed's own asserts on what the peer sent
        # It answered the check as a scheduler, then the client's requests as none does.
        _close_unstarted(exc)
        failure = SchedulerUnreachable(
            f"the listener at {address} answered as a Dask scheduler, then not in its protocol "
            f"({type(exc).__name__} in distributed's client): is a scheduler really running there?"
        )
    if failure is not None:
        # Raised outside the handler, so no traceback keeps the half-built client alive.
        raise failure
    try:
        with _reporting_loss(c, f"at {address}"):
            yield c
    finally:
        c.close()


#: The sessions open in this process, innermost last (:func:`~ensstab_dask.cluster.session.session`):
#: ``connect(None)`` starts and uses the innermost one's cluster.
SESSIONS: list = []


def _close_unstarted(exc: BaseException) -> None:
    """Close the client whose ``__init__`` raised ``exc``, while its event loop still runs.

    Left to the garbage collector (often at exit, when the loop has stopped), its close
    times out after 10 s and prints a traceback under the one-line error.
    """
    from distributed import Client

    tb = exc.__traceback__
    while tb is not None:
        half_built = tb.tb_frame.f_locals.get("self")
        if isinstance(half_built, Client):
            with contextlib.suppress(Exception):
                half_built.close(timeout=2)
            return
        tb = tb.tb_next
