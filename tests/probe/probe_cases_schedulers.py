"""The probe's scheduler cases of the round "nothing lost, nothing injected": a listener at
``--scheduler`` whose answer would run code if unpickled (102), a real remote cluster whose
only worker is killed or stopped, or whose scheduler is stopped, mid-sweep (113), and a
scheduler address of 10,000 characters or a scheduler killed mid-sweep (114).

Each case runs the CLI as a user would, in the empty folder it is given, against real
processes on 127.0.0.1 (a ``dask scheduler`` and ``dask worker`` started by
``deploy/local/start-cluster.sh``, as the tests start them), and returns its class
(``probe_cases_common.CLASSES``). A case that waits for the client to say something
counts as a hang when nothing is said within its bound (the run is then stopped).

    python tests/probe/probe_replay.py --only 102,113,114
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]  # the repository: tests/probe/..
sys.path[:0] = [str(HERE), str(ROOT / "tests")]

from faults import SWEEP, env, listener, pickling_answer, run_cli  # noqa: E402 - tests/faults.py
from probe_cases_common import Case  # noqa: E402
from probe_cases_loud import classify  # noqa: E402
from process_cluster import ProcessCluster  # noqa: E402 - tests/process_cluster.py
from sweep_cases import wait_for_blocks  # noqa: E402 - tests/sweep_cases.py

#: A sweep of 12 cells of a few tenths of a second each, one block per cell: long enough for
#: a fault to land mid-sweep on any machine.
HEAVY = [
    "sweep",
    "--n-feature",
    "2000",
    "--n-target",
    "20",
    "--n-useful",
    "30,60,120",
    "--p",
    "0.4,0.6,0.8,1.0",
    "--m-ensemble",
    "12",
    "--m-stability",
    "40",
    "--repeats",
    "3",
    "--seed",
    "11",
    "--batch-size",
    "1",
    "--quiet",
]
#: Seconds after the fault within which the client must have said what is wrong.
SAID_WITHIN = 40.0


# 102 -----------------------------------------------------------------------------------------


def _pickle_answer(how: str):
    """A listener answering the handshake with a pickle that creates a file: silent if the
    file was created (code ran in the client), error if refused in one line."""

    def run(tmp: Path) -> str:
        touched = tmp / "touched"
        with listener(pickling_answer(touched, how)) as address:
            ran = run_cli(
                *SWEEP, "--n-useful", "20", "--p", "0.5", "--scheduler", address, "--timeout", "5", cwd=tmp, timeout=60
            )
        if touched.exists():
            return "silent"
        return classify(ran, needle="not in Dask's protocol")

    return run


# 113, 114: a real cluster, a fault mid-sweep --------------------------------------------------------


def _mid_sweep(fault, *, said: str, extra_env: dict | None = None, ends: bool):
    """The heavy sweep on a one-worker cluster; ``fault(cluster)`` once two blocks are done.

    ``ends``: the run must end by itself with one line holding ``said`` (error). Otherwise it
    must say ``said`` on stderr within SAID_WITHIN s and go on waiting, then stop on
    Ctrl-C with status 130 (right); a run that says nothing in that time is a hang."""

    def run(tmp: Path) -> str:
        cluster = ProcessCluster(Path(tempfile.mkdtemp(dir=tmp, prefix="cluster-")), n_workers=1)
        proc = None
        try:
            store = tmp / "s.zarr"
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "ensstab_dask.cli",
                    *HEAVY,
                    "--store",
                    str(store),
                    "--scheduler",
                    cluster.address,
                ],
                cwd=tmp,
                env=dict(env(), **(extra_env or {})),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            lines: list[str] = []
            reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
            reader.start()
            wait_for_blocks(store, 2, lambda: proc.poll() is None)
            fault(cluster)
            start = time.monotonic()
            while proc.poll() is None and not any(said in line for line in lines):
                if time.monotonic() - start > SAID_WITHIN:
                    return "hang"
                time.sleep(0.1)
            if not ends:
                if proc.poll() is not None:
                    reader.join(10)
                    return "traceback" if "Traceback" in "".join(lines) else "noisy"
                os.killpg(proc.pid, signal.SIGINT)
                code = proc.wait(30)
                reader.join(10)
                err = "".join(lines)
                if "Traceback" in err:
                    return "traceback"
                return "right" if code == 130 else "noisy"
            code = proc.wait(SAID_WITHIN)
            reader.join(10)
            err = "".join(lines)
            if "Traceback" in err:
                return "traceback"
            one = err.strip().splitlines()
            return "error" if code == 1 and len(one) == 1 and said in one[0] else "noisy"
        finally:
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            for role in ("scheduler", "worker-1"):
                try:
                    os.killpg(cluster.pid(role), signal.SIGCONT)
                except (OSError, ValueError):
                    pass
            cluster.stop()

    return run


def _signal(role: str, signum: int):
    def fault(cluster: ProcessCluster) -> None:
        # The process group: a worker's nanny and its worker process together.
        os.killpg(cluster.pid(role), signum)

    return fault


def _long_address(tmp: Path) -> str:
    address = "tcp://" + "a" * 10_000 + ":8786"
    ran = run_cli(*SWEEP, "--n-useful", "20", "--p", "0.5", "--scheduler", address, cwd=tmp, timeout=60)
    cls = classify(ran, needle="malformed scheduler address", before_work=True)
    return "noisy" if cls == "error" and len(ran.lines[0]) > 400 else cls


#: The library, with the scheduler SIGKILLed while a result is handed on and the client
#: closed by then: the next submission and the cancel of the work in flight meet a closed
#: client (what happened in about one CLI run in four).
_BETWEEN_RESULTS = """
import logging, os, signal, sys, time
import distributed  # its loggers are set up on import: quieted after it
from ensstab_dask.cluster import connect, run_tasks
from ensstab_dask.exceptions import SchedulerLost

