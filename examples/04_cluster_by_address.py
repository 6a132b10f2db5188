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
# # Submitting to a running Dask cluster
#
# Start workers with `deploy/` (`deploy/local/start-cluster.sh`, Docker, Kubernetes or SLURM)
# and give ensstab the scheduler's address. This notebook reads it from
# `$ENSSTAB_SCHEDULER` and falls back to a local cluster when it is not set.

# %% tags=["parameters"]
# Sizes, and only sizes: every later cell is the same code whatever they are. The test
# suite sets ENSSTAB_EXAMPLE_SMALL=1 to run quickly.
import os

SMALL = os.environ.get("ENSSTAB_EXAMPLE_SMALL") == "1"
GRID = {"n_useful": [20, 40, 80], "p": [0.4, 0.8], "m_ensemble": [1, 5]}
M_LARGE = 5  # the ensemble size shown from the sweep
M_ENSEMBLE = (1, 5)  # the estimate's ensemble sizes
# Small, but not so small that the forest looks like chance: then no curve is predicted
# and the notebook would skip the very steps it is run to test.
N_TREES = 100 if SMALL else 300
M_STABILITY = 6 if SMALL else 30
N_RUNS = 30 if SMALL else None  # None: the largest m_ensemble, the estimate's default
REPEATS = 4 if SMALL else 20

# %%
import dask
from distributed import Client

import ensstab_dask as es
from ensstab_dask import make_microarray
from ensstab_dask.cluster import busy_machine_config, local_cluster

address = os.environ.get("ENSSTAB_SCHEDULER")
if address:
    client = Client(address, timeout="30s")
    cluster = None
else:
    print("ENSSTAB_SCHEDULER not set: starting a local cluster")
    dask.config.set(busy_machine_config())  # for this kernel: timeouts that allow for a busy machine
    cluster = local_cluster(n_workers=2, host="127.0.0.1")
    client = Client(cluster)
print(client)
print("dashboard:", client.dashboard_link)

# %% [markdown]
# Client and workers must run the same versions of dask, distributed and ensstab_dask:
# `check=True` raises if they do not.

# %%
versions = client.get_versions(check=True)
print({k: v["packages"]["distributed"] for k, v in versions["workers"].items()})

# %% [markdown]
# A sweep and an estimate on the cluster. The results are bit-identical to a local run,
# whatever the number of workers.

# %%
settings = dict(**GRID, m_stability=10, repeats=3, seed=0)
remote = es.sweep(2000, 20, client=client, progress=False, **settings)
local = es.sweep(2000, 20, client="synchronous", progress=False, **settings)
assert (remote["stability_draws"] == local["stability_draws"]).all()
remote["stability"].sel(m_ensemble=M_LARGE).to_pandas().round(3)

# %%
from sklearn.ensemble import RandomForestClassifier

data = make_microarray(seed=0)
selector = RandomForestClassifier(n_estimators=N_TREES, max_features="sqrt", n_jobs=1)
sizes = dict(m_ensemble=M_ENSEMBLE, m_stability=M_STABILITY, n_runs=N_RUNS, repeats=REPEATS)
est = es.estimate(data.X, data.y, 20, selector=selector, client=client, feature_names=data.feature_names, **sizes)
print(est.summary())

# %% [markdown]
# An address string works too (`client="tcp://host:8786"`): ensstab then opens and closes
# its own connection, within dask's connect timeout. With TLS, connect the `Client` with
# `security=distributed.security.Security(...)` and pass it, or put the certificates in
# the dask config (`distributed.comm.tls`): ensstab reads them as `Client(address)` does.

# %%
client.close()
if cluster is not None:
    cluster.close()
