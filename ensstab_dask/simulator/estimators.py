"""Estimating the simulator's parameters (docs/method.md sections 4-6).

* :func:`uniform_threshold`: t_uniform, the largest selection count of the uniform
  selector over ``n_runs`` runs.
* :func:`count_useful`: A[f], the number of features a selector picks more often than
  t_uniform.
* :func:`useful_draws`: A[f] of real runs, one draw per threshold, and
  :func:`smaller_n_target`, the n_target at which the same runs count more than it keeps.
* :func:`simulated_n_useful`: A[f_{u,p}], the same statistic for the simulated selector.
* :func:`estimate_p`: the p whose simulated single-selector stability matches a target.
* the fixed point u = A[f_{u,p}] is :mod:`ensstab_dask.simulator.fixed_point`'s.
* :func:`within_copy_stability` and :func:`estimate_h`: the two-level model's ``h``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ensstab_dask.checks import (
    P_METHODS,
    check_choice,
    check_int,
    check_p,
    check_problem,
    check_real,
    check_simulator,
    check_subsets,
)
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices import INDICES, index_range, stability_of_subsets
from ensstab_dask.seeding import SeedLike, Stream, as_seed_sequence, derive, make_rng
from ensstab_dask.simulator.kernel import block_rows, simulate_rankings, simulated_stability, top_subsets
from ensstab_dask.wording import param

__all__ = [
    "threshold_draws",
    "uniform_subsets",
    "uniform_threshold",
    "selection_counts",
    "count_useful",
    "useful_draws",
    "smaller_n_target",
    "simulated_n_useful",
    "estimate_p",
    "PEstimate",
    "within_copy_stability",
    "estimate_h",
    "HEstimate",
]


def uniform_subsets(n_feature: int, n_target: int, size: int, *, seed: SeedLike = 0) -> np.ndarray:
    """``size`` uniformly random ``n_target``-subsets of ``range(n_feature)``, sorted rows.

    A partial Fisher-Yates shuffle (``n_target`` vectorised swaps per block of rows).

    Parameters
    ----------
    n_feature, n_target : int
        ``1 <= n_target <= n_feature``.
    size : int
        Number of subsets (runs of the uniform selector).
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)

    Returns
    -------
    ndarray of int64, shape (size, n_target), each row sorted.

    Examples
    --------
    >>> import numpy as np
    >>> import ensstab_dask as es
    >>> subsets = es.uniform_subsets(200, 5, 3, seed=0)
    >>> subsets.shape
    (3, 5)
    >>> bool((np.diff(subsets, axis=1) > 0).all())  # sorted, distinct features
    True
    """
    n_feature, n_target, _ = check_problem(n_feature, n_target)
    size = check_int(size, "size", minimum=0)
    rng = seed if isinstance(seed, np.random.Generator) else make_rng(seed)
    out = np.empty((size, n_target), dtype=np.int64)
    step = block_rows(n_feature)
    for start in range(0, size, step):
        m = min(step, size - start)
        arr = np.broadcast_to(np.arange(n_feature, dtype=np.int64), (m, n_feature)).copy()
        rows = np.arange(m)
        # Row-major draws, consumed row after row: a row's subset does not depend on the block.
        picks = rng.integers(np.arange(n_target)[None, :], n_feature, size=(m, n_target))
        for t in range(n_target):
            j = picks[:, t]
            held = arr[:, t].copy()
            arr[:, t] = arr[rows, j]
            arr[rows, j] = held
        out[start : start + m] = np.sort(arr[:, :n_target], axis=1)
    return out


def selection_counts(subsets, n_feature: int, *, n_target: int | None = None) -> np.ndarray:
    """How often each feature appears in ``subsets``: int64 array of length n_feature.

    Parameters
    ----------
    subsets : 2-D int array or sequence of sequences
        Subsets of distinct feature indices in ``[0, n_feature)``.
    n_feature : int
    n_target : int, optional
        If given, every subset must have exactly this size.

    Returns
    -------
    ndarray of int64, shape (n_feature,)

    Examples
    --------
    >>> import ensstab_dask as es
    >>> es.selection_counts([[0, 1], [1, 2]], 4).tolist()
    [1, 2, 1, 0]
    """
    n_feature = check_int(n_feature, "n_feature", minimum=1)
    if (
        isinstance(subsets, np.ndarray)
        and subsets.ndim == 2
        and np.issubdtype(subsets.dtype, np.integer)
        and (n_target is None or subsets.shape[1] == n_target)
    ):
        # Fast path for the (n_runs, n_target) arrays the library itself produces.
        if subsets.size and (subsets.min() < 0 or subsets.max() >= n_feature):
            raise InvalidParameterError(f"subsets has feature indices outside [0, {n_feature})")
        if subsets.shape[1] > 1 and (np.diff(np.sort(subsets, axis=1), axis=1) == 0).any():
            raise InvalidParameterError("subsets has a subset with duplicate feature indices")
        return np.bincount(subsets.ravel(), minlength=n_feature).astype(np.int64)
    rows = check_subsets(subsets, n_feature, size=n_target)
    return (
        np.bincount(np.concatenate(rows), minlength=n_feature).astype(np.int64)
        if rows
        else np.zeros(n_feature, np.int64)
    )


def uniform_threshold(n_feature: int, n_target: int, n_runs: int, *, seed: SeedLike = 0) -> int:
    """t_uniform: the largest selection count of ``n_runs`` uniform selectors (docs/method.md section 4).

    Parameters
    ----------
    n_feature, n_target : int
        ``1 <= n_target <= n_feature``.
    n_runs : int
        Runs of the uniform selector (:func:`uniform_subsets`).
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)

    Returns
    -------
    int
        Between 1 and ``n_runs``.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> es.uniform_threshold(200, 5, n_runs=30, seed=0)
    4
    """
    n_feature, n_target, _ = check_problem(n_feature, n_target)
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    counts = selection_counts(uniform_subsets(n_feature, n_target, n_runs, seed=seed), n_feature)
    return int(counts.max())


def threshold_draws(n_feature: int, n_target: int, n_runs: int, *, repeats: int, seed: SeedLike = 0) -> np.ndarray:
    """Stage 2: ``repeats`` draws of t_uniform; draw ``r`` uses ``derive(seed, r)``."""
    return np.array(
        [uniform_threshold(n_feature, n_target, n_runs, seed=derive(seed, r)) for r in range(repeats)], dtype=np.int64
    )


def count_useful(subsets, n_feature: int, threshold: int, *, n_target: int | None = None) -> int:
    """A[f]: the number of features selected in more than ``threshold`` of ``subsets``.

    Parameters
    ----------
    subsets : the top-``n_target`` subsets of ``n_runs`` runs of a selector
    n_feature : int
    threshold : int
        Usually :func:`uniform_threshold` with the same ``n_runs``.
    n_target : int, optional
        If given, every subset must have exactly this size.

    Returns
    -------
    int

    Examples
    --------
    >>> import ensstab_dask as es
    >>> es.count_useful([[0, 1], [1, 2], [1, 3]], 4, threshold=1)  # only feature 1 is picked more than once
    1

    Against the uniform selector's threshold, with 30 simulated runs standing in for
    real ones (``n_useful=20`` features can be useful):

    >>> runs = es.simulate_ensembles(200, 5, 20, 0.7, size=30, seed=3)
    >>> t = es.uniform_threshold(200, 5, n_runs=30, seed=0)
    >>> es.count_useful(runs, 200, t)
    15
    """
    threshold = check_int(threshold, "threshold", minimum=0)
    return int((selection_counts(subsets, n_feature, n_target=n_target) > threshold).sum())


def useful_draws(subsets: np.ndarray, n_feature: int, thresholds, *, n_runs: int, rng: np.random.Generator):
    """Stage 3: A[f] for each threshold, from ``n_runs`` runs of ``subsets`` each.

    When the pool holds more than ``n_runs`` runs, each draw takes ``n_runs`` of them
    without replacement (``rng``), so the spread reflects the choice of runs; otherwise
    every draw uses the same runs and the spread is the threshold's alone.
    """
    pool = len(subsets)
    return np.array(
        [count_useful(subsets[rng.choice(pool, n_runs, replace=False)], n_feature, int(t)) for t in thresholds]
    )


def smaller_n_target(
    ranks: np.ndarray,
    n_feature: int,
    n_target: int,
    *,
    n_runs: int,
    repeats: int,
    t_seed: SeedLike,
    pool_seed: SeedLike,
) -> tuple[int, float] | None:
    """The largest k < ``n_target`` at which the same real runs count more useful features
    than k (A[f] > k, where the paper's simulator is defined), and that count.

    ``ranks`` are the full rankings of the runs behind A[f]; ``t_seed`` and ``pool_seed``
    the seeds of :func:`threshold_draws` and of :func:`useful_draws`' choice of runs. A run's
    ranking and these seeds do not depend on n_target, so an estimate asked for k with the
    same seed counts exactly the value returned: the advice is checked, not extrapolated.
    ``None`` when no k qualifies (or the threshold reaches ``n_runs`` in most draws, where
    A[f] undercounts).
    """
    for k in range(n_target - 1, 0, -1):
        t = threshold_draws(n_feature, k, n_runs, repeats=repeats, seed=t_seed)
        if 2 * int((t >= n_runs).sum()) > len(t):
            continue
        count = float(useful_draws(top_subsets(ranks, k), n_feature, t, n_runs=n_runs, rng=make_rng(pool_seed)).mean())
        if count > k:
            return k, count
    return None


def simulated_n_useful(
    n_feature: int,
    n_target: int,
    n_useful: int,
    p: float,
    *,
    n_runs: int,
    threshold: int | None = None,
    seed: SeedLike = 0,
) -> int:
    """A[f_{u,p}]: n_useful recomputed with the simulated selector (docs/method.md section 6).

    ``n_runs`` simulated selectors (stream ``derive(seed, Stream.N_USEFUL_V_RUNS)``) are
    counted against ``threshold``; if it is None, t_uniform is drawn from ``n_runs``
    uniform selectors on stream ``derive(seed, Stream.UNIFORM_THRESHOLD)``.

    Parameters
    ----------
    n_feature, n_target, n_useful, p
        The simulated weak selector, as in :func:`~ensstab_dask.simulate_rankings`.
    n_runs : int
        Simulated runs counted (and uniform runs behind t_uniform).
    threshold : int, optional
        t_uniform; drawn as above when None.
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)

    Returns
    -------
    int

    Examples
    --------
    >>> import ensstab_dask as es
    >>> es.simulated_n_useful(200, 5, 20, 0.7, n_runs=30, seed=0)
    10
    """
    n_feature, n_target, n_useful, p = check_simulator(n_feature, n_target, n_useful, p)
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    ss = as_seed_sequence(seed)
    if threshold is None:
        threshold = uniform_threshold(n_feature, n_target, n_runs, seed=derive(ss, Stream.UNIFORM_THRESHOLD))
    ranks = simulate_rankings(n_feature, n_target, n_useful, p, size=n_runs, seed=derive(ss, Stream.N_USEFUL_V_RUNS))
    return count_useful(top_subsets(ranks, n_target), n_feature, threshold)


@dataclass(frozen=True)
class PEstimate:
    """Result of :func:`estimate_p`. ``float(result)`` is ``result.p``.

    Attributes
    ----------
    p : float
        The fitted p.
    stability : float
        The simulated single-selector stability at ``p``.
    target : float
        The stability it was fitted to.
    method : {'bisect', 'grid'}
    evaluations : tuple of (p, stability) pairs
        Every point of the curve evaluated, sorted by p.
    at_boundary : bool
        The target lies outside the searched range: ``p`` is an end of it.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> fit = es.estimate_p(0.3, 200, 5, 20, m_stability=20, seed=0)  # beyond what n_useful=20 gives
    >>> float(fit) == fit.p, fit.method
    (True, 'bisect')
    >>> fit.p, fit.at_boundary
    (1.0, True)
    """

    p: float
    stability: float
    target: float
    method: str
    evaluations: tuple[tuple[float, float], ...] = field(repr=False)
    at_boundary: bool = False

    def __float__(self) -> float:
        return self.p


def estimate_p(
    target_stability: float,
    n_feature: int,
    n_target: int,
    n_useful: int,
    *,
    m_stability: int = 50,
    method: str = "bisect",
    grid=None,
    bounds: tuple[float, float] | None = None,
    xtol: float = 1e-3,
    index: str = "jaccard",
    seed: SeedLike = 0,
) -> PEstimate:
    """The p whose simulated single-selector stability is closest to ``target_stability``.

    Every evaluation uses the same seed (common random numbers), so the simulated
    curve is one fixed, smooth function of p (see :mod:`ensstab_dask.simulator.kernel`).

    Parameters
    ----------
    target_stability : float
        Observed stability of the single real selector, same ``index``.
    n_feature, n_target, n_useful : int
        The simulated weak selector (see :func:`~ensstab_dask.simulate_rankings`).
    method : {'bisect', 'grid'}
        ``'grid'`` evaluates every p in ``grid`` (default n_target/n_feature, then the
        multiples of 0.01 above it up to 1) and returns the closest. ``'bisect'`` keeps a
        bracket ``S(lo) < target <= S(hi)`` on the curve and halves it until it is
        narrower than ``xtol``; it then returns whichever end is closer to the target.
        The bracket invariant holds for any function, so residual Monte-Carlo wiggles
        cannot derail it. The curve falls slightly between p = 0 and p ~
        n_target/n_feature (the uniform point) and rises after; bisection searches the
        rising branch, ``bounds`` default ``(n_target/n_feature, 1)``, and so
        does the default grid.
    grid : sequence of float, optional
        The p values of ``method='grid'``.
    bounds : (float, float), optional
        The bracket of ``method='bisect'``.
    xtol : float
        Width at which bisection stops.
    index : str
        The stability index, one of :data:`~ensstab_dask.indices.INDICES`.
    m_stability : int
        Simulated runs per evaluation of the curve.
    seed : int, SeedSequence or Generator
        Shared by all evaluations.

    Returns
    -------
    PEstimate

    Examples
    --------
    Recover the p behind a simulated stability (same seed and ``m_stability``, so the
    target lies exactly on the curve):

    >>> import ensstab_dask as es
    >>> target = es.simulated_stability(200, 5, 20, 0.6, m_stability=20, seed=0)
    >>> fit = es.estimate_p(target, 200, 5, 20, m_stability=20, seed=0)
    >>> round(fit.p, 2), fit.stability == target, fit.at_boundary
    (0.6, True, False)
    """
    low, high = index_range(index)
    target = check_real(target_stability, "target_stability", minimum=low, maximum=high)
    n_feature, n_target, _ = check_problem(n_feature, n_target, n_useful)
    n_useful = int(n_useful)  # checked just above
    if n_target == n_feature:
        raise InvalidParameterError(
            param("p") + " cannot be estimated when n_target == n_feature: every selector picks all features"
        )
    m_stability = check_int(m_stability, "m_stability", minimum=2)
    check_choice(method, "method", P_METHODS)
    xtol = check_real(xtol, "xtol", minimum=0.0, maximum=1.0, open_minimum=True)
    uniform_p = n_target / n_feature
    ss = as_seed_sequence(seed)
    cache: dict[float, float] = {}

    def curve(p: float) -> float:
        if p not in cache:
            cache[p] = simulated_stability(
                n_feature, n_target, n_useful, p, m_stability=m_stability, index=index, seed=ss
            )
        return cache[p]

    if method == "grid":
        if grid is None:
            # The rising branch only, as for bisection: n_target/n_feature, then 0.01 steps.
            steps = np.round(np.arange(1, 101) / 100, 2)
            ps = np.concatenate([[uniform_p], steps[steps > uniform_p]])
        else:
            if isinstance(grid, (str, bytes)) or np.ndim(grid) != 1 or len(grid) == 0:
                raise InvalidParameterError("grid must be a non-empty 1-D sequence of p values")
            ps = np.array([check_p(g, "grid values") for g in grid], dtype=float)
        vals = np.array([curve(float(g)) for g in ps])
        best = int(np.argmin(np.abs(vals - target)))
        p_hat = float(ps[best])
        boundary = len(ps) > 1 and p_hat in (ps.min(), ps.max())
    else:
        if grid is not None:
            raise InvalidParameterError("grid is only used with method='grid'")
        if bounds is None:
            lo, hi = uniform_p, 1.0
        else:
            if isinstance(bounds, (str, bytes)) or np.ndim(bounds) != 1 or len(bounds) != 2:
                raise InvalidParameterError(f"bounds must be a pair (low, high) of p values; got {bounds!r}")
            lo, hi = check_p(bounds[0], "bounds[0]"), check_p(bounds[1], "bounds[1]")
        if not lo < hi:
            raise InvalidParameterError(f"bounds must satisfy bounds[0] < bounds[1]; got {bounds}")
        boundary = False
        if target <= curve(lo):
            p_hat, boundary = lo, True
        elif target >= curve(hi):
            p_hat, boundary = hi, target > curve(hi)
        else:
            while hi - lo > xtol:
                mid = 0.5 * (lo + hi)
                if curve(mid) < target:
                    lo = mid
                else:
                    hi = mid
            p_hat = lo if abs(curve(lo) - target) < abs(curve(hi) - target) else hi
    evaluations = tuple(sorted(cache.items()))
    return PEstimate(p_hat, curve(p_hat), target, method, evaluations, bool(boundary))


# -- the two-level model's h (docs/two_level_model.md) --------------------------------


def per_copy_stability(subsets: np.ndarray, n_feature: int, *, index: str = "jaccard") -> np.ndarray:
    """The stability of the weak selectors *within* each ensemble copy, one value per copy.

    ``subsets`` has shape (copies, selectors per copy, n_target): the copies' weak
    selectors' top subsets. The selectors of one copy share its data, and agree more
    than those of two copies.
    """
    check_choice(index, "index", INDICES)
    subsets = np.asarray(subsets)
    if subsets.ndim != 3 or subsets.shape[1] < 2:
        raise InvalidParameterError(
            f"subsets must have shape (copies, >= 2 selectors per copy, n_target); got {subsets.shape}"
        )
    return np.array([stability_of_subsets(c, n_feature, index) for c in subsets])


def within_copy_stability(subsets: np.ndarray, n_feature: int, *, index: str = "jaccard") -> float:
    """Mean over the copies of :func:`per_copy_stability`: the statistic the two-level
    model's ``h`` is fitted to."""
    return float(np.mean(per_copy_stability(subsets, n_feature, index=index)))


