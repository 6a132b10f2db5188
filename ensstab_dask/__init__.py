"""ensstab_dask: fast estimation of the stability of ensemble feature selectors, on Dask.

How many of their top features two runs of an ensemble of weak feature selectors would
share, at each ensemble size, with an interval and a verdict on whether to believe it.
By default (:func:`estimate`, ``model="anchored"``) it measures a few small real
ensembles (10 copies of 20 weak selectors, each copy on its own random half of the
samples) and extrapolates to larger ensembles by a law fitted to them; a self-check
against real ensembles the law did not use says whether to believe it, and
:func:`validate` compares it with a direct measurement. The method of Onda et al.
("Fast Estimation Method for the Stability of Ensemble Feature Selectors"), a
two-parameter simulator (n_useful, p) of the weak selector fitted to a few real runs, is
available as ``model="onda"``, with its sweeps and calibration (:func:`sweep`,
:func:`calibrate`); docs/models.md compares the models.
"""

from ensstab_dask import _early_stop  # noqa: F401 - first: a stop signal during the imports below
from ensstab_dask._version import __version__
from ensstab_dask.aggregation import aggregate_rankings, rank_scores, top_k
from ensstab_dask.cluster import connect, session
from ensstab_dask.estimates.pipeline import estimate
from ensstab_dask.estimates.result import Estimate
from ensstab_dask.estimates.validation import Validation, validate
from ensstab_dask.exceptions import (
    EnsstabError,
    EnsstabWarning,
    InvalidParameterError,
    SchedulerLost,
    SchedulerUnreachable,
    StoreDamaged,
    StoreMismatch,
    UnreliableEstimateWarning,
)
from ensstab_dask.indices import (
    NogueiraStability,
    NogueiraTest,
    nogueira_stability,
    nogueira_test,
    pairwise_similarity,
    stability,
)
from ensstab_dask.real.accuracy import PredictionAccuracy, prediction_accuracy
from ensstab_dask.real.datasets import load_dataset, make_microarray, write_frequencies_to_var
from ensstab_dask.real.naive import real_ensemble_stability
from ensstab_dask.real.selectors import ImportanceSelector, default_selector
from ensstab_dask.seeding import derive, make_rng
from ensstab_dask.simulator.calibration import calibrate
from ensstab_dask.simulator.estimators import (
    PEstimate,
    count_useful,
    estimate_p,
    selection_counts,
    simulated_n_useful,
    uniform_subsets,
    uniform_threshold,
)
from ensstab_dask.simulator.fixed_point import (
    FixedPointCheck,
    FixedPointIteration,
    check_fixed_point,
    iterate_fixed_point,
)
from ensstab_dask.simulator.kernel import simulate_ensembles, simulate_rankings, simulated_stability
from ensstab_dask.sweeps.storage import export_netcdf
from ensstab_dask.sweeps.sweep import sweep

__all__ = [
    "__version__",
    "aggregate_rankings",
    "estimate",
    "Estimate",
    "real_ensemble_stability",
    "default_selector",
    "ImportanceSelector",
    "load_dataset",
    "make_microarray",
    "write_frequencies_to_var",
    "prediction_accuracy",
    "PredictionAccuracy",
    "calibrate",
    "connect",
    "session",
    "export_netcdf",
    "EnsstabError",
    "EnsstabWarning",
    "InvalidParameterError",
    "SchedulerLost",
    "SchedulerUnreachable",
    "StoreDamaged",
    "StoreMismatch",
    "UnreliableEstimateWarning",
    "sweep",
    "validate",
    "Validation",
    "check_fixed_point",
    "count_useful",
    "derive",
    "estimate_p",
    "FixedPointCheck",
    "FixedPointIteration",
    "iterate_fixed_point",
    "make_rng",
    "nogueira_stability",
    "nogueira_test",
    "NogueiraStability",
    "NogueiraTest",
    "pairwise_similarity",
    "PEstimate",
    "rank_scores",
    "selection_counts",
    "simulate_ensembles",
    "simulate_rankings",
    "simulated_n_useful",
    "simulated_stability",
    "stability",
    "top_k",
    "uniform_subsets",
    "uniform_threshold",
]
