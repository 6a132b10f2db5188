"""One HTML report for a comparison of selectors (:func:`~ensstab_dask.compare`): the
choice in two sentences, every selector's curve on one axis with its interval, stability
against accuracy with the Pareto front, and a table."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import numpy as np

from ensstab_dask._version import __version__
from ensstab_dask.plotting.group_report import report_folder, write_page
from ensstab_dask.plotting.report import page

__all__ = ["write_compare_report", "plot_curves", "plot_stability_accuracy", "pareto_front"]


def plot_curves(comparison, ax=None):
    """Each selector's predicted curve as shared features of ``n_target`` over m, its
    interval shaded, the measured sizes marked: one axis for all."""
    from ensstab_dask.estimates.words.choice import shared_curve

    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(7.5, 4.6), layout="constrained")
    n_target = None
    for name, est in comparison.estimates.items():
        if not est.has_curve:
            continue
        n_target = est.n_target
        curve = shared_curve(est)
        m = np.array(sorted(curve))
        v, lo, hi = (np.array([curve[k][i] for k in m]) for i in range(3))
        (line,) = ax.plot(m, v, marker="o", label=name)
        if np.isfinite(lo).any():
            ax.fill_between(m, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)
    ax.set_xscale("log")
    ax.set_xlabel("ensemble size m (weak selectors)")
    ax.set_ylabel(f"features two reruns share (of {n_target})")
    ax.set_title("Stability of each selector's ensembles, with its interval")
    ax.legend()
    return ax


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """The indices of ``points`` (stability, accuracy) that no other point beats on both
    (at least as good on each, better on one), by stability."""
    keep = [
        i
        for i, (s, a) in enumerate(points)
        if not any((s2 >= s and a2 >= a) and (s2 > s or a2 > a) for s2, a2 in points)
    ]
    return sorted(keep, key=lambda i: points[i][0])


def plot_stability_accuracy(comparison, ax=None):
    """Stability (shared features) against accuracy: one path per selector over its
    measured sizes (error bars: the accuracy's SE over copies, the curve's interval), the
    Pareto front over every point dashed."""
    from ensstab_dask.estimates.words.choice import shared_curve

    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(7.5, 4.6), layout="constrained")
    every, metric = [], "accuracy"
    for name, est in comparison.estimates.items():
        if est.accuracy is None or not est.has_curve:
            continue
        a, curve = est.accuracy, shared_curve(est)
        metric = "R^2" if a.attrs["metric"] == "r2" else "balanced accuracy"
        sizes = [int(m) for m in a["m_measured"].values if int(m) in curve]
        xs = np.array([curve[m][0] for m in sizes])
        lo = np.array([curve[m][1] for m in sizes])
        hi = np.array([curve[m][2] for m in sizes])
        ys = a["accuracy"].sel(m_measured=sizes).values
        se = a["accuracy_se"].sel(m_measured=sizes).values
        xerr = None if not np.isfinite(lo).all() else np.vstack([xs - lo, hi - xs]).clip(0)
        bars = ax.errorbar(xs, ys, xerr=xerr, yerr=se, marker="o", capsize=2, label=name)
        for m, x, y in zip(sizes, xs, ys):
            ax.annotate(
                f"m={m}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7, color=bars.lines[0].get_color()
            )
        every += list(zip(xs.tolist(), ys.tolist()))
    if every:
        front = [every[i] for i in pareto_front(every)]
        ax.plot(*zip(*front), linestyle="--", color="black", linewidth=1, label="Pareto front")
    ax.set_xlabel("features two reruns share")
    ax.set_ylabel(f"{metric} on the unseen half")
    ax.set_title("Stability against accuracy, per selector over m")
    ax.legend()
    return ax


def _png(draw, comparison, dpi: int) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 4.6), layout="constrained")
    draw(comparison, ax=fig.add_subplot())
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi)
    return base64.b64encode(out.getvalue()).decode("ascii")


def _table(comparison) -> str:
    """One row per selector and size: stability, its interval, accuracy and SE."""
    from ensstab_dask.estimates.words.choice import shared_curve

    e = html.escape
    rows = ["<tr><th>selector</th><th>m</th><th>shared features</th><th>interval</th><th>accuracy (SE)</th></tr>"]
    for name, est in comparison.estimates.items():
        curve = shared_curve(est) if est.has_curve else {}
        acc = {}
        if est.accuracy is not None:
            a = est.accuracy
            acc = {
                int(m): (v, s) for m, v, s in zip(a["m_measured"].values, a["accuracy"].values, a["accuracy_se"].values)
            }
        for m in sorted(set(curve) | set(acc)):
            v, lo, hi = curve.get(m, (np.nan,) * 3)
            band = f"{lo:.1f} to {hi:.1f}" if np.isfinite(lo) else ""
            score = f"{acc[m][0]:.3f} ({acc[m][1]:.3f})" if m in acc else ""
            rows.append(f"<tr><td>{e(name)}</td><td>{m}</td><td>{v:.1f}</td><td>{band}</td><td>{score}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def write_compare_report(comparison, out_dir, *, overwrite: bool = False, dpi: int = 110) -> Path:
    """Write ``index.html`` into ``out_dir`` for ``comparison`` (a
    :class:`~ensstab_dask.estimates.records.selectors.SelectorComparison`): the choice, the
    curves on one axis, stability against accuracy with the Pareto front, a table and what
    each selector cost. ``out_dir`` is created; an existing one is replaced only with
    ``overwrite=True``. Returns the path of ``index.html``."""
    from ensstab_dask.estimates.words.summary import cost_line

    e = html.escape
    out = report_folder(out_dir, overwrite=overwrite)
    names = ", ".join(comparison.selectors)
    parts = [f"<h1>Which selector: {e(names)}</h1>"]
    parts += [f"<p class='answer'><b>{e(line)}</b></p>" for line in comparison.choice()]
    parts.append(f"<img alt='stability curves' src='data:image/png;base64,{_png(plot_curves, comparison, dpi)}'>")
    if any(est.accuracy is not None for est in comparison.estimates.values()):
        data = _png(plot_stability_accuracy, comparison, dpi)
        parts.append(f"<img alt='stability against accuracy' src='data:image/png;base64,{data}'>")
    parts.append(_table(comparison))
    for name, est in comparison.estimates.items():
        verdict = "reliable" if est.reliable else "NOT reliable: " + "; ".join(est.warnings)
        parts.append(f"<p><b>{e(name)}</b>: {e(verdict)}<br><small>{e(cost_line(est.cost))}</small></p>")
    parts.append(f"<p><small>report by ensstab_dask {e(__version__)}.</small></p>")
    return write_page(out, page("ensstab_dask selectors report", parts))
