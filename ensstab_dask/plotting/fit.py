"""Pictures of how the simulator is fitted to the real selector.

Every function takes a sweep Dataset or an estimate (see :mod:`~ensstab_dask.plotting.common`)
and an optional matplotlib ``Axes``, draws on it with labels, units and a legend, and returns it:

* :func:`plot_selection_counts`: how often each feature was selected, real against
  uniform, with t_uniform (where n_useful comes from);
* :func:`plot_calibration`: the two surfaces over (n_useful, p), where each matches the
  real selector, their intersection and the chosen (n_useful, p) (docs/method.md section 6);
* :func:`plot_surface`: a sweep's simulated stability over (n_useful, p);
* :func:`plot_fixed_point`: n_useful_v = A[f_(u,p)] against u, with the diagonal.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.plotting.common import (
    N_USEFUL_COLOR,
    REAL_COLOR,
    UNIFORM_COLOR,
    as_dataset,
    attr_of,
    axes_of,
    drew_something,
    grid_ticks,
    integer_ticks,
    is_estimate,
    is_sweep,
    need_kind,
    pick_p,
)
from ensstab_dask.simulator.calibration import calibrate, n_useful_v_slice
from ensstab_dask.wording import param, words

# matplotlib is imported where a picture is drawn: it is slow to import, and optional for the method.

__all__ = ["plot_selection_counts", "plot_calibration", "plot_surface", "plot_fixed_point"]


# Selection counts: where n_useful comes from ----------------------------------------------


def plot_selection_counts(obj, *, ax=None):
    """How many features were selected c times in n_runs runs, real selector against uniform.

    A feature is counted in n_useful when the real selector picked it more often than
    the uniform selector's most-picked feature (t_uniform, dotted line).
    """
    ds = as_dataset(obj)
    need_kind(ds, "estimate", "plot_selection_counts")
    ax = axes_of(ax)
    n_runs = int(ds.attrs["n_runs"])
    bins = np.arange(n_runs + 2)
    real = np.bincount(ds["selection_counts"].values.astype(int), minlength=n_runs + 1)
    width = 0.42 if "uniform_counts" in ds else 0.8
    ax.bar(
        bins[:-1] - (width / 2 if "uniform_counts" in ds else 0),
        real,
        width=width,
        color=REAL_COLOR,
        label="real selector",
    )
    if "uniform_counts" in ds:
        uni = np.bincount(ds["uniform_counts"].values.astype(int), minlength=n_runs + 1)
        ax.bar(bins[:-1] + width / 2, uni, width=width, color=UNIFORM_COLOR, label="uniform selector (one draw)")
    t = float(ds.attrs["t_uniform"])
    # Each draw counts the features selected more than its own integer threshold; the
    # line is at the mean threshold, so the bars right of it are, on average, counted.
    ax.axvline(
        t,
        color=N_USEFUL_COLOR,
        ls=":",
        lw=2,
        label=f"t_uniform = {t:.1f} (mean of draws): n_useful = {int(ds.attrs['n_useful'])}",
    )
    ax.set_yscale("log")
    ax.set_xlabel(f"times selected in {n_runs} runs (top {int(ds.attrs['n_target'])})")
    integer_ticks(ax.xaxis)
    ax.set_ylabel("features")
    ax.set_title("Selection counts: real selector against chance")
    ax.legend(fontsize="small")
    return ax


# Surfaces over (n_useful, p): calibration, and a sweep's stability -------------------------


def _calibration_surfaces(ds, real_stability, n_useful, n_runs, stability_rtol, n_useful_atol) -> xr.Dataset:
    if is_estimate(ds):
        if "calibration_stability" not in ds:
            raise InvalidParameterError(
                words("this estimate has no calibration surfaces: run estimate(..., ", param("calibrate", True), ")")
            )
        cal = xr.Dataset(
            {
                "stability": ds["calibration_stability"],
                "n_useful_v": ds["calibration_n_useful_v"],
                "consistent": ds["calibration_consistent"].astype(bool),
            }
        )
        cal.attrs = {k[len("calibration_") :]: v for k, v in ds.attrs.items() if k.startswith("calibration_")}
        return cal
    need_kind(ds, "sweep", "plot_calibration")
    if real_stability is None or n_useful is None:
        raise InvalidParameterError(
            "plot_calibration on a sweep needs real_stability and n_useful (the observed values)"
        )
    return calibrate(
        ds, real_stability, n_useful, n_runs=n_runs, stability_rtol=stability_rtol, n_useful_atol=n_useful_atol
    )


def plot_calibration(
    obj,
    real_stability: float | None = None,
    n_useful: float | None = None,
    *,
    n_runs: int | None = None,
    stability_rtol: float = 0.1,
    n_useful_atol: float = 2.0,
    ax=None,
):
    """Where the simulator agrees with the real selector over (n_useful, p).

    The heat map is the simulated single-selector stability. The solid white line is where
    it equals the observed stability, and the ``//`` hatching is its ±``stability_rtol``
    band. The dashed orange line is where n_useful_v equals the observed n_useful, and the
    ``\\\\`` hatching is its ±``n_useful_atol`` band. Red dots mark the cells consistent
    with both. The star is the chosen (n_useful, p), and the cross is the estimate's own
    (n_useful, p) from bisection. A line or band whose value the surface never reaches
    is not drawn and not listed. The legend sits below the axes, never over the surface:
    give it room with a constrained-layout figure (as :func:`plt.subplots` makes with
    ``layout="constrained"``, and as this function does without ``ax``), or save with
    ``bbox_inches="tight"``.

    Parameters
    ----------
    obj : sweep Dataset (with m_ensemble = 1), or an estimate run with ``calibrate=True``
    real_stability, n_useful : float, optional
        The observations; needed for a sweep, read from an estimate.
    n_runs : int, optional
        Which n_useful_v surface of a sweep (see :func:`ensstab_dask.simulator.calibration.calibrate`).
    """
    ds = as_dataset(obj)
    cal = _calibration_surfaces(ds, real_stability, n_useful, n_runs, stability_rtol, n_useful_atol)
    ax = axes_of(ax)
    stab = cal["stability"].transpose("n_useful", "p")
    stab.plot.pcolormesh(
        ax=ax, x="p", y="n_useful", cmap="viridis", cbar_kwargs={"label": "simulated single-selector stability"}
    )
    P, U = np.meshgrid(stab["p"].values, stab["n_useful"].values)
    handles = _draw_observations(ax, cal, P, U) + _draw_choices(ax, cal, P, U)
    ax.set_xlabel("p (probability of picking from S_m)")
    ax.set_ylabel("n_useful (size of S', features)")
    grid_ticks(ax.xaxis, stab["p"].values)
    grid_ticks(ax.yaxis, stab["n_useful"].values)
    ax.set_title("Calibration: where the simulator matches the real selector")
    # Below the axes, not over them: the lines sit anywhere on the surface, and any place
    # inside ("best" included) hid the orange line on some data. A constrained-layout
    # figure (the default here, and the report's) makes room for it.
    ax.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2, fontsize="small", frameon=False
    )
    return ax


def _draw_observations(ax, cal: xr.Dataset, P: np.ndarray, U: np.ndarray) -> list:
    """Where each surface equals the observation (a line) and lies within its tolerance
    (a hatched band), on the calibration's mesh; returns the legend entries of those drawn."""
    from matplotlib import patheffects
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    stab, nuv = cal["stability"].transpose("n_useful", "p"), cal["n_useful_v"].transpose("n_useful", "p")
    obs_stab, obs_u = float(cal.attrs["real_stability"]), float(cal.attrs["observed_n_useful"])
    atol = float(cal.attrs["n_useful_atol"])
    band = float(cal.attrs["stability_band"])
    if min(P.shape) < 2:  # a contour needs two cells each way
        return []
    s, v = stab.values, nuv.values
    # A white line with a dark edge shows on the bright end of the map and in the legend,
    # which sits on the figure's white background.
    outline = [patheffects.withStroke(linewidth=3.5, foreground="0.2")]
    # Each band and line gets a legend entry only if it drew something: an observation
    # outside a surface's range draws no line, and a legend must not promise one.
    drawn = [
        (
            ax.contourf(
                P, U, (np.abs(s - obs_stab) <= band).astype(float), levels=[0.5, 1.5], colors="none", hatches=["//"]
            ),
            Patch(facecolor="none", hatch="//", label=f"stability within ±{band:.3g}"),
        ),
        (
            ax.contourf(
                P, U, (np.abs(v - obs_u) <= atol).astype(float), levels=[0.5, 1.5], colors="none", hatches=["\\\\"]
            ),
            Patch(facecolor="none", hatch="\\\\", label=f"n_useful_v within ±{atol:g}"),
        ),
        (
            ax.contour(P, U, s, levels=[obs_stab], colors="white", linewidths=2, path_effects=outline),
            Line2D([], [], color="white", lw=2, path_effects=outline, label=f"stability = observed {obs_stab:.3f}"),
        ),
        (
            ax.contour(P, U, v, levels=[obs_u], colors=N_USEFUL_COLOR, linewidths=2, linestyles="--"),
            Line2D([], [], color=N_USEFUL_COLOR, lw=2, ls="--", label=f"n_useful_v = observed {obs_u:.1f}"),
        ),
    ]
    handles = []
    for i in (2, 0, 3, 1):  # drawn bands first, under the lines; listed line, band, line, band
        artist, handle = drawn[i]
        if drew_something(artist):
            artist.set_label(handle.get_label())  # ties the entry to what it stands for (see the tests)
            handles.append(handle)
    return handles


