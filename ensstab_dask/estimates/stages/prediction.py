"""Stages 5 to 7 of the estimate: the model's curve.

Before p is fitted the guard rails say whether there is anything to predict
(:func:`~ensstab_dask.estimates.words.trust.guard_rails`); when there is:

5. p from the real stability (:func:`~ensstab_dask.simulator.estimators.estimate_p`, common
   random numbers, ``repeats x m_stability`` simulated copies so that its noise is small),
   for a model whose curve is the paper's simulator's;
6. the fixed point u = A[f_{u,p}] and
   :func:`~ensstab_dask.models.fitting.fixed_point_power`, whether the check could have
   failed at all (with 5: :func:`~ensstab_dask.models.fitting.fit_simulator`);
7. the model's curve (:meth:`~ensstab_dask.models.CurveModel.predict`; the paper's:
   :func:`~ensstab_dask.models.onda.predict_curve`), with the bootstrap over the real runs
   that gives every quantity an interval, and its self-check against real ensembles it
   did not use (a failed one widens the interval by the error seen).

:func:`predict_with_model` runs them and returns a :class:`ModelOutcome`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import xarray as xr

from ensstab_dask.cluster.progress import StageBar
from ensstab_dask.estimates.records.parts import SingleSelector
from ensstab_dask.estimates.words.trust import guard_rails
from ensstab_dask.indices import clip_to_index, index_range
from ensstab_dask.models import Context, Prediction, SelfCheck
from ensstab_dask.models.fitting import fit_simulator
from ensstab_dask.models.simulator_fit import SimulatorFit
from ensstab_dask.settings import EstimateSettings

__all__ = ["ModelOutcome", "predict_with_model", "no_curve"]


@dataclass(frozen=True)
class ModelOutcome:
    """What the model's stages found: the paper's simulator fitted, with the point it
    predicts at (only A[f] for a model that is no simulator, or when nothing can be
    predicted), and the prediction and its self-check (None when nothing can be predicted)."""

    fit: SimulatorFit
    prediction: Prediction | None
    check: SelfCheck | None


def predict_with_model(
    ctx: Context, settings: EstimateSettings, single: SingleSelector, *, progress: bool
) -> ModelOutcome:
    """Stages 5 to 7 for ``settings.curve_model``, on the single selector's statistics ``single``
    (``ctx`` holds them for the model); ``progress``: one bar over the stages."""
    s, curve_model = settings, settings.curve_model
    # Before p is fitted: is there anything to say?
    predictable = guard_rails(single, settings.n_target, simulator=curve_model.simulator).predictable
    # One bar over the simulation stages about to run, in their order below (none when no
    # curve can be predicted): they are few and unequal, so a count of tasks would mislead.
    stages = (
        (["p"] + ["fixed point"] * int(s.verify) + ["calibration"] * int(s.calibrate)) * curve_model.simulator
        + curve_model.stages(s.n_boot)
        + ["self-check"]
    )
    sims = StageBar(stages if predictable else [], "simulations", enabled=progress)
    prediction = check = None
    if predictable:
        if curve_model.simulator:
            fit = fit_simulator(ctx, n_useful_mean=single.n_useful_mean, bar=sims)
            # The model reads the fitted point from its Context, as it reads the real statistics.
            ctx = replace(ctx, fit=fit)
        prediction = curve_model.predict(ctx, sims)
        with ctx.clock.stage("self_check"):
            check = curve_model.self_check(ctx, prediction)
            if check is not None:  # what it predicted as the curve reports it: within the index's range
                check = replace(check, predicted=clip_to_index(check.predicted, s.index))
            if check is not None and not check.passed:
                prediction = curve_model.widened(prediction, check)
        sims.done()
        _clip_to_ranges(prediction, s, n_runs=ctx.n_runs)
    sims.close()
    return ModelOutcome(ctx.fit, prediction, check)


def _clip_to_ranges(prediction: Prediction, settings: EstimateSettings, *, n_runs: int) -> None:
    """An extrapolation or a bootstrap can step outside what a quantity can take; a
    reported value never does: the curve's points and interval ends are clipped to the
    index's range (whatever the model), the parameters' intervals to theirs."""
    curve, s = prediction.curve, settings
    for end in ("stability", "stability_lower", "stability_upper"):
        if end in curve:
            curve[end].values = clip_to_index(curve[end].values, s.index)
    ranges = {
        "real_stability": index_range(s.index),
        "p": (0.0, 1.0),
        "t_uniform": (0.0, n_runs),
        "n_useful": (0.0, s.n_feature),
        "h": (s.n_target, s.n_feature),
    }
    for key, (lo, hi) in ranges.items():
        if key in prediction.intervals:
            a, b = np.clip(prediction.intervals[key], lo, hi)
            prediction.intervals[key] = (float(a), float(b))


def no_curve(m_list: list[int]) -> Prediction:
    """The prediction of an estimate with nothing to say: NaN at every size."""
    nan = np.full(len(m_list), np.nan)
    curve = xr.Dataset(
        {"stability": ("m_ensemble", nan), "stability_std": ("m_ensemble", nan.copy())},
        coords={"m_ensemble": m_list},
    )
    return Prediction(curve=curve)
