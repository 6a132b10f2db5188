"""Faults a careful user and a careless one meet, through the CLI as they run it: each is
one line, ``ensstab: error: ...``, with exit status 2, before any work where it can be
known before, and nothing of theirs lost. The faults themselves (permissions that bind
root too, a full disk, half-done stores) come from tests/faults.py, which the probe
replay (tests/probe/probe_cases_loud.py) shares."""

from __future__ import annotations

import json
import os
import resource
import sys

import numpy as np
import pytest
import xarray as xr
from faults import (
    SWEEP,
    drop_root_override,
    half_done_store,
    on_a_full_disk,
    permissions_apply,
    read_only,
    run_cli,
    tmpfs_unavailable,
)
from pace import Pace
from sweep_cases import assert_same

from ensstab_dask.sweeps.storage import SweepStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions, FIFOs and signals")


#: Reference runs (tests/pace.py) a command may take before it counts as waiting on a FIFO
#: without end: about twenty times what it needs, however busy the machine.
FIFO_RUNS = 20


def _one_line(ran, needle: str) -> None:
    assert not ran.timed_out, f"still running after {ran.seconds:.0f} s"
    assert ran.one_line_error(), (ran.returncode, ran.stderr[-3000:])
    assert needle in ran.lines[0], ran.lines[0]


# Numbers the CLI refuses by name, before any work ---------------------------------------------


@pytest.mark.parametrize(
    "args, needle",
    [
        (["estimate", "--n-estimators", "0"], "--n-estimators must be >= 1; got 0"),
        (["estimate", "--n-estimators", "-1"], "--n-estimators must be >= 1; got -1"),
        (["estimate", "--timeout", "-5"], "--timeout must be in (0.0, inf); got -5.0"),
        ([*SWEEP, "--n-useful", "20", "--p", "0.5", "--timeout", "nan"], "--timeout must be a number"),
        (["estimate", "--n-boot", "100000000"], "--n-boot must be 0 (no bootstrap) or in [20, 10000]"),
    ],
)
def test_bad_numbers_are_refused_by_name_before_any_work(args, needle, tmp_path):
    """--n-estimators 0 and -1 were scikit-learn's tracebacks from the workers; --timeout -5
    and nan were taken; --n-boot 100000000 ran the real runs for 68 s and then blamed
    --m-ensemble and the grid for running out of memory."""
    ran = run_cli(*args, cwd=tmp_path, timeout=120)
    _one_line(ran, needle)
    assert ran.stdout == ""  # not even the data line: nothing was read or run


def _memory_capped():
    """preexec_fn: the old code's growth ends in a MemoryError at 2 GB, not in the machine's swap."""
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


@pytest.mark.parametrize("args", [["--m-ensemble", "1000000"], ["--n-feature", "100000000"]])
def test_simulate_refuses_what_would_not_fit_in_memory_before_drawing(args, tmp_path):
    """It grew by 100 MB/s until killed (sweep and estimate refused the same sizes at once)."""
    ran = run_cli("simulate", *args, cwd=tmp_path, timeout=120, preexec=_memory_capped)
    _one_line(ran, "would need about")
    assert "more than half of this machine's" in ran.lines[0] and ran.stdout == ""


# Special files, odd paths, damaged records --------------------------------------------------------


def test_report_on_a_fifo_is_refused_not_waited_on(tmp_path, busy_machine):
    """It blocked forever, opening the FIFO for reading."""
    os.mkfifo(tmp_path / "pipe.nc")
    ran = run_cli("report", "pipe.nc", "-o", "r", cwd=tmp_path, timeout=Pace().bound(0, FIFO_RUNS))
    _one_line(ran, "pipe.nc is not a regular file (a FIFO")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda X: X + 1j, "X must be real-valued; got complex numbers"),
        (lambda X: np.full(X.shape, "abc"), "X must be a dense numeric (n_samples, n_feature) array"),
        (lambda X: np.array([[1, "a"]] * len(X), dtype=object), "must be numeric or string arrays"),
        (lambda X: np.where(X > 2.5, 1e39, X), "X holds values beyond float32's range"),
    ],
    ids=["complex", "strings", "objects", "1e39"],
)
def test_data_the_method_cannot_use_is_named_before_any_run(make, needle, tmp_path):
    """Complex or string X was a TypeError traceback (an object array a ValueError's); a
    value of 1e39 passed the float64 check and failed the forest's float32 cast in the
    first real run."""
    np.savez(tmp_path / "d.npz", X=make(np.random.default_rng(0).normal(size=(30, 50))), y=np.repeat([0, 1], 15))
    estimate = "estimate --data d.npz --n-target 5 --n-estimators 10 --scheduler synchronous"
    ran = run_cli(*estimate.split(), cwd=tmp_path)
    _one_line(ran, needle)
    assert "data:" not in ran.stdout


