"""Pictures of which features real ensembles keep, and of the stability over n_target.

* :func:`plot_feature_frequencies`: the top features' selection frequency at each
  measured ensemble size, names on the axis (``Estimate.features``);
* :func:`plot_stability_path`: stability selection's path, each top feature's selection
  frequency against the measured ensemble size, the cutoff as a horizontal line
  (``Estimate.features``);
* :func:`plot_stability_surface`: the predicted stability against the ensemble size, one
  line per n_target, each with its interval (``Estimate.surface``).

Each takes an :class:`~ensstab_dask.estimates.records.estimate.Estimate`, its ``features`` or
``surface`` Dataset, or ``Estimate.to_dataset()`` (also read back from netCDF), and an
optional matplotlib ``Axes``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.plotting.common import axes_of

# matplotlib is imported where a picture is drawn: it is slow to import.

__all__ = ["plot_feature_frequencies", "plot_stability_path", "plot_stability_surface", "features_of", "surface_of"]


def features_of(obj) -> xr.Dataset:
    """The feature frequencies of an Estimate, of its ``features`` Dataset or of its
    ``to_dataset()`` (where they are ``feature_*`` over ``m_measured``)."""
    if isinstance(obj, xr.Dataset) and "frequency" in obj:
        return obj
    if isinstance(obj, xr.Dataset) and "feature_frequency" in obj:
        ds = _unprefixed(obj, "feature_")
        ds.attrs = {k.removeprefix("features_"): v for k, v in obj.attrs.items() if k.startswith("features_")}
        return ds
    features = getattr(obj, "features", None)
    if isinstance(features, xr.Dataset):
        return features
    raise InvalidParameterError(
        "expected an Estimate with feature frequencies, its features Dataset or its to_dataset(); "
        f"got {type(obj).__name__} without them"
    )


def _unprefixed(ds: xr.Dataset, prefix: str) -> xr.Dataset:
    """The variables an Estimate's ``to_dataset()`` stored under ``prefix``, named as in
    the Dataset they came from."""
    names = [k for k in ds.data_vars if str(k).startswith(prefix)]
    return ds[names].rename({k: str(k).removeprefix(prefix) for k in names})


def surface_of(obj) -> xr.Dataset:
    """The stability over n_target of an Estimate asked for several, of its ``surface``
    Dataset or of its ``to_dataset()`` (where it is ``surface_*``)."""
    if isinstance(obj, xr.Dataset) and "surface_stability" in obj:
        return _unprefixed(obj, "surface_")
    if isinstance(obj, xr.Dataset) and "n_target" in obj.dims and "reliable" in obj:
        return obj
    surface = getattr(obj, "surface", None)
    if isinstance(surface, xr.Dataset):
        return surface
    raise InvalidParameterError(
        "expected an Estimate asked for several n_target, its surface Dataset or its to_dataset(); "
        f"got {type(obj).__name__} without one"
    )


def plot_feature_frequencies(obj, *, top: int = 20, ax=None):
    """The ``top`` features most often kept at the largest measured size: how often an
    ensemble of each measured size keeps each of them (a heat map, names on the axis,
    the frequency written in each cell)."""
    ds = features_of(obj)
    ax = axes_of(ax)
    freq = ds["frequency"].values
    order = np.lexsort((ds["feature"].values, ds["mean_rank"].values, -freq[:, -1]))[:top]
    sizes = [int(m) for m in ds["m_measured"].values]
    shown = freq[order]
    image = ax.imshow(shown, aspect="auto", cmap="viridis", vmin=0.0, vmax=1.0, interpolation="nearest")
    for (i, j), value in np.ndenumerate(shown):
        ax.text(j, i, f"{value:.1f}", ha="center", va="center", fontsize=7, color="black" if value > 0.6 else "white")
    ax.set_xticks(range(len(sizes)), [str(m) for m in sizes])
    ax.set_yticks(range(len(order)), [str(n) for n in ds["feature_name"].values[order]], fontsize=8)
    ax.set_xlabel("ensemble size m (weak selectors)")
    ax.set_ylabel(f"feature (the {len(order)} most often kept at m = {sizes[-1]})")
    copies = ds.attrs.get("copies", "")
    ax.set_title(
        f"How often real ensembles keep each feature in their top {ds.attrs.get('n_target', '')} "
        f"(of {copies} real copies)",
        fontsize=10,
    )
    ax.figure.colorbar(image, ax=ax, label="selection frequency")
    return ax


def plot_stability_path(obj, *, top: int = 10, cutoff: float | None = None, ax=None):
    """The stability path: for the ``top`` features most often kept at the largest measured
    size, the selection frequency against the ensemble size (one line each, named in the
    legend), with the cutoff a stable feature reaches as a horizontal line (``cutoff``;
    default the one the features were kept at). Only the measured sizes are drawn: 1, the
    sizes asked up to a copy's weak selectors, and that many."""
    ds = features_of(obj)
    ax = axes_of(ax)
    names = ds["feature_name"]
    freq = ds["frequency"].values
    order = np.lexsort((ds["feature"].values, ds["mean_rank"].values, -freq[:, -1]))[:top]
    sizes = [int(m) for m in ds["m_measured"].values]
    for i in order:
        ax.plot(sizes, freq[i], marker="o", label=str(names.values[i]))
    cutoff = ds.attrs.get("threshold") if cutoff is None else cutoff
    if cutoff is not None:
        ax.axhline(float(cutoff), color="black", linestyle="--", linewidth=1, label=f"cutoff {float(cutoff):.2f}")
    ax.set_xscale("log")
    ax.set_xticks(sizes, [str(m) for m in sizes])
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("ensemble size m (weak selectors)")
    ax.set_ylabel(f"selection frequency (of {ds.attrs.get('copies', '')} real copies)")
    ax.set_title(f"Stability path: the {len(order)} features most often kept at m = {sizes[-1]}", fontsize=10)
    ax.legend(fontsize=7, loc="best")
    return ax


def plot_stability_surface(obj, *, ax=None):
    """The stability against the ensemble size, one line per n_target (dashed where that
    n_target's estimate is not reliable), each with its interval as a band."""
    ds = surface_of(obj)
    ax = axes_of(ax)
    m = ds["m_ensemble"].values
    for k in ds["n_target"].values:
        row = ds.sel(n_target=k)
        style = "-" if int(row["reliable"]) else "--"
        label = f"top {int(k)}" + ("" if int(row["reliable"]) else " (not reliable)")
        (line,) = ax.plot(m, row["stability"].values, style, marker="o", label=label)
        lo, hi = row["stability_lower"].values, row["stability_upper"].values
        if np.isfinite(lo).any():
            ax.fill_between(m, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)
    ax.set_xlabel("ensemble size m (weak selectors)")
    ax.set_ylabel(ds["stability"].attrs.get("long_name", "stability"))
    ax.set_title("Stability over n_target: the same real runs, each top k", fontsize=10)
    ax.legend(title="n_target", fontsize=8)
    return ax
