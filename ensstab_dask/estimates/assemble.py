"""The last stage of the estimate: the :class:`~ensstab_dask.estimates.result.Estimate`
from the records the stages before it returned."""

from __future__ import annotations

import xarray as xr

from ensstab_dask.cluster.progress import StageClock
from ensstab_dask.estimates.prediction import ModelOutcome, no_curve
from ensstab_dask.estimates.real_runs import EnsembleCopies
from ensstab_dask.estimates.records import Cost, CurvePrediction, FittedSimulator, RunsSpent, SingleSelector, Verdict
from ensstab_dask.estimates.result import Estimate
from ensstab_dask.models.fitting import SimulatorFit
from ensstab_dask.real.runs import RealRuns
from ensstab_dask.settings import EstimateSettings

__all__ = ["assemble", "fitted_simulator"]


def fitted_simulator(fit: SimulatorFit) -> FittedSimulator | None:
    """The record of the simulator's fit; None when it was not fitted (a model that is no
    simulator, or nothing to predict)."""
    if fit.p_fit is None:
        return None
    return FittedSimulator(fit.p_fit, fit.fixed_point, fit.power, fit.calibration, fit.calibrated)


def assemble(
    settings: EstimateSettings,
    runs: RealRuns,
    copies: EnsembleCopies,
    single: SingleSelector,
    outcome: ModelOutcome,
    verdict: Verdict,
    *,
    clock: StageClock,
    features: xr.Dataset | None,
) -> Estimate:
    """The :class:`~ensstab_dask.estimates.result.Estimate` from what the stages found: the
    ``runs`` and ``copies`` it was made on, the ``single`` selector's statistics, the
    model's ``outcome`` (no prediction: no curve), the ``verdict`` and the ``features``;
    ``clock`` is its seconds, which later stages of the same estimate add to."""
    s, curve_model = settings, settings.curve_model
    predictable = outcome.prediction is not None
    prediction = outcome.prediction if outcome.prediction is not None else no_curve(s.m_list)
    curve = prediction.curve
    # The simulator's parameters only where a simulator ran: a model that is none has no such
    # values (its name is the estimate's ``model``).
    ran = {"simulator_n_useful": outcome.u_pred, "simulator_p": outcome.p_pred} if curve_model.simulator else {}
    curve.attrs = {
        "title": "ensstab_dask predicted stability of ensembles",
        "kind": "estimate",  # what plotting and the report dispatch on (see plotting.result_kind)
        **ran,  # n_useful calibrated when calibrate=True found a consistent cell
        **{k: v for k, v in prediction.attrs.items() if k not in ("simulator_n_useful", "simulator_p")},
    }
    n_real = (runs.count if curve_model.paper_runs else 0) + copies.runs
    return Estimate(
        n_feature=s.n_feature,
        n_target=s.n_target,
        settings=dict(s.to_dict(), n_runs=single.n_runs, stability_runs=len(runs.stability)),
        single=single,
        fit=fitted_simulator(outcome.fit),
        prediction=CurvePrediction(
            model=curve_model.name,
            simulator=curve_model.simulator,
            curve=curve,
            has_curve=predictable,
            confidence=s.confidence,
            n_boot=s.n_boot,
            intervals=prediction.intervals,
            bootstrap=prediction.bootstrap,
            source=curve_model.source(prediction) if predictable else "",
            interval_of=curve_model.interval_of,
            h=prediction.h,
            within_copy_stability=prediction.within_copy_stability,
        ),
        self_check=outcome.check,
        verdict=verdict,
        cost=Cost(n_real, int(outcome.fit.simulated + prediction.simulated), clock, copies.spent or RunsSpent()),
        features=features,
    )
