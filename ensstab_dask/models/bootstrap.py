"""Uncertainty of the estimate from its real runs: a bootstrap over them.

Every quantity the estimate reports is a function of the real runs it was fitted on, and
those runs are a sample. :func:`bootstrap_estimate` draws ``n_boot`` replicates of what
the real runs could have been and recomputes every stage downstream of them: A[f]
(against thresholds redrawn from the uniform selector), the single-selector stability,
p, and the predicted curve. Percentile intervals of the replicates are the reported
intervals.

Resampling the runs with replacement, the textbook bootstrap, overstates the spread of
these statistics, so each statistic gets a replicate of its own kind
(:func:`bootstrap_runs`; how far the textbook bootstrap is off, measured on simulated
selectors whose truth is known: docs/estimate.md, "Intervals"):

* **A[f]** counts features above a maximum (t_uniform). Resampled runs give a feature
  seen twice a fair chance of five, and with thousands of such features A[f] varies far
  more than over independent pools. Instead each feature's rate is drawn from its
  posterior under an empirical-Bayes prior fitted to all the counts
  (:func:`rate_posterior`), and its count from a binomial.
* **The stability** is a mean over pairs of runs (a U-statistic). Resampled runs repeat,
  pairs of one original run are left out, and the few distinct runs left overstate the
  spread; so does the jackknife. The replicates' deviations are rescaled to the unbiased
  standard error of the U-statistic (:func:`~ensstab_dask.indices.pairwise_stability_se`).
* **Simulation.** Re-simulating per replicate would cost ``n_boot`` times the estimate.
  Instead two small surfaces are simulated once with the sweep engine (on the same Dask
  cluster): the single-selector stability over a (u, p) grid, inverted per replicate to
  give p, and the curve over a 3 x 3 (u, p) design around the point estimate, through
  which each replicate's curve is interpolated (quadratic in each direction). Each
  replicate enters as a *shift* from the point estimate, read off the same surface, so
  the surfaces' own Monte-Carlo error cancels to first order; the Monte-Carlo error of
  the point prediction is added to every replicate as normal noise.

What the intervals cover: the sampling of the real runs (which runs the selector
happened to produce), the uniform selector's threshold draws, and the simulation's
Monte-Carlo error. What they cannot cover: the model's own error, i.e. whether the
two-parameter simulator describes the selector at all; only the naive check (the
validation harness) measures that."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ensstab_dask.indices import PAIRWISE_INDICES, pairwise_similarity, stability_of_subsets, stability_se
from ensstab_dask.models._base import Context
from ensstab_dask.seeding import SeedLike, Stage, make_rng
from ensstab_dask.simulator.estimators import selection_counts

if TYPE_CHECKING:
    import xarray as xr

# The 3 x 3 design costs 9 x repeats / _DESIGN_SHARE cell-draws against the point
# prediction's repeats: about as much simulation again as the point prediction.
_DESIGN_SHARE = 8

__all__ = [
    "Bootstrap",
    "rate_posterior",
    "bootstrap_runs",
    "percentile_interval",
    "lagrange_weights",
    "p_replicates",
    "curve_replicates",
    "bootstrap_estimate",
]


def percentile_interval(draws, confidence: float) -> tuple[float, float]:
    """The central ``confidence`` percentile interval of ``draws`` (NaN draws ignored)."""
    draws = np.asarray(draws, dtype=float)
    draws = draws[np.isfinite(draws)]
    if draws.size == 0:
        return (float("nan"), float("nan"))
    tail = 50.0 * (1.0 - confidence)
    lo, hi = np.percentile(draws, [tail, 100.0 - tail])
    return (float(lo), float(hi))


@dataclass(frozen=True)
class Bootstrap:
    """Replicates of the stages that depend on the real runs (before any simulation)."""

    n_useful: np.ndarray = field(repr=False)  # mean of A[f] over the thresholds, per replicate
    real_stability: np.ndarray = field(repr=False)


def _pair_mean(sim: np.ndarray, idx: np.ndarray) -> float:
    """Mean similarity over pairs of a bootstrap sample, pairs of one original run left out."""
    sub = sim[np.ix_(idx, idx)]
    distinct = idx[:, None] != idx[None, :]
    n = distinct.sum()
    return float(sub[distinct].sum() / n) if n else float("nan")


def rate_posterior(counts: np.ndarray, n_runs: int, *, grid_size: int = 60, iterations: int = 300):
    """Each feature's selection rate, as a posterior over a grid of rates (empirical Bayes).

    The prior is the nonparametric maximum-likelihood mixing distribution of the
    binomial counts (weights on ``grid_size`` rates, fitted by EM); the posterior of
    feature i is proportional to ``prior * Binomial(counts[i]; n_runs, rate)``. Returns
    ``(grid, posterior)`` with ``posterior`` of shape (n_feature, grid_size).

    Why not resample the runs: that takes every observed count for the truth and adds
    its own noise on top, so a feature seen twice gets a fair chance of being seen five
    times; with thousands of such features near t_uniform, A[f] comes out several times
    more variable than it is. Pooling the counts
    through a fitted prior removes that, and drawing each rate from its posterior keeps
    the real uncertainty of the features near the threshold.
    """
    from scipy.stats import binom

    counts = np.asarray(counts, dtype=np.int64)
    # Rates on a grid denser near 0, where the many unselected features sit.
    grid = np.unique(np.concatenate([np.linspace(0.0, 1.0, grid_size) ** 2, counts / max(n_runs, 1)]))
    values, inverse = np.unique(counts, return_inverse=True)
    like = binom.pmf(values[:, None], n_runs, grid[None, :])  # (distinct counts, grid)
    mult = np.bincount(inverse, minlength=len(values)).astype(float)
    w = np.full(len(grid), 1.0 / len(grid))
    for _ in range(iterations):
        post = like * w[None, :]
        post /= post.sum(axis=1, keepdims=True)
        w = (mult[:, None] * post).sum(axis=0) / mult.sum()
    post = like * w[None, :]
    post /= post.sum(axis=1, keepdims=True)
    return grid, post[inverse]


def bootstrap_runs(
    pools: tuple[np.ndarray, np.ndarray],
    n_feature: int,
    thresholds: np.ndarray,
    *,
    n_runs: int,
    repeats: int,
    n_boot: int,
    index: str = "jaccard",
    seed: SeedLike = 0,
) -> Bootstrap:
    """Replicates of A[f] and of the single-selector stability, as if the runs were redone.

    ``pools``: ``(useful_runs, stability_runs)``, the top-``n_target`` subsets behind A[f]
    and behind the stability (:meth:`~ensstab_dask.models.Context.pools`).

    * A[f]: each feature's count in ``n_runs`` new runs is drawn from a binomial whose
      rate is drawn from the feature's :func:`rate_posterior` (fitted on the whole
      ``useful_runs`` pool), and compared with ``repeats`` thresholds drawn from
      ``thresholds`` (fresh t_uniform draws), as the estimate averages A[f] over its
      threshold draws.
    * Stability: the runs are resampled with replacement (pairs of one original run left
      out, as :func:`_pair_mean`), and the replicates' deviations are rescaled to the
      unbiased standard error of the U-statistic
      (:func:`~ensstab_dask.indices.pairwise_stability_se`; the jackknife for
      ``nogueira``). With few distinct runs per resample the raw bootstrap of a mean over
      pairs overstates the spread (by about 1.4 on simulated selectors with 20 runs).

    The two are drawn independently of each other.
    """
    useful_runs, stability_runs = (np.asarray(runs) for runs in pools)
    thresholds = np.asarray(thresholds)
    rng = make_rng(seed)
    grid, post = rate_posterior(selection_counts(useful_runs, n_feature), len(useful_runs))
    cdf = np.cumsum(post, axis=1)
    u_draws = np.empty(n_boot)
    for b in range(n_boot):
        k = np.minimum((cdf < rng.random(n_feature)[:, None]).sum(axis=1), len(grid) - 1)
        c = rng.binomial(n_runs, grid[k])
        t = rng.choice(thresholds, size=repeats, replace=True)
        u_draws[b] = float((c[None, :] > t[:, None]).sum(axis=1).mean())

    n_stab = len(stability_runs)
    point = stability_of_subsets(stability_runs, n_feature, index)
    raw = np.empty(n_boot)
    sim = None if index not in PAIRWISE_INDICES else pairwise_similarity(stability_runs, n_feature, index=index)
    for b in range(n_boot):
        idx = rng.integers(0, n_stab, size=n_stab)
        if sim is not None:
            raw[b] = _pair_mean(sim, idx)
        else:
            uniq = np.unique(idx)
            raw[b] = stability_of_subsets(stability_runs[uniq], n_feature, index) if len(uniq) > 2 else np.nan
    spread = float(np.nanstd(raw, ddof=1))
    se = stability_se(stability_runs, n_feature, index)
    se = spread if not np.isfinite(se) else se
    scale = se / spread if spread > 0 else 0.0
    s_draws = point + (raw - np.nanmean(raw)) * scale
    return Bootstrap(u_draws, s_draws)


def lagrange_weights(nodes, x) -> np.ndarray:
    """Weights of the Lagrange interpolant through ``nodes`` (1 to 3 points) at each ``x``.

    Returns an array of shape ``(len(x), len(nodes))``; ``x`` is clipped to the nodes'
    range, so replicates beyond the design take its edge (they lie outside the central
    interval the design was placed to cover).
    """
    nodes = np.asarray(nodes, dtype=float)
    x = np.clip(np.asarray(x, dtype=float), nodes.min(), nodes.max())
    w = np.ones((len(x), len(nodes)))
    for j, xj in enumerate(nodes):
        for k, xk in enumerate(nodes):
            if k != j:
                w[:, j] *= (x - xk) / (xj - xk)
    return w


def _nodes(values: np.ndarray, center: float, quantile: float, *, integer: bool, low: float, high: float, gap: float):
    """Three sorted design nodes: the point estimate, and below and above it the
    ``quantile`` and ``1 - quantile`` of the replicates, each at least ``gap`` away from
    the point (nodes closer than that would turn the surface's Monte-Carlo noise into
    wild slopes), clipped to [low, high]. A side with no room at all is dropped."""
    finite = values[np.isfinite(values)]
    below = np.quantile(finite, quantile) if finite.size else center
    above = np.quantile(finite, 1 - quantile) if finite.size else center
    cand = [min(below, center - gap), center, max(above, center + gap)]
    cand = np.clip(np.round(cand) if integer else np.asarray(cand, dtype=float), low, high)
    nodes = [float(cand[1])]
    for v in (cand[0], cand[2]):
        # A side clipped at the domain's edge stays, however close: near p = 1, where the
        # curve rises fastest, dropping it would freeze every replicate above the point.
        if abs(v - cand[1]) > 1e-9:
            nodes.append(float(v))
    nodes.sort()
    return [int(v) for v in nodes] if integer else nodes


def _surface(ctx: Context, u_nodes, p_nodes, m_ensemble, *, repeats: int, seed: int, h: int | None = None):
    """Mean simulated stability over a (u, p, m_ensemble) grid, from the sweep engine, with
    the estimate's settings (the two-level simulator at ``h`` when given)."""
    s = ctx.settings
    model = "onda" if h is None else "two-level"
    from ensstab_dask.sweeps.sweep import sweep  # here: sweeps import xarray and pandas (ensstab --help)

    surf = sweep(
        s.n_feature,
        s.n_target,
        n_useful=u_nodes,
        p=p_nodes,
        m_ensemble=m_ensemble,
        m_stability=ctx.m_stability,
        repeats=repeats,
        aggregate=s.aggregate,
        index=s.index,
        seed=seed,
        client=ctx.client,
        progress=False,
        model=model,
        h=h,
    )
    return surf["stability"].values  # (n_u, n_p, n_m)


