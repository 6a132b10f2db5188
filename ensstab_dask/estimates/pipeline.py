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
  default: the validation harness found it at least as good as the paper's layout on
  all four reference datasets (README, "Validation");
* ``"ensemble-all"``: n_useful and p both from one pool in the weak-selector layout.

The naive check (:mod:`ensstab_dask.real.naive`), leave-one-out accuracy
(:mod:`ensstab_dask.real.accuracy`) and the validation harness (:mod:`ensstab_dask.estimates.validation`)
live in their own modules.
"""

from __future__ import annotations

import warnings as _warnings
from typing import Any

import numpy as np
import xarray as xr

from ensstab_dask.checks import (
    AGGREGATES,
    CALIBRATION_LAYOUTS,
    DEFAULT_CALIBRATION_LAYOUT,
    DEFAULT_MODEL,
    P_METHODS,
    SIMULATOR_MODELS,
    check_choice,
    check_int,
    check_m_ensemble,
    check_real,
    check_seed,
)
from ensstab_dask.cluster import ClientLike, connect
from ensstab_dask.cluster.progress import StageBar, StageClock, note_dashboard
from ensstab_dask.estimates.result import Estimate
from ensstab_dask.estimates.trust import Smaller, guard_rails, notes
from ensstab_dask.exceptions import InvalidParameterError, UnreliableEstimateWarning
from ensstab_dask.indices import (
    INDICES,
    NogueiraStability,
    clip_to_index,
    index_range,
    nogueira_stability,
    stability_of_subsets,
)
from ensstab_dask.models import Context, CurveModel, Prediction, SelfCheck, get_model
from ensstab_dask.models._base import CHECK_COPIES as _CHECK_COPIES
from ensstab_dask.models._base import COPIES as _COPIES
from ensstab_dask.models._base import MEMBER_RUNS as _MEMBER_RUNS
from ensstab_dask.models._base import POOL as _POOL
from ensstab_dask.models._base import REAL as _REAL
from ensstab_dask.models._base import T_UNIFORM as _T_UNIFORM
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
from ensstab_dask.real.selectors import check_resample, describe_selector, make_scorer, real_run
from ensstab_dask.seeding import SeedLike, Stream, as_seed_sequence, derive, make_rng
from ensstab_dask.simulator.estimators import (
    selection_counts,
    smaller_n_target,
    threshold_draws,
    uniform_subsets,
    useful_draws,
)
from ensstab_dask.sweeps.cost import check_cost, estimate_cost
from ensstab_dask.sweeps.sweep import check_cell_memory

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
    n_target: int,
    *,
    selector=None,
    m_ensemble=(1, 5, 10, 20, 30, 50),
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
) -> Estimate:
    """Predict the stability of ensembles of a base selector on ``(X, y)`` (Algorithm 1).

    Parameters
    ----------
    X, y : the data (n_samples, n_feature) and labels
    n_target : int
        Features each selector keeps.
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
        real runs, whatever ``m_ensemble``), extrapolated in ``1 / sqrt(m)`` beyond 20
        (docs/anchored_model.md); it needs no other real runs and ``index`` must be a
        pairwise one. ``'onda'``: the paper's simulator, exactly as published, plus 40
        real runs (10 copies of 4) for its self-check. ``'two-level'``: each ensemble
        copy has its own preferred set of ``h`` features (docs/two_level_model.md),
        ``h`` fitted to 20 more real runs (4 copies of 5). ``'random-effects'``: a model
        of the real weak selectors' ranks (docs/random_effects_model.md), fitted to 100
        more real runs (10 copies of 10); pairwise indices only. Every model is
        self-checked against real ensembles it did not use (``self_check``): a failed
        check makes the estimate unreliable and widens its interval by the error seen.
        The README's validation tables compare the four; the default is the one they
        chose out of sample.
    progress : bool
        Progress bars on stderr, one per stage (real runs, simulations), and the Dask
        dashboard link; drawn on a terminal or in a notebook, never into a file or a
        pipe (see :mod:`ensstab_dask.cluster.progress`). False: nothing.
    allow_large : bool
        Run even above 10,000 real runs or 10^8 simulated selectors; without it such an
        estimate is refused before any work, saying what it would cost
        (:mod:`ensstab_dask.sweeps.cost`).

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
    X, y = check_data(X, y, n_target=n_target)
    n_feature = X.shape[1]
    m_list = check_m_ensemble(m_ensemble)
    settings = _checked_settings(
        n_feature, n_target, m_list=m_list, m_stability=m_stability, n_runs=n_runs, repeats=repeats,
        p_method=p_method, verify=verify, calibrate=calibrate, calibration_layout=calibration_layout,
        member_resample=member_resample, n_boot=n_boot, confidence=confidence, aggregate=aggregate, index=index,
        resample=resample, seed=seed, selector=selector, model=model,
    )  # fmt: skip
    m_stability, n_runs, repeats, n_boot, confidence = (
        settings[k] for k in ("m_stability", "n_runs", "repeats", "n_boot", "confidence")
    )
    curve_model = get_model(model)
    paper = sum(pool_sizes(calibration_layout, n_runs=n_runs, m_stability=m_stability)) if curve_model.paper_runs else 0
    real, simulated = estimate_cost(paper_runs=paper, designs=(curve_model.copy_design(), curve_model.check_design()),
                                    simulator=curve_model.simulator, m_list=m_list, m_stability=m_stability,
                                    n_runs=n_runs, repeats=repeats)  # fmt: skip
    check_cost("the estimate", n_feature=n_feature, real_runs=real, simulated=simulated, allow_large=allow_large,
               time_one_run=lambda: real_run(X, y, n_target, selector=selector, resample=resample))  # fmt: skip
    scorer = make_scorer(selector)
    ss = as_seed_sequence(settings["seed"])

    with connect(client) as c:
        note_dashboard(c, progress)
        target = "synchronous" if c is None else c
        clock = StageClock()
        with clock.stage("real_runs"):
            runs, copy_ranks, check_ranks = _real_runs(
                X, y, n_target, curve_model, calibration_layout=calibration_layout, n_runs=n_runs,
                m_stability=m_stability, resample=resample, member_resample=member_resample, scorer=scorer, seed=ss,
                client=target, progress=progress,
            )  # fmt: skip
        est = estimate_from_runs(
            runs, n_feature, n_target, m_ensemble=m_list, n_runs=n_runs, repeats=repeats, p_method=p_method,
            verify=verify, calibrate=calibrate, n_boot=n_boot, confidence=confidence, aggregate=aggregate, index=index,
            settings=settings, seed=ss, client=target, model=model, copy_ranks=copy_ranks, check_ranks=check_ranks,
            progress=progress, clock=clock,
        )  # fmt: skip
    for w in est.warnings:
        _warnings.warn(w, UnreliableEstimateWarning, stacklevel=2)
    return est


