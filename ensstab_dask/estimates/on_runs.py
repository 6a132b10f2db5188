"""Every stage of the estimate after its real runs, in order, on given runs: what
:func:`~ensstab_dask.estimate` runs on the runs it made, each round of a precision on the
copies it grew (:mod:`~ensstab_dask.estimates.rounds`) and the curve at each other
n_target on the same copies (:mod:`~ensstab_dask.estimates.surface`).

1. the single selector's statistics (:mod:`~ensstab_dask.estimates.single`);
2. the model's curve, the paper's simulator fitted first for a simulator model, and its
   self-check (:mod:`~ensstab_dask.estimates.prediction`);
3. the verdict (:func:`~ensstab_dask.estimates.trust.verdict`);
4. which features real ensembles keep, on the model's copies, whatever the verdict
   (:mod:`~ensstab_dask.estimates.features`);
5. the :class:`~ensstab_dask.estimates.result.Estimate` (:mod:`~ensstab_dask.estimates.assemble`).
"""

from __future__ import annotations

from ensstab_dask.cluster.progress import StageClock
from ensstab_dask.estimates.assemble import assemble
from ensstab_dask.estimates.features import copy_features
from ensstab_dask.estimates.prediction import predict_with_model
from ensstab_dask.estimates.real_runs import EnsembleCopies
from ensstab_dask.estimates.result import Estimate
from ensstab_dask.estimates.single import findings, measure_single_selector
from ensstab_dask.estimates.trust import verdict
from ensstab_dask.models import Context
from ensstab_dask.real.runs import RealRuns
from ensstab_dask.settings import EstimateSettings

__all__ = ["estimate_on_runs"]


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
        u_pred=single.n_useful,
        copy_ranks=copies.model,
        check_ranks=copies.check,
        clock=clock,
    )
    found = findings(single, s.n_target)
    outcome = predict_with_model(ctx, s, found, progress=progress)
    judged = verdict(
        found,
        outcome.fit,
        outcome.check,
        predicted=outcome.prediction is not None,
        verify=s.verify,
        simulator=s.curve_model.simulator,
        n_useful=single.n_useful,
        prediction=outcome.prediction,
    )
    with clock.stage("features"):  # whatever the verdict
        features = copy_features(s, copies.for_features(), feature_names)
    return assemble(s, runs, copies, single, outcome, judged, clock=clock, features=features)
