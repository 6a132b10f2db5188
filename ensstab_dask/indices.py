"""Stability indices of a collection of feature subsets.

(A private module, re-exported from the package, as scikit-learn does: its name would
otherwise be shadowed by the function :func:`ensstab_dask.stability`.)

* ``jaccard`` (default, docs/method.md section 1): mean over pairs of |a & b| / |a | b|.
* ``dice``: mean over pairs of 2 |a & b| / (|a| + |b|).
* ``kuncheva``: mean over pairs of (r n - k^2) / (k (n - k)), subsets of equal size k.
* ``nogueira``: Nogueira, Sechidis & Brown (JMLR 2018, Definition 4),
  1 - mean_f s_f^2 / ((k/n)(1 - k/n)) with s_f^2 = M/(M-1) p_f (1 - p_f).

For ``nogueira`` :func:`nogueira_stability` also gives the variance of the estimator,
Var = (4 / M^2) sum_i (phi_i - mean phi)^2 with the per-run terms phi_i of the paper's
reference (Python/Matlab) code, a normal confidence interval, and
:func:`nogueira_test` the two-sample test of equal population stabilities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as _stats

from ensstab_dask.checks import check_choice, check_int, check_real, check_subsets, membership
from ensstab_dask.exceptions import InvalidParameterError

__all__ = [
    "INDICES",
    "INDEX_RANGE",
    "PAIRWISE_INDICES",
    "index_range",
    "clip_to_index",
    "stability",
    "pairwise_similarity",
    "nogueira_stability",
    "nogueira_test",
    "NogueiraStability",
    "NogueiraTest",
    "pairwise_stability_se",
    "stability_se",
    "stability_of_subsets",
    "similarity_matrix",
    "u_statistic_se",
    "u_statistic_variance",
    "pair_means_without_each",
    "shared_features",
    "index_of_shared",
]

#: Each stability index by name, with the values it can take: an interval of it is clipped
#: to them. Kuncheva's and Nogueira's are 0 at chance and go below it.
INDEX_RANGE = {"jaccard": (0.0, 1.0), "dice": (0.0, 1.0), "kuncheva": (-1.0, 1.0), "nogueira": (-1.0, 1.0)}
#: The stability indices (``index=``).
INDICES = tuple(INDEX_RANGE)
#: The indices that are a mean over pairs of subsets, with a pairwise similarity (Nogueira's is not).
PAIRWISE_INDICES = ("jaccard", "dice", "kuncheva")


def index_range(index: str | None = None) -> tuple[float, float]:
    """The values ``index`` can take; None: the values some index can take."""
    if index is None:
        return min(lo for lo, _ in INDEX_RANGE.values()), max(hi for _, hi in INDEX_RANGE.values())
    return INDEX_RANGE[check_choice(index, "index", INDICES)]


def clip_to_index(values, index: str) -> np.ndarray:
    """``values`` within the range ``index`` can take (a bootstrap can step outside it)."""
    lo, hi = index_range(index)
    return np.clip(np.asarray(values, dtype=float), lo, hi)


def similarity_matrix(z: np.ndarray, n_feature: int, index: str) -> np.ndarray:
    """Pairwise similarity matrix of the 0/1 membership matrix ``z`` (float, not boolean:
    a boolean product would not count), unchecked: the fast path for callers that built
    ``z`` themselves."""
    return _similarity(z @ z.T, n_feature, index)


def _similarity(inter: np.ndarray, n_feature: int, index: str) -> np.ndarray:
    """Pairwise similarities from the matrix of intersection sizes (sizes on the diagonal)."""
    inter = inter.astype(np.float64)
    size = np.diag(inter).copy()
    a, b = size[:, None], size[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        if index == "jaccard":
            return inter / (a + b - inter)
        if index == "dice":
            return 2.0 * inter / (a + b)
        if index == "kuncheva":
            k = size[0]
            return (inter * n_feature - k * k) / (k * (n_feature - k))
    raise InvalidParameterError(f"no pairwise form for index {index!r}")


def shared_features(value, index: str, n_feature: int, n_target: int, *, clip: bool = True):
    """How many of their ``n_target`` features two selections share when their similarity
    is ``value``: :func:`_similarity` solved for the intersection, for equal sizes.

    Nogueira's index equals the mean pairwise Kuncheva index when every subset has
    ``n_target`` features (Nogueira et al. 2018), so both invert the same way. Each
    mapping is increasing: an interval of the index maps to an interval of the count.
    ``clip=False`` keeps the formula's value beyond ``[0, n_target]`` (a picture's axis
    scale, which must be defined on the whole axis).
    """
    v, k, n = np.asarray(value, dtype=np.float64), float(n_target), float(n_feature)
    if index == "jaccard":
        with np.errstate(divide="ignore", invalid="ignore"):
            out = 2.0 * k * v / (1.0 + v)
    elif index == "dice":
        out = k * v
    else:
        check_choice(index, "index", INDICES)  # kuncheva or nogueira
        out = (v * k * (n - k) + k * k) / n
    # An interval clipped to the index's range can reach below what two selections of k
    # features can score (Kuncheva's floor is -k/(n-k)): no fewer than 0 shared, no more than k.
    return np.clip(out, 0.0, k) if clip else out


def index_of_shared(shared, index: str, n_feature: int, n_target: int):
    """The similarity of two selections of ``n_target`` features that share ``shared`` of
    them: :func:`shared_features` the other way (a picture's second axis, say).

    Examples
    --------
    >>> from ensstab_dask.indices import index_of_shared, shared_features
    >>> float(index_of_shared(10, "jaccard", 2000, 20))  # 10 of 20 shared: 10 / 30
    0.3333333333333333
    >>> float(shared_features(index_of_shared(7.0, "kuncheva", 2000, 20), "kuncheva", 2000, 20))
    7.0
    """
    s, k, n = np.asarray(shared, dtype=np.float64), float(n_target), float(n_feature)
    if index == "jaccard":
        with np.errstate(divide="ignore", invalid="ignore"):
            return s / (2.0 * k - s)
    if index == "dice":
        return s / k
    check_choice(index, "index", INDICES)  # kuncheva or nogueira (see shared_features)
    return (s * n - k * k) / (k * (n - k))


def _nogueira_parts(z: np.ndarray) -> tuple[float, float, np.ndarray]:
    """Stability, variance and per-run terms phi_i (Nogueira et al. 2018)."""
    M, d = z.shape
    pf = z.mean(axis=0)
    k = z.sum(axis=1)
    kbar = k.mean()
    denom = (kbar / d) * (1.0 - kbar / d)
    stab = 1.0 - (M / (M - 1)) * np.mean(pf * (1.0 - pf)) / denom
    phi = ((z @ pf) / d - k * kbar / d**2 + (stab / 2.0) * (2.0 * k * kbar / d**2 - k / d - kbar / d + 1.0)) / denom
    var = 4.0 / M**2 * np.sum((phi - phi.mean()) ** 2)
    return float(stab), float(var), phi


def _check_sizes(rows: list[np.ndarray], n_feature: int, index: str) -> None:
    sizes = np.array([r.size for r in rows])
    if index in ("jaccard", "dice") and (sizes == 0).any():
        raise InvalidParameterError(f"subsets must not be empty for index {index!r}")
    if index == "kuncheva":
        if (sizes != sizes[0]).any():
            raise InvalidParameterError("subsets must all have the same size for index 'kuncheva'")
        if sizes[0] in (0, n_feature):
            raise InvalidParameterError(
                f"index 'kuncheva' needs 0 < subset size < n_feature={n_feature}; got {sizes[0]}"
            )
    if index == "nogueira":
        kbar = sizes.mean()
        if kbar in (0, n_feature):
            raise InvalidParameterError(
                f"index 'nogueira' needs 0 < mean subset size < n_feature={n_feature}; got {kbar}"
            )


def jackknife_std(subsets: np.ndarray, n_feature: int, index: str = "jaccard") -> float:
    """Jackknife standard error of the stability of ``subsets`` (leave one run out).

    The sampling error of a measured stability, for any index; for ``nogueira`` the
    analytic variance of :func:`nogueira_stability` is the usual alternative.
    """
    subsets = np.asarray(subsets)
    U = len(subsets)
    if U < 3:
        raise InvalidParameterError(f"the jackknife needs at least 3 subsets; got {U}")
    loo = np.array([stability_of_subsets(np.delete(subsets, i, axis=0), n_feature, index) for i in range(U)])
    return float(np.sqrt((U - 1) / U * np.sum((loo - loo.mean()) ** 2)))


def pairwise_stability_se(subsets: np.ndarray, n_feature: int, index: str = "jaccard") -> float:
    """Standard error of a mean-over-pairs stability, from the unbiased variance of a U-statistic.

    The stability of U runs is a U-statistic of degree 2 with kernel h = the pairwise
    similarity: Var = 4 (U-2) / (U (U-1)) zeta_1 + 2 / (U (U-1)) zeta_2, with
    zeta_1 = Cov(h(a, b), h(a, c)) and zeta_2 = Var(h(a, b)). Both are estimated without
    bias from the means of h(a,b)^2, h(a,b) h(a,c) and h(a,b) h(c,d) over distinct
    indices. The jackknife (:func:`jackknife_std`) counts zeta_2 twice, which matters
    when runs are alike in how typical they are (zeta_1 small): it overstated the
    spread by about 1.4 on simulated selectors with 20 runs. Needs U >= 4; not for
    ``nogueira`` (no pairwise form).
    """
    check_choice(index, "index", PAIRWISE_INDICES)
    subsets = np.asarray(subsets)
    U = len(subsets)
    if U < 4:
        raise InvalidParameterError(f"the U-statistic variance needs at least 4 subsets; got {U}")
    z = np.zeros((U, n_feature), dtype=bool)
    z[np.arange(U)[:, None], subsets] = True
    return u_statistic_se(_similarity(z[:, subsets].sum(axis=2), n_feature, index))


def u_statistic_variance(h: np.ndarray) -> float:
    """The unbiased variance of the mean over pairs of a symmetric kernel matrix ``h``
    (U x U, U >= 4; the diagonal is ignored), a U-statistic of degree 2 (see
    :func:`pairwise_stability_se`). Unbiased, so with few units it can come out at or
    below 0; :func:`u_statistic_se` never reports that."""
    h = np.array(h, dtype=np.float64)
    U = len(h)
    if U < 4:
        raise InvalidParameterError(f"the U-statistic variance needs at least 4 runs; got {U}")
    np.fill_diagonal(h, 0.0)
    row = h.sum(axis=1)
    sq_row = (h * h).sum(axis=1)
    total, sq = row.sum(), sq_row.sum()  # over ordered pairs a != b
    mean_sq = sq / (U * (U - 1))
    triples = (row * row - sq_row).sum()  # h(a,b) h(a,c), b != c, both != a
    mean_tri = triples / (U * (U - 1) * (U - 2))
    quads = total * total - 2.0 * sq - 4.0 * triples  # h(a,b) h(c,d), all four distinct
    mean_quad = quads / (U * (U - 1) * (U - 2) * (U - 3))
    zeta1, zeta2 = mean_tri - mean_quad, mean_sq - mean_quad
    return float(4.0 * (U - 2) / (U * (U - 1)) * zeta1 + 2.0 / (U * (U - 1)) * zeta2)


def u_statistic_se(h: np.ndarray) -> float:
    """Standard error of the mean over pairs of a symmetric kernel matrix ``h`` (U x U, U >= 4;
    the diagonal is ignored): the square root of :func:`u_statistic_variance`. Where that
    comes out at or below 0 (few units), the jackknife over units (an overestimate, 0
    only when every unit's pairs average alike) stands in, so a spread that exists is
    never reported as none."""
    var = u_statistic_variance(h)
    if var > 0:
        return float(np.sqrt(var))
    loo = pair_means_without_each(h)
    U = len(loo)
    return float(np.sqrt((U - 1) / U * np.sum((loo - loo.mean()) ** 2)))


def pair_means_without_each(h: np.ndarray) -> np.ndarray:
    """The mean over pairs of a symmetric kernel ``h`` (..., U, U; the diagonal ignored)
    with each unit left out in turn: (..., U), the jackknife's replicates."""
    h = np.nan_to_num(np.array(h, dtype=np.float64))
    U = h.shape[-1]
    h[..., np.arange(U), np.arange(U)] = 0.0
    row = h.sum(axis=-1)
    return (row.sum(axis=-1, keepdims=True) - 2.0 * row) / ((U - 1) * (U - 2))


def stability_se(subsets: np.ndarray, n_feature: int, index: str = "jaccard") -> float:
    """The standard error of a measured stability: :func:`pairwise_stability_se` for the
    pairwise indices (4 runs or more), the jackknife for ``nogueira`` (3 or more), else NaN.
    With few runs the unbiased variance can come out at or below 0; the jackknife (an
    overestimate, never 0 unless every run is the same) stands in then."""
    U = len(subsets)
    if index != "nogueira" and U >= 4:
        return pairwise_stability_se(subsets, n_feature, index)
    if index == "nogueira" and U >= 3:
        return jackknife_std(subsets, n_feature, index)
    return float("nan")


def stability_of_subsets(subsets: np.ndarray, n_feature: int, index: str) -> float:
    """The stability of an already valid (n_subsets, k) integer array of distinct indices,
    unchecked: the fast path for the package's own callers (:func:`stability` checks).

    Intersections are counted by gathering, not by a BLAS product: exact, and no BLAS
    threads to oversubscribe the cores of a worker running many of these.
    """
    U = len(subsets)
    z = np.zeros((U, n_feature), dtype=bool)
    z[np.arange(U)[:, None], subsets] = True
    if index == "nogueira":
        return _nogueira_parts(z.astype(np.float64))[0]
    inter = z[:, subsets].sum(axis=2)
    sim = _similarity(inter, n_feature, index)
    return float((sim.sum() - np.trace(sim)) / (U * (U - 1)))


def _stability_of_membership(z: np.ndarray, n_feature: int, index: str) -> float:
    if index == "nogueira":
        return _nogueira_parts(z)[0]
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
    index : {'jaccard', 'dice', 'kuncheva', 'nogueira'}
        Pairwise indices are averaged over all pairs ``i < j``.

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
    _check_sizes(rows, n_feature, index)
    return _stability_of_membership(membership(rows, n_feature), n_feature, index)


def pairwise_similarity(subsets, n_feature: int, *, index: str = "jaccard") -> np.ndarray:
    """The (n_subsets, n_subsets) matrix of pairwise similarities (not for 'nogueira').

    Parameters
    ----------
    subsets : 2-D int array, boolean (n_subsets, n_feature) matrix, or sequence of sequences
        At least one subset of feature indices in ``[0, n_feature)``.
    n_feature : int
        Number of features the subsets were chosen from.
    index : {'jaccard', 'dice', 'kuncheva'}
        The pairwise similarity.

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
    _check_sizes(rows, n_feature, index)
    return similarity_matrix(membership(rows, n_feature), n_feature, index)


@dataclass(frozen=True)
class NogueiraStability:
    """Nogueira's stability estimate with its variance and a normal confidence interval.

    The result of :func:`nogueira_stability`.

    Attributes
    ----------
    stability : float
        Nogueira's estimator.
    variance : float
        Its estimated variance (``std`` is the square root).
    lower, upper : float
        The ``1 - alpha`` confidence interval.
    alpha : float
    n_subsets : int
        Number of runs behind the estimate.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> res = es.nogueira_stability([[0, 1], [0, 2], [0, 1], [1, 2]], 10)
    >>> res.n_subsets, res.alpha
    (4, 0.05)
    >>> res.std == res.variance ** 0.5
    True
    """

    stability: float
    variance: float
    lower: float
    upper: float
    alpha: float
    n_subsets: int

    @property
    def std(self) -> float:
        return math.sqrt(self.variance)


@dataclass(frozen=True)
class NogueiraTest:
    """Two-sample test of H0: the two population stabilities are equal.

    The result of :func:`nogueira_test`.

    Attributes
    ----------
    statistic : float
        T, asymptotically standard normal under H0.
    pvalue : float
        Two-sided p-value.
    reject : bool
        ``pvalue < alpha``.
    alpha : float
    stability_a, stability_b : float
        Nogueira's stability of each collection.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> same = [[0, 1], [0, 1], [0, 2], [1, 2]]
    >>> res = es.nogueira_test(same, same, 10)
    >>> res.statistic, res.pvalue, res.reject
    (0.0, 1.0, False)
    """

    statistic: float
    pvalue: float
    reject: bool
    alpha: float
    stability_a: float
    stability_b: float


def nogueira_stability(subsets, n_feature: int, *, alpha: float = 0.05) -> NogueiraStability:
    """Nogueira's estimator, its variance and the (1 - alpha) confidence interval.

    The interval is ``stability +/- z_{1-alpha/2} sqrt(variance)`` (asymptotically normal,
    Nogueira et al. 2018, Theorem 7).

    Parameters
    ----------
    subsets : 2-D int array, boolean (n_subsets, n_feature) matrix, or sequence of sequences
        At least two subsets of feature indices in ``[0, n_feature)``.
    n_feature : int
        Number of features the subsets were chosen from.
    alpha : float
        ``1 - alpha`` is the level of the interval, in (0, 1).

    Returns
    -------
    NogueiraStability

    Examples
    --------
    >>> import ensstab_dask as es
    >>> subsets = es.simulate_ensembles(200, 5, 20, 0.7, size=30, seed=1)  # 30 simulated runs
    >>> res = es.nogueira_stability(subsets, 200)
    >>> round(res.stability, 3), res.n_subsets
    (0.092, 30)
    >>> bool(res.lower < res.stability < res.upper)
    True
    >>> es.nogueira_stability([[0, 1], [0, 1], [0, 1]], 10).stability  # identical runs
    1.0
    """
    alpha = check_real(alpha, "alpha", minimum=0.0, maximum=1.0, open_minimum=True, open_maximum=True)
    n_feature = check_int(n_feature, "n_feature", minimum=1)
    rows = check_subsets(subsets, n_feature, min_count=2)
    _check_sizes(rows, n_feature, "nogueira")
    stab, var, _ = _nogueira_parts(membership(rows, n_feature))
    half = _stats.norm.ppf(1 - alpha / 2) * math.sqrt(var)
    # A normal interval can step past 1 (few, very similar runs): the index cannot. Its lower
    # bound (-1 for two runs) is far below any interval the normal one gives.
    return NogueiraStability(stab, var, max(stab - half, -1.0), min(stab + half, 1.0), alpha, len(rows))


def nogueira_test(subsets_a, subsets_b, n_feature: int, *, alpha: float = 0.05) -> NogueiraTest:
    """Test whether two selectors have the same population stability (two-sided).

    T = (stab_b - stab_a) / sqrt(var_a + var_b) is asymptotically standard normal under
    H0; the p-value is 2 (1 - Phi(|T|)).

    Parameters
    ----------
    subsets_a, subsets_b : 2-D int array, boolean matrix, or sequence of sequences
        The subsets chosen by runs of each selector (at least two each).
    n_feature : int
        Number of features the subsets were chosen from.
    alpha : float
        Level of the test, in (0, 1).

    Returns
    -------
    NogueiraTest

    Examples
    --------
    >>> import ensstab_dask as es
    >>> weak = es.simulate_ensembles(200, 5, 20, 0.3, size=50, seed=1)
    >>> strong = es.simulate_ensembles(200, 5, 20, 0.9, size=50, seed=2)
    >>> res = es.nogueira_test(weak, strong, 200)
    >>> res.reject, res.stability_a < res.stability_b
    (True, True)
    """
    a = nogueira_stability(subsets_a, n_feature, alpha=alpha)
    b = nogueira_stability(subsets_b, n_feature, alpha=alpha)
    total = a.variance + b.variance
    if total == 0.0:
        t = 0.0 if a.stability == b.stability else math.copysign(math.inf, b.stability - a.stability)
    else:
        t = (b.stability - a.stability) / math.sqrt(total)
    pvalue = float(2.0 * _stats.norm.sf(abs(t)))
    return NogueiraTest(float(t), pvalue, bool(pvalue < alpha), alpha, a.stability, b.stability)
