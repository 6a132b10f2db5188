"""The probe's loud cases (numbered 12-18): hangs, tracebacks, noisy output.

Each case runs the CLI as a user would (``python -m ensstab_dask.cli``, its own process)
in the empty folder it is given and returns its class (``probe_cases_common.CLASSES``).
A run is a hang when it is still going at the case's limit (then killed); a traceback
when one is printed; an error when it ends with exactly one line, ``ensstab: error:``,
and exit status 2, before any work where the case says the fault can be known before
(nothing on stdout, and quicker than the work); right when it does what was asked;
noisy when it works but floods, misleads or takes long to stop. The faults come from
``tests/faults.py``, as in the tests: permissions bind root too (it drops the
capabilities that override them), a full disk is a 1 MB tmpfs in a private mount
namespace (root only; elsewhere that case says so and counts as an error it could not
provoke).

    python tests/probe/probe_replay.py --only 12,13,14,15,16,17,18
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]  # the repository: tests/probe/..
sys.path[:0] = [str(HERE), str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402
from faults import (  # noqa: E402
    HTTP_ANSWER,
    SWEEP,
    drop_root_override,
    env,
    half_done_store,
    http_server,
    listener,
    on_a_full_disk,
    read_only,
    run_cli,
    stopped_scheduler,
    tmpfs_unavailable,
)
from probe_cases_common import Case  # noqa: E402

#: Seconds within which a stop signal must end the process for the case to be "right".
STOPPED_WITHIN = 4.0


def classify(ran, *, needle: str = "", before_work: bool = False) -> str:
    """A run that should have been refused: error, or what it was instead."""
    if ran.timed_out:
        return "hang"
    if ran.returncode < 0:  # killed by a signal: a crash in C code
        return "signal"
    if "Traceback" in ran.stderr:
        return "traceback"
    if ran.one_line_error() and needle in ran.lines[0] and not (before_work and ran.stdout.strip()):
        return "error"
    return "silent" if ran.returncode == 0 else "noisy"


def _refused(*args: str, needle: str = "", before_work: bool = False, timeout: float = 120, **kw):
    def run(tmp: Path) -> str:
        return classify(run_cli(*args, cwd=tmp, timeout=timeout, **kw), needle=needle, before_work=before_work)

    return run


def _stopped(args: list[str], signum: int, *, wait_for: str | float | threading.Event, status: int, setup=None):
    """Send ``signum`` once stderr shows ``wait_for`` (a float: that many seconds after the
    start; an event: once it is set), to the process group for SIGINT (as a terminal does), to the process
    otherwise: right when the process ends within STOPPED_WITHIN s with ``status`` and
    its last line ``ensstab: ...``. ``setup(tmp)`` returns environment variables to set."""

    def run(tmp: Path) -> str:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ensstab_dask.cli", *args],
            cwd=tmp,
            env=dict(env(), **(setup(tmp) if setup else {})),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
        reader.start()
        if isinstance(wait_for, threading.Event):
            wait_for.wait(300)
            time.sleep(1.0)
        elif isinstance(wait_for, str):
            deadline = time.monotonic() + 300
            while not any(wait_for in line for line in lines) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.0)
        else:
            time.sleep(wait_for)
        if proc.poll() is not None:
            return "traceback" if "Traceback" in "".join(lines) else "noisy"
        start = time.monotonic()
        (os.killpg if signum == signal.SIGINT else os.kill)(proc.pid, signum)
        try:
            code = proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return "hang"
        took = time.monotonic() - start
        reader.join(10)
        err = "".join(lines)
        if "Traceback" in err:
            return "traceback"
        last = err.strip().splitlines()[-1:]
        clean = code == status and last and last[0].startswith("ensstab: ") and "leaked" not in err
        return "right" if clean and took <= STOPPED_WITHIN else "noisy"

    return run


# 12 ---------------------------------------------------------------------------------------


# About a minute of drawing in the CLI's own process (no cluster).
SIMULATE_LONG = ["simulate", "--n-feature", "20000", "--m-ensemble", "1:30:1", "--m-stability", "100"]

# 13 ---------------------------------------------------------------------------------------


def _scheduler_case(make, *, timeout: str = "3"):
    def run(tmp: Path) -> str:
        with make() as address:
            ran = run_cli(
                *SWEEP,
                "--n-useful",
                "20",
                "--p",
                "0.5",
                "--scheduler",
                address,
                "--timeout",
                timeout,
                "--no-progress",
                cwd=tmp,
                timeout=90,
            )
        return classify(ran, needle="could not reach")

    return run


def _sigterm_while_connecting(tmp: Path) -> str:
    connected = threading.Event()
    with listener(accepted=connected) as address:
        run = _stopped(
            [*SWEEP, "--n-useful", "20", "--p", "0.5", "--scheduler", address, "--timeout", "120"],
            signal.SIGTERM,
            wait_for=connected,
            status=143,
        )
        return run(tmp)


# 14, 18: special files ----------------------------------------------------------------------


def _fifo(name: str, *args: str, needle: str):
    def run(tmp: Path) -> str:
        os.mkfifo(tmp / name)
        return classify(run_cli(*args, cwd=tmp, timeout=60), needle=needle, before_work=True)

    return run


# 15: without write permission --------------------------------------------------------------------


def _read_only_folder(*args: str, store: bool = False, needle: str = "no permission"):
    def run(tmp: Path) -> str:
        if store:
            ran = run_cli(*SWEEP, "--n-useful", "20", "--p", "0.5", "--store", "ok.zarr", cwd=tmp)
            assert ran.returncode == 0, ran.stderr
        (tmp / "ro").mkdir()
        with read_only(tmp / "ro"):
            ran = run_cli(*args, cwd=tmp, preexec=drop_root_override)
        return classify(ran, needle=needle, before_work=True)

    return run


def _read_only_store(tmp: Path) -> str:
    store, args = half_done_store(tmp)
    with read_only(store):
        ran = run_cli(*args, "--store", str(store), cwd=tmp, preexec=drop_root_override)
    return classify(ran, needle="rerun the same command to resume")


# 16: a full disk -------------------------------------------------------------------------------------


def _disk_full(tmp: Path) -> str:
    why = tmpfs_unavailable()
    if why:
        print(f"    (16: {why}; not provoked)", flush=True)
        return "error"
    store, args = half_done_store(tmp)
    sweep, tests, reference = " ".join(args), ROOT / "tests", tmp / "reference.zarr"
    script = f"""python -m ensstab_dask.cli {sweep} --store s.zarr; echo "rc=$?"