address, pid = sys.argv[1], int(sys.argv[2])
for name in ("distributed.client", "distributed.comm", "distributed.batched"):  # as the CLI quiets them
    logging.getLogger(name).setLevel(logging.CRITICAL)

def on_result(i, out):
    if i == 0:
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while client.status != "closed" and time.monotonic() < deadline:
            time.sleep(0.05)

try:
    with connect(address, timeout=3) as client:
        run_tasks(time.sleep, [(0.1,)] * 8, client=client, on_result=on_result, window=1)
except SchedulerLost as exc:
    print("ensstab: error:", exc, file=sys.stderr)
    sys.exit(1)
"""


def _killed_between_results(tmp: Path) -> str:
    cluster = ProcessCluster(Path(tempfile.mkdtemp(dir=tmp, prefix="cluster-")), n_workers=1)
    try:
        ran = subprocess.run(
            [sys.executable, "-c", _BETWEEN_RESULTS, cluster.address, str(cluster.pid("scheduler"))],
            cwd=tmp,
            env=env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        return "hang"
    finally:
        cluster.stop()
    if "Traceback" in ran.stderr:
        return "traceback"
    lines = ran.stderr.strip().splitlines()
    ok = ran.returncode == 1 and len(lines) == 1 and "lost the connection to the Dask scheduler" in lines[0]
    return "error" if ok else "noisy"


CASES: list[Case] = [
    Case(102, "a listener answering the handshake with a __Pickled__ payload", _pickle_answer("pickled")),
    Case(102, "a listener answering the handshake with a __Serialized__ pickle", _pickle_answer("serialized")),
    Case(102, "a listener answering the handshake with a bare pickle", _pickle_answer("raw")),
    Case(
        113,
        "a remote cluster's only worker SIGKILLed mid-sweep: said, and waiting",
        _mid_sweep(_signal("worker-1", signal.SIGKILL), said="no worker has been connected", ends=False),
    ),
    Case(
        113,
        "a remote cluster's only worker SIGSTOPped mid-sweep: said, and waiting",
        _mid_sweep(_signal("worker-1", signal.SIGSTOP), said="has answered for", ends=False),
    ),
    Case(
        113,
        "a remote cluster's scheduler SIGSTOPped mid-sweep: ends in one line",
        _mid_sweep(
            _signal("scheduler", signal.SIGSTOP),
            said="has not answered for",
            extra_env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__TCP": "15s"},
            ends=True,
        ),
    ),
    Case(114, "--scheduler of 10,000 characters", _long_address),
    Case(
        114,
        "a remote cluster's scheduler SIGKILLed mid-sweep: SchedulerLost in one line",
        _mid_sweep(_signal("scheduler", signal.SIGKILL), said="lost the connection to the Dask scheduler", ends=True),
    ),
    Case(
        114,
        "the scheduler SIGKILLed while a result is handed on: SchedulerLost, not ClosedClientError",
        _killed_between_results,
    ),
]
