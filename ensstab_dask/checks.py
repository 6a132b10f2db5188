"""Input validation shared by the public functions.

Errors name the parameter and what is allowed, in the style of
``sklearn.utils.check_scalar``: TypeError for a wrong type, ValueError for a value out
of range.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Iterable

import numpy as np

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.seeding import MAX_SEED, seed_to_int  # noqa: F401 - MAX_SEED is re-exported for callers
from ensstab_dask.wording import param, subject, words

AGGREGATES = ("mean_rank", "median_rank", "vote", "reciprocal_rank")
#: Named resamples of a real run (a fraction in (0, 1] is also accepted); see real.selectors.
RESAMPLES = ("half", "bootstrap", "bagging")
#: Which real runs calibrate the simulator; see estimates.stages.pipeline.
CALIBRATION_LAYOUTS = ("paper", "ensemble", "ensemble-all")
#: The layouts of a model's real ensemble copies (``layout``): its own, or a first round
#: grown where it says the curve still climbs (:meth:`~ensstab_dask.models.CurveModel.grown_design`).
COPY_LAYOUTS = ("fixed", "adaptive")
#: The layout estimate uses unless told otherwise (docs/validation.md says why).
DEFAULT_CALIBRATION_LAYOUT = "ensemble"
#: The predictors that score a real ensemble copy's features on the samples it did not see
#: (``predictor``), with the tasks each serves; see real.accuracy.
PREDICTORS: dict[str, tuple[str, ...]] = {"rf": ("classification", "regression"), "logistic": ("classification",)}
#: The predictor :func:`~ensstab_dask.compare` scores accuracy with unless told otherwise.
DEFAULT_PREDICTOR = "rf"
#: How p is fitted to the real selector's stability; see simulator.estimators.estimate_p.
P_METHODS = ("bisect", "grid")
#: The ensemble sizes an estimate predicts, and the naive check measures, unless told otherwise.
DEFAULT_M_ENSEMBLE = (1, 5, 10, 20, 30, 50)
#: The real runs behind the count of useful features unless told otherwise: fixed, so that
#: the count does not change with the sizes asked (it is the largest default size, so a
#: default estimate counts as the paper's n_runs = max(m_ensemble) would).
DEFAULT_N_RUNS = 50


def check_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer count in ``[minimum, maximum]``; bools and floats are refused.

    Checked here, not by scikit-learn's ``check_scalar``: the command line refuses a bad
    option before it imports scikit-learn (seconds on a busy machine), and bools, which
    ``check_scalar`` takes for integers, are refused.

    Raises
    ------
    TypeError
        ``value`` is not an integer.
    ValueError
        ``value`` is out of range; the one-line message names ``name`` and the range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise InvalidParameterError(subject(name) + f" must be an int; got {type(value).__name__} {value!r}")
    count = int(value)
    if (minimum is not None and count < minimum) or (maximum is not None and count > maximum):
        raise InvalidParameterError(subject(name) + f" must be {int_bounds(minimum, maximum)}; got {count}")
    return count


def int_bounds(minimum: int | None, maximum: int | None) -> str:
    """How :func:`check_int` words its bounds: ``>= 1``, ``<= 9`` or ``in [1, 9]``."""
    if minimum is not None and maximum is not None:
        return f"in [{minimum}, {maximum}]"
    return f">= {minimum}" if minimum is not None else f"<= {maximum}"


def real_interval(
    minimum: float | None, maximum: float | None, *, open_minimum: bool = False, open_maximum: bool = False
) -> str:
    """How :func:`check_real` words its interval: ``in (0.0, 1.0]``; a missing bound is an
    open infinite end (``in (0.0, inf)``: the infinities are refused)."""
    lo = "(" if open_minimum or minimum is None else "["
    hi = ")" if open_maximum or maximum is None else "]"
    return f"in {lo}{minimum if minimum is not None else '-inf'}, {maximum if maximum is not None else 'inf'}{hi}"


#: The largest seed: results store it as a 64-bit integer attribute (netCDF, zarr).
def check_seed(seed) -> int:
    """A seed for a function that records it: reduced to an int in [0, MAX_SEED] before any
    work, so the results can be written (see :mod:`ensstab_dask.seeding`)."""
    return seed_to_int(seed)


def check_real(
    value,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    open_minimum: bool = False,
    open_maximum: bool = False,
) -> float:
    """A finite real number in the given (closed unless said otherwise) interval.

    Raises
    ------
    TypeError
        ``value`` is not a real number (bools are refused).
    ValueError
        ``value`` is NaN, infinite or out of the interval; the one-line message names
        ``name`` and the interval.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(subject(name) + f" must be a real number; got {type(value).__name__} {value!r}")
    allowed = real_interval(minimum, maximum, open_minimum=open_minimum, open_maximum=open_maximum)
    value = float(value)
    if math.isnan(value):
        raise InvalidParameterError(subject(name) + f" must be a number {allowed}; got NaN")
    below = minimum is not None and (value <= minimum if open_minimum else value < minimum)
    above = maximum is not None and (value >= maximum if open_maximum else value > maximum)
    if below or above or math.isinf(value):
        raise InvalidParameterError(subject(name) + f" must be {allowed}; got {value}")
    return value