def p_replicates(ctx: Context, boot: Bootstrap) -> tuple[np.ndarray, int]:
    """p for each replicate, from one simulated single-selector surface over (u, p).

    The surface is inverted per replicate (linear in u between nodes, then the rising
    branch in p made monotone and inverted); the replicate's p is the point estimate
    (``ctx.fit.p_hat`` at ``ctx.n_useful`` and ``ctx.real_stability``) plus the difference
    between the inversions at the replicate and at the point, so the surface's own error
    cancels. Returns the draws and the simulated runs spent.
    """
    s = ctx.settings
    n_feature, n_target = s.n_feature, s.n_target
    u_hat, p_hat, s_hat = ctx.n_useful, ctx.fit.p_hat, ctx.real_stability
    repeats = max(2, s.repeats // 4)
    lo_p = n_target / n_feature
    u_b = np.clip(np.round(boot.n_useful), n_target, n_feature).astype(int)
    qs = np.quantile(u_b, [0.0, 0.25, 0.5, 0.75, 1.0])
    u_nodes = sorted({int(v) for v in np.round(qs)} | {int(u_hat)})
    p_nodes = sorted({round(float(v), 6) for v in np.linspace(lo_p, 1.0, 17)} | {round(float(p_hat), 6)})
    S = _surface(ctx, u_nodes, p_nodes, [1], repeats=repeats, seed=ctx.sweep_seed(Stage.BOOT_P))[:, :, 0]
    S = np.maximum.accumulate(S, axis=1)  # the rising branch, made monotone for inversion
    pn = np.asarray(p_nodes)

    def invert(u: np.ndarray, s: np.ndarray) -> np.ndarray:
        out = np.empty(len(u))
        for i, (uu, ss) in enumerate(zip(u, s)):
            row = np.array([np.interp(uu, u_nodes, S[:, j]) for j in range(len(pn))])
            out[i] = np.interp(ss, row, pn) if np.isfinite(ss) else np.nan
        return out

    p_b = p_hat + invert(u_b, boot.real_stability) - invert(np.array([u_hat]), np.array([s_hat]))[0]
    simulated = len(u_nodes) * len(p_nodes) * repeats * (ctx.m_stability + 1)
    return np.clip(p_b, lo_p, 1.0), simulated


def curve_replicates(
    ctx: Context, n_useful: np.ndarray, p: np.ndarray, curve: xr.Dataset, *, quantile: float = 0.01, h_of=None
) -> tuple[np.ndarray, int]:
    """The predicted curve for each replicate (n_boot, len(m_ensemble)), around ``curve``,
    the point prediction at (``ctx.fit.u_pred``, ``ctx.fit.p_pred``).

    A 3 x 3 design in (u, p), at the 1 % and 99 % quantiles of the replicates and at the
    point estimate, is simulated once with the sweep engine; each replicate's curve is the
    point prediction plus the interpolated (quadratic per direction) shift from the point
    to the replicate, plus normal noise with the point prediction's Monte-Carlo standard
    error. Returns the draws and the simulated runs spent. ``h_of`` (the two-level
    model) gives the ``h`` to simulate at each u node; one sweep per node then.
    """
    s = ctx.settings
    n_feature, n_target, u_hat, p_hat = s.n_feature, s.n_target, ctx.fit.u_pred, ctx.fit.p_pred
    m_ensemble = [int(m) for m in curve["m_ensemble"].values]
    point = curve["stability"].values
    point_se = curve["stability_std"].values / np.sqrt(s.repeats)
    repeats = max(2, s.repeats // _DESIGN_SHARE)
    seed = ctx.sweep_seed(Stage.BOOT_CURVE)
    rng = make_rng(seed)
    u_b = np.clip(np.round(n_useful), n_target, n_feature).astype(int)
    u_gap = max(2, round(0.15 * u_hat))
    u_nodes = _nodes(u_b, u_hat, quantile, integer=True, low=n_target, high=n_feature, gap=u_gap)
    p_nodes = _nodes(p, p_hat, quantile, integer=False, low=n_target / n_feature, high=1.0, gap=0.05)
    n_m = len(m_ensemble)
    shift = np.zeros((len(u_b), n_m))
    simulated = 0
    if len(u_nodes) > 1 or len(p_nodes) > 1:
        if h_of is None:
            S = _surface(ctx, u_nodes, p_nodes, m_ensemble, repeats=repeats, seed=seed)
        else:
            S = np.concatenate(
                [_surface(ctx, [u], p_nodes, m_ensemble, repeats=repeats, seed=seed, h=h_of(u)) for u in u_nodes]
            )
        Q = np.einsum("bi,bj,ijm->bm", lagrange_weights(u_nodes, u_b), lagrange_weights(p_nodes, p), S)
        Q0 = np.einsum("bi,bj,ijm->bm", lagrange_weights(u_nodes, [u_hat]), lagrange_weights(p_nodes, [p_hat]), S)
        shift = Q - Q0
        simulated = len(u_nodes) * len(p_nodes) * repeats * (ctx.m_stability * sum(m_ensemble) + sum(m_ensemble))
    noise = rng.standard_normal((len(u_b), n_m)) * np.asarray(point_se)[None, :]
    return np.asarray(point)[None, :] + shift + noise, simulated


def bootstrap_estimate(ctx: Context, thresholds: np.ndarray, curve: xr.Dataset, *, h_of=None):
    """The estimate's bootstrap, end to end (see the module docstring), on the real runs
    (``ctx.pools()``) and with the estimate's settings (``ctx.settings``).

    Resamples the runs (:func:`bootstrap_runs`), gives each replicate its p
    (:func:`p_replicates`) and its curve (:func:`curve_replicates`), and writes the
    curve's interval into ``curve`` (``stability_lower``/``stability_upper``). With a
    calibrated prediction point (``ctx.fit.u_pred``, ``ctx.fit.p_pred``) the replicates move
    around it as they move around the A[f]/p point (``ctx.n_useful``, ``ctx.fit.p_hat``).
    ``thresholds`` are fresh draws of t_uniform (``n_runs`` uniform selectors each), so
    that their spread is in the interval.

    Returns
    -------
    intervals : dict of (low, high) for ``t_uniform`` (one draw), ``n_useful``,
        ``real_stability`` and ``p``
    replicates : xarray.Dataset over ``boot``
    simulated : int, simulated runs spent
    """
    s = ctx.settings
    confidence = s.confidence
    m_list = [int(m) for m in curve["m_ensemble"].values]
    boot = bootstrap_runs(
        ctx.pools(),
        s.n_feature,
        thresholds,
        n_runs=ctx.n_runs,
        repeats=s.repeats,
        n_boot=s.n_boot,
        index=s.index,
        seed=ctx.stream(Stage.BOOT),
    )
    p_b, sim_p = p_replicates(ctx, boot)
    u_rep = np.asarray(boot.n_useful) + (ctx.fit.u_pred - ctx.n_useful)
    p_rep = np.clip(p_b + (ctx.fit.p_pred - ctx.fit.p_hat), s.n_target / s.n_feature, 1.0)
    curve_b, sim_c = curve_replicates(ctx, u_rep, p_rep, curve, h_of=h_of)
    intervals = {
        "t_uniform": percentile_interval(thresholds, confidence),
        "n_useful": percentile_interval(boot.n_useful, confidence),
        "real_stability": percentile_interval(boot.real_stability, confidence),
        "p": percentile_interval(p_b, confidence),
    }
    lo, hi = np.array([percentile_interval(curve_b[:, j], confidence) for j in range(len(m_list))]).T
    one: dict = {}  # dimensionless: no units, xarray's convention
    level = f"{confidence:.0%}"
    curve["stability_lower"] = ("m_ensemble", lo, dict(one, long_name=f"{level} lower"))
    curve["stability_upper"] = ("m_ensemble", hi, dict(one, long_name=f"{level} upper"))
    import xarray as xr  # here: xarray and pandas take most of a second to import (ensstab --help)

    replicates = xr.Dataset(
        {
            "stability_boot": (
                ("boot", "m_ensemble"),
                curve_b,
                dict(one, long_name="stability (replicate)", description="bootstrap replicates of the real runs"),
            ),
            "n_useful_boot": ("boot", boot.n_useful, {"long_name": "n_useful (replicate)", "units": "features"}),
            "real_stability_boot": (
                "boot",
                boot.real_stability,
                dict(one, long_name="real stability (replicate)", description="single real selector"),
            ),
            "p_boot": ("boot", p_b, dict(one, long_name="p (replicate)")),
        },
        coords={"m_ensemble": m_list},
    )
    return intervals, replicates, sim_p + sim_c
