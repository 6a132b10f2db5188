"""The stability of real ensembles measured on a few real ensemble copies, and its extrapolation.

``G`` real ensemble copies of ``B`` weak selectors in the naive check's own layout (each
copy its own random half of the data, its weak selectors bootstrap samples of that
half; :func:`~ensstab_dask.real.naive.real_ensemble_runs`) are a small naive check: for every
``m <= B`` the stability of real ensembles of ``m`` weak selectors is a mean over pairs
of copies, measured without any model (docs/method.md section 11; docs/anchored_model.md).

* :func:`~ensstab_dask.aggregation.copy_ensembles` (one place for the measured curve, the
  features' selection frequencies and the naive check): what each copy's real ensemble of
  ``m`` of its weak selectors keeps.
* :func:`copy_similarities`: per size ``m``, the matrix of similarities between the
  copies' ensembles of ``m``, averaged over several random choices of the ``m``
  members of each copy (every choice is an ensemble of ``m`` independent weak selectors
  of that copy, so the average has the naive check's expectation and less noise).
* :func:`pair_means`: the stability (mean over pairs of distinct copies) of the copies
  or of bootstrap replicates of them, all at once from those matrices: a bootstrap of
  the copies costs no new aggregation.
* :func:`curve_covariance`, :func:`fit_root_law`, :func:`root_law_weights`: beyond ``B``,
  the law ``S(m) = a - b sqrt(c + 1/m)``, ``c >= 0``, that docs/method.md section 14.1
  derives (like ``1 / m`` when the copies' limits differ, like ``1 / sqrt(m)`` when they
  do not), fitted by generalised least squares under the copies' covariance of the
  curve, ``c`` on a grid (:data:`ROOT_C`).
* :func:`extrapolate`, :func:`extrapolation_weights`: the least-squares line in
  ``1 / sqrt(m)``, the law at ``c = 0``.
"""

from __future__ import annotations

import numpy as np

from ensstab_dask.checks import check_choice
from ensstab_dask.indices import PAIRWISE_INDICES, pair_means_without_each, u_statistic_se
from ensstab_dask.models.member_arcs import ArcDesign, arc_tops, pair_similarities
from ensstab_dask.seeding import SeedLike

__all__ = [
    "copy_similarities",
    "pair_means",
    "curve_covariance",
    "extrapolate",
    "extrapolation_weights",
    "fit_sizes",
    "law_sizes",
    "root_law_weights",
    "fit_root_law",
    "ROOT_C",
    "weighted",
]

#: The values of ``c`` the law ``a - b sqrt(c + 1/m)`` is fitted over: 0 (the line in
#: ``1 / sqrt(m)``) up to 10, which is the line in ``1 / m`` to within the noise at the
#: sizes measured (docs/method.md section 14.1).
ROOT_C = np.concatenate([[0.0], np.geomspace(1e-4, 10.0, 60)])
#: How far the copies' covariance of the measured curve is shrunk towards its diagonal
#: before it weighs the fit: from 10 copies, the covariance of 20 sizes is singular.
COV_SHRINK = 0.5


def copy_similarities(
    ranks: np.ndarray,
    n_target: int,
    sizes,
    *,
    draws: int = 8,
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    seed: SeedLike = 0,
) -> np.ndarray:
    """Similarities between the copies' real ensembles, per ensemble size.

    Each of ``draws`` draws is one random circular order of each copy's ``B`` members, its
    ensembles of ``m`` the ``B`` arcs of ``m`` consecutive members (one at ``m = B``), each
    a uniformly random ``m``-subset of the copy's members, every member in exactly ``m``
    of them (:mod:`~ensstab_dask.models.member_arcs`); copies' arcs of the same draw and
    place are paired.

    Parameters
    ----------
    ranks : int array, shape (G, B, n_feature)
        Ranks of the ``B`` weak selectors of each of ``G`` real copies.
    n_target : int
        Features an ensemble keeps.
    sizes : sequence of int
        Ensemble sizes, each in ``[1, B]``.
    draws : int
        Random circular orders of the members of each copy.
    aggregate, index : str
        The ensemble algorithm and a pairwise stability index.
    seed : int, SeedSequence or Generator
        For the orders and the aggregation's tie-breaks.

    Returns
    -------
    ndarray, shape (len(sizes), G, G)
        Symmetric; the diagonal is meaningless (a copy against itself) and set to NaN.
    """
    check_choice(index, "index", PAIRWISE_INDICES)
    ranks = np.asarray(ranks)
    tops = arc_tops(ranks, ArcDesign.of(n_target, sizes, draws, seed, aggregate=aggregate))
    return pair_similarities(tops, ranks.shape[-1], index)


def pair_means(sim: np.ndarray, ids: np.ndarray | None = None) -> np.ndarray:
    """Mean similarity over pairs of distinct copies, per size.

    ``sim``: (sizes, G, G) from :func:`copy_similarities`. ``ids``: None for the copies
    themselves, or (n_boot, G) bootstrap draws of copy indices; a pair of two draws of
    one copy is left out (it is not a pair of independent copies), every other pair
    counts as often as it was drawn: the bootstrap of a U-statistic.

    Returns (sizes,) or (n_boot, sizes).
    """
    G = sim.shape[1]
    if ids is None:
        off = ~np.eye(G, dtype=bool)
        return sim[:, off].mean(axis=1)
    ids = np.asarray(ids)
    a, b = ids[:, :, None], ids[:, None, :]
    other = a != b  # (n_boot, G, G)
    picked = sim[:, a, b]  # (sizes, n_boot, G, G)
    picked = np.where(other[None], picked, 0.0)
    return (picked.sum(axis=(2, 3)) / other.sum(axis=(1, 2))[None]).T


