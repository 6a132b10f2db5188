"""A scheduler address and its certificates, checked before any connection: a malformed
address or a bad certificate fails at once, in words of its own (a Client half-built from
one can hang in its finaliser, and distributed reports a bad file as an unreachable
scheduler); a plain ``tcp://`` address of another machine is warned of.
"""

from __future__ import annotations

import logging
import os

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.wording import Code, param

__all__ = ["check_address", "check_security", "check_certificates", "warn_if_plain_and_remote"]

logger = logging.getLogger("ensstab_dask.cluster")  # the public name, not the private module's


#: The longest scheduler address accepted: a scheme, a host name of at most 253 characters
#: (DNS's limit) or an IPv6 literal, and a port.
_MAX_ADDRESS = 300


def check_address(address: str) -> str:
    """Validate a scheduler address before any connection attempt; return it normalised.

    A malformed address must fail at once: a Client half-built from one can hang in
    its finaliser.
    """
    from distributed.comm.addressing import get_address_host_port, normalize_address

    if isinstance(address, str) and len(address) > _MAX_ADDRESS:
        # Quoted in part: the error is one line, not the whole of what was given.
        raise InvalidParameterError(
            param("client")
            + f": malformed scheduler address {address[:60]!r}... ({len(address):,} characters): a host name "
            f"has at most 253 characters, an address at most {_MAX_ADDRESS}"
        )
    try:
        normal = normalize_address(address)
        host, port = get_address_host_port(normal)
    except (ValueError, TypeError) as exc:
        raise InvalidParameterError(param("client") + f": malformed scheduler address {address!r}: {exc}") from None
    if not host or not 0 < int(port) < 65536:
        raise InvalidParameterError(
            param("client")
            + f": malformed scheduler address {address!r}: expected scheme://host:port with port 1-65535"
        )
    try:
        # What the resolver will do with it: a name with a label over 63 characters, or
        # one that IDNA cannot encode, fails there with a UnicodeError, not an OSError.
        host.encode("idna")
    except UnicodeError as exc:
        raise InvalidParameterError(
            param("client")
            + f": malformed scheduler address {address!r}: the host name is not a valid DNS name ({exc})"
        ) from None
    return normal


def warn_if_plain_and_remote(address: str) -> None:
    """One warning for a plain ``tcp://`` address of another machine: a Dask client trusts
    its scheduler (what it sends is unpickled here), so the scheduler there, or anyone who
    can answer for it on the network, can run code in this process."""
    import ipaddress

    from distributed.comm.addressing import get_address_host_port

    if not address.startswith("tcp://"):
        return
    host = get_address_host_port(address)[0]
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: only "localhost" is known without asking a resolver
        loopback = host.lower() in ("localhost", "localhost.localdomain")
    if not loopback:
        logger.warning(
            f"{address} is a plain tcp:// address of another machine: a Dask client runs what its scheduler sends, "
            "so whoever answers there can run code in this process; connect only to a scheduler you trust, and "
            "across a network use a tls:// address and pass " + param("security", Code("Security(...)"))
        )


def check_security(address: str, security):
    """``security`` for ``address``; a tls:// address without certificates fails here,
    at once: distributed would fail later with a TypeError, half-built and slow to clean up.
    """
    if not address.startswith("tls://"):
        return security
    from distributed.security import Security

    sec = security if security is not None else Security()  # Security() reads the dask config
    if not isinstance(sec, Security):
        raise InvalidParameterError(
            param("security") + f" must be a distributed.security.Security; got {type(sec).__name__}"
        )
    if not (getattr(sec, "tls_ca_file", None) and getattr(sec, "tls_client_cert", None)):
        raise InvalidParameterError(
            param("client")
            + f": {address} is a TLS scheduler and no client certificates were given: pass "
            + param(
                "security",
                Code("distributed.security.Security(tls_ca_file=..., tls_client_cert=..., tls_client_key=...)"),
            )
            + " or set distributed.comm.tls in the dask config"
        )
    check_certificates(sec)
    return sec


def check_certificates(sec) -> None:
    """Load the client's certificates as the TLS handshake will, and name what is wrong
    with them here: distributed would report a bad file as an unreachable scheduler."""
    import ssl

    ca, cert, key = sec.tls_ca_file, sec.tls_client_cert, getattr(sec, "tls_client_key", None)
    files = [f for f in (ca, cert, key) if f]
    if not all(isinstance(f, str) and os.path.isfile(f) for f in files):
        return  # PEM text rather than paths: left to the handshake
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    try:
        ctx.load_verify_locations(cafile=ca)
    except (ssl.SSLError, OSError) as exc:
        raise InvalidParameterError(
            f"the TLS CA file {ca!r} is not a PEM CA certificate ({exc.__class__.__name__}: "
            f"{getattr(exc, 'reason', None) or exc})"
        ) from None
    try:
        ctx.load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        which = f"{cert!r}" + (f" with the key {key!r}" if key else "")
        raise InvalidParameterError(
            f"the TLS client certificate {which}: not a PEM certificate and its private key, or the key does "
            f"not match the certificate ({exc.__class__.__name__}: {getattr(exc, 'reason', None) or exc})"
        ) from None
