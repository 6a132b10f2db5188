"""The stability of a collection of feature subsets and its pairwise similarities, for
any index of the registry: the checked public functions (:func:`stability`,
:func:`pairwise_similarity`) and the unchecked fast paths the package's own callers use.
"""

from __future__ import annotations

import numpy as np

from ensstab_dask.checks import check_choice, check_int, check_subsets, membership
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices.registry import INDICES, PAIRWISE_INDICES, check_sizes

__all__ = [
    "stability",
    "pairwise_similarity",
    "stability_of_subsets",
    "similarity_matrix",
    "similarity_of_intersections",
]


def similarity_matrix(z: np.ndarray, n_feature: int, index: str) -> np.ndarray:
    """Pairwise similarity matrix of the 0/1 membership matrix ``z`` (float, not boolean:
    a boolean product would not count), unchecked: the fast path for callers that built
    ``z`` themselves."""
    return similarity_of_intersections(z @ z.T, n_feature, index)


def similarity_of_intersections(
    inter: np.ndarray, n_feature: int, index: str, *, size: np.ndarray | None = None
) -> np.ndarray:
    """Pairwise similarities from the matrix of intersection sizes (U, U), the subsets' sizes
    on its diagonal; or from a stack of them (..., U, U) and the ``size`` (U,) of each
    subset."""
    record = INDICES.get(index)
    if record is None or record.similarity is None:
        raise InvalidParameterError(f"no pairwise form for index {index!r}")
    inter = inter.astype(np.float64)
    size = np.diag(inter).copy() if size is None else np.asarray(size, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return record.similarity(inter, size, n_feature)


def stability_of_subsets(subsets: np.ndarray, n_feature: int, index: str) -> float:
    """The stability of an already valid (n_subsets, k) integer array of distinct indices,
    unchecked: the fast path for the package's own callers (:func:`stability` checks).

    Intersections are counted by gathering, not by a BLAS product: exact, and no BLAS
    threads to oversubscribe the cores of a worker running many of these.
    """
    U = len(subsets)
    z = np.zeros((U, n_feature), dtype=bool)
    z[np.arange(U)[:, None], subsets] = True
    of_membership = INDICES[index].of_membership
    if of_membership is not None:
        return of_membership(z.astype(np.float64))
    inter = z[:, subsets].sum(axis=2)
    sim = similarity_of_intersections(inter, n_feature, index)
    return float((sim.sum() - np.trace(sim)) / (U * (U - 1)))


def _stability_of_membership(z: np.ndarray, n_feature: int, index: str) -> float:
    of_membership = INDICES[index].of_membership
    if of_membership is not None:
        return of_membership(z)
    sim = similarity_matrix(z, n_feature, index)
    U = len(z)
    return float((sim.sum() - np.trace(sim)) / (U * (U - 1)))


def stability(subsets, n_feature: int, *, index: str = "jaccard") -> float:
    """Stability of the feature subsets chosen by independent runs of a selector.

    Parameters
    ----------
    subsets : 2-D int array, boolean (n_subsets, n_feature) matrix, or sequence of sequences
        At least two subsets of feature indices in ``[0, n_feature)``.
    n_feature : int
        Number of features the subsets were chosen from.
    index : str, default 'jaccard'
        One of :data:`~ensstab_dask.indices.INDICES` ('jaccard', 'dice', 'kuncheva',
        'nogueira' and any registered there); pairwise indices are averaged over all
        pairs ``i < j``.

    Returns
    -------
    float
        The stability: 1 when every subset is the same.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> subsets = [[0, 1, 2], [0, 1, 3]]  # two runs that share 2 of their 3 features
    >>> es.stability(subsets, 10)
    0.5
    >>> round(es.stability(subsets, 10, index="dice"), 3)
    0.667
    >>> round(es.stability(subsets, 10, index="kuncheva"), 3)
    0.524
    >>> es.stability([[4, 5], [4, 5], [4, 5]], 10)
    1.0
    """
    check_choice(index, "index", INDICES)
    n_feature = check_int(n_feature, "n_feature", minimum=1)
    rows = check_subsets(subsets, n_feature, min_count=2)
    check_sizes(rows, n_feature, index)
    return _stability_of_membership(membership(rows, n_feature), n_feature, index)


def pairwise_similarity(subsets, n_feature: int, *, index: str = "jaccard") -> np.ndarray:
    """The (n_subsets, n_subsets) matrix of pairwise similarities (not for 'nogueira').

    Parameters
    ----------
    subsets : 2-D int array, boolean (n_subsets, n_feature) matrix, or sequence of sequences
        At least one subset of feature indices in ``[0, n_feature)``.
    n_feature : int
        Number of features the subsets were chosen from.
    index : str, default 'jaccard'
        One of :data:`~ensstab_dask.indices.PAIRWISE_INDICES` ('jaccard', 'dice',
        'kuncheva' and any registered with a pairwise similarity).

    Returns
    -------
    ndarray of float64, shape (n_subsets, n_subsets)
        Symmetric; the off-diagonal mean is :func:`stability`.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> sim = es.pairwise_similarity([[0, 1, 2], [0, 1, 3], [4, 5, 6]], 10)
    >>> sim.round(3).tolist()
    [[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    check_choice(index, "index", PAIRWISE_INDICES)
    rows = check_subsets(subsets, n_feature, min_count=1)
    check_sizes(rows, n_feature, index)
    return similarity_matrix(membership(rows, n_feature), n_feature, index)
