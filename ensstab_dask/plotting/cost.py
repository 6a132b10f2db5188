"""What an estimate cost against measuring directly: the table and its picture.

* :func:`cost_table`: wall time of the estimate against the naive check's, per m_ensemble;
* :func:`plot_cost`: that table drawn, with the naive check as run when it was;
* :func:`equal_precision_ratio`: the fair comparison, real runs x variance;
* :func:`cost_words`: what the picture's label says of the two;
* :func:`total_seconds`: an estimate's wall time, summed over its stages.

Time alone compares the runs, not what they buy: an estimate from fewer runs may be less
precise than a direct measurement. Only beside a naive check, whose variance is measured,
is the comparison made at equal precision; without one the table and picture say that
they compare runs only.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
from ensstab_dask.plotting.common import (
    REAL_COLOR,
    STABILITY_COLOR,
    as_dataset,
    axes_of,
    grid_ticks,
    integer_ticks,
    need_kind,
)

# matplotlib is imported where a picture is drawn: it is slow to import, and optional for the method.

__all__ = [
    "cost_table",
    "plot_cost",
    "cost_words",
    "total_seconds",
    "seconds_as_made",
    "seconds_text",
    "equal_precision_ratio",
    "DIRECT_COPIES",
]

#: Copies of a direct measurement of one ensemble size when none was run: the naive
#: check's own default (``validate``), so that every price quoted is of one copies count.
DIRECT_COPIES = int(NaiveSettings.m_stability)


def total_seconds(ds: xr.Dataset) -> float:
    """Wall time of an estimate, summed over its stages (its ``seconds_*`` attrs)."""
    return float(sum(v for k, v in ds.attrs.items() if k.startswith("seconds_")))


def seconds_as_made(ds: xr.Dataset) -> float:
    """The estimate's wall time with every real run at the seconds it took when made: where
    runs were read back from the cache, not the seconds of reading them (what the
    terminal's cost line, the report's table and the cost picture all say)."""
    total = total_seconds(ds)
    if int(ds.attrs.get("runs_reused", 0)) and np.isfinite(own_rate := _own_rate(ds)):
        total += own_rate * int(ds.attrs["real_runs"]) - float(ds.attrs.get("seconds_real_runs", 0.0))
    return total


def seconds_text(seconds: float) -> str:
    """Seconds as every cost figure writes them: one decimal below 10 s, none above."""
    return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:,.0f} s"


def _own_rate(ds: xr.Dataset) -> float:
    """Seconds per real run as the estimate's runs were made (``real_run_seconds_each``,
    NaN when none was timed)."""
    return float(ds.attrs["real_run_seconds_each"])


def equal_precision_ratio(naive_runs, naive_se, estimate_runs, estimate_se):
    """How many times cheaper the estimate is than a direct measurement at equal precision.

    ``(naive_runs x naive_se^2) / (estimate_runs x estimate_se^2)``: real runs times
    variance is what either would need for one same precision (a variance falls as 1 /
    runs), so a ratio above 1 means the estimate gets there with fewer real runs, and
    below 1 that measuring directly would have been cheaper. ``naive_runs`` are those of
    the direct measurement of that one size (copies x m), not of the whole check.
    Arrays broadcast; NaN where either standard error is 0 or missing.

    Examples
    --------
    >>> round(float(equal_precision_ratio(1000, 0.0164, 200, 0.0371)), 2)  # 20 copies x 50 against 200 runs
    0.98
    """
    naive_se, estimate_se = np.asarray(naive_se, dtype=float), np.asarray(estimate_se, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (np.asarray(naive_runs, dtype=float) * naive_se**2) / (
            np.asarray(estimate_runs, dtype=float) * estimate_se**2
        )
    return np.where((naive_se > 0) & (estimate_se > 0), ratio, np.nan)


def cost_table(obj) -> xr.Dataset:
    """Wall time of the estimate against the naive check's, per m_ensemble (what :func:`plot_cost` draws).

    The estimate gives the whole curve for its total time. The naive check of one
    m_ensemble alone needs ``copies x m`` real runs: the copies of the naive check that
    ran, or else :data:`DIRECT_COPIES` (the naive check's default). Its time is that
    count times the seconds per real run, which are measured: in the naive check when it
    was run (``basis`` "measured"), otherwise in the estimate's own real runs
    ("projected"). The per-m times themselves are scaled from that rate, not timed
    (``timed`` is 0): only the naive check as run, at the largest m, was timed.

    ``speedup`` compares times, that is runs, not precision (``compared`` says so).
    Beside a naive check whose per-size verdict was stored (``compare_predicted_se``), the table also
    has ``equal_precision_ratio`` per m (:func:`equal_precision_ratio`, from the naive
    check's standard error and the estimate's), and ``compared`` is "equal precision".
    """
    ds = as_dataset(obj)
    need_kind(ds, "estimate", "cost_table")
    own_rate = _own_rate(ds)
    total = seconds_as_made(ds)
    if "naive_seconds" in ds.attrs:
        per_run = float(ds.attrs["naive_seconds"]) / int(ds.attrs["naive_real_runs"])
        m_stab, basis, source = int(ds.attrs["naive_m_stability"]), "measured", "the naive check's real runs"
    else:
        per_run = own_rate
        m_stab, basis, source = DIRECT_COPIES, "projected", "the estimate's own real runs, as made"
    m = ds["m_ensemble"].values
    naive = m_stab * m * per_run
    out = xr.Dataset(
        {
            "estimate_seconds": (
                "m_ensemble",
                np.full(len(m), total),
                {
                    "long_name": "estimate",
                    "units": "s",
                    "description": "wall time of the estimate, whole curve, its real runs at the seconds they took "
                    "when made",
                },
            ),
            "naive_seconds": (
                "m_ensemble",
                naive,
                {
                    "long_name": "naive check, this m alone",
                    "units": "s",
                    "description": f"{m_stab} copies x m real runs x {per_run:.3g} s per run (timed in {source}): "
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
            "direct_copies": m_stab,
            "compared": "runs only, not at equal precision",
        },
    )
    # A ratio: no units (xarray would print "[1]").
    out["speedup"] = (out["naive_seconds"] / out["estimate_seconds"]).assign_attrs(
        long_name="speed-up in time",
        description=f"naive check of this m alone ({m_stab} copies) / the estimate: runs only, not at equal precision",
    )
    if basis == "measured" and "naive_stability_se" in ds and "compare_predicted_se" in ds:
        ratio = equal_precision_ratio(
            out["naive_real_runs"].values,
            ds["naive_stability_se"].values,
            int(ds.attrs["real_runs"]),
            ds["compare_predicted_se"].values,
        )
        out["equal_precision_ratio"] = (
            "m_ensemble",
            ratio,
            {
                "long_name": "equal-precision ratio",
                "description": "(naive runs of this m x naive variance) / (estimate runs x estimate variance): "
                "above 1 the estimate is cheaper at equal precision",
            },
        )
        out.attrs["compared"] = "equal precision"
    return out


def plot_cost(obj, *, ax=None):
    """Wall time: the estimate (one run gives every m_ensemble) against the naive check per m_ensemble.

    The naive check's time for each m alone is scaled from a measured time per real run
    and is labelled so; only the naive check as run (one point, at the largest m, drawn
    only when it ran) is a measured total. The label at the largest m gives the speed-up
    in time, which compares runs only, and beside a naive check the equal-precision ratio
    (:func:`cost_table`).
    """
    ds = as_dataset(obj)
    table = cost_table(ds)
    ax = axes_of(ax)
    m = table["m_ensemble"].values
    ax.axhline(
        float(table["estimate_seconds"][0]),
        color=STABILITY_COLOR,
        lw=2,
        label=f"estimate (measured): {seconds_text(float(table['estimate_seconds'][0]))}, "
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
        label=f"naive check of each m alone, scaled (not timed):\n"
        f"{table.attrs['direct_copies']} copies × m runs × {rate} ({where} rate)",
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
        cost_words(table),
        (m.max(), float(table["naive_seconds"][-1])),
        textcoords="offset points",
        xytext=(-8, 8),
        ha="right",
        fontsize="small",
    )
    ax.set_yscale("log")
    # Room above the highest point for the two-line label: a fifth of the axis' decades,
    # so that it sits inside the axes, under the title, not over it.
    low, high = ax.get_ylim()
    ax.set_ylim(low, high * (high / low) ** 0.2)
    ax.set_xlabel("m_ensemble (weak selectors per ensemble)")
    # Read at the sizes priced, not at round numbers between them (as the stability curve).
    if len(m) <= 12:
        grid_ticks(ax.xaxis, m)
    else:
        integer_ticks(ax.xaxis)
    ax.set_ylabel("wall time (s)")
    ax.set_title("Cost: the estimate against measuring directly")
    ax.legend(fontsize="small")
    return ax


def cost_words(table: xr.Dataset) -> str:
    """The picture's label at the largest m: the speed-up in time (runs only), and beside
    a naive check the ratio at equal precision, each saying which it is."""
    words = f"{float(table['speedup'][-1]):.2g}x in time (runs only"
    if "equal_precision_ratio" not in table:
        return words + ", not at equal precision)"
    ratio = float(table["equal_precision_ratio"][-1])
    return words + f");\n{ratio:.2g}x at equal precision"
