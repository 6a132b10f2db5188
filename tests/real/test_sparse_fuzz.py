"""Malformed sparse files are refused in one line, never read into memory corruption:
1,000 random corruptions of a sparse ``.npz`` (``data``, ``indices``, ``indptr``,
``shape``, ``format`` and their dtypes), each read in a child process of its own
(tests/real/sparse_fuzz.py)."""

from __future__ import annotations

import collections
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

import ensstab_dask as es
from ensstab_dask.real.datasets import check_data, load_dataset

FUZZ = Path(__file__).with_name("sparse_fuzz.py")


def test_a_thousand_corrupted_sparse_files_end_in_a_refusal_or_the_right_matrix(tmp_path):
    ran = subprocess.run(
        [sys.executable, str(FUZZ), "0", "1000", str(tmp_path)], capture_output=True, text=True, timeout=900
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    outcomes = collections.Counter(line.split()[1] for line in ran.stdout.splitlines())
    bad = [line for line in ran.stdout.splitlines() if line.split()[1] not in ("refused", "accepted")]
    assert not bad, bad[:10]
    assert sum(outcomes.values()) == 1000
    # Both ends are exercised: most corruptions refused, some harmless ones read right.
    assert outcomes["refused"] > 500 and outcomes["accepted"] > 50, outcomes


def _csr():
    X = scipy.sparse.random(30, 40, density=0.3, format="csr", random_state=0)
    return X, np.repeat([0, 1], 15)


@pytest.mark.parametrize(
    "change, needle",
    [
        (lambda p: p["indices"].__setitem__(5, 1000), "column index outside 0..39 of its shape (30, 40): 1000"),
        (lambda p: p["indices"].__setitem__(5, 40), "column index outside 0..39 of its shape (30, 40): 40"),
        (lambda p: p["indices"].__setitem__(5, -3), "column index outside 0..39 of its shape (30, 40): -3"),
        (lambda p: p.update(indptr=p["indptr"][[0, 1, 2, 4, 3, *range(5, 31)]]), "indptr goes back at row 3"),
        (lambda p: p.update(shape=np.array([30, 20])), "outside 0..19 of its shape (30, 20)"),
        (lambda p: p.update(indices=np.r_[p["indices"][:5], 2**33, p["indices"][6:]]), "8589934592"),
        (
            lambda p: (p["data"].__setitem__(slice(0, 2), 3e38), p["indices"].__setitem__(1, p["indices"][0])),
            "beyond float32's range.*repeated entries summed",
        ),
    ],
    ids=["index-1000", "index-one-past", "index-negative", "indptr-back", "shape-narrow", "index-2**33", "sum-3e38"],
)
def test_each_corruption_the_probe_found_is_refused_naming_the_file(tmp_path, change, needle):
    X, y = _csr()
    parts = dict(data=X.data.copy(), indices=X.indices.astype(np.int64), indptr=X.indptr.copy(), shape=X.shape)
    change(parts)
    path = tmp_path / "bad.npz"
    np.savez(path, format="csr", y=y, **parts)
    with pytest.raises(es.InvalidParameterError, match=f"^{path}: .*{needle}" if "*" in needle else None) as info:
        load_dataset(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)
    assert needle.split(".*")[0] in str(info.value)


def test_a_malformed_matrix_built_in_memory_is_refused_before_any_conversion():
    X, y = _csr()
    bad = scipy.sparse.csr_matrix((X.data, X.indices.copy(), X.indptr), shape=X.shape)
    bad.indices[5] = 45  # scipy checks lengths when it builds the matrix, not the indices
    with pytest.raises(es.InvalidParameterError, match="column index outside 0..39 .*: 45 at stored value 5"):
        check_data(bad, y)
    coo = X.tocoo()
    coo.col[0] = -1
    with pytest.raises(es.InvalidParameterError, match="column index outside 0..39"):
        check_data(coo, y)


def test_malformed_sparse_h5ad_files_are_refused_naming_the_file(tmp_path):
    anndata = pytest.importorskip("anndata", reason="reading .h5ad needs the optional anndata package")
    h5py = pytest.importorskip("h5py", reason="editing an .h5ad file needs h5py (anndata's)")
    import pandas as pd

    X, _ = _csr()
    labels = pd.DataFrame({"label": np.repeat(["a", "b"], 15)}, index=[f"c{i}" for i in range(30)])
    for change, needle in [
        (lambda g: g["indices"].__setitem__(5, -3), "-3 at stored value 5"),
        (lambda g: g["indices"].__setitem__(5, 45), "45 at stored value 5"),
        (lambda g: g["indptr"].__setitem__(slice(3, 5), g["indptr"][3:5][::-1]), "indptr goes back at row 3"),
    ]:
        path = tmp_path / "cells.h5ad"
        anndata.AnnData(X=X.astype(np.float32), obs=labels).write_h5ad(path)
        with h5py.File(path, "r+") as f:
            change(f["X"])
        with pytest.raises(es.InvalidParameterError, match=needle) as info:
            load_dataset(path)
        assert str(info.value).startswith(f"{path}: ")
