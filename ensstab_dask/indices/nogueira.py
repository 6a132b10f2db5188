"""Nogueira's stability with its inference: the estimator's variance from the per-run
terms phi_i of the paper's reference (Python/Matlab) code,
Var = (4 / M^2) sum_i (phi_i - mean phi)^2, a normal confidence interval
(:func:`nogueira_stability`) and the two-sample test of equal population
stabilities (:func:`nogueira_test`), after Nogueira, Sechidis & Brown (JMLR 2018).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ensstab_dask.checks import check_int, check_real, check_subsets, membership
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.wording import param

__all__ = [
    "NogueiraStability",
    "NogueiraTest",
    "check_mean_size",
    "nogueira_parts",
    "nogueira_stability",
    "nogueira_test",
]


def nogueira_parts(z: np.ndarray) -> tuple[float, float, np.ndarray]:
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


def check_mean_size(sizes: np.ndarray, n_feature: int, name: str) -> None:
    """Refuse subset sizes whose mean is 0 or every feature: Nogueira's index divides by it."""
    kbar = sizes.mean()
    if kbar in (0, n_feature):
        raise InvalidParameterError(
            param("index") + f" {name!r} needs 0 < mean subset size < n_feature={n_feature}; got {kbar}"
        )


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
    check_mean_size(np.array([r.size for r in rows]), n_feature, "nogueira")
    stab, var, _ = nogueira_parts(membership(rows, n_feature))
    from scipy import stats as _stats  # here: scipy.stats takes about a second to import (ensstab --help)

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
    from scipy import stats as _stats  # here: scipy.stats takes about a second to import (ensstab --help)

    pvalue = float(2.0 * _stats.norm.sf(abs(t)))
    return NogueiraTest(float(t), pvalue, bool(pvalue < alpha), alpha, a.stability, b.stability)
