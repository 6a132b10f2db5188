"""The check before a :class:`distributed.Client` is made for an address: that a Dask
scheduler answers there, within the connect timeout, and that nothing the address sends
runs code in this process meanwhile.

``distributed.Client``'s timeout bounds the TCP connection only: a listener that accepts
and then never answers (a stopped scheduler, a silent service) holds it forever, and
another service's answer (an HTTP server's) is read as a message of absurd length. And
distributed's own reader hands what the peer sends to an object hook that unpickles any
``__Pickled__`` or ``__Serialized__`` entry: a listener at a mistyped or hostile address
would run code in the client before it was known to be a scheduler. So the check speaks
distributed's wire format itself, over a connection of its own (TLS with the client's
certificates for ``tls://``), and decodes what comes back with plain msgpack alone, every
size bounded before it is read. The Client, once made, trusts the scheduler as every Dask
client does (docs/clusters.md, "What a Dask client trusts").
"""

from __future__ import annotations

import asyncio
import pickle
import random
import socket
import ssl
import struct
import sys
import threading

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.wording import param

__all__ = ["handshake"]


class _NoAnswer(TimeoutError):
    """A listener at the address that did not answer as a Dask scheduler in time."""


class _NotDask(OSError):
    """A listener at the address that answered, but not in Dask's protocol."""

    def __init__(self) -> None:
        super().__init__("it answered, but not in Dask's protocol: is the port another service's?")


#: The largest message read from an address. A scheduler's handshake and its identity,
#: asked for no workers, are a few hundred bytes; a length header claiming more is another
#: service's bytes (an HTTP answer reads as exabytes), refused before anything is read or
#: allocated.
_MAX_MESSAGE = 1 << 20

#: OpenSSL's reasons for bytes that are not TLS at all: a tcp:// scheduler talks first, in
#: Dask's protocol, and another service in its own.
_NOT_TLS = frozenset(
    ("WRONG_VERSION_NUMBER", "HTTP_REQUEST", "PACKET_LENGTH_TOO_LONG", "RECORD_LAYER_FAILURE", "UNKNOWN_PROTOCOL")
)


def _not_tls(exc: ssl.SSLError) -> bool:
    """Whether the TLS handshake failed because the peer does not speak TLS at all."""
    return isinstance(exc, (ssl.SSLEOFError, ssl.SSLZeroReturnError)) or getattr(exc, "reason", None) in _NOT_TLS


def _wire_message(msg: dict) -> bytes:
    """``msg`` as distributed's TCP comm writes a message of plain data: an 8-byte
    length, then the frames' prelude (how many frames, each one's length) and the one
    frame, ``msg`` in msgpack (what :func:`distributed.protocol.dumps` gives for it)."""
    import msgpack

    frame = msgpack.packb(msg, use_bin_type=True)
    body = struct.pack("<QQ", 1, len(frame)) + frame
    return struct.pack("<Q", len(body)) + body


async def _read_wire_message(reader: asyncio.StreamReader) -> object:
    """The next message from ``reader``, its first frame decoded by plain msgpack alone:
    dicts, lists, strings, numbers and bytes (an extension type stays an ``ExtType``),
    never an object of a class the peer names."""
    import msgpack

    (total,) = struct.unpack("<Q", await reader.readexactly(8))
    if not 16 <= total <= _MAX_MESSAGE:
        raise _NotDask()
    body = await reader.readexactly(total)
    (n_frames,) = struct.unpack_from("<Q", body)
    if not 1 <= n_frames <= total // 8 - 1:
        raise _NotDask()
    first = struct.unpack_from("<Q", body, 8)[0]
    start = 8 * (1 + n_frames)
    if start + first > total:
        raise _NotDask()
    try:
        return msgpack.unpackb(body[start : start + first], raw=False, strict_map_key=False, use_list=True)
    except (ValueError, msgpack.UnpackException):  # msgpack's errors, invalid UTF-8 among them
        raise _NotDask() from None