def fit_sizes(top: int) -> list[int]:
    """The measured sizes an extrapolation from ``top`` fits: ``[ceil(top / 2), top]``
    (the upper half, nearest the sizes extrapolated to), at least two of them."""
    lo = min(max(1, -(-top // 2)), top - 1)
    return list(range(lo, top + 1))


def extrapolation_weights(sizes, targets) -> np.ndarray:
    """The least-squares line in ``1 / sqrt(m)`` through values at ``sizes``, evaluated at
    ``targets``, as weights: (len(targets), len(sizes)). The extrapolation is linear in the
    measured values, so its standard error is that of a U-statistic (:func:`weighted`)."""
    x = 1.0 / np.sqrt(np.asarray(sizes, dtype=float))
    design = np.column_stack([np.ones_like(x), x])
    at = np.column_stack([np.ones(len(targets)), 1.0 / np.sqrt(np.asarray(targets, dtype=float))])
    return at @ np.linalg.pinv(design)


def curve_covariance(sim: np.ndarray) -> np.ndarray:
    """The covariance of the measured curve over its sizes, (sizes, sizes): the jackknife
    over copies of the means over pairs (``sim`` from :func:`copy_similarities`)."""
    G = sim.shape[1]
    loo = pair_means_without_each(sim)  # (sizes, G): without copy g
    dev = loo - loo.mean(axis=1, keepdims=True)
    return (G - 1) / G * dev @ dev.T


def law_sizes(top: int) -> list[int]:
    """The measured sizes the law is fitted to from ``top``: ``[ceil(top / 4), top]``. The
    law holds to first order in the noise level (docs/method.md section 14.1), so the
    smallest ensembles, whose noise is largest, are left out; at least three sizes."""
    lo = min(max(1, -(-top // 4)), top - 2)
    return list(range(max(lo, 1), top + 1))


def _law_design(sizes, c: float) -> np.ndarray:
    m = np.asarray(sizes, dtype=float)
    return np.column_stack([np.ones_like(m), -np.sqrt(c + 1.0 / m)])


def _fit_weight(cov: np.ndarray) -> np.ndarray:
    """The inverse of the covariance shrunk towards its diagonal (:data:`COV_SHRINK`)."""
    cov = np.asarray(cov, dtype=float)
    shrunk = (1.0 - COV_SHRINK) * cov + COV_SHRINK * np.diag(np.diag(cov))
    scale = max(float(np.trace(shrunk)) / len(cov), 1e-300)
    return np.linalg.pinv(shrunk + 1e-9 * scale * np.eye(len(cov)))


def root_law_weights(sizes, cov: np.ndarray, targets, c: float) -> np.ndarray:
    """``a - b sqrt(c + 1/m)`` at ``targets``, fitted by generalised least squares to
    values at ``sizes`` (covariance ``cov``), as weights: (len(targets), len(sizes)).
    Linear in the measured values at a given ``c``, so its standard error is that of a
    U-statistic (:func:`weighted`)."""
    X, w = _law_design(sizes, c), _fit_weight(cov)
    return _law_design(targets, c) @ np.linalg.solve(X.T @ w @ X, X.T @ w)


def fit_root_law(sizes, values: np.ndarray, cov: np.ndarray) -> np.ndarray | float:
    """The ``c`` of :data:`ROOT_C` whose law fits ``values`` at ``sizes`` best (the smallest
    generalised residual), for one curve (a float) or each row of ``values`` (an array);
    0 where fewer than three sizes leave nothing to choose."""
    values = np.asarray(values, dtype=float)
    rows = np.atleast_2d(values)
    if len(sizes) < 3:
        best = np.zeros(len(rows))
    else:
        w = _fit_weight(cov)
        rss = []
        for c in ROOT_C:
            r = rows - rows @ root_law_weights(sizes, cov, sizes, c).T
            rss.append(np.einsum("ij,jk,ik->i", r, w, r))
        best = ROOT_C[np.argmin(np.array(rss), axis=0)]
    return best if values.ndim == 2 else float(best[0])


def extrapolate(sizes, values: np.ndarray, targets) -> np.ndarray:
    """:func:`extrapolation_weights` applied to ``values``: (len(sizes),) or (n, len(sizes))."""
    return np.asarray(values, dtype=float) @ extrapolation_weights(sizes, targets).T


def weighted(sim: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """A linear combination of the measured stabilities (``weights`` over the sizes of
    ``sim``) and its standard error: the mean over pairs of copies of the combined kernel
    is a U-statistic (:func:`~ensstab_dask.indices.u_statistic_se`)."""
    kernel = np.tensordot(np.asarray(weights, dtype=float), np.nan_to_num(sim), axes=1)
    G = kernel.shape[0]
    off = ~np.eye(G, dtype=bool)
    return float(kernel[off].mean()), (u_statistic_se(kernel) if G >= 4 else float("nan"))