def _checked_settings(n_feature: int, n_target: int, *, m_list, m_stability, n_runs, repeats, p_method, verify,
                      calibrate, calibration_layout, member_resample, n_boot, confidence, aggregate, index, resample,
                      seed, selector, model) -> dict:  # fmt: skip
    """Every option of :func:`estimate` checked before any real run (and the memory its
    largest cells need), as the settings the :class:`Estimate` records."""
    n_runs = max(m_list) if n_runs is None else n_runs
    m_stability = check_int(m_stability, "m_stability", minimum=2)
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    repeats = check_int(repeats, "repeats", minimum=2)
    check_choice(p_method, "p_method", P_METHODS)
    for name, flag in (("verify", verify), ("calibrate", calibrate)):
        if not isinstance(flag, (bool, np.bool_)):
            raise InvalidParameterError(f"{name} must be True or False; got {flag!r}")
    check_choice(calibration_layout, "calibration_layout", CALIBRATION_LAYOUTS)
    check_resample(member_resample, "member_resample")
    n_boot = check_int(n_boot, "n_boot", minimum=0)
    if 0 < n_boot < 20:
        raise InvalidParameterError(
            f"n_boot must be 0 (no bootstrap) or at least 20 for a percentile interval; got {n_boot}"
        )
    confidence = check_real(confidence, "confidence", minimum=0.0, maximum=1.0, open_minimum=True, open_maximum=True)
    check_choice(aggregate, "aggregate", AGGREGATES)
    check_choice(index, "index", INDICES)
    check_resample(resample)
    seed = check_seed(seed)
    curve_model = get_model(model)
    if calibrate and not curve_model.simulator:
        raise InvalidParameterError(
            f"calibrate=True calibrates the paper's simulator over a (u, p) grid and needs "
            f"{' or '.join(f'model={m!r}' for m in SIMULATOR_MODELS)}; model={model!r} is not a simulator"
        )
    if index not in curve_model.indices:
        raise InvalidParameterError(
            f"index {index!r} is not a mean over pairs of copies; model={model!r} supports "
            + ", ".join(map(repr, curve_model.indices))
        )
    # Before any real run: the prediction's largest cell, and the p fit's many copies.
    check_cell_memory(n_feature, n_target, max(m_list), m_stability, n_runs)
    check_cell_memory(n_feature, n_target, 1, m_stability * repeats, n_runs)
    return dict(
        m_stability=m_stability,
        n_runs=n_runs,
        repeats=repeats,
        p_method=p_method,
        aggregate=aggregate,
        index=index,
        resample=str(resample),
        calibration_layout=calibration_layout if curve_model.paper_runs else "copies",
        member_resample=str(member_resample),
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
        selector=describe_selector(selector),
        model=model,
    )