def check_p(p, name: str = "p") -> float:
    """The simulator's probability of picking from S_m: a number in [0, 1]."""
    return check_real(p, name, minimum=0.0, maximum=1.0)


def check_problem(n_feature, n_target, n_useful=None) -> tuple[int, int, int | None]:
    """Validate ``1 <= n_target <= n_useful <= n_feature``."""
    n_feature = check_int(n_feature, "n_feature", minimum=1)
    n_target = check_int(n_target, "n_target", minimum=1, maximum=n_feature)
    if n_useful is not None:
        n_useful = check_int(n_useful, "n_useful", minimum=n_target, maximum=n_feature)
    return n_feature, n_target, n_useful


def check_simulator(n_feature, n_target, n_useful, p) -> tuple[int, int, int, float]:
    """Validate the simulator's parameters (docs/method.md section 2)."""
    n_feature, n_target, n_useful = check_problem(n_feature, n_target, n_useful)
    return n_feature, n_target, n_useful, check_p(p)


MODELS = ("onda", "two-level", "random-effects", "anchored")
#: The model ``estimate`` and ``ensstab estimate`` use unless told otherwise (docs/models.md
#: and docs/validation.md say why).
DEFAULT_MODEL = "anchored"
#: The models of the simulated selector itself (simulate_*, sweep); the others model real ensembles.
SIMULATOR_MODELS = ("onda", "two-level")


def check_model(model, h, n_target: int, n_useful: int, *, name: str = "model") -> int | None:
    """Validate the simulator's variant ``model`` (named ``name`` in messages: ``variant``
    for the kernel, ``model`` for a sweep) and its extra parameter ``h``
    (docs/two_level_model.md).

    Returns ``h`` as an int for ``"two-level"``, None for ``"onda"`` (which takes no ``h``).
    """
    if model in MODELS and model not in SIMULATOR_MODELS:
        raise InvalidParameterError(
            param(name, model) + " models real ensembles, not the simulated selector: use it in "
            f"estimate(); the simulator's variants are {' and '.join(map(repr, SIMULATOR_MODELS))}"
        )
    check_choice(model, name, SIMULATOR_MODELS)
    if model == "onda":
        if h is not None:
            raise InvalidParameterError(
                words(
                    param("h"), " is a parameter of ", param(name, "two-level"), " only, not of ", param(name, "onda")
                )
            )
        return None
    if h is None:
        raise InvalidParameterError(
            words(
                param("h"),
                " is needed by ",
                param(name, "two-level"),
                ": the size of each ensemble copy's preferred set H",
            )
        )
    h = check_int(h, "h", minimum=n_target)
    if h > n_useful:
        raise InvalidParameterError(
            param("h") + f" must be in [n_target, n_useful] = [{n_target}, {n_useful}]; got {h}"
        )
    return h