def test_a_header_only_csv_and_a_fifo_as_data_are_called_what_they_are(tmp_path, busy_machine):
    """They were "feature columns must be numeric" and "does not exist"."""
    (tmp_path / "h.csv").write_text("a,b,c,label\n")
    _one_line(run_cli("estimate", "--data", "h.csv", cwd=tmp_path), "h.csv: a header and no rows")
    os.mkfifo(tmp_path / "d.csv")
    waited = run_cli("estimate", "--data", "d.csv", cwd=tmp_path, timeout=Pace().bound(0, FIFO_RUNS))
    _one_line(waited, "is not a regular file (a FIFO")


def test_odd_paths_for_stores_and_outputs_are_refused_by_name(tmp_path):
    """A directory at the lock path and a directory given as a file output (with
    --overwrite: after all the work) were IsADirectoryError tracebacks; a dangling link as
    --store got "--output ... exists"."""
    grid = [*SWEEP, "--n-useful", "20", "--p", "0.5"]
    (tmp_path / ".s.zarr.lock").mkdir()
    ran = run_cli(*grid, "--store", "s.zarr", cwd=tmp_path)
    _one_line(ran, "is a directory, which a sweep never makes; remove it and rerun")
    assert not (tmp_path / "s.zarr").exists()
    (tmp_path / "out").mkdir()
    ran = run_cli("estimate", "--n-estimators", "10", "--json", "out", "--overwrite", cwd=tmp_path)
    _one_line(ran, "'out' is a directory; give a file name")
    assert ran.stdout == "" and not list((tmp_path / "out").iterdir())
    (tmp_path / "link.zarr").symlink_to(tmp_path / "elsewhere.zarr")
    ran = run_cli(*grid, "--store", "link.zarr", cwd=tmp_path)
    _one_line(ran, "--store: 'link.zarr' is a symbolic link to")
    assert os.path.islink(tmp_path / "link.zarr") and not (tmp_path / "elsewhere.zarr").exists()


def _edit_attr(store, name, value):
    meta = json.loads((store / "zarr.json").read_text())
    meta["attributes"][name] = value
    (store / "zarr.json").write_text(json.dumps(meta))


