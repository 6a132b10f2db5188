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

__all__ = ["NamedSelector", "NAMED_SELECTORS", "named_selector"]


@dataclass(frozen=True)
class NamedSelector:
    """A selector by name: ``make(n_estimators, task)`` returns a fresh estimator."""

    make: Callable[[int, str], Any]
    tasks: tuple[str, ...] = ("classification", "regression")
    trees: bool = True


def _extra_trees(n_estimators: int, task: str):
    from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor

    trees = ExtraTreesRegressor if task == "regression" else ExtraTreesClassifier
    return trees(n_estimators=n_estimators, max_features="sqrt", n_jobs=1)


def _logistic(n_estimators: int, task: str):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=2000)


#: The selectors ``--selector`` names, by name.
NAMED_SELECTORS: dict[str, NamedSelector] = {
    "rf": NamedSelector(lambda n, task: default_selector(n, task=task)),
    "extra-trees": NamedSelector(_extra_trees),
    "logistic": NamedSelector(_logistic, tasks=("classification",), trees=False),
}


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
