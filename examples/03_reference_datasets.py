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
# For each dataset: the estimate with the grid calibration, then the **naive check** it
# replaces (`m_stability x m_ensemble` real runs) on the same axes.

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
M = (1, 5, 10) if SMALL else (1, 5, 10, 20, 30, 50)
selector = RandomForestClassifier(n_estimators=20 if SMALL else 300, max_features="sqrt", n_jobs=1)
results = {}
for name, data in datasets.items():
    k = N_TARGET[name]
    est = es.estimate(data.X, data.y, k, selector=selector, m_ensemble=M, m_stability=8 if SMALL else 20,
                      repeats=4 if SMALL else 20, calibrate=True, seed=0)  # fmt: skip
    real = es.real_ensemble_stability(data.X, data.y, k, selector=selector, m_ensemble=M,
                                      m_stability=6 if SMALL else 20, seed=0)  # fmt: skip
    results[name] = est.to_dataset(real)
    print(f"--- {name} ---")
    print(est.summary())

# %% [markdown]
# ## Pictures
#
# Calibration (the two surfaces and their intersection), the fixed point, the predicted
# curve against the naive one, and the cost.

# %%
for name, ds in results.items():
    fig, axes = plt.subplots(2, 2, figsize=(13, 9.5), layout="constrained")
    fig.suptitle(name)
    plotting.plot_calibration(ds, ax=axes[0, 0])
    plotting.plot_fixed_point(ds, ax=axes[0, 1])
    plotting.plot_stability_curve(ds, ax=axes[1, 0])
    plotting.plot_cost(ds, ax=axes[1, 1])
    plt.show()

# %% [markdown]
# ## Prediction against measurement
#
# Where the naive value lies within 2 of its standard errors of the prediction, the method
# holds for that ensemble size.

# %%
for name, ds in results.items():
    table = ds[["stability", "naive_stability", "naive_stability_se"]].to_dataframe()
    table["within_2_se"] = (table["stability"] - table["naive_stability"]).abs() <= 2 * table["naive_stability_se"]
    print(name)
    print(table.round(3))
