"""Choosing classes (``classes=`` of load_dataset, ``--classes`` of the CLI) in every format,
the data line's classes and counts, and other libraries' warnings while the data are read.

A 10-class study stands in for scanpy's pbmc68k (its ``bulk_labels``: 10 cell types),
written as .h5ad, .csv, .mat and .npz with the real writers.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.io

from ensstab_dask.cli import build_parser, main
from ensstab_dask.cli._common import load_data
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import class_counts, load_dataset, make_microarray, select_classes

pd = pytest.importorskip("pandas")

CELL_TYPES = [
    "CD14+ Monocyte",
    "CD19+ B",
    "CD34+",
    "CD4+/CD25 T Reg",
    "CD4+/CD45RA+/CD25- Naive T",
    "CD4+/CD45RO+ Memory",
    "CD56+ NK",
    "CD8+ Cytotoxic T",
    "CD8+/CD45RA+ Naive Cytotoxic",
    "Dendritic",
]
#: Samples per type, all different, so that a count printed against the wrong type shows.
SIZES = [12, 5, 6, 7, 8, 9, 10, 11, 4, 13]
N_GENES = 40


def _study(seed: int = 0):
    """85 cells x 40 genes; each type shifts its own 4 genes (the first 40 of them)."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(10), SIZES)
    X = rng.standard_normal((len(labels), N_GENES))
    for k in range(10):
        X[labels == k, 4 * k : 4 * k + 4] += 2.0
    return X, labels


def _write(tmp_path, fmt: str):
    """The study in ``fmt``; returns (path, label option, the labels as the file holds them)."""
    X, labels = _study()
    names = np.array(CELL_TYPES)[labels]
    path = tmp_path / f"pbmc.{fmt}"
    if fmt == "h5ad":
        anndata = pytest.importorskip("anndata", reason="anndata is not installed (pip install '.[anndata]')")
        obs = pd.DataFrame(
            {"bulk_labels": pd.Categorical(names), "n_counts": X.sum(axis=1)},
            index=[f"cell{i}" for i in range(len(names))],
        )
        anndata.AnnData(X=X.astype(np.float32), obs=obs).write_h5ad(path)
        return path, "bulk_labels", names
    if fmt == "csv":
        frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(N_GENES)])
        frame.insert(0, "cell_type", names)
        frame.to_csv(path, index=False)
        return path, "cell_type", names
    if fmt == "mat":  # scikit-feature's layout: numeric classes 1..10 in a column Y
        scipy.io.savemat(path, {"X": X, "Y": (labels + 1.0)[:, None]})
        return path, None, (labels + 1).astype(str)
    np.savez(path, X=X, y=names)
    return path, None, names


def _args(path, label, classes=None, *more: str):
    argv = ["estimate", "--data", str(path)]
    argv += [] if label is None else ["--label", label]
    argv += [] if classes is None else ["--classes", classes]
    return build_parser().parse_args([*argv, *more])


@pytest.mark.parametrize("fmt", ["h5ad", "csv", "mat", "npz"])
def test_classes_keep_two_cell_types_in_every_format(tmp_path, fmt):
    path, label, held = _write(tmp_path, fmt)
    pick = ["CD14+ Monocyte", "Dendritic"] if fmt != "mat" else ["1", "10"]
    whole = load_dataset(path, label=label)
    assert class_counts(whole.y) == dict(sorted(zip(CELL_TYPES if fmt != "mat" else map(str, range(1, 11)), SIZES)))

    data = load_dataset(path, label=label, classes=pick)
    assert class_counts(data.y) == {pick[0]: 12, pick[1]: 13}
    np.testing.assert_array_equal(data.X, whole.X[np.isin(held, pick)])  # the rows of those cells, in order

    # The CLI: --classes as one comma-separated value, and the data line says what was kept.
    data, _, line = load_data(_args(path, label, ",".join(pick)))
    assert class_counts(data.y) == {pick[0]: 12, pick[1]: 13}
    assert line.endswith(f"X 25 x {N_GENES}; 2 classes: {pick[0]} (12), {pick[1]} (13) (chosen by --classes of 10)")


def test_a_ten_class_label_is_used_whole_and_the_data_line_gives_every_count(tmp_path):
    path, label, _ = _write(tmp_path, "h5ad")
    data, _, line = load_data(_args(path, label))
    assert len(data.y) == sum(SIZES)
    listed = ", ".join(f"{name} ({n})" for name, n in sorted(zip(CELL_TYPES, SIZES)))
    assert f"X 85 x {N_GENES}; 10 classes: {listed}; all 10 used, features ranked" in line
    assert "(two of them: --classes A,B)" in line
    # Two classes say nothing more than their counts.
    _, _, line = load_data(build_parser().parse_args(["estimate"]))
    assert line.endswith("X 62 x 2000; 2 classes: 0 (40), 1 (22)")


