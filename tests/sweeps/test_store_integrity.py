"""A damaged or edited store is never trusted: recomputed, or refused naming the store."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr
from pace import Pace

import ensstab_dask as es
from ensstab_dask.cli import main as cli_main
from ensstab_dask.sweeps.storage import StoreDamaged, StoreMismatch, export_netcdf

KW = dict(n_useful=[20, 40], p=[0.5, 0.9], m_ensemble=[1, 3], m_stability=5, repeats=2, seed=3)


def make(tmp_path):
    store = tmp_path / "S.zarr"
    ds = es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)
    return store, ds


def chunks(store: Path, var: str) -> list[Path]:
    return sorted(p for p in (store / var).rglob("*") if p.is_file() and p.name != "zarr.json")


@pytest.mark.slow
@pytest.mark.parametrize("var", ["stability_draws", "stability", "n_useful_v_std"])
def test_a_deleted_chunk_is_recomputed_and_never_exported(tmp_path, capsys, var):
    store, ref = make(tmp_path)
    chunks(store, var)[0].unlink()
    with pytest.raises(StoreDamaged, match="marked done but hold no data"):
        export_netcdf(store, tmp_path / "x.nc")
    assert not (tmp_path / "x.nc").exists()
    assert cli_main(["verify", str(store)]) == 1
    assert "damaged" in capsys.readouterr().out
    again = es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)
    np.testing.assert_array_equal(again[var].values, ref[var].values)
    assert cli_main(["verify", str(store)]) == 0
    assert export_netcdf(store, tmp_path / "x.nc").exists()


def test_a_truncated_chunk_is_named_in_one_line(tmp_path, capsys):
    store, _ = make(tmp_path)
    victim = chunks(store, "stability_draws")[0]
    victim.write_bytes(victim.read_bytes()[:5])
    assert cli_main(["export", str(store), str(tmp_path / "x.nc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    named = f"chunk {victim.relative_to(store)} fails its checksum or cannot be read"
    assert len(err) == 1 and named in err[0] and str(store) in err[0], err
    assert cli_main(["verify", str(store)]) == 1
    assert not (tmp_path / "x.nc").exists()


def test_an_unreadable_store_is_not_called_damaged(tmp_path):
    """A permission error is not damage: it is raised as it is, and the store is not blamed."""
    import os

    if os.geteuid() == 0:
        pytest.skip("root reads any file: a permission error cannot be made here")
    store, _ = make(tmp_path)
    victim = chunks(store, "stability_draws")[0]
    victim.chmod(0)
    try:
        with pytest.raises(PermissionError):
            export_netcdf(store, tmp_path / "x.nc")
    finally:
        victim.chmod(0o644)


@pytest.mark.parametrize("edit", ["seed", "p"])
def test_edited_provenance_is_refused(tmp_path, edit, capsys):
    store, _ = make(tmp_path)
    group = zarr.open_group(str(store), mode="r+")
    if edit == "seed":
        group.attrs["seed"] = 4
    else:
        group["p"][:] = np.array([0.4, 0.9])
    with pytest.raises(StoreDamaged, match=f"edited or damaged since it was made: {edit} is"):  # noqa: B017
        export_netcdf(store, tmp_path / "x.nc")
    with pytest.raises(StoreDamaged, match="edited or damaged since it was made"):
        es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)
    assert cli_main(["verify", str(store)]) == 1
    assert f"edited or damaged since it was made: {edit}" in capsys.readouterr().out


def test_damaged_settings_record_is_one_line(tmp_path, capsys):
    store, _ = make(tmp_path)
    group = zarr.open_group(str(store), mode="r+")
    group.attrs["ensstab_settings"] = group.attrs["ensstab_settings"][:-20]
    assert cli_main(["export", str(store), str(tmp_path / "x.nc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "settings record is damaged" in err[0]
    json.dumps(err)


def test_a_truncated_coordinate_is_named_in_one_line(tmp_path, capsys):
    store, _ = make(tmp_path)
    victim = chunks(store, "p")[0]
    victim.write_bytes(victim.read_bytes()[:3])
    assert cli_main(["export", str(store), str(tmp_path / "x.nc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(store) in err[0] and "not a readable zarr store" in err[0], err


def test_a_scalar_setting_over_a_coordinate_is_not_an_edit(tmp_path):
    """n_runs=20 is recorded once and stored as a coordinate over m_ensemble: reopening the
    store must not call that an edit (the sweep notebook hit this)."""
    kw = dict(KW, n_runs=4)
    store = tmp_path / "S.zarr"
    first = es.sweep(300, 10, client="synchronous", progress=False, store=store, **kw)
    again = es.sweep(300, 10, client="synchronous", progress=False, store=store, **kw)
    np.testing.assert_array_equal(first["n_useful_v_draws"].values, again["n_useful_v_draws"].values)
    assert cli_main(["verify", str(store)]) == 0


# No output replaces or enters a store, a data file or a directory that is not a report -----


@pytest.mark.slow
def test_report_onto_its_own_store_is_refused_and_the_store_kept(tmp_path, capsys):
    store, ref = make(tmp_path)
    for target in (store, store / "inside", tmp_path / "alias.zarr"):
        if target.name == "alias.zarr":
            target.symlink_to(store)  # compared resolved: a link to the store is the store
        assert cli_main(["report", str(store), "-o", str(target), "--overwrite"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "zarr store" in err[0], err
    assert cli_main(["verify", str(store)]) == 0  # every cell still there
    np.testing.assert_array_equal(
        es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)["stability"].values,
        ref["stability"].values,
    )


@pytest.mark.slow
def test_overwrite_replaces_a_report_but_no_other_directory(tmp_path, capsys):
    store, _ = make(tmp_path)
    assert cli_main(["report", str(store), "-o", str(tmp_path / "rep")]) == 0
    assert cli_main(["report", str(store), "-o", str(tmp_path / "rep"), "--overwrite"]) == 0  # a report: replaced
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    capsys.readouterr()
    assert cli_main(["report", str(store), "-o", str(mine), "--overwrite"]) == 2
    assert "not a report" in capsys.readouterr().err and (mine / "notes.txt").read_text() == "mine\n"


def test_no_output_replaces_the_input_data(tmp_path, capsys):
    data = tmp_path / "study.csv"
    rng = np.random.default_rng(0)
    np.savetxt(
        data,
        np.column_stack([rng.standard_normal((20, 30)), np.repeat([0, 1], 10)]),
        delimiter=",",
        header=",".join([f"g{i}" for i in range(30)] + ["label"]),
        comments="",
    )
    before = data.read_bytes()
    for option in ("--json", "--output"):
        assert cli_main(["estimate", "--data", str(data), option, str(data), "--overwrite", "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is a data file" in err[0], err
    assert data.read_bytes() == before


# Every byte verified: chunk checksums and every coordinate against the record --------------


def flip_a_bit(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x04
    path.write_bytes(bytes(data))


@pytest.mark.slow
@pytest.mark.parametrize("var", ["stability", "n_useful_v_draws", "completed"])
def test_a_flipped_bit_is_detected_and_a_rerun_recomputes_it(tmp_path, capsys, var):
    store, ref = make(tmp_path)
    flip_a_bit(chunks(store, var)[0])
    assert cli_main(["verify", str(store)]) == 1
    out = capsys.readouterr().out
    assert f"chunk {var}/c/0/" in out and "fails its checksum" in out
    if var != "completed":  # a damaged record reads as "not done": nothing wrong is served
        with pytest.raises(StoreDamaged, match="marked done but hold no data"):
            export_netcdf(store, tmp_path / "x.nc")
    again = es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)
    for v in ("stability", "stability_draws", "n_useful_v", "n_useful_v_draws"):
        np.testing.assert_array_equal(again[v].values, ref[v].values)
    assert cli_main(["verify", str(store)]) == 0


@pytest.mark.parametrize("coord", ["n_runs", "repeat"])
def test_a_deleted_coordinate_chunk_is_damage_not_a_zero(tmp_path, capsys, coord):
    store, _ = make(tmp_path)
    for path in (store / coord / "c").rglob("*"):
        if path.is_file():
            path.unlink()
    assert cli_main(["verify", str(store)]) == 1
    assert f"{coord} is [0, 0" in capsys.readouterr().out
    with pytest.raises(StoreDamaged, match=f"{coord} is"):
        export_netcdf(store, tmp_path / "x.nc")
    with pytest.raises(StoreDamaged, match=f"{coord} is"):  # a rerun refuses it too
        es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)


@pytest.mark.parametrize("lacks", ["chunk checksums", "cell digests"])
def test_a_store_made_by_an_earlier_version_is_refused_and_left_as_it_was(tmp_path, capsys, monkeypatch, lacks):
    """No reader of older stores: one without chunk checksums or cell digests (as earlier
    development versions wrote them) is refused by verify, export and a resume, untouched."""
    from zarr.codecs import ZstdCodec

    import ensstab_dask.sweeps.grid

    if lacks == "chunk checksums":
        monkeypatch.setattr(ensstab_dask.sweeps.grid, "chunk_codecs", lambda: (ZstdCodec(),))
        store, _ = make(tmp_path)
        monkeypatch.undo()
    else:
        store, _ = make(tmp_path)
        shutil.rmtree(store / "cell_digest")
        meta = json.loads((store / "zarr.json").read_text())
        meta["consolidated_metadata"]["metadata"].pop("cell_digest")
        meta["attributes"].pop("ensstab_integrity")  # the record that says it was made with digests
        (store / "zarr.json").write_text(json.dumps(meta))
    before = sorted((p.relative_to(store), p.stat().st_mtime_ns) for p in store.rglob("*"))
    assert cli_main(["verify", str(store)]) == 1
    out = capsys.readouterr().out
    assert f"it has no {lacks}" in out and "earlier development version" in out, out
    with pytest.raises(StoreMismatch, match=f"has no {lacks}.*earlier development version"):
        es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)
    assert sorted((p.relative_to(store), p.stat().st_mtime_ns) for p in store.rglob("*")) == before


# report trusts a store no more than export; each cell's values are bound to their place ----


def _edit_seed(store: Path) -> None:
    zarr.open_group(str(store), mode="r+").attrs["seed"] = 4


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:5])


@pytest.mark.parametrize(
    "damage, needle",
    [
        (lambda s: chunks(s, "n_runs")[0].unlink(), "n_runs is [0, 0]"),
        (_edit_seed, "seed is 4 in the store but 3 in its settings record"),
        (lambda s: flip_a_bit(chunks(s, "stability_std")[0]), "fails its checksum"),
        (lambda s: _truncate(chunks(s, "stability_std")[0]), "fails its checksum"),
        (lambda s: chunks(s, "stability_std")[0].unlink(), "marked done but hold no data"),
    ],
    ids=["n_runs-deleted", "seed-edited", "bit-flipped", "truncated", "deleted"],
)
def test_report_checks_a_store_as_export_does(tmp_path, capsys, damage, needle):
    store, _ = make(tmp_path)
    damage(store)
    assert cli_main(["report", str(store), "-o", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and str(store) in err[0], err
    assert not (tmp_path / "r").exists()


CELL_VARIABLES = ("stability", "stability_std", "stability_draws", "n_useful_v", "n_useful_v_std", "n_useful_v_draws")


def _swap(a: Path, b: Path) -> None:
    aside = a.with_name("aside")
    a.rename(aside)
    b.rename(a)
    aside.rename(b)


def _swap_rows(store: Path, names=("stability",)) -> None:
    """Chunk c/0/... with c/1/...: rows n_useful = 20 and 40 change places."""
    for name in names:
        row0, row1 = (store / name / "c" / "0", store / name / "c" / "1")
        _swap(row0, row1)


def _copy_from_seed_1(store: Path) -> None:
    other = store.parent / "seed1.zarr"
    es.sweep(300, 10, client="synchronous", progress=False, store=other, **dict(KW, seed=1))
    for name in CELL_VARIABLES + ("cell_digest",):
        shutil.rmtree(store / name / "c")
        shutil.copytree(other / name / "c", store / name / "c")


@pytest.mark.parametrize(
    "move",
    [
        _swap_rows,
        # Every variable's row moved, its digest and completion flags with it: the digest holds the place.
        lambda s: _swap_rows(s, CELL_VARIABLES + ("completed", "cell_digest")),
        _copy_from_seed_1,
    ],
    ids=["stability-rows-swapped", "whole-rows-swapped", "copied-from-seed-1"],
)
def test_a_chunk_moved_or_copied_from_another_sweep_is_caught_and_recomputed(tmp_path, capsys, move):
    store, ref = make(tmp_path)
    move(store)
    assert cli_main(["verify", str(store)]) == 1
    assert "hold values that are not theirs" in capsys.readouterr().out
    with pytest.raises(StoreDamaged, match="cells marked done hold values that are not theirs"):
        export_netcdf(store, tmp_path / "x.nc")
    assert cli_main(["report", str(store), "-o", str(tmp_path / "r")]) == 2
    assert not (tmp_path / "x.nc").exists() and not (tmp_path / "r").exists()
    again = es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)  # a resume recomputes them
    for v in CELL_VARIABLES:
        np.testing.assert_array_equal(again[v].values, ref[v].values, err_msg=v)
    assert cli_main(["verify", str(store)]) == 0


def test_an_incomplete_export_shows_only_the_cells_marked_done(tmp_path, capsys):
    """A sweep writes a block's data, then its flags: an export in between (or of a store
    whose writer was killed there) must not show those cells as if they were done."""
    store, ref = make(tmp_path)
    # Row n_useful = 20: data written, not marked (its flags' chunks exist, as zeros, from the template on).
    with zarr.config.set({"array.write_empty_chunks": True}):
        zarr.open_array(str(store / "completed"), mode="r+")[0] = 0
    with pytest.raises(ValueError, match="incomplete"):
        export_netcdf(store, tmp_path / "x.nc")
    import xarray as xr

    with xr.open_dataset(export_netcdf(store, tmp_path / "x.nc", allow_incomplete=True)) as ds:
        for v in CELL_VARIABLES:
            assert np.isnan(ds[v].isel(n_useful=0).values).all(), v
            np.testing.assert_array_equal(ds[v].isel(n_useful=1).values, ref[v].isel(n_useful=1).values)
    assert cli_main(["report", str(store), "-o", str(tmp_path / "r")]) == 0  # what report draws: the same cells
    assert cli_main(["verify", str(store)]) == 0
    assert capsys.readouterr().out.strip().endswith("ok; 4 of 8 cells done")


# Nothing outside the store is read or written; no file of it is trusted unchecked -------------

CLI_SWEEP = [
    "sweep",
    "--n-feature",
    "300",
    "--n-target",
    "10",
    "--n-useful",
    "20,40",
    "--p",
    "0.5,0.9",
    "--m-ensemble",
    "1,3",
    "--m-stability",
    "5",
    "--repeats",
    "2",
    "--seed",
    "3",
    "-q",
]


def _tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ensstab: error: "), err
    return err[0]


def test_a_resume_never_writes_through_a_linked_chunk_folder(tmp_path, capsys):
    store, _ = make(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(store / "stability" / "c")  # a resume would recompute every cell into it
    (store / "stability" / "c").symlink_to(outside, target_is_directory=True)
    assert cli_main([*CLI_SWEEP, "--store", str(store)]) == 2
    line = _one_line_error(capsys)
    assert "stability/c is a symbolic link" in line and str(outside) in line, line
    assert list(outside.iterdir()) == []
    with pytest.raises(StoreDamaged, match="stability/c is a symbolic link"):
        es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)
    assert list(outside.iterdir()) == []
    assert cli_main(["verify", str(store)]) == 1
    assert "stability/c is a symbolic link" in capsys.readouterr().out
    assert cli_main(["export", str(store), str(tmp_path / "x.nc")]) == 2
    assert "stability/c is a symbolic link" in _one_line_error(capsys)
    assert cli_main(["report", str(store), "-o", str(tmp_path / "r")]) == 2
    assert "stability/c is a symbolic link" in _one_line_error(capsys)
    assert not (tmp_path / "x.nc").exists() and not (tmp_path / "r").exists()


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_a_damaged_completion_chunk_is_never_exported_nor_reported(tmp_path, capsys, damage):
    store, _ = make(tmp_path)
    victim = chunks(store, "completed")[0]
    flip_a_bit(victim) if damage == "flip" else _truncate(victim)
    assert cli_main(["verify", str(store)]) == 1
    assert f"chunk {victim.relative_to(store)} fails its checksum" in capsys.readouterr().out
    for argv in (
        ["export", str(store), str(tmp_path / "x.nc"), "--allow-incomplete"],
        ["report", str(store), "-o", str(tmp_path / "r")],
    ):
        assert cli_main(argv) == 2
        line = _one_line_error(capsys)
        assert f"chunk {victim.relative_to(store)} fails its checksum" in line and "verify" in line, line
    assert not (tmp_path / "x.nc").exists() and not (tmp_path / "r").exists()


def test_a_deleted_completion_chunk_is_damage_and_a_rerun_repairs_it(tmp_path, capsys):
    store, ref = make(tmp_path)
    victim = chunks(store, "completed")[0]
    victim.unlink()
    assert cli_main(["verify", str(store)]) == 1
    assert f"chunk {victim.relative_to(store)} of the completion record is missing" in capsys.readouterr().out
    assert cli_main(["report", str(store), "-o", str(tmp_path / "r")]) == 2
    again = es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)
    np.testing.assert_array_equal(again["stability_draws"].values, ref["stability_draws"].values)
    assert victim.is_file() and cli_main(["verify", str(store)]) == 0


def _drop_digests(store: Path) -> None:
    shutil.rmtree(store / "cell_digest")
    meta = json.loads((store / "zarr.json").read_text())
    meta["consolidated_metadata"]["metadata"].pop("cell_digest")
    (store / "zarr.json").write_text(json.dumps(meta))


def test_deleted_digests_and_swapped_chunks_are_damage_not_an_old_store(tmp_path, capsys):
    store, _ = make(tmp_path)
    _drop_digests(store)
    _swap_rows(store)
    assert cli_main(["verify", str(store)]) == 1
    out = capsys.readouterr().out
    assert "cell_digest is missing, yet the store was made with cell digests" in out and ": ok;" not in out, out
    with pytest.raises(StoreDamaged, match="cell_digest is missing"):
        export_netcdf(store, tmp_path / "x.nc")
    assert cli_main(["report", str(store), "-o", str(tmp_path / "r")]) == 2
    assert "cell_digest is missing" in _one_line_error(capsys)
    with pytest.raises(StoreDamaged, match="cell_digest is missing.*fresh store"):
        es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)


def test_a_dtype_edit_is_refused_by_the_rerun_verify_advises(tmp_path, capsys):
    """verify's advice must be what a rerun does: a store whose metadata was edited is not
    repaired by a rerun, so verify says to start a fresh store, and the rerun refuses it."""
    store, _ = make(tmp_path)
    for meta_path in (store / "stability" / "zarr.json", store / "zarr.json"):  # the array's and the consolidated
        text = meta_path.read_text()
        meta_path.write_text(text.replace('"data_type": "float64"', '"data_type": "float32"', 1))
    before = _tree(store)
    assert cli_main(["verify", str(store)]) == 1
    out = capsys.readouterr().out
    assert "damaged" in out and "fresh store" in out and "rerun the sweep to recompute" not in out, out
    assert cli_main([*CLI_SWEEP, "--store", str(store)]) == 2
    line = _one_line_error(capsys)
    assert "fresh store" in line and str(store) in line, line
    assert _tree(store) == before
    assert cli_main(["export", str(store), str(tmp_path / "x.nc")]) == 2
    assert "fresh store" in _one_line_error(capsys)


def _run(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ensstab_dask.cli", *argv], capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize(
    "command, where",
    [
        ("verify", "zarr.json"),
        ("export", "stability/c/0/0/0"),
        ("report", "completed/c/1/0/1"),
        ("report", "zarr.json"),
        ("verify", "p/zarr.json"),
    ],
)
def test_a_fifo_in_a_store_is_refused_not_waited_on(tmp_path, command, where, busy_machine):
    store, _ = make(tmp_path)
    (store / where).unlink()
    os.mkfifo(store / where)
    argv = {
        "verify": ["verify", str(store)],
        "export": ["export", str(store), str(tmp_path / "x.nc")],
        "report": ["report", str(store), "-o", str(tmp_path / "r")],
    }[command]
    # Waiting on the FIFO is waiting without end: twenty times what the command needs tells it.
    waits = Pace().bound(0, runs=20)
    try:
        ran = _run(argv, timeout=waits)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} waited on a FIFO in the store for {waits:.0f} s")
    assert ran.returncode in (1, 2) and "Traceback" not in ran.stderr, ran.stderr
    assert f"{where} is a FIFO" in ran.stdout + ran.stderr


def test_a_chunk_replaced_by_a_folder_is_one_line_on_resume(tmp_path, capsys):
    store, _ = make(tmp_path)
    victim = chunks(store, "stability")[0]
    victim.unlink()
    victim.mkdir()
    (victim / "mine.txt").write_text("kept")
    assert cli_main([*CLI_SWEEP, "--store", str(store)]) == 2
    line = _one_line_error(capsys)
    assert f"chunk {victim.relative_to(store)} is a folder" in line, line
    assert (victim / "mine.txt").read_text() == "kept"
    assert cli_main(["verify", str(store)]) == 1
    assert f"chunk {victim.relative_to(store)} is a folder" in capsys.readouterr().out
