"""Ctrl-C with real processes, both ways it arrives: from a terminal, SIGINT to the whole
process group (the CLI and the worker processes of the LocalCluster it started), and from
``kill -INT``, to the CLI's process alone.

Either way: exit status 130, one line (``ensstab: interrupted``, with the resume hint for
a sweep whose store exists), at most one progress note before it, and no traceback or
asyncio report from any process: the CLI, the scheduler and nannies it runs, the workers.
The workers ignore the signal (their parent shuts them down) and are gone afterwards.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from busy import as_a_foreground_job
from faults import listener
from pace import Pace

from ensstab_dask.cli import _resumable, build_parser
from ensstab_dask.cli._stop import GRACE_S

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process groups")

ROOT = Path(__file__).resolve().parents[2]
INTERRUPTED = "ensstab: interrupted"
RESUME = INTERRUPTED + "; finished blocks are in the store, rerun the same command to resume"
# 50 cells of about a second each: half a minute of work on two workers, not over before the signal.
SWEEP = (
    "sweep --n-feature 2000 --n-useful 30:300:30 --p 0.2:1.0:0.2 --m-ensemble 50 --m-stability 100 --repeats 5 "
    "--batch-size 1"
).split()
PATIENCE = 300  # seconds: the cluster starts slowly on a loaded 2-core machine
# A stop signal ends the process within GRACE_S (2 s) and the machine's pace (tests/pace.py):
# its handler runs once the work in hand lets it, and the way out takes CPU. On an idle
# machine that is well below what the cases these bound took before (a minute or more).


class Cli:
    """``ensstab ARGS`` in a session of its own, so that the test can signal its process group."""

    def __init__(self, *args: str, env: dict | None = None):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ensstab_dask.cli", *args],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=as_a_foreground_job,
            env=env,
        )
        self.started = time.monotonic()
        self.lines: list[str] = []
        self._reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stderr), daemon=True)
        self._reader.start()
        self.children: set[psutil.Process] = set()

    def wait_until(self, condition, what: str) -> None:
        deadline = time.monotonic() + PATIENCE
        while not condition():
            assert self.proc.poll() is None, f"ensstab ended before {what}: {''.join(self.lines)[-3000:]}"
            assert time.monotonic() < deadline, f"no {what} after {PATIENCE} s"
            time.sleep(0.05)

    def workers(self) -> list[psutil.Process]:
        """The LocalCluster's worker processes (multiprocessing's spawned children)."""
        try:
            children = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        self.children.update(children)
        found = []
        for child in children:
            try:
                if "spawn_main" in " ".join(child.cmdline()):
                    found.append(child)
            except psutil.Error:  # exited meanwhile
                pass
        return found

    def interrupt(self, whom: str, sig: int = signal.SIGINT) -> tuple[int, str]:
        self.workers()  # every process there is now, to check they are gone afterwards
        if whom == "group":
            os.killpg(self.proc.pid, sig)  # the session leader's pid is its group's id
        else:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout=PATIENCE)
        self._reader.join(timeout=30)
        return code, "".join(self.lines)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=60)


@pytest.fixture
def cli(busy_machine):
    started: list[Cli] = []

    def start(*args: str, env: dict | None = None) -> Cli:
        started.append(Cli(*args, env=env))
        return started[-1]

    yield start
    for c in started:  # also when the test failed: no process outlives it
        c.kill()


def assert_clean_interrupt(code: int, err: str, last_line: str, c: Cli, status: int = 130) -> None:
    # Into a pipe, each stage says one line as it starts (``real runs: 200 runs, started at ...``).
    # (and, before the first run, its price: ``the estimate: 200 real runs to make, about 40 s ...``).
    said = r", started at \d\d:\d\d:\d\d$|^the (estimate|naive check): [\d,]+ real runs to make, about "
    lines = [line for line in err.strip().splitlines() if not re.search(said, line)]
    assert code == status, (code, err[-3000:])
    assert "leaked semaphore" not in err, err[-3000:]
    assert "Traceback" not in err and "Task exception" not in err and "Error" not in err, err[-3000:]
    assert 1 <= len(lines) <= 2 and lines[-1] == last_line, err[-3000:]
    # The workers ignored the signal, and the CLI shut them down (and the resource tracker).
    gone, alive = psutil.wait_procs(list(c.children), timeout=30)
    assert not alive, [p.pid for p in alive]


@pytest.mark.slow
@pytest.mark.parametrize("whom", ["group", "process"])
def test_ctrl_c_during_estimate(cli, whom):
    """It printed 244 lines (40 x "Task exception was never retrieved ... AllExit"); sent to
    the group, the workers' KeyboardInterrupt tracebacks and a wrong resume hint."""
    c = cli("estimate", "--no-cache")
    c.wait_until(lambda: any("Dask dashboard" in line for line in c.lines), "cluster at work")
    time.sleep(2)  # real runs under way on both workers
    code, err = c.interrupt(whom)
    assert_clean_interrupt(code, err, INTERRUPTED, c)


