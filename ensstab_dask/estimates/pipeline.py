"""The whole estimate (docs/method.md section 7, the paper's Algorithm 1), stage by stage.

:func:`estimate` runs the real base selector on a few resamples of the data and
simulates everything else. Its stages are functions of their own, so that each can be
tested alone and re-run on resampled inputs (:mod:`ensstab_dask.models.bootstrap`):

1. :func:`real_subsets` (one pool) or :func:`~ensstab_dask.real.runs.real_run_plan`
   (every pool in one submission): the real runs, as their top-``n_target`` subsets;
2. :func:`threshold_draws`: t_uniform, ``repeats`` draws of ``n_runs`` uniform selectors;
3. :func:`useful_draws`: A[f], one draw per threshold, each from ``n_runs`` runs of the
   pool (without replacement when the pool is larger), and :func:`round_n_useful`;
4. :func:`real_stability_of`: the single real selector's stability, with Nogueira's
   interval;
5. p from that stability (:func:`~ensstab_dask.simulator.estimators.estimate_p`, common random
   numbers, ``repeats x m_stability`` simulated copies so that its noise is small);
6. the fixed point u = A[f_{u,p}] and :func:`fixed_point_power`, whether the check could
   have failed at all;
7. :func:`predict_curve`: the simulated curve for each ``m_ensemble``;

then a bootstrap over the real runs gives every quantity an interval, and
:func:`guard_rails` says when the method has nothing to say.

Which runs calibrate the simulator (``calibration_layout``, docs/method.md section 8):

* ``"paper"``: every run on ``resample`` (random halves): the paper's method, one pool
  of ``max(m_stability, n_runs)`` runs;
* ``"ensemble"``: p from ``m_stability`` runs in the ensemble's own weak-selector layout
  (``member_resample``, default a bootstrap sample of a random half, as the naive check's
  bagging ensembles), n_useful from ``n_runs`` runs on ``resample``: two pools. The
  default (docs/validation.md compares the layouts);
* ``"ensemble-all"``: n_useful and p both from one pool in the weak-selector layout.

The naive check (:mod:`ensstab_dask.real.naive`), leave-one-out accuracy
(:mod:`ensstab_dask.real.accuracy`) and the validation harness (:mod:`ensstab_dask.estimates.validation`)
live in their own modules.
"""

from __future__ import annotations

import functools
import warnings as _warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import xarray as xr

from ensstab_dask.budget.cost import check_cost, estimate_cost
from ensstab_dask.checks import CALIBRATION_LAYOUTS, DEFAULT_CALIBRATION_LAYOUT, DEFAULT_M_ENSEMBLE, DEFAULT_MODEL
from ensstab_dask.cluster import ClientLike, connect
from ensstab_dask.cluster.progress import StageBar, StageClock, note_dashboard
from ensstab_dask.estimates.features import check_feature_memory, copy_features, feature_names_of
from ensstab_dask.estimates.result import Estimate
from ensstab_dask.estimates.rounds import spend_real_runs
from ensstab_dask.estimates.surface import add_surface, check_surface, n_target_list
from ensstab_dask.estimates.trust import Findings, Smaller, guard_rails, notes
from ensstab_dask.exceptions import UnreliableEstimateWarning
from ensstab_dask.indices import NogueiraStability, clip_to_index, index_range, nogueira_stability, stability_of_subsets
from ensstab_dask.models import Context, Prediction, SelfCheck
from ensstab_dask.models.fitting import SimulatorFit, fit_simulator, fixed_point_power
from ensstab_dask.models.onda import predict_curve
from ensstab_dask.real.datasets import check_data
from ensstab_dask.real.runs import (
    Copies,
    Pool,
    RealRuns,
    assemble_runs,
    pool_sizes,
    real_run_plan,
    real_subsets,
    runs_from_copies,
)
from ensstab_dask.real.selectors import make_scorer, real_run
from ensstab_dask.seeding import SeedLike, Stage, Stream, as_seed_sequence, derive, make_rng
from ensstab_dask.settings import EstimateSettings
from ensstab_dask.simulator.estimators import (
    selection_counts,
    smaller_n_target,
    threshold_draws,
    uniform_subsets,
    useful_draws,
)

__all__ = [
    "estimate",
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
]


# -- stages --------------------------------------------------------------------------


