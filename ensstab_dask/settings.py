"""The estimate's settings: one frozen object, validated once (:class:`EstimateSettings`).

:func:`~ensstab_dask.estimate` builds it from its keywords before any work; the
pipeline, the models' :class:`~ensstab_dask.models.Context` and the
:class:`~ensstab_dask.estimates.result.Estimate`'s record (:meth:`EstimateSettings.to_dict`)
all read that one object.

Validation follows scikit-learn's ``_parameter_constraints``: the class holds a table,
parameter name -> constraint, and one function (:func:`validate_params`) checks every
value against it, in the table's order, with the messages of :mod:`ensstab_dask.checks`.
The checks that involve several parameters (the model against ``calibrate`` and
``index``, the memory of the largest cells) run after the table.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol, cast

import numpy as np

from ensstab_dask.budget.memory import check_cell_memory
from ensstab_dask.checks import (
    AGGREGATES,
    CALIBRATION_LAYOUTS,
    DEFAULT_CALIBRATION_LAYOUT,
    DEFAULT_MODEL,
    MODELS,
    P_METHODS,
    SIMULATOR_MODELS,
    check_choice,
    check_int,
    check_m_ensemble,
    check_real,
    check_seed,
)
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices import INDICES
from ensstab_dask.models import CurveModel, get_model, models_using
from ensstab_dask.real.datasets import check_n_target
from ensstab_dask.real.selectors import check_resample, describe_selector
from ensstab_dask.seeding import SeedLike

__all__ = [
    "EstimateSettings",
    "validate_params",
    "Constraint",
    "Int",
    "Real",
    "Options",
    "Flag",
    "Sizes",
    "Seed",
    "Resample",
    "BootCount",
    "Unchecked",
    "OrNone",
    "DEFAULT_MAX_REAL_RUNS",
    "MAX_BOOT",
]

#: The cap on real runs when a ``precision`` is asked for without ``max_real_runs``.
DEFAULT_MAX_REAL_RUNS = 1000


class Constraint(Protocol):
    """What a parameter may be: called with its value and name, returns the value to keep
    (normalised: an int for a count, a tuple for sizes) or raises the one-line error."""

    def __call__(self, value: Any, name: str) -> Any: ...


@dataclass(frozen=True)
class Int:
    """An int in ``[minimum, maximum]`` (:func:`~ensstab_dask.checks.check_int`)."""

    minimum: int | None = None
    maximum: int | None = None

    def __call__(self, value, name: str) -> int:
        return check_int(value, name, minimum=self.minimum, maximum=self.maximum)


@dataclass(frozen=True)
class Real:
    """A finite real number in an interval (:func:`~ensstab_dask.checks.check_real`)."""

    minimum: float | None = None
    maximum: float | None = None
    open_minimum: bool = False
    open_maximum: bool = False

    def __call__(self, value, name: str) -> float:
        return check_real(value, name, minimum=self.minimum, maximum=self.maximum, open_minimum=self.open_minimum,
                          open_maximum=self.open_maximum)  # fmt: skip


@dataclass(frozen=True)
class Options:
    """One of ``allowed`` (:func:`~ensstab_dask.checks.check_choice`)."""

    allowed: Collection[str]

    def __call__(self, value, name: str) -> str:
        return check_choice(value, name, self.allowed)


class Flag:
    """True or False (a NumPy bool too), kept as given."""

    def __call__(self, value, name: str):
        if not isinstance(value, (bool, np.bool_)):
            raise InvalidParameterError(f"{name} must be True or False; got {value!r}")
        return value


class Sizes:
    """Ensemble sizes (:func:`~ensstab_dask.checks.check_m_ensemble`), kept as a sorted tuple."""

    def __call__(self, value, name: str) -> tuple[int, ...]:
        return tuple(check_m_ensemble(value))


class Seed:
    """A seed reduced to the int the results record (:func:`~ensstab_dask.checks.check_seed`)."""

    def __call__(self, value, name: str) -> int:
        return check_seed(value)


class Resample:
    """A resample of the real runs (:func:`~ensstab_dask.real.selectors.check_resample`), kept as given."""

    def __call__(self, value, name: str):
        check_resample(value, name)
        return value


#: The most bootstrap replicates: at 10,000 the ends of a 95 % percentile interval are
#: within about 0.2 percentile points of where infinitely many would put them, and the
#: replicates' memory grows with their number (the default model holds sizes x n_boot x
#: 10 x 10 pair similarities: 10^4 replicates are a few hundred MB).
MAX_BOOT = 10_000


class BootCount:
    """Bootstrap replicates: 0 (no bootstrap) or in [20, :data:`MAX_BOOT`] (a percentile interval)."""

    def __call__(self, value, name: str) -> int:
        value = check_int(value, name, minimum=0)
        if 0 < value < 20 or value > MAX_BOOT:
            raise InvalidParameterError(
                f"{name} must be 0 (no bootstrap) or in [20, {MAX_BOOT}] for a percentile interval (more replicates "
                f"do not sharpen it, and their memory grows with them); got {value}"
            )
        return value


@dataclass(frozen=True)
class OrNone:
    """None, or what ``constraint`` allows."""

    constraint: Constraint

    def __call__(self, value, name: str):
        return None if value is None else self.constraint(value, name)


class Unchecked:
    """Kept as given: checked where it is used."""

    def __call__(self, value, name: str):
        return value


def validate_params(
    constraints: Mapping[str, Constraint],
    values: Mapping[str, Any],
    defaults: Mapping[str, Callable[[dict], Any]] | None = None,
) -> dict[str, Any]:
    """Every value checked against its constraint, in the order of ``constraints``.

    A value None with an entry in ``defaults`` takes that default first, a function of
    the values checked before it. Returns the values to keep, by name.
    """
    defaults = defaults or {}
    checked: dict[str, Any] = {}
    for name, constraint in constraints.items():
        value = values[name]
        if value is None and name in defaults:
            value = defaults[name](checked)
        checked[name] = constraint(value, name)
    return checked


@dataclass(frozen=True)
class EstimateSettings:
    """Every setting of one estimate, checked on construction (see the module docstring).

    The fields are :func:`~ensstab_dask.estimate`'s keywords that shape the result, and
    the problem (``n_feature``, ``n_target``); where the work runs (``client``,
    ``progress``, ``allow_large``) is not a setting. ``n_runs=None`` becomes
    ``max(m_ensemble)``; ``m_ensemble`` becomes a sorted tuple and ``seed`` the int
    recorded. ``selector`` is checked when the runs are made.

    Raises
    ------
    TypeError, ValueError
        A value its constraint refuses (the message names the parameter), or settings
        that do not go together.
    """

    n_feature: int
    n_target: int
    m_ensemble: Sequence[int] = (1, 5, 10, 20, 30, 50)
    m_stability: int = 50
    n_runs: int = cast(int, None)  # None: max(m_ensemble), an int once constructed
    repeats: int = 20
    p_method: str = "bisect"
    verify: bool = True
    calibrate: bool = False
    calibration_layout: str = DEFAULT_CALIBRATION_LAYOUT
    member_resample: str | float = "bagging"
    n_boot: int = 200
    confidence: float = 0.95
    aggregate: str = "mean_rank"
    index: str = "jaccard"
    resample: str | float = "half"
    seed: SeedLike = 0
    selector: Any = None
    model: str = DEFAULT_MODEL
    precision: float | None = None
    max_real_runs: int | None = None

    #: What each field may be, checked in this order (scikit-learn's ``_parameter_constraints``).
    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "n_feature": Int(minimum=1),
        "n_target": Int(minimum=1),
        "m_ensemble": Sizes(),
        "m_stability": Int(minimum=2),
        "n_runs": Int(minimum=1),
        "repeats": Int(minimum=2),
        "p_method": Options(P_METHODS),
        "verify": Flag(),
        "calibrate": Flag(),
        "calibration_layout": Options(CALIBRATION_LAYOUTS),
        "member_resample": Resample(),
        "n_boot": BootCount(),
        "confidence": Real(minimum=0.0, maximum=1.0, open_minimum=True, open_maximum=True),
        "aggregate": Options(AGGREGATES),
        "index": Options(INDICES),
        "resample": Resample(),
        "seed": Seed(),
        "selector": Unchecked(),
        "model": Options(MODELS),
        "precision": OrNone(Real(minimum=0.0, maximum=1.0, open_minimum=True)),
        "max_real_runs": OrNone(Int(minimum=1)),
    }
    #: Defaults that depend on other settings, for a value given as None.
    _derived_defaults: ClassVar[dict[str, Callable[[dict], Any]]] = {
        "n_runs": lambda checked: max(checked["m_ensemble"]),  # the method ties n_runs to the ensemble size
    }

    def __post_init__(self) -> None:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        given_n_runs = self.n_runs is not None
        for name, value in validate_params(self._parameter_constraints, values, self._derived_defaults).items():
            object.__setattr__(self, name, value)  # frozen: set once, here
        self._check_together(given_n_runs=given_n_runs)

    def _check_together(self, *, given_n_runs: bool) -> None:
        """The checks that involve several settings, after each one alone."""
        check_n_target(self.n_target, self.n_feature)
        curve_model = self.curve_model
        design = curve_model.copy_design()
        if not curve_model.paper_runs and design is not None and self.n_runs > design[0] * design[1]:
            # t_uniform and A[f] count the runs of the model's own copies: no more can be had.
            pool = design[0] * design[1]
            if given_n_runs:
                raise InvalidParameterError(
                    f"n_runs must be at most {pool} with model={self.model!r}, whose t_uniform and A[f] count the "
                    f"{pool} runs of its real ensemble copies; got {self.n_runs}"
                )
            object.__setattr__(self, "n_runs", pool)
        self._check_precision(design)
        if self.calibrate and not curve_model.simulator:
            raise InvalidParameterError(
                f"calibrate=True calibrates the paper's simulator over a (u, p) grid and needs "
                f"{' or '.join(f'model={m!r}' for m in SIMULATOR_MODELS)}; model={self.model!r} is not a simulator"
            )
        if self.index not in curve_model.indices:
            raise InvalidParameterError(
                f"index {self.index!r} is not a mean over pairs of copies; model={self.model!r} supports "
                + ", ".join(map(repr, curve_model.indices))
            )
        # Before any real run: the prediction's largest cell, and the p fit's many copies.
        check_cell_memory(self.n_feature, self.n_target, max(self.m_list), self.m_stability, self.n_runs)
        check_cell_memory(self.n_feature, self.n_target, 1, self.m_stability * self.repeats, self.n_runs)

    def _check_precision(self, design: tuple[int, int] | None) -> None:
        """``precision`` needs a model that measures copies (it grows them in rounds);
        ``max_real_runs`` is its cap, at least the first round's runs."""
        if self.precision is None:
            if self.max_real_runs is not None:
                raise InvalidParameterError(
                    f"max_real_runs caps the rounds of real runs that a precision asks for, and none was asked for "
                    f"(got {self.max_real_runs}): pass precision=HALF_WIDTH too"
                )
            return
        if design is None:  # the model does not measure copies (CurveModel.measures_copies)
            raise InvalidParameterError(
                f"precision: model={self.model!r} does not measure real ensemble copies, so it cannot spend runs "
                f"in rounds; use model={DEFAULT_MODEL!r}"
            )
        first = design[0] * design[1]
        if self.max_real_runs is None:
            object.__setattr__(self, "max_real_runs", max(DEFAULT_MAX_REAL_RUNS, first))
        elif self.max_real_runs < first:
            raise InvalidParameterError(
                f"max_real_runs must be at least {first}, the first round's real runs with model={self.model!r} "
                f"({design[0]} copies of {design[1]}); got {self.max_real_runs}"
            )

    @property
    def m_list(self) -> list[int]:
        """The ensemble sizes as a list (an xarray coordinate)."""
        return list(self.m_ensemble)

    @property
    def curve_model(self) -> CurveModel:
        """The model that makes the curve (:mod:`ensstab_dask.models`)."""
        return get_model(self.model)

    def to_dict(self) -> dict[str, Any]:
        """The settings an :class:`~ensstab_dask.estimates.result.Estimate` records (its
        ``settings``: the JSON's and the Dataset's attributes): those the model used. The
        problem and the sizes are the Estimate's own fields; a setting only some models
        use (:data:`~ensstab_dask.models.USED_WHEN`: p's fit, the paper's runs' layout and
        resamples) is recorded for those models alone."""
        recorded = dict(
            m_stability=self.m_stability,
            n_runs=self.n_runs,
            repeats=self.repeats,
            p_method=self.p_method,
            aggregate=self.aggregate,
            index=self.index,
            resample=str(self.resample),
            calibration_layout=self.calibration_layout,
            member_resample=str(self.member_resample),
            n_boot=self.n_boot,
            confidence=self.confidence,
            seed=self.seed,
            selector=describe_selector(self.selector),
            model=self.model,
            precision=self.precision,
            max_real_runs=self.max_real_runs,
        )
        return {key: value for key, value in recorded.items() if self.model in models_using(key)}
