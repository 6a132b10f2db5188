"""Calibration on a sweep: where the two surfaces meet the real selector (docs/method.md section 6).

Given the stability of the single real selector and the n_useful measured on it, the
cells of a sweep consistent with each statistic form two regions over (n_useful, p);
their intersection holds the parameters consistent with both, and the best cell is the
one closest to both observations. Available as a function and as the ``ensstab``
accessor on sweep Datasets::

    cal = ds.ensstab.calibrate(real_stability=0.12, n_useful=85, n_runs=30)
    cal.attrs["best_n_useful"], cal.attrs["best_p"]
    cal.consistent.plot()   # the intersection
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from ensstab_dask.checks import check_real
from ensstab_dask.exceptions import EnsstabWarning, InvalidParameterError
from ensstab_dask.indices import index_range
from ensstab_dask.wording import param

__all__ = ["calibrate", "EnsstabAccessor", "NoConsistentCellWarning"]


def n_useful_v_slice(ds: xr.Dataset, n_runs: int | None, name: str = "n_useful_v") -> xr.DataArray:
    """``ds[name]`` (n_useful_v or its std) over (n_useful, p) for the given ``n_runs``."""
    runs = np.asarray(ds["n_runs"].values)
    if n_runs is None:
        if len(np.unique(runs)) != 1:
            raise InvalidParameterError(
                param("n_runs")
                + f" must be given: this sweep has n_useful_v for n_runs in {sorted(set(runs.tolist()))} "
                "(use the number of real runs behind the observed n_useful)"
            )
        n_runs = int(runs[0])
    hits = np.flatnonzero(runs == n_runs)
    if not len(hits):
        raise InvalidParameterError(
            f"n_runs={n_runs} is not in this sweep; it has n_runs in {sorted(set(runs.tolist()))}"
        )
    return ds[name].isel(m_ensemble=int(hits[0]), drop=True).drop_vars("n_runs", errors="ignore")


def calibrate(
    ds: xr.Dataset,
    real_stability: float,
    n_useful: float,
    *,
    n_runs: int | None = None,
    stability_rtol: float = 0.1,
    stability_atol: float = 0.005,
    n_useful_atol: float = 2.0,
) -> xr.Dataset:
    """Cells of a sweep consistent with the observed stability, n_useful, and both.

    Parameters
    ----------
    ds : sweep Dataset
        Must contain ``m_ensemble = 1`` (the single-selector stability surface).
    real_stability : float
        Stability of the single real selector (same index as the sweep), in that index's
        range (:func:`~ensstab_dask.indices.index_range`): Kuncheva's and Nogueira's
        indices are 0 at chance and can be negative.
    n_useful : float
        n_useful measured on the real selector with ``n_runs`` runs.
    n_runs : int, optional
        Which n_useful_v surface to use; needed when the sweep's n_runs varies with
        m_ensemble (the default ``n_runs = m_ensemble``).
    stability_rtol : float
        Relative tolerance on the stability (default 10 %, as in docs/method.md section 6).
    stability_atol : float
        Floor of the stability band: a cell matches when ``|stability - real_stability|
        <= max(stability_rtol * |real_stability|, stability_atol)``. A purely relative band
        is empty at a stability of 0 and inverted below it, which Kuncheva's and
        Nogueira's indices reach; the default 0.005 leaves the band of any stability
        above 0.05 as it is.
    n_useful_atol : float
        Absolute tolerance on n_useful (default 2 features).

    Returns
    -------
    xarray.Dataset over (n_useful, p)
        ``stability``, ``n_useful_v`` (the two surfaces), boolean ``stability_match``,
        ``n_useful_match``, ``consistent`` (both), and ``distance`` (squared, in units of
        the tolerances). ``attrs``: ``best_n_useful``, ``best_p`` (the consistent cell of
        smallest distance, or the closest cell overall when none is consistent; of cells
        at the same distance, the first in the sweep's (n_useful, p) order),
        ``stability_band`` (the half-width of the stability band), ``any_consistent`` and
        the inputs.

    Examples
    --------
    A small sweep, then the observations a real selector would give, here taken from
    the cell (n_useful=20, p=0.6) itself, so that cell is where they meet:

    >>> import ensstab_dask as es
    >>> ds = es.sweep(200, 5, n_useful=[10, 20, 40], p=[0.3, 0.6, 0.9], m_ensemble=[1], n_runs=10,
    ...               m_stability=10, repeats=2, client="synchronous", progress=False)
    >>> cell = ds.sel(n_useful=20, p=0.6, m_ensemble=1)
    >>> cal = es.calibrate(ds, float(cell.stability), float(cell.n_useful_v))
    >>> cal.attrs["best_n_useful"], cal.attrs["best_p"], cal.attrs["any_consistent"]
    (20, 0.6, 1)
    >>> cal.consistent.dims
    ('n_useful', 'p')
    """
    low, high = index_range(ds.attrs.get("index"))  # a sweep records its index; without one, any index's
    real_stability = check_real(real_stability, "real_stability", minimum=low, maximum=high)
    n_useful = check_real(n_useful, "n_useful", minimum=0.0)
    stability_rtol = check_real(stability_rtol, "stability_rtol", minimum=0.0, open_minimum=True)
    stability_atol = check_real(stability_atol, "stability_atol", minimum=0.0, open_minimum=True)
    n_useful_atol = check_real(n_useful_atol, "n_useful_atol", minimum=0.0, open_minimum=True)
    if "m_ensemble" not in ds.dims or 1 not in ds["m_ensemble"].values:
        raise InvalidParameterError("calibration needs the single-selector surface: include m_ensemble=1 in the sweep")
    stab = ds["stability"].sel(m_ensemble=1, drop=True).drop_vars("n_runs", errors="ignore")
    nuv = n_useful_v_slice(ds, n_runs)
    band = max(stability_rtol * abs(real_stability), stability_atol)
    d_stab = (stab - real_stability) / band
    d_nuv = (nuv - n_useful) / n_useful_atol
    out = xr.Dataset(
        {
            "stability": stab,
            "n_useful_v": nuv,
            "stability_match": (abs(d_stab) <= 1).assign_attrs(
                long_name=f"|stability - {real_stability:g}| <= {band:g} (max of {stability_rtol:g} x |observed| "
                f"and {stability_atol:g})"
            ),
            "n_useful_match": (abs(d_nuv) <= 1).assign_attrs(
                long_name=f"|n_useful_v - {n_useful:g}| <= {n_useful_atol:g}"
            ),
            "distance": (d_stab**2 + d_nuv**2).assign_attrs(
                long_name="distance", description="squared distance to both observations, in tolerances"
            ),
        }
    )
    out["consistent"] = (out.stability_match & out.n_useful_match).assign_attrs(
        long_name="consistent with both observations"
    )
    dist = out["distance"].where(out["consistent"]) if bool(out["consistent"].any()) else out["distance"]
    if bool(dist.notnull().any()):
        # One cell's own (n_useful, p): nanargmin takes the first minimum in C order, so a
        # tie goes to the smallest n_useful index, then the smallest p index.
        flat = dist.transpose("n_useful", "p")
        i, j = np.unravel_index(int(np.nanargmin(flat.values)), flat.shape)
        best_u, best_p = int(flat["n_useful"].values[i]), float(flat["p"].values[j])
    else:
        best_u, best_p = -1, float("nan")
    out.attrs.update(
        real_stability=real_stability,
        observed_n_useful=n_useful,
        stability_rtol=stability_rtol,
        stability_atol=stability_atol,
        stability_band=band,
        n_useful_atol=n_useful_atol,
        any_consistent=int(bool(out["consistent"].any())),
        best_n_useful=best_u,
        best_p=best_p,
    )
    return out


class NoConsistentCellWarning(EnsstabWarning):
    """``ds.ensstab.best`` found no cell consistent with both observations, and returned
    the closest cell, which matches neither within its tolerance."""


class EnsstabAccessor:
    """``ds.ensstab``: helpers on ensstab_dask sweep Datasets, registered on xarray by
    ``import ensstab_dask.accessor`` (:mod:`ensstab_dask.accessor`)."""

    def __init__(self, ds: xr.Dataset):
        self._ds = ds

    def calibrate(self, real_stability: float, n_useful: float, **kwargs) -> xr.Dataset:
        """See :func:`ensstab_dask.simulator.calibration.calibrate`."""
        return calibrate(self._ds, real_stability, n_useful, **kwargs)

    def best(self, real_stability: float, n_useful: float, **kwargs) -> tuple[int, float]:
        """The calibrated ``(n_useful, p)``: the consistent cell closest to both observations.

        When no cell is consistent with both (``calibrate``'s ``any_consistent`` is 0), the
        closest cell overall is returned with a :class:`NoConsistentCellWarning` that says
        how far it is: it then matches neither observation within its tolerance.
        """
        cal = calibrate(self._ds, real_stability, n_useful, **kwargs)
        best = cal.attrs["best_n_useful"], cal.attrs["best_p"]
        if not cal.attrs["any_consistent"]:
            distance = float(np.sqrt(np.nanmin(cal["distance"].values))) if best[0] >= 0 else float("nan")
            warnings.warn(
                f"no cell of the sweep is consistent with both real_stability={real_stability:g} and "
                f"n_useful={n_useful:g}; returning the closest, (n_useful, p) = ({best[0]}, {best[1]:g}), "
                f"{distance:.2g} tolerances away: widen the tolerances (stability_rtol, n_useful_atol) or the grid",
                NoConsistentCellWarning,
                stacklevel=2,
            )
        return best
