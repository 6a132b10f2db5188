"""Where the work runs (``client=``): the current client for None, dask's names and aliases,
and which errors mean a lost scheduler. Real clusters over TCP on 127.0.0.1, no mocks."""

from __future__ import annotations

import contextlib
import logging
import operator
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from pace import Pace
from sweep_cases import GRID, K, N, assert_same

import ensstab_dask as es
from ensstab_dask.cluster import connect, current_client, local_cluster


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="module")
def reference():
    return es.sweep(N, K, client="synchronous", progress=False, **GRID)


@pytest.fixture
def user_client():
    """A cluster and client made the way a notebook makes them: the current client."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def _block_tasks(stream) -> int:
    return sum(1 for t in stream.data if str(t["key"]).startswith("compute_block-"))


def test_client_none_runs_on_the_current_client_and_leaves_it_open(user_client, reference, caplog):
    from distributed import get_task_stream

    assert current_client() is user_client
    with caplog.at_level(logging.INFO, logger="ensstab_dask.sweep"), get_task_stream(user_client) as stream:
        ds = es.sweep(N, K, client=None, progress=False, **GRID)
    assert_same(reference, ds)
    tasks = int(next(r.getMessage() for r in caplog.records if "computing" in r.getMessage()).split()[-2])
    # Every task of the sweep ran on the user's cluster: none went to a cluster of its own.
    assert _block_tasks(stream) == tasks > 0
    # Still the user's, still open and usable.
    assert user_client.status == "running" and current_client() is user_client
    assert user_client.submit(operator.add, 40, 2).result() == 42


def test_a_local_kind_by_name_ignores_the_current_client(user_client, reference):
    """As with dask.compute(scheduler=...): a name says where to run, whatever the current client."""
    from distributed import get_task_stream

    with get_task_stream(user_client) as stream:
        threads = es.sweep(N, K, client="threading", progress=False, **GRID)  # dask's alias of "threads"
        sync = es.sweep(N, K, client="sync", progress=False, **GRID)  # and of "synchronous"
    assert_same(reference, threads)
    assert_same(reference, sync)
    assert _block_tasks(stream) == 0
    assert user_client.status == "running"


def test_without_a_current_client_none_means_a_local_cluster_closed_afterwards(tmp_path):
    # In a fresh process: this one may hold the session's shared client, current by then.
    script = tmp_path / "none.py"
    script.write_text(
        textwrap.dedent(
            """
            from ensstab_dask.cluster import connect, current_client

            if __name__ == "__main__":
                assert current_client() is None
                with connect(None, n_workers=1) as c:
                    assert c is not None and c.status == "running"
                    assert sum(c.nthreads().values()) == 1
                    assert current_client() is None  # ours is not made the default: the user's work keeps theirs
                assert c.status == "closed"
                print("ok")
            """
        )
    )
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180, env=_env())
    assert run.returncode == 0 and run.stdout.split() == ["ok"], run.stderr[-3000:]


@pytest.mark.parametrize("name", ["thread", "proceses", "dask", ""])
def test_a_misspelt_name_lists_the_accepted_values_at_once(name, busy_machine):
    pace = Pace()
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"client must be None, 'processes', 'threads', 'synchronous'.*got"):
        es.sweep(N, K, client=name, progress=False, **GRID)
    # At once: no cluster started, no connection tried (either waits seconds of its own).
    pace.assert_within(time.monotonic() - start, 0, what=f"client={name!r}")


def test_local_cluster_refuses_kinds_it_cannot_make():
    with pytest.raises(ValueError, match=r"kind must be 'processes' or 'threads'.*got 'synchronous'"):
        local_cluster("synchronous")


def test_errors_while_the_scheduler_is_alive_are_not_scheduler_lost(two_process_client):
    from distributed.client import FutureCancelledError

    # A future the user cancels: the client is running, so this is not a lost scheduler.
    with pytest.raises(FutureCancelledError), connect(two_process_client) as c:
        future = c.submit(time.sleep, 0.5, pure=False)
        c.cancel(future)
        future.result()
    # An OSError of the work itself (a full disk, a missing file) is reported as it is.
    with pytest.raises(FileNotFoundError) as info, connect(two_process_client):
        raise FileNotFoundError("no such file: results.nc")
    assert not isinstance(info.value, es.SchedulerLost)
    assert two_process_client.status == "running"


def _spin(seconds: float) -> int:
    """A task that holds its worker's CPU (and the GIL) for ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return os.getpid()


@pytest.mark.parametrize("how", ["done", "interrupted"])
def test_a_local_cluster_kills_its_workers_first_and_they_say_nothing(capfd, how):
    """Closed together with their scheduler, workers printed "Failed to communicate with
    scheduler during heartbeat" and a traceback after the CLI's last line (in 4 of 4
    Ctrl-Cs under load, and about 1 finished run in 70). They are killed before the
    cluster closes: gone when the block is left, and silent. Their stderr is this
    process's, which capfd holds."""
    import psutil

    def gone(pid: int) -> bool:
        try:
            return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return True

    with pytest.raises(KeyboardInterrupt) if how == "interrupted" else contextlib.nullcontext():
        with connect("processes", n_workers=2) as c:
            pids = list(c.run(os.getpid).values())
            futures = [c.submit(_spin, 0.2 if how == "done" else 30, pure=False) for _ in range(2)]
            if how == "done":
                assert sorted(c.gather(futures)) == sorted(pids)
            else:
                while not c.processing() or not any(c.processing().values()):
                    time.sleep(0.05)
                raise KeyboardInterrupt
    assert len(pids) == 2 and all(gone(pid) for pid in pids), pids
    time.sleep(1)  # anything a worker had left to say would have landed by now
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ERROR" not in err, err[-3000:]


