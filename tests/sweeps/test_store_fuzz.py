"""A finished store damaged at random, 200 rounds: every file of it written over, truncated,
swapped with another, deleted, or replaced by a link (out of the store and within it).

Every round, on a fresh copy: ``verify`` says damaged and names the file or what it broke,
``export`` and ``report`` refuse in one line, and nothing outside the copy changes (the
folder the links point into stays byte-identical, the original store too, and no output
is written). The draws come from a fixed seed, so a failing round is replayed exactly.
"""

import contextlib
import io
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import ensstab_dask as es
from ensstab_dask.cli import main as cli_main
from ensstab_dask.exceptions import EnsstabError
from ensstab_dask.sweeps.storage import export_netcdf

ROUNDS = 200
MUTATIONS = ("overwrite", "truncate", "swap", "delete", "link-outside", "link-inside")
KW = dict(n_useful=[20, 40], p=[0.5, 0.9], m_ensemble=[1, 3], m_stability=5, repeats=2, seed=3)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _same_content(path: Path, data: bytes, before: bytes) -> bool:
    """Whether ``data`` says what ``before`` said: the same bytes, or, for a ``zarr.json``,
    the same JSON (a space turned into a newline changes no metadata: it is no damage)."""
    if data == before:
        return True
    if path.name != "zarr.json":
        return False
    try:
        return json.loads(data) == json.loads(before)
    except ValueError:
        return False


def _mutate(rng: np.random.Generator, store: Path, files: list[str], what: str, outside: Path) -> str:
    """Damage one file of ``store`` chosen with ``rng``; return what was done. Every
    mutation changes what the store says: one that would not (a swap of two identical
    chunks, bytes written over with the same bytes) is drawn again."""
    while True:
        name = files[rng.integers(len(files))]
        path = store / name
        before = path.read_bytes()
        if what == "overwrite":
            start = int(rng.integers(len(before)))
            length = int(rng.integers(1, min(16, len(before) - start) + 1))
            data = before[:start] + rng.bytes(length) + before[start + length :]
            if _same_content(path, data, before):
                continue
            path.write_bytes(data)
            return f"overwrite {name} [{start}:{start + length}]"
        if what == "truncate":
            data = before[: int(rng.integers(len(before)))]
            if _same_content(path, data, before):
                continue
            path.write_bytes(data)
            return f"truncate {name} to {len(data)} bytes"
        if what == "swap":
            others = [f for f in files if f != name and not _same_content(path, (store / f).read_bytes(), before)]
            other = others[rng.integers(len(others))]
            aside = path.with_name(path.name + ".aside")
            path.rename(aside)
            (store / other).rename(path)
            aside.rename(store / other)
            return f"swap {name} and {other}"
        if what == "delete":
            path.unlink()
            return f"delete {name}"
        path.unlink()
        if what == "link-outside":
            target = outside / ("keep.json" if name.endswith("zarr.json") else "keep.bin")
            path.symlink_to(target)
            return f"link {name} to {target}"
        other = files[rng.integers(len(files))]
        if other == name:
            other = files[(files.index(name) + 1) % len(files)]
        path.symlink_to(store / other)  # within the store: even so, never followed
        return f"link {name} to {other}"


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("finished") / "S.zarr"
    es.sweep(300, 10, client="synchronous", progress=False, store=store, **KW)
    assert cli_main(["verify", str(store)]) == 0
    return store


def test_every_damage_is_named_and_refused_and_nothing_outside_changes(finished, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.bin").write_bytes(bytes(range(256)) * 4)
    (outside / "keep.json").write_text((finished / "zarr.json").read_text())  # plausible, yet not the store's
    sentinel, original = _tree(outside), _tree(finished)
    files = sorted(_tree(finished))
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(20261127)))
    seen = {m: 0 for m in MUTATIONS}
    for round_ in range(ROUNDS):
        what = MUTATIONS[round_ % len(MUTATIONS)]
        work = tmp_path / "round"
        store = work / "S.zarr"
        shutil.copytree(finished, store, copy_function=shutil.copyfile)
        done = _mutate(rng, store, files, what, outside)
        where = f"round {round_}: {done}"

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli_main(["verify", str(store)])
        said = out.getvalue() + err.getvalue()
        assert rc in (1, 2) and ": ok;" not in said and "Traceback" not in said, f"{where}: verify said {said!r}"

        with pytest.raises(EnsstabError):
            export_netcdf(store, work / "x.nc")
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            rc = cli_main(["report", str(store), "-o", str(work / "r")])
        lines = err.getvalue().strip().splitlines()
        assert rc == 2 and len(lines) == 1 and lines[0].startswith("ensstab: error: "), f"{where}: report {lines}"

        assert not (work / "x.nc").exists() and not (work / "r").exists(), where
        assert sorted(os.listdir(work)) == ["S.zarr"], f"{where}: {os.listdir(work)}"
        assert _tree(outside) == sentinel, f"{where}: a file outside the store changed"
        seen[what] += 1
        shutil.rmtree(work)
    assert _tree(finished) == original
    assert all(n >= ROUNDS // len(MUTATIONS) for n in seen.values()), seen


def test_a_few_rounds_through_the_command_line(finished, tmp_path):
    """The same damage through ``python -m ensstab_dask.cli``: one line, no traceback."""
    import subprocess
    import sys

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.bin").write_bytes(b"outside\n")
    files = sorted(_tree(finished))
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(7)))
    for round_, what in enumerate(("overwrite", "swap", "link-outside")):
        work = tmp_path / f"round{round_}"
        store = work / "S.zarr"
        shutil.copytree(finished, store)
        done = _mutate(rng, store, files, what, outside)
        for argv, status in ((["verify", str(store)], (1, 2)), (["export", str(store), str(work / "x.nc")], (2,))):
            ran = subprocess.run(
                [sys.executable, "-m", "ensstab_dask.cli", *argv], capture_output=True, text=True, timeout=300
            )
            assert ran.returncode in status and "Traceback" not in ran.stderr, f"{done}: {argv[0]}: {ran.stderr}"
            assert ": ok;" not in ran.stdout, f"{done}: {ran.stdout}"
        assert not (work / "x.nc").exists()
        assert (outside / "keep.bin").read_bytes() == b"outside\n"
