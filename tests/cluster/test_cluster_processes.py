"""The cluster path with real processes: a scheduler and workers started by
``deploy/local/start-cluster.sh`` as separate processes over TCP (or TLS) on 127.0.0.1.

Every process a test starts is stopped by its fixture's finaliser, also when the test
fails: ``stop-cluster.sh`` signals each process group, and subprocesses are killed in
``finally`` blocks. As a last resort, schedulers exit after ``ENSSTAB_IDLE_TIMEOUT`` of
idleness and workers 60 s after their scheduler is gone.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import dask
import distributed  # noqa: F401 - its config defaults, before any dask.config.set
import numpy as np
import pytest
import xarray as xr
from pace import Pace
from process_cluster import MAKE_CERTS, ProcessCluster, _env
from sweep_cases import assert_same, blocks_done, wait_for_blocks

import ensstab_dask as es
from ensstab_dask.estimates.records.spending import Cost

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(sys.platform == "win32", reason="deploy/local is bash and POSIX process groups"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="deploy/local/*.sh need bash"),
]

# Heavy enough cells (a few tenths of a second each) that a kill lands mid-sweep on any machine.
N, K = 2000, 20
GRID = dict(n_useful=[30, 60, 120], p=[0.4, 0.6, 0.8, 1.0], m_ensemble=[12], m_stability=40, repeats=3, seed=11)
N_CELLS = 12


@pytest.fixture
def start_cluster(tmp_path):
    """Start clusters on demand; every one of them is stopped when the test ends."""
    started: list[ProcessCluster] = []

    def start(name: str = "cluster", **kwargs) -> ProcessCluster:
        c = ProcessCluster(tmp_path / name, **kwargs)
        started.append(c)
        return c

    yield start
    for c in started:
        c.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ProcessCluster(tmp_path_factory.mktemp("cluster"), n_workers=2)
    yield c
    c.stop()


@pytest.fixture(scope="module")
def reference():
    return es.sweep(N, K, client="synchronous", progress=False, **GRID)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "ensstab_dask.cli", *args]


def _sweep_cli_args(address: str, store: Path) -> list[str]:
    return _cli(
        "sweep",
        "--n-feature",
        str(N),
        "--n-target",
        str(K),
        "--n-useful",
        ",".join(map(str, GRID["n_useful"])),
        "--p",
        ",".join(map(str, GRID["p"])),
        "--m-ensemble",
        ",".join(map(str, GRID["m_ensemble"])),
        "--m-stability",
        str(GRID["m_stability"]),
        "--repeats",
        str(GRID["repeats"]),
        "--seed",
        str(GRID["seed"]),
        "--batch-size",
        "1",
        "--store",
        str(store),
        "--scheduler",
        address,
        "--quiet",
    )


def _resumes_on_a_fresh_cluster(c: ProcessCluster, start_cluster, store: Path, caplog, reference) -> None:
    """With ``c`` stopped, the sweep on ``store`` rerun on a fresh cluster computes only the
    cells it lacks, and gives the reference."""
    c.stop()
    done = blocks_done(store)
    fresh = start_cluster("fresh")
    ds, computed = _resume_count(store, caplog, client=fresh.address, batch_size=1)
    assert computed == N_CELLS - done
    assert_same(reference, ds)


def _resume_count(store: Path, caplog, **kwargs) -> tuple[xr.Dataset, int]:
    """Rerun the sweep on ``store``; return the result and how many cells it computed."""
    with caplog.at_level(logging.INFO, logger="ensstab_dask.sweep"):
        ds = es.sweep(N, K, store=store, progress=False, **GRID, **kwargs)
    counts = [r.getMessage() for r in caplog.records if r.getMessage().startswith("sweep: computing ")]
    return ds, int(counts[-1].split()[2])


# 1. Submission by address ------------------------------------------------------------


def test_sweep_by_address_is_identical(cluster, reference, tmp_path):
    out = tmp_path / "s.nc"
    args = _sweep_cli_args(cluster.address, tmp_path / "s.zarr") + ["--output", str(out)]
    run = subprocess.run(args, capture_output=True, text=True, timeout=300, env=_env())
    assert run.returncode == 0, run.stderr
    with xr.open_dataset(out) as ds:
        assert_same(reference, ds.load())


def test_estimate_by_address_is_identical(cluster):
    from sklearn.ensemble import ExtraTreesClassifier

    from ensstab_dask.real.datasets import make_microarray

    data = make_microarray(seed=3, n_samples=40, n_feature=400, n_informative=15)
    kwargs = dict(
        selector=ExtraTreesClassifier(n_estimators=25, max_features="sqrt", n_jobs=1),
        m_ensemble=(1, 3),
        m_stability=6,
        n_runs=20,
        repeats=3,
        n_boot=30,
        calibration_layout="paper",  # its halves are stable enough on 40 samples to fit p
        seed=5,
        model="onda",  # the paper's whole path: p, its bootstrap
    )
    remote = es.estimate(data.X, data.y, 10, client=cluster.address, **kwargs)
    local = es.estimate(data.X, data.y, 10, client="synchronous", **kwargs)
    a, b = remote.to_dict(), local.to_dict()
    for key in Cost.HOW_IT_RAN:
        a.pop(key), b.pop(key)
    assert a == b
    # The whole path ran, bootstrap included, and came back identical.
    assert remote.has_curve and a["curve_interval"] and a["p_interval"]
    np.testing.assert_array_equal(remote.single.selection_counts, local.single.selection_counts)
    assert remote.real_runs == 20 + 40  # the paper's pool, and 10 copies of 4 for its self-check


# 2. A worker dies mid-sweep ------------------------------------------------------------


def test_results_lost_with_a_worker_still_reach_the_caller(cluster):
    """A task that finished on a worker killed before its result was read is computed
    again and handed on; it was once dropped, and a sweep returned with a NaN block."""
    from distributed import Client

    from ensstab_dask.cluster import run_tasks

    # By value (a lambda): the workers cannot import this test module.
    work = lambda i: (time.sleep(1.0), i, os.getpid())[1:]  # noqa: E731
    seen: dict[int, int] = {}

    def on_result(i, out):
        assert out[0] == i
        if not seen:
            time.sleep(6)  # every task has finished by now: results wait on both workers
            os.kill(out[1], signal.SIGKILL)
            time.sleep(1.5)  # the client learns that the killed worker's results are lost
        seen[i] = seen.get(i, 0) + 1

    with Client(cluster.address, timeout="30s", set_as_default=False) as c:
        run_tasks(work, [(i,) for i in range(8)], client=c, on_result=on_result)
        c.wait_for_workers(2, timeout=60)  # the nanny restarts the killed one for later tests
    assert seen == {i: 1 for i in range(8)}


def test_worker_killed_mid_sweep_completes_identically(cluster, reference, tmp_path):
    from distributed import Client

    store = tmp_path / "w.zarr"
    result: dict = {}

    def run():
        try:
            with dask.config.set({"distributed.comm.timeouts.connect": "30s"}):
                result["ds"] = es.sweep(N, K, store=store, client=cluster.address, batch_size=1, progress=False, **GRID)
        except BaseException as exc:  # reported by the main thread
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    with Client(cluster.address, timeout="30s", set_as_default=False) as c:
        done = wait_for_blocks(store, 1, thread.is_alive)
        victim_address, victim = next(iter(c.run(os.getpid).items()))
        os.kill(victim, signal.SIGKILL)
        killed_at = blocks_done(store)
        thread.join(timeout=300)
        assert not thread.is_alive(), "the sweep hung after a worker was killed"
        # The nanny starts a new worker process in place of the killed one.
        c.wait_for_workers(2, timeout=60)
        assert victim not in c.run(os.getpid).values()
    assert "error" not in result, repr(result.get("error"))
    assert 1 <= done <= killed_at < N_CELLS, "the worker was not killed mid-sweep"
    assert_same(reference, result["ds"])


# 3. The client dies mid-sweep: rerun resumes ------------------------------------------


def test_client_killed_mid_sweep_resumes(cluster, reference, tmp_path, caplog):
    store = tmp_path / "c.zarr"
    proc = subprocess.Popen(_sweep_cli_args(cluster.address, store), env=_env())
    try:
        wait_for_blocks(store, 2, lambda: proc.poll() is None)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    done = blocks_done(store)
    assert 2 <= done < N_CELLS
    ds, computed = _resume_count(store, caplog, client=cluster.address, batch_size=1)
    assert computed == N_CELLS - done
    assert_same(reference, ds)


# 4. The scheduler dies mid-sweep: a clear error, then a fresh cluster finishes it ------


def test_scheduler_killed_gives_clear_error_and_fresh_cluster_resumes(
    start_cluster, reference, tmp_path, caplog, busy_machine
):
    first = start_cluster("first")
    store = tmp_path / "k.zarr"
    pace = Pace()  # before the sweep: a reference run after the kill's cue would let it finish first
    proc = subprocess.Popen(
        _sweep_cli_args(first.address, store), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_blocks(store, 2, lambda: proc.poll() is None)
        os.kill(first.pid("scheduler"), signal.SIGKILL)
        start = time.monotonic()
        _, err = proc.communicate(timeout=120)
        waited = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "lost the connection to the Dask scheduler" in lines[0] and "resume" in lines[0]
    # The closed connection is seen at once: no wait of its own, only the CLI's way out.
    pace.assert_within(waited, 0, what="the sweep's end after its scheduler's death")
    first.stop()
    done = blocks_done(store)
    assert 2 <= done < N_CELLS
    fresh = start_cluster("fresh")
    ds, computed = _resume_count(store, caplog, client=fresh.address, batch_size=1)
    assert computed == N_CELLS - done
    assert_same(reference, ds)


# 5. TLS ----------------------------------------------------------------------------------


def _make_certs(folder: Path) -> None:
    """deploy/tls/make-certs.sh into ``folder``. Its four RSA keys take about 2 s of CPU on
    an idle machine; beside CPU hogs and a test suite on 2 cores they took over the 120 s
    this once had, so the limit is that and the machine's pace (tests/pace.py)."""
    subprocess.run(["bash", str(MAKE_CERTS), str(folder)], check=True, timeout=Pace().bound(120), capture_output=True)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="deploy/tls/make-certs.sh needs openssl")
