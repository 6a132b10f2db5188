"""The estimate's settings as keyword arguments, for type checkers: generated from
:class:`~ensstab_dask.settings.EstimateSettings` by ``python -m ensstab_dask.settings``
(never edited by hand; tests/settings/test_options.py fails while it is out of date)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from ensstab_dask.seeding import SeedLike

__all__ = ["EstimateOptions"]


class EstimateOptions(TypedDict, total=False):
    """Every estimate setting, by name, with its type (what ``**settings`` takes)."""

    m_ensemble: Sequence[int]
    m_stability: int
    n_runs: int | None
    repeats: int
    p_method: str
    verify: bool
    calibrate: bool
    aggregate: str
    index: str
    resample: str | float
    calibration_layout: str
    member_resample: str | float
    n_boot: int
    confidence: float
    seed: SeedLike
    selector: Any | None
    model: str
    copies: int | None
    members: int | None
    layout: str
    precision: float | None
    max_real_runs: int | None
    cutoff: float
    pfer: float | None
    predictor: str | None
