"""The table of data formats: a format registered there is read by ``load_dataset``,
named in its messages, never replaced by an output, and estimated on like any other."""

import json
import subprocess
import sys

import numpy as np
import pytest

import ensstab_dask as es
from ensstab_dask.cli import main as cli_main
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.outputs import DATA_SUFFIXES, refuse_to_replace
from ensstab_dask.real.datasets import (
    FORMATS,
    LOADERS,
    Data,
    data_formats,
    load_dataset,
    make_microarray,
    register_format,
    unregister_format,
)
from ensstab_dask.real.formats import Format, ReadOptions
from ensstab_dask.real.selectors import default_selector


def _load_tsv(path, options: ReadOptions) -> Data:
    """A toy format: tab-separated, a header, the labels in the last column; its own
    option ``scale`` multiplies X."""
    table = np.loadtxt(path, delimiter="\t", skiprows=1)
    return Data(table[:, :-1] * options.more["scale"], table[:, -1].astype(np.int64))


@pytest.fixture
def tsv():
    """The toy format, registered in one place, for one test only."""
    register_format(Format(".tsv", _load_tsv, {"scale": 1.0}))
    yield ".tsv"
    unregister_format(".tsv")


def _write_tsv(path, data: Data) -> None:
    header = "\t".join([f"f{i}" for i in range(data.X.shape[1])] + ["label"])
    np.savetxt(path, np.column_stack([data.X, data.y]), delimiter="\t", header=header, comments="")


def test_the_suffix_lists_are_the_table():
    assert list(DATA_SUFFIXES) == list(LOADERS) == list(FORMATS) == [".mat", ".npz", ".csv", ".h5ad"]
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


def test_a_formats_own_option_reaches_its_reader_and_no_other_format(tmp_path, tsv):
    data = make_microarray(n_feature=50, n_informative=5, effect=3.0, seed=1)
    _write_tsv(tmp_path / "d.tsv", data)
    np.testing.assert_allclose(load_dataset(tmp_path / "d.tsv", scale=2.0).X, 2.0 * data.X, rtol=1e-6)
    np.savez(tmp_path / "d.npz", X=data.X, y=data.y)
    with pytest.raises(InvalidParameterError, match=r"^scale is for .tsv files; .*d.npz is not one: leave it out$"):
        load_dataset(tmp_path / "d.npz", scale=2.0)
    with pytest.raises(InvalidParameterError, match=r"^layer is for .h5ad files; .*d.tsv is not one: leave it out$"):
        load_dataset(tmp_path / "d.tsv", layer="counts")
    with pytest.raises(TypeError, match=r"^load_dataset\(\) got an unexpected keyword argument 'scael'$"):
        load_dataset(tmp_path / "d.tsv", scael=2.0)


@pytest.mark.filterwarnings("ignore::ensstab_dask.UnreliableEstimateWarning")
def test_a_registered_format_is_estimated_on_from_the_command_line(tmp_path, tsv, capsys):
    data = make_microarray(n_feature=60, n_informative=5, effect=3.0, seed=1)
    _write_tsv(tmp_path / "d.tsv", data)
    args = ["estimate", "--data", str(tmp_path / "d.tsv"), "--n-target", "3", "--n-estimators", "5"]
    args += ["--m-ensemble", "1,3", "--n-boot", "0", "--copies", "4", "--scheduler", "synchronous", "--quiet"]
    assert cli_main([*args, "--json", str(tmp_path / "d.json")]) == 0
    assert json.loads((tmp_path / "d.json").read_text())["n_feature"] == 60
    with pytest.raises(InvalidParameterError, match=r"is a data file \(.tsv\)"):
        refuse_to_replace(tmp_path / "d.tsv")


def test_every_writer_to_a_path_the_user_names_knows_the_data_formats_when_imported_alone():
    """outputs imports nothing of real: it protects the formats the package ships from the
    start (the same four as the table), and a registered format hands it its suffix. Each
    module that writes where the user says, imported alone, protects all four."""
    writers = [
        "ensstab_dask",
        "ensstab_dask.outputs",
        "ensstab_dask.sweeps.storage",
        "ensstab_dask.estimates.records.estimate",
        "ensstab_dask.estimates.stages.features",
        "ensstab_dask.plotting.report",
        "ensstab_dask.plotting.group_report",
        "ensstab_dask.cli._commands",
    ]
    for module in writers:
        code = f"import {module}; from ensstab_dask.outputs import DATA_SUFFIXES; print(sorted(DATA_SUFFIXES))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert done.stdout.strip() == "['.csv', '.h5ad', '.mat', '.npz']", (module, done.stderr[-500:])


def test_unregistering_a_shipped_format_keeps_its_files_protected(tmp_path):
    """``unregister_format('.csv')`` once let an output replace a CSV data file: files of a
    shipped format exist whether or not its reader is registered."""
    from ensstab_dask.exceptions import InvalidParameterError
    from ensstab_dask.outputs import refuse_to_replace
    from ensstab_dask.real.csv_files import CSV

    data = tmp_path / "study.csv"
    data.write_text("f0,label\n1,0\n")
    unregister_format(".csv")
    try:
        assert ".csv" not in FORMATS and ".csv" in DATA_SUFFIXES
        with pytest.raises(InvalidParameterError, match="data file"):
            refuse_to_replace(data, overwrite=True, name="--json")
    finally:
        register_format(CSV)
        FORMATS[".h5ad"] = FORMATS.pop(".h5ad")  # the table's order, as the other tests read it
    assert list(FORMATS) == [".mat", ".npz", ".csv", ".h5ad"] and data.read_text() == "f0,label\n1,0\n"


def test_the_shipped_formats_are_one_table_and_their_files_are_protected_from_the_start():
    """No format is registered by importing a module: the table holds the shipped ones, and
    their suffixes are those the outputs protect before any registration."""
    from ensstab_dask.outputs import DATA_SUFFIXES, SHIPPED_DATA_SUFFIXES
    from ensstab_dask.real.file_formats import FORMATS

    assert tuple(FORMATS) == SHIPPED_DATA_SUFFIXES and set(SHIPPED_DATA_SUFFIXES) <= set(DATA_SUFFIXES)
