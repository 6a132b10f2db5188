"""Ensemble algorithms E: rankings in, ``n_target`` features out (docs/method.md section 3).

Every aggregate is turned into an integer score per feature (lower is better) so that
exact ties stay exact ties, and ties are broken uniformly at random, never by feature
index: ``S'`` is the first ``n_useful`` indices, so an index tie-break would inflate the
simulated stability.

* ``mean_rank`` (default): sum of ranks (same order as the mean rank).
* ``median_rank``: twice the median rank (an integer even for even ``m_ensemble``).
* ``vote``: minus the number of weak selectors whose top ``n_target`` holds the feature.
* ``reciprocal_rank``: the sum of ``1/rank``, higher is better. It is computed in fixed
  point, ``floor(2**b / rank)`` summed, which is within ``m`` units of the exact sum;
  the features near the cut-off (within that error) are then settled with exact
  rational sums, so exact ties (1/3 + 1/6 = 1/4 + 1/4) are broken at random too.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ensstab_dask.checks import AGGREGATES, check_choice, check_int
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.seeding import SeedLike, make_rng

__all__ = ["aggregate_rankings", "copy_ensembles", "ensemble_scores", "top_k", "rank_scores"]


def ensemble_scores(ranks: np.ndarray, n_target: int, aggregate: str = "mean_rank") -> np.ndarray:
    """Integer scores (lower is better) of ``ranks`` of shape (..., m_ensemble, n_feature).

    For ``reciprocal_rank`` the score is the fixed-point sum, exact only up to ``m``
    units; :func:`aggregate_rankings` settles the features near the cut-off exactly.
    """
    check_choice(aggregate, "aggregate", AGGREGATES)
    ranks = np.asarray(ranks)
    if aggregate == "mean_rank":
        return ranks.sum(axis=-2, dtype=np.int64)
    if aggregate == "median_rank":
        # 2 * median is an exact integer: ranks are far below 2**52.
        return np.rint(2.0 * np.median(ranks, axis=-2)).astype(np.int64)
    if aggregate == "vote":
        return -(ranks <= n_target).sum(axis=-2, dtype=np.int64)
    return -_reciprocal_fixed_point(ranks)


def _reciprocal_fixed_point(ranks: np.ndarray) -> np.ndarray:
    """sum_j floor(2**b / rank_j) >= 0: within m units below 2**b * the exact sum."""
    m = ranks.shape[-2]
    bits = 62 - int(np.ceil(np.log2(m + 1)))
    return ((np.int64(1) << np.int64(bits)) // ranks.astype(np.int64)).sum(axis=-2, dtype=np.int64)


def _random_keys(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """A uniformly random permutation of range(n) in each row: exact tie-break keys."""
    perm = np.broadcast_to(np.arange(shape[1], dtype=np.int64), shape).copy()
    rng.permuted(perm, axis=1, out=perm)
    return perm


def _top_k_reciprocal(ranks: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Exact reciprocal-rank top-k of (n_ensembles, m, n_feature) ranks, random tie-break."""
    m = ranks.shape[-2]
    fixed = _reciprocal_fixed_point(ranks)  # exact * 2**b lies in [fixed, fixed + m)
    keys = _random_keys(rng, fixed.shape)
    n = fixed.shape[-1]
    out = np.empty((len(fixed), k), dtype=np.int64)
    for e, (row, key) in enumerate(zip(fixed, keys)):
        v = np.partition(row, n - k)[n - k]  # k-th largest fixed-point sum
        # The exact k-th largest lies in [v, v + m): rows at or above v + m are surely in,
        # rows at or below v - m surely out; the rest are compared exactly.
        sure = np.flatnonzero(row >= v + m)
        maybe = np.flatnonzero((row > v - m) & (row < v + m))
        exact = {f: sum((Fraction(1, int(r)) for r in ranks[e, :, f]), Fraction(0)) for f in maybe}
        chosen = sorted(maybe, key=lambda f: (-exact[f], key[f]))[: k - len(sure)]
        out[e] = np.sort(np.concatenate([sure, np.asarray(chosen, dtype=np.int64)]))
    return out


