"""Addresses where something listens that is not a Dask scheduler that answers: a silent
TCP listener, a real HTTP server, a service that talks first, a real scheduler stopped
with SIGSTOP. The connection, distributed's handshake and the scheduler's first answer
all come within the timeout, or the caller gets one line saying so: distributed's own
timeout bounds the TCP connection alone, and each of these held the CLI for a minute or
more (the talking service: "out of memory", then a ``Client.__del__`` traceback)."""

from __future__ import annotations

import socket
import sys
import threading
import time

import pytest
from faults import HTTP_ANSWER, SWEEP, http_server, listener, pickling_answer, run_cli, stopped_scheduler
from pace import Pace

import ensstab_dask as es
from ensstab_dask.cluster import connect

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP")

HOSTILE = {
    "silent": listener,
    "http-server": http_server,
    "talks-first": lambda: listener(HTTP_ANSWER),
    "stopped-scheduler": stopped_scheduler,
}
SAID = {
    "silent": "it accepted the connection but gave no Dask handshake and no answer",
    "http-server": "it accepted the connection but gave no Dask handshake and no answer",
    "talks-first": "it answered, but not in Dask's protocol",
    "stopped-scheduler": "it accepted the connection but gave no Dask handshake and no answer",
}


def _connect_in_a_thread(address: str, timeout: float, bound: float, security=None) -> BaseException | None:
    """What ``connect(address, timeout=..., security=...)`` raised, or None; a connect still
    waiting after ``bound`` seconds fails the test (its thread is left behind, a daemon)."""
    outcome: list = []

    def attempt() -> None:
        try:
            with connect(address, timeout=timeout, security=security):
                outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(bound)
    assert outcome, f"connect({address!r}, timeout={timeout}) still waiting after {bound} s"
    return outcome[0]


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_connect_gives_up_within_its_timeout(kind, busy_machine):
    with HOSTILE[kind]() as address:
        pace = Pace()
        start = time.monotonic()
        raised = _connect_in_a_thread(address, 2, bound=pace.bound(2) + 60)
        took = time.monotonic() - start
    assert isinstance(raised, es.SchedulerUnreachable), repr(raised)
    assert f"at {address} within 2 s ({SAID[kind]}" in str(raised)
    pace.assert_within(took, 2, what=f"connect() to a {kind} listener")


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_the_cli_says_so_in_one_line_within_its_timeout(kind, tmp_path, busy_machine):
    with HOSTILE[kind]() as address:
        pace = Pace()
        ran = run_cli(
            *SWEEP,
            "--n-useful",
            "20",
            "--p",
            "0.5",
            "--scheduler",
            address,
            "--timeout",
            "3",
            "--store",
            "s.zarr",
            cwd=tmp_path,
            timeout=pace.bound(3) + 120,
        )
    assert not ran.timed_out, f"still running after {ran.seconds:.0f} s"
    assert ran.one_line_error(), ran.stderr[-3000:]
    assert f"could not reach the Dask scheduler at {address} within 3 s ({SAID[kind]}" in ran.lines[0]
    pace.assert_within(ran.seconds, 3, what=f"the CLI with a {kind} listener")
    assert not (tmp_path / "s.zarr").exists()  # a sweep that cannot start leaves no store


def test_tls_to_a_listener_that_accepts_and_never_answers_says_no_tls_handshake(busy_machine):
    """The TCP connection and the TLS handshake shared one wait: a listener that accepted
    and sent nothing back (as a tcp:// scheduler slowed by other work sends its greeting
    late) was said "Timed out trying to connect". The handshake now has its own wait, on
    the connection accepted, and its failure its own words. Nothing listening at all keeps
    distributed's words."""
    from distributed.security import Security

    security = Security.temporary()  # a client certificate: the handshake never gets to it
    accepted = threading.Event()
    with listener(accepted=accepted) as address:
        address = address.replace("tcp://", "tls://")
        pace = Pace()
        start = time.monotonic()
        raised = _connect_in_a_thread(address, 2, bound=pace.bound(2) + 60, security=security)
        took = time.monotonic() - start
    assert accepted.is_set()
    assert isinstance(raised, es.SchedulerUnreachable), repr(raised)
    assert f"at {address} within 2 s (no TLS handshake: is the scheduler a tcp:// one" in str(raised), str(raised)
    pace.assert_within(took, 2, what="connect() over TLS to a silent listener")

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        nothing = f"tls://127.0.0.1:{free.getsockname()[1]}"
    raised = _connect_in_a_thread(nothing, 1, bound=pace.bound(1) + 60, security=security)
    assert isinstance(raised, es.SchedulerUnreachable), repr(raised)
    assert f"at {nothing} within 1 s (Timed out trying to connect to {nothing}" in str(raised), str(raised)