@pytest.mark.slow
def test_sigterm_during_estimate_is_one_line_and_exit_143(cli):
    """SIGTERM killed the CLI at once: no word, and "leaked semaphore objects" from the
    resource tracker. It is now handled as Ctrl-C is, with the shell's status for it."""
    c = cli("estimate", "--no-cache")
    c.wait_until(lambda: any("Dask dashboard" in line for line in c.lines), "cluster at work")
    time.sleep(2)
    code, err = c.interrupt("process", signal.SIGTERM)
    assert_clean_interrupt(code, err, "ensstab: terminated", c, status=143)


@pytest.mark.slow
@pytest.mark.parametrize("whom", ["group", "process"])
def test_ctrl_c_during_a_sweep_into_a_store_says_how_to_resume(cli, tmp_path, whom):
    store = tmp_path / "s.zarr"
    c = cli(*SWEEP, "--store", str(store), "--quiet")
    c.wait_until(store.exists, "store (its template is written once the cluster is up)")
    time.sleep(1)
    code, err = c.interrupt(whom)
    assert_clean_interrupt(code, err, RESUME, c)


@pytest.mark.slow
def test_ctrl_c_during_a_sweep_without_a_store_and_during_validate(cli, tmp_path):
    c = cli(*SWEEP, "--quiet")
    c.wait_until(lambda: len(c.workers()) >= min(2, os.cpu_count() or 1), "worker processes")
    time.sleep(3)
    code, err = c.interrupt("group")
    assert_clean_interrupt(code, err, INTERRUPTED, c)

    c = cli("validate", "--cache-dir", str(tmp_path))
    c.wait_until(lambda: any("Dask dashboard" in line for line in c.lines), "cluster at work")
    time.sleep(2)
    code, err = c.interrupt("group")
    assert_clean_interrupt(code, err, INTERRUPTED, c)


@pytest.mark.slow
@pytest.mark.parametrize("whom", ["group", "process"])
def test_ctrl_c_during_simulate(cli, whom):
    """No cluster: the simulation runs in the CLI's process."""
    c = cli("simulate", "--n-feature", "20000", "--m-ensemble", "1:30:1", "--m-stability", "100")
    # Importing takes about 2 s of CPU: past 4 s, it is simulating.
    c.wait_until(lambda: psutil.Process(c.proc.pid).cpu_times().user > 4, "simulation")
    code, err = c.interrupt(whom)
    assert_clean_interrupt(code, err, INTERRUPTED, c)


def _stop_takes(c: Cli, whom: str, sig: int) -> tuple[int, str, float]:
    start = time.monotonic()
    code, err = c.interrupt(whom, sig)
    return code, err, time.monotonic() - start


@pytest.mark.slow
def test_sighup_is_handled_as_sigterm(cli):
    """SIGHUP (the terminal closed) killed the CLI at once: no word, exit status -1, and
    "leaked semaphore objects" from the resource tracker."""
    pace = Pace()  # before the command: the work goes on while a reference runs
    c = cli("estimate", "--no-cache")
    c.wait_until(lambda: any("Dask dashboard" in line for line in c.lines), "cluster at work")
    time.sleep(2)
    code, err, took = _stop_takes(c, "process", signal.SIGHUP)
    assert_clean_interrupt(code, err, "ensstab: terminated", c, status=129)
    pace.assert_within(took, GRACE_S, what="SIGHUP during an estimate")


@pytest.mark.slow
def test_sigterm_while_waiting_for_a_silent_scheduler_ends_the_process_within_seconds(cli):
    """It printed "ensstab: terminated" and stayed: the half-made Client's close waited on
    the silent listener for twice the timeout, and its finaliser again."""
    pace = Pace()
    connected = threading.Event()
    with listener(accepted=connected) as address:
        c = cli("sweep", "--n-useful", "20", "--p", "0.5", "--scheduler", address, "--timeout", "120", "--quiet")
        c.wait_until(connected.is_set, "a connection to the listener")
        time.sleep(1)
        code, err, took = _stop_takes(c, "process", signal.SIGTERM)
    assert_clean_interrupt(code, err, "ensstab: terminated", c, status=143)
    pace.assert_within(took, GRACE_S, what="SIGTERM while waiting for a silent scheduler")


