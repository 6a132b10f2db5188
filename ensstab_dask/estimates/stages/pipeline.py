"""The whole estimate (docs/method.md section 7, the paper's Algorithm 1): its orchestration.

:func:`estimate` runs the real base selector on a few resamples of the data and
simulates everything else. Its stages are functions of their own modules, so that each
can be tested alone and re-run on resampled inputs (:mod:`ensstab_dask.models.bootstrap`):

1. the real runs (:mod:`~ensstab_dask.estimates.stages.real_runs`: the paper's pools as
   ``calibration_layout`` says, and the model's real ensemble copies), in one submission;
2. to 4. the single selector's statistics (:mod:`~ensstab_dask.estimates.stages.single`):
   t_uniform, A[f] and :func:`round_n_useful`, :func:`real_stability_of` with Nogueira's
   interval;
5. to 7. the model's curve (:mod:`~ensstab_dask.estimates.stages.prediction`): p and the fixed
   point for the paper's simulator, then the curve (:func:`predict_curve` for it) with a
   bootstrap over the real runs that gives every quantity an interval, and its self-check;

then :func:`~ensstab_dask.estimates.words.trust.guard_rails` says when the method has nothing
to say, and :mod:`~ensstab_dask.estimates.stages.assemble` makes the
:class:`~ensstab_dask.estimates.records.estimate.Estimate` of the records the stages returned.
Stages 2 onwards on given runs are :func:`~ensstab_dask.estimates.stages.assemble.estimate_on_runs`
(:func:`estimate_from_runs` here); with a ``precision`` they run again on the copies each
round grows (:mod:`~ensstab_dask.estimates.stages.rounds`), and with several ``n_target`` at each
on the same copies (:mod:`~ensstab_dask.estimates.stages.surface`).

The naive check (:mod:`ensstab_dask.real.naive`), leave-one-out accuracy
(:mod:`ensstab_dask.real.accuracy`) and the validation harness (:mod:`ensstab_dask.estimates.validation.harness`)
live in their own modules.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import warnings as _warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from ensstab_dask.checks import CALIBRATION_LAYOUTS
from ensstab_dask.cluster import ClientLike, connect
from ensstab_dask.cluster.clients import running_client
from ensstab_dask.cluster.progress import StageClock, note_dashboard
from ensstab_dask.estimates.records.estimate import Estimate
from ensstab_dask.estimates.stages.assemble import estimate_on_runs
from ensstab_dask.estimates.stages.features import check_feature_memory, feature_names_of
from ensstab_dask.estimates.stages.held_out import copy_accuracy
from ensstab_dask.estimates.stages.real_runs import (
    EnsembleCopies,
    RealRunner,
    check_estimate_cost,
    every_run_cached,
    make_real_runs,
)
from ensstab_dask.estimates.stages.rounds import spend_real_runs
from ensstab_dask.estimates.stages.single import real_stability_of, round_n_useful
from ensstab_dask.estimates.stages.surface import check_surface, n_target_list, surface_at
from ensstab_dask.exceptions import UnreliableEstimateWarning
from ensstab_dask.models.fitting import fixed_point_power
from ensstab_dask.models.onda import predict_curve
from ensstab_dask.real.accuracy import make_predictor
from ensstab_dask.real.datasets import CheckedData
from ensstab_dask.real.run_cache import RunCache
from ensstab_dask.real.runs import RealRuns, assemble_runs, pool_sizes, real_subsets, runs_from_copies
from ensstab_dask.real.selectors import make_scorer, selector_for, task_for
from ensstab_dask.real.targets import task_of
from ensstab_dask.settings import EstimateSettings, check_given, takes_settings
from ensstab_dask.simulator.estimators import threshold_draws, useful_draws

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's own from Python 3.11

    from ensstab_dask.settings.options import EstimateOptions

# The stages' functions are named here too, where the method's steps are listed.
__all__ = [
    "estimate",
    "estimate_checked",
    "estimate_from_runs",
    "Estimate",
    "CALIBRATION_LAYOUTS",
    "real_subsets",
    "threshold_draws",
    "useful_draws",
    "round_n_useful",
    "real_stability_of",
    "fixed_point_power",
    "predict_curve",
    "runs_from_copies",
    "assemble_runs",
    "pool_sizes",
]

cache_logger = logging.getLogger("ensstab_dask.cache")


@takes_settings
def estimate(
    X,
    y,
    n_target: int | Sequence[int],
    *,
    client: ClientLike = None,
    progress: bool = True,
    allow_large: bool = False,
    feature_names=None,
    cache_dir: str | os.PathLike | None = None,
    task: str = "auto",
    **given: Unpack[EstimateOptions],
) -> Estimate:
    """Predict the stability of ensembles of a base selector on ``(X, y)`` (Algorithm 1).

    The curve is made by ``model`` (:mod:`ensstab_dask.models`). The default,
    ``'anchored'``, measures 10 real ensemble copies of 20 weak selectors in the naive
    check's layout (200 real runs, whatever ``m_ensemble``) and extrapolates beyond 20 by
    the law ``a - b sqrt(c + 1/m)`` with a model band (docs/anchored_model.md);
    ``layout='adaptive'`` starts with 20 copies of 10 and grows every copy to 20 members
    (400 real runs, the first 200 reused) where that first round says the curve still
    climbs (``Estimate.spending`` says which happened).
    ``'onda'`` is the paper's simulator, exactly as published, plus 40 real runs for its
    self-check. Every model is self-checked against real ensembles it did not use
    (``Estimate.self_check``): a failed check makes the estimate unreliable and widens its
    interval by the error seen. docs/validation.md compares the models; docs/models.md
    says why the default is ``'anchored'``. Every real run is priced before any work.

    Parameters
    ----------
    X, y : the data (n_samples, n_feature) and class labels or a regression target
        (``task``)
    n_target : int or sequence of int
        Features each selector keeps. Several (``[20, 10, 40]``): the estimate is the first's,
        and ``Estimate.surface`` the curve at each from the same real runs, each row bit for bit
        that n_target's estimate (:mod:`~ensstab_dask.estimates.stages.surface`; ``'anchored'`` only).
    **settings
    client : where the real runs and the simulations run (see :mod:`ensstab_dask.cluster`).
    progress : bool
        Progress bars on stderr, one per stage (real runs, simulations), and the Dask
        dashboard link; drawn on a terminal or in a notebook, never into a file or a
        pipe (see :mod:`ensstab_dask.cluster.progress`). False: nothing.
    allow_large : bool
        Run even above 10,000 real runs or 10^8 simulated selectors; without it such an
        estimate is refused before any work, saying what it would cost
        (:mod:`ensstab_dask.budget.cost`).
    feature_names : sequence of str, optional
        One name per feature, for ``Estimate.features`` (:mod:`~ensstab_dask.estimates.stages.features`);
        default: the columns of a pandas ``X``, else ``x0, x1, ...``.
    cache_dir : path, optional
        An existing folder where the real runs are cached (:mod:`ensstab_dask.real.run_cache`):
        an estimate on the same data, selector and seed reuses the runs an earlier one made
        (whatever its ``n_target``, ``m_ensemble`` or ``precision``) and runs only those it
        lacks; a run read back is the run made, bit for bit. How many were reused is said
        on the ``ensstab_dask.cache`` logger (INFO). None: nothing cached. A plain callable
        selector is never cached.
    task : {'auto', 'classification', 'regression'}
        What ``y`` is (:mod:`ensstab_dask.real.targets`): "auto" reads it from the values (a
        float ``y`` with fractions, or any ``y`` with a regressor as ``selector``, is a
        regression target); "regression" also takes whole numbers (counts, scores). A
        regression target's resamples are stratified by quantile bins of ``y``.

    Returns
    -------
    Estimate

    Examples
    --------
    A tiny run (5-tree forests, a few runs, no bootstrap), to show the calls; a real
    estimate uses the defaults:

    >>> import ensstab_dask as es
    >>> from ensstab_dask.real.datasets import make_microarray
    >>> from ensstab_dask.real.selectors import default_selector
    >>> data = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> est = es.estimate(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3), m_stability=5,
    ...                   n_runs=10, repeats=2, n_boot=0, client="synchronous", progress=False)
    >>> est.real_runs  # the default model: 10 real ensemble copies of 20 weak selectors, whatever m_ensemble
    200
    >>> est.self_check.sizes  # checked against m = 20, measured on those copies
    (20,)
    >>> paper = es.estimate(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3), m_stability=5,
    ...                     n_runs=10, repeats=2, n_boot=0, client="synchronous", progress=False, model="onda")
    >>> paper.real_runs  # n_runs=10 behind n_useful, m_stability=5 behind the real stability, 40 for its self-check
    55
    >>> sorted(est.predicted())  # the predicted stability for each m_ensemble
    [1, 3]
    >>> est.reliable == (not est.warnings)
    True
    """
    check_given(given, "estimate")
    data = CheckedData.of(X, y, feature_names=feature_names, task=task_for(task, given.get("selector")))
    est = estimate_checked(
        data, n_target, given, client=client, progress=progress, cache_dir=cache_dir, allow_large=allow_large
    )
    for w in est.warnings:
        _warnings.warn(w, UnreliableEstimateWarning, stacklevel=2)
    return est


def estimate_checked(
    data: CheckedData,
    n_target: int | Sequence[int],
    given: Mapping[str, Any],
    *,
    client: ClientLike,
    progress: bool,
    cache_dir: str | os.PathLike | None,
    allow_large: bool,
) -> Estimate:
    """:func:`estimate` of data already checked for the selector's task (by
    :meth:`CheckedData.of <ensstab_dask.real.datasets.CheckedData.of>`), with the settings
    ``given`` as :func:`~ensstab_dask.settings.check_given` passed them; its warnings are
    its caller's to give."""
    given = {**given, "selector": selector_for(given.get("selector"), data.y)}
    n_targets = n_target_list(n_target, n_feature=data.n_feature)
    names = feature_names_of(data.names, data.n_feature)
    # n_runs=None as given becomes its derived default inside: checked there, typed int after.
    settings = EstimateSettings(n_feature=data.n_feature, n_target=n_targets[0], **cast("dict[str, Any]", given))
    refuse_before_the_work(data, settings, n_targets, allow_large=allow_large)
    scorer = make_scorer(settings.selector)
    cache = None if cache_dir is None else RunCache.open(cache_dir, data.X, data.y, scorer, digest=data.digest)

    if client is None and _all_cached(cache, settings, data.n_feature):
        client = "synchronous"  # nothing to run that a cluster would speed up: none is started
    with connect(client) as c:
        note_dashboard(c, progress)
        runner = RealRunner(data.X, data.y, scorer, "synchronous" if c is None else c, progress, cache)
        est = estimate_with(runner, settings, n_targets[1:], names)
    if cache is not None:
        cache_logger.info("reused %d real runs from %s (ran %d)", cache.reused, cache_dir, cache.fresh)
    return est


