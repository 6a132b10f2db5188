"""ensstab_dask: fast estimation of the stability of ensemble feature selectors, on Dask.

Implements Onda et al., "Fast Estimation Method for the Stability of Ensemble Feature
Selectors": a two-parameter simulator (n_useful, p) of a weak feature selector is fitted
to a few real runs and predicts the stability of ensembles of that selector.
"""

from ._stability import (
    NogueiraStability,
    NogueiraTest,
    nogueira_stability,
    nogueira_test,
    pairwise_similarity,
    stability,
)
from ._sweep import sweep
from ._version import __version__
from .accuracy import PredictionAccuracy, prediction_accuracy
from .aggregation import aggregate_rankings, rank_scores, top_k
from .algorithm import estimate
from .calibration import calibrate
from .cluster import connect
from .estimation import (
    PEstimate,
    count_useful,
    estimate_p,
    selection_counts,
    simulated_n_useful,
    uniform_subsets,
    uniform_threshold,
)
from .exceptions import (
    EnsstabError,
    EnsstabWarning,
    InvalidParameterError,
    SchedulerLost,
    SchedulerUnreachable,
    StoreDamaged,
    StoreMismatch,
    UnreliableEstimateWarning,
)
from .fixed_point import FixedPointCheck, FixedPointIteration, check_fixed_point, iterate_fixed_point
from .naive import real_ensemble_stability
from .result import Estimate
from .seeding import derive, make_rng
from .simulation import simulate_ensembles, simulate_rankings, simulated_stability
from .storage import export_netcdf
from .validation import Validation, validate

__all__ = [
    "__version__",
    "aggregate_rankings",
    "estimate",
    "Estimate",
    "real_ensemble_stability",
    "prediction_accuracy",
    "PredictionAccuracy",
    "calibrate",
    "connect",
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