def test_a_settings_record_that_is_not_an_object_and_an_edited_kind_are_damage(tmp_path):
    """A record that is a JSON list was an AttributeError traceback in every command that
    reads a store; an edited kind was exported as it stood (and report drew a traceback)."""
    ran = run_cli(*SWEEP, "--n-useful", "20,30", "--p", "0.5,0.7", "--store", "s.zarr", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    store = tmp_path / "s.zarr"
    original = (store / "zarr.json").read_text()
    _edit_attr(store, "ensstab_settings", "[1, 2]")
    resume = [*SWEEP, "--n-useful", "20,30", "--p", "0.5,0.7", "--store", "s.zarr"]
    for args in (["verify", "s.zarr"], ["export", "s.zarr", "x.nc"], resume):
        ran = run_cli(*args, cwd=tmp_path)
        assert "Traceback" not in ran.stderr, ran.stderr
        assert "its settings record is damaged (a JSON list, not an object" in ran.stderr, ran.stderr
    (store / "zarr.json").write_text(original)
    _edit_attr(store, "kind", "estimate")
    _one_line(run_cli("export", "s.zarr", "x.nc", cwd=tmp_path), "kind is 'estimate' in the store")
    assert not (tmp_path / "x.nc").exists()
    assert "kind is 'estimate'" in run_cli("verify", "s.zarr", cwd=tmp_path).stdout


# Without permission to write -----------------------------------------------------------------------


@pytest.mark.skipif(bool(permissions_apply()), reason=permissions_apply() or "permissions apply")
@pytest.mark.parametrize(
    "args, needle",
    [
        (
            ["simulate", "--n-feature", "300", "--m-ensemble", "1", "--m-stability", "5", "--json", "ro/x.json"],
            "cannot write 'ro/x.json': no permission to write in the folder 'ro'",
        ),
        ([*SWEEP, "--n-useful", "20", "--p", "0.5", "--store", "ro/s.zarr"], "--store: cannot write 'ro/s.zarr'"),
        ([*SWEEP, "--n-useful", "20", "--p", "0.5", "--output", "ro/s.nc"], "--output: cannot write 'ro/s.nc'"),
        (["estimate", "--n-estimators", "10", "--json", "ro/x.json"], "--json: cannot write 'ro/x.json'"),
        (["estimate", "--n-estimators", "10", "--output", "ro/x.nc"], "--output: cannot write 'ro/x.nc'"),
        (["export", "ok.zarr", "ro/x.nc"], "cannot write 'ro/x.nc'"),
        (["report", "ok.zarr", "-o", "ro/r"], "cannot write 'ro/r'"),
        (["validate", "--n-estimators", "10", "--cache-dir", "ro/cache"], "--cache-dir: cannot write in 'ro/cache'"),
    ],
    ids="simulate sweep-store sweep-output estimate-json estimate-output export report validate-cache".split(),
)
def test_a_folder_not_writable_is_one_line_naming_it(args, needle, tmp_path):
    """Each was a PermissionError traceback; estimate's came after all the work."""
    if args[0] in ("export", "report"):
        assert run_cli(*SWEEP, "--n-useful", "20", "--p", "0.5", "--store", "ok.zarr", cwd=tmp_path).returncode == 0
    (tmp_path / "ro").mkdir()
    with read_only(tmp_path / "ro"):
        ran = run_cli(*args, cwd=tmp_path, preexec=drop_root_override)
    _one_line(ran, needle)
    assert not list((tmp_path / "ro").iterdir())
    if args[0] in ("estimate", "validate"):
        assert "data:" not in ran.stdout  # refused before the data were read, let alone the runs


@pytest.mark.slow
@pytest.mark.skipif(bool(permissions_apply()), reason=permissions_apply() or "permissions apply")
def test_a_read_only_half_done_store_is_refused_before_any_block_and_left_as_it_was(tmp_path):
    """Resuming it was a PermissionError traceback once the first block was computed."""
    store, args = half_done_store(tmp_path)
    before = sorted((p.relative_to(store), p.read_bytes()) for p in store.rglob("*") if p.is_file())
    with read_only(store):
        ran = run_cli(*args, "--store", str(store), cwd=tmp_path, preexec=drop_root_override)
    _one_line(ran, "no permission to write in")
    assert "nothing was computed and the store is unchanged" in ran.lines[0]
    assert "rerun the same command to resume" in ran.lines[0]
    assert sorted((p.relative_to(store), p.read_bytes()) for p in store.rglob("*") if p.is_file()) == before
    assert run_cli(*args, "--store", str(store), cwd=tmp_path).returncode == 0  # made writable, it resumes
    assert_same(xr.open_zarr(tmp_path / "reference.zarr").load(), SweepStore(store).load())


# A full disk -----------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(bool(tmpfs_unavailable()), reason=tmpfs_unavailable() or "a tmpfs can be mounted")
def test_a_full_disk_mid_sweep_is_one_line_the_store_sound_and_the_resume_identical(tmp_path):
    """A 1 MB tmpfs with 12 kB free holds the copy of a half-done store: the resume writes
    a few blocks, then zarr's write fails with ENOSPC, which was a traceback."""
    store, args = half_done_store(tmp_path)
    sweep = " ".join(args)
    script = f"""python -m ensstab_dask.cli {sweep} --store s.zarr; echo "rc=$?"
python -m ensstab_dask.cli verify s.zarr; echo "verify rc=$?"
rm filler
python -m ensstab_dask.cli {sweep} --store s.zarr; echo "resume rc=$?"
cp -r s.zarr '{tmp_path / "resumed.zarr"}'
"""
    done = on_a_full_disk(script, store, free_kb=12)
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out[-3000:]
    errors = [line for line in out.splitlines() if line.startswith("ensstab: error:")]
    assert "rc=2" in out and len(errors) == 1, out[-3000:]
    assert "the disk is full (No space left on device)" in errors[0], errors[0]
    assert "the blocks finished before are safe" in errors[0] and "rerun the same command to resume" in errors[0]
    verified = [line for line in out.splitlines() if line.startswith("s.zarr: ok;")]
    assert "verify rc=0" in out and verified, out[-3000:]
    done_then = int(verified[0].split("; ")[1].split()[0])
    assert 8 <= done_then < 16, verified  # the 8 cells from before, and what fitted, marked done
    assert "resume rc=0" in out, out[-3000:]
    assert_same(xr.open_zarr(tmp_path / "reference.zarr").load(), SweepStore(tmp_path / "resumed.zarr").load())


def test_json_to_a_pipe_whose_reader_left_ends_quietly_with_sigpipes_status(tmp_path):
    """``ensstab estimate --json - | head -c 20``: the reader gone before the JSON is written
    (here for certain: the pipe's reading end closed from the start) ends the command with
    128 + SIGPIPE and no traceback, as a pipeline's writer ends."""
    import signal
    import subprocess

    from faults import env

    args = ["estimate", "--n-target", "3", "--n-estimators", "5", "--m-ensemble", "1,5", "--n-boot", "0", "--no-cache"]
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ensstab_dask.cli", *args, "--scheduler", "synchronous", "--json", "-"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=env(),
            cwd=tmp_path,
            timeout=300,
        )
    finally:
        os.close(write)
    assert done.returncode == 128 + signal.SIGPIPE, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr[-2000:]
