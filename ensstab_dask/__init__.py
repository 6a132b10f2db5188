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

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from ensstab_dask._version import __version__
from ensstab_dask.exceptions import (
    EnsstabError,
    EnsstabWarning,
    InvalidParameterError,
    SchedulerLost,
    SchedulerUnreachable,
    StoreDamaged,
    StoreMismatch,
    UnreliableEstimateWarning,
    WorkersLost,
)

if TYPE_CHECKING:  # what the lazy names below are, for type checkers
    from ensstab_dask.aggregation import aggregate_rankings, rank_scores, top_k
    from ensstab_dask.cluster import connect, session
    from ensstab_dask.estimates.interop.stable_selector import StableFeatureSelector
    from ensstab_dask.estimates.interop.to_anndata import write_frequencies_to_var
    from ensstab_dask.estimates.records.estimate import Estimate
    from ensstab_dask.estimates.records.selectors import SelectorComparison
    from ensstab_dask.estimates.stages.compare import compare
    from ensstab_dask.estimates.stages.groups import GroupEstimates, estimate_groups
    from ensstab_dask.estimates.stages.pipeline import estimate
    from ensstab_dask.estimates.validation.harness import Validation, validate
    from ensstab_dask.indices import (
        NogueiraStability,
        NogueiraTest,
        nogueira_stability,
        nogueira_test,
        pairwise_similarity,
        stability,
    )
    from ensstab_dask.real.accuracy import PredictionAccuracy, prediction_accuracy
    from ensstab_dask.real.datasets import load_dataset, make_microarray
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

#: The public names imported on first use (PEP 562), each module with the names taken from
#: it, as the imports under ``TYPE_CHECKING`` above write them (tests/cli/test_startup.py
#: keeps the two equal): ``import ensstab_dask`` then costs no Dask, xarray or
#: scikit-learn, and neither does ``ensstab --help`` (docs/performance.md, "Start-up").
_LAZY = {
    "aggregation": ("aggregate_rankings", "rank_scores", "top_k"),
    "cluster": ("connect", "session"),
    "estimates.stages.pipeline": ("estimate",),
    "estimates.stages.groups": ("GroupEstimates", "estimate_groups"),
    "estimates.stages.compare": ("compare",),
    "estimates.records.selectors": ("SelectorComparison",),
    "estimates.records.estimate": ("Estimate",),
    "estimates.interop.stable_selector": ("StableFeatureSelector",),
    "estimates.validation.harness": ("Validation", "validate"),
    "indices": (
        "NogueiraStability",
        "NogueiraTest",
        "nogueira_stability",
        "nogueira_test",
        "pairwise_similarity",
        "stability",
    ),
    "real.accuracy": ("PredictionAccuracy", "prediction_accuracy"),
    "real.datasets": ("load_dataset", "make_microarray"),
    "estimates.interop.to_anndata": ("write_frequencies_to_var",),
    "real.naive": ("real_ensemble_stability",),
    "real.selectors": ("ImportanceSelector", "default_selector"),
    "seeding": ("derive", "make_rng"),
    "simulator.calibration": ("calibrate",),
    "simulator.estimators": (
        "PEstimate",
        "count_useful",
        "estimate_p",
        "selection_counts",
        "simulated_n_useful",
        "uniform_subsets",
        "uniform_threshold",
    ),
    "simulator.fixed_point": ("FixedPointCheck", "FixedPointIteration", "check_fixed_point", "iterate_fixed_point"),
    "simulator.kernel": ("simulate_ensembles", "simulate_rankings", "simulated_stability"),
    "sweeps.storage": ("export_netcdf",),
    "sweeps.sweep": ("sweep",),
}
#: Each lazy name's module, inside the package.
_HOME = {name: module for module, names in _LAZY.items() for name in names}

__all__ = [
    "__version__",
    "aggregate_rankings",
    "estimate",
    "Estimate",
    "estimate_groups",
    "compare",
    "SelectorComparison",
    "GroupEstimates",
    "StableFeatureSelector",
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
    "WorkersLost",
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


def __getattr__(name: str) -> Any:
    """A lazy public name (:data:`_LAZY`), or a module of the package, imported now and kept."""
    if name in _HOME:
        value = getattr(importlib.import_module(f"ensstab_dask.{_HOME[name]}"), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"ensstab_dask.{name}") is not None:
        value = importlib.import_module(f"ensstab_dask.{name}")  # ensstab_dask.models, as before when eager
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