python -m ensstab_dask.cli verify s.zarr; echo "verify rc=$?"
rm filler
python -m ensstab_dask.cli {sweep} --store s.zarr; echo "resume rc=$?"
python -c "
import sys; sys.path.insert(0, '{tests}')
import xarray as xr
from sweep_cases import assert_same
assert_same(xr.open_zarr('{reference}').load(), xr.open_zarr('s.zarr').load()); print('identical')"
"""
    done = on_a_full_disk(script, store, free_kb=12)
    out = done.stdout + done.stderr
    if "Traceback" in out:
        return "traceback"
    error = [line for line in out.splitlines() if line.startswith("ensstab: error:")]
    ok = "rc=2" in out and "verify rc=0" in out and "resume rc=0" in out and "identical" in out
    return "error" if ok and len(error) == 1 and "resume" in error[0] else "noisy"


# 17: data and stores -------------------------------------------------------------------------------------


def _data_case(make_x, needle: str):
    def run(tmp: Path) -> str:
        rng = np.random.default_rng(0)
        y = np.repeat([0, 1], 15)
        np.savez(tmp / "d.npz", X=make_x(rng.normal(size=(30, 50))), y=y)
        ran = run_cli(
            "estimate",
            "--data",
            "d.npz",
            "--n-target",
            "5",
            "--n-estimators",
            "10",
            "--scheduler",
            "synchronous",
            "--quiet",
            cwd=tmp,
        )
        return classify(ran, needle=needle, before_work=True)

    return run


def _with_store(edit, *args: str, needle: str = ""):
    """Make a small store, ``edit(store)`` it, then run ``args`` (``STORE`` stands for it)."""

    def run(tmp: Path) -> str:
        ran = run_cli(*SWEEP, "--n-useful", "20,30", "--p", "0.5,0.7", "--store", "s.zarr", cwd=tmp)
        assert ran.returncode == 0, ran.stderr
        edit(tmp / "s.zarr")
        return classify(run_cli(*[a.replace("STORE", "s.zarr") for a in args], cwd=tmp), needle=needle)

    return run


def _attr(name: str, value):
    def edit(store: Path) -> None:
        meta = json.loads((store / "zarr.json").read_text())
        meta["attributes"][name] = value
        (store / "zarr.json").write_text(json.dumps(meta))

    return edit


def _coordinate_chunk(name: str):
    def edit(store: Path) -> None:
        (store / name / "c" / "0").unlink()

    return edit


def _in_tmp(make, *args: str, needle: str = "", before_work: bool = True):
    def run(tmp: Path) -> str:
        make(tmp)
        return classify(run_cli(*args, cwd=tmp), needle=needle, before_work=before_work)

    return run


# 18: noisy ------------------------------------------------------------------------------------------


def _convergence_flood(tmp: Path) -> str:
    rng = np.random.default_rng(0)
    X = np.minimum(np.exp(rng.normal(size=(62, 200)) * 20), 1e37)  # lbfgs gives up on such scales
    np.savez(tmp / "wild.npz", X=X, y=np.repeat([0, 1], 31))
    # --no-cache: runs read back from an earlier replay's cache warn of nothing.
    args = ["--data", "wild.npz", "--selector", "logistic", "--n-target", "10", "--quiet", "--no-cache"]
    ran = run_cli("estimate", *args, cwd=tmp)
    if ran.timed_out or "Traceback" in ran.stderr:
        return "hang" if ran.timed_out else "traceback"
    said = "did not converge in" in ran.stderr
    return "right" if ran.returncode == 0 and said and len(ran.lines) <= 2 else "noisy"


def _slow_worker_start(tmp: Path) -> dict:
    """Worker processes that take 30 s to start (a loaded machine): a sitecustomize that
    sleeps in spawned processes only."""
    (tmp / "sitecustomize.py").write_text(
        "import sys, time\nif '--multiprocessing-fork' in sys.argv:\n    time.sleep(30)\n"
    )
    return {"PYTHONPATH": f"{tmp}{os.pathsep}{env()['PYTHONPATH']}"}


_ctrl_c_during_start = _stopped(
    # --no-cache: with every run cached, no cluster starts and there is nothing to interrupt.
    ["estimate", "--n-estimators", "20", "--no-cache"],
    signal.SIGINT,
    wait_for=10.0,
    status=130,
    setup=_slow_worker_start,
)


def _same_file_twice(tmp: Path) -> str:
    ran = run_cli(
        "estimate",
        "--json",
        "x",
        "--output",
        "x",
        "--n-estimators",
        "10",
        "--scheduler",
        "synchronous",
        "--quiet",
        cwd=tmp,
    )
    return classify(ran, before_work=True)


def _dangling(tmp: Path) -> None:
    (tmp / "s.zarr").symlink_to(tmp / "elsewhere.zarr")


def _lock_dir(tmp: Path) -> None:
    (tmp / ".s.zarr.lock").mkdir()


def _empty_dir(tmp: Path) -> None:
    (tmp / "out").mkdir()


def _header_only(tmp: Path) -> None:
    (tmp / "h.csv").write_text("a,b,c,label\n")


CASES: list[Case] = [
    Case(
        12,
        "simulate --m-ensemble 1000000: memory refused up front",
        _refused("simulate", "--m-ensemble", "1000000", needle="memory", before_work=True),
    ),
    Case(
        12,
        "simulate --n-feature 100000000: memory refused up front",
        _refused("simulate", "--n-feature", "100000000", needle="memory", before_work=True),
    ),
    Case(
        12,
        "SIGTERM during a long simulate ends it within seconds",
        _stopped(SIMULATE_LONG, signal.SIGTERM, wait_for=8.0, status=143),
    ),
    Case(13, "a silent TCP listener as the scheduler: refused within --timeout", _scheduler_case(listener)),
    Case(13, "an HTTP server on the scheduler port: refused within --timeout", _scheduler_case(http_server)),
    Case(13, "a SIGSTOPped dask scheduler: refused within --timeout", _scheduler_case(stopped_scheduler)),
    Case(13, "SIGTERM while waiting for a silent scheduler ends the process", _sigterm_while_connecting),
    Case(14, "report on a FIFO refused", _fifo("pipe.nc", "report", "pipe.nc", "-o", "r", needle="not a regular")),
    Case(
        15,
        "simulate --json into a read-only folder",
        _read_only_folder(
            "simulate", "--n-feature", "300", "--m-ensemble", "1", "--m-stability", "5", "--json", "ro/x.json"
        ),
    ),
    Case(
        15,
        "sweep --store in a read-only folder",
        _read_only_folder(*SWEEP, "--n-useful", "20", "--p", "0.5", "--store", "ro/s.zarr"),
    ),
    Case(
        15,
        "sweep --output into a read-only folder",
        _read_only_folder(*SWEEP, "--n-useful", "20", "--p", "0.5", "--output", "ro/s.nc"),
    ),
    Case(
        15,
        "estimate --json into a read-only folder, before the work",
        _read_only_folder("estimate", "--n-estimators", "10", "--json", "ro/x.json"),
    ),
    Case(
        15,
        "estimate --output into a read-only folder, before the work",
        _read_only_folder("estimate", "--n-estimators", "10", "--output", "ro/x.nc"),
    ),
    Case(15, "export into a read-only folder", _read_only_folder("export", "ok.zarr", "ro/x.nc", store=True)),
    Case(15, "report -o in a read-only folder", _read_only_folder("report", "ok.zarr", "-o", "ro/r", store=True)),
    Case(
        15,
        "validate --cache-dir in a read-only folder",
        _read_only_folder("validate", "--n-estimators", "10", "--cache-dir", "ro/cache"),
    ),
    Case(15, "resuming a read-only half-done store", _read_only_store),
    Case(16, "a full disk mid-sweep: one line, the store sound, the resume identical", _disk_full),
    Case(17, "complex X in .npz", _data_case(lambda X: X + 1j, "real-valued")),
    Case(17, "string X in .npz", _data_case(lambda X: np.full(X.shape, "abc"), "numeric")),
    Case(17, "a value of 1e39 in X", _data_case(lambda X: np.where(X > 2.5, 1e39, X), "float32")),
    Case(17, "--n-estimators 0", _refused("estimate", "--n-estimators", "0", needle="--n-estimators")),
    Case(17, "--n-estimators -1", _refused("estimate", "--n-estimators", "-1", needle="--n-estimators")),
    Case(17, "--timeout -5", _refused(*SWEEP, "--n-useful", "20", "--p", "0.5", "--timeout", "-5", needle="--timeout")),
    Case(
        17, "--timeout nan", _refused(*SWEEP, "--n-useful", "20", "--p", "0.5", "--timeout", "nan", needle="--timeout")
    ),
    Case(
        17,
        "a directory at the store's lock path",
        _in_tmp(_lock_dir, *SWEEP, "--n-useful", "20", "--p", "0.5", "--store", "s.zarr", needle="lock file"),
    ),
    Case(
        17,
        "an empty directory as --json with --overwrite, before the work",
        _in_tmp(
            _empty_dir, "estimate", "--n-estimators", "10", "--json", "out", "--overwrite", needle="is a directory"
        ),
    ),
    Case(
        17,
        "a settings record that is a JSON list",
        _with_store(_attr("ensstab_settings", "[1, 2]"), "export", "STORE", "x.nc", needle="settings record"),
    ),
    Case(
        17,
        "report on a store with its p coordinate chunk deleted",
        _with_store(_coordinate_chunk("p"), "report", "STORE", "-o", "r", needle="damaged"),
    ),
    Case(
        17,
        "report on a store with its m_ensemble coordinate chunk deleted",
        _with_store(_coordinate_chunk("m_ensemble"), "report", "STORE", "-o", "r", needle="damaged"),
    ),
    Case(
        17,
        "report on a store with its n_useful coordinate chunk deleted",
        _with_store(_coordinate_chunk("n_useful"), "report", "STORE", "-o", "r", needle="damaged"),
    ),
    Case(
        17,
        "report on a store with an edited kind",
        _with_store(_attr("kind", "estimate"), "report", "STORE", "-o", "r", needle="kind"),
    ),
    Case(
        17,
        "export of a store with an edited kind",
        _with_store(_attr("kind", "estimate"), "export", "STORE", "x.nc", needle="kind"),
    ),
    Case(17, "a non-Dask service talking first on the scheduler port", _scheduler_case(lambda: listener(HTTP_ANSWER))),
    Case(18, "--selector logistic: ConvergenceWarnings summarised under --quiet", _convergence_flood),
    Case(
        18,
        "SIGHUP is handled like SIGTERM",
        _stopped(["estimate", "--n-estimators", "50"], signal.SIGHUP, wait_for="Dask dashboard", status=129),
    ),
    Case(
        18,
        "SIGTERM during an estimate ends it within seconds",
        _stopped(["estimate", "--n-estimators", "50"], signal.SIGTERM, wait_for="Dask dashboard", status=143),
    ),
    Case(
        18,
        "--n-boot 100000000 refused up front by name",
        _refused("estimate", "--n-boot", "100000000", needle="--n-boot", before_work=True),
    ),
    Case(
        18,
        "a dangling symbolic link as --store",
        _in_tmp(_dangling, *SWEEP, "--n-useful", "20", "--p", "0.5", "--store", "s.zarr", needle="symbolic link"),
    ),
    Case(18, "a header-only CSV", _in_tmp(_header_only, "estimate", "--data", "h.csv", needle="no rows")),
    Case(18, "a FIFO as --data", _fifo("d.csv", "estimate", "--data", "d.csv", needle="not a regular file")),
    Case(18, "--json x --output x without --overwrite, before the work", _same_file_twice),
    Case(18, "Ctrl-C while the local cluster starts", _ctrl_c_during_start),
]