def test_tls_cluster_accepts_its_certificates_and_refuses_others(start_cluster, tmp_path, busy_machine):
    for name in ("ours", "other"):
        _make_certs(tmp_path / name)
    c = start_cluster("tls", n_workers=1, tls_dir=tmp_path / "ours")
    assert c.address.startswith("tls://")
    small = dict(n_useful=[30], p=[0.5, 0.9], m_ensemble=[1], m_stability=10, repeats=2, seed=1)

    def certificates(name: str, timeout: str = "30s") -> dict:
        """dask's own configuration: what distributed.Client(address) and the package read."""
        d = tmp_path / name
        return {
            "distributed.comm.tls.ca-file": str(d / "ca.pem"),
            "distributed.comm.tls.client.cert": str(d / "client.pem"),
            "distributed.comm.tls.client.key": str(d / "client-key.pem"),
            "distributed.comm.require-encryption": True,
            "distributed.comm.timeouts.connect": timeout,
        }

    with dask.config.set(certificates("ours")):
        ds = es.sweep(N, K, client=c.address, progress=False, **small)
    assert_same(es.sweep(N, K, client="synchronous", progress=False, **small), ds)

    # The CLI with the certificates.
    d = tmp_path / "ours"
    cli_tls = ["--tls-ca-file", str(d / "ca.pem"), "--tls-cert", str(d / "client.pem")]
    cli_tls += ["--tls-key", str(d / "client-key.pem")]
    args = ["sweep", "--n-feature", str(N), "--n-useful", "30", "--p", "0.5", "--m-stability", "10", "--repeats", "2"]
    run = subprocess.run(
        _cli(*args, "--scheduler", c.address, "--quiet", *cli_tls),
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert run.returncode == 0, run.stderr

    # No certificates: refused at once, with what to pass.
    run = subprocess.run(
        _cli(*args, "--scheduler", c.address, "--quiet"), capture_output=True, text=True, timeout=60, env=_env()
    )
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "no client certificates" in run.stderr and "--tls-ca-file" in run.stderr

    # Certificates from another CA: the handshake fails, reported within the timeout.
    pace = Pace()
    start = time.monotonic()
    with pytest.raises(es.SchedulerUnreachable, match="could not reach the Dask scheduler at tls://"):
        with dask.config.set(certificates("other", "5s")):
            es.sweep(N, K, client=c.address, progress=False, **small)
    pace.assert_within(time.monotonic() - start, 5, what="a refused handshake")

    # Plain TCP to the TLS scheduler: refused.
    with pytest.raises(es.SchedulerUnreachable):
        with dask.config.set({"distributed.comm.timeouts.connect": "5s"}):
            es.sweep(N, K, client=c.address.replace("tls://", "tcp://"), progress=False, **small)


# 6. Unreachable and malformed addresses, through the CLI -------------------------------


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "address, message, waits",
    [
        # Nothing listens: connections refused and tried again until --timeout.
        (None, "could not reach the Dask scheduler at tcp://127.0.0.1:", 3),
        # Refused before any connection is tried: no wait at all.
        ("tcp://127.0.0.1:99999", "malformed scheduler address", 0),
        ("tcp://127.0.0.1", "malformed scheduler address", 0),
        ("bogus://somewhere:8786", "malformed scheduler address", 0),
    ],
)
def test_bad_scheduler_address_fails_clearly_in_bounded_time(address, message, waits, busy_machine):
    """The run's own wait (the --timeout of 3 s, or none) and the machine's pace: 20 s in
    all for a malformed address failed beside other work, at 26.9 s."""
    address = address or f"tcp://127.0.0.1:{_free_port()}"
    pace = Pace()
    start = time.monotonic()
    run = subprocess.run(
        _cli("sweep", "--n-useful", "30", "--p", "0.5", "--scheduler", address, "--timeout", "3", "--quiet"),
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], run.stderr
    pace.assert_within(time.monotonic() - start, waits, what=f"the CLI with --scheduler {address}")


