"""Accuracy from the same runs: each real ensemble copy's features, at every measured
ensemble size, scored by a fixed predictor on the half of the samples the copy never saw.

A copy of the model's design is made on its own random half of the samples (its weak
selectors on bootstrap samples of it, docs/method.md section 8), so the other half is
unseen by every one of its selectors. At each measured size m the copy's ensemble keeps
its top ``n_target`` (the draws of the feature table, stream ``Stage.FEATURES``); the
``predictor`` (:func:`~ensstab_dask.real.accuracy.make_predictor`) is fitted on the copy's
half with those features and scored on the other half: balanced accuracy for class
labels, R^2 for a regression target. The copies' halves are independent draws, so the
mean over copies has the SE of their spread, ``std / sqrt(copies)``. No selector runs
beyond the estimate's: only the predictor's fits, one task per copy.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ensstab_dask.aggregation import copy_ensembles
from ensstab_dask.cluster import map_shared
from ensstab_dask.estimates.stages.features import measured_sizes
from ensstab_dask.estimates.stages.real_runs import EnsembleCopies, RealRunner, real_run_items
from ensstab_dask.real.accuracy import held_out_scores, make_predictor
from ensstab_dask.real.resamples import resample_indices
from ensstab_dask.real.selectors import describe_selector
from ensstab_dask.real.targets import task_of
from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive, make_rng
from ensstab_dask.settings import EstimateSettings

__all__ = ["copy_accuracy", "copy_halves"]


def copy_halves(runner: RealRunner, seed, copies: int) -> list[np.ndarray]:
    """The half of the samples each of ``copies`` real ensemble copies of seed ``seed``
    was made on (:func:`~ensstab_dask.real.selectors.member_ranks`' ``bagging`` layout)."""
    ss = as_seed_sequence(seed)
    return [resample_indices(runner.y, "half", make_rng(derive(ss, Stream.REAL_ENSEMBLE, c))) for c in range(copies)]


def copy_accuracy(runner: RealRunner, settings: EstimateSettings, copies: EnsembleCopies) -> xr.Dataset | None:
    """The accuracy of each copy's ensembles on its unseen half (module docstring), over
    (``copy``, ``m_measured``), with the mean ``accuracy`` and its ``accuracy_se``; None
    without a ``predictor`` or without copies."""
    s, ranks = settings, copies.for_features()
    if s.predictor is None or ranks is None:
        return None
    item = real_run_items(s)["copies" if copies.model is not None else "check"]
    G = ranks.shape[0]
    halves = copy_halves(runner, item.seed, G)
    sizes = measured_sizes(s.m_list, ranks.shape[1])
    rng = make_rng(derive(as_seed_sequence(s.seed), Stream.ESTIMATE, Stage.FEATURES))  # the feature table's draws
    tops = [copy_ensembles(ranks, s.n_target, m, rng, aggregate=s.aggregate) for m in sizes]
    predictor = make_predictor(s.predictor, task_of(runner.y))
    ss = derive(as_seed_sequence(s.seed), Stream.ESTIMATE, Stage.ACCURACY)
    tasks = [(halves[c], [top[c] for top in tops], derive(ss, c)) for c in range(G)]
    scores = np.asarray(map_shared(held_out_scores, (predictor, runner.X, runner.y), tasks, client=runner.client))
    regression = task_of(runner.y) == "regression"
    metric = "r2" if regression else "balanced_accuracy"
    said = {"long_name": "R^2" if regression else "balanced accuracy", "units": "1"}
    dims = ("copy", "m_measured")
    return xr.Dataset(
        {
            "accuracy": ("m_measured", scores.mean(axis=0), {**said, "description": f"mean over {G} copies"}),
            "accuracy_se": (
                "m_measured",
                scores.std(axis=0, ddof=1) / np.sqrt(G),
                {"long_name": "standard error of accuracy", "units": "1"},
            ),
            "accuracy_copy": (dims, scores, {**said, "description": "each copy's, on its unseen half"}),
        },
        coords={"copy": np.arange(G), "m_measured": sizes},
        attrs={"metric": metric, "predictor": describe_selector(predictor), "copies": G, "n_target": s.n_target},
    )
