"""The estimate's stages after the real runs (docs/method.md section 7): :func:`estimate_from_runs`.

On given real runs: the single-selector statistics every model shares (t_uniform,
A[f] and :func:`round_n_useful`, :func:`real_stability_of`), the guard rails, the
paper's simulator fit for a simulator model, the model's curve and its self-check, the
features' selection frequencies on the copies, and the :class:`Estimate` that holds them.
:func:`~ensstab_dask.estimates.pipeline.estimate` is the real runs plus this; the
validation benchmark and the rounds of a precision call it on runs they hold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from ensstab_dask.cluster.progress import StageBar, StageClock
from ensstab_dask.estimates.features import copy_features
from ensstab_dask.estimates.result import Estimate
from ensstab_dask.estimates.trust import Findings, Smaller, guard_rails, notes
from ensstab_dask.indices import NogueiraStability, clip_to_index, index_range, nogueira_stability, stability_of_subsets
from ensstab_dask.models import Context, Prediction, SelfCheck
from ensstab_dask.models.fitting import SimulatorFit, fit_simulator
from ensstab_dask.real.runs import RealRuns
from ensstab_dask.seeding import Stage, make_rng
from ensstab_dask.settings import EstimateSettings
from ensstab_dask.simulator.estimators import (
    selection_counts,
    smaller_n_target,
    threshold_draws,
    uniform_subsets,
    useful_draws,
)

__all__ = ["estimate_from_runs", "round_n_useful", "real_stability_of"]


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
            if check is not None and not check.passed:
                curve_model.widen(prediction, check)
        sims.done()
        _clip_intervals(prediction, ctx)
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


def _clip_intervals(prediction: Prediction, ctx: Context) -> None:
    """A bootstrap can step outside what a quantity can take; an interval never does."""
    curve, s = prediction.curve, ctx.settings
    for end in ("stability_lower", "stability_upper"):
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
