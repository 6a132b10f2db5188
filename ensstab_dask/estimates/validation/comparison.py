"""The estimate against a naive check, per ensemble size: :func:`compare`, the one place
the verdict "within 2 SE" is decided, and its words (:func:`verdict`).

The validation harness (:mod:`ensstab_dask.estimates.validation.harness`) prints it, and
:meth:`Estimate.to_dataset <ensstab_dask.estimates.records.estimate.Estimate.to_dataset>` stores it
beside the naive check (``compare_*``), where the report reads it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import xarray as xr

__all__ = ["compare", "verdict", "z_text", "comparison_dataset", "Predicts"]

#: Within this many combined standard errors of the naive value, a prediction passes.
WITHIN = 2.0


class Predicts(Protocol):
    """What :func:`compare` reads of an estimate (an :class:`~ensstab_dask.estimates.records.estimate.Estimate`)."""

    @property
    def has_curve(self) -> bool: ...

    def predicted(self) -> dict[int, float]: ...

    def curve_interval(self) -> dict[int, tuple[float, float]]: ...

    def curve_se(self) -> dict[int, float]: ...

    def curve_band(self) -> dict[int, float]: ...


def compare(est: Predicts, naive: xr.Dataset) -> dict[int, dict]:
    """Per ensemble size: the prediction, its interval and standard error, the naive value,
    its SE, the combined z and the verdicts.

    ``z = (predicted - real) / sqrt(predicted_se^2 + (band / 2)^2 + real_se^2)``, the
    combined z (docs/method.md section 11, "Scoring"): an unbiased prediction from 100 real
    runs is noisier than the 1,000-run naive check, and the naive SE alone would fail it
    about one size in four. ``predicted_se`` is :meth:`Estimate.curve_se`, the point's
    sampling error; ``band`` the model band beyond the measured sizes
    (:meth:`Estimate.curve_band`, 0 elsewhere), read as a two-SD range of the model's
    error. ``covered`` when the interval holds the naive value (None when there is no
    interval: ``n_boot=0`` or no curve); ``within_2se`` when ``|z| <= 2`` (False without
    a curve: the method had nothing to say).
    """
    pred = est.predicted()
    interval = est.curve_interval()
    spread = est.curve_se()
    bands = est.curve_band()
    out = {}
    for m, r, se in zip(naive["m_ensemble"].values, naive["stability"].values, naive["stability_se"].values):
        m = int(m)
        nan = float("nan")
        p = pred.get(m, nan) if est.has_curve else nan
        lo, hi = interval.get(m, (nan, nan)) if est.has_curve else (nan, nan)
        p_se = spread.get(m, 0.0) if est.has_curve else nan
        both = float(np.sqrt(p_se**2 + (bands.get(m, 0.0) / 2.0) ** 2 + se**2))
        z = (p - r) / both if np.isfinite(p) and both > 0 else float("nan")
        out[m] = {
            "predicted": float(p),
            "lower": float(lo),
            "upper": float(hi),
            "predicted_se": float(p_se),
            "band": float(bands.get(m, 0.0)) if est.has_curve else nan,
            "real": float(r),
            "real_se": float(se),
            "z": float(z),
            # None (JSON null) without an interval (n_boot=0): neither covered nor missed.
            "covered": bool(lo <= r <= hi) if np.isfinite(lo) else None,
            "within_2se": bool(np.isfinite(z) and abs(z) <= WITHIN),
        }
    return out


def verdict(row: dict) -> str:
    """One size's verdict in words (a row of :func:`compare`, or any mapping with its
    ``predicted``, ``z`` and ``within_2se``): what the table and the HTML report say."""
    if not np.isfinite(row["predicted"]):
        return "no prediction"
    if not np.isfinite(row["z"]):
        return "n/a (SE 0 or unknown)"
    return "within 2 SE" if row["within_2se"] else "outside 2 SE"


def z_text(z: float) -> str:
    """The combined z as the table and the report print it."""
    return f"{z:+.1f}" if np.isfinite(z) else "n/a"


def comparison_dataset(rows: dict[int, dict]) -> xr.Dataset:
    """:func:`compare`'s rows as ``compare_*`` variables over ``m_ensemble`` (the SE of
    the prediction, the combined z, whether it is within 2 combined SE, whether the
    interval covers the naive value: 1, 0, or NaN without an interval), for netCDF."""
    sizes = list(rows)

    def column(key: str, dtype=float) -> np.ndarray:
        return np.array([np.nan if rows[m][key] is None else rows[m][key] for m in sizes], dtype=dtype)

    return xr.Dataset(
        {
            "compare_predicted_se": (
                "m_ensemble",
                column("predicted_se"),
                {"long_name": "SE of the prediction", "description": "Estimate.curve_se()"},
            ),
            "compare_z": (
                "m_ensemble",
                column("z"),
                {
                    "long_name": "combined z",
                    "description": (
                        "(predicted - naive) / sqrt(SE_predicted^2 + (band / 2)^2 + SE_naive^2), as compare() gives it"
                    ),
                },
            ),
            "compare_within_2se": (
                "m_ensemble",
                column("within_2se", np.int8),
                {
                    "long_name": "within 2 SE",
                    "description": "1 where |combined z| <= 2, as compare() decides it",
                },
            ),
            "compare_covered": (
                "m_ensemble",
                column("covered"),
                {
                    "long_name": "interval covers the naive value",
                    "description": "1 or 0; NaN without an interval (n_boot=0)",
                },
            ),
        },
        coords={"m_ensemble": sizes},
    )