def _draw_choices(ax, cal: xr.Dataset, P: np.ndarray, U: np.ndarray) -> list:
    """The cells consistent with both observations, the chosen (n_useful, p) and the
    estimate's own; returns their legend entries."""
    from matplotlib.lines import Line2D

    handles = []
    both = cal["consistent"].transpose("n_useful", "p").values
    if both.any():
        ax.scatter(P[both], U[both], s=14, color="tab:red", label="consistent with both")
        handles.append(Line2D([], [], marker="o", ls="", color="tab:red", label="consistent with both"))
    best_u, best_p = cal.attrs.get("best_n_useful"), cal.attrs.get("best_p")
    if best_u is not None and int(best_u) >= 0:
        word = "chosen" if int(cal.attrs.get("any_consistent", 1)) else "closest (none consistent)"
        label = f"{word}: u={int(best_u)}, p={best_p:.2f}"
        ax.plot([best_p], [best_u], marker="*", ms=16, color="tab:red", mec="white", ls="", label=label)
        handles.append(Line2D([], [], marker="*", ms=12, ls="", color="tab:red", label=label))
    est_u, est_p = cal.attrs.get("estimate_n_useful"), cal.attrs.get("estimate_p")
    if est_u is not None:
        label = f"estimate: u={int(est_u)}, p={float(est_p or 0.0):.2f}"
        ax.plot([est_p], [est_u], marker="X", ms=11, color="white", mec="black", ls="", label=label)
        handles.append(Line2D([], [], marker="X", ms=9, ls="", color="white", mec="black", label=label))
    return handles


