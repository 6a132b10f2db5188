"""``ensstab estimate --features OUT.csv``: the table with the names of the file (.npz, .csv,
.h5ad), written whatever the verdict, and never over what exists without --overwrite."""

import json

import numpy as np
import pytest

from ensstab_dask.cli import main

pd = pytest.importorskip("pandas")

N_SAMPLES, N_FEATURE = 40, 60
NAMES = [f"gene_{j}" for j in range(N_FEATURE)]
SMALL = "--n-target 5 --m-ensemble 1,5 --n-estimators 5 --n-boot 0 --scheduler synchronous --quiet".split()


def _study(signal: float = 2.5, seed: int = 0):
    """40 samples x 60 features, the first 6 shifted by ``signal`` in class 1."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], N_SAMPLES // 2)
    X = rng.standard_normal((N_SAMPLES, N_FEATURE))
    X[y == 1, :6] += signal
    return X, y


def _write(fmt: str, path, X, y) -> list[str]:
    """The study as a ``fmt`` file; the options that read its label."""
    if fmt == "npz":
        np.savez(path, X=X, y=y, feature_names=np.array(NAMES))
        return []
    if fmt == "csv":
        frame = pd.DataFrame(X, columns=NAMES)
        frame.insert(0, "condition", np.where(y == 1, "stim", "ctrl"))
        frame.to_csv(path, index=False)
        return ["--label", "condition"]
    anndata = pytest.importorskip("anndata", reason="anndata is not installed (pip install '.[anndata]')")
    obs = pd.DataFrame(
        {"condition": pd.Categorical(np.where(y == 1, "stim", "ctrl"))}, index=[f"cell{i}" for i in range(N_SAMPLES)]
    )
    anndata.AnnData(X=X.astype(np.float32), obs=obs, var=pd.DataFrame(index=NAMES)).write_h5ad(path)
    return ["--label", "condition"]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["npz", "csv", "h5ad"])
def test_the_table_has_the_files_names(fmt, tmp_path, capsys):
    X, y = _study()
    data = tmp_path / f"study.{fmt}"
    label = _write(fmt, data, X, y)
    table, out = tmp_path / "features.csv", tmp_path / "e.json"
    assert main(["estimate", "--data", str(data), *label, *SMALL, "--features", str(table), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    frame = pd.read_csv(table)
    assert list(frame.columns[:5]) == ["name", "feature", "frequency_m1", "frequency_m5", "frequency_m20"]
    assert "mean_rank" in frame and "frequency_m20_lower" in frame and len(frame) == N_FEATURE
    assert sorted(frame["name"]) == sorted(NAMES)
    assert frame["name"].tolist() == [NAMES[j] for j in frame["feature"]]  # each name is its own column's
    assert set(frame["feature"][:6]) == set(range(6))  # the shifted genes lead
    d = json.loads(out.read_text())
    assert [r["name"] for r in d["features"]] == frame["name"].tolist()  # all 60: fewer than 100
    kept = d["stable_features"]["names"]
    assert kept and set(kept) <= set(NAMES[:6])
    line = next(x for x in printed.splitlines() if x.startswith("  Kept on at least 90% of reruns"))
    assert all(name in line for name in kept)


@pytest.mark.slow
def test_the_table_is_written_whatever_the_verdict(tmp_path, capsys):
    """Pure noise: no curve, and the table all the same (where a user needs it most)."""
    X, y = _study(signal=0.0, seed=3)
    data = tmp_path / "noise.npz"
    _write("npz", data, X, y)
    table = tmp_path / "features.csv"
    assert main(["estimate", "--data", str(data), *SMALL, "--features", str(table)]) == 0
    printed = capsys.readouterr().out
    assert "Answer: none." in printed
    assert "Kept on at least 90% of reruns (9 or more of 10 real ensembles of 20" in printed
    frame = pd.read_csv(table)
    assert len(frame) == N_FEATURE and frame["frequency_m20"].max() < 0.9


def test_a_table_is_replaced_only_with_overwrite_and_a_data_file_never(tmp_path, capsys):
    """A feature table this package wrote (its header says so) is replaced with --overwrite
    only; any other .csv is data, and never replaced. Both refused before any work."""
    from ensstab_dask.outputs import FEATURE_TABLE_HEADER

    table = tmp_path / "features.csv"
    table.write_text(FEATURE_TABLE_HEADER + "1,frequency_m20\n")
    assert main(["estimate", *SMALL, "--features", str(table)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--features {table} exists; pass --overwrite to replace it" in err[0]
    mine = tmp_path / "mine.csv"
    mine.write_text("condition,gene_0\nctrl,1.0\n")
    assert main(["estimate", *SMALL, "--features", str(mine), "--overwrite"]) == 2
    assert "is a data file (.csv)" in capsys.readouterr().err
    assert mine.read_text() == "condition,gene_0\nctrl,1.0\n"


@pytest.mark.slow
def test_a_table_written_before_is_replaced_with_overwrite(tmp_path, capsys):
    X, y = _study()
    data = tmp_path / "study.npz"
    _write("npz", data, X, y)
    table = tmp_path / "features.csv"
    args = ["estimate", "--data", str(data), *SMALL, "--features", str(table)]
    assert main(args) == 0 and main(args + ["--seed", "1", "--overwrite"]) == 0
    assert table.read_text().startswith("name,feature,frequency_m1,")


def test_the_table_and_another_output_never_name_one_file(tmp_path, capsys):
    same = tmp_path / "out.csv"
    assert main(["estimate", *SMALL, "--features", str(same), "--json", str(same)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--json and --features name one file, {same}" in err[0]
    assert not same.exists()


def test_names_that_a_spreadsheet_would_run_are_escaped(tmp_path):
    """A name that begins with =, +, -, @ (a formula in a spreadsheet) is written behind a
    ', and the real name is the cell without it; a control character (a leading tab) is
    written as its escape, as everywhere names are shown; the JSON keeps the names as they are."""
    hostile = ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "'quoted", "\tTAB"]
    names = hostile + NAMES[len(hostile) :]
    X, y = _study()
    data = tmp_path / "study.npz"
    np.savez(data, X=X, y=y, feature_names=np.array(names))
    table, out = tmp_path / "features.csv", tmp_path / "e.json"
    assert main(["estimate", "--data", str(data), *SMALL, "--features", str(table), "--json", str(out)]) == 0
    frame = pd.read_csv(table, keep_default_na=False)
    cells = frame["name"].tolist()
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    shown = [n.replace("\t", "\\t") for n in names]
    assert sorted(frame["name"].str.replace("^'", "", regex=True)) == sorted(shown)
    assert {c for c in cells if c.startswith("'")} == {"'" + n for n in hostile if n != "\tTAB"}
    assert "\\tTAB" in cells
    assert {r["name"] for r in json.loads(out.read_text())["features"]} == set(names)