def _slow_workers(tmp_path) -> dict:
    """Worker processes that take a minute to start, as on a loaded machine: a
    sitecustomize that sleeps in multiprocessing's spawned processes only."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys, time\nif '--multiprocessing-fork' in sys.argv:\n    time.sleep(60)\n"
    )
    return dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")


@pytest.mark.slow
def test_ctrl_c_while_the_local_cluster_starts_ends_the_process_within_seconds(cli, tmp_path):
    """The Ctrl-C was held back until every worker had started, then the cluster closed:
    about 14 s on a loaded machine, here the workers' minute."""
    pace = Pace()
    c = cli("estimate", "--no-cache", env=_slow_workers(tmp_path))
    c.wait_until(lambda: len(c.workers()) >= 1, "worker processes starting")
    time.sleep(1)
    code, err, took = _stop_takes(c, "group", signal.SIGINT)
    assert_clean_interrupt(code, err, INTERRUPTED, c)
    pace.assert_within(took, GRACE_S, what="Ctrl-C while the local cluster starts")


# Two threads making and dropping semaphores without a pause, as a starting cluster's loop
# makes its queues and the collector finalizes them, while the deadline ends the process.
_CHURN = """
import multiprocessing, os, threading, time
from multiprocessing import synchronize
from ensstab_dask.cli._stop import Stop
# Names of this process's own, told apart from those of the tests running beside it.
synchronize.SemLock._make_name = staticmethod(lambda: f"/churn-{os.getpid()}-{next(synchronize.SemLock._rand)}")
spawn = multiprocessing.get_context("spawn")
kept = []
def churn():
    while True:
        dropped = spawn.Lock()
        kept.append(spawn.Lock())
        del dropped
        if len(kept) > 50:
            kept.pop(0)
for _ in range(2):
    threading.Thread(target=churn, daemon=True).start()
Stop(lambda terminated: "ensstab: terminated").arm(143, True)
time.sleep(60)
"""


def test_the_deadline_leaves_no_semaphore_while_other_threads_make_and_remove_them():
    """Removing the semaphores once, then ending the process, left 17 to 45 of them
    registered with the resource tracker, which reported them leaked, in 10 runs of 10;
    ending it while a thread was making one left that one in /dev/shm."""
    child = subprocess.Popen([sys.executable, "-c", _CHURN], stderr=subprocess.PIPE, text=True)
    _, err = child.communicate(timeout=120)
    assert (child.returncode, err) == (143, "ensstab: terminated\n")
    shm = Path("/dev/shm")  # where Linux keeps named semaphores
    if shm.is_dir():
        assert not list(shm.glob(f"sem.churn-{child.pid}-*"))


@pytest.mark.slow
def test_sigterm_during_simulate_ends_it_within_seconds(cli):
    pace = Pace()
    c = cli("simulate", "--n-feature", "20000", "--m-ensemble", "1:30:1", "--m-stability", "100")
    c.wait_until(lambda: psutil.Process(c.proc.pid).cpu_times().user > 4, "simulation")
    code, err, took = _stop_takes(c, "process", signal.SIGTERM)
    assert_clean_interrupt(code, err, "ensstab: terminated", c, status=143)
    pace.assert_within(took, GRACE_S, what="SIGTERM during simulate")


def test_only_a_sweep_with_a_store_is_told_to_resume(tmp_path):
    """The hint's rule, for the commands too quick to interrupt reliably (export, verify):
    their STORE argument is not a sweep to resume."""
    store = tmp_path / "s.zarr"
    store.mkdir()
    parser = build_parser()
    assert _resumable(parser.parse_args(["sweep", "--n-useful", "30", "--p", "0.5", "--store", str(store)]))
    assert not _resumable(parser.parse_args(["sweep", "--n-useful", "30", "--p", "0.5", "--store", "new.zarr"]))
    assert not _resumable(parser.parse_args(["sweep", "--n-useful", "30", "--p", "0.5"]))
    assert not _resumable(parser.parse_args(["export", str(store), str(tmp_path / "x.nc")]))
    assert not _resumable(parser.parse_args(["verify", str(store)]))
    assert not _resumable(parser.parse_args(["estimate"]))


@pytest.mark.parametrize(
    "sig, line, status", [(signal.SIGINT, INTERRUPTED, 130), (signal.SIGTERM, "ensstab: terminated", 143)]
)
def test_a_stop_signal_while_the_libraries_are_imported_is_one_line(sig, line, status):
    """Before the command's own handling starts (its imports take seconds on a busy machine),
    a stop signal still ends it with its line and status, not Python's traceback of the
    import. The signal is sent once the process has begun to import the package."""
    for delay in (0.2, 0.4, 0.7):
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "ensstab_dask.cli", "estimate", "--quiet"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        time.sleep(delay)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=PATIENCE)
        if "ensstab_dask.cli._early_stop" not in err:
            continue  # the signal came before the package began to import: Python's own, not ours
        lines = [ln for ln in err.splitlines() if not ln.startswith("import time:")]
        assert proc.returncode == status and lines == [line], (delay, proc.returncode, lines[-5:])
        return
    pytest.skip("the process had not begun to import the package 0.7 s after its start (a loaded machine)")
