"""The notebooks in examples/ run top to bottom (small settings) and match their .py twins."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is in the test extra")
nbclient = pytest.importorskip("nbclient", reason="nbclient is in the test extra")
jupytext = pytest.importorskip("jupytext", reason="jupytext is in the test extra")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))


def test_there_are_four_notebooks_with_twins():
    assert [p.stem for p in NOTEBOOKS] == [
        "01_quickstart",
        "02_sweep_and_xarray",
        "03_reference_datasets",
        "04_cluster_by_address",
    ]
    for nb in NOTEBOOKS:
        assert nb.with_suffix(".py").exists(), nb


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_in_sync_and_carries_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    twin = jupytext.read(path.with_suffix(".py"))
    assert [(c.cell_type, c.source) for c in nb.cells] == [(c.cell_type, c.source) for c in twin.cells], (
        "notebook and .py twin differ: run `jupytext --sync examples/*.py`"
    )
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "committed notebooks carry no outputs"


@pytest.fixture(scope="module")
def scheduler_address(tmp_path_factory):
    """A real cluster from deploy/local for the notebook that submits by address."""
    from test_cluster_processes import ProcessCluster

    cluster = ProcessCluster(tmp_path_factory.mktemp("nb-cluster"), n_workers=2)
    yield cluster.address
    cluster.stop()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch, request):
    monkeypatch.setenv("ENSSTAB_EXAMPLE_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    if "cluster_by_address" in path.stem:
        monkeypatch.setenv("ENSSTAB_SCHEDULER", request.getfixturevalue("scheduler_address"))
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp_path}})
    client.execute()  # raises CellExecutionError, with the failing cell, if any cell fails
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    if "cluster_by_address" in path.stem:
        assert "ENSSTAB_SCHEDULER not set" not in outputs  # it really used the cluster
