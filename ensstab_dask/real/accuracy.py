"""Prediction accuracy of selected features: the paper's leave-one-out way of choosing
n_target (:func:`prediction_accuracy`), and the predictors that score a real ensemble
copy's features on the half of the samples it did not see (:func:`held_out_scores`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ensstab_dask.aggregation import aggregate_rankings
from ensstab_dask.checks import AGGREGATES, PREDICTORS, check_choice, check_int, check_seed
from ensstab_dask.cluster import ClientLike, map_shared
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import check_data
from ensstab_dask.real.resamples import resample_indices
from ensstab_dask.real.selectors import make_scorer, member_ranks, seeded_clone
from ensstab_dask.real.targets import task_of
from ensstab_dask.seeding import SeedLike, Stream, as_seed_sequence, derive, make_rng
from ensstab_dask.wording import param

# scikit-learn is imported where it is used: it takes a tenth of a second to import.

__all__ = ["prediction_accuracy", "PredictionAccuracy", "make_predictor", "held_out_scores"]


@dataclass(frozen=True)
class PredictionAccuracy:
    """Leave-one-out accuracy of a predictor trained on the selected features.

    The result of :func:`prediction_accuracy`.

    Attributes
    ----------
    accuracy : float
        Fraction of left-out samples predicted right.
    std_error : float
        Its binomial standard error, ``sqrt(accuracy (1 - accuracy) / n_samples)``.
    n_samples : int
    predictions : ndarray
        The prediction for each left-out sample.
    n_target, m_ensemble : int
        The settings.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> from ensstab_dask.real.datasets import make_microarray
    >>> from ensstab_dask.real.selectors import default_selector
    >>> data = make_microarray(n_samples=20, n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> acc = es.prediction_accuracy(data.X, data.y, 3, selector=default_selector(5),
    ...                              predictor=default_selector(5), client="synchronous")
    >>> acc.n_target, acc.m_ensemble
    (3, 1)
    >>> round(acc.std_error, 6) == round((acc.accuracy * (1 - acc.accuracy) / acc.n_samples) ** 0.5, 6)
    True
    """

    accuracy: float
    std_error: float
    n_samples: int
    predictions: np.ndarray = field(repr=False)
    n_target: int
    m_ensemble: int


@dataclass(frozen=True)
class _FoldSetup:
    """What every leave-one-out fold shares, but the data: how it selects and predicts."""

    scorer: Any
    predictor: Any
    n_target: int
    m_ensemble: int
    aggregate: str


def _loo_fold(setup: _FoldSetup, X, y, fold, fold_seed):
    """One fold: leave sample ``fold`` out, select on one half of the rest, train on the other."""
    from sklearn.base import clone

    scorer, predictor, n_target, m_ensemble = setup.scorer, setup.predictor, setup.n_target, setup.m_ensemble

    rng = make_rng(fold_seed)
    rest = np.delete(np.arange(X.shape[0]), fold)
    # Stratified, so that both the selector and the predictor see every class.
    select_half = rest[resample_indices(y[rest], "half", rng)]
    train_half = np.setdiff1d(rest, select_half)
    if m_ensemble == 1:
        ranks = member_ranks(scorer, X[select_half], y[select_half], "independent-full", None, [derive(fold_seed, 1)])
    else:
        members = [derive(fold_seed, 1 + j) for j in range(m_ensemble)]
        ranks = member_ranks(scorer, X[select_half], y[select_half], "bagging-full", None, members)
    chosen = aggregate_rankings(ranks, n_target, aggregate=setup.aggregate, seed=derive(fold_seed, 0))
    model = clone(predictor)
    if "random_state" in model.get_params():
        model.set_params(random_state=int(rng.integers(0, 2**31 - 1)))
    model.fit(X[np.ix_(train_half, chosen)], y[train_half])
    return model.predict(X[np.ix_([fold], chosen)])[0]


def prediction_accuracy(
    X,
    y,
    n_target: int,
    *,
    selector=None,
    predictor=None,
    m_ensemble: int = 1,
    aggregate: str = "mean_rank",
    seed: SeedLike = 0,
    client: ClientLike = None,
) -> PredictionAccuracy:
    """The paper's way of choosing n_target (docs/method.md section 8), leave-one-out.

    For each sample: leave it out, split the rest at random, stratified by class, into a
    feature-selection half and a predictor half (so every class needs at least 3
    samples), select ``n_target`` features on the first (one run of the base selector,
    or an ensemble of ``m_ensemble`` runs on bootstrap samples of it), train
    ``predictor`` (default: a 300-tree random forest) on the second with those features,
    and predict the left-out sample. Fold ``i`` uses
    ``derive(seed, Stream.PREDICTION, i)``; folds run as Dask tasks.

    Parameters
    ----------
    X, y : the data (n_samples, n_feature) and class labels
        At least 3 samples of every class.
    n_target : int
        Features selected in each fold.
    selector : None, scikit-learn estimator or callable
        The base selector (see :mod:`ensstab_dask.real.selectors`); None is the default
        random forest.
    predictor : scikit-learn classifier, optional
        Trained on the selected features; default a 300-tree random forest.
    m_ensemble : int
        1: one run of the selector per fold; more: an ensemble of that many runs.
    aggregate : {'mean_rank', 'median_rank', 'vote', 'reciprocal_rank'}
        How the ensemble combines its runs.
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)
    client
        Where the folds run (see :mod:`ensstab_dask.cluster`).

    Returns
    -------
    PredictionAccuracy

    Examples
    --------
    A 20-sample study, a 5-tree forest as the selector and a 1-nearest-neighbour
    predictor, to keep it quick:

    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> import ensstab_dask as es
    >>> from ensstab_dask.real.datasets import make_microarray
    >>> from ensstab_dask.real.selectors import default_selector
    >>> data = make_microarray(n_samples=20, n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> acc = es.prediction_accuracy(data.X, data.y, 3, selector=default_selector(5),
    ...                              predictor=KNeighborsClassifier(1), client="synchronous")
    >>> acc.n_samples, acc.predictions.shape
    (20, (20,))
    >>> acc.accuracy == float((acc.predictions == data.y).mean())
    True
    """
    X, y = check_data(X, y, n_target=n_target, task="classification")  # it scores predicted classes
    labels, counts = np.unique(y, return_counts=True)
    if counts.min() < 3:
        raise InvalidParameterError(
            "y: prediction_accuracy needs at least 3 samples of every class (one left out, then one in each "
            f"half of the rest); class {labels.tolist()[counts.argmin()]!r} has {counts.min()}"
        )
    m_ensemble = check_int(m_ensemble, "m_ensemble", minimum=1)
    check_choice(aggregate, "aggregate", AGGREGATES)
    seed = check_seed(seed)
    scorer = make_scorer(selector)
    if predictor is not None and not (hasattr(predictor, "fit") and hasattr(predictor, "get_params")):
        raise InvalidParameterError(
            f"predictor must be a scikit-learn estimator (fit, predict); got {type(predictor).__name__}"
        )
    if predictor is None:
        from sklearn.ensemble import RandomForestClassifier

        predictor = RandomForestClassifier(n_estimators=300, n_jobs=1)
    ss = as_seed_sequence(seed)
    folds = [(fold, derive(ss, Stream.PREDICTION, fold)) for fold in range(X.shape[0])]
    shared = (_FoldSetup(scorer, predictor, n_target, m_ensemble, aggregate), X, y)
    preds = np.asarray(map_shared(_loo_fold, shared, folds, client=client))
    correct = preds == y
    acc = float(correct.mean())
    return PredictionAccuracy(acc, float(np.sqrt(acc * (1 - acc) / len(y))), len(y), preds, n_target, m_ensemble)


def make_predictor(name: str, task: str):
    """A fresh predictor of :data:`~ensstab_dask.checks.PREDICTORS`' ``name`` for ``task``:
    the paper's 300-tree forest (a classifier, or a regressor for a target), or an L2
    logistic regression on unit-variance features (classes only); a task it does not serve
    refused in one line."""
    check_choice(name, "predictor", tuple(PREDICTORS))
    if task not in PREDICTORS[name]:
        raise InvalidParameterError(
            param("predictor", name) + f" serves {' and '.join(PREDICTORS[name])} only; a {task} target takes 'rf'"
        )
    if name == "rf":
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

        forest = RandomForestRegressor if task == "regression" else RandomForestClassifier
        return forest(n_estimators=300, max_features="sqrt", n_jobs=1)
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(with_mean=False), LogisticRegression(max_iter=2000))


def held_out_scores(predictor, X, y, train: np.ndarray, chosen: list[np.ndarray], seed) -> np.ndarray:
    """For each feature set of ``chosen``: ``predictor`` (cloned, seeded from ``seed``) fitted
    on the samples ``train`` with those features and scored on every other sample: balanced
    accuracy for class labels, R^2 for a regression target (the checked ``y``'s dtype says
    which). One real ensemble copy's task: its half, its ensembles at each size."""
    from sklearn.metrics import balanced_accuracy_score, r2_score

    test = np.setdiff1d(np.arange(X.shape[0]), train)
    score = r2_score if task_of(y) == "regression" else balanced_accuracy_score
    rng = make_rng(seed)
    out = np.empty(len(chosen))
    for i, features in enumerate(chosen):
        model = seeded_clone(predictor, rng)
        model.fit(X[np.ix_(train, features)], y[train])
        out[i] = score(y[test], model.predict(X[np.ix_(test, features)]))
    return out
