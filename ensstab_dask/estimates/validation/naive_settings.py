"""The naive check's settings (:class:`NaiveSettings`): what its cache file is keyed on,
and the defaults of :func:`~ensstab_dask.validate` and ``ensstab validate``.

Apart from the harness (:mod:`~ensstab_dask.estimates.validation.harness`, which re-exports it) so
that the command line's parser reads these defaults without importing the harness and
what it runs (Dask, xarray): ``ensstab validate --help`` stays quick.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ensstab_dask.checks import DEFAULT_M_ENSEMBLE
from ensstab_dask.real.selectors import describe_selector
from ensstab_dask.seeding import SeedLike
from ensstab_dask.settings.constraints import Constraint, Seed, Sizes, validate_params

__all__ = ["NaiveSettings"]


@dataclass(frozen=True)
class NaiveSettings:
    """The naive check's settings (:func:`~ensstab_dask.estimates.validation.harness.naive_check`), what
    its cache file is keyed on.

    ``m_ensemble`` and ``seed`` are checked on construction (sizes as a sorted tuple, the
    seed as the int recorded); the others by
    :func:`~ensstab_dask.real.naive.real_ensemble_stability`.
    """

    m_ensemble: Sequence[int] = DEFAULT_M_ENSEMBLE
    m_stability: int = 20
    selector: Any = None
    aggregate: str = "mean_rank"
    index: str = "jaccard"
    seed: SeedLike = 0

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {"m_ensemble": Sizes(), "seed": Seed()}

    def __post_init__(self) -> None:
        values = {name: getattr(self, name) for name in self._parameter_constraints}
        for name, value in validate_params(self._parameter_constraints, values).items():
            object.__setattr__(self, name, value)  # frozen: set once, here

    def to_dict(self) -> dict[str, Any]:
        """The settings the cached file records and is looked up by."""
        return dict(
            m_ensemble=list(self.m_ensemble),
            m_stability=int(self.m_stability),
            selector=describe_selector(self.selector),
            aggregate=self.aggregate,
            index=self.index,
            seed=self.seed,
            layout="bagging",
        )