@dataclass(frozen=True)
class HEstimate:
    """The two-level model's ``h``, fitted to a within-copy stability."""

    h: int
    stability: float  # simulated within-copy stability at h
    target: float
    at_boundary: bool  # the target is outside what any h in [n_target, n_useful] gives


def estimate_h(
    target_stability: float,
    n_feature: int,
    n_target: int,
    n_useful: int,
    p: float,
    *,
    design: tuple[int, int] = (200, 5),
    index: str = "jaccard",
    seed: SeedLike = 0,
) -> HEstimate:
    """The ``h`` whose simulated within-copy stability is closest to ``target_stability``.

    The simulated within-copy stability falls as ``h`` grows (a larger ``H`` leaves the
    selectors of a copy less in common), from ``h = n_target`` (every selector of a copy
    draws the same ``S_m``) to ``h = n_useful`` (the paper's model: no copy effect).
    Bisection over the integers keeps a bracket, every evaluation with the same seed.

    Parameters
    ----------
    target_stability : float
        :func:`within_copy_stability` of the real copies, same ``index``.
    design : (int, int)
        ``(copies, copy_size)``: simulated copies, and weak selectors per copy, behind
        each evaluation.
    """
    low, high = index_range(index)
    target = check_real(target_stability, "target_stability", minimum=low, maximum=high)
    n_feature, n_target, n_useful, p = check_simulator(n_feature, n_target, n_useful, p)
    copies, copy_size = design
    copy_size = check_int(copy_size, "copy_size", minimum=2)
    copies = check_int(copies, "copies", minimum=1)
    ss = as_seed_sequence(seed)
    cache: dict[int, float] = {}

    def curve(h: int) -> float:
        if h not in cache:
            ranks = simulate_rankings(
                n_feature,
                n_target,
                n_useful,
                p,
                size=copies * copy_size,
                seed=ss,
                variant="two-level",
                h=h,
                copy_size=copy_size,
            )
            subsets = top_subsets(ranks, n_target).reshape(copies, copy_size, n_target)
            cache[h] = within_copy_stability(subsets, n_feature, index=index)
        return cache[h]

    lo, hi = n_target, n_useful
    if target >= curve(lo):
        return HEstimate(lo, curve(lo), target, target > curve(lo))
    if target <= curve(hi):
        return HEstimate(hi, curve(hi), target, target < curve(hi))
    while hi - lo > 1:  # curve(lo) > target > curve(hi)
        mid = (lo + hi) // 2
        if curve(mid) > target:
            lo = mid
        else:
            hi = mid
    h = lo if abs(curve(lo) - target) < abs(curve(hi) - target) else hi
    return HEstimate(h, curve(h), target, False)
