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
# # Quickstart: how stable will my ensemble feature selector be?
#
# A random forest ranks 2000 features from 62 samples. Rerun it on other samples and the
# top 20 change. Ensembles of such weak selectors (bagging + mean-rank aggregation) are more
# stable, but measuring how much more directly, for every ensemble size, costs
# `copies x max(m_ensemble)` forest fits (1,000 with the naive check's 20 copies, up to
# m = 50). By default (`model="anchored"`) `ensstab_dask.estimate` measures 10 real
# ensembles of 20 forests (200 fits) and extrapolates beyond 20; `model="onda"` fits the
# paper's two-parameter simulator `(n_useful, p)` instead (Onda et al.). Fewer fits are not
# the same precision: on this data, at equal precision (real runs x variance), the estimate
# was no cheaper than that direct measurement at m = 50 (README.md, "Validation"). What it
# adds is the whole curve, with intervals and a self-check, and the features below, from one
# set of runs.
#
# This notebook runs `ensstab estimate`'s defaults on the **embedded default**, a synthetic
# microarray-like study with 40 known informative features, on the **local Dask
# scheduler** (one worker process per core). README.md says how long that takes. The same
# real runs then say **which features** an ensemble keeps on nearly every rerun, and how
# the stability changes with **n_target**, the number of top features kept.

# %% tags=["parameters"]
# Sizes, and only sizes: every later cell is the same code whatever they are. The test
# suite sets ENSSTAB_EXAMPLE_SMALL=1 to run quickly; unset, they are `ensstab estimate`'s
# defaults (tests/test_examples.py checks that they are).
import os

SMALL = os.environ.get("ENSSTAB_EXAMPLE_SMALL") == "1"
# Small, but not so small that the forest looks like chance: then no curve is predicted
# and the notebook would skip the very steps it is run to test.
N_TREES = 100 if SMALL else 300
M_ENSEMBLE = (1, 5, 10) if SMALL else (1, 5, 10, 20, 30, 50)
M_STABILITY = 6 if SMALL else 50
N_RUNS = 30 if SMALL else None  # None: the largest m_ensemble, the estimate's default
REPEATS = 4 if SMALL else 20

# %%
import matplotlib.pyplot as plt

import ensstab_dask as es
from ensstab_dask import make_microarray, plotting

# %%
data = make_microarray(seed=0)
print(data.X.shape, "samples x features;", len(data.informative), "informative features (known here)")

# %% [markdown]
# ## The estimate
#
# `client=None` starts a local cluster for the duration of the call. Pass a
# `distributed.Client`, or a scheduler address, to use yours (see notebook 04).
#
# `n_target` is a list here: the estimate is the first one's (20, as `ensstab estimate`'s),
# and the same real runs give the curve at 10 and 40 too (`est.surface`), each bit for bit
# what asking for that n_target alone would give.

# %%
from sklearn.ensemble import RandomForestClassifier

selector = RandomForestClassifier(n_estimators=N_TREES, max_features="sqrt", n_jobs=1)
est = es.estimate(
    data.X,
    data.y,
    [20, 10, 40],
    selector=selector,
    m_ensemble=M_ENSEMBLE,
    m_stability=M_STABILITY,
    n_runs=N_RUNS,
    repeats=REPEATS,
    seed=0,
    feature_names=data.feature_names,
)
print(est.summary())

# %% [markdown]
# The first lines are the answer in plain words: how many of their top 20 features two
# runs of an ensemble on different halves of the samples share, for each size; where more
# members stop helping; which n_target is the most stable; whether to believe it; and the
# features an ensemble keeps on nearly every rerun. Below them come the method's
# quantities, each with its symbol in brackets (docs/method.md explains them).

# %% [markdown]
# `n_useful` counts the features the forest picks more often than chance would
# (`t_uniform`). Since this study's informative features are known, we can check them:

# %%
import numpy as np

above = np.flatnonzero(est.single.selection_counts > est.single.t_uniform)
print(f"{len(above)} features above t_uniform, {np.isin(above, data.informative).sum()} of them informative")

# %% [markdown]
# ## Which features
#
# Each of the 10 real ensemble copies the estimate ran is a rerun of the whole study on its
# own half of the samples. `feature_table()` says, for every feature, on what fraction of
# those reruns an ensemble of each measured size keeps it in its top 20 (with a 95 %
# Clopper-Pearson interval), and its mean rank over all 200 runs; most often kept first.
# `ensstab estimate --features features.csv` writes the same table.

# %%
table = est.feature_table()
table["informative"] = table["feature"].isin(data.informative)
print(table.head(12)[["name", "frequency_m1", "frequency_m5", "frequency_m20", "mean_rank", "informative"]])

# %% [markdown]
# ## Which n_target
#
# `est.surface` holds the curve at each n_target asked, with its interval, over
# (`n_target`, `m_ensemble`).

# %%
print(est.surface["stability"].to_pandas().round(3))

# %% [markdown]
# ## Pictures
#
# The predicted stability against the ensemble size, and the selection counts against chance.

# %%
fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), layout="constrained")
plotting.plot_stability_curve(est, ax=axes[0])
plotting.plot_selection_counts(est, ax=axes[1])
plt.show()

# %% [markdown]
# How often the top features are kept at each ensemble size (names on the axis), and the
# stability over n_target (one line per n_target, each with its interval).

# %%
fig, axes = plt.subplots(1, 2, figsize=(14, 6), layout="constrained")
plotting.plot_feature_frequencies(est, ax=axes[0])
plotting.plot_stability_surface(est, ax=axes[1])
plt.show()

# %% [markdown]
# ## As xarray, on disk, and as a report
#
# `to_dataset()` has everything (the curve over `m_ensemble`, the counts, the draws, and every
# number in `attrs`); `ensstab report` makes a self-contained HTML page from its netCDF.
# Both are written into `quickstart-output/` beside this notebook and kept there: open
# `quickstart-output/report/index.html` in a browser. Running the notebook again replaces
# them.

# %%
from pathlib import Path

from ensstab_dask.plotting import write_report

ds = est.to_dataset()
print(ds["stability"].to_series().round(3))
out = Path("quickstart-output")
out.mkdir(exist_ok=True)
est.to_netcdf(out / "estimate.nc", overwrite=True)
index = write_report(out / "estimate.nc", out / "report", overwrite=True)
print("report:", index.resolve())