def check_choice(value, name: str, allowed: Collection[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise InvalidParameterError(subject(name) + f" must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def check_subsets(
    subsets, n_feature: int, *, size: int | None = None, name: str = "subsets", min_count: int = 1
) -> list[np.ndarray]:
    """Validate a collection of feature subsets and return them as sorted int arrays.

    ``subsets`` may be a 2-D integer array (one subset per row), a boolean membership
    matrix of shape ``(n_subsets, n_feature)``, or any iterable of iterables of feature
    indices. Indices must be integers in ``[0, n_feature)`` without duplicates; with
    ``size`` every subset must have exactly that many features.
    """
    n_feature = check_int(n_feature, "n_feature", minimum=1)
    if isinstance(subsets, np.ndarray) and subsets.dtype == bool:
        if subsets.ndim != 2 or subsets.shape[1] != n_feature:
            raise InvalidParameterError(
                f"a boolean {name} matrix must have shape (n_subsets, n_feature={n_feature}); got {subsets.shape}"
            )
        rows = [np.flatnonzero(r) for r in subsets]
    else:
        if isinstance(subsets, (str, bytes)) or not isinstance(subsets, (Iterable, np.ndarray)):
            raise InvalidParameterError(subject(name) + " must be a sequence of subsets of feature indices")
        rows = []
        for i, s in enumerate(subsets):
            if isinstance(s, (set, frozenset)):
                s = sorted(s)
            arr = np.asarray(s)
            if arr.ndim != 1:
                raise InvalidParameterError(subject(name) + f"[{i}] must be a 1-D collection of feature indices")
            if arr.size and not np.issubdtype(arr.dtype, np.integer):
                if np.issubdtype(arr.dtype, np.floating) and np.isfinite(arr).all() and np.all(arr == np.round(arr)):
                    arr = arr.astype(np.int64)
                else:
                    raise InvalidParameterError(
                        subject(name) + f"[{i}] must hold integer feature indices; got dtype {arr.dtype}"
                    )
            arr = arr.astype(np.int64, copy=False)
            if arr.size and (arr.min() < 0 or arr.max() >= n_feature):
                raise InvalidParameterError(
                    subject(name)
                    + f"[{i}] has feature indices outside [0, {n_feature}): min {arr.min()}, max {arr.max()}"
                )
            u = np.unique(arr)
            if u.size != arr.size:
                raise InvalidParameterError(subject(name) + f"[{i}] has duplicate feature indices")
            rows.append(u)
    if len(rows) < min_count:
        raise InvalidParameterError(subject(name) + f" must hold at least {min_count} subsets; got {len(rows)}")
    if size is not None:
        for i, r in enumerate(rows):
            if r.size != size:
                raise InvalidParameterError(
                    subject(name) + f"[{i}] must have exactly {size} features (n_target); got {r.size}"
                )
    return rows


def membership(rows: list[np.ndarray], n_feature: int, dtype=np.float64) -> np.ndarray:
    """The (n_subsets, n_feature) 0/1 matrix of validated subsets."""
    z = np.zeros((len(rows), n_feature), dtype=dtype)
    for i, r in enumerate(rows):
        z[i, r] = 1
    return z


def _checked_at_once(values: list, name: str, kind: str, n_feature: int, n_target: int) -> np.ndarray | None:
    """A long grid axis of plain numbers checked as one array (a range of a million values
    is checked in milliseconds, not one by one), the first value out of range refused by
    the one-value check that words its message; None for anything else (mixed or other
    types), which is checked value by value."""
    if len(values) < 64 or any(isinstance(v, (bool, np.bool_)) for v in values):
        return None
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype.kind not in ("iu" if kind != "p" else "iuf"):
        return None
    low, high = {"n_useful": (n_target, n_feature), "m": (1, None)}.get(kind, (None, None))
    bad = ~np.isfinite(arr) if arr.dtype.kind == "f" else np.zeros(len(arr), bool)
    bad |= (arr < 0.0) | (arr > 1.0) if kind == "p" else arr < low
    if high is not None:
        bad |= arr > high
    if bad.any():
        first = values[int(np.argmax(bad))]
        if kind == "p":
            check_p(first, f"{name} values")
        else:
            check_int(first, f"{name} values", minimum=low, maximum=high)
    return arr.astype(float if kind == "p" else np.int64)


def check_grid(values, name: str, kind: str, n_feature: int = 0, n_target: int = 0) -> np.ndarray:
    """A grid axis (a scalar or a sequence): sorted, without duplicates, each value checked
    as ``kind`` ('p', 'n_useful' in [n_target, n_feature], or 'm', an int >= 1)."""
    if np.isscalar(values):
        values = [values]
    values = list(values)
    if not values:
        raise InvalidParameterError(subject(name) + " must hold at least one value")
    arr = _checked_at_once(values, name, kind, n_feature, n_target)
    if arr is None and kind == "p":
        arr = np.array([check_p(v, f"{name} values") for v in values], dtype=float)
    elif arr is None and kind == "n_useful":
        arr = np.array(
            [check_int(v, f"{name} values", minimum=n_target, maximum=n_feature) for v in values], dtype=np.int64
        )
    elif arr is None:
        arr = np.array([check_int(v, f"{name} values", minimum=1) for v in values], dtype=np.int64)
    arr = np.sort(arr)
    if (arr[1:] == arr[:-1]).any():
        raise InvalidParameterError(subject(name) + " has duplicate values")
    return arr


def check_m_ensemble(m_ensemble) -> list[int]:
    """Ensemble sizes, validated like a sweep's grid (sorted, >= 1, no duplicates)."""
    return check_grid(m_ensemble, "m_ensemble", "m").tolist()
