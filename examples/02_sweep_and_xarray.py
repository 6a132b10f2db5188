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
# # Sweeps: the simulator's two surfaces, queried with xarray
#
# A sweep maps, over a grid of the simulator's parameters `(n_useful, p)` and ensemble sizes
# `m_ensemble`, the simulated stability and `n_useful_v = A[f_(u,p)]`. Each cell is its own
# Dask task batch and depends only on its parameters and the seed, so a stored sweep can be
# resumed, and a cell computed in one sweep equals the same cell computed in another.

# %% tags=["parameters"]
# Sizes, and only sizes: every later cell is the same code whatever they are. The test
# suite sets ENSSTAB_EXAMPLE_SMALL=1 to run quickly: a coarser grid, taken from the full
# one, so that every label selected below is on both; fewer copies and repeats.
import os

SMALL = os.environ.get("ENSSTAB_EXAMPLE_SMALL") == "1"
FULL_GRID = {
    "n_useful": list(range(20, 201, 10)),
    "p": [round(0.05 * i, 2) for i in range(1, 21)],
    "m_ensemble": [1, 5, 20],
}
# The cell this notebook looks at (the "observed" selector below) and the large ensemble.
U_OBS, P_OBS, M_LARGE = 50, 0.8, 20
GRID = {"n_useful": FULL_GRID["n_useful"][::3], "p": FULL_GRID["p"][3::4], "m_ensemble": FULL_GRID["m_ensemble"]}
GRID = GRID if SMALL else FULL_GRID
M_STABILITY = 10 if SMALL else 30
REPEATS = 3 if SMALL else 10

# %%
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

import ensstab_dask as es
import ensstab_dask.accessor  # noqa: F401 - registers ds.ensstab
from ensstab_dask import plotting

# %% [markdown]
# The sweep shows a progress bar (`progress=True`, the default) and the Dask dashboard's
# address; at full size it runs for a few minutes (see README.md).

# %%
store = Path(tempfile.mkdtemp()) / "sweep.zarr"
ds = es.sweep(
    2000,
    20,
    **GRID,
    n_runs=20,
    m_stability=M_STABILITY,
    repeats=REPEATS,
    seed=0,
    store=store,  # written block by block; rerunning this cell computes nothing
)
ds

# %% [markdown]
# ## Querying
#
# Label-based selection, nearest values, interpolation between grid points:

# %%
single = ds["stability"].sel(m_ensemble=1)
print(single.sel(n_useful=U_OBS, p=P_OBS).item())
print(ds["stability"].sel(n_useful=U_OBS + 2, p=P_OBS - 0.01, method="nearest").to_series().round(3))
print(single.interp(n_useful=U_OBS + 5, p=P_OBS - 0.1).item())

# %% [markdown]
# Masks: the cells where a single selector is at least 0.2 stable, and where ensembles of 20
# beat single selectors.

# %%
stable_enough = single.where(single >= 0.2)
print(int(stable_enough.count()), "of", single.size, "cells have stability >= 0.2")
gain = ds["stability"].sel(m_ensemble=M_LARGE) - single
print(f"ensembles of {M_LARGE} help in", int((gain > 0).sum()), "cells")

# %% [markdown]
# ## The consistent region
#
# Given what was measured on a real selector (its stability and its n_useful with 20 runs),
# `ds.ensstab.calibrate` marks the cells consistent with each observation and with both
# (docs/method.md section 6). Here the "observations" are those of a simulated selector with
# u = U_OBS = 50, p = P_OBS = 0.8, so the consistent region should contain that cell.

# %%
obs_stability = float(single.sel(n_useful=U_OBS, p=P_OBS))
obs_n_useful = float(ds["n_useful_v"].sel(n_useful=U_OBS, p=P_OBS, m_ensemble=M_LARGE))
cal = ds.ensstab.calibrate(obs_stability, obs_n_useful, n_runs=20)
print(
    "consistent cells:",
    int(cal["consistent"].sum()),
    "; best (u, p):",
    ds.ensstab.best(obs_stability, obs_n_useful, n_runs=20),
)
cal["consistent"].astype(int).to_pandas()

# %%
fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), layout="constrained")
plotting.plot_calibration(ds, obs_stability, obs_n_useful, n_runs=20, ax=axes[0])
plotting.plot_fixed_point(ds, n_runs=20, ax=axes[1])
plt.show()

# %% [markdown]
# Stability against ensemble size, at one n_useful and several p (xarray's own `.plot` also works):

# %%
fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), layout="constrained")
plotting.plot_stability_curve(ds, n_useful=U_OBS, ax=axes[0])
ds["stability"].sel(m_ensemble=M_LARGE).plot(ax=axes[1], x="p", y="n_useful")
plt.show()

# %% [markdown]
# The store resumes: the same call again computes no cell and returns the same Dataset.

# %%
again = es.sweep(
    2000,
    20,
    n_useful=ds.n_useful.values.tolist(),
    p=ds.p.values.tolist(),
    m_ensemble=ds.m_ensemble.values.tolist(),
    n_runs=20,
    m_stability=ds.attrs["m_stability"],
    repeats=ds.sizes["repeat"],
    seed=0,
    store=store,
    progress=False,
)
assert (again["stability"] == ds["stability"]).all()

# %%
import shutil

shutil.rmtree(store.parent)  # this notebook's temporary store