def test_a_class_that_is_not_there_is_refused_with_every_count(tmp_path, capsys):
    path, label, _ = _write(tmp_path, "csv")
    with pytest.raises(InvalidParameterError, match=r"classes: 'NK' not among the classes of the data: 'CD14\+"):
        load_dataset(path, label=label, classes=["CD14+ Monocyte", "NK"])
    with pytest.raises(InvalidParameterError, match="at least 2 different classes; got"):
        select_classes(make_microarray(seed=0), [1])
    with pytest.raises(InvalidParameterError, match="at least 2 different classes"):
        select_classes(make_microarray(seed=0), "1,1")

    assert main(["estimate", "--data", str(path), "--label", label, "--classes", "CD14+ Monocyte,NK"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ensstab: error: --classes: 'NK' not among the classes"), err
    assert "'Dendritic' (13)" in err[0] and "'CD34+' (6)" in err[0]


def _scanpy_like_file(path):
    """A .h5ad as scanpy's older files are: neighbour graphs in .uns['neighbors'] (anndata
    moves them to .obsp on reading, with a FutureWarning for each) and repeated cell names
    (a UserWarning), .uns['neighbors'] without anndata's encoding metadata (an
    OldFormatWarning): four warnings from another library, several lines each from Python.
    anndata writes the graphs in .obsp, so they are moved back into .uns with h5py."""
    anndata = pytest.importorskip("anndata", reason="anndata is not installed (pip install '.[anndata]')")
    import h5py
    import scipy.sparse

    X, labels = _study()
    n = len(labels)
    obs = pd.DataFrame({"bulk_labels": pd.Categorical(np.array(CELL_TYPES)[labels])}, index=["cell"] * n)
    graph = scipy.sparse.random(n, n, density=0.05, format="csr", random_state=0)
    obsp = {"distances": graph, "connectivities": graph.copy()}
    with pytest.warns(UserWarning, match="not unique"):  # anndata's, on repeated names: read back below
        anndata.AnnData(X=X.astype(np.float32), obs=obs, obsp=obsp).write_h5ad(path)
    with h5py.File(path, "r+") as f:
        neighbors = f["uns"].create_group("neighbors")
        for key in obsp:
            f.move(f"obsp/{key}", f"uns/neighbors/{key}")
        assert "distances" in neighbors


@pytest.mark.parametrize("quiet", [True, False])
def test_other_libraries_warnings_while_reading_are_one_line(tmp_path, capsys, quiet):
    """scanpy's own pbmc68k printed two multi-line anndata FutureWarning blocks under --quiet."""
    path = tmp_path / "old.h5ad"
    _scanpy_like_file(path)
    out = tmp_path / "e.json"
    args = [
        "estimate",
        "--data",
        str(path),
        "--label",
        "bulk_labels",
        "--classes",
        "CD14+ Monocyte,Dendritic",
        "--n-target",
        "5",
        "--m-ensemble",
        "1,3",
        "--m-stability",
        "6",
        "--n-runs",
        "12",
        "--repeats",
        "3",
        "--n-boot",
        "0",
        "--n-estimators",
        "10",
        "--model",
        "onda",
        "--scheduler",
        "synchronous",
        "--json",
        str(out),
    ] + (["--quiet"] if quiet else [])
    assert main(args) == 0
    captured = capsys.readouterr()
    err = [line for line in captured.err.strip().splitlines() if line]
    # The repeated cell names are said once, in this package's words (anndata's own is left out).
    repeated = f"{path}: 84 of 85 sample ids repeat an earlier one ('cell' x85): is a sample in the file twice?"
    assert len([line for line in err if line.startswith(repeated)]) == 1, err
    if quiet:
        assert err[1:] == [
            f"ensstab: note: 3 warning(s) from other libraries while reading {path}; run without --quiet to see them"
        ], err
    else:
        reading = [line for line in err if "while reading" in line]
        reused = [line for line in err if line.startswith("reused ")]  # the real-run cache's note
        assert len(reading) == 1 and len(reused) == 1 and len(err) == 3, err  # one line for all, nothing else
        # Each library's kind of warning once, with how many and the first one's words.
        assert "anndata: FutureWarning x2, the first: Moving element from .uns['neighbors']['distances']" in reading[0]
        assert "anndata: OldFormatWarning" in reading[0]
        assert "Observation names are not unique" not in reading[0]
    assert json.loads(out.read_text())["classes"] == {"CD14+ Monocyte": 12, "Dendritic": 13}
    assert "2 classes: CD14+ Monocyte (12), Dendritic (13) (chosen by --classes of 10)" in captured.out
