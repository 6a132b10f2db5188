"""Beyond the measured members: the curve from each feature's rank moments, with no law.

An ensemble's score of a feature is the mean of its members' scores (``mean_rank``: the
ranks; ``vote``: minus the top-``n_target`` indicator; :func:`member_scores`). Given the
copy (its half of the data), the members are independent draws, so an ensemble of ``m``
members of copy ``c`` scores feature ``f`` as the copy's limit ``L[c, f]`` plus a member
noise of variance ``sigma2[f] / m``. ``G`` copies of ``B`` members measure both: the
pooled within-copy variance of the members' scores is ``sigma2`` (``G (B - 1)`` degrees of
freedom), and the between-copy variance of the copies' means is ``V = var(L) + sigma2 /
B``. An ensemble of ``m`` has the between-copy variance ``V - sigma2 / B + sigma2 / m``,
a ``lambda^2 = 1 - sigma2 / (B V) (1 - B / m)`` share of ``V``: each copy's means, shrunk
towards the mean of the other copies by ``lambda``, are a pseudo-copy of an ensemble of
``m``, and the mean over pairs of copies of their pseudo-copies' similarity is the
stability at ``m`` (:func:`moment_curve`). At ``m = B``, ``lambda = 1`` and the pseudo-copy
is the copy's own ensemble of all its members: the prediction starts where the
measurement ends, and it climbs only as far as each feature's noise, measured, says
averaging can take it; a curve whose copies already agree (``sigma2 / B`` small against
``V``) stays flat.

Two refinements, both chosen on the synthetic harness at seed 0
(benchmarks/results/beyond-b.md):

* ``V`` of one feature has only ``G - 1`` degrees of freedom; it is pooled with the
  ``V`` of the :data:`WINDOW` features either side in the order of the mean score, at
  :data:`PRIOR_DF` degrees of freedom (partial pooling: a feature whose copies differ far
  more than its neighbours' keeps most of its own). Each pair's centre leaves the pair
  out, so that neither copy is shrunk towards itself.
* The shrinkage is non-linear in noisy variances, and the centre is itself noisy; the
  prediction's bias is measured in a Gaussian model world fitted to the copies (the
  means, the pooled variances): :data:`MODEL_DRAWS` sets of ``G`` copies drawn from it
  are predicted exactly as the real ones are, against that world's own curve, and the
  bias is subtracted. Its standard error is the mean of the drawn predictions' spread
  and the jackknife over the real copies (:func:`moment_prediction`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ensstab_dask.indices.measures import similarity_of_intersections
from ensstab_dask.models.member_arcs import member_scores
from ensstab_dask.seeding import SeedLike, make_rng

__all__ = ["CopyMoments", "moment_curve", "moment_prediction", "WINDOW", "PRIOR_DF", "MODEL_DRAWS", "MODEL_COPIES"]

#: Features either side, in the order of the copies' mean score, whose between-copy
#: variances are pooled with a feature's own.
WINDOW = 5
#: The pooled variance's weight against a feature's own (``G - 1`` degrees of freedom).
PRIOR_DF = 9.0
#: Sets of copies drawn from the fitted model world behind the bias and the standard error.
MODEL_DRAWS = 30
#: Pseudo-copies of the model world's own curve (every pair).
MODEL_COPIES = 60


@dataclass(frozen=True)
class CopyMoments:
    """Each copy's mean member score per feature, ``means`` (G, F), and the variance of its
    members' scores, ``variances`` (G, F), of copies of ``members`` weak selectors."""

    means: np.ndarray
    variances: np.ndarray
    members: int

    @property
    def within(self) -> np.ndarray:
        """The pooled within-copy variance of the member scores, (F,)."""
        return self.variances.mean(axis=0)

    @classmethod
    def of(cls, ranks: np.ndarray, n_target: int, aggregate: str) -> CopyMoments | None:
        """The moments of ``ranks`` (G, B, F); None for an aggregate that is not a mean of
        its members' scores (``median_rank``, ``reciprocal_rank``), fewer than 2 members, or
        fewer than 4 copies (each pair's centre is the other copies', and the jackknife
        leaves one out)."""
        scores = member_scores(np.asarray(ranks), n_target, aggregate)
        if scores is None or scores.shape[1] < 2 or scores.shape[0] < 4:
            return None
        x = scores.astype(np.float64)
        return cls(x.mean(axis=1), x.var(axis=1, ddof=1), int(x.shape[1]))

    def without(self, g: int) -> CopyMoments:
        """The moments with copy ``g`` left out."""
        keep = np.arange(len(self.means)) != g
        return CopyMoments(self.means[keep], self.variances[keep], self.members)

    def between(self) -> np.ndarray:
        """Each feature's between-copy variance of the copies' means, pooled with its
        :data:`WINDOW` neighbours' either side (in the order of the mean) at
        :data:`PRIOR_DF` degrees of freedom against its own ``G - 1``."""
        return pooled_between(self.means)


def pooled_between(means: np.ndarray) -> np.ndarray:
    """:meth:`CopyMoments.between` of copies' ``means`` (G, F)."""
    G, F = means.shape
    own = means.var(axis=0, ddof=1)
    order = np.argsort(means.mean(axis=0), kind="stable")
    cum = np.concatenate([[0.0], np.cumsum(own[order])])
    i = np.arange(F)
    lo, hi = np.clip(i - WINDOW, 0, F), np.clip(i + WINDOW + 1, 0, F)
    local = np.empty(F)
    local[order] = (cum[hi] - cum[lo]) / (hi - lo)
    return ((G - 1) * own + PRIOR_DF * local) / (G - 1 + PRIOR_DF)


