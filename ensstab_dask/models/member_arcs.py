"""Many real ensembles of each copy at once: random circular orders of its members, and arcs.

The measured curve (:func:`~ensstab_dask.models.measured.copy_similarities`) averages, per
size ``m``, the similarity between the copies' ensembles of ``m`` of their own weak
selectors over many random choices of those members. Here a draw is one random circular
order of each copy's ``B`` members, and its ensembles of ``m`` are the ``B`` arcs of ``m``
consecutive members (one at ``m = B``):

* each arc is a uniformly random ``m``-subset of the copy's members, so the mean over arcs
  has the naive check's expectation; every member is in exactly ``m`` of the ``B`` arcs
  (a balanced design), and the arcs of a draw are nested across sizes (common random
  numbers for the extrapolation's contrasts between sizes);
* an arc's summed scores are a difference of two prefix sums around the circle, so every
  arc of every size costs one subtraction per feature, and the top ``n_target`` of all the
  arcs of a size is one ``argpartition`` over the batch;
* ties are broken by a random order of the features, one per copy and draw: of features
  with equal scores the first visited is kept, which is a uniformly random subset of the
  tied (swapping two tied features in the order swaps their positions and nothing else);
* features that no ensemble of ``m`` can keep are left out before the scores are made
  (:func:`bounds_of`): exact, and most of the features at the larger sizes.

Copy ``g``'s draw ``d`` uses the stream ``derive(seed, d, g)`` alone, so a batch of copies
can run on any worker and nothing depends on how the copies were batched
(:func:`arc_tops`); the pairing of the copies' arcs (:func:`pair_similarities`) is the cheap
part, done where the tops are gathered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ensstab_dask.aggregation import aggregate_rankings
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices.measures import similarity_of_intersections
from ensstab_dask.seeding import SeedLike, as_seed_sequence, make_rng

__all__ = ["ArcDesign", "Bounds", "bounds_of", "arc_tops", "member_scores", "pair_similarities", "PROBE"]

#: Probe features with the best sums in their copy per feature an ensemble keeps, beside
#: each member's own best (:class:`Bounds`): more bound an arc's cut more tightly and cost
#: more to score.
PROBE = 3


@dataclass(frozen=True)
class ArcDesign:
    """What :func:`arc_tops` draws: the ensembles of ``sizes`` (each in ``[1, B]``) that keep
    ``n_target`` features by ``aggregate``, over ``draws`` random circular orders of each
    copy's first ``members`` weak selectors (None: all), from the stream ``seed``."""

    n_target: int
    sizes: tuple[int, ...]
    draws: int
    seed: np.random.SeedSequence
    aggregate: str = "mean_rank"
    members: int | None = None

    @classmethod
    def of(cls, n_target: int, sizes, draws: int, seed: SeedLike, **kw) -> ArcDesign:
        return cls(int(n_target), tuple(int(m) for m in sizes), int(draws), as_seed_sequence(seed), **kw)


def member_scores(ranks: np.ndarray, n_target: int, aggregate: str) -> np.ndarray | None:
    """Per weak selector and feature, what an ensemble's score sums (lower is better), for the
    aggregates that are sums of their members' (:func:`~ensstab_dask.aggregation.ensemble_scores`);
    None for the others."""
    if aggregate == "mean_rank":
        return ranks
    if aggregate == "vote":
        return -(ranks <= n_target).astype(np.int8)
    return None


@dataclass(frozen=True)
class Bounds:
    """What bounds the features an ensemble of ``m`` members of a copy can keep, for an
    aggregate that sums its members' scores (:func:`bounds_of`).

    ``best``: per size and copy, each feature's sum of its ``m`` best scores in the copy, a
    lower bound of its score in any ensemble of ``m`` of the copy's members, (sizes, G,
    n_feature); ``bar``: per size and copy, the ``n_target``-th smallest sum of ``m`` worst
    scores, which the ``n_target``-th best score of every such ensemble is at most, (sizes,
    G); ``probe``: per copy, each member's ``n_target`` best features and the features with
    the best sums over all its members, whose scores in an ensemble bound its
    ``n_target``-th best score again, (G, n_probe), padded with ``n_feature`` (no feature)."""

    best: np.ndarray
    bar: np.ndarray
    probe: np.ndarray