def round_n_useful(draws, n_target: int, n_feature: int) -> int:
    """The n_useful the simulator runs at: the mean of the draws, rounded, within [n_target, n_feature].

    The simulator is defined only there. A clamped value is not what the real runs
    measured: pass ``n_useful=(mean of the draws, this value)`` to :func:`caution_reasons`,
    which says so.
    """
    return int(min(max(round(float(np.mean(draws))), n_target), n_feature))


def real_stability_of(subsets: np.ndarray, n_feature: int, index: str) -> tuple[float, NogueiraStability]:
    """Stage 4: the stability of the single real selector, and Nogueira's 95 % interval."""
    return float(stability_of_subsets(subsets, n_feature, index)), nogueira_stability(subsets, n_feature)


def estimate(
    X,
    y,
    n_target: int | Sequence[int],
    *,
    selector=None,
    m_ensemble=DEFAULT_M_ENSEMBLE,
    m_stability: int = 50,
    n_runs: int | None = None,
    repeats: int = 20,
    p_method: str = "bisect",
    verify: bool = True,
    calibrate: bool = False,
    calibration_layout: str = DEFAULT_CALIBRATION_LAYOUT,
    member_resample="bagging",
    n_boot: int = 200,
    confidence: float = 0.95,
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    resample="half",
    seed: SeedLike = 0,
    client: ClientLike = None,
    model: str = DEFAULT_MODEL,
    progress: bool = True,
    allow_large: bool = False,
    precision: float | None = None,
    max_real_runs: int | None = None,
    feature_names=None,
) -> Estimate:
    """Predict the stability of ensembles of a base selector on ``(X, y)`` (Algorithm 1).

    Parameters
    ----------
    X, y : the data (n_samples, n_feature) and labels
    n_target : int or sequence of int
        Features each selector keeps. Several (``[20, 10, 40]``): the estimate is the first's,
        and ``Estimate.surface`` the curve at each from the same real runs, each row bit for bit
        that n_target's estimate (:mod:`~ensstab_dask.estimates.surface`; ``'anchored'`` only).
    selector : None, scikit-learn estimator or callable
        See :mod:`ensstab_dask.real.selectors`; None is the default random forest.
    m_ensemble : sequence of int
        Ensemble sizes to predict.
    m_stability : int
        Copies behind each stability value (real single selector and simulations).
    n_runs : int, optional
        Runs behind t_uniform and n_useful; default ``max(m_ensemble)``: the method ties
        it to the ensemble size.
    repeats : int
        Draws of t_uniform, n_useful, A[f_{u,p}] and of each predicted stability.
    p_method : {'bisect', 'grid'}
    verify : bool
        Check the fixed point u = A[f_{u,p}], and whether that check has power.
    calibrate : bool
        Also intersect the two surfaces over a (u, p) grid (docs/method.md section 6) and predict
        with the calibrated (u, p) when the intersection is not empty. The interval then
        is the bootstrap spread of the A[f]/p path placed around the calibrated point
        (the intersection itself is not re-run per replicate).
    calibration_layout : {'paper', 'ensemble', 'ensemble-all'}
        Which real runs calibrate the simulator; see the module docstring.
    member_resample : str or float
        How the ensemble's weak selectors see the data, for ``calibration_layout``
        other than ``'paper'``: ``'bagging'`` (default, a bootstrap sample of a random
        half, the naive check's layout), or any ``resample``.
    n_boot : int
        Bootstrap replicates of the real runs behind every interval; 0 turns the
        bootstrap off (then only the simulation's spread is reported).
    confidence : float
        Level of the percentile intervals, in (0, 1).
    aggregate, index : str
        Ensemble algorithm and stability index.
    resample : str or float
        Resample of the runs behind n_useful (and, for ``'paper'``, p): ``'half'``
        (default), ``'bootstrap'``, ``'bagging'`` or a fraction.
    seed : int
    client : where the real runs and the simulations run (see :mod:`ensstab_dask.cluster`).
    model : {'anchored', 'onda', 'two-level', 'random-effects'}
        What makes the curve (:mod:`ensstab_dask.models`). ``'anchored'``: measured on
        10 real ensemble copies of 20 weak selectors in the naive check's layout (200
        real runs, whatever ``m_ensemble``), extrapolated beyond 20 by the law
        ``a - b sqrt(c + 1/m)`` with a model band (docs/anchored_model.md); it needs no
        other real runs and ``index`` must be a pairwise one. ``'onda'``: the paper's
        simulator, exactly as published, plus 40 real runs (10 copies of 4) for its
        self-check. ``'two-level'``: each ensemble
        copy has its own preferred set of ``h`` features (docs/two_level_model.md),
        ``h`` fitted to 20 more real runs (4 copies of 5). ``'random-effects'``: a model
        of the real weak selectors' ranks (docs/random_effects_model.md), fitted to 100
        more real runs (10 copies of 10); pairwise indices only. Every model is
        self-checked against real ensembles it did not use (``self_check``): a failed
        check makes the estimate unreliable and widens its interval by the error seen.
        docs/validation.md compares the four; docs/models.md says why the default is
        ``'anchored'``.
    progress : bool
        Progress bars on stderr, one per stage (real runs, simulations), and the Dask
        dashboard link; drawn on a terminal or in a notebook, never into a file or a
        pipe (see :mod:`ensstab_dask.cluster.progress`). False: nothing.
    allow_large : bool
        Run even above 10,000 real runs or 10^8 simulated selectors; without it such an
        estimate is refused before any work, saying what it would cost
        (:mod:`ensstab_dask.budget.cost`).
    precision : float, optional
        The half-width of the interval wanted at the largest ``m_ensemble``: the estimate
        spends real runs in rounds (more copies, or more members per copy, whichever
        part of the interval is larger) until its interval is that narrow or
        ``max_real_runs`` stops it, and records what it spent and why
        (:attr:`Estimate.spending`; :mod:`ensstab_dask.estimates.rounds`). Needs a model
        that measures real ensemble copies (the default).
    max_real_runs : int, optional
        The cap on real runs for ``precision`` (default 1,000), at least the first
        round's.
    feature_names : sequence of str, optional
        One name per feature, for ``Estimate.features`` (:mod:`~ensstab_dask.estimates.features`);
        default: the columns of a pandas ``X``, else ``x0, x1, ...``.

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
    names = feature_names if feature_names is not None else getattr(X, "columns", None)
    X, y = check_data(X, y)
    n_targets = n_target_list(n_target, n_feature=X.shape[1])
    names = feature_names_of(names, X.shape[1])
    settings = EstimateSettings(
        n_feature=X.shape[1],
        n_target=n_targets[0],
        m_ensemble=m_ensemble,
        m_stability=m_stability,
        n_runs=n_runs,  # type: ignore[arg-type]  # None: max(m_ensemble), resolved by the settings
        repeats=repeats,
        p_method=p_method,
        verify=verify,
        calibrate=calibrate,
        calibration_layout=calibration_layout,
        member_resample=member_resample,
        n_boot=n_boot,
        confidence=confidence,
        aggregate=aggregate,
        index=index,
        resample=resample,
        seed=seed,
        selector=selector,
        model=model,
        precision=precision,
        max_real_runs=max_real_runs,
    )
    _check_cost(X, y, settings, allow_large=allow_large)
    check_surface(settings.curve_model, n_targets)
    check_feature_memory(settings)
    scorer = make_scorer(selector)

    with connect(client) as c:
        note_dashboard(c, progress)
        target = "synchronous" if c is None else c
        clock = StageClock()
        with clock.stage("real_runs"):
            runs, copy_ranks, check_ranks = _real_runs(X, y, settings, scorer=scorer, client=target, progress=progress)
        again = functools.partial(estimate_from_runs, feature_names=names)
        est = again(runs, settings, client=target, copy_ranks=copy_ranks, check_ranks=check_ranks, progress=progress,
                    clock=clock)  # fmt: skip
        if settings.precision is not None:
            est, copy_ranks = spend_real_runs(est, (X, y, scorer), settings, copies=(copy_ranks, check_ranks),
                                              client=target, progress=progress, clock=clock, again=again)  # fmt: skip
        add_surface(est, settings, n_targets[1:], copies=(copy_ranks, check_ranks), client=target, clock=clock,
                    again=estimate_from_runs)  # fmt: skip
    for w in est.warnings:
        _warnings.warn(w, UnreliableEstimateWarning, stacklevel=2)
    return est


def _check_cost(X, y, settings: EstimateSettings, *, allow_large: bool) -> None:
    """The estimate's real runs and simulated selectors against the cost thresholds, before
    any work (:func:`~ensstab_dask.budget.cost.check_cost`)."""
    s, curve_model = settings, settings.curve_model
    paper = (
        sum(pool_sizes(s.calibration_layout, n_runs=s.n_runs, m_stability=s.m_stability))
        if curve_model.paper_runs
        else 0
    )
    real, simulated = estimate_cost(
        paper_runs=paper,
        designs=(curve_model.copy_design(), curve_model.check_design()),
        simulator=curve_model.simulator,
        m_list=s.m_list,
        m_stability=s.m_stability,
        n_runs=s.n_runs,
        repeats=s.repeats,
    )
    if s.max_real_runs is not None:  # what precision's rounds may spend
        real = max(real, s.max_real_runs)
    check_cost("the estimate", n_feature=s.n_feature, real_runs=real, simulated=simulated, allow_large=allow_large,
               time_one_run=lambda: real_run(X, y, s.n_target, selector=s.selector, resample=s.resample))  # fmt: skip


def _real_runs(X, y, settings: EstimateSettings, *, scorer, client, progress: bool):
    """Stage 1, every real run a model asks for: the paper's pools (as ``calibration_layout``
    says), its real ensemble copies, and copies for its self-check.

    Returns ``(runs, copy_ranks, check_ranks)``. A model without runs of the paper's
    gets its single-selector statistics from its copies (:func:`runs_from_copies`).
    """
    s, curve_model, seed = settings, settings.curve_model, as_seed_sequence(settings.seed)
    # One submission for every run: item by item, the workers idle at each item's tail.
    plan: dict[str, Pool | Copies] = {}
    if curve_model.paper_runs:
        half_n, member_n = pool_sizes(s.calibration_layout, n_runs=s.n_runs, m_stability=s.m_stability)
        pools = (("half", half_n, s.resample, Stage.REAL), ("member", member_n, s.member_resample, Stage.MEMBER_RUNS))
        for name, size, how, stage in pools:
            if size:
                plan[name] = Pool(size, how, derive(seed, Stream.ESTIMATE, stage))
    designs = (
        ("copies", curve_model.copy_design(), Stage.COPIES),
        ("check", curve_model.check_design(), Stage.CHECK_COPIES),
    )
    for name, design, stage in designs:
        if design is not None:
            plan[name] = Copies(*design, derive(seed, Stream.ESTIMATE, stage))
    made = dict(zip(plan, real_run_plan(X, y, list(plan.values()), selector=scorer, client=client, progress=progress)))
    copy_ranks, check_ranks = made.pop("copies", None), made.pop("check", None)
    runs = None
    if made:
        runs = assemble_runs(s.calibration_layout, n_runs=s.n_runs, m_stability=s.m_stability, **made).top(s.n_target)
    if runs is None:
        assert copy_ranks is not None  # a model without the paper's runs fits copies
        runs = runs_from_copies(copy_ranks, s.n_target)
    return runs, copy_ranks, check_ranks


@dataclass(frozen=True)
class _Shared:
    """What the stages every model shares found: the runs, A[f]'s draws, and what the guard
    rails read (t_uniform's draws and the real runs' Nogueira stability among it)."""

    runs: RealRuns
    u_draws: np.ndarray
    found: Findings


def estimate_from_runs(
    runs: RealRuns,
    settings: EstimateSettings,
    *,
    client,
    copy_ranks: np.ndarray | None = None,
    check_ranks: np.ndarray | None = None,
    progress: bool = False,
    clock: StageClock | None = None,
    feature_names=None,
) -> Estimate:
    """Every stage after the real runs, on given runs: the single-selector statistics, the
    paper's simulator fit (for a simulator model), the model's curve and its self-check,
    and the features' selection frequencies on the copies (named ``feature_names``).

    ``copy_ranks``: the model's real ensemble copies, (copies, weak selectors per copy,
    n_feature); ``check_ranks``: copies made for the self-check alone (see
    :mod:`ensstab_dask.models`). :func:`estimate` is the real runs plus this; the
    validation benchmark calls it on shared pools to compare layouts without refitting
    the selector. ``progress``: a bar over the simulation stages. ``clock``: where the
    stages' seconds go (:attr:`Estimate.seconds`), after those of earlier stages.
    """
    s, curve_model = settings, settings.curve_model
    clock = StageClock() if clock is None else clock
    # A[f] counts n_runs runs against n_runs uniform ones; a pool of copies' runs may hold fewer.
    ctx = Context(
        settings=s,
        client=client,
        n_runs=min(s.n_runs, len(runs.useful)),
        m_stability=len(runs.stability),
        useful_pool=runs.useful,
        stability_runs=runs.stability,
        copy_ranks=copy_ranks,
        check_ranks=check_ranks,
        clock=clock,
    )
    shared = _shared_stages(ctx, runs)
    found = shared.found
    # Before p is fitted: is there anything to say?
    predictable = guard_rails(found, simulator=curve_model.simulator)[0]
    # One bar over the simulation stages about to run, in their order below (none when no
    # curve can be predicted): they are few and unequal, so a count of tasks would mislead.
    stages = (
        (["p"] + ["fixed point"] * int(s.verify) + ["calibration"] * int(s.calibrate)) * curve_model.simulator
        + curve_model.stages(s.n_boot)
        + ["self-check"]
    )
    sims = StageBar(stages if predictable else [], "simulations", enabled=progress)
    fit = SimulatorFit()
    prediction = check = None
    if predictable:
        if curve_model.simulator:
            fit = fit_simulator(ctx, n_useful_mean=float(shared.u_draws.mean()), bar=sims)
        prediction = curve_model.predict(ctx, sims)
        with clock.stage("self_check"):
            check = curve_model.self_check(ctx, prediction)
            if check is not None:  # what it predicted as the curve reports it: within the index's range
                check = replace(check, predicted=clip_to_index(check.predicted, s.index))
            if check is not None and not check.passed:
                curve_model.widen(prediction, check)
        sims.done()
        _clip_to_ranges(prediction, ctx)
    sims.close()
    _, blocking, cautions = guard_rails(
        found,
        fit,
        verified=s.verify or not predictable,
        n_useful=ctx.n_useful,
        simulator=curve_model.simulator,
        self_check=check,
    )
    said = notes(
        n_target=s.n_target,
        n_useful_mean=found.n_useful_mean,
        real_nogueira=found.real_nogueira,
        simulator=curve_model.simulator,
        saturated=int((found.t_draws >= ctx.n_runs).sum()),
        smaller=found.smaller,
    )
    est = _assemble(ctx, shared, prediction, check, fit, settings=settings, issues=blocking + cautions, notes=said)
    with clock.stage("features"):  # whatever the verdict
        est.features = copy_features(s, copy_ranks if copy_ranks is not None else check_ranks, feature_names)
    return est


def _shared_stages(ctx: Context, runs: RealRuns) -> _Shared:
    """Stages 2 to 4: t_uniform, A[f] (sets ``ctx.n_useful``) and the real stability (sets
    ``ctx.real_stability``), and the smaller n_target these runs support."""
    s = ctx.settings
    n_feature, n_target, n_runs = s.n_feature, s.n_target, ctx.n_runs
    with ctx.clock.stage("n_useful_and_stability"):
        t_draws = threshold_draws(n_feature, n_target, n_runs, repeats=s.repeats, seed=ctx.stream(Stage.T_UNIFORM))
        u_draws = useful_draws(runs.useful, n_feature, t_draws, n_runs=n_runs, rng=make_rng(ctx.stream(Stage.POOL)))
        ctx.n_useful = ctx.u_pred = round_n_useful(u_draws, n_target, n_feature)
        ctx.real_stability, real_nog = real_stability_of(runs.stability, n_feature, s.index)
    u_mean = float(u_draws.mean())
    smaller = _smaller_n_target(ctx, runs, u_mean, real_nog, t_draws)
    return _Shared(runs, u_draws, Findings(n_target, n_runs, u_mean, t_draws, real_nog, smaller))


def _smaller_n_target(ctx: Context, runs: RealRuns, n_useful_mean: float, real_nog: NogueiraStability,
                      t_draws: np.ndarray) -> Smaller:  # fmt: skip
    """The n_target these runs support, looked for only where the guard rails will advise one:
    a selector distinguishable from chance that counts no more useful features than it keeps,
    with no threshold draw at n_runs (there the rails say "too few runs" instead)."""
    s = ctx.settings
    saturated = bool((t_draws >= ctx.n_runs).any())
    if n_useful_mean > s.n_target or real_nog.lower <= 0.0 or saturated or runs.useful_ranks is None:
        return None
    found = smaller_n_target(runs.useful_ranks, s.n_feature, s.n_target, n_runs=ctx.n_runs, repeats=s.repeats,
                             t_seed=ctx.stream(Stage.T_UNIFORM), pool_seed=ctx.stream(Stage.POOL))  # fmt: skip
    return False if found is None else found


def _clip_to_ranges(prediction: Prediction, ctx: Context) -> None:
    """An extrapolation or a bootstrap can step outside what a quantity can take; a
    reported value never does: the curve's points and interval ends are clipped to the
    index's range (whatever the model), the parameters' intervals to theirs."""
    curve, s = prediction.curve, ctx.settings
    for end in ("stability", "stability_lower", "stability_upper"):
        if end in curve:
            curve[end].values = clip_to_index(curve[end].values, s.index)
    ranges = {"real_stability": index_range(s.index), "p": (0.0, 1.0), "t_uniform": (0.0, ctx.n_runs),
              "n_useful": (0.0, s.n_feature), "h": (s.n_target, s.n_feature)}  # fmt: skip
    for key, (lo, hi) in ranges.items():
        if key in prediction.intervals:
            a, b = np.clip(prediction.intervals[key], lo, hi)
            prediction.intervals[key] = (float(a), float(b))


def _no_curve(m_list: list[int]) -> Prediction:
    """The prediction of an estimate with nothing to say: NaN at every size."""
    nan = np.full(len(m_list), np.nan)
    curve = xr.Dataset(
        {"stability": ("m_ensemble", nan), "stability_std": ("m_ensemble", nan.copy())},
        coords={"m_ensemble": m_list},
    )
    return Prediction(curve=curve)


def _assemble(
    ctx: Context,
    shared: _Shared,
    prediction: Prediction | None,
    check: SelfCheck | None,
    fit: SimulatorFit,
    *,
    settings: EstimateSettings,
    issues: list[str],
    notes: list[str],
) -> Estimate:
    """The :class:`Estimate` from what the stages found (no ``prediction``: no curve)."""
    s, curve_model, predictable = settings, settings.curve_model, prediction is not None
    n_feature, n_target, m_list = s.n_feature, s.n_target, s.m_list
    runs, u_draws, t_draws = shared.runs, shared.u_draws, shared.found.t_draws
    if prediction is None:
        prediction = _no_curve(m_list)
    curve = prediction.curve
    curve.attrs = {
        "title": "ensstab_dask predicted stability of ensembles",
        "kind": "estimate",  # what plotting and the report dispatch on (see plotting.result_kind)
        "simulator_n_useful": ctx.u_pred,  # calibrated when calibrate=True found a consistent cell
        "simulator_p": ctx.p_pred,
        "simulator_model": curve_model.name,
        **{k: v for k, v in prediction.attrs.items() if k not in ("simulator_n_useful", "simulator_p")},
    }
    copies = [r for r in (ctx.copy_ranks, ctx.check_ranks) if r is not None]
    n_real = (runs.count if curve_model.paper_runs else 0) + sum(r.shape[0] * r.shape[1] for r in copies)
    simulated = fit.simulated + prediction.simulated
    holds: bool | None = None
    has_power: bool | None = None
    if fit.fixed_point is not None:
        holds, has_power = fit.fixed_point.holds, fit.power is not None and not fit.power.holds
    return Estimate(
        n_feature=n_feature,
        n_target=n_target,
        settings=dict(s.to_dict(), n_runs=ctx.n_runs, stability_runs=len(runs.stability)),
        t_uniform=float(t_draws.mean()),
        t_uniform_std=float(t_draws.std(ddof=1)),
        n_useful=ctx.n_useful,
        n_useful_mean=float(u_draws.mean()),
        n_useful_std=float(u_draws.std(ddof=1)),
        n_useful_draws=u_draws,
        real_stability=float(ctx.real_stability),
        real_nogueira=shared.found.real_nogueira,
        p=ctx.p_hat,
        p_fit=fit.p_fit,
        n_useful_v=None if fit.fixed_point is None else fit.fixed_point.mean,
        n_useful_v_std=None if fit.fixed_point is None else fit.fixed_point.std,
        fixed_point_holds=holds,
        calibrated=fit.calibrated,
        curve=curve,
        real_runs=n_real,
        simulated_runs=int(simulated),
        seconds=ctx.clock,
        selection_counts=selection_counts(runs.useful[: ctx.n_runs], n_feature),
        t_uniform_draws=t_draws,
        # The first draw behind t_uniform, kept for the picture of counts; its max is t_draws[0].
        uniform_counts=selection_counts(
            uniform_subsets(n_feature, n_target, ctx.n_runs, seed=ctx.stream(Stage.T_UNIFORM, 0)), n_feature
        ),
        calibration=fit.calibration,
        reliable=not issues,
        warnings=issues,
        notes=notes,
        has_curve=predictable,
        fixed_point_power=has_power,
        confidence=s.confidence,
        intervals=prediction.intervals,
        bootstrap=prediction.bootstrap,
        model=curve_model.name,
        h=prediction.h,
        within_copy_stability=prediction.within_copy_stability,
        self_check=check,
        curve_source=curve_model.source(prediction) if predictable else "",
        interval_of=curve_model.interval_of,
        simulator=curve_model.simulator,
    )
