"""What an estimate cost against measuring directly: the table and its picture.

* :func:`cost_table`: wall time of the estimate against the naive check's, per m_ensemble;
* :func:`plot_cost`: that table drawn, with the naive check as run when it was;
* :func:`total_seconds`: an estimate's wall time, summed over its stages.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ensstab_dask.plotting.common import REAL_COLOR, STABILITY_COLOR, _axes, _dataset, _integer_ticks, _need

# matplotlib is imported where a picture is drawn: it is slow to import, and optional for the method.

__all__ = ["cost_table", "plot_cost", "total_seconds"]


def total_seconds(ds: xr.Dataset) -> float:
    """Wall time of an estimate, summed over its stages (its ``seconds_*`` attrs)."""
    return float(sum(v for k, v in ds.attrs.items() if k.startswith("seconds_")))


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