def _tops(values: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Each row's ``k`` smallest values (ties broken at random), (n, k)."""
    scale = np.maximum(np.abs(values).max(axis=1, keepdims=True), 1.0)
    jittered = values + rng.random(values.shape) * (1e-9 * scale)
    return np.argpartition(jittered, k - 1, axis=1)[:, :k]


def _pair_similarity(a: np.ndarray, b: np.ndarray, n_feature: int, index: str) -> np.ndarray:
    """The similarity of top lists ``a`` and ``b`` (n, k) row by row, (n,)."""
    n, k = a.shape
    inter = np.array([np.intersect1d(x, y, assume_unique=True).size for x, y in zip(a, b)], dtype=np.float64)
    mat = np.empty((n, 2, 2))
    mat[:, 0, 0] = mat[:, 1, 1] = k
    mat[:, 0, 1] = mat[:, 1, 0] = inter
    return similarity_of_intersections(mat, n_feature, index, size=np.full(2, k))[:, 0, 1]


def pair_kernel(
    means: np.ndarray, within: np.ndarray, members: int, m: int, n_target: int, index: str, rng
) -> np.ndarray:
    """The (G, G) matrix of the similarity between copy ``c``'s and copy ``d``'s pseudo-copies
    of an ensemble of ``m`` (the diagonal NaN): each copy's means shrunk by ``lambda``
    towards the mean of the copies other than the pair."""
    G, F = means.shape
    V = pooled_between(means)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam2 = np.where(V > 0, 1.0 - within / (members * V) * (1.0 - members / m), 0.0)
    lam = np.sqrt(np.clip(lam2, 0.0, None))
    ci, di = np.triu_indices(G, 1)
    centre = (means.sum(axis=0) - means[ci] - means[di]) / (G - 2)
    a = _tops(centre + lam * (means[ci] - centre), n_target, rng)
    b = _tops(centre + lam * (means[di] - centre), n_target, rng)
    K = np.full((G, G), np.nan)
    K[ci, di] = K[di, ci] = _pair_similarity(a, b, F, index)
    return K


def moment_curve(moments: CopyMoments, sizes, n_target: int, index: str, seed: SeedLike) -> np.ndarray:
    """The uncorrected moment prediction at each of ``sizes``: the mean over pairs of
    copies of :func:`pair_kernel`, (len(sizes),)."""
    rng = make_rng(seed)
    G = len(moments.means)
    off = ~np.eye(G, dtype=bool)
    within = moments.within
    return np.array(
        [pair_kernel(moments.means, within, moments.members, int(m), n_target, index, rng)[off].mean() for m in sizes]
    )


def _world_curve(mu, spread, sizes, n_target, index, rng) -> np.ndarray:
    """The model world's own stability at ``sizes``: :data:`MODEL_COPIES` independent
    ensembles of each size (every pair)."""
    F = len(mu)
    out = []
    for m in sizes:
        sd = np.sqrt(spread(m))
        top = _tops(mu + sd * rng.standard_normal((MODEL_COPIES, F)), n_target, rng)
        z = np.zeros((MODEL_COPIES, F))
        z[np.arange(MODEL_COPIES)[:, None], top] = 1.0
        sim = similarity_of_intersections(z @ z.T, F, index)
        out.append(sim[~np.eye(MODEL_COPIES, dtype=bool)].mean())
    return np.array(out)


def moment_prediction(
    moments: CopyMoments, sizes, n_target: int, index: str, seed: SeedLike
) -> tuple[np.ndarray, np.ndarray]:
    """The moment prediction at ``sizes``, its bias corrected, and its standard error.

    The model world: feature ``f``'s copy limits are Gaussian around the copies' mean
    score with the between-copy variance :meth:`CopyMoments.between` less
    ``within / B`` (at least 0), its members' noise Gaussian with variance ``within``.
    :data:`MODEL_DRAWS` sets of ``G`` copies' means drawn from it are predicted by
    :func:`moment_curve`; their mean less the world's own curve is the bias. The standard
    error is the mean of two that err in opposite directions on the harness: the drawn
    predictions' standard deviation (times ``sqrt(1 + 1 / MODEL_DRAWS)``, the bias's own
    Monte-Carlo error), which the fitted world understates where the copies differ
    most, and the jackknife over the real copies, which overstates it where they differ
    least (benchmarks/results/beyond-b.md). Returns (point, se), each (len(sizes),).
    """
    rng = make_rng(seed)
    means, within, B = moments.means, moments.within, moments.members
    G, F = means.shape
    mu = means.mean(axis=0)
    limits = np.clip(pooled_between(means) - within / B, 0.0, None)
    raw = moment_curve(moments, sizes, n_target, index, rng)
    truth = _world_curve(mu, lambda m: limits + within / m, sizes, n_target, index, rng)
    drawn = np.empty((MODEL_DRAWS, len(sizes)))
    for r in range(MODEL_DRAWS):
        fake = mu + np.sqrt(limits) * rng.standard_normal((G, F)) + np.sqrt(within / B) * rng.standard_normal((G, F))
        drawn[r] = moment_curve(CopyMoments(fake, np.broadcast_to(within, (G, F)), B), sizes, n_target, index, rng)
    bias = drawn.mean(axis=0) - truth
    world_se = drawn.std(axis=0, ddof=1) * np.sqrt(1.0 + 1.0 / MODEL_DRAWS)
    loo = np.array([moment_curve(moments.without(g), sizes, n_target, index, rng) for g in range(G)])
    jackknife_se = np.sqrt((G - 1) / G * ((loo - loo.mean(axis=0)) ** 2).sum(axis=0))
    return raw - bias, (world_se + jackknife_se) / 2.0