def bounds_of(v: np.ndarray, n_target: int, sizes) -> Bounds:
    """The :class:`Bounds` of the ensembles of each size of each copy, from the members'
    scores ``v`` (G, B, n_feature).

    A feature whose ``m`` best scores sum to more than an upper bound of an ensemble's
    ``n_target``-th best score is beaten by ``n_target`` others in that ensemble, ties
    included: leaving it out changes no ensemble."""
    B, n = v.shape[1], v.shape[2]
    low = np.cumsum(np.sort(v, axis=1), axis=1, dtype=np.int64)  # low[:, m - 1]: the sum of the m best
    total = low[:, -1]
    best = np.stack([low[:, m - 1] for m in sizes])
    worst = np.stack([total - (low[:, B - m - 1] if m < B else 0) for m in sizes])  # the sum of the m worst
    bar = np.partition(worst, n_target - 1, axis=2)[..., n_target - 1]
    n_best = min(n, PROBE * n_target)
    overall = np.argpartition(total, n_best - 1, axis=1)[:, :n_best]
    own = np.argpartition(v, n_target - 1, axis=2)[..., :n_target].reshape(len(v), -1)  # each member's best
    sets = [np.unique(np.concatenate([a, b])) for a, b in zip(overall, own)]
    probe = np.full((len(v), max(len(p) for p in sets)), n)
    for g, p in enumerate(sets):
        probe[g, : len(p)] = p
    return Bounds(best=best, bar=bar, probe=probe)


def arc_tops(ranks: np.ndarray, design: ArcDesign, copies: Sequence[int] | None = None) -> np.ndarray:
    """The features every arc keeps, for the copies ``ranks`` (G', B, n_feature), which are
    the copies ``copies`` of the whole (their streams; default ``0 .. G' - 1``).

    Returns
    -------
    ndarray of int64, shape (G', draws, len(sizes), B', n_target)
        ``B'`` the members used; at ``m = B'`` its one arc is repeated ``B'`` times.
    """
    ranks = np.asarray(ranks)[:, : design.members]
    G, B, _ = ranks.shape
    copies = range(G) if copies is None else copies
    if not all(1 <= m <= B for m in design.sizes):
        raise InvalidParameterError(f"sizes must lie in [1, {B}] (the members used); got {list(design.sizes)}")
    scores = member_scores(ranks, design.n_target, design.aggregate)
    bounds = None if scores is None else bounds_of(scores, design.n_target, design.sizes)
    out = np.empty((G, design.draws, len(design.sizes), B, design.n_target), dtype=np.int64)
    for d in range(design.draws):
        out[:, d] = _one_draw(ranks, design, bounds, [make_rng(design.seed, d, int(g)) for g in copies])
    return out


def _one_draw(ranks: np.ndarray, design: ArcDesign, bounds: Bounds | None, rngs: list) -> np.ndarray:
    """One draw of :func:`arc_tops`, each copy from its own generator of ``rngs``: (G, sizes, B, k)."""
    G, B, n = ranks.shape
    k = design.n_target
    order = np.stack([r.permutation(B) for r in rngs])
    visit = np.stack([r.permutation(n) for r in rngs])  # the tie-break
    ordered = ranks[np.arange(G)[:, None, None], order[:, :, None], visit[:, None, :]]  # (G, B, n)
    v = member_scores(ordered, k, design.aggregate)
    prefix = None if v is None else _prefix_sums(v)
    if bounds is not None:  # the probe features' visited positions, through the inverse of the visiting order
        where = np.full((G, n + 1), n)  # feature n, the padding, at the padding column
        where[np.arange(G)[:, None], visit] = np.arange(n)
        probe = np.take_along_axis(where, bounds.probe, axis=1)
    out = np.empty((G, len(design.sizes), B, k), dtype=np.int64)
    for i, m in enumerate(design.sizes):
        arcs = B if m < B else 1
        if prefix is None or bounds is None:
            members = (np.arange(arcs)[:, None] + np.arange(m)[None]) % B
            top = np.stack(
                [
                    aggregate_rankings(ordered[g, members], k, aggregate=design.aggregate, seed=rng)
                    for g, rng in enumerate(rngs)
                ]
            )
        else:
            top = _sum_tops(prefix, bounds, i, m, arcs, probe, visit, k)
        out[:, i] = np.take_along_axis(visit[:, None, :], top, -1)  # back to features; broadcast at m = B
    return out


def _prefix_sums(v: np.ndarray) -> np.ndarray:
    """Sums of the first ``j`` members around the circle (twice round, less one), (G, 2B,
    n + 1); column ``n`` a feature whose every arc of ``m`` scores ``m (n + 1)``, above any
    real one (a rank is at most ``n``), kept as padding (:func:`_kept_columns`)."""
    G, B, n = v.shape
    wide = np.int32 if 2 * B * (n + 1) < 2**31 else np.int64
    prefix = np.zeros((G, 2 * B, n + 1), dtype=wide)
    np.cumsum(np.concatenate([v, v[:, : B - 1]], axis=1), axis=1, dtype=wide, out=prefix[:, 1:, :n])
    prefix[:, :, n] = np.arange(2 * B) * (n + 1)
    return prefix


