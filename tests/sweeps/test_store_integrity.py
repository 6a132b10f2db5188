"""A damaged or edited store is never trusted: recomputed, or refused naming the store."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr

import ensstab_dask as es
from ensstab_dask.cli import main as cli_main
from ensstab_dask.sweeps.storage import StoreDamaged, export_netcdf

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


def test_a_store_written_before_checksums_opens_with_a_note(tmp_path, capsys, monkeypatch, caplog):
    from zarr.codecs import ZstdCodec

    import ensstab_dask.sweeps.grid

    monkeypatch.setattr(ensstab_dask.sweeps.grid, "chunk_codecs", lambda: (ZstdCodec(),))  # as stores were written
    store, ref = make(tmp_path)
    monkeypatch.undo()
    assert cli_main(["verify", str(store)]) == 0
    out = capsys.readouterr().out
    assert "note: written before chunk checksums" in out and ": ok;" in out
    with caplog.at_level("WARNING", logger="ensstab_dask.sweep"):
        again = es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)
    assert any("before chunk checksums" in r.getMessage() for r in caplog.records)
    np.testing.assert_array_equal(again["stability"].values, ref["stability"].values)


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


def test_a_store_written_before_cell_digests_is_read_verified_and_resumed(tmp_path, capsys):
    store, ref = make(tmp_path)
    shutil.rmtree(store / "cell_digest")  # as stores were written before the digest
    meta = json.loads((store / "zarr.json").read_text())
    meta["consolidated_metadata"]["metadata"].pop("cell_digest")
    meta["attributes"].pop("ensstab_integrity")  # the record that says it was made with digests
    (store / "zarr.json").write_text(json.dumps(meta))
    assert cli_main(["verify", str(store)]) == 0
    assert "note: written before cell digests" in capsys.readouterr().out
    assert export_netcdf(store, tmp_path / "x.nc").exists()
    chunks(store, "completed")[0].unlink()  # a row to redo: written without a digest, as before
    again = es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)
    np.testing.assert_array_equal(again["stability_draws"].values, ref["stability_draws"].values)
    assert not (store / "cell_digest").exists() and cli_main(["verify", str(store)]) == 0


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
