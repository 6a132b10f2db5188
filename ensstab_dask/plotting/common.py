"""What every picture shares: the results it accepts, one colour per role, its axes and ticks.

A picture takes what the library returns: a sweep Dataset, an :class:`Estimate`, or
``Estimate.to_dataset()`` (also read back from netCDF). :func:`result_kind` says which
one a Dataset is, from the ``kind`` attribute every result carries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ensstab_dask.exceptions import InvalidParameterError

# matplotlib is imported where a picture is drawn: it is slow to import, and optional for the method.

__all__ = [
    "KINDS",
    "result_kind",
    "axes_of",
    "as_dataset",
    "is_estimate",
    "is_sweep",
    "attr_of",
    "pick_p",
    "integer_ticks",
    "grid_ticks",
    "drew_something",
    "need_kind",
]

# One colour per role, the same in every picture.
STABILITY_COLOR = "tab:blue"
N_USEFUL_COLOR = "tab:orange"
REAL_COLOR = "black"
UNIFORM_COLOR = "tab:gray"


def axes_of(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.4, 4.8), layout="constrained")
    return ax


def as_dataset(obj) -> xr.Dataset:
    if isinstance(obj, xr.Dataset):
        return obj
    if hasattr(obj, "to_dataset") and hasattr(obj, "curve"):
        return obj.to_dataset()
    raise InvalidParameterError(
        f"expected a sweep Dataset, an Estimate or Estimate.to_dataset(); got {type(obj).__name__}"
    )


#: The ``kind`` attribute of every result Dataset, and what writes it.
KINDS = {
    "estimate": "Estimate.to_dataset",
    "sweep": "sweep",
    "naive_check": "real_ensemble_stability",
    "calibration": "calibrate",
}


def result_kind(ds: xr.Dataset) -> str | None:
    """What a result Dataset is: its ``kind`` attribute (None: not a result of this package)."""
    kind = ds.attrs.get("kind")
    return None if kind is None else str(kind)


def is_estimate(ds: xr.Dataset) -> bool:
    return result_kind(ds) == "estimate"


def is_sweep(ds: xr.Dataset) -> bool:
    return result_kind(ds) == "sweep"


def attr_of(ds: xr.Dataset, key: str, default: Any = None) -> Any:
    """An attribute, with the 'none' that netCDF needs in place of None read back as None."""
    value = ds.attrs.get(key, default)
    return None if isinstance(value, str) and value == "none" else value


def pick_p(values: np.ndarray, p, max_lines: int) -> np.ndarray:
    """The p values to draw: the nearest grid values to ``p``, or up to ``max_lines`` spread over the grid."""
    if p is not None:
        wanted = np.atleast_1d(np.asarray(p, dtype=float))
        return values[np.abs(values[None, :] - wanted[:, None]).argmin(axis=1)]
    return values[np.unique(np.linspace(0, len(values) - 1, min(max_lines, len(values))).round().astype(int))]


def integer_ticks(axis) -> None:
    """Ticks at whole numbers only, on an axis of counts (m_ensemble, features, runs):
    matplotlib's default puts ticks at 1.5 and 2.5 on a short range."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def grid_ticks(axis, values, max_ticks: int = 10) -> None:
    """Ticks at the grid's own values (evenly thinned to ``max_ticks``): a surface or curve
    over a sweep's grid is read at its cells, not at round numbers between them."""
    values = np.asarray(values)
    keep = np.unique(np.linspace(0, len(values) - 1, min(max_ticks, len(values))).round().astype(int))
    axis.set_ticks(values[keep], labels=[f"{v:g}" for v in values[keep]])


def drew_something(artist) -> bool:
    """Whether a contour or filled-contour set drew anything: a level outside the
    surface's range gives a set with only empty paths."""
    return any(len(path.vertices) for path in artist.get_paths())


def need_kind(ds: xr.Dataset, kind: str, what: str) -> None:
    ok = is_estimate(ds) if kind == "estimate" else is_sweep(ds)
    if not ok:
        raise InvalidParameterError(f"{what} needs {'an estimate' if kind == 'estimate' else 'a sweep'} Dataset")