@pytest.mark.parametrize("how", ["pickled", "serialized", "raw"])
def test_a_listener_answering_with_a_pickle_runs_no_code_here(how, tmp_path):
    """distributed's reader unpickles what a ``__Pickled__`` or ``__Serialized__`` entry
    holds: the check before the Client ran it (the file was created) and then said the
    address was not a scheduler. It now reads the answer with plain msgpack alone."""
    touched = tmp_path / "touched"
    with listener(pickling_answer(touched, how)) as address:
        raised = _connect_in_a_thread(address, 5, bound=60)
        ran = run_cli(
            *SWEEP,
            "--n-useful",
            "20",
            "--p",
            "0.5",
            "--scheduler",
            address,
            "--timeout",
            "5",
            cwd=tmp_path,
            timeout=120,
        )
    assert not touched.exists(), "the listener's pickle ran in this process"
    assert isinstance(raised, es.SchedulerUnreachable), repr(raised)
    assert "it answered, but not in Dask's protocol" in str(raised)
    assert ran.one_line_error(), ran.stderr[-3000:]
    assert (
        f"could not reach the Dask scheduler at {address} within 5 s (it answered, but not in Dask's protocol"
        in (ran.lines[0])
    )


def test_the_check_before_the_client_never_calls_distributeds_decoder(tmp_path, monkeypatch):
    """Not one call into distributed's message decoder while connect() meets a hostile
    listener (a spy that counts calls, the decoder itself unchanged): even a bare pickle,
    which creates nothing, is never handed to it."""
    import distributed.protocol
    import distributed.protocol.core

    calls: list = []
    real = distributed.protocol.core.loads

    def counted(*args, **kwargs):
        # Only the check's own thread: other clients of this process decode their messages.
        if threading.current_thread().name == "ensstab-handshake":
            calls.append(args)
        return real(*args, **kwargs)

    for module in (distributed.protocol, distributed.protocol.core):
        monkeypatch.setattr(module, "loads", counted)
    for how in ("pickled", "raw"):
        with listener(pickling_answer(tmp_path / how, how)) as address:
            raised = _connect_in_a_thread(address, 5, bound=60)
        assert isinstance(raised, es.SchedulerUnreachable) and not (tmp_path / how).exists(), repr(raised)
    assert calls == []


def test_a_timeout_that_is_not_a_positive_number_is_refused():
    for timeout in (-5, 0, float("nan")):
        with pytest.raises(ValueError, match="timeout must be"):
            with connect("tcp://127.0.0.1:9", timeout=timeout):
                pass


def test_a_real_scheduler_passes_the_check_and_a_worker_is_named_as_one(two_process_client):
    """The check speaks distributed's wire format itself: a real scheduler answers it, and
    a worker's address, given by mistake, is named for what it is."""
    from ensstab_dask.cluster.handshake import handshake

    handshake(two_process_client.scheduler.address, 30, None)  # raises if the scheduler's answer is refused
    worker = next(iter(two_process_client.scheduler_info()["workers"]))
    raised = _connect_in_a_thread(worker, 30, bound=90)
    assert isinstance(raised, es.SchedulerUnreachable), repr(raised)
    assert "it answered in Dask's protocol, but not as a scheduler: a worker's" in str(raised)


def test_a_schedulers_identity_with_no_scheduler_behind_it_is_one_line(tmp_path):
    """The check passes (it answers as a Scheduler); distributed's client then asserts on what
    it gets: said in one line, no traceback, none from the half-built client's finaliser."""
    from faults import scheduler_identity_answer

    with listener(scheduler_identity_answer()) as address:
        raised = _connect_in_a_thread(address, 3, bound=60)
        assert isinstance(raised, es.SchedulerUnreachable), repr(raised)
        assert str(raised).startswith(f"the listener at {address} answered as a Dask scheduler, then not in its")
        ran = run_cli(*SWEEP, "--n-useful", "20", "--p", "0.5", "--scheduler", address, "--timeout", "3", cwd=tmp_path)
    assert ran.one_line_error(), ran.stderr[-3000:]
    assert "answered as a Dask scheduler, then not in its protocol" in ran.lines[0]


def test_a_listener_saying_only_that_it_is_a_scheduler_is_refused_by_the_check():
    """``{"type": "Scheduler"}`` alone once passed the check, and the Client then unpickled
    what the listener sent: now every field of a scheduler's identity is asked for."""
    from faults import scheduler_identity_answer

    with listener(scheduler_identity_answer(whole=False)) as address:
        raised = _connect_in_a_thread(address, 3, bound=60)
    assert isinstance(raised, es.SchedulerUnreachable), repr(raised)
    assert "without the identity every scheduler gives" in str(raised)


@pytest.mark.parametrize(
    "address, warned",
    [("tcp://192.0.2.1:8786", True), ("192.0.2.1:8786", True), ("tcp://127.0.0.1:9", False), ("tcp://[::1]:9", False)],
)
def test_a_plain_tcp_address_of_another_machine_is_warned_of(caplog, address, warned):
    """A Dask client runs what its scheduler sends: across a network that is whoever answers."""
    import logging

    with caplog.at_level(logging.WARNING, logger="ensstab_dask.cluster"):
        with pytest.raises(es.SchedulerUnreachable):
            with connect(address, timeout=0.5):
                pass
    said = [r.getMessage() for r in caplog.records if "plain tcp:// address of another machine" in r.getMessage()]
    assert len(said) == (1 if warned else 0), said
    if warned:
        assert said[0].startswith("tcp://192.0.2.1:8786 is a plain tcp:// address of another machine")
        assert said[0].endswith("use a tls:// address and pass security=Security(...)")