def test_stop_script_leaves_no_process(start_cluster):
    from distributed import Client

    c = start_cluster("stop", n_workers=2)
    pids = [c.pid(r) for r in ("scheduler", "worker-1", "worker-2")]
    with Client(c.address, timeout="30s", set_as_default=False) as client:
        pids += list(client.run(os.getpid).values())  # the worker processes under the nannies
    assert len(set(pids)) == 5
    c.stop()
    assert not any(_alive(pid) for pid in pids)
    assert not (c.run_dir / "scheduler.json").exists()


def _alive(pid: int) -> bool:
    """Running, not a zombie left for a PID 1 that does not reap (as in some containers)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


# 7. A lost scheduler is told by the exception's type and the client's state ------------


def test_a_call_after_the_scheduler_died_is_scheduler_lost(start_cluster, busy_machine):
    """A plain call to the scheduler (no future cancelled, no "scheduler-connection-lost"
    in any message) fails with an OSError once the scheduler is gone: while the client is
    no longer running, that is a lost scheduler, reported as such."""
    from ensstab_dask.cluster import connect

    c = start_cluster("lost", n_workers=1)
    pace = Pace()
    with pytest.raises(es.SchedulerLost, match=f"lost the connection to the Dask scheduler at {c.address}"):
        with connect(c.address, timeout=3) as client:
            os.kill(c.pid("scheduler"), signal.SIGKILL)
            # The closed connection is seen at once: no wait of its own.
            pace.wait_until(lambda: client.status != "running", 0, what="sign that the client saw the scheduler die")
            client.nthreads()


# TLS errors that name the problem ------------------------------------------------------------


def test_a_garbage_certificate_is_named_not_called_an_unreachable_scheduler(tmp_path):
    _make_certs(tmp_path / "ok")
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    ok = tmp_path / "ok"
    args = [
        "sweep",
        "--n-feature",
        "200",
        "--n-useful",
        "20",
        "--p",
        "0.5",
        "--scheduler",
        "tls://127.0.0.1:9",
        "--quiet",
    ]
    for ca, cert, said in ((junk, ok / "client.pem", "TLS CA file"), (ok / "ca.pem", junk, "TLS client certificate")):
        tls = ["--tls-ca-file", str(ca), "--tls-cert", str(cert), "--tls-key", str(ok / "client-key.pem")]
        run = subprocess.run(_cli(*args, *tls), capture_output=True, text=True, timeout=60, env=_env())
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2 and len(lines) == 1, run.stderr
        assert said in lines[0] and str(junk) in lines[0] and "could not reach" not in lines[0], lines[0]


def test_tls_to_a_plain_tcp_scheduler_says_so(cluster, tmp_path, busy_machine):
    """The reason was empty: "could not reach the Dask scheduler ... ()".

    The plain-TCP scheduler is known by the first bytes it sends, and a scheduler process
    slowed by other work sent them late (after 4.5 s, the handshake's share of 5): the run
    then said it had timed out trying to connect. The TLS handshake now waits on its own,
    once the connection is accepted, and one that does not come in time is said in the
    words of one broken off by the scheduler's plain bytes: the --timeout is a plain 5 s."""
    _make_certs(tmp_path / "c")
    d = tmp_path / "c"
    tls = [
        "--tls-ca-file",
        str(d / "ca.pem"),
        "--tls-cert",
        str(d / "client.pem"),
        "--tls-key",
        str(d / "client-key.pem"),
    ]
    address = cluster.address.replace("tcp://", "tls://")
    args = ["sweep", "--n-feature", "200", "--n-useful", "20", "--p", "0.5", "--timeout", "5", "--quiet"]
    run = subprocess.run(
        _cli(*args, "--scheduler", address, *tls),
        capture_output=True,
        text=True,
        timeout=Pace().bound(5) + 120,
        env=_env(),
    )
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1, run.stderr
    assert "()" not in lines[0] and "(no TLS handshake: is the scheduler a tcp:// one" in lines[0], lines[0]


def test_the_scheduler_dying_between_two_results_is_scheduler_lost(start_cluster, busy_machine):
    """The scheduler SIGKILLed mid-sweep ended, about one run in four, in a ClosedClientError
    traceback: the client had closed itself by the time the work in flight was cancelled.
    Here it has, every time: the next submission and the cancel both meet a closed client."""
    from ensstab_dask.cluster import connect, run_tasks

    c = start_cluster("dies", n_workers=1)
    pace = Pace()

    def on_result(i: int, out) -> None:
        if i == 0:
            os.kill(c.pid("scheduler"), signal.SIGKILL)
            # distributed tries to reconnect for the client's timeout (3 s), then closes it.
            pace.wait_until(lambda: client.status == "closed", 3, what="closed client")

    with pytest.raises(es.SchedulerLost, match=f"lost the connection to the Dask scheduler at {c.address}"):
        with connect(c.address, timeout=3) as client:
            run_tasks(time.sleep, [(0.1,)] * 8, client=client, on_result=on_result, window=1)


# A remote cluster that goes silent mid-sweep: said in one line, within bounded time --------


class _Watched:
    """The sweep CLI on ``cluster`` (one worker), its stderr read line by line as it comes."""

    def __init__(self, cluster: ProcessCluster, store: Path, out: Path, env: dict | None = None):
        self.proc = subprocess.Popen(
            _sweep_cli_args(cluster.address, store) + ["--output", str(out)],
            env=dict(_env(), **(env or {})),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stderr), daemon=True)
        self.reader.start()

    def wait_for_line(self, needle: str, pace: Pace, waits: float) -> float:
        """Seconds until a stderr line holding ``needle`` came, the sweep still running, at
        most ``waits`` and the machine's pace (tests/pace.py)."""

        def said() -> bool:
            if any(needle in line for line in self.lines):
                return True
            assert self.proc.poll() is None, f"the sweep ended ({self.proc.returncode}): {''.join(self.lines)[-3000:]}"
            return False

        return pace.wait_until(said, waits, what=f"{needle!r} on stderr", every=0.1)

    def finish(self, timeout: float) -> int:
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(10)
        return code


