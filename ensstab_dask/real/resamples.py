"""What one real run sees of the data: a resample of the samples, stratified so that it
holds every class (a regression target: every quantile bin of ``y``,
:func:`~ensstab_dask.real.targets.strata`).

* ``"half"`` (the method's feature-selection half), ``"bootstrap"``, ``"bagging"`` (a
  bootstrap sample of a random half: one weak selector of a bagging ensemble), or a
  fraction in (0, 1] without replacement.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ensstab_dask.checks import RESAMPLES, check_real
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.targets import strata, task_of
from ensstab_dask.wording import param, subject

__all__ = ["RESAMPLE_VALUES", "check_resample", "min_per_class", "check_resample_classes", "resample_indices"]


#: What a resample may be, in the words of its refusal.
RESAMPLE_VALUES = f"one of {', '.join(RESAMPLES)} or a fraction in (0, 1]"


def check_resample(resample, name: str = "resample") -> str | float:
    """A resample of a real run: one of :data:`~ensstab_dask.checks.RESAMPLES` or a fraction in (0, 1]."""
    if isinstance(resample, str) and resample in RESAMPLES:
        return resample
    if isinstance(resample, numbers.Real) and not isinstance(resample, bool):
        return check_real(resample, name, minimum=0.0, maximum=1.0, open_minimum=True)
    raise InvalidParameterError(subject(name) + f" must be {RESAMPLE_VALUES}; got {resample!r}")


def min_per_class(resample: str | float) -> int:
    """Samples each class needs so that every stratified resample of this kind holds it."""
    if resample == "bootstrap":  # a stratified bootstrap keeps every class's count
        return 1
    fraction = 0.5 if resample in ("half", "bagging") else float(resample)
    # Each class gets its share of the draw, floor(count x fraction) or one more.
    return math.ceil(round(1 / fraction, 9))


def check_resample_classes(y, resample) -> None:
    """Refuse labels ``y`` with a class too small for every ``resample`` to hold it.

    A resample without some class fits the selector on fewer classes than the data has
    (on one class, a forest's importances are all 0 and its ranking is a random one).
    """
    resample = check_resample(resample)
    need = min_per_class(resample)
    if task_of(y) == "regression":  # its quantile bins are made as large as need be
        return
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    if counts.min() < need:
        small = labels.tolist()[counts.argmin()]
        raise InvalidParameterError(
            param("resample", resample) + f" needs at least {need} samples of every class, so that each resample "
            f"holds all classes; class {small!r} has {counts.min()}"
        )


def resample_indices(y, resample, rng: np.random.Generator) -> np.ndarray:
    """Sample indices of one run, stratified by the class labels ``y`` (a float ``y``, a
    regression target: by its quantile bins, :func:`~ensstab_dask.real.targets.strata`).

    A half or a fraction without replacement, a bootstrap, or ``"bagging"``: a bootstrap
    sample of a random half (one weak selector of a bagging ensemble, which sees a
    bootstrap sample of its copy's half). Each class gets its share of the draw
    (``sklearn.utils.resample(..., stratify=y)``, seeded from ``rng``); a class too small
    for that is refused (:func:`check_resample_classes`).
    """
    from sklearn.utils import resample as sk_resample

    y = np.asarray(y)
    if y.ndim != 1:
        raise InvalidParameterError(
            f"y must be 1-D class labels, one per sample (resamples are stratified); got shape {y.shape}"
        )
    resample = check_resample(resample)
    check_resample_classes(y, resample)
    if resample == "bagging":
        half = resample_indices(y, "half", rng)
        return half[resample_indices(y[half], "bootstrap", rng)]
    n_samples = len(y)
    replace = resample == "bootstrap"
    fraction = 1.0 if replace else 0.5 if resample == "half" else float(resample)
    size = min(max(2, int(np.floor(fraction * n_samples))), n_samples)
    idx = sk_resample(
        np.arange(n_samples),
        replace=replace,
        n_samples=size,
        stratify=strata(y, min_per_class(resample)),
        random_state=int(rng.integers(2**32)),
    )
    return idx if replace else np.sort(idx)