def plot_surface(obj, *, m_ensemble: int | None = None, ax=None):
    """A sweep's simulated stability over (n_useful, p) at one ensemble size (default the
    smallest: the single selector when the sweep has m_ensemble = 1), ticks on the grid."""
    ds = as_dataset(obj)
    need_kind(ds, "sweep", "plot_surface")
    ax = axes_of(ax)
    m = int(ds["m_ensemble"].values[0]) if m_ensemble is None else int(m_ensemble)
    surface = ds["stability"].sel(m_ensemble=m).transpose("n_useful", "p")
    label = f"simulated stability ({ds.attrs.get('index', 'jaccard')})"
    surface.plot.pcolormesh(ax=ax, x="p", y="n_useful", cmap="viridis", cbar_kwargs={"label": label})
    grid_ticks(ax.xaxis, surface["p"].values)
    grid_ticks(ax.yaxis, surface["n_useful"].values)
    ax.set_title(f"Simulated stability, m_ensemble = {m}" + (" (single selector)" if m == 1 else ""))
    return ax


# Fixed point --------------------------------------------------------------------------------


def plot_fixed_point(obj, *, p=None, n_runs: int | None = None, max_lines: int = 5, ax=None):
    """n_useful_v = A[f_(u,p)] against u for several p, with the diagonal u = n_useful_v.

    Where a curve crosses the diagonal, u is a fixed point for that p. An estimate adds
    its own point (u, A[f_(u,p)] ± sd). Its calibration surfaces, if any, add the curves.

    Parameters
    ----------
    obj : sweep Dataset, or an estimate
    p : sequence of float, optional
        Which p to draw (nearest grid values); by default up to ``max_lines`` spread over the grid.
    n_runs : int, optional
        Which n_useful_v surface of a sweep (needed when it varies with m_ensemble).
    """
    ds = as_dataset(obj)
    ax = axes_of(ax)
    mean = std = None
    runs_note = ""
    if is_sweep(ds):
        runs = np.unique(ds["n_runs"].values)
        if n_runs is None and len(runs) > 1:
            # A default sweep has n_runs = m_ensemble; the most runs give the steadiest A[f].
            n_runs = int(runs.max())
            runs_note = f" (n_runs = {n_runs})"
        mean, std = n_useful_v_slice(ds, n_runs), n_useful_v_slice(ds, n_runs, "n_useful_v_std")
    elif is_estimate(ds) and "calibration_n_useful_v" in ds:
        mean = ds["calibration_n_useful_v"]
    elif not is_estimate(ds):
        need_kind(ds, "sweep", "plot_fixed_point")
    lo: float = np.inf
    hi: float = -np.inf
    if mean is not None:
        chosen = pick_p(mean["p"].values, p, max_lines)
        import matplotlib as mpl

        colors = mpl.colormaps["plasma"](np.linspace(0.05, 0.85, len(chosen)))
        for color, pv in zip(colors, chosen):
            u = mean["n_useful"].values
            y = mean.sel(p=pv).values
            yerr = None if std is None else std.sel(p=pv).values
            ax.errorbar(u, y, yerr=yerr, marker="o", ms=3, capsize=2, color=color, label=f"p = {pv:.2f}")
            lo, hi = float(min(lo, u.min(), np.nanmin(y))), float(max(hi, u.max(), np.nanmax(y)))
    if is_estimate(ds) and attr_of(ds, "n_useful_v") is not None:
        eu, v, sd = float(ds.attrs["n_useful"]), float(ds.attrs["n_useful_v"]), float(ds.attrs["n_useful_v_std"])
        holds = bool(int(ds.attrs.get("fixed_point_holds", 0)))
        ax.errorbar(
            [eu],
            [v],
            yerr=[sd],
            marker="D",
            ms=8,
            capsize=4,
            color=REAL_COLOR,
            ls="",
            label=f"estimate: u={int(eu)}, p={float(ds.attrs['p']):.2f}: "
            f"A[f]={v:.1f} ± {sd:.1f} ({'holds' if holds else 'does not hold'})",
        )
        lo, hi = min(lo, eu, v - sd), max(hi, eu, v + sd)
    if not np.isfinite(lo):
        raise InvalidParameterError(
            words(
                "plot_fixed_point: nothing to draw (an estimate run with ",
                param("verify", False),
                " and no calibration)",
            )
        )
    pad = 0.05 * (hi - lo + 1)
    # Counts of features: the diagonal never runs below 0, where no u or A[f] can be.
    start = max(lo - pad, 0.0)
    ax.plot([start, hi + pad], [start, hi + pad], color="gray", ls=":", label="u = n_useful_v (fixed point)")
    ax.set_xlabel("u: the simulator's n_useful (features)")
    ax.set_ylabel("n_useful_v = A[f_(u,p)] (features)")
    if mean is not None:
        grid_ticks(ax.xaxis, mean["n_useful"].values)
    else:
        integer_ticks(ax.xaxis)
    ax.set_title("Fixed point: does the simulator reproduce its own n_useful?" + runs_note)
    ax.legend(fontsize="small")
    return ax
