"""Results where scanpy users look: ``ensstab estimate --groupby ... --write-h5ad`` writes a
copy of the data with each group's genes in ``uns["ensstab_markers"]``, in the layout of
scanpy's ``rank_genes_groups``, and scanpy's own readers take it: ``sc.get.rank_genes_groups_df``
and ``sc.pl.rank_genes_groups_dotplot``, on scanpy's example file ``pbmc68k_reduced``."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from ensstab_dask.cli import main

sc = pytest.importorskip("scanpy", reason="scanpy is an optional extra: pip install '.[scanpy]' (in '.[test]' too)")
anndata = pytest.importorskip("anndata", reason="anndata is an optional extra: pip install '.[anndata]'")

GROUPS = "CD14+ Monocyte,Dendritic"
#: The estimate's options, sizes shrunk (5-tree forests, 4 copies): the command is the user's.
SMALL = ["--n-estimators", "5", "--copies", "4", "--scheduler", "synchronous", "--quiet", "--no-cache"]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """scanpy's pbmc68k_reduced as a file, the command run on it, and what it wrote."""
    folder = tmp_path_factory.mktemp("pbmc")
    data, out, record = folder / "pbmc68k_reduced.h5ad", folder / "markers.h5ad", folder / "res.json"
    sc.datasets.pbmc68k_reduced().write_h5ad(data)
    before = hashlib.sha256(data.read_bytes()).hexdigest()
    args = ["estimate", "--data", str(data), "--groupby", "bulk_labels", "--groups", GROUPS]
    assert main([*args, *SMALL, "--write-h5ad", str(out), "--json", str(record)]) == 0
    assert hashlib.sha256(data.read_bytes()).hexdigest() == before  # the data file is never touched
    return data, anndata.read_h5ad(out), json.loads(record.read_text())


def test_scanpys_readers_take_the_markers(written):
    import matplotlib

    matplotlib.use("Agg")
    _, adata, record = written
    table = sc.get.rank_genes_groups_df(adata, group="CD14+ Monocyte", key="ensstab_markers")
    assert list(table.columns[:5]) == ["names", "scores", "logfoldchanges", "pvals", "pvals_adj"]
    # The genes most often kept first; the stable ones (at least the cutoff's share) lead.
    assert (np.diff(table["scores"].to_numpy()) <= 1e-6).all()
    stable = record["markers"]["CD14+ Monocyte"]
    assert stable and table["names"].tolist()[: len(stable)] == stable
    assert (table["scores"].to_numpy()[: len(stable)] >= 0.9 - 1e-6).all()
    # Each gene's effect against the rest, from raw (log data, scanpy's default): finite, and
    # its direction the sign of its log fold change.
    uns = adata.uns["ensstab_markers"]
    lfc = table["logfoldchanges"].to_numpy()
    direction = np.asarray(uns["direction"]["CD14+ Monocyte"])[: len(table)]
    assert np.isfinite(lfc).all() and ((lfc > 0) == (direction == "up")).all()
    assert set(table.columns) >= {"pct_nz_group", "pct_nz_reference"}
    # No p-value is made up: a selection frequency is no test, and params say what each field is.
    assert table["pvals"].isna().all() and uns["params"]["method"] == "ensstab_dask"
    assert "selection frequency" in uns["params"]["fields"]["scores"] and uns["params"]["use_raw"]
    lower = np.asarray(uns["frequency_lower"]["CD14+ Monocyte"])
    upper = np.asarray(uns["frequency_upper"]["CD14+ Monocyte"])
    assert ((lower <= table["scores"].to_numpy() + 1e-6) & (table["scores"].to_numpy() <= upper + 1e-6)).all()
    plot = sc.pl.rank_genes_groups_dotplot(adata, key="ensstab_markers", n_genes=3, show=False)
    assert plot  # the axes scanpy drew
    # And each group's frequencies in var, as the estimate's own columns.
    assert "ensstab_Dendritic_frequency_m20" in adata.var.columns


def test_an_existing_h5ad_is_never_replaced_and_other_data_are_refused(written, tmp_path, capsys):
    data, _, _ = written
    args = ["estimate", "--data", str(data), "--groupby", "bulk_labels", "--groups", GROUPS, *SMALL]
    before = hashlib.sha256(data.read_bytes()).hexdigest()
    for out in (data, data.parent / "markers.h5ad"):
        assert main([*args, "--write-h5ad", str(out), "--overwrite"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is a data file (.h5ad); choose another path" in err[0], err
    assert hashlib.sha256(data.read_bytes()).hexdigest() == before
    csv = tmp_path / "cells.csv"
    csv.write_text("label,g0\na,1\n")
    assert main(["estimate", "--data", str(csv), "--write-h5ad", str(tmp_path / "o.h5ad")]) == 2
    assert "--write-h5ad writes the results into a copy of an .h5ad --data file" in capsys.readouterr().err