def top_k(scores: np.ndarray, k: int, *, seed: SeedLike = 0) -> np.ndarray:
    """Indices of the ``k`` lowest scores of each row, ties broken uniformly at random.

    Parameters
    ----------
    scores : array of shape (..., n_feature)
        Any real dtype; exact equality defines a tie.
    k : int
        How many to keep, ``1 <= k <= n_feature``.
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)
        Consumed for one random permutation of the features per row.

    Returns
    -------
    ndarray of int64, shape (..., k), each row sorted.

    Examples
    --------
    >>> import numpy as np
    >>> import ensstab_dask as es
    >>> es.top_k(np.array([0.5, 0.1, 0.9, 0.2]), 2).tolist()
    [1, 3]
    >>> es.top_k(np.zeros((3, 10)), 4).shape  # one row of 4 per input row
    (3, 4)

    Feature 0 is always kept; the three tied features share the other place at random:

    >>> sorted({tuple(es.top_k(np.array([0, 1, 1, 1]), 2, seed=s).tolist()) for s in range(20)})
    [(0, 1), (0, 2), (0, 3)]
    """
    scores = np.asarray(scores)
    n = scores.shape[-1]
    k = check_int(k, "k", minimum=1, maximum=n)
    if np.issubdtype(scores.dtype, np.floating) and np.isnan(scores).any():
        raise InvalidParameterError("scores must not contain NaN")
    rng = seed if isinstance(seed, np.random.Generator) else make_rng(seed)
    lead = scores.shape[:-1]
    flat = scores.reshape(-1, n)
    perm = _random_keys(rng, flat.shape)
    if k == n:
        chosen = np.broadcast_to(np.arange(n), flat.shape)
    else:
        # Everything strictly better than the k-th value is in; among the tied at that
        # value the ones with the smallest random key are: a uniform subset of the ties.
        kth = np.partition(flat, k - 1, axis=1)[:, k - 1 : k]
        key = np.where(flat < kth, -1, np.where(flat == kth, perm, n))
        chosen = np.argpartition(key, k - 1, axis=1)[:, :k]
    return np.sort(chosen, axis=1).reshape(*lead, k).astype(np.int64)


def aggregate_rankings(
    ranks: np.ndarray, n_target: int, *, aggregate: str = "mean_rank", seed: SeedLike = 0
) -> np.ndarray:
    """The ``n_target`` features an ensemble keeps.

    Parameters
    ----------
    ranks : int array of shape (m_ensemble, n_feature) or (n_ensembles, m_ensemble, n_feature)
        Ranks 1..n_feature of each weak selector.
    n_target : int
        Features the ensemble keeps.
    aggregate : {'mean_rank', 'median_rank', 'vote', 'reciprocal_rank'}
        How the ranks are combined (see the module docstring).
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)
        For the random tie-break.

    Returns
    -------
    ndarray of int64, shape (n_target,) or (n_ensembles, n_target), sorted.

    Examples
    --------
    >>> import numpy as np
    >>> import ensstab_dask as es
    >>> ranks = np.array([[1, 2, 3, 4, 5], [2, 1, 3, 5, 4], [1, 3, 2, 4, 5]])  # 3 selectors, 5 features
    >>> es.aggregate_rankings(ranks, 2).tolist()
    [0, 1]
    >>> es.aggregate_rankings(ranks, 2, aggregate="vote").tolist()
    [0, 1]

    Ties are broken at random, not by feature index:

    >>> tied = np.array([[1, 2, 3], [2, 1, 3]])
    >>> sorted({int(es.aggregate_rankings(tied, 1, seed=s)[0]) for s in range(20)})
    [0, 1]

    Many ensembles at once, here 4 ensembles of 3 simulated selectors:

    >>> many = es.simulate_rankings(50, 5, 10, 0.8, size=12, seed=0).reshape(4, 3, 50)
    >>> es.aggregate_rankings(many, 5).shape
    (4, 5)
    """
    ranks = np.asarray(ranks)
    if ranks.ndim not in (2, 3):
        raise InvalidParameterError(
            f"ranks must have shape (m_ensemble, n_feature) or (n_ensembles, m_ensemble, n_feature); got {ranks.shape}"
        )
    if not np.issubdtype(ranks.dtype, np.integer):
        raise InvalidParameterError(f"ranks must hold integer ranks; got dtype {ranks.dtype}")
    n_feature = ranks.shape[-1]
    n_target = check_int(n_target, "n_target", minimum=1, maximum=n_feature)
    if ranks.size and (ranks.min() < 1 or ranks.max() > n_feature):
        raise InvalidParameterError(f"ranks must lie in [1, {n_feature}]")
    check_choice(aggregate, "aggregate", AGGREGATES)
    if aggregate == "reciprocal_rank":
        rng = seed if isinstance(seed, np.random.Generator) else make_rng(seed)
        lead = ranks.shape[:-2]
        flat = ranks.reshape(-1, *ranks.shape[-2:])
        return _top_k_reciprocal(flat, n_target, rng).reshape(*lead, n_target)
    return top_k(ensemble_scores(ranks, n_target, aggregate), n_target, seed=seed)