def _sum_tops(prefix, bounds: Bounds, i: int, m: int, arcs: int, probe, visit, k: int) -> np.ndarray:
    """The visited positions each arc of ``m`` keeps, (G, arcs, k), for an aggregate that sums.

    Each arc's ``k``-th best score is at most the ``k``-th best among the probe features'
    (``kth``); a copy's features whose ``m`` best scores exceed its largest such bound (or
    the bar) are not scored at all, and of the rest only those an arc's own bound admits
    are ranked: ties included, the kept ones are among them. Ties go to the first visited:
    the key is unique, so what is kept depends on neither of these cuts nor on padding."""
    G, n = visit.shape
    kth = np.partition(_arc_scores(prefix, probe, m, arcs), k - 1, axis=2)[..., k - 1]  # (G, arcs)
    can = bounds.best[i] <= np.minimum(kth.max(axis=1), bounds.bar[i])[:, None]  # (G, n)
    cols = _kept_columns(can, visit, n)  # (G, width), padded with the column no arc keeps
    cols = np.concatenate([cols, np.full((G, 1), n)], axis=1)  # one more: the fill of the cut below
    sliced = cols.shape[1] > n // 5  # a slice of every column costs less than a gather of a fifth
    score = prefix[:, m : m + arcs] - prefix[:, :arcs] if sliced else _arc_scores(prefix, cols, m, arcs)
    width = score.shape[-1]
    admitted = (score <= kth[..., None]).reshape(G * arcs, width)
    where = _kept_columns(admitted, None, width - 1)  # (G arcs, w): places in cols, the fill at the end
    score = np.take_along_axis(score.reshape(G * arcs, width), where, axis=1)
    cols = where if sliced else cols[np.repeat(np.arange(G), arcs)[:, None], where]
    key = score.astype(np.int64) * (n + 1) + cols
    return np.take_along_axis(cols, np.argpartition(key, k - 1, axis=-1)[:, :k], -1).reshape(G, arcs, k)


def _arc_scores(prefix: np.ndarray, cols: np.ndarray, m: int, arcs: int) -> np.ndarray:
    """The summed scores of the first ``arcs`` arcs of ``m`` members at the visited positions
    ``cols`` (G, width) of each copy: (G, arcs, width)."""
    at = np.take_along_axis(prefix, cols[:, None, :], axis=2)  # (G, 2B, width)
    return at[:, m : m + arcs] - at[:, :arcs]


def _kept_columns(mask: np.ndarray, visit: np.ndarray | None, fill: int) -> np.ndarray:
    """Per row, the places that ``mask`` (rows, n) keeps, in order, padded with ``fill`` to
    one width: (rows, width). With ``visit`` (rows, n), a feature mask is read by visited
    position first, so that the places are visited positions."""
    kept = mask if visit is None else np.take_along_axis(mask, visit, axis=1)
    count = kept.sum(axis=1)
    row, col = np.nonzero(kept)  # row by row, each in order
    out = np.full((len(kept), int(count.max())), fill)
    out[row, np.arange(len(col)) - np.repeat(np.cumsum(count) - count, count)] = col
    return out


def pair_similarities(tops: np.ndarray, n_feature: int, index: str) -> np.ndarray:
    """Per size, the mean over draws and arcs of the similarity between copy ``g``'s arc and
    copy ``h``'s arc of the same draw and place, from :func:`arc_tops`' (G, draws, sizes,
    arcs, k): (sizes, G, G), the diagonal NaN.

    Intersections are counted by gathering, not by a BLAS product (exact, and no BLAS
    threads spinning against the other processes of a busy machine), over the at most
    ``G k`` features the copies' arcs of one draw, size and place keep, numbered afresh."""
    G, D, S, A, k = tops.shape
    flat = tops.transpose(1, 2, 3, 0, 4).reshape(D * S * A, G * k)  # one row per draw, size and arc
    order = np.argsort(flat, axis=1)
    ordered = np.take_along_axis(flat, order, axis=1)
    fresh = np.ones(ordered.shape, dtype=bool)
    fresh[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    compact = np.empty_like(order)
    np.put_along_axis(compact, order, np.cumsum(fresh, axis=1) - 1, axis=1)
    compact = compact.reshape(-1, G, k)
    rows = np.arange(len(compact))
    z = np.zeros((len(compact), G, G * k), dtype=bool)
    z[rows[:, None, None], np.arange(G)[None, :, None], compact] = True
    inter = z[rows[:, None, None, None], np.arange(G)[None, None, :, None], compact[:, :, None, :]].sum(-1)
    sim = similarity_of_intersections(inter, n_feature, index, size=np.full(G, k))  # (D S A, G, G)
    out = sim.reshape(D, S, A, G, G).mean(axis=(0, 2))
    for block in out:
        np.fill_diagonal(block, np.nan)
    return out
