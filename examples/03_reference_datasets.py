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

# %% tags=["parameters"]
# Sizes, and only sizes: every later cell is the same code whatever they are. Unset, they
# are the paper's settings and `ensstab validate`'s defaults: per dataset, 200 forest fits
# for the estimate and 1,000 for the naive check (README.md, "Validation", has the times).
# The test suite sets ENSSTAB_EXAMPLE_SMALL=1 to run quickly on one dataset.
import os

SMALL = os.environ.get("ENSSTAB_EXAMPLE_SMALL") == "1"
DATASETS = ["colon"] if SMALL else ["colon", "lymphoma", "prostate"]
# Small, but not so small that the forest looks like chance: then no curve is predicted
# and the notebook would skip the very steps it is run to test.
N_TREES = 100 if SMALL else 300
M_ENSEMBLE = (1, 5, 10) if SMALL else (1, 5, 10, 20, 30, 50)
M_STABILITY = 6 if SMALL else 20
N_RUNS = 30 if SMALL else None  # None: the largest m_ensemble, the estimate's default
REPEATS = 4 if SMALL else 20
N_BOOT = 50 if SMALL else 200
# Where the naive curves are cached: None for a temporary folder. A folder of your own
# keeps them across sessions, and a rerun then costs only the estimates.
CACHE_DIR = None

# %%
import tempfile

import matplotlib.pyplot as plt
from sklearn.ensemble import RandomForestClassifier

import ensstab_dask as es
from ensstab_dask import plotting
from ensstab_dask.real.datasets import make_microarray, reference_dataset

N_TARGET = {"colon": 20, "lymphoma": 40, "prostate": 60}  # the paper's settings

datasets = {}
for name in DATASETS:
    try:
        datasets[name] = reference_dataset(name)
    except (FileNotFoundError, ValueError) as exc:
        print(f"{name}: {exc}")
if not datasets:
    print("no reference data: using the embedded default")
    datasets["embedded default"] = make_microarray(seed=0)
    N_TARGET["embedded default"] = 20

# %% [markdown]
# ## The validation harness, per dataset
#
# At full size this cell runs for several minutes per dataset: the naive check alone is
# `m_stability x max(m_ensemble)` = 1,000 forest fits. `progress=True` (the default,
# written out here) draws a bar for each stage: the estimate's real runs and
# simulations, then the naive check's real runs. In Jupyter the bars are widgets when
# `ipywidgets` is installed, text bars otherwise. The Dask dashboard (its address is
# printed) shows the same work live. `es.connect("processes")` starts one local cluster
# for every dataset (one worker process per core) with dask's timeouts raised for a
# machine busy with other work (`es.cluster.BUSY_MACHINE`), and closes it at the end.

# %%
selector = RandomForestClassifier(n_estimators=N_TREES, max_features="sqrt", n_jobs=1)
cache = CACHE_DIR or tempfile.mkdtemp()
results = {}
sizes = dict(m_ensemble=M_ENSEMBLE, m_stability=M_STABILITY, n_runs=N_RUNS, repeats=REPEATS, n_boot=N_BOOT)
with es.connect("processes") as client:
    # The paper's model (model="onda"), to show its calibration and fixed point; the
    # default model (anchored) measures the curve on real ensemble copies and has
    # neither (README, "Validation", compares the models).
    options = dict(calibrate=True, model="onda", seed=0, cache_dir=cache, client=client, progress=True, **sizes)
    for i, (name, data) in enumerate(datasets.items(), 1):
        print(f"[{i}/{len(datasets)}] {name}: {data.X.shape[0]} samples x {data.X.shape[1]} features", flush=True)
        results[name] = es.validate(data.X, data.y, N_TARGET[name], selector=selector, data=name, **options)
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
