"""The small estimation problem the estimate's tests share: 300 features, 15 informative,
and the paper's model on small runs (20-tree forests, 24 runs behind n_useful, 12 behind
the real stability, 50 bootstrap replicates)."""

from __future__ import annotations

from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.selectors import default_selector

DATA = make_microarray(n_feature=300, n_informative=15, effect=2.0, seed=3)
SMALL = dict(
    selector=default_selector(20),
    m_ensemble=(1, 3),
    m_stability=12,
    n_runs=24,
    repeats=4,
    seed=1,
    n_boot=50,
    model="onda",
)