async def _open(
    address: str, context: ssl.SSLContext | None, server_hostname: str | None, within: float
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to ``address`` (TLS with ``context`` when given), within ``within`` s.

    As distributed does: a refused connection is retried, with jittered backoff, until
    the time is up (a scheduler may be starting), and that ends before the whole check's,
    so that a port where nothing listens is reported as distributed reports it, not as a
    listener that did not answer.

    With ``context``, the TLS handshake comes after, on the connection accepted, within
    what is left of ``within``: a listener that accepted and then gave no handshake (cut
    off, not TLS at all, or none in time: a tcp:// scheduler, slowed, talks first and
    late) is said to be one that does not speak TLS, not one that could not be reached.
    """
    from distributed.comm.addressing import get_address_host_port

    host, port = get_address_host_port(address)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    attempt = 0
    while True:
        try:
            sock = await asyncio.wait_for(_connected_socket(host, port), max(deadline - loop.time(), 0.001))
            break
        except (OSError, asyncio.TimeoutError) as exc:
            left = deadline - loop.time()
            if left <= 0:
                raise OSError(f"Timed out trying to connect to {address} after {within:.2g} s") from exc
            await asyncio.sleep(random.uniform(0, min(left, 0.01 * 2**attempt)))
            attempt += 1
    if context is None:
        return await asyncio.open_connection(sock=sock)
    # At least a twentieth of the time: a connection accepted just before the deadline is
    # not a listener that failed a handshake it had a millisecond for.
    handshake_within = max(deadline - loop.time(), within / 20)
    try:
        # The connected socket handed over whole, TLS from its first byte: on Python 3.10
        # as on later ones (StreamWriter.start_tls is 3.11's), and no byte a peer that
        # talks first sends (a tcp:// scheduler's greeting) is read as plain data before
        # TLS starts, where the handshake would never see it and wait for its timeout.
        return await asyncio.open_connection(
            sock=sock, ssl=context, server_hostname=server_hostname, ssl_handshake_timeout=handshake_within
        )
    except ssl.SSLCertVerificationError:
        raise
    except (ssl.SSLError, ConnectionResetError, ConnectionAbortedError, EOFError) as exc:
        # ConnectionAbortedError is also asyncio's word for a handshake out of time.
        if isinstance(exc, ssl.SSLError) and not _not_tls(exc):
            raise  # the scheduler refused our certificate, or we refused its: the TLS words
        raise OSError(
            "no TLS handshake: is the scheduler a tcp:// one, or is the address's port a different service?"
        ) from None


async def _connected_socket(host: str, port: int) -> socket.socket:
    """A TCP connection to ``host``:``port``, on the first of its addresses that accepts;
    the error of the last one tried if none does."""
    loop = asyncio.get_running_loop()
    error: OSError = OSError(f"no address found for {host}")
    for family, kind, proto, _, where in await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, where)
        except OSError as exc:
            sock.close()
            error = exc
            continue
        except BaseException:  # cancelled: the deadline, or the whole check's
            sock.close()
            raise
        return sock
    raise error


async def _ask(address: str, context: ssl.SSLContext | None, server_hostname: str | None, timeout: float) -> object:
    """distributed's handshake with ``address``, then its answer to ``identity``."""
    reader, writer = await _open(address, context, server_hostname, 0.9 * timeout)
    try:
        # Each side sends its settings; ours ask for no compression, and a scheduler then
        # compresses nothing it sends us.
        mine = {"compression": None, "python": tuple(sys.version_info)[:3], "pickle-protocol": pickle.HIGHEST_PROTOCOL}
        writer.write(_wire_message(mine))
        await writer.drain()
        theirs = await _read_wire_message(reader)
        if not isinstance(theirs, dict) or "pickle-protocol" not in theirs:
            raise _NotDask()
        writer.write(_wire_message({"op": "identity", "n_workers": 0, "reply": True}))
        await writer.drain()
        return await _read_wire_message(reader)
    except asyncio.IncompleteReadError:
        raise OSError(
            "it closed the connection without answering as a Dask scheduler: "
            + ("a tls:// one, or " if context is None else "")
            + "another service on that port?"
        ) from None
    finally:
        writer.transport.abort()


def _verdict(answer: object) -> None:
    """Raise what ``answer`` (what :func:`_ask` returned or raised) says is wrong, if anything."""
    if type(answer) in (asyncio.TimeoutError, TimeoutError):  # wait_for's, not a connection's OSError
        raise _NoAnswer(
            "it accepted the connection but gave no Dask handshake and no answer: a stopped scheduler, or another "
            "service on that port?"
        )
    if isinstance(answer, BaseException):
        raise answer  # refused, unreachable, a TLS failure, not Dask's protocol: as the Client reports them
    if isinstance(answer, dict) and answer.get("status") == "uncaught-error":
        # A Dask server whose identity takes no n_workers: a worker or a nanny. Its error
        # comes pickled, and stays unread.
        raise OSError("it answered in Dask's protocol, but not as a scheduler: a worker's or a nanny's address?")
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        what = answer.get("type") if isinstance(answer, dict) else None
        if isinstance(what, str) and what.isidentifier() and len(what) < 40:
            raise OSError(f"it answered, but as a Dask {what}, not the scheduler")
        raise _NotDask()
    if not _a_schedulers_identity(answer):
        raise OSError(
            "it answered as a Dask scheduler, but without the identity every scheduler gives (its id, address, "
            "start time and workers): not a distributed scheduler"
        )


def _a_schedulers_identity(answer: dict) -> bool:
    """Whether ``answer`` has every field of ``distributed.Scheduler.identity``, each of its
    type: a listener that only says ``{"type": "Scheduler"}`` is not taken for one. (Any
    field can be copied by a listener written to pass: only TLS with a CA of your own tells
    your scheduler from another; docs/clusters.md, "What a Dask client trusts".)"""
    number = (int, float)
    return (
        isinstance(answer.get("id"), str)
        and answer["id"].startswith("Scheduler-")
        and isinstance(answer.get("address"), str)
        and "://" in answer["address"]
        and isinstance(answer.get("started"), number)
        and isinstance(answer.get("services"), dict)
        and isinstance(answer.get("workers"), dict)
        and isinstance(answer.get("n_workers"), int)
        and isinstance(answer.get("total_threads"), int)
        and isinstance(answer.get("total_memory"), number)
    )


def handshake(address: str, timeout: float, security) -> None:
    """Connect to ``address``, complete distributed's handshake and have the scheduler
    answer one request (its identity), all within ``timeout`` seconds; decode nothing it
    sends but by plain msgpack (module docstring).

    Raises what ``distributed.Client`` raises for an unreachable address (OSError,
    TimeoutError), with words of its own for a listener that is not a scheduler. It runs
    in a thread of its own, on an event loop of its own, so that it works from a thread
    whose loop is running (a notebook) and a Ctrl-C meanwhile is raised at once.
    """
    from distributed.comm.addressing import get_address_host_port

    tls = address.startswith("tls://")
    args = security.get_connection_args("client") if security is not None else {}
    if not tls and args.get("require_encryption"):
        raise InvalidParameterError(
            param("client") + f": {address} is not a tls:// address, and the dask config requires encryption "
            "(distributed.comm.require-encryption)"
        )
    context = args.get("ssl_context") if tls else None
    if tls and context is None:
        raise InvalidParameterError(
            param("client") + f": {address} is a TLS scheduler and no client certificates were given"
        )
    # As distributed's TLS connector: the configured name, else the address's host.
    server_hostname = (args.get("server_hostname") or get_address_host_port(address)[0]) if tls else None
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(asyncio.run(asyncio.wait_for(_ask(address, context, server_hostname, timeout), timeout)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome.append(exc)

    probe = threading.Thread(target=run, name="ensstab-handshake", daemon=True)
    probe.start()
    probe.join(timeout + 5.0)  # the loop itself stops at timeout; the margin is for a loaded machine
    _verdict(outcome[0] if outcome else asyncio.TimeoutError())
