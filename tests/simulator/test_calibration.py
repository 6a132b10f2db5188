"""Calibration on constructed sweep surfaces: the best cell, ties, and indices below 0."""

import numpy as np
import pytest
import xarray as xr

from ensstab_dask.simulator.calibration import calibrate

U, P = [10, 20, 40], [0.2, 0.5, 0.8]


def surfaces(stability, n_useful_v) -> xr.Dataset:
    """A sweep-shaped Dataset with given single-selector surfaces over (n_useful, p)."""
    dims = ("n_useful", "p", "m_ensemble")
    return xr.Dataset(
        {
            "stability": (dims, np.asarray(stability, dtype=float)[..., None]),
            "n_useful_v": (dims, np.asarray(n_useful_v, dtype=float)[..., None]),
        },
        coords={"n_useful": U, "p": P, "m_ensemble": [1], "n_runs": ("m_ensemble", [10])},
    )


def tied_surfaces() -> xr.Dataset:
    """Two cells match both observations (0.1, 30) exactly: (20, 0.8) and (40, 0.2)."""
    stab = np.full((3, 3), 0.5)
    nuv = np.full((3, 3), 90.0)
    for i, j in ((1, 2), (2, 0)):
        stab[i, j], nuv[i, j] = 0.1, 30.0
    return surfaces(stab, nuv)


def test_tied_minima_give_one_consistent_cell_the_first_in_grid_order():
    ds = tied_surfaces()
    cal = calibrate(ds, 0.1, 30.0)
    best = (cal.attrs["best_n_useful"], cal.attrs["best_p"])
    # Not a mix of the two cells' coordinates such as (20, 0.2), which matches neither.
    assert bool(cal["consistent"].sel(n_useful=best[0], p=best[1]))
    assert best == (20, 0.8)  # first in (n_useful, p) order
    # The rule is the grid's (n_useful, p) order, whatever the order of the stored dimensions.
    assert calibrate(ds.transpose("p", "n_useful", "m_ensemble"), 0.1, 30.0).attrs["best_n_useful"] == 20


def test_without_a_consistent_cell_the_closest_is_chosen():
    stab = np.full((3, 3), 0.5)
    stab[2, 1] = 0.3  # closest in stability, nowhere consistent
    cal = calibrate(surfaces(stab, np.full((3, 3), 30.0)), 0.1, 30.0)
    assert cal.attrs["any_consistent"] == 0
    assert (cal.attrs["best_n_useful"], cal.attrs["best_p"]) == (40, 0.5)


@pytest.mark.parametrize("real", [-0.02, 0.0])
def test_a_stability_at_or_below_zero_has_a_band(real):
    # Kuncheva's and Nogueira's indices are 0 at chance and can go below it.
    stab = np.full((3, 3), 0.2)
    stab[0, 1] = real - 0.003  # within the absolute floor of the band (0.005)
    stab[2, 2] = real + 0.02  # outside it
    cal = calibrate(surfaces(stab, np.full((3, 3), 30.0)), real, 30.0)
    assert cal.attrs["stability_band"] == 0.005
    assert cal["stability_match"].sum() == 1 and bool(cal["consistent"].sel(n_useful=10, p=0.5))
    assert (cal.attrs["best_n_useful"], cal.attrs["best_p"]) == (10, 0.5)


def test_the_band_is_relative_above_its_floor():
    stab = np.full((3, 3), 0.5)
    stab[1, 1] = 0.28  # within 10 % of 0.3, outside the 0.005 floor
    cal = calibrate(surfaces(stab, np.full((3, 3), 30.0)), 0.3, 30.0)
    assert cal.attrs["stability_band"] == pytest.approx(0.03)
    assert bool(cal["consistent"].sel(n_useful=20, p=0.5)) and int(cal["consistent"].sum()) == 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(real_stability=-1.5), r"real_stability must be in \[-1.0, 1.0\]"),
        (dict(stability_atol=0.0), r"stability_atol must be in \(0.0, inf\)"),
    ],
)
def test_bad_tolerances_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        calibrate(tied_surfaces(), **dict(dict(real_stability=0.1, n_useful=30.0), **kwargs))
