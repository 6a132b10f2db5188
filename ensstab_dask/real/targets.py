"""What ``y`` asks: class labels (classification) or a continuous target (regression).

``task="auto"`` reads it from the values as scikit-learn's ``type_of_target`` does: a
float ``y`` with a fraction among its values is a regression target, anything else class
labels, but a numeric ``y`` of many distinct whole numbers (more than
:data:`MAX_AUTO_CLASSES`, and a quarter of the samples) is refused, asking which.
``"regression"`` takes a numeric ``y`` of whole numbers as a target too (counts, a score),
and refuses one of two values (a class label read as a number). Once checked, a
regression target is float64 and class labels never are (whole-number floats, 1.0 and
2.0, become int64), so the dtype of a checked ``y`` says its task (:func:`task_of`). A
call's steps after its check take the arrays it returned
(:class:`~ensstab_dask.real.datasets.CheckedData`); a checked target of whole numbers
given anew with ``task="auto"`` is refused, asking which, not read as classes.

A regression target reaches the selector in standard units (:func:`standardized`: its
mean 0, its standard deviation 1, per resample): a forest's ranking does not depend on
y's units, but its arithmetic does. In mol/L (y x 1e-9) every split's impurity falls
below scikit-learn's epsilon and every importance is 0; at y x 1e300 the squared errors
overflow into NaN.

A regression target's resamples are stratified by quantile bins of ``y`` (each bin of at
least :data:`MIN_BIN` samples, at most :data:`MAX_BINS` bins), as class labels' are by
class, so that every half sees low and high values alike.
"""

from __future__ import annotations

import numpy as np

from ensstab_dask.checks import check_choice
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.wording import param, words

__all__ = ["TASKS", "check_target", "task_of", "target_line", "standardized", "strata"]

#: What ``task=`` takes.
TASKS = ("auto", "classification", "regression")
#: A regression target's resamples are stratified by at most this many quantile bins ...
MAX_BINS = 10
#: ... of at least this many samples each (fewer samples: fewer bins; under 2 x this: none).
MIN_BIN = 10
#: ``task="auto"`` reads a float ``y`` of whole numbers as class labels up to this many
#: distinct values (or a quarter of the samples, if more); beyond, it asks which.
MAX_AUTO_CLASSES = 10


def check_target(y: np.ndarray, task: str = "auto") -> np.ndarray:
    """``y`` (1-D, as ``check_X_y`` left it) as the task it is: float64 for a regression
    target, class labels otherwise (whole-number floats as int64). Refuses, in one line, a
    regression target that is not numeric, holds NaN or inf, or only two values; and what
    scikit-learn's ``check_classification_targets`` refuses as class labels."""
    from sklearn.utils.multiclass import check_classification_targets

    check_choice(task, "task", TASKS)
    numeric = y.dtype.kind in "biuf"
    if task == "auto":
        task = "regression" if numeric and y.dtype.kind == "f" and _has_fraction(y) else "classification"
        _refuse_ambiguous(y)
    if task == "regression":
        return _regression_target(y, numeric)
    if y.dtype.kind == "f" and _has_fraction(y):
        raise InvalidParameterError(
            words(
                "y must hold class labels for ",
                param("task", "classification"),
                "; it holds fractions (a continuous target: ",
                param("task", "regression"),
                ")",
            )
        )
    check_classification_targets(y)  # what type_of_target refuses, re-raised by the caller as one line
    if y.dtype.kind == "f":  # whole numbers: the dtype of a checked y says its task
        y = y.astype(np.int64)
    if len(np.unique(y)) < 2:
        raise InvalidParameterError(f"y must hold at least 2 classes; got only {np.unique(y).tolist()}")
    return y


def _refuse_ambiguous(y: np.ndarray) -> None:
    """Refuse a numeric ``y`` of many distinct whole numbers (ints, or floats without a
    fraction) under ``task="auto"``: counts, a score (a target checked as ``"regression"``
    and passed on is one) or many classes of a few samples each; the values cannot say which."""
    if y.dtype.kind not in "iuf" or (y.dtype.kind == "f" and _has_fraction(y)):
        return
    distinct = len(np.unique(y))
    if distinct > max(MAX_AUTO_CLASSES, len(y) // 4):
        stored = "as floats" if y.dtype.kind == "f" else "as integers"
        raise InvalidParameterError(
            f"y holds {distinct} distinct whole numbers {stored}: a regression target (counts, "
            f"a score) or {distinct} classes? pass "
            + words(param("task", "regression"), " or ", param("task", "classification"))
        )


def _has_fraction(y: np.ndarray) -> bool:
    return bool(np.any(np.mod(y, 1) != 0))  # check_X_y has refused NaN and inf


def _regression_target(y: np.ndarray, numeric: bool) -> np.ndarray:
    if not numeric:
        raise InvalidParameterError(
            words("y must be numeric for ", param("task", "regression"), f"; got {y.dtype} values such as {y[0]!r}")
        )
    y = y.astype(np.float64)
    if not np.all(np.isfinite(y)):
        bad = ~np.isfinite(y)
        raise InvalidParameterError(
            words(
                "y must be finite for ",
                param("task", "regression"),
                f"; {int(bad.sum())} values are NaN or inf (first at sample ",
            )
            + f"{int(np.argmax(bad))}): drop those samples"
        )
    values = np.unique(y)
    if len(values) < 3:
        shown = ", ".join(f"{v:g}" for v in values)
        instead = (
            "recode them as whole numbers or text and pass " + param("task", "classification")
            if _has_fraction(values)
            else "use " + param("task", "classification")
        )
        raise InvalidParameterError(
            f"y holds only {len(values)} values ({shown}): class labels, not a regression target; {instead}"
        )
    return y


def task_of(y) -> str:
    """The task of a checked ``y``: ``"regression"`` for float, else ``"classification"``."""
    return "regression" if np.asarray(y).dtype.kind == "f" else "classification"


def standardized(y: np.ndarray) -> np.ndarray:
    """A regression target (float) in standard units, mean 0 and standard deviation 1; class
    labels and a constant target as they are.

    It is first brought near 1 by a power of two, which is exact, so that neither a target
    near float64's smallest values nor one near its largest loses digits or overflows on
    the way.

    Examples
    --------
    >>> standardized(np.array([1e-300, 2e-300, 3e-300])).round(6).tolist()
    [-1.224745, 0.0, 1.224745]
    """
    if y.dtype.kind != "f" or len(y) == 0:
        return y
    _, exponent = np.frexp(np.abs(y).max())
    z = np.ldexp(y, -int(exponent))
    z = z - z.mean()
    sd = z.std()
    return z / sd if sd > 0 else z


def target_line(y: np.ndarray) -> str:
    """A regression target in a few words: its range, median and number of values."""
    return (
        f"a continuous target from {y.min():.4g} to {y.max():.4g} (median {np.median(y):.4g}, "
        f"{len(np.unique(y))} values)"
    )


def strata(y, need: int = 1) -> np.ndarray:
    """What a resample of ``y`` is stratified by: class labels as they are; a regression
    target's quantile bins (equal counts by rank, ties by position), each of at least
    ``max(MIN_BIN, need)`` samples, ``need`` the samples each stratum must hold."""
    y = np.asarray(y)
    if task_of(y) != "regression":
        return y
    n = len(y)
    n_bins = max(1, min(MAX_BINS, n // max(MIN_BIN, need)))
    bins = np.empty(n, dtype=np.int64)
    bins[np.argsort(y, kind="stable")] = np.arange(n) * n_bins // n
    return bins
