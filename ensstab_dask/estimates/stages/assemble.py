"""Every stage of the estimate after its real runs, in order, on given runs
(:func:`estimate_on_runs`), and the last of them, the
:class:`~ensstab_dask.estimates.records.estimate.Estimate` from the records the stages before it
returned (:func:`assemble`).

:func:`estimate_on_runs` is what :func:`~ensstab_dask.estimate` runs on the runs it made,
each round of a precision on the copies it grew (:mod:`~ensstab_dask.estimates.stages.rounds`)
and the curve at each other n_target on the same copies
(:mod:`~ensstab_dask.estimates.stages.surface`):

1. the single selector's statistics (:mod:`~ensstab_dask.estimates.stages.single`);
2. the model's curve, the paper's simulator fitted first for a simulator model, and its
   self-check (:mod:`~ensstab_dask.estimates.stages.prediction`);
3. the verdict (:func:`~ensstab_dask.estimates.words.trust.verdict`);
4. which features real ensembles keep, on the model's copies, whatever the verdict
   (:mod:`~ensstab_dask.estimates.stages.features`);
5. the :class:`~ensstab_dask.estimates.records.estimate.Estimate` (:func:`assemble`).
"""

from __future__ import annotations

import xarray as xr

from ensstab_dask.cluster.progress import StageClock
from ensstab_dask.estimates.records.estimate import Estimate
from ensstab_dask.estimates.records.parts import CurvePrediction, SingleSelector, Verdict
from ensstab_dask.estimates.records.spending import Cost, RunsSpent
from ensstab_dask.estimates.stages.features import copy_features
from ensstab_dask.estimates.stages.prediction import ModelOutcome, no_curve, predict_with_model
from ensstab_dask.estimates.stages.real_runs import EnsembleCopies
from ensstab_dask.estimates.stages.single import measure_single_selector
from ensstab_dask.estimates.words.trust import verdict
from ensstab_dask.models import Context
from ensstab_dask.models.simulator_fit import SimulatorFit
from ensstab_dask.real.runs import RealRuns
from ensstab_dask.settings import EstimateSettings

__all__ = ["assemble", "fitted_simulator", "estimate_on_runs"]


def fitted_simulator(fit: SimulatorFit) -> SimulatorFit | None:
    """The simulator's fit as the Estimate holds it; None when it was not fitted (a model
    that is no simulator, or nothing to predict)."""
    return None if fit.p_fit is None else fit


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
    """The :class:`~ensstab_dask.estimates.records.estimate.Estimate` from what the stages found: the
    ``runs`` and ``copies`` it was made on, the ``single`` selector's statistics, the
    model's ``outcome`` (no prediction: no curve), the ``verdict`` and the ``features``;
    ``clock`` is its seconds, which later stages of the same estimate add to."""
    s, curve_model = settings, settings.curve_model
    predictable = outcome.prediction is not None
    prediction = outcome.prediction if outcome.prediction is not None else no_curve(s.m_list)
    curve = prediction.curve
    # The simulator's parameters only where a simulator ran: a model that is none has no such
    # values (its name is the estimate's ``model``).
    fit = outcome.fit
    ran = {"simulator_n_useful": fit.u_pred, "simulator_p": fit.p_pred} if curve_model.simulator else {}
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


def estimate_on_runs(
    runs: RealRuns,
    settings: EstimateSettings,
    copies: EnsembleCopies,
    *,
    client,
    progress: bool = False,
    clock: StageClock | None = None,
    feature_names=None,
) -> Estimate:
    """The estimate on ``runs`` and the model's ``copies``: every stage after the real runs
    (see the module docstring), the features named ``feature_names``. ``progress``: a bar
    over the simulation stages; ``clock``: where the stages' seconds go
    (``Estimate.cost.seconds``), after those of earlier stages."""
    s = settings
    clock = StageClock() if clock is None else clock
    single = measure_single_selector(runs, s, clock=clock)
    # What the model reads: the runs, the copies and the shared stages' statistics (A[f]
    # counts n_runs runs against n_runs uniform ones; a pool of copies' runs may hold fewer).
    ctx = Context(
        settings=s,
        client=client,
        n_runs=single.n_runs,
        m_stability=len(runs.stability),
        useful_pool=runs.useful,
        stability_runs=runs.stability,
        n_useful=single.n_useful,
        real_stability=single.real_stability,
        fit=SimulatorFit(u_pred=single.n_useful),
        copy_ranks=copies.model,
        check_ranks=copies.check,
        clock=clock,
    )
    outcome = predict_with_model(ctx, s, single, progress=progress)
    judged = verdict(
        single,
        s.n_target,
        outcome.fit,
        outcome.check,
        predicted=outcome.prediction is not None,
        verify=s.verify,
        simulator=s.curve_model.simulator,
        prediction=outcome.prediction,
    )
    with clock.stage("features"):  # whatever the verdict
        features = copy_features(s, copies.for_features(), feature_names)
    return assemble(s, runs, copies, single, outcome, judged, clock=clock, features=features)
