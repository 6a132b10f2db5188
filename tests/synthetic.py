"""Synthetic real-like ensemble copies for the tests of the measured curve and its checks."""

from __future__ import annotations

import numpy as np

from ensstab_dask import rank_scores


def real_like_copies(
    n_copies: int,
    members: int,
    seed: int,
    *,
    tau: float = 1.0,
    sigma: float = 1.0,
    step: float = 0.0,
    duplicated: int = 0,
    n_feature: int = 500,
) -> np.ndarray:
    """Ranks (copies, members, n_feature) of weak selectors as benchmarks/synthetic_regimes.py
    makes them: 60 graded signal features, a copy's own shift ``tau``, a selector's noise
    ``sigma``, scores below 0 set to 0 (ties broken at random). Its ``tied`` regime: scores
    rounded down to multiples of ``step``, the last ``duplicated`` features copies of the
    first signal features."""
    rng = np.random.default_rng(seed)
    mu = np.zeros(n_feature)
    mu[:60] = np.linspace(3.0, 0.0, 60, endpoint=False)
    shift = tau * rng.standard_normal((n_copies, 1, n_feature))
    scores = np.maximum(mu + shift + sigma * rng.standard_normal((n_copies, members, n_feature)), 0.0)
    if step:
        scores = np.floor(scores / step) * step
    if duplicated:
        scores[..., n_feature - duplicated :] = scores[..., :duplicated]
    return rank_scores(scores, seed=rng).astype(np.int32)


def single_selector(n_runs, n_useful_mean, t_draws, real_nogueira, smaller=None):
    """A :class:`~ensstab_dask.estimates.records.parts.SingleSelector` holding what the guard
    rails read (A[f]'s mean, the threshold draws, Nogueira's stability, the smaller
    n_target); its other statistics are placeholders."""
    from ensstab_dask.estimates.records.parts import SingleSelector

    return SingleSelector(
        n_runs=n_runs,
        t_uniform_draws=np.asarray(t_draws),
        n_useful_draws=np.array([n_useful_mean]),
        n_useful=int(round(n_useful_mean)),
        real_stability=real_nogueira.stability,
        real_nogueira=real_nogueira,
        selection_counts=np.zeros(1),
        uniform_counts=np.zeros(1),
        smaller=smaller,
    )
