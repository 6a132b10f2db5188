"""A sparse X stays sparse (CSC float32) from the file to the runs, and its runs are the
dense X's runs, bit for bit."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import scipy.sparse

import ensstab_dask as es
from ensstab_dask.real.cache_files import data_digest
from ensstab_dask.real.datasets import check_data, load_dataset
from ensstab_dask.real.selectors import default_selector, real_run


def _study(seed: int = 0, n_samples: int = 60, n_feature: int = 200):
    """Counts-like: 90 % zeros, the first 5 features shifted in class 1."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n_samples // 2)
    X = rng.standard_normal((n_samples, n_feature))
    X[y == 1, :5] += 2.0
    X[X < 1.2] = 0.0
    return scipy.sparse.csr_matrix(X), y


def test_a_sparse_x_is_kept_csc_float32_and_the_callers_is_left_as_it_was():
    X, y = _study()
    unsorted = X.tocsc()
    unsorted.indices = unsorted.indices.copy()
    unsorted.has_sorted_indices = False
    before = unsorted.copy()
    Xc, _ = check_data(unsorted, y)
    assert scipy.sparse.issparse(Xc) and Xc.format == "csc" and Xc.dtype == np.float32
    assert Xc.has_canonical_format
    np.testing.assert_array_equal(Xc.toarray(), X.toarray().astype(np.float32))
    assert (unsorted != before).nnz == 0
    assert data_digest(*check_data(X, y)) == data_digest(*check_data(X.tocoo(), y))  # one matrix, one digest
    assert data_digest(*check_data(X, y)) != data_digest(*check_data(X.toarray(), y))


def test_sparse_runs_are_the_dense_runs():
    X, y = _study()
    for seed in range(3):
        sparse = real_run(X, y, 10, selector=default_selector(20), seed=seed)
        dense = real_run(X.toarray(), y, 10, selector=default_selector(20), seed=seed)
        np.testing.assert_array_equal(sparse, dense)
        assert set(np.flatnonzero(sparse <= 5)) & set(range(5))  # it found signal, so equal means something


def test_an_estimate_on_a_sparse_x_runs_on_a_cluster_and_equals_the_dense_one(two_process_client):
    X, y = _study()
    kw = dict(selector=default_selector(10), m_ensemble=(1, 5, 20), n_boot=20, progress=False)
    sparse = es.estimate(X, y, 5, client=two_process_client, **kw)
    dense = es.estimate(X.toarray(), y, 5, client="synchronous", **kw)
    assert sparse.predicted() == dense.predicted()
    assert sparse.curve_interval() == dense.curve_interval()


def test_sparse_npz_and_h5ad_files_are_read_sparse(tmp_path):
    X, y = _study()
    path = tmp_path / "cells.npz"
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, format=X.format, y=y)
    d = load_dataset(path)
    assert scipy.sparse.issparse(d.X) and d.X.format == "csc" and d.y.tolist() == y.tolist()
    np.savez(tmp_path / "nolabels.npz", data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, format="csr")
    with pytest.raises(es.InvalidParameterError, match="key 'y' .* beside the sparse X"):
        load_dataset(tmp_path / "nolabels.npz")


def test_repeated_rows_of_a_sparse_x_are_said(tmp_path, caplog):
    X, y = _study()
    rows = scipy.sparse.vstack([X, X[:3]]).tocsr()
    path = tmp_path / "twice.npz"
    labels = np.r_[y, y[:3]]
    np.savez(path, data=rows.data, indices=rows.indices, indptr=rows.indptr, shape=rows.shape, format="csr", y=labels)
    with caplog.at_level(logging.WARNING, logger="ensstab_dask"):
        load_dataset(path)
    assert "3 of 63 samples repeat an earlier one" in caplog.text


def test_bad_values_in_a_sparse_x_are_refused_naming_where():
    X, y = _study()
    bad = X.tolil()
    bad[3, 4] = np.nan
    with pytest.raises(es.InvalidParameterError, match="X contains NaN or inf .*sample 3, feature 4"):
        check_data(bad.tocsr(), y)
    bad[3, 4] = 1e39
    with pytest.raises(es.InvalidParameterError, match="beyond float32's range.*1e\\+39"):
        check_data(bad.tocsr(), y)


def test_cli_data_line_says_sparse(tmp_path, capsys):
    X, y = _study()
    path = tmp_path / "cells.npz"
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, format=X.format, y=y)
    argv = ["estimate", "--data", str(path), "--n-target", "5", "--n-estimators", "5", "--m-ensemble", "1,5"]
    assert es.cli.main([*argv, "--n-boot", "0", "--scheduler", "synchronous", "--quiet"]) == 0
    assert "X 60 x 200 (sparse, " in capsys.readouterr().out
