"""What must hold on a busy machine, run again and again beside CPU hogs, with the count.

Each check runs ``--repeat`` times beside two busy processes per core (tests/busy.py),
started once for the whole run, and prints how many of its runs passed::

    python tests/under_load.py signals --repeat 20   # the signal tests below, as pytest runs them
    python tests/under_load.py bounds --repeat 3     # every test that bounds a wall time (below)
    python tests/under_load.py sweep --repeat 5      # a 320-cell sweep into a store, to its end
    python tests/under_load.py notebook --repeat 2   # examples/03_reference_datasets.ipynb (small)
    python tests/under_load.py suite --repeat 2      # the whole test suite

``signals`` runs the five tests that failed under load (Ctrl-C and SIGTERM during an
estimate, Ctrl-C during a sweep without a store and during validate, Ctrl-C while the
local cluster starts); ``bounds`` runs every test that bounds a wall time (tests/pace.py
scales each bound with the machine's pace: two of them failed beside other work when they
were fixed seconds); ``sweep`` passes when the sweep exits 0 with nothing on stderr
(``--quiet``) and ``ensstab verify`` finds every cell done; ``notebook`` runs
examples/03 with ``ENSSTAB_EXAMPLE_SMALL=1`` as the test suite does (``--full`` for the
sizes a user runs: tens of minutes per run on 2 cores). The exit status is 0 when every
run passed; ``--keep DIR`` keeps each run's files (pytest's JUnit XML names
the tests that failed). Not part of the suite: it takes minutes to hours.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from busy import as_a_foreground_job, cores, cpu_hogs  # noqa: E402

SIGNAL_TESTS = [
    "tests/cli/test_cli_signals.py::test_ctrl_c_during_estimate",
    "tests/cli/test_cli_signals.py::test_sigterm_during_estimate_is_one_line_and_exit_143",
    "tests/cli/test_cli_signals.py::test_ctrl_c_during_a_sweep_without_a_store_and_during_validate",
    "tests/outputs/test_outputs.py::test_ctrl_c_while_the_local_cluster_starts_exits_130_without_the_exit_hook_traceback",
]
#: Every test that bounds a wall time: those that make a tests/pace.py Pace, and the one
#: fixed bound kept (a SIGKILL's, which no load slows). About 15 min a run beside the hogs
#: on 2 cores.
_CP = "tests/cluster/test_cluster_processes.py::"
BOUND_TESTS = [
    _CP + "test_scheduler_killed_gives_clear_error_and_fresh_cluster_resumes",
    _CP + "test_tls_cluster_accepts_its_certificates_and_refuses_others",
    _CP + "test_bad_scheduler_address_fails_clearly_in_bounded_time",
    _CP + "test_a_call_after_the_scheduler_died_is_scheduler_lost",
    _CP + "test_tls_to_a_plain_tcp_scheduler_says_so",
    _CP + "test_the_scheduler_dying_between_two_results_is_scheduler_lost",
    _CP + "test_a_remote_cluster_whose_only_worker_dies_says_so_and_goes_on_with_a_new_one",
    _CP + "test_a_remote_sweep_whose_last_worker_dies_says_so_then_ends_and_the_store_resumes",
    _CP + "test_a_remote_cluster_whose_only_worker_is_stopped_says_so_and_goes_on_when_it_answers",
    _CP + "test_a_stopped_remote_scheduler_ends_the_sweep_in_one_line_and_a_fresh_cluster_resumes",
    _CP + "test_work_with_data_waits_for_a_worker_to_join_and_says_so",
    _CP + "test_work_with_data_on_a_stopped_worker_says_so_and_goes_on_when_it_answers",
    "tests/cluster/test_hostile_schedulers.py::test_connect_gives_up_within_its_timeout",
    "tests/cluster/test_hostile_schedulers.py::test_the_cli_says_so_in_one_line_within_its_timeout",
    "tests/cluster/test_clients.py::test_a_misspelt_name_lists_the_accepted_values_at_once",
    "tests/cluster/test_clients.py::test_ctrl_c_kills_a_busy_worker_process_at_once_and_no_nanny_restarts_it",
    "tests/sweeps/test_sweep.py::test_unreachable_scheduler_fails_fast",
    "tests/sweeps/test_sweep.py::test_malformed_address_fails_at_once",
    "tests/sweeps/test_store_integrity.py::test_a_fifo_in_a_store_is_refused_not_waited_on",
    "tests/cli/test_cli_signals.py::test_sighup_is_handled_as_sigterm",
    "tests/cli/test_cli_signals.py::test_sigterm_while_waiting_for_a_silent_scheduler_ends_the_process_within_seconds",
    "tests/cli/test_cli_signals.py::test_ctrl_c_while_the_local_cluster_starts_ends_the_process_within_seconds",
    "tests/cli/test_cli_signals.py::test_sigterm_during_simulate_ends_it_within_seconds",
    "tests/cli/test_cli_faults.py::test_report_on_a_fifo_is_refused_not_waited_on",
    "tests/cli/test_cli_faults.py::test_a_header_only_csv_and_a_fifo_as_data_are_called_what_they_are",
]
#: 16 x 20 = 320 cells, ensembles of 5: about a minute of work on 2 idle cores.
SWEEP = [
    "sweep",
    "--n-feature",
    "2000",
    "--n-target",
    "20",
    "--n-useful",
    "20:320:20",
    "--p",
    "0.05:1.0:0.05",
    "--m-ensemble",
    "5",
    "--m-stability",
    "20",
    "--repeats",
    "3",
    "--quiet",
]


def _env(**extra: str) -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", **extra)


def _run(cmd: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, preexec_fn=as_a_foreground_job
    )


def _pytest(args: list[str], report: Path, timeout: float) -> tuple[bool, str]:
    """Run pytest on ``args``; whether it passed, its summary line and the tests that failed."""
    proc = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *args],
        _env(),
        timeout=timeout,
    )
    cases = ET.parse(report).getroot().iter("testcase") if report.exists() else []
    failed = [
        f"{c.get('classname')}::{c.get('name')}"
        for c in cases
        if c.find("failure") is not None or c.find("error") is not None
    ]
    tail = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else [proc.stderr[-300:]]
    return proc.returncode == 0, f"{tail[0]}" + (f"; failed: {', '.join(failed)}" if failed else "")


def signals(i: int, folder: Path) -> tuple[bool, str]:
    return _pytest(["-n", "0", *SIGNAL_TESTS], folder / f"signals-{i}.xml", timeout=3600)


def bounds(i: int, folder: Path) -> tuple[bool, str]:
    return _pytest(["-n", "0", *BOUND_TESTS], folder / f"bounds-{i}.xml", timeout=3600)


def sweep(i: int, folder: Path) -> tuple[bool, str]:
    store = folder / f"sweep-{i}.zarr"
    cli = [sys.executable, "-m", "ensstab_dask.cli"]
    proc = _run([*cli, *SWEEP, "--store", str(store)], _env(), timeout=3600)
    if proc.returncode != 0 or proc.stderr.strip():
        return False, f"exit {proc.returncode}; stderr: {proc.stderr.strip()[-1500:]}"
    check = _run([*cli, "verify", str(store)], _env(), timeout=600)
    return check.returncode == 0 and "320 of 320 cells done" in check.stdout, check.stdout.strip().splitlines()[-1]


def notebook(i: int, folder: Path, *, full: bool = False) -> tuple[bool, str]:
    import nbclient
    import nbformat

    nb = nbformat.read(ROOT / "examples" / "03_reference_datasets.ipynb", as_version=4)
    saved = dict(os.environ)
    os.environ.update(_env() if full else _env(ENSSTAB_EXAMPLE_SMALL="1"))
    try:
        nbclient.NotebookClient(
            nb, timeout=None if full else 3600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
        ).execute()
    except Exception as exc:  # noqa: BLE001 - reported as this run's failure, with its message
        return False, f"{type(exc).__name__}: {str(exc)[-1500:]}"
    finally:
        os.environ.clear()
        os.environ.update(saved)
    nbformat.write(nb, folder / f"03-run-{i}.ipynb")
    return True, "every cell ran"


def suite(i: int, folder: Path) -> tuple[bool, str]:
    return _pytest([], folder / f"suite-{i}.xml", timeout=4 * 3600)


CHECKS = {"signals": signals, "bounds": bounds, "sweep": sweep, "notebook": notebook, "suite": suite}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("check", choices=CHECKS)
    parser.add_argument("--repeat", type=int, default=1, help="runs of the check")
    parser.add_argument("--hogs", type=int, default=None, help="busy processes (default: two per core)")
    parser.add_argument("--full", action="store_true", help="notebook: the full sizes, not ENSSTAB_EXAMPLE_SMALL=1")
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="folder to keep each run's files in (pytest's JUnit XML, stores, notebooks)",
    )
    args = parser.parse_args(argv)
    # A SIGTERM must unwind the ``with`` below, or the hogs outlive this run.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    hogs = 2 * cores() if args.hogs is None else args.hogs
    passed = 0
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, cpu_hogs(hogs):
        folder = Path(tmp) if args.keep is None else args.keep
        folder.mkdir(parents=True, exist_ok=True)
        print(f"{args.check}: {args.repeat} runs beside {hogs} busy processes on {cores()} cores", flush=True)
        for i in range(1, args.repeat + 1):
            t = time.monotonic()
            kwargs = {"full": True} if args.check == "notebook" and args.full else {}
            ok, what = CHECKS[args.check](i, folder, **kwargs)
            passed += ok
            print(f"  run {i}: {'pass' if ok else 'FAIL'} in {time.monotonic() - t:.0f} s: {what}", flush=True)
    minutes = (time.monotonic() - start) / 60
    print(f"{args.check}: {passed} of {args.repeat} runs passed beside {hogs} busy processes ({minutes:.1f} min)")
    return 0 if passed == args.repeat else 1


if __name__ == "__main__":
    raise SystemExit(main())
