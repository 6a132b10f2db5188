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
# # The reference datasets: estimate, calibrate, validate
#
# Colon (62 x 2000), Lymphoma (96 x 4026) and Prostate (102 x 5966), in scikit-feature
# `.mat` form, are read from `$ENSSTAB_DATA_DIR` (never downloaded, never committed). With
# the directory absent this notebook runs on the embedded default instead and says so.
#
# For each dataset, the **validation harness** (`es.validate`, CLI `ensstab validate`):
# the estimate with the grid calibration and its intervals, then the **naive check** it
# replaces (`m_stability x m_ensemble` real runs, cached on disk so that a rerun reuses
# it), compared per ensemble size.

# %%
import os

import matplotlib.pyplot as plt
from sklearn.ensemble import RandomForestClassifier

import ensstab_dask as es
from ensstab_dask import plotting
from ensstab_dask.datasets import make_microarray, reference_dataset

SMALL = os.environ.get("ENSSTAB_EXAMPLE_SMALL") == "1"
N_TARGET = {"colon": 20, "lymphoma": 40, "prostate": 60}  # the paper's settings

datasets = {}
for name in ["colon"] if SMALL else list(N_TARGET):
    try:
        datasets[name] = reference_dataset(name)
    except (FileNotFoundError, ValueError) as exc:
        print(f"{name}: {exc}")
if not datasets:
    print("no reference data: using the embedded default")
    datasets["embedded default"] = make_microarray(seed=0)
    N_TARGET["embedded default"] = 20

# %%
import tempfile

M = (1, 5, 10) if SMALL else (1, 5, 10, 20, 30, 50)
selector = RandomForestClassifier(n_estimators=20 if SMALL else 300, max_features="sqrt", n_jobs=1)
cache = tempfile.mkdtemp()  # where the naive curves are kept; a folder of your own keeps them across sessions
results = {}
for name, data in datasets.items():
    k = N_TARGET[name]
    results[name] = es.validate(data.X, data.y, k, selector=selector, m_ensemble=M, m_stability=6 if SMALL else 20,
                                n_runs=20 if SMALL else None, repeats=4 if SMALL else 20, n_boot=50 if SMALL else 200,
                                calibrate=True, seed=0, cache_dir=cache, data=name)  # fmt: skip
    print(f"--- {name} ---")
    print(results[name].summary())

# %% [markdown]
# ## Pictures
#
# Calibration (the two surfaces and their intersection), the fixed point, the predicted
# curve against the naive one, and the cost.

# %%
for name, res in results.items():
    if not res.estimate.has_curve:  # the method had nothing to say: the summary above says why
        print(f"{name}: no prediction to draw")
        continue
    ds = res.to_dataset()
    fig, axes = plt.subplots(2, 2, figsize=(13, 9.5), layout="constrained")
    fig.suptitle(name)
    if "calibration_stability" in ds:
        plotting.plot_calibration(ds, ax=axes[0, 0])
    plotting.plot_fixed_point(ds, ax=axes[0, 1])
    plotting.plot_stability_curve(ds, ax=axes[1, 0])
    plotting.plot_cost(ds, ax=axes[1, 1])
    plt.show()

# %% [markdown]
# ## Prediction against measurement
#
# Per ensemble size: does the interval cover the naive value, and is the prediction
# within 2 of the naive value's standard errors? The same numbers as above, as a table.

# %%
import pandas as pd

for name, res in results.items():
    print(name, f"(covered at {res.covered} of {len(res.per_m)} sizes)")
    print(pd.DataFrame(res.per_m).T.round(3))
