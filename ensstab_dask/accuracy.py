"""Prediction accuracy of the selected features, the paper's way of choosing n_target."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._validation import AGGREGATES, check_choice, check_int, check_seed
from .aggregation import aggregate_rankings
from .cluster import ClientLike, map_shared
from .datasets import check_data
from .seeding import Stream, as_seed_sequence, derive, make_rng
from .selectors import _member_batch, make_scorer

__all__ = ["prediction_accuracy", "PredictionAccuracy"]


@dataclass(frozen=True)
class PredictionAccuracy:
    """Leave-one-out accuracy of a predictor trained on the selected features."""

    accuracy: float
    std_error: float
    n_samples: int
    predictions: np.ndarray = field(repr=False)
    n_target: int
    m_ensemble: int


def _loo_fold(scorer, predictor, X, y, n_target, m_ensemble, aggregate, fold, fold_seed):
    """One fold: leave sample ``fold`` out, select on one half of the rest, train on the other."""
    from sklearn.base import clone

    rng = make_rng(fold_seed)
    rest = np.delete(np.arange(len(X)), fold)
    order = rng.permutation(rest)
    select_half, train_half = order[: len(order) // 2], order[len(order) // 2 :]
    if m_ensemble == 1:
        ranks = _member_batch(scorer, X[select_half], y[select_half], "independent-full", None, [derive(fold_seed, 1)])
    else:
        members = [derive(fold_seed, 1 + j) for j in range(m_ensemble)]
        ranks = _member_batch(scorer, X[select_half], y[select_half], "bagging-full", None, members)
    chosen = aggregate_rankings(ranks, n_target, aggregate=aggregate, seed=derive(fold_seed, 0))
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
    seed: int = 0,
    client: ClientLike = None,
    timeout: float = 10.0,
    security=None,
) -> PredictionAccuracy:
    """The paper's way of choosing n_target (SPEC section 8), leave-one-out.

    For each sample: leave it out, split the rest at random into a feature-selection
    half and a predictor half, select ``n_target`` features on the first (one run of the
    base selector, or an ensemble of ``m_ensemble`` runs on bootstrap samples of it),
    train ``predictor`` (default: a 300-tree random forest) on the second with those
    features, and predict the left-out sample. Fold ``i`` uses
    ``derive(seed, Stream.PREDICTION, i)``; folds run as Dask tasks.
    """
    X, y = check_data(X, y, n_target=n_target)
    m_ensemble = check_int(m_ensemble, "m_ensemble", minimum=1)
    check_choice(aggregate, "aggregate", AGGREGATES)
    seed = check_seed(seed)
    scorer = make_scorer(selector)
    if predictor is not None and not (hasattr(predictor, "fit") and hasattr(predictor, "get_params")):
        raise TypeError(f"predictor must be a scikit-learn estimator (fit, predict); got {type(predictor).__name__}")
    if predictor is None:
        from sklearn.ensemble import RandomForestClassifier

        predictor = RandomForestClassifier(n_estimators=300, n_jobs=1)
    ss = as_seed_sequence(seed)
    folds = [(fold, derive(ss, Stream.PREDICTION, fold)) for fold in range(len(X))]
    preds = map_shared(
        _loo_fold,
        (scorer, predictor, X, y, n_target, m_ensemble, aggregate),
        folds,
        client=client,
        timeout=timeout,
        security=security,
    )
    preds = np.asarray(preds)
    correct = preds == y
    acc = float(correct.mean())
    return PredictionAccuracy(acc, float(np.sqrt(acc * (1 - acc) / len(y))), len(y), preds, n_target, m_ensemble)