def rank_scores(scores: np.ndarray, *, seed: SeedLike = 0, descending: bool = True) -> np.ndarray:
    """Ranks 1..n (1 = best) of the scores of each row, ties broken uniformly at random.

    Used for real selectors, whose importances tie often (a random forest gives most
    features importance 0).

    Parameters
    ----------
    scores : array of shape (..., n_feature)
        Real scores, no NaN; exact equality defines a tie.
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)
        For the random tie-break.
    descending : bool
        True (default): the highest score gets rank 1 (importances); False: the lowest
        (p-values, errors).

    Returns
    -------
    ndarray of int64, the shape of ``scores``
        Each row a permutation of 1..n_feature.

    Examples
    --------
    >>> import numpy as np
    >>> import ensstab_dask as es
    >>> es.rank_scores(np.array([0.2, 0.9, 0.5])).tolist()
    [3, 1, 2]
    >>> es.rank_scores(np.array([0.2, 0.9, 0.5]), descending=False).tolist()
    [1, 3, 2]
    >>> ranks = es.rank_scores(np.array([0.0, 0.0, 1.0]))  # features 0 and 1 tie
    >>> int(ranks[2]), sorted(ranks.tolist())
    (1, [1, 2, 3])
    """
    scores = np.asarray(scores, dtype=np.float64)
    if np.isnan(scores).any():
        raise InvalidParameterError("scores must not contain NaN")
    rng = seed if isinstance(seed, np.random.Generator) else make_rng(seed)
    lead, n = scores.shape[:-1], scores.shape[-1]
    flat = scores.reshape(-1, n)
    key = -flat if descending else flat
    perm = _random_keys(rng, flat.shape)
    order = np.lexsort((perm, key), axis=-1)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, n + 1)[None, :].repeat(len(flat), 0), axis=1)
    return ranks.reshape(*lead, n).astype(np.int64)


def copy_ensembles(
    ranks: np.ndarray, n_target: int, m: int, rng: np.random.Generator, *, aggregate: str = "mean_rank"
) -> np.ndarray:
    """What each real ensemble copy's ensemble of ``m`` weak selectors keeps: ``m`` of its
    ``B`` members drawn at random (all of them at ``m = B``), aggregated, the top
    ``n_target`` taken.

    The one way copies become ensembles: the estimate's measured curve, the features'
    selection frequencies and the naive check (which passes each copy's first ``m``
    members, so ``m = B``) all call it, so they share the members' law, the aggregation
    and its tie-breaks.

    Parameters
    ----------
    ranks : int array, shape (G, B, n_feature)
        Ranks of the ``B`` weak selectors of each of ``G`` copies.
    n_target : int
        Features an ensemble keeps.
    m : int
        Members per ensemble, in ``[1, B]``.
    rng : numpy.random.Generator
        Consumed for the members of each copy in turn, then for the tie-breaks.
    aggregate : str
        The ensemble algorithm (:func:`aggregate_rankings`).

    Returns
    -------
    ndarray of int64, shape (G, n_target)
        One ensemble per copy, each row sorted.

    Examples
    --------
    >>> import numpy as np
    >>> import ensstab_dask as es
    >>> ranks = es.simulate_rankings(30, 5, 10, 0.8, size=12, seed=0).reshape(3, 4, 30)
    >>> copy_ensembles(ranks, 5, 2, np.random.default_rng(0)).shape  # 3 copies, 5 features each
    (3, 5)
    """
    G, B, _ = ranks.shape
    chosen = np.stack([ranks[c, np.sort(rng.choice(B, m, replace=False))] for c in range(G)])
    return aggregate_rankings(chosen, n_target, aggregate=aggregate, seed=rng)
