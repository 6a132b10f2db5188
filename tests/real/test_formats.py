"""The table of data formats: a format registered there is read by ``load_dataset``,
named in its messages, never replaced by an output, and estimated on like any other."""

import numpy as np
import pytest

import ensstab_dask as es
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.outputs import DATA_SUFFIXES, refuse_to_replace
from ensstab_dask.real.datasets import LOADERS, Data, data_formats, load_dataset, make_microarray
from ensstab_dask.real.selectors import default_selector


def _load_tsv(path, options=None) -> Data:
    """A toy format: tab-separated, a header, the labels in the last column."""
    table = np.loadtxt(path, delimiter="\t", skiprows=1)
    return Data(table[:, :-1], table[:, -1].astype(np.int64))


@pytest.fixture
def tsv(monkeypatch):
    """The toy format, registered for one test only."""
    monkeypatch.setitem(LOADERS, ".tsv", _load_tsv)
    return ".tsv"


def _write_tsv(path, data: Data) -> None:
    header = "\t".join([f"f{i}" for i in range(data.X.shape[1])] + ["label"])
    np.savetxt(path, np.column_stack([data.X, data.y]), delimiter="\t", header=header, comments="")


def test_the_suffix_lists_are_the_table():
    assert list(DATA_SUFFIXES) == list(LOADERS) == [".mat", ".npz", ".csv", ".h5ad"]
    assert data_formats() == ".mat, .npz, .csv or .h5ad"


def test_an_unregistered_suffix_is_refused_with_the_registered_ones(tmp_path):
    (tmp_path / "d.tsv").write_text("f0\tlabel\n")
    with pytest.raises(InvalidParameterError, match=r"unknown format '.tsv'; use .mat, .npz, .csv or .h5ad$"):
        load_dataset(tmp_path / "d.tsv")


@pytest.mark.filterwarnings("ignore::ensstab_dask.UnreliableEstimateWarning")  # tiny runs: a self-check may fail
def test_a_registered_format_is_read_and_estimated_on(tmp_path, tsv):
    data = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    path = tmp_path / "study.tsv"
    _write_tsv(path, data)
    loaded = load_dataset(path)
    np.testing.assert_array_equal(loaded.X, data.X)
    np.testing.assert_array_equal(loaded.y, data.y)
    assert data_formats() == ".mat, .npz, .csv, .h5ad or .tsv"
    with pytest.raises(InvalidParameterError, match=r"is a data file \(.tsv\)"):
        refuse_to_replace(path)  # DATA_SUFFIXES follows the table
    tiny = dict(selector=default_selector(5), m_ensemble=(1, 3), m_stability=5, n_runs=10, repeats=2, n_boot=0)
    est = es.estimate(loaded.X, loaded.y, 3, client="synchronous", progress=False, **tiny)
    assert sorted(est.predicted()) == [1, 3]
    assert np.isfinite(list(est.predicted().values())).all()
