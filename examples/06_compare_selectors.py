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
# # Which selector, and how large an ensemble
#
# Four base selectors on one reference set (Colon, 62 x 2000, from `$ENSSTAB_DATA_DIR`;
# the embedded default where it is absent): a random forest, extremely randomised trees,
# an L1-penalised logistic regression and the univariate F test. `es.compare` makes one
# estimate per selector, every selector's real runs sent to the cluster together, and
# scores each real ensemble copy's features with the paper's 300-tree forest on the half
# of the samples that copy never saw: stability and accuracy from the same runs.

# %% tags=["parameters"]
# Sizes, and only sizes: every later cell is the same code whatever they are. Unset, they
# are the library's defaults: per selector 10 real ensemble copies of 20 weak selectors
# (200 runs), the forests of 300 trees. The test suite sets ENSSTAB_EXAMPLE_SMALL=1.
import os

SMALL = os.environ.get("ENSSTAB_EXAMPLE_SMALL") == "1"
N_TREES = 50 if SMALL else 300
COPIES = 4 if SMALL else 10
N_BOOT = 50 if SMALL else 200
M_ENSEMBLE = (1, 5, 10, 20, 30, 50)
SELECTORS = ["rf", "extra-trees", "l1-logistic", "f-test"]
N_TARGET = 20
# Where each selector's real runs are cached: None for a temporary folder.
CACHE_DIR = None

# %%
import tempfile

import matplotlib.pyplot as plt

import ensstab_dask as es
from ensstab_dask.plotting.compare_report import plot_curves, plot_stability_accuracy
from ensstab_dask.real.datasets import make_microarray, reference_dataset

try:
    data, name = reference_dataset("colon"), "colon"
except (FileNotFoundError, ValueError) as exc:
    print(f"colon: {exc}; using the embedded default")
    data, name = make_microarray(seed=0), "embedded default"
cache = CACHE_DIR or tempfile.mkdtemp()
settings = dict(m_ensemble=M_ENSEMBLE, copies=COPIES, n_boot=N_BOOT, cache_dir=cache, n_estimators=N_TREES)

# %% [markdown]
# ## One estimate per selector, from one submission of real runs
#
# At full size this cell makes 800 real runs (200 per selector) and scores 160 forests on
# the unseen halves: minutes on a laptop. The answer first: the selector and size whose
# ensembles keep the most features among those within one standard error of the best
# accuracy, then what each other selector needs to keep as many.

# %%
res = es.compare(data.X, data.y, N_TARGET, selectors=SELECTORS, **settings)
print(f"{name}:")
print(res.summary())

# %% [markdown]
# ## The curves on one axis, and stability against accuracy
#
# Left: the features two reruns of each selector's ensemble share, with the interval
# (beyond the 20 weak selectors each copy measured it is the model's extrapolation).
# Right: each selector's path over the measured sizes, stability against the accuracy of
# its features on the unseen halves (the bars: the interval and the SE over copies), and
# the Pareto front of every point.

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(14, 4.6), layout="constrained")
plot_curves(res, ax=left)
plot_stability_accuracy(res, ax=right)
plt.show()

# %% [markdown]
# ## The results as xarray
#
# One Dataset, a `selector` dimension beside each estimate's own: the curve over
# `m_ensemble`, the accuracy over `m_measured`.

# %%
ds = res.to_dataset()
ds[["stability", "stability_lower", "stability_upper", "accuracy", "accuracy_se"]]

# %%
ds["accuracy"].to_pandas().round(3)

# %% [markdown]
# ## A selector added later runs alone
#
# Each selector's runs are cached as its own: asking again with the linear SVM added
# makes only its runs, the others' are read back.

# %%
more = es.compare(data.X, data.y, N_TARGET, selectors=[*SELECTORS, "linear-svm"], **settings)
for selector, est in more.estimates.items():
    print(f"{selector}: {est.cost.runs.made} real runs made, {est.cost.runs.reused} reused")
print()
print("\n".join(more.choice()))