def _real_runs(X, y, n_target, curve_model: CurveModel, *, calibration_layout, n_runs, m_stability, resample,
               member_resample, scorer, seed, client, progress):  # fmt: skip
    """Stage 1, every real run a model asks for: the paper's pools (as ``calibration_layout``
    says), its real ensemble copies, and copies for its self-check.

    Returns ``(runs, copy_ranks, check_ranks)``. A model without runs of the paper's
    gets its single-selector statistics from its copies (:func:`runs_from_copies`).
    """
    # One submission for every run: item by item, the workers idle at each item's tail.
    plan: dict[str, Pool | Copies] = {}
    if curve_model.paper_runs:
        half_n, member_n = pool_sizes(calibration_layout, n_runs=n_runs, m_stability=m_stability)
        for name, size, how, stage in (("half", half_n, resample, _REAL), ("member", member_n, member_resample,
                                                                              _MEMBER_RUNS)):  # fmt: skip
            if size:
                plan[name] = Pool(size, how, derive(seed, Stream.ESTIMATE, stage))
    for name, design, stage in (("copies", curve_model.copy_design(), _COPIES),
                                ("check", curve_model.check_design(), _CHECK_COPIES)):  # fmt: skip
        if design is not None:
            plan[name] = Copies(*design, derive(seed, Stream.ESTIMATE, stage))
    made = dict(zip(plan, real_run_plan(X, y, list(plan.values()), selector=scorer, client=client,
                                        progress=progress)))  # fmt: skip
    copy_ranks, check_ranks = made.pop("copies", None), made.pop("check", None)
    runs = None
    if made:
        runs = assemble_runs(calibration_layout, n_runs=n_runs, m_stability=m_stability, **made).top(n_target)
    if runs is None:
        assert copy_ranks is not None  # a model without the paper's runs fits copies
        runs = runs_from_copies(copy_ranks, n_target)
    return runs, copy_ranks, check_ranks


