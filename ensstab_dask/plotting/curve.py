"""The picture of the answer: stability against the ensemble's size.

:func:`plot_stability_curve` takes an estimate (its predicted curve with its interval,
and the naive real check's when it was run) or a sweep (the simulated curves, one per p)
and an optional matplotlib ``Axes``, draws on it with labels, units and a legend, and
returns it.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ensstab_dask.plotting.common import (
    REAL_COLOR,
    STABILITY_COLOR,
    as_dataset,
    axes_of,
    grid_ticks,
    integer_ticks,
    is_estimate,
    need_kind,
    pick_p,
)

# matplotlib is imported where a picture is drawn: it is slow to import, and optional for the method.

__all__ = ["plot_stability_curve"]


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
    simulator = bool(int(ds.attrs["simulator"]))
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
    # The bands too, not the lines alone: an interval cut at the top edge hides how wide it is.
    bands = [np.concatenate([p.vertices[:, 1] for p in c.get_paths()]) for c in ax.collections if c.get_paths()]
    drawn = [np.asarray(ln.get_ydata(), dtype=float) for ln in ax.get_lines()] + bands
    top = max([float(np.nanmax(y)) for y in drawn if np.isfinite(y).any()] + [1.0])
    ax.set_ylim(0, min(float(k), 1.08 * top))
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
    the middle one), each with its band of ±1 sd over the sweep's repeats (the legend's
    title says so; its entries are the p values). Where a curve falls from the smallest
    m_ensemble by more than the bands, a note under the axes says why (:data:`FALL_WHY`).
    """
    ds = as_dataset(obj)
    ax = axes_of(ax)
    if is_estimate(ds):
        _estimate_curve(ds, real, ax)
        m = ds["m_ensemble"].values
    else:
        need_kind(ds, "sweep", "plot_stability_curve")
        stab, sd, chosen = sweep_curves(ds, n_useful, p, max_lines)
        import matplotlib as mpl

        colors = mpl.colormaps["viridis"](np.linspace(0.05, 0.85, len(chosen)))
        m = stab["m_ensemble"].values
        for color, pv in zip(colors, chosen):
            y, e = stab.sel(p=pv).values, sd.sel(p=pv).values
            ax.plot(m, y, marker="o", color=color, label=f"p = {pv:.2f}")
            # The band is the simulation's own spread: a sweep has no real runs to bootstrap.
            # Unlabelled: the legend's title says what every band is, so its entries are the p values only.
            ax.fill_between(m, y - e, y + e, color=color, alpha=0.15)
        ax.set_title(f"Simulated ensemble stability at n_useful = {int(stab['n_useful'])}")
        ax.set_ylabel(f"stability ({ds.attrs.get('index', 'jaccard')})")
        # Kuncheva and Nogueira go below 0 (worse than chance): show it, never clip it.
        ys = [np.asarray(ln.get_ydata(), dtype=float) for ln in ax.get_lines()]
        low = min([0.0] + [float(y[np.isfinite(y)].min()) for y in ys if np.isfinite(y).any()])
        ax.set_ylim(bottom=low - 0.05 * abs(low) if low < 0 else 0)
        falling = explained_falls(ds, stab, sd, chosen)
        if falling:
            _note_below(ax, fall_note(falling, int(m[0])))
    ax.set_xlabel("m_ensemble (weak selectors per ensemble)")
    if len(m) <= 12:
        grid_ticks(ax.xaxis, m)
    else:
        integer_ticks(ax.xaxis)
    if is_estimate(ds):
        ax.legend(fontsize="small")
    else:
        repeats = ds.attrs.get("repeats", ds.sizes.get("repeat", ""))
        ax.legend(fontsize="small", title=f"bands: ±1 sd over the {repeats} repeats", title_fontsize="small")
    return ax


def sweep_curves(ds: xr.Dataset, n_useful, p, max_lines: int):
    """The sweep's stability and its sd at one n_useful (nearest grid value; by default
    the middle one), and the p values drawn."""
    surface = ds["stability"]
    u = surface["n_useful"].values[len(surface["n_useful"]) // 2] if n_useful is None else n_useful
    stab = surface.sel(n_useful=u, method="nearest")
    sd = ds["stability_std"].sel(n_useful=u, method="nearest")
    return stab, sd, pick_p(stab["p"].values, p, max_lines)


def falls_from_smallest_m(stab: xr.DataArray, sd: xr.DataArray, chosen) -> list[float]:
    """The p values (of ``chosen``) whose simulated curve falls below its value at the
    smallest m_ensemble by more than the two bands together: a fall the repeats' noise
    does not explain."""
    out = []
    for pv in chosen:
        y, e = stab.sel(p=pv).values, sd.sel(p=pv).values
        if len(y) > 1 and np.any(y[1:] + e[1:] < y[0] - e[0]):
            out.append(float(pv))
    return out


def explained_falls(ds: xr.Dataset, stab: xr.DataArray, sd: xr.DataArray, chosen) -> list[float]:
    """:func:`falls_from_smallest_m` for a sweep of mean-rank ensembles, the aggregation
    :data:`FALL_WHY` explains (median rank falls less; vote and reciprocal rank not at all):
    the p values whose picture and caption say why their curve falls."""
    if str(ds.attrs.get("aggregate", "mean_rank")) != "mean_rank":
        return []
    return falls_from_smallest_m(stab, sd, chosen)


#: Why a simulated curve falls from the single selector at high p: the sweep report's caption says it.
#: Measured (u=60, n_target=20, n_feature=2000, p=1): stability 0.20 at m=1 (20 of 20 top features
#: useful), 0.046 at m=5 (9.8 useful), 0.18 at m=20 (19.0), 0.20 at m=50; the literal algorithm of
#: tests/oracle.py gives the same (0.20, 0.048), so it is the model and mean rank, not the kernel.
FALL_WHY = (
    "This is the simulator, not noise: each simulated selector prefers only its own n_target "
    "features, drawn at random from the n_useful useful ones, and ranks every other feature, useful "
    "or not, at random. At high p a single selector's top n_target is exactly those, all useful, as "
    "stable as this simulator gets. A mean-rank ensemble of a few averages in the random ranks its "
    "other selectors give each of them, and among the many useless features some get low ranks from "
    "every selector by luck, so useless features take part of the ensemble's top n_target (about half "
    "of it for 5 selectors at n_feature 2000, n_target 20, n_useful 60), and two runs do not share "
    "them. With more selectors the useful features fill the top again and the curve climbs back, "
    "towards the single selector's value. The paper's algorithm, run step by step, falls the same "
    "way: it is the model with mean-rank aggregation, not a fault of the simulation."
)


def fall_note(falling: list[float], m_first: int) -> str:
    """The picture's note when some drawn curves fall from the smallest m_ensemble."""
    ps = ", ".join(f"{pv:.2f}" for pv in falling)
    return (
        f"At p = {ps} the curve falls from m = {m_first}: one selector already ranks its preferred features, "
        "all useful, at the top; a mean-rank ensemble of a few mixes in useless features that got low random "
        "ranks by luck (the report's caption says more)."
    )


def _note_below(ax, text: str) -> None:
    """A note under the x axis' label, wrapped to the axes' width (a constrained-layout
    figure, as the report's, makes room for it)."""
    import textwrap

    ax.annotate(
        "\n".join(textwrap.wrap(text, 110)),
        xy=(0.5, 0.0),
        xycoords=ax.xaxis.label,
        xytext=(0, -4),
        textcoords="offset points",
        ha="center",
        va="top",
        fontsize="small",
        color="0.25",
    )