def test_local_clusters_allow_for_a_busy_machine_and_leave_the_config_as_it_was():
    """With dask's 30 s a starved process's connection was declared dead (a notebook lost
    its client under load): the package's local clusters run with BUSY_MACHINE's timeouts,
    in their workers and in this process while the client is open, and longer ones set
    by the user are kept."""
    import dask
    import distributed  # noqa: F401 - its defaults in dask's config before dask.config.set, which would drop them

    from ensstab_dask.cluster import BUSY_MACHINE, busy_machine_config

    keys = list(BUSY_MACHINE)
    before = {k: dask.config.get(k) for k in keys}
    with dask.config.set({"distributed.comm.timeouts.tcp": "2h"}), connect("processes", n_workers=1) as c:
        here = {k: dask.config.get(k) for k in keys}
        worker = next(iter(c.run(lambda: {k: dask.config.get(k) for k in keys}).values()))
    assert here == worker == {**BUSY_MACHINE, "distributed.comm.timeouts.tcp": "7200s"}
    assert {k: dask.config.get(k) for k in keys} == before
    with dask.config.set({"distributed.scheduler.worker-ttl": None}):  # no limit is longer than any
        assert "distributed.scheduler.worker-ttl" not in busy_machine_config()


def test_ctrl_c_stops_workers_without_a_traceback_when_the_cluster_is_already_gone(monkeypatch, capsys):
    """Under load the cluster can close before its workers are stopped after a Ctrl-C:
    stopping them then fails, quietly, not with a traceback under "ensstab: interrupted"."""
    import threading

    from distributed import LocalCluster

    from ensstab_dask.cluster.clients import workers_killed_on_exit

    raised = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    with LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster:
        pass
    with pytest.raises(KeyboardInterrupt), workers_killed_on_exit(cluster):
        raise KeyboardInterrupt
    time.sleep(0.5)
    assert raised == [] and "Traceback" not in capsys.readouterr().err


def test_ctrl_c_kills_a_busy_worker_process_at_once_and_no_nanny_restarts_it(busy_machine):
    """A nanny waits 4 s for a busy worker before killing it: after a Ctrl-C or a SIGTERM the
    CLI took 5 to 10 s to end. The workers are now killed at once (gone when the call
    returns), and stay dead."""
    from distributed import Client

    from ensstab_dask.cluster.clients import _kill_workers, local_cluster

    with local_cluster("processes", 1) as cluster, Client(cluster, set_as_default=False) as c:
        (pid,) = c.run(os.getpid).values()
        busy = c.submit(time.sleep, 60, pure=False)
        while not c.processing()[next(iter(c.processing()))]:
            time.sleep(0.05)
        _kill_workers(cluster)
        # SIGKILL is delivered asynchronously: gone well inside the nanny's own 4 s wait.
        # A fixed bound, not the machine's pace (tests/pace.py): the kernel ends the process
        # without its running any code of its own, however busy the machine (it held beside
        # CPU hogs), and a bound past 4 s would not tell this way from the nanny's.
        deadline = time.monotonic() + 3.0
        while True:
            try:
                if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            assert time.monotonic() < deadline, "the busy worker outlived its SIGKILL"
            time.sleep(0.05)
        time.sleep(1)
        assert all(w.status.name == "closed" for w in cluster.workers.values())  # closed, so not restarting
        assert not c.scheduler_info()["workers"], "a worker was restarted"
        del busy


@pytest.mark.parametrize("host", ["a" * 10_000, "a" * 64, "a..b"])
def test_a_host_name_no_resolver_takes_is_refused_in_one_line(host, tmp_path):
    """A 10,000-character --scheduler ended in a UnicodeError traceback from the 'idna'
    codec (a DNS label has at most 63 characters): it is a malformed address, refused at
    once in one line of bounded length."""
    from faults import SWEEP, run_cli

    from ensstab_dask.cluster import check_address

    address = f"tcp://{host}:8786"
    with pytest.raises(es.InvalidParameterError, match="malformed scheduler address"):
        check_address(address)
    ran = run_cli(*SWEEP, "--n-useful", "20", "--p", "0.5", "--scheduler", address, cwd=tmp_path, timeout=120)
    assert ran.one_line_error(), ran.stderr[-3000:]
    assert "malformed scheduler address" in ran.lines[0] and len(ran.lines[0]) < 400, ran.lines[0][:500]


def test_host_names_a_resolver_takes_are_kept():
    from ensstab_dask.cluster import check_address

    for address in ("tcp://bücher.example:8786", "tcp://[::1]:8786", f"tcp://{'a' * 63}.example:8786"):
        assert check_address(address) == address
