"""Stages 2 to 4 of the estimate, which every model shares: what the real runs measure of
the single selector (docs/method.md sections 4-5).

2. :func:`~ensstab_dask.simulator.estimators.threshold_draws`: t_uniform, ``repeats``
   draws of ``n_runs`` uniform selectors;
3. :func:`~ensstab_dask.simulator.estimators.useful_draws`: A[f], one draw per threshold,
   each from ``n_runs`` runs of the pool (without replacement when the pool is larger),
   and :func:`round_n_useful`;
4. :func:`real_stability_of`: the single real selector's stability, with Nogueira's interval;

and, where the guard rails will advise one, the smaller n_target the same runs support.
:func:`measure_single_selector` runs them and returns the
:class:`~ensstab_dask.estimates.records.parts.SingleSelector` record.
"""

from __future__ import annotations

import numpy as np

from ensstab_dask.cluster.progress import StageClock
from ensstab_dask.estimates.records.parts import SingleSelector, Smaller
from ensstab_dask.indices import NogueiraStability, nogueira_stability, stability_of_subsets
from ensstab_dask.real.runs import RealRuns
from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive, make_rng
from ensstab_dask.settings import EstimateSettings
from ensstab_dask.simulator.estimators import (
    selection_counts,
    smaller_n_target,
    threshold_draws,
    uniform_subsets,
    useful_draws,
)

__all__ = ["round_n_useful", "real_stability_of", "measure_single_selector"]


def round_n_useful(draws, n_target: int, n_feature: int) -> int:
    """The n_useful the simulator runs at: the mean of the draws, rounded, within [n_target, n_feature].

    The simulator is defined only there. A clamped value is not what the real runs
    measured: pass ``n_useful=(mean of the draws, this value)`` to
    :func:`~ensstab_dask.estimates.words.trust.caution_reasons`, which says so.
    """
    return int(min(max(round(float(np.mean(draws))), n_target), n_feature))


def real_stability_of(subsets: np.ndarray, n_feature: int, index: str) -> tuple[float, NogueiraStability]:
    """Stage 4: the stability of the single real selector, and Nogueira's 95 % interval."""
    return float(stability_of_subsets(subsets, n_feature, index)), nogueira_stability(subsets, n_feature)


def measure_single_selector(runs: RealRuns, settings: EstimateSettings, *, clock: StageClock) -> SingleSelector:
    """Stages 2 to 4 on ``runs`` (each draw from ``settings.n_runs`` of them, or all the pool
    holds when it holds fewer), timed on ``clock`` as ``n_useful_and_stability``."""
    s = settings
    n_feature, n_target, n_runs = s.n_feature, s.n_target, min(s.n_runs, len(runs.useful))
    seed = as_seed_sequence(s.seed)
    with clock.stage("n_useful_and_stability"):
        t_seed = derive(seed, Stream.ESTIMATE, Stage.T_UNIFORM)
        t_draws = threshold_draws(n_feature, n_target, n_runs, repeats=s.repeats, seed=t_seed)
        pool_rng = make_rng(derive(seed, Stream.ESTIMATE, Stage.POOL))
        u_draws = useful_draws(runs.useful, n_feature, t_draws, n_runs=n_runs, rng=pool_rng)
        n_useful = round_n_useful(u_draws, n_target, n_feature)
        real_stability, real_nog = real_stability_of(runs.stability, n_feature, s.index)
    # The first draw behind t_uniform, kept for the picture of counts; its max is t_draws[0].
    uniform = uniform_subsets(n_feature, n_target, n_runs, seed=derive(seed, Stream.ESTIMATE, Stage.T_UNIFORM, 0))
    return SingleSelector(
        n_runs=n_runs,
        t_uniform_draws=t_draws,
        n_useful_draws=u_draws,
        n_useful=n_useful,
        real_stability=real_stability,
        real_nogueira=real_nog,
        selection_counts=selection_counts(runs.useful[:n_runs], n_feature),
        uniform_counts=selection_counts(uniform, n_feature),
        smaller=_smaller_n_target(runs, s, float(u_draws.mean()), real_nog, t_draws),
    )


def _smaller_n_target(
    runs: RealRuns, settings: EstimateSettings, n_useful_mean: float, real_nog: NogueiraStability, t_draws: np.ndarray
) -> Smaller:
    """The n_target these runs support, looked for only where the guard rails will advise one:
    a selector distinguishable from chance that counts no more useful features than it keeps,
    with no threshold draw at n_runs (there the rails say "too few runs" instead)."""
    s = settings
    n_runs = min(s.n_runs, len(runs.useful))
    saturated = bool((t_draws >= n_runs).any())
    if n_useful_mean > s.n_target or real_nog.lower <= 0.0 or saturated or runs.useful_ranks is None:
        return None
    seed = as_seed_sequence(s.seed)
    found = smaller_n_target(
        runs.useful_ranks,
        s.n_feature,
        s.n_target,
        n_runs=n_runs,
        repeats=s.repeats,
        t_seed=derive(seed, Stream.ESTIMATE, Stage.T_UNIFORM),
        pool_seed=derive(seed, Stream.ESTIMATE, Stage.POOL),
    )
    return False if found is None else found
