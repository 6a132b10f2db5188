"""The base selectors the command line names (``--selector NAME``), in one table.

Each entry makes its estimator for ``--n-estimators`` and the task (class labels or a
regression target), says which tasks it serves and whether it grows trees (the cost
check counts trees only for those). A new named selector is one entry of
:data:`NAMED_SELECTORS`: the option's choices, its help and its refusals are read from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.selectors import default_selector
from ensstab_dask.wording import param

__all__ = ["NamedSelector", "NAMED_SELECTORS", "named_selector", "L1_C", "selectors_help", "DEFAULT_SELECTORS"]


@dataclass(frozen=True)
class NamedSelector:
    """A selector by name: ``make(n_estimators, task)`` returns a fresh estimator;
    ``says``: what it is and how it scores, in the help's words."""

    make: Callable[[int, str], Any]
    tasks: tuple[str, ...] = ("classification", "regression")
    trees: bool = True
    says: str = ""


def _extra_trees(n_estimators: int, task: str):
    from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor

    trees = ExtraTreesRegressor if task == "regression" else ExtraTreesClassifier
    return trees(n_estimators=n_estimators, max_features="sqrt", n_jobs=1)


def _logistic(n_estimators: int, task: str):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=2000)


def _scaled(estimator):
    """``estimator`` after scaling each feature to unit variance (not centred, so that a
    sparse X stays sparse): a penalised linear model's penalty then weighs every feature
    alike, whatever its units."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(with_mean=False), estimator)


def _l1_logistic(n_estimators: int, task: str):
    import inspect

    from sklearn.linear_model import LogisticRegression

    # scikit-learn 1.8 deprecated ``penalty``: an L1 penalty is ``l1_ratio=1`` there, ``penalty="l1"`` before.
    modern = inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated"
    l1 = {"l1_ratio": 1.0} if modern else {"penalty": "l1"}
    return _scaled(LogisticRegression(C=L1_C, solver="liblinear", max_iter=5000, **l1))


def _linear_svm(n_estimators: int, task: str):
    from sklearn.svm import LinearSVC

    return _scaled(LinearSVC(C=1.0, max_iter=5000))


def _f_test(n_estimators: int, task: str):
    from sklearn.feature_selection import SelectKBest, f_classif, f_regression

    return SelectKBest(f_regression if task == "regression" else f_classif, k="all")


def _mutual_info(n_estimators: int, task: str):
    from ensstab_dask.real.univariate import MutualInformation

    return MutualInformation(task=task)


#: The inverse L1 penalty of ``l1-logistic`` on unit-variance features: fixed, not chosen by
#: an inner cross-validation (which would multiply each run's cost by its folds and grid).
L1_C = 1.0

#: The selectors ``--selector`` names, by name.
NAMED_SELECTORS: dict[str, NamedSelector] = {
    "rf": NamedSelector(
        lambda n, task: default_selector(n, task=task), says="random forest, scored by impurity importance"
    ),
    "extra-trees": NamedSelector(_extra_trees, says="extremely randomised trees, scored by impurity importance"),
    "logistic": NamedSelector(
        _logistic, tasks=("classification",), trees=False, says="logistic regression (L2), scored by |coefficient|"
    ),
    "l1-logistic": NamedSelector(
        _l1_logistic,
        tasks=("classification",),
        trees=False,
        says=f"L1-penalised logistic regression on unit-variance features, C = {L1_C:g} fixed, scored by "
        "|coefficient| (features it zeroes tie, broken at random)",
    ),
    "linear-svm": NamedSelector(
        _linear_svm,
        tasks=("classification",),
        trees=False,
        says="linear support vector machine on unit-variance features, C = 1, scored by |coefficient|",
    ),
    "f-test": NamedSelector(
        _f_test, trees=False, says="univariate F statistic (ANOVA for classes, correlation for a target)"
    ),
    "mutual-info": NamedSelector(
        _mutual_info, trees=False, says="univariate mutual information (nearest-neighbour estimate; slow)"
    ),
}


#: The selectors :func:`~ensstab_dask.compare` and ``ensstab compare`` compare unless told otherwise.
DEFAULT_SELECTORS = ("rf", "extra-trees", "l1-logistic", "f-test")


def named_selector(name: str, n_estimators: int, task: str = "classification"):
    """The estimator of :data:`NAMED_SELECTORS`' ``name`` for ``task``; a name it lacks, or
    a task its entry does not serve, refused in one line naming those that do."""
    if name not in NAMED_SELECTORS:
        raise InvalidParameterError(param("selector") + f" must be one of {', '.join(NAMED_SELECTORS)}; got {name!r}")
    entry = NAMED_SELECTORS[name]
    if task not in entry.tasks:
        serving = [n for n, e in NAMED_SELECTORS.items() if task in e.tasks]
        raise InvalidParameterError(
            param("selector") + f" {name!r} serves {' and '.join(entry.tasks)} only; a {task} target takes "
            f"{' or '.join(map(repr, serving))}"
        )
    return entry.make(n_estimators, task)


def selectors_help() -> str:
    """Each named selector with what it is and the tasks it serves, for ``--help``."""
    return "; ".join(
        f"{name}: {entry.says}" + ("" if len(entry.tasks) > 1 else f" ({' and '.join(entry.tasks)} only)")
        for name, entry in NAMED_SELECTORS.items()
    )
