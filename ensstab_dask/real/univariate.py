"""Univariate scores as a base selector: each feature's mutual information with ``y``,
seeded by the run (the F statistic is scikit-learn's own ``SelectKBest``)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

__all__ = ["MutualInformation"]


class MutualInformation(BaseEstimator):
    """Each feature's mutual information with ``y`` as ``scores_`` (higher is better).

    scikit-learn's ``mutual_info_classif`` (class labels) or ``mutual_info_regression``
    (a target); its nearest-neighbour estimate adds a little noise, drawn from
    ``random_state``, which each real run seeds (never the global random state).

    Parameters
    ----------
    task : {"classification", "regression"}, default "classification"
    n_neighbors : int, default 3
        The neighbours of the estimate (scikit-learn's default).
    random_state : int or None
        Set by each real run from its seed.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)

    Examples
    --------
    >>> from ensstab_dask.real.datasets import make_microarray
    >>> data = make_microarray(n_feature=20, n_informative=2, effect=3.0, seed=0)
    >>> MutualInformation(random_state=0).fit(data.X, data.y).scores_.shape
    (20,)
    """

    def __init__(self, task: str = "classification", n_neighbors: int = 3, random_state=None):
        self.task = task
        self.n_neighbors = n_neighbors
        self.random_state = random_state

    def fit(self, X, y) -> MutualInformation:
        from sklearn.feature_selection import mutual_info_classif, mutual_info_regression

        score = mutual_info_regression if self.task == "regression" else mutual_info_classif
        self.scores_ = np.asarray(score(X, y, n_neighbors=self.n_neighbors, random_state=self.random_state))
        return self