def _silence_noted_within(silence: float | None = None) -> float:
    """Seconds by design from a worker's end (or stop) to what the client does after
    ``silence`` s without one (default SILENCE_NOTED_AFTER: the line that says so). The
    first look comes once no result has landed for _QUIET s, and may yet see a heartbeat
    sent before the stop; the silence is counted from there, a look every _CHECK_EVERY s."""
    from ensstab_dask.cluster.tasks import _CHECK_EVERY, _QUIET, SILENCE_NOTED_AFTER

    return _QUIET + (SILENCE_NOTED_AFTER if silence is None else silence) + _CHECK_EVERY


def _start_worker(cluster: ProcessCluster, name: str, *, nanny: bool = True) -> subprocess.Popen:
    """One more ``dask worker`` for ``cluster``, in a session of its own (killed with it)."""
    return subprocess.Popen(
        ["dask", "worker", cluster.address, "--host", "127.0.0.1", "--nthreads", "1", "--memory-limit", "0"]
        + ["--name", name, "--dashboard-address", "127.0.0.1:0", "--local-directory", str(cluster.run_dir / name)]
        + ([] if nanny else ["--no-nanny"]),
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def test_a_remote_cluster_whose_only_worker_dies_says_so_and_goes_on_with_a_new_one(
    start_cluster, reference, tmp_path, busy_machine
):
    """Its only worker (nanny and all) SIGKILLed mid-sweep: the client waited without a
    word. It says, in one line within SILENCE_NOTED_AFTER and the machine's pace, that no
    worker is connected and how to start one, goes on waiting, and finishes with the one
    started."""
    c = start_cluster("lone", n_workers=1)
    store, out = tmp_path / "s.zarr", tmp_path / "s.nc"
    pace = Pace()  # before the sweep, which goes on while a reference runs
    run = _Watched(c, store, out)
    worker = None
    try:
        wait_for_blocks(store, 2, lambda: run.proc.poll() is None)
        os.killpg(c.pid("worker-1"), signal.SIGKILL)
        run.wait_for_line(
            f"no worker has been connected to the Dask scheduler at {c.address}", pace, _silence_noted_within()
        )
        assert f"dask worker {c.address}" in "".join(run.lines)
        worker = _start_worker(c, "worker-new")
        assert run.finish(240) == 0, "".join(run.lines)[-3000:]
    finally:
        if worker is not None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(30)
    assert "works again" in "".join(run.lines)
    assert "Traceback" not in "".join(run.lines)
    with xr.open_dataset(out) as ds:
        assert_same(reference, ds.load())


def test_a_remote_sweep_whose_last_worker_dies_says_so_then_ends_and_the_store_resumes(
    start_cluster, reference, tmp_path, caplog, busy_machine
):
    """Its only worker, run without a nanny, SIGKILLed mid-sweep (the probe's case): said in
    one line within SILENCE_NOTED_AFTER and the machine's pace, with when the work ends;
    with no worker back by ``ensstab.workerless-ends-after`` (30 s here; 120 s by default)
    the sweep ends in one line, exit status 1, and the store resumes on another cluster."""
    c = start_cluster("bare", n_workers=1)
    os.killpg(c.pid("worker-1"), signal.SIGKILL)  # its worker with a nanny, replaced by one without
    bare = _start_worker(c, "bare", nanny=False)
    store, out = tmp_path / "s.zarr", tmp_path / "s.nc"
    pace = Pace()  # before the sweep, which goes on while a reference runs
    run = _Watched(c, store, out, env={"DASK_ENSSTAB__WORKERLESS_ENDS_AFTER": "30"})
    try:
        wait_for_blocks(store, 2, lambda: run.proc.poll() is None)
        os.killpg(bare.pid, signal.SIGKILL)
        killed = time.monotonic()
        run.wait_for_line(
            f"no worker has been connected to the Dask scheduler at {c.address}", pace, _silence_noted_within()
        )
        code = run.finish(pace.bound(_silence_noted_within(30)) + 120)
        ended = time.monotonic() - killed
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(bare.pid, signal.SIGKILL)
        bare.wait(30)
    lines = "".join(run.lines).strip().splitlines()
    assert code == 1 and "Traceback" not in "".join(lines), lines
    assert "Task exception was never retrieved" not in "".join(lines), lines
    assert "if none does" in lines[0], lines
    assert lines[-1].startswith(f"ensstab: error: the Dask cluster at {c.address} has had no worker answering for")
    assert lines[-1].endswith("rerun the same command to resume from the store"), lines[-1]
    pace.assert_within(ended, _silence_noted_within(30), what="the sweep's end after its last worker's")
    _resumes_on_a_fresh_cluster(c, start_cluster, store, caplog, reference)


def test_the_last_worker_lost_while_a_result_is_fetched_is_one_error_and_nothing_else(
    start_cluster, caplog, busy_machine
):
    """Every worker lost while a finished task's result was being fetched: the fetch waited
    in slices (fut.result(timeout=...)), distributed cancelled its gather at each one, and
    each cancelled gather left a task behind that, once the work was cancelled, logged
    "Task exception was never retrieved ... AllExit" under the one error. The fetch is now
    one gather, never cancelled: WorkersLost, and no word from asyncio."""
    import gc

    from ensstab_dask.cluster import connect, run_tasks

    c = start_cluster("fetching", n_workers=1)
    os.killpg(c.pid("worker-1"), signal.SIGKILL)  # its worker with a nanny, replaced by one without
    bare = _start_worker(c, "bare", nanny=False)
    pace = Pace()
    n = 6
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            with dask.config.set({"ensstab.workerless-ends-after": 8}), connect(c.address, timeout=30) as client:

                def only_bare() -> bool:
                    return [w["name"] for w in client.scheduler_info()["workers"].values()] == ["bare"]

                pace.wait_until(only_bare, 0, what="the bare worker alone", every=0.2)

                stopped: list[int] = []

                def on_result(i: int, out) -> None:
                    if stopped:
                        return
                    stopped.append(i)
                    # Every result held by the worker, which is then stopped and killed a
                    # second later: the next result's fetch, begun meanwhile, finds the
                    # result lost and waits for it to be computed again, with no worker.
                    pace.wait_until(
                        lambda: sum(map(len, client.has_what().values())) == n, 0, what="every result", every=0.1
                    )
                    os.killpg(bare.pid, signal.SIGSTOP)
                    threading.Timer(1.0, os.killpg, (bare.pid, signal.SIGKILL)).start()

                with pytest.raises(es.WorkersLost, match=f"the Dask cluster at {c.address} has had no worker"):
                    run_tasks(abs, [(-k,) for k in range(n)], client=client, on_result=on_result, window=n)
            gc.collect()  # a task left behind logs once it is collected
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(bare.pid, signal.SIGKILL)
        bare.wait(30)
    said = [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    assert not said, said


def test_a_remote_cluster_whose_only_worker_is_stopped_says_so_and_goes_on_when_it_answers(
    start_cluster, reference, tmp_path, busy_machine
):
    """Its only worker SIGSTOPped: still connected, it sends no heartbeat. Said in one line,
    and the sweep finishes once the worker is continued."""
    c = start_cluster("frozen", n_workers=1)
    store, out = tmp_path / "s.zarr", tmp_path / "s.nc"
    pace = Pace()  # before the sweep, which goes on while a reference runs
    run = _Watched(c, store, out)
    try:
        wait_for_blocks(store, 2, lambda: run.proc.poll() is None)
        os.killpg(c.pid("worker-1"), signal.SIGSTOP)
        run.wait_for_line(
            f"no worker of the Dask scheduler at {c.address} has answered for", pace, _silence_noted_within()
        )
    finally:
        os.killpg(c.pid("worker-1"), signal.SIGCONT)
    assert run.finish(240) == 0, "".join(run.lines)[-3000:]
    assert "works again" in "".join(run.lines) and "Traceback" not in "".join(run.lines)
    with xr.open_dataset(out) as ds:
        assert_same(reference, ds.load())


def test_a_stopped_remote_scheduler_ends_the_sweep_in_one_line_and_a_fresh_cluster_resumes(
    start_cluster, reference, tmp_path, caplog, busy_machine
):
    """The scheduler SIGSTOPped mid-sweep keeps its connections open, so nothing in
    distributed ever gave up: the client waited without a word. Once it has not answered
    for distributed.comm.timeouts.tcp (15 s here; distributed wants 11 s at least), the sweep ends with one line, exit
    status 1, and the store resumes on another cluster."""
    from ensstab_dask.cluster.tasks import _ASK_WITHIN, _CHECK_EVERY

    # distributed's tcp timeout, then at most one check's interval and one question's wait.
    gone_within = 15 + _CHECK_EVERY + _ASK_WITHIN
    c = start_cluster("stopped", n_workers=1)
    store, out = tmp_path / "s.zarr", tmp_path / "s.nc"
    pace = Pace()  # before the sweep, which goes on while a reference runs
    run = _Watched(c, store, out, env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__TCP": "15s"})
    try:
        wait_for_blocks(store, 2, lambda: run.proc.poll() is None)
        os.killpg(c.pid("scheduler"), signal.SIGSTOP)
        start = time.monotonic()
        code = run.finish(pace.bound(gone_within) + 120)
        took = time.monotonic() - start
    finally:
        os.killpg(c.pid("scheduler"), signal.SIGCONT)
    lines = "".join(run.lines).strip().splitlines()
    assert code == 1 and len(lines) == 1, lines
    assert f"the Dask scheduler at {c.address} has not answered for" in lines[0] and "resume" in lines[0], lines[0]
    assert 15 <= took
    pace.assert_within(took, gone_within, what="the sweep's end after its scheduler stopped")
    _resumes_on_a_fresh_cluster(c, start_cluster, store, caplog, reference)


def test_work_with_data_waits_for_a_worker_to_join_and_says_so(start_cluster, busy_machine):
    """The data go to the workers first: with none connected, distributed's scatter gave up
    after the connect timeout with a TimeoutError traceback ("No valid workers found").
    The wait goes on, said in one line, and the work is done once a worker joins."""
    from ensstab_dask.cluster import connect, run_tasks
    from ensstab_dask.cluster.tasks import SILENCE_NOTED_AFTER

    c = start_cluster("empty", n_workers=1)
    with connect(c.address, timeout=3) as client:
        pace = Pace()
        os.killpg(c.pid("worker-1"), signal.SIGKILL)
        # Its closed connection tells the scheduler at once: no wait of its own.
        pace.wait_until(lambda: not client.nthreads(), 0, what="end of the killed worker's listing", every=0.1)

        said: list[str] = []
        joined: list[subprocess.Popen] = []

        class Heard(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                said.append(record.getMessage())
                if "no worker has been connected" in record.getMessage() and not joined:
                    joined.append(_start_worker(c, "worker-late"))

        heard = Heard()
        log = logging.getLogger("ensstab_dask.cluster")
        log.addHandler(heard)
        start = time.monotonic()
        try:
            # A function the workers can import: this module is not on their path.
            out = run_tasks(operator.getitem, [(k,) for k in range(4)], shared=(np.arange(10.0),), client=client)
        finally:
            log.removeHandler(heard)
            for worker in joined:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait(30)
    assert out == [0.0, 1.0, 2.0, 3.0]
    assert joined and time.monotonic() - start >= SILENCE_NOTED_AFTER
    assert any(f"dask worker {c.address}" in line for line in said), said


def test_work_with_data_on_a_stopped_worker_says_so_and_goes_on_when_it_answers(start_cluster, busy_machine):
    """The data go to the workers first: to a worker that is connected but stopped, the
    scatter waited without end and without a word (an estimate on a remote cluster said
    nothing for 90 s). Said in one line as a task's wait is, and done once it is continued."""
    from ensstab_dask.cluster import connect, run_tasks
    from ensstab_dask.cluster.tasks import SILENCE_NOTED_AFTER

    c = start_cluster("frozen-data", n_workers=1)
    with connect(c.address, timeout=3) as client:
        said: list[str] = []

        class Heard(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                said.append(record.getMessage())
                if "has answered for" in record.getMessage():
                    os.killpg(c.pid("worker-1"), signal.SIGCONT)

        heard = Heard()
        log = logging.getLogger("ensstab_dask.cluster")
        log.addHandler(heard)
        # Continued anyway once the line is late for this machine's pace: a client that says
        # nothing fails below, not by hanging.
        late = Pace().bound(_silence_noted_within())
        os.killpg(c.pid("worker-1"), signal.SIGSTOP)
        unstop = threading.Timer(late, os.killpg, (c.pid("worker-1"), signal.SIGCONT))
        unstop.start()
        start = time.monotonic()
        try:
            out = run_tasks(operator.getitem, [(k,) for k in range(4)], shared=(np.arange(10.0),), client=client)
        finally:
            unstop.cancel()
            log.removeHandler(heard)
            os.killpg(c.pid("worker-1"), signal.SIGCONT)
    assert out == [0.0, 1.0, 2.0, 3.0]
    assert SILENCE_NOTED_AFTER <= time.monotonic() - start
    assert any(f"no worker of the Dask scheduler at {c.address} has answered for" in line for line in said), said
