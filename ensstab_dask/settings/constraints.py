"""What a setting may be: one constraint object per kind of value, as scikit-learn's
``utils/_param_validation.py`` has them.

A constraint is called with a value and the parameter's name and returns the value to
keep (normalised: an int for a count, a tuple for sizes) or raises the one-line error of
:mod:`ensstab_dask.checks`, which names the parameter. Its ``str`` says what it allows in
the words of that error (``an int >= 2``, ``a real number in (0.0, 1.0)``): the estimate's
docstring and the command line's help read it there. :meth:`~Constraint.invalid` gives
values it refuses, from which tests/settings/test_settings.py generates a refusal test for every
setting, as scikit-learn's ``generate_invalid_param_val`` does.

:func:`validate_params` checks a table of them, parameter name -> constraint, in the
table's order (scikit-learn's ``_parameter_constraints``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ensstab_dask.checks import (
    check_choice,
    check_int,
    check_m_ensemble,
    check_real,
    check_seed,
    int_bounds,
    real_interval,
)
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.resamples import RESAMPLE_VALUES, check_resample
from ensstab_dask.seeding import MAX_SEED
from ensstab_dask.wording import subject

__all__ = [
    "Constraint",
    "Int",
    "Real",
    "Options",
    "Flag",
    "Sizes",
    "Seed",
    "Resample",
    "BootCount",
    "OrNone",
    "Unchecked",
    "validate_params",
    "MAX_BOOT",
]


class Constraint:
    """What a parameter may be (the base of every constraint here).

    Called with a value and its name, returns the value to keep or raises the one-line
    error; ``str`` says what it allows; :meth:`invalid` lists values it refuses.
    """

    def __call__(self, value: Any, name: str) -> Any:
        raise NotImplementedError

    def invalid(self) -> tuple[Any, ...]:
        """Values this constraint refuses (none where anything goes)."""
        return ()


@dataclass(frozen=True)
class Int(Constraint):
    """An int in ``[minimum, maximum]`` (:func:`~ensstab_dask.checks.check_int`)."""

    minimum: int | None = None
    maximum: int | None = None

    def __call__(self, value, name: str) -> int:
        return check_int(value, name, minimum=self.minimum, maximum=self.maximum)

    def __str__(self) -> str:
        return (
            "an int"
            if self.minimum is None and self.maximum is None
            else f"an int {int_bounds(self.minimum, self.maximum)}"
        )

    def invalid(self) -> tuple[Any, ...]:
        out: tuple[Any, ...] = (2.5, True, "3")
        if self.minimum is not None:
            out += (self.minimum - 1,)
        if self.maximum is not None:
            out += (self.maximum + 1,)
        return out


@dataclass(frozen=True)
class Real(Constraint):
    """A finite real number in an interval (:func:`~ensstab_dask.checks.check_real`)."""

    minimum: float | None = None
    maximum: float | None = None
    open_minimum: bool = False
    open_maximum: bool = False

    def __call__(self, value, name: str) -> float:
        return check_real(
            value,
            name,
            minimum=self.minimum,
            maximum=self.maximum,
            open_minimum=self.open_minimum,
            open_maximum=self.open_maximum,
        )

    def __str__(self) -> str:
        interval = real_interval(
            self.minimum, self.maximum, open_minimum=self.open_minimum, open_maximum=self.open_maximum
        )
        return f"a real number {interval}"

    def invalid(self) -> tuple[Any, ...]:
        out: tuple[Any, ...] = (math.nan, math.inf, "0.5", False)
        if self.minimum is not None:
            out += (self.minimum if self.open_minimum else self.minimum - 1.0,)
        if self.maximum is not None:
            out += (self.maximum if self.open_maximum else self.maximum + 1.0,)
        return out


@dataclass(frozen=True)
class Options(Constraint):
    """One of ``allowed`` (:func:`~ensstab_dask.checks.check_choice`)."""

    allowed: Collection[str]

    def __call__(self, value, name: str) -> str:
        return check_choice(value, name, self.allowed)

    def __str__(self) -> str:
        return f"one of {', '.join(map(repr, self.allowed))}"

    def invalid(self) -> tuple[Any, ...]:
        return ("not-" + "-".join(self.allowed), 1, None)


class Flag(Constraint):
    """True or False (a NumPy bool too), kept as given."""

    def __call__(self, value, name: str):
        if not isinstance(value, (bool, np.bool_)):
            raise InvalidParameterError(subject(name) + f" must be {self}; got {value!r}")
        return value

    def __str__(self) -> str:
        return "True or False"

    def invalid(self) -> tuple[Any, ...]:
        return (1, "yes", None)


class Sizes(Constraint):
    """Ensemble sizes (:func:`~ensstab_dask.checks.check_m_ensemble`), kept as a sorted tuple."""

    def __call__(self, value, name: str) -> tuple[int, ...]:
        return tuple(check_m_ensemble(value))

    def __str__(self) -> str:
        return "distinct ints >= 1"

    def invalid(self) -> tuple[Any, ...]:
        return ((0, 5), (5, 5), (2.5,), "5")


class Seed(Constraint):
    """A seed reduced to the int the results record (:func:`~ensstab_dask.checks.check_seed`)."""

    def __call__(self, value, name: str) -> int:
        return check_seed(value)

    def __str__(self) -> str:
        return f"an int in [0, {MAX_SEED}] or a SeedSequence"

    def invalid(self) -> tuple[Any, ...]:
        return (-1, MAX_SEED + 1, 2.5, "0")


class Resample(Constraint):
    """A resample of the real runs (:func:`~ensstab_dask.real.resamples.check_resample`), kept as given."""

    def __call__(self, value, name: str):
        check_resample(value, name)
        return value

    def __str__(self) -> str:
        return RESAMPLE_VALUES

    def invalid(self) -> tuple[Any, ...]:
        return ("thirds", 0.0, 1.5, None)


#: The most bootstrap replicates: at 10,000 the ends of a 95 % percentile interval are
#: within about 0.2 percentile points of where infinitely many would put them, and the
#: replicates' memory grows with their number (the default model holds sizes x n_boot x
#: 10 x 10 pair similarities: 10^4 replicates are a few hundred MB).
MAX_BOOT = 10_000


class BootCount(Constraint):
    """Bootstrap replicates: 0 (no bootstrap) or in [20, :data:`MAX_BOOT`] (a percentile interval)."""

    def __call__(self, value, name: str) -> int:
        value = check_int(value, name, minimum=0)
        if 0 < value < 20 or value > MAX_BOOT:
            raise InvalidParameterError(
                subject(name)
                + f" must be 0 (no bootstrap) or in [20, {MAX_BOOT}] for a percentile interval (more replicates "
                f"do not sharpen it, and their memory grows with them); got {value}"
            )
        return value

    def __str__(self) -> str:
        return f"0 (no bootstrap) or an int in [20, {MAX_BOOT}]"

    def invalid(self) -> tuple[Any, ...]:
        return (-1, 19, MAX_BOOT + 1, 2.5)


@dataclass(frozen=True)
class OrNone(Constraint):
    """None, or what ``constraint`` allows."""

    constraint: Constraint

    def __call__(self, value, name: str):
        return None if value is None else self.constraint(value, name)

    def __str__(self) -> str:
        return f"None or {self.constraint}"

    def invalid(self) -> tuple[Any, ...]:
        return tuple(v for v in self.constraint.invalid() if v is not None)


@dataclass(frozen=True)
class Unchecked(Constraint):
    """Kept as given: checked where it is used; ``what`` says what it may be."""

    what: str = "anything"

    def __call__(self, value, name: str):
        return value

    def __str__(self) -> str:
        return self.what


def validate_params(
    constraints: Mapping[str, Constraint],
    values: Mapping[str, Any],
    defaults: Mapping[str, Callable[[dict], Any]] | None = None,
) -> dict[str, Any]:
    """Every value checked against its constraint, in the order of ``constraints``. A value
    None with an entry in ``defaults`` takes that default first, a function of the values
    checked before it. Returns the values to keep, by name."""
    defaults = defaults or {}
    checked: dict[str, Any] = {}
    for name, constraint in constraints.items():
        value = values[name]
        if value is None and name in defaults:
            value = defaults[name](checked)
        checked[name] = constraint(value, name)
    return checked