def refuse_before_the_work(
    data: CheckedData, settings: EstimateSettings, n_targets: list[int], *, allow_large: bool
) -> None:
    """Everything an estimate refuses before any run: its price, a surface its model cannot
    make, an n_target whose own checks fail (a PFER it cannot reach), a feature table too large."""
    check_estimate_cost(data, settings, allow_large=allow_large)
    if settings.predictor is not None:  # one that does not serve y's task, refused before any run
        make_predictor(settings.predictor, task_of(data.y))
    check_surface(settings.curve_model, n_targets)
    for k in n_targets[1:]:
        dataclasses.replace(settings, n_target=k)
    check_feature_memory(settings)


def _all_cached(cache: RunCache | None, settings: EstimateSettings, n_feature: int) -> bool:
    """Whether the cache holds every real run the estimate may ask for, and nothing after the
    runs is simulated: then the estimate needs no cluster (a precision may ask for more runs,
    a simulator model simulates on the cluster; a cluster already running is used as given).
    An adaptive layout may grow its copies: the cache must hold them grown."""
    if cache is None or settings.precision is not None or settings.curve_model.simulator:
        return False
    if running_client() is not None:
        return False
    return every_run_cached(cache, settings, n_feature)


def estimate_with(runner: RealRunner, settings: EstimateSettings, others: list[int], names) -> Estimate:
    """The real runs on ``runner``, every stage after them, the rounds of a precision, and
    the curve at the ``others`` n_target on the copies the rounds reached."""
    clock = StageClock()
    handed = bool(runner.made)  # runs made for it elsewhere, handed over (and popped) by make_real_runs
    with clock.stage("real_runs"):
        runs, copies = make_real_runs(runner, settings)
    if handed and copies.spent is not None:
        # Runs made for it in one submission with other estimates' (a group's): its stage is
        # its share of that submission, not the moment of handing them over.
        clock["real_runs"] += copies.spent.made_seconds
    est = estimate_on_runs(
        runs, settings, copies, client=runner.client, progress=runner.progress, clock=clock, feature_names=names
    )
    if settings.largest_design != settings.copy_design or settings.precision is not None:
        est, copies = spend_real_runs(est, runner, settings, copies, clock=clock, feature_names=names)
    if settings.predictor is not None:
        with clock.stage("accuracy"):
            est = dataclasses.replace(est, accuracy=copy_accuracy(runner, settings, copies))
    surface = surface_at(est, settings, others, copies, client=runner.client, clock=clock)
    return est if surface is None else dataclasses.replace(est, surface=surface)


def estimate_from_runs(
    runs: RealRuns,
    settings: EstimateSettings,
    *,
    client,
    copy_ranks=None,
    check_ranks=None,
    progress: bool = False,
    clock: StageClock | None = None,
    feature_names=None,
) -> Estimate:
    """Every stage after the real runs, on given runs: the single-selector statistics, the
    paper's simulator fit (for a simulator model), the model's curve and its self-check,
    and the features' selection frequencies on the copies (named ``feature_names``)
    (:func:`~ensstab_dask.estimates.stages.assemble.estimate_on_runs`).

    ``copy_ranks``: the model's real ensemble copies, (copies, weak selectors per copy,
    n_feature); ``check_ranks``: copies made for the self-check alone (see
    :mod:`ensstab_dask.models`). :func:`estimate` is the real runs plus this; the
    validation benchmark calls it on shared pools to compare layouts without refitting
    the selector. ``progress``: a bar over the simulation stages. ``clock``: where the
    stages' seconds go (``Estimate.cost.seconds``), after those of earlier stages.
    """
    copies = EnsembleCopies(copy_ranks, check_ranks)
    return estimate_on_runs(
        runs, settings, copies, client=client, progress=progress, clock=clock, feature_names=feature_names
    )
