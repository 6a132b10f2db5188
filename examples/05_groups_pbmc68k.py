# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Markers of every group against the rest, and how stable they are
#
# scanpy's `rank_genes_groups` names the marker genes of each cell type against the rest.
# `es.estimate_groups` asks, for each group, how stable an ensemble of random forests'
# choice of the genes that tell it from the rest would be, and which genes it keeps on
# nearly every rerun. Every group's forest fits go to the cluster in one submission.
#
# The data are scanpy's `pbmc68k_reduced` (700 cells x 765 genes, `bulk_labels`: 10 cell
# types), shipped inside scanpy: nothing is downloaded. This notebook needs scanpy
# (`pip install scanpy`).

# %% tags=["parameters"]
# Sizes, and only sizes: every later cell is the same code whatever they are. Unset, every
# group with the method's 300-tree forests (10 groups x 200 forest fits). The test suite
# sets ENSSTAB_EXAMPLE_SMALL=1: three groups and smaller forests.
import os

SMALL = os.environ.get("ENSSTAB_EXAMPLE_SMALL") == "1"
GROUPS = ["CD14+ Monocyte", "Dendritic", "CD56+ NK"] if SMALL else None  # None: every group
N_TREES = 20 if SMALL else 300
N_TARGET = 20
M_ENSEMBLE = (1, 5, 10, 20, 50)

# %%
import time

import scanpy as sc

import ensstab_dask as es

adata = sc.datasets.pbmc68k_reduced()
adata

# %% [markdown]
# One estimate per group, each against every other cell (`reference="rest"`, as
# `rank_genes_groups`' default). The selector is the method's forest; each group's
# question is its own two-class problem, run as `es.estimate` would run it alone.

# %%
start = time.perf_counter()
res = es.estimate_groups(
    adata.X,
    adata.obs["bulk_labels"].to_numpy(),
    N_TARGET,
    groups=GROUPS,
    groupby="bulk_labels",
    feature_names=adata.var_names,
    selector=es.default_selector(N_TREES),
    m_ensemble=M_ENSEMBLE,
    progress=False,
)
seconds = time.perf_counter() - start
print(f"{len(res.groups)} groups in {seconds:.0f} s ({res.seconds:.0f} s of forest fits, sent together)")

# %% [markdown]
# Each group's answer: the genes two reruns of an ensemble of 50 would share (of their top
# 20), and the genes its ensembles of 20 keep on at least 90 % of reruns.

# %%
for group, est in res.estimates.items():
    shared = est.predicted()[max(M_ENSEMBLE)] * 2 * N_TARGET / (1 + est.predicted()[max(M_ENSEMBLE)])
    print(f"{group}: {shared:.1f} of {N_TARGET} genes shared at m = {max(M_ENSEMBLE)}; reliable: {est.reliable}")
    print(f"    stable: {', '.join(res.markers()[group]) or 'none'}")

# %% [markdown]
# Back into the AnnData, as scanpy keeps its results: each group's frequencies in `var`,
# and the stable genes in `uns["ensstab_markers"]`, beside scanpy's own `rank_genes_groups`.

# %%
written = es.write_frequencies_to_var(adata, res)
scanpy_top = {g: list(adata.uns["rank_genes_groups"]["names"][g][:N_TARGET]) for g in res.groups}
for group, genes in res.markers().items():
    both = [g for g in genes if g in scanpy_top[group]]
    print(f"{group}: {len(both)} of {len(genes)} stable genes among scanpy's top {N_TARGET} markers")
adata.var[written[:4]].sort_values(written[0], ascending=False).head()

# %% [markdown]
# The genes of each group are in `uns["ensstab_markers"]` in the layout of
# `rank_genes_groups`, so scanpy's own functions read them: each group's genes by how often
# an ensemble of 20 keeps them (`scores`, a selection frequency), with the log fold change
# against the rest (from `adata.raw`, as scanpy's default) and the share of cells
# expressing each gene in the group and in the rest. There is no p-value: a frequency is
# no test.

# %%
sc.get.rank_genes_groups_df(adata, group=res.groups[0], key="ensstab_markers").head(10)

# %%
sc.pl.rank_genes_groups_dotplot(adata, key="ensstab_markers", n_genes=4)

# %% [markdown]
# One Dataset with a `group` dimension, for xarray: the predicted curve of every group.

# %%
ds = res.to_dataset()
ds["stability"].to_pandas().round(3)