def estimate_from_runs(
    runs: RealRuns,
    n_feature: int,
    n_target: int,
    *,
    m_ensemble: list[int],
    n_runs: int,
    repeats: int,
    p_method: str,
    verify: bool,
    calibrate: bool,
    n_boot: int,
    confidence: float,
    aggregate: str,
    index: str,
    settings: dict,
    seed: SeedLike,
    client,
    model: str = "onda",
    copy_ranks: np.ndarray | None = None,
    check_ranks: np.ndarray | None = None,
    progress: bool = False,
    clock: StageClock | None = None,
) -> Estimate:
    """Every stage after the real runs, on given runs: the single-selector statistics, the
    paper's simulator fit (for a simulator model), the model's curve and its self-check.

    ``copy_ranks``: the model's real ensemble copies, (copies, weak selectors per copy,
    n_feature); ``check_ranks``: copies made for the self-check alone (see
    :mod:`ensstab_dask.models`). :func:`estimate` is the real runs plus this; the
    validation benchmark calls it on shared pools to compare layouts without refitting
    the selector. Arguments are taken as validated. ``progress``: a bar over the
    simulation stages. ``clock``: where the stages' seconds go (:attr:`Estimate.seconds`),
    after those of earlier stages.
    """
    curve_model = get_model(model)
    clock = StageClock() if clock is None else clock
    ctx = Context(
        n_feature=n_feature, n_target=n_target, m_list=list(m_ensemble), n_runs=n_runs, repeats=repeats,
        m_stability=len(runs.stability), aggregate=aggregate, index=index, n_boot=n_boot, confidence=confidence,
        seed=as_seed_sequence(seed), client=client, useful_pool=runs.useful, stability_runs=runs.stability,
        copy_ranks=copy_ranks, check_ranks=check_ranks, clock=clock,
    )  # fmt: skip
    # A[f] counts n_runs runs against n_runs uniform ones; a pool of copies' runs may hold fewer.
    n_runs = ctx.n_runs = min(n_runs, len(runs.useful))
    with clock.stage("n_useful_and_stability"):
        t_draws = threshold_draws(n_feature, n_target, n_runs, repeats=repeats, seed=ctx.stream(_T_UNIFORM))
        u_draws = useful_draws(runs.useful, n_feature, t_draws, n_runs=n_runs, rng=make_rng(ctx.stream(_POOL)))
        ctx.n_useful = ctx.u_pred = round_n_useful(u_draws, n_target, n_feature)
        ctx.real_stability, real_nog = real_stability_of(runs.stability, n_feature, index)

    u_mean = float(u_draws.mean())
    rails: dict[str, Any] = dict(n_target=n_target, n_runs=n_runs, n_useful_mean=u_mean, t_draws=t_draws,
                 real_nogueira=real_nog, smaller=_smaller_n_target(ctx, runs, u_mean, real_nog, t_draws))  # fmt: skip
    # Before p is fitted: is there anything to say?
    predictable = guard_rails(**rails, simulator=curve_model.simulator)[0]
    # One bar over the simulation stages about to run, in their order below (none when no
    # curve can be predicted): they are few and unequal, so a count of tasks would mislead.
    stages = (
        (["p"] + ["fixed point"] * int(verify) + ["calibration"] * int(calibrate)) * curve_model.simulator
        + curve_model.stages(n_boot)
        + ["self-check"]
    )
    sims = StageBar(stages if predictable else [], "simulations", enabled=progress)
    fit = SimulatorFit()
    prediction = check = None
    if predictable:
        if curve_model.simulator:
            fit = fit_simulator(ctx, p_method=p_method, verify=verify, calibrate=calibrate,
                                n_useful_mean=float(u_draws.mean()), bar=sims)  # fmt: skip
        prediction = curve_model.predict(ctx, sims)
        with clock.stage("self_check"):
            check = curve_model.self_check(ctx, prediction)
            if check is not None and not check.passed:
                curve_model.widen(prediction, check)
        sims.done()
        _clip_intervals(prediction, ctx)
    sims.close()
    _, blocking, cautions = guard_rails(
        **rails, p_fit=fit.p_fit, fixed_point=fit.fixed_point, power=fit.power, verified=verify or not predictable,
        calibration_empty=fit.calibration is not None and fit.calibrated is None, n_useful=ctx.n_useful,
        simulator=curve_model.simulator, self_check=check,
    )  # fmt: skip
    issues = blocking + cautions
    said = notes(n_target=n_target, n_useful_mean=rails["n_useful_mean"], real_nogueira=real_nog,
                 simulator=curve_model.simulator, saturated=int((t_draws >= n_runs).sum()),
                 smaller=rails["smaller"])  # fmt: skip
    return _assemble(ctx, curve_model, prediction, check, fit, runs=runs, t_draws=t_draws, u_draws=u_draws,
                     real_nog=real_nog, issues=issues, notes=said, predictable=predictable,
                     settings=settings)  # fmt: skip


