"""The features an ensemble keeps on nearly every rerun, as a scikit-learn feature selector.

:class:`StableFeatureSelector` is a ``SelectorMixin``: ``fit`` runs the estimate's real
ensemble copies (:func:`~ensstab_dask.estimate`: 10 copies of 20 weak selectors by
default, each copy on its own random half of the samples), and ``get_support()`` marks
the features an ensemble of ``m_ensemble`` members keeps on at least ``cutoff`` of the
copies: the "kept on at least 90 % of reruns" of the estimate's answer. Inside a
``Pipeline`` it keeps those columns for the next step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.wording import param, words

__all__ = ["StableFeatureSelector"]

#: The keywords of ``estimate`` the selector sets itself.
_OWN = {"n_target", "m_ensemble", "cutoff", "selector", "seed", "cache_dir", "progress", "feature_names"}


class StableFeatureSelector(SelectorMixin, BaseEstimator):
    """Keep the features an ensemble of a base selector keeps on at least ``cutoff`` of its reruns.

    Parameters
    ----------
    n_target : int
        Features each weak selector and each ensemble keeps.
    m_ensemble : int
        The ensemble size whose kept features are selected, at most the members per copy
        (20 by default): a size the copies measure, not one extrapolated.
    cutoff : float
        The share of the copies (reruns) that must keep a feature, in (1/2, 1].
    selector : estimator or str, optional
        The base selector (:func:`~ensstab_dask.estimate`'s ``selector``); None: the
        default random forest.
    seed : int
        The estimate's seed: the same data and seed select the same features.
    cache_dir : path, optional
        Where the real runs are cached (:func:`~ensstab_dask.estimate`'s ``cache_dir``): a
        refit on the same data and seed (a clone in a grid search) reuses them.
    settings : dict, optional
        Any other keyword of :func:`~ensstab_dask.estimate`, passed on as it is: ``copies``
        (more copies bound the features kept by chance more tightly; the estimate's answer
        says how many), ``task``, ``aggregate``, ``client`` (``"synchronous"`` unless given,
        so that ``fit`` inside a Pipeline starts no cluster). The keywords above are this
        selector's own, and refused here.

    Attributes
    ----------
    estimate_ : Estimate
        The estimate ``fit`` made (its curve, verdict and feature table).
    frequencies_ : ndarray of shape (n_features_in_,)
        Each feature's share of the copies whose ensemble of ``m_ensemble`` keeps it.
    support_ : ndarray of bool, shape (n_features_in_,)
        ``frequencies_ >= cutoff``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str, when ``X`` had column names

    Examples
    --------
    >>> import ensstab_dask as es
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> data = es.make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> stable = es.StableFeatureSelector(5, m_ensemble=10, cutoff=0.6, selector=es.default_selector(5))
    >>> model = make_pipeline(stable, LogisticRegression()).fit(data.X, data.y)
    >>> bool(0 < stable.get_support().sum() <= 5)
    True
    """

    def __init__(
        self,
        n_target: int = 20,
        *,
        m_ensemble: int = 20,
        cutoff: float = 0.9,
        selector: Any = None,
        seed: int = 0,
        cache_dir: str | None = None,
        settings: dict[str, Any] | None = None,
    ) -> None:
        self.n_target = n_target
        self.m_ensemble = m_ensemble
        self.cutoff = cutoff
        self.selector = selector
        self.seed = seed
        self.cache_dir = cache_dir
        self.settings = settings

    def fit(self, X, y) -> StableFeatureSelector:
        """Run the estimate's real ensemble copies on ``(X, y)`` and keep the features an
        ensemble of ``m_ensemble`` keeps on at least ``cutoff`` of them."""
        import warnings

        from ensstab_dask.estimates.stages.pipeline import estimate
        from ensstab_dask.exceptions import UnreliableEstimateWarning

        # At least two features (one is kept of them) and four samples (two halves of two
        # classes), said in scikit-learn's words before the estimate's own checks.
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse=("csr", "csc"),
            dtype=None,
            y_numeric=False,
            ensure_min_samples=4,
            ensure_min_features=2,
        )
        type_of_target(y, input_name="y", raise_unknown=True)
        given: dict[str, Any] = {"client": "synchronous", **(self.settings or {})}
        own = sorted(set(given) & _OWN)
        if own:
            raise InvalidParameterError(
                f"settings: {', '.join(own)} {'is' if len(own) == 1 else 'are'} this selector's own parameters; "
                "give them as StableFeatureSelector(..., name=value)"
            )
        if self.selector is not None:
            given["selector"] = self.selector
        names = getattr(self, "feature_names_in_", None)
        with warnings.catch_warnings():
            # The selection does not rest on the curve's verdict: the estimate keeps it, said in its summary.
            warnings.simplefilter("ignore", UnreliableEstimateWarning)
            est = estimate(
                X,
                y,
                self.n_target,
                m_ensemble=(1, self.m_ensemble),
                cutoff=self.cutoff,
                seed=self.seed,
                progress=False,
                cache_dir=self.cache_dir,
                feature_names=None if names is None else list(names),
                **given,
            )
        features = est.features
        if features is None:  # settings naming a model that measures no copies
            raise InvalidParameterError(
                words("settings: ", param("model", est.settings["model"]), " measures no real ensemble copies to count")
                + " features on"
            )
        measured = [int(m) for m in features["m_measured"].values]
        if self.m_ensemble not in measured:
            raise InvalidParameterError(
                param("m_ensemble")
                + f": {self.m_ensemble} is not a size the copies measure (they measure {measured}); "
                f"give at most the members per copy"
            )
        self.estimate_ = est
        self.frequencies_ = features["frequency"].sel(m_measured=self.m_ensemble).values.astype(float)
        self.support_ = self.frequencies_ >= self.cutoff - 1e-12
        return self

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags
