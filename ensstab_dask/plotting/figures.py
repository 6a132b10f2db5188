"""Pictures of sweeps and estimates, with matplotlib.

Every function takes what the library returns (a sweep Dataset, an :class:`Estimate`,
or ``Estimate.to_dataset()``, also read back from netCDF) and an optional matplotlib
``Axes``, draws on it with labels, units and a legend, and returns it:

* :func:`plot_calibration`: the two surfaces over (n_useful, p), where each matches the
  real selector, their intersection and the chosen (n_useful, p) (docs/method.md section 6);
* :func:`plot_fixed_point`: n_useful_v = A[f_(u,p)] against u, with the diagonal;
* :func:`plot_stability_curve`: predicted stability against m_ensemble, with the naive
  real check's when it was run;
* :func:`plot_selection_counts`: how often each feature was selected, real against
  uniform, with t_uniform;
* :func:`plot_cost`: wall time of the estimate against the naive check's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.simulator.calibration import calibrate, n_useful_v_slice

# matplotlib is imported where a picture is drawn: it is slow to import, and optional for the method.

__all__ = [
    "plot_calibration",
    "plot_surface",
    "plot_fixed_point",
    "plot_stability_curve",
    "plot_selection_counts",
    "plot_cost",
    "cost_table",
]

# One colour per role, the same in every picture.
STABILITY_COLOR = "tab:blue"
N_USEFUL_COLOR = "tab:orange"
REAL_COLOR = "black"
UNIFORM_COLOR = "tab:gray"


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.4, 4.8), layout="constrained")
    return ax


def _dataset(obj) -> xr.Dataset:
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
    """What a result Dataset is: its ``kind`` attribute. Files written before results
    carried one (version 0.x) are recognised by their variables."""
    kind = ds.attrs.get("kind")
    if kind is not None:
        return str(kind)
    if "selection_counts" in ds:
        return "estimate"
    if {"n_useful", "p", "m_ensemble"} <= set(ds.dims) and "n_useful_v" in ds:
        return "sweep"
    return None


def _is_estimate(ds: xr.Dataset) -> bool:
    return result_kind(ds) == "estimate"


def _is_sweep(ds: xr.Dataset) -> bool:
    return result_kind(ds) == "sweep"


def _attr(ds: xr.Dataset, key: str, default: Any = None) -> Any:
    """An attribute, with the 'none' that netCDF needs in place of None read back as None."""
    value = ds.attrs.get(key, default)
    return None if isinstance(value, str) and value == "none" else value


def _pick_p(values: np.ndarray, p, max_lines: int) -> np.ndarray:
    """The p values to draw: the nearest grid values to ``p``, or up to ``max_lines`` spread over the grid."""
    if p is not None:
        wanted = np.atleast_1d(np.asarray(p, dtype=float))
        return values[np.abs(values[None, :] - wanted[:, None]).argmin(axis=1)]
    return values[np.unique(np.linspace(0, len(values) - 1, min(max_lines, len(values))).round().astype(int))]


def total_seconds(ds: xr.Dataset) -> float:
    """Wall time of an estimate, summed over its stages (its ``seconds_*`` attrs)."""
    return float(sum(v for k, v in ds.attrs.items() if k.startswith("seconds_")))


def _integer_ticks(axis) -> None:
    """Ticks at whole numbers only, on an axis of counts (m_ensemble, features, runs):
    matplotlib's default puts ticks at 1.5 and 2.5 on a short range."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _grid_ticks(axis, values, max_ticks: int = 10) -> None:
    """Ticks at the grid's own values (evenly thinned to ``max_ticks``): a surface or curve
    over a sweep's grid is read at its cells, not at round numbers between them."""
    values = np.asarray(values)
    keep = np.unique(np.linspace(0, len(values) - 1, min(max_ticks, len(values))).round().astype(int))
    axis.set_ticks(values[keep], labels=[f"{v:g}" for v in values[keep]])


def _drew_something(artist) -> bool:
    """Whether a contour or filled-contour set drew anything: a level outside the
    surface's range gives a set with only empty paths."""
    return any(len(path.vertices) for path in artist.get_paths())


def _need(ds: xr.Dataset, kind: str, what: str) -> None:
    ok = _is_estimate(ds) if kind == "estimate" else _is_sweep(ds)
    if not ok:
        raise InvalidParameterError(f"{what} needs {'an estimate' if kind == 'estimate' else 'a sweep'} Dataset")


# 1. Calibration ------------------------------------------------------------------------


def _calibration_surfaces(ds, real_stability, n_useful, n_runs, stability_rtol, n_useful_atol) -> xr.Dataset:
    if _is_estimate(ds):
        if "calibration_stability" not in ds:
            raise InvalidParameterError("this estimate has no calibration surfaces: run estimate(..., calibrate=True)")
        cal = xr.Dataset(
            {
                "stability": ds["calibration_stability"],
                "n_useful_v": ds["calibration_n_useful_v"],
                "consistent": ds["calibration_consistent"].astype(bool),
            }
        )
        cal.attrs = {k[len("calibration_") :]: v for k, v in ds.attrs.items() if k.startswith("calibration_")}
        return cal
    _need(ds, "sweep", "plot_calibration")
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
    from matplotlib import patheffects
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ds = _dataset(obj)
    cal = _calibration_surfaces(ds, real_stability, n_useful, n_runs, stability_rtol, n_useful_atol)
    ax = _axes(ax)
    stab, nuv = cal["stability"].transpose("n_useful", "p"), cal["n_useful_v"].transpose("n_useful", "p")
    stab.plot.pcolormesh(
        ax=ax, x="p", y="n_useful", cmap="viridis", cbar_kwargs={"label": "simulated single-selector stability"}
    )
    obs_stab, obs_u = float(cal.attrs["real_stability"]), float(cal.attrs["observed_n_useful"])
    atol = float(cal.attrs["n_useful_atol"])
    # Files written before the band had a floor record only its relative width.
    band = float(cal.attrs.get("stability_band", float(cal.attrs["stability_rtol"]) * abs(obs_stab)))
    P, U = np.meshgrid(stab["p"].values, stab["n_useful"].values)
    handles = []
    if min(P.shape) >= 2:
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
        for i in (2, 0, 3, 1):  # drawn bands first, under the lines; listed line, band, line, band
            artist, handle = drawn[i]
            if _drew_something(artist):
                artist.set_label(handle.get_label())  # ties the entry to what it stands for (see the tests)
                handles.append(handle)
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
    ax.set_xlabel("p (probability of picking from S_m)")
    ax.set_ylabel("n_useful (size of S', features)")
    _grid_ticks(ax.xaxis, stab["p"].values)
    _grid_ticks(ax.yaxis, stab["n_useful"].values)
    ax.set_title("Calibration: where the simulator matches the real selector")
    # Below the axes, not over them: the lines sit anywhere on the surface, and any place
    # inside ("best" included) hid the orange line on some data. A constrained-layout
    # figure (the default here, and the report's) makes room for it.
    ax.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2, fontsize="small", frameon=False
    )
    return ax


def plot_surface(obj, *, m_ensemble: int | None = None, ax=None):
    """A sweep's simulated stability over (n_useful, p) at one ensemble size (default the
    smallest: the single selector when the sweep has m_ensemble = 1), ticks on the grid."""
    ds = _dataset(obj)
    _need(ds, "sweep", "plot_surface")
    ax = _axes(ax)
    m = int(ds["m_ensemble"].values[0]) if m_ensemble is None else int(m_ensemble)
    surface = ds["stability"].sel(m_ensemble=m).transpose("n_useful", "p")
    label = f"simulated stability ({ds.attrs.get('index', 'jaccard')})"
    surface.plot.pcolormesh(ax=ax, x="p", y="n_useful", cmap="viridis", cbar_kwargs={"label": label})
    _grid_ticks(ax.xaxis, surface["p"].values)
    _grid_ticks(ax.yaxis, surface["n_useful"].values)
    ax.set_title(f"Simulated stability, m_ensemble = {m}" + (" (single selector)" if m == 1 else ""))
    return ax


# 2. Fixed point --------------------------------------------------------------------------


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
    ds = _dataset(obj)
    ax = _axes(ax)
    mean = std = None
    runs_note = ""
    if _is_sweep(ds):
        runs = np.unique(ds["n_runs"].values)
        if n_runs is None and len(runs) > 1:
            # A default sweep has n_runs = m_ensemble; the most runs give the steadiest A[f].
            n_runs = int(runs.max())
            runs_note = f" (n_runs = {n_runs})"
        mean, std = n_useful_v_slice(ds, n_runs), n_useful_v_slice(ds, n_runs, "n_useful_v_std")
    elif _is_estimate(ds) and "calibration_n_useful_v" in ds:
        mean = ds["calibration_n_useful_v"]
    elif not _is_estimate(ds):
        _need(ds, "sweep", "plot_fixed_point")
    lo: float = np.inf
    hi: float = -np.inf
    if mean is not None:
        chosen = _pick_p(mean["p"].values, p, max_lines)
        import matplotlib as mpl

        colors = mpl.colormaps["plasma"](np.linspace(0.05, 0.85, len(chosen)))
        for color, pv in zip(colors, chosen):
            u = mean["n_useful"].values
            y = mean.sel(p=pv).values
            yerr = None if std is None else std.sel(p=pv).values
            ax.errorbar(u, y, yerr=yerr, marker="o", ms=3, capsize=2, color=color, label=f"p = {pv:.2f}")
            lo, hi = float(min(lo, u.min(), np.nanmin(y))), float(max(hi, u.max(), np.nanmax(y)))
    if _is_estimate(ds) and _attr(ds, "n_useful_v") is not None:
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
            "plot_fixed_point: nothing to draw (an estimate run with verify=False and no calibration)"
        )
    pad = 0.05 * (hi - lo + 1)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="gray", ls=":", label="u = n_useful_v (fixed point)")
    ax.set_xlabel("u: the simulator's n_useful (features)")
    ax.set_ylabel("n_useful_v = A[f_(u,p)] (features)")
    if mean is not None:
        _grid_ticks(ax.xaxis, mean["n_useful"].values)
    else:
        _integer_ticks(ax.xaxis)
    ax.set_title("Fixed point: does the simulator reproduce its own n_useful?" + runs_note)
    ax.legend(fontsize="small")
    return ax


# 3. Stability against ensemble size ------------------------------------------------------


def _naive(ds: xr.Dataset, real: xr.Dataset | None) -> xr.Dataset | None:
    if real is not None:
        return xr.Dataset(
            {
                "stability": real["stability"],
                "se": real["stability_se"],
            },
            attrs={"real_runs": real.attrs["real_runs"], "m_stability": real.attrs["m_stability"]},
        )
    if "naive_stability" in ds:
        return xr.Dataset(
            {"stability": ds["naive_stability"], "se": ds["naive_stability_se"]},
            attrs={"real_runs": ds.attrs["naive_real_runs"], "m_stability": ds.attrs["naive_m_stability"]},
        )
    return None


def _estimate_curve(ds: xr.Dataset, real: xr.Dataset | None, ax) -> None:
    """An estimate's curve in the answer's units: how many of their top n_target features
    two runs share (the index on the right-hand axis), with its band and the naive check."""
    from ensstab_dask.indices import index_of_shared, shared_features

    index, n, k = ds.attrs.get("index", "jaccard"), int(ds.attrs["n_feature"]), int(ds.attrs["n_target"])

    def shared(values, clip: bool = True):
        return shared_features(np.asarray(values, dtype=float), index, n, k, clip=clip)

    m = ds["m_ensemble"].values
    s, s_sd = ds["stability"].values, ds["stability_std"].values
    u, pv = (
        ds.attrs.get("simulator_n_useful", ds.attrs.get("n_useful", 0)),
        ds.attrs.get("simulator_p", ds.attrs.get("p", float("nan"))),
    )
    reliable = bool(int(ds.attrs.get("reliable", 1)))
    simulator = bool(int(ds.attrs.get("simulator", 1)))  # a file older than the attribute: a simulator
    what = "predicted" if reliable else ("simulated, " if simulator else "") + "NOT a validated prediction"
    source = f"simulator u={int(u)}, p={float(pv):.2f}" if simulator else f"{ds.attrs.get('model', '')} model"
    ax.plot(m, shared(s), marker="o", color=STABILITY_COLOR, label=f"{what} ({source})")
    if "stability_lower" in ds:
        level = float(ds.attrs.get("confidence", 0.95))
        of = ds.attrs.get("interval_of", "real runs")
        band = shared(ds["stability_lower"].values), shared(ds["stability_upper"].values)
        label = f"{level:.0%} interval (bootstrap of the {of})"
        ax.fill_between(m, *band, color=STABILITY_COLOR, alpha=0.2, label=label)
    else:
        copies = ds.attrs.get("m_stability", "")
        ax.fill_between(
            m,
            shared(s - s_sd),
            shared(s + s_sd),
            color=STABILITY_COLOR,
            alpha=0.2,
            label=f"±1 sd of a {copies}-copy simulated measurement",
        )
    naive = _naive(ds, real)
    if naive is not None:
        st, se = naive["stability"].values, naive["se"].values
        y = shared(st)
        ax.errorbar(
            naive["m_ensemble"].values,
            y,
            yerr=[y - shared(st - 2 * se), shared(st + 2 * se) - y],
            marker="s",
            capsize=3,
            color=REAL_COLOR,
            ls="--",
            label=f"naive real check ({int(naive.attrs['real_runs'])} real runs), ±2 SE",
        )
    ax.set_title(f"Top-{k} features two runs share, against the ensemble's size")
    ax.set_ylabel(f"features two runs share (of their top {k})")
    top = max([float(np.nanmax(np.asarray(ln.get_ydata(), dtype=float))) for ln in ax.get_lines()] + [1.0])
    ax.set_ylim(0, min(float(k), 1.15 * top))
    right = ax.secondary_yaxis(
        "right", functions=(lambda x: index_of_shared(x, index, n, k), lambda v: shared(v, clip=False))
    )
    right.set_ylabel(f"stability ({index} index)")


def plot_stability_curve(obj, *, real: xr.Dataset | None = None, n_useful=None, p=None, max_lines: int = 5, ax=None):
    """Stability of ensembles against their size m_ensemble.

    For an estimate it is drawn in the answer's units: how many of their top n_target
    features two runs of the ensemble share, the stability index on the right-hand axis.
    The predicted curve has its interval as a band (the bootstrap over the real runs or
    copies; without one, ±1 sd of one simulated m_stability-copy measurement). An estimate
    that tripped a guard rail is labelled as not a validated prediction. The naive real
    check, when it was run (``real=``, or stored in the estimate's Dataset), is drawn with
    error bars of ±2 jackknife standard errors. For a sweep, it draws the simulated
    stability, one curve per p at the given ``n_useful`` (nearest grid value; by default
    the middle one).
    """
    ds = _dataset(obj)
    ax = _axes(ax)
    if _is_estimate(ds):
        _estimate_curve(ds, real, ax)
        m = ds["m_ensemble"].values
    else:
        _need(ds, "sweep", "plot_stability_curve")
        surface = ds["stability"]
        u = surface["n_useful"].values[len(surface["n_useful"]) // 2] if n_useful is None else n_useful
        stab = surface.sel(n_useful=u, method="nearest")
        sd = ds["stability_std"].sel(n_useful=u, method="nearest")
        chosen = _pick_p(stab["p"].values, p, max_lines)
        import matplotlib as mpl

        colors = mpl.colormaps["viridis"](np.linspace(0.05, 0.85, len(chosen)))
        m = stab["m_ensemble"].values
        repeats = ds.attrs.get("repeats", ds.sizes.get("repeat", ""))
        for i, (color, pv) in enumerate(zip(colors, chosen)):
            y, e = stab.sel(p=pv).values, sd.sel(p=pv).values
            ax.plot(m, y, marker="o", color=color, label=f"p = {pv:.2f}")
            # The band is the simulation's own spread: a sweep has no real runs to bootstrap.
            ax.fill_between(
                m, y - e, y + e, color=color, alpha=0.15, label=f"±1 sd over the {repeats} repeats" if i == 0 else None
            )
        ax.set_title(f"Simulated ensemble stability at n_useful = {int(stab['n_useful'])}")
        ax.set_ylabel(f"stability ({ds.attrs.get('index', 'jaccard')})")
        # Kuncheva and Nogueira go below 0 (worse than chance): show it, never clip it.
        ys = [np.asarray(ln.get_ydata(), dtype=float) for ln in ax.get_lines()]
        low = min([0.0] + [float(y[np.isfinite(y)].min()) for y in ys if np.isfinite(y).any()])
        ax.set_ylim(bottom=low - 0.05 * abs(low) if low < 0 else 0)
    ax.set_xlabel("m_ensemble (weak selectors per ensemble)")
    if len(m) <= 12:
        _grid_ticks(ax.xaxis, m)
    else:
        _integer_ticks(ax.xaxis)
    ax.legend(fontsize="small")
    return ax


# 4. Selection counts ---------------------------------------------------------------------


def plot_selection_counts(obj, *, ax=None):
    """How many features were selected c times in n_runs runs, real selector against uniform.

    A feature is counted in n_useful when the real selector picked it more often than
    the uniform selector's most-picked feature (t_uniform, dotted line).
    """
    ds = _dataset(obj)
    _need(ds, "estimate", "plot_selection_counts")
    ax = _axes(ax)
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
    _integer_ticks(ax.xaxis)
    ax.set_ylabel("features")
    ax.set_title("Selection counts: real selector against chance")
    ax.legend(fontsize="small")
    return ax


# 5. Cost ---------------------------------------------------------------------------------


def cost_table(obj) -> xr.Dataset:
    """Wall time of the estimate against the naive check's, per m_ensemble (what :func:`plot_cost` draws).

    The estimate gives the whole curve for its total time. The naive check of one
    m_ensemble alone needs ``m_stability x m`` real runs. Its time is that count times
    the seconds per real run, which are measured: in the naive check when it was run
    (``basis`` "measured"), otherwise in the estimate's own real runs ("projected"). The
    per-m times themselves are scaled from that rate, not timed (``timed`` is 0): only
    the naive check as run, at the largest m, was timed.
    """
    ds = _dataset(obj)
    _need(ds, "estimate", "cost_table")
    total = total_seconds(ds)
    if "naive_seconds" in ds.attrs:
        per_run = float(ds.attrs["naive_seconds"]) / int(ds.attrs["naive_real_runs"])
        m_stab, basis, source = int(ds.attrs["naive_m_stability"]), "measured", "the naive check's real runs"
    else:
        per_run = float(ds.attrs["seconds_real_runs"]) / int(ds.attrs["real_runs"])
        m_stab, basis, source = int(ds.attrs["m_stability"]), "projected", "the estimate's own real runs"
    m = ds["m_ensemble"].values
    naive = m_stab * m * per_run
    out = xr.Dataset(
        {
            "estimate_seconds": (
                "m_ensemble",
                np.full(len(m), total),
                {"long_name": "estimate", "units": "s", "description": "wall time of the estimate, whole curve"},
            ),
            "naive_seconds": (
                "m_ensemble",
                naive,
                {
                    "long_name": "naive check, this m alone",
                    "units": "s",
                    "description": f"m_stability x m real runs x {per_run:.3g} s per run (timed in {source}): "
                    "scaled from that rate, not timed",
                },
            ),
            "naive_real_runs": (
                "m_ensemble",
                m_stab * m,
                {"long_name": "naive check real runs", "units": "runs"},
            ),
        },
        coords={"m_ensemble": ds["m_ensemble"]},
        attrs={
            "basis": basis,
            "seconds_per_real_run": per_run,
            "seconds_per_real_run_from": source,
            "timed": 0,
            "estimate_real_runs": int(ds.attrs["real_runs"]),
        },
    )
    # A ratio: no units (xarray would print "[1]").
    out["speedup"] = (out["naive_seconds"] / out["estimate_seconds"]).assign_attrs(
        long_name="speed-up", description="naive check of this m alone / the estimate"
    )
    return out


def plot_cost(obj, *, ax=None):
    """Wall time: the estimate (one run gives every m_ensemble) against the naive check per m_ensemble.

    The naive check's time for each m alone is scaled from a measured time per real run
    and is labelled so; only the naive check as run (one point, at the largest m) is a
    measured total.
    """
    ds = _dataset(obj)
    table = cost_table(ds)
    ax = _axes(ax)
    m = table["m_ensemble"].values
    ax.axhline(
        float(table["estimate_seconds"][0]),
        color=STABILITY_COLOR,
        lw=2,
        label=f"estimate (measured): {float(table['estimate_seconds'][0]):.0f} s, "
        f"{table.attrs['estimate_real_runs']} real runs, whole curve",
    )
    rate = f"{table.attrs['seconds_per_real_run']:.2f} s/run"
    where = "the naive check's" if table.attrs["basis"] == "measured" else "the estimate's"
    ax.plot(
        m,
        table["naive_seconds"],
        marker="s",
        color=REAL_COLOR,
        ls="--",
        label=f"naive check of each m alone, scaled (not timed):\nm_stability × m runs × {rate} ({where} rate)",
    )
    if "naive_seconds" in ds.attrs:
        ax.plot(
            [m.max()],
            [float(ds.attrs["naive_seconds"])],
            marker="o",
            ms=10,
            color=REAL_COLOR,
            ls="",
            label=f"naive check as run (measured): {float(ds.attrs['naive_seconds']):.0f} s, "
            f"{int(ds.attrs['naive_real_runs'])} runs for every m",
        )
    ax.annotate(
        f"{float(table['speedup'][-1]):.2g}x",
        (m.max(), float(table["naive_seconds"][-1])),
        textcoords="offset points",
        xytext=(-30, 8),
    )
    ax.set_yscale("log")
    ax.set_xlabel("m_ensemble (weak selectors per ensemble)")
    _integer_ticks(ax.xaxis)
    ax.set_ylabel("wall time (s)")
    ax.set_title("Cost: the estimate against measuring directly")
    ax.legend(fontsize="small")
    return ax
