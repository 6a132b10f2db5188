"""One writer per store: concurrent sweeps on one store, as real processes."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ensstab_dask as es
from ensstab_dask.exceptions import StoreLocked
from ensstab_dask.sweeps.lock import lock_path, writer_lock

ROOT = Path(__file__).resolve().parents[2]
# The grid of the report that found lost updates: 80 cells, one per task, small chunks.
GRID = [
    "--n-feature",
    "200",
    "--n-target",
    "10",
    "--n-useful",
    "10:13:1",
    "--p",
    "0.05:1.0:0.05",
    "--m-stability",
    "2",
    "--repeats",
    "1",
    "--batch-size",
    "1",
]
KW = dict(
    n_useful=[10, 11, 12, 13],
    p=[round(0.05 * k, 2) for k in range(1, 21)],
    m_ensemble=[1],
    m_stability=2,
    repeats=1,
    seed=0,
)


def start(store):
    cmd = [
        sys.executable,
        "-m",
        "ensstab_dask.cli",
        "sweep",
        *GRID,
        "--store",
        str(store),
        "--scheduler",
        "synchronous",
        "--quiet",
    ]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


@pytest.mark.slow
def test_two_sweeps_on_one_store_never_lose_a_cell(tmp_path):
    """Before the lock, about 1 round in 6 ended with both saying "sweep done" and a cell
    marked done holding NaN, or failed creating the store. 5 rounds, both orders of start;
    in one at least the two must overlap (the last assertion)."""
    reference = es.sweep(200, 10, client="synchronous", progress=False, **KW)
    refused = 0
    for round_ in range(5):
        store = tmp_path / f"S{round_}.zarr"
        procs = [start(store), start(store)]
        results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
        assert any(code == 0 for code, _, _ in results), results
        for code, out, err in results:
            if code == 0:
                assert "sweep done" in out, (out, err)
            else:
                refused += 1
                lines = err.strip().splitlines()
                assert code == 2 and len(lines) == 1 and "being written by another sweep (pid" in lines[0], err
        # Whatever happened, the store is complete and exactly the reference.
        again = es.sweep(200, 10, client="synchronous", progress=False, store=store, **KW)
        assert not np.isnan(again["stability"].values).any()
        np.testing.assert_array_equal(again["stability_draws"].values, reference["stability_draws"].values)
    assert refused > 0  # the two really overlapped at least once


def test_lock_names_its_owner_and_is_released(tmp_path):
    store = tmp_path / "S.zarr"
    with writer_lock(store):
        with pytest.raises(StoreLocked, match=r"pid \d+ on "):
            with writer_lock(store):
                pass
        with pytest.raises(StoreLocked):
            es.sweep(200, 10, client="synchronous", progress=False, store=store, **KW)
        assert not store.exists()  # the refused sweep touched nothing
    with writer_lock(store):  # released on exit
        pass
    assert lock_path(store).name == ".S.zarr.lock"


def test_a_killed_writer_leaves_no_stale_lock(tmp_path):
    store = tmp_path / "S.zarr"
    code = (
        "import os, sys; from ensstab_dask.sweeps.lock import writer_lock\n"
        f"with writer_lock({str(store)!r}):\n    print('held', flush=True); os.kill(os.getpid(), 9)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == -9 and "held" in proc.stdout
    with writer_lock(store):  # the kernel released it with the process
        pass


# The lock follows the store, never a link ---------------------------------------------


def test_a_link_planted_at_the_lock_path_is_refused_and_its_target_untouched(tmp_path):
    store, victim = tmp_path / "S.zarr", tmp_path / "precious.txt"
    victim.write_text("the user's data\n")
    lock_path(store).symlink_to(victim)
    res = start(store)
    out, err = res.communicate(timeout=300)
    lines = err.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and "is a symbolic link" in lines[0], err
    assert victim.read_text() == "the user's data\n" and not store.exists()


def test_a_hard_link_at_the_lock_path_gets_nothing_written_into_it(tmp_path):
    store, victim = tmp_path / "S.zarr", tmp_path / "precious.txt"
    victim.write_text("the user's data\n")
    import os

    os.link(victim, lock_path(store))
    with pytest.raises(es.InvalidParameterError, match="not a plain file of its own"):
        with writer_lock(store):
            pass
    assert victim.read_text() == "the user's data\n"


def test_a_second_writer_through_a_linked_name_meets_the_same_lock(tmp_path):
    store, alias = tmp_path / "S.zarr", tmp_path / "alias.zarr"
    store.mkdir()
    alias.symlink_to(store)
    assert lock_path(alias) == lock_path(store)
    with writer_lock(store):
        with pytest.raises(StoreLocked, match="being written by another sweep"):
            with writer_lock(alias):
                pass


@pytest.mark.parametrize("kind", ["fifo", "file", "link-to-fifo"])
def test_a_store_path_that_is_no_folder_is_refused_before_any_lock(tmp_path, kind):
    import os

    target = tmp_path / "S.zarr"
    if kind == "file":
        target.write_text("mine\n")
    else:
        os.mkfifo(tmp_path / "f" if kind == "link-to-fifo" else target)
        if kind == "link-to-fifo":
            target.symlink_to(tmp_path / "f")
    want = {"fifo": "is a FIFO", "file": "is a file", "link-to-fifo": "is a FIFO"}[kind]
    with pytest.raises(es.InvalidParameterError, match=f"store: .* {want}, not a store"):
        es.sweep(200, 10, n_useful=[10], p=[0.5], m_ensemble=[1], m_stability=2, repeats=1, store=target,
                 client="synchronous", progress=False)  # fmt: skip
    assert not lock_path(target).exists() and not (tmp_path / ".S.zarr.lock").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["S.zarr"] + (["f"] if kind == "link-to-fifo" else []))
