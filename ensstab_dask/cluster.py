"""Where the work runs: a local Dask cluster by default, or any cluster by address.

``client`` arguments across the package accept:

* ``None`` or ``"processes"``: a :class:`distributed.LocalCluster` of one single-threaded
  worker process per core (the default: the simulator holds the GIL for much of its
  time, so processes beat threads; see ``benchmarks/bench_sweep.py``);
* ``"threads"``: a LocalCluster of one process with one thread per core;
* ``"synchronous"``: no cluster, everything in this process (debugging, tiny jobs);
* a :class:`distributed.Client`: used as is and left open;
* an address such as ``"tcp://10.0.0.5:8786"`` (or ``tls://...`` with ``security``):
  a client is connected within ``timeout`` seconds or :class:`SchedulerUnreachable` is
  raised; a malformed address raises ValueError at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any, Union

__all__ = [
    "SchedulerUnreachable",
    "SchedulerLost",
    "connect",
    "check_address",
    "local_cluster",
    "map_shared",
    "ClientLike",
]

ClientLike = Union[None, str, Any]
_LOCAL = ("processes", "threads", "synchronous")


class SchedulerUnreachable(ConnectionError):
    """The Dask scheduler at the given address could not be reached in time."""


class SchedulerLost(ConnectionError):
    """The connection to the Dask scheduler broke while work was running."""


def _connection_lost(exc: BaseException) -> bool:
    from distributed.comm.core import CommClosedError

    # distributed cancels every pending future with this reason when the scheduler goes.
    return isinstance(exc, CommClosedError) or "scheduler-connection-lost" in str(exc)


@contextlib.contextmanager
def _reporting_loss(c, where: str) -> Iterator[Any]:
    try:
        yield c
    except BaseException as exc:  # FutureCancelledError is a BaseException (CancelledError)
        if _connection_lost(exc):
            raise SchedulerLost(f"lost the connection to the Dask scheduler {where} while work was running") from exc
        raise


def local_cluster(kind: str = "processes", n_workers: int | None = None, **kwargs):
    """The local default: ``n_workers`` (default: one per core) single-threaded worker
    processes, or with ``kind="threads"`` one process with that many threads.

    Worker processes start without Dask's ``MALLOC_TRIM_THRESHOLD_=65536``: it makes
    glibc hand freed memory back to the OS at once, and the simulator's megabyte-sized
    temporaries then page-fault on every block (measured: 15-25 % slower).
    """
    import dask
    from distributed import LocalCluster

    cores = n_workers or os.cpu_count() or 1
    options = dict(dashboard_address=":0", silence_logs=logging.ERROR)
    options.update(kwargs)
    if kind == "threads":
        return LocalCluster(n_workers=1, threads_per_worker=cores, processes=False, **options)
    # A Nanny copies its pre-spawn environment into this process's os.environ (and
    # children inherit it), so an earlier default cluster leaves the variable behind.
    inherited = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
            return LocalCluster(n_workers=cores, threads_per_worker=1, processes=True, **options)
    finally:
        if inherited is not None:
            os.environ["MALLOC_TRIM_THRESHOLD_"] = inherited


def check_address(address: str) -> str:
    """Validate a scheduler address before any connection attempt; return it normalised.

    A malformed address must fail at once: a Client half-built from one can hang in
    its finaliser.
    """
    from distributed.comm.addressing import get_address_host_port, normalize_address

    try:
        normal = normalize_address(address)
        host, port = get_address_host_port(normal)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"client: malformed scheduler address {address!r}: {exc}") from None
    if not host or not 0 < int(port) < 65536:
        raise ValueError(
            f"client: malformed scheduler address {address!r}: expected scheme://host:port with port 1-65535"
        )
    return normal


def _check_security(address: str, security):
    """``security`` for ``address``; a tls:// address without certificates fails here,
    at once: distributed would fail later with a TypeError, half-built and slow to clean up.
    """
    if not address.startswith("tls://"):
        return security
    from distributed.security import Security

    sec = security if security is not None else Security()  # Security() reads the dask config
    if not isinstance(sec, Security):
        raise TypeError(f"security must be a distributed.security.Security; got {type(sec).__name__}")
    if not (sec.tls_ca_file and sec.tls_client_cert):
        raise ValueError(
            f"client: {address} is a TLS scheduler and no client certificates were given: pass "
            "security=distributed.security.Security(tls_ca_file=..., tls_client_cert=..., tls_client_key=...) "
            "(CLI: --tls-ca-file, --tls-cert, --tls-key) or set distributed.comm.tls in the dask config"
        )
    return sec


@contextlib.contextmanager
def connect(
    client: ClientLike = None, *, timeout: float = 10.0, n_workers: int | None = None, security=None
) -> Iterator[Any]:
    """Yield a :class:`distributed.Client` for ``client`` (None for ``"synchronous"``).

    Clusters and clients made here are closed on exit, also on error or Ctrl-C; a
    Client passed in is left open.
    """
    from distributed import Client

    if isinstance(client, Client):
        with _reporting_loss(client, f"at {client.scheduler.address}"):
            yield client
        return
    if client is None or client in _LOCAL:
        kind = client or "processes"
        if kind == "synchronous":
            yield None
            return
        with (
            local_cluster(kind, n_workers) as cluster,
            Client(cluster) as c,
            _reporting_loss(c, "of the local cluster") as c,
        ):
            yield c
        return
    if not isinstance(client, str):
        raise TypeError(
            "client must be None, 'processes', 'threads', 'synchronous', a scheduler address string "
            f"or a distributed.Client; got {type(client).__name__}"
        )
    address = check_address(client.strip())
    security = _check_security(address, security)
    try:
        c = Client(address, timeout=f"{timeout}s", security=security, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise SchedulerUnreachable(
            f"could not reach the Dask scheduler at {address} within {timeout:g} s ({exc})"
        ) from None
    try:
        with _reporting_loss(c, f"at {address}"):
            yield c
    finally:
        c.close()


def map_shared(
    fn, shared: tuple, tasks: list[tuple], *, client: ClientLike = None, timeout: float = 10.0, security=None
):
    """``[fn(*shared, *task) for task in tasks]``, run where ``client`` says.

    The ``shared`` arguments (the data) go to the workers once, by broadcast scatter,
    not once per task; results come back in the order of ``tasks``.
    """
    with connect(client, timeout=timeout, security=security) as c:
        if c is None:
            return [fn(*shared, *task) for task in tasks]
        # hash=False: keys hashed from the content are shared by back-to-back calls with the
        # same data, and the release of one call's futures can then delete the next call's
        # inputs ("lost dependencies"; dask/distributed#4612).
        remote = c.scatter(list(shared), broadcast=True, hash=False)
        futures = [c.submit(fn, *remote, *task, pure=False) for task in tasks]
        return c.gather(futures)