def _smaller_n_target(ctx: Context, runs: RealRuns, n_useful_mean: float, real_nog: NogueiraStability,
                      t_draws: np.ndarray) -> Smaller:  # fmt: skip
    """The n_target these runs support, looked for only where the guard rails will advise one:
    a selector distinguishable from chance that counts no more useful features than it keeps,
    with no threshold draw at n_runs (there the rails say "too few runs" instead)."""
    saturated = bool((t_draws >= ctx.n_runs).any())
    if n_useful_mean > ctx.n_target or real_nog.lower <= 0.0 or saturated or runs.useful_ranks is None:
        return None
    found = smaller_n_target(runs.useful_ranks, ctx.n_feature, ctx.n_target, n_runs=ctx.n_runs, repeats=ctx.repeats,
                             t_seed=ctx.stream(_T_UNIFORM), pool_seed=ctx.stream(_POOL))  # fmt: skip
    return False if found is None else found


def _clip_intervals(prediction: Prediction, ctx: Context) -> None:
    """A bootstrap can step outside what a quantity can take; an interval never does."""
    curve = prediction.curve
    for end in ("stability_lower", "stability_upper"):
        if end in curve:
            curve[end].values = clip_to_index(curve[end].values, ctx.index)
    ranges = {"real_stability": index_range(ctx.index), "p": (0.0, 1.0), "t_uniform": (0.0, ctx.n_runs),
              "n_useful": (0.0, ctx.n_feature), "h": (ctx.n_target, ctx.n_feature)}  # fmt: skip
    for key, (lo, hi) in ranges.items():
        if key in prediction.intervals:
            a, b = np.clip(prediction.intervals[key], lo, hi)
            prediction.intervals[key] = (float(a), float(b))


def _assemble(ctx: Context, curve_model: CurveModel, prediction: Prediction | None, check: SelfCheck | None,
              fit: SimulatorFit, *, runs, t_draws, u_draws, real_nog, issues, notes, predictable,
              settings) -> Estimate:  # fmt: skip
    """The :class:`Estimate` from what the stages found."""
    n_feature, n_target, m_list = ctx.n_feature, ctx.n_target, ctx.m_list
    if prediction is None:
        nan = np.full(len(m_list), np.nan)
        curve = xr.Dataset(
            {"stability": ("m_ensemble", nan), "stability_std": ("m_ensemble", nan.copy())},
            coords={"m_ensemble": m_list},
        )
        prediction = Prediction(curve=curve)
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
        settings=dict(settings, n_runs=ctx.n_runs, stability_runs=len(runs.stability)),
        t_uniform=float(t_draws.mean()),
        t_uniform_std=float(t_draws.std(ddof=1)),
        n_useful=ctx.n_useful,
        n_useful_mean=float(u_draws.mean()),
        n_useful_std=float(u_draws.std(ddof=1)),
        n_useful_draws=u_draws,
        real_stability=float(ctx.real_stability),
        real_nogueira=real_nog,
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
            uniform_subsets(n_feature, n_target, ctx.n_runs, seed=ctx.stream(_T_UNIFORM, 0)), n_feature
        ),
        calibration=fit.calibration,
        reliable=not issues,
        warnings=issues,
        notes=notes,
        has_curve=predictable,
        fixed_point_power=has_power,
        confidence=ctx.confidence,
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
