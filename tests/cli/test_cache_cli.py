"""``ensstab estimate --cache-dir``: a second run on the same data and settings reuses the
first's real runs (none run again, said in one line) and gives the same numbers;
``--no-cache`` keeps nothing."""

import json

import pytest

from ensstab_dask.cli import main
from ensstab_dask.estimates.records.spending import Cost

TINY = ["--n-target", "3", "--n-estimators", "5", "--m-ensemble", "1,5", "--n-boot", "0", "--scheduler", "synchronous"]


def _without_seconds(payload: dict) -> dict:
    """The estimate's JSON without what says how this run of it went (Cost.HOW_IT_RAN)."""
    return {k: v for k, v in payload.items() if k not in Cost.HOW_IT_RAN}


def test_a_second_estimate_reuses_the_first_s_real_runs_and_says_so(tmp_path, capsys):
    cache = tmp_path / "cache"
    cache.mkdir()
    runs = []
    for i in (1, 2):
        out = tmp_path / f"e{i}.json"
        assert main(["estimate", *TINY, "--cache-dir", str(cache), "--json", str(out)]) == 0
        err = capsys.readouterr().err
        (line,) = [x for x in err.splitlines() if x.startswith("reused ")]
        runs.append((line, json.loads(out.read_text())))
    (first, one), (second, two) = runs
    ran = int(first.split("(ran ")[1].rstrip(")"))
    assert first == f"reused 0 real runs from {cache} (ran {ran})" and ran > 0
    assert second == f"reused {ran} real runs from {cache} (ran 0)"
    assert _without_seconds(one) == _without_seconds(two)


def test_no_cache_keeps_nothing_and_says_nothing(tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(["estimate", *TINY, "--no-cache"]) == 0
    assert "reused" not in capsys.readouterr().err
    assert main(["estimate", *TINY, "--no-cache", "--cache-dir", str(cache)]) == 2
    err = capsys.readouterr().err
    assert err == "ensstab: error: --cache-dir and --no-cache contradict each other: choose one\n"
    assert not cache.exists()


@pytest.mark.parametrize("command", ["estimate", "validate"])
def test_a_cache_dir_that_is_a_file_is_refused_in_one_line(tmp_path, capsys, command):
    path = tmp_path / "file"
    path.write_text("mine")
    assert main([command, *TINY, "--cache-dir", str(path)]) == 2
    assert capsys.readouterr().err == f"ensstab: error: --cache-dir {path}: exists and is not a directory\n"
    assert path.read_text() == "mine"


def test_the_default_folder_taken_by_a_file_is_named_as_the_default(tmp_path, capsys, monkeypatch):
    """Not as ``--cache-dir``, an option the user did not give; with the ways out."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "ensstab_dask").mkdir()
    taken = tmp_path / "ensstab_dask" / "real-runs"
    taken.write_text("mine")
    assert main(["estimate", *TINY]) == 2
    assert capsys.readouterr().err == (
        f"ensstab: error: the default cache folder {taken}: exists and is not a directory; move it away, or pass "
        "--cache-dir DIR or --no-cache\n"
    )
    assert taken.read_text() == "mine"


def test_a_default_folder_others_can_write_is_made_private_and_said(tmp_path, capsys, monkeypatch):
    """Whoever can write the cache can forge its runs: the docs promise a folder only you can write."""
    import os
    import stat

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "ensstab_dask" / "real-runs"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    assert main(["estimate", *TINY]) == 0
    err = capsys.readouterr().err
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert f"ensstab: note: the cache folder {folder} could be written by other users (mode 777)" in err
    assert "made private (700)" in err and list(folder.glob("runs-*.nc"))  # and used
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert main(["estimate", *TINY, "--cache-dir", str(shared)]) == 0  # named by the user: theirs to share, said
    assert f"--cache-dir {shared} can be written by other users, who could forge its runs" in capsys.readouterr().err
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o777


def test_the_cache_command_says_where_and_how_much_and_clears_only_its_own_entries(tmp_path, capsys):
    """``ensstab cache``: the first estimate's entries listed; --older-than removes those written
    before the date, --clear the rest; a file that is not the cache's is never touched."""
    import os
    import time

    cache = tmp_path / "cache"
    cache.mkdir()
    assert main(["estimate", *TINY, "--cache-dir", str(cache)]) == 0
    made = sorted(cache.glob("runs-*.nc"))
    old = cache / "runs-0123456789abcdef0123456789abcdef.nc"
    old.write_bytes(b"x" * 2000)
    os.utime(old, (time.mktime((2020, 1, 2, 12, 0, 0, 0, 0, -1)),) * 2)
    mine = cache / "notes.txt"
    mine.write_text("the user's own file")
    capsys.readouterr()

    assert main(["cache", "--cache-dir", str(cache)]) == 0
    said = capsys.readouterr().out.strip()
    assert said.startswith(f"cache: {cache}: {len(made) + 1} entries, ") and "written from 2020-01-02 to " in said
    assert main(["cache", "--cache-dir", str(cache), "--older-than", "2021-01-01"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "removed 1 entry, 2.0 kB, written 2020-01-02"
    assert not old.exists() and all(p.exists() for p in made)
    assert main(["cache", "--cache-dir", str(cache), "--clear"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(f"removed {len(made)} ")
    assert sorted(p.name for p in cache.iterdir()) == ["notes.txt"]


def test_the_cache_command_refuses_a_date_it_cannot_read_in_one_line(capsys):
    assert main(["cache", "--older-than", "29/11/2026"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("argument --older-than: '29/11/2026' is not a date: give YYYY-MM-DD, as 2026-11-01")
