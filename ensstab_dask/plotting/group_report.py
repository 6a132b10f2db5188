"""One HTML report for an estimate per group (:func:`~ensstab_dask.estimate_groups`): a
panel per group with its answer, its stability curve and its stable features."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from ensstab_dask._version import __version__
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.outputs import atomic_output, refuse_to_replace
from ensstab_dask.plotting.cost import seconds_text
from ensstab_dask.plotting.curve import plot_stability_curve
from ensstab_dask.plotting.report import answer_html, page, picture_metadata
from ensstab_dask.wording import param

__all__ = ["write_group_report", "report_folder", "write_page"]


def _curve_png(ds, dpi: int) -> bytes:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 4.6), layout="constrained")
    plot_stability_curve(ds, ax=fig.add_subplot())
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi, metadata=picture_metadata("stability_curve", ds))
    return out.getvalue()


def report_folder(out_dir, *, overwrite: bool) -> Path:
    """``out_dir`` as the folder of a one-page report: one that exists must be an empty
    folder, or be replaced with ``overwrite=True`` (refused before any work is drawn)."""
    out = Path(out_dir)
    refuse_to_replace(out, directory=True, overwrite=overwrite)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not overwrite)):
        raise InvalidParameterError(
            param("out_dir")
            + f" {out} exists and is not an empty folder; pass "
            + param("overwrite", True)
            + " to replace it"
        )
    return out


def write_page(out: Path, text: str) -> Path:
    """``text`` as ``out/index.html``, the folder written whole or not at all."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(out, overwrite=True, directory=True) as tmp:
        (tmp / "index.html").write_text(text, encoding="utf-8")
    return out / "index.html"


def write_group_report(groups, out_dir, *, overwrite: bool = False, dpi: int = 110) -> Path:
    """Write ``index.html`` into ``out_dir``: what was compared, then a panel per group of
    ``groups`` (a :class:`~ensstab_dask.estimates.stages.groups.GroupEstimates`): its answer as
    the summary says it (in the words of the estimates' spelling: the command line's
    options where it wrote the report), its stability curve, its stable features and
    what its estimate cost. ``out_dir`` is created; an existing one is replaced only with
    ``overwrite=True``. Returns the path of ``index.html``."""
    from ensstab_dask.estimates.words.summary import cost_line

    e = html.escape
    out = report_folder(out_dir, overwrite=overwrite)
    against = "the rest" if groups.reference == "rest" else f"group {groups.reference}"
    parts = [f"<h1>Stability of each group's features against {e(against)}</h1>"]
    parts.append(
        f"<p>{len(groups.estimates)} groups of {e(groups.groupby or 'the label')}, each its own two-class question "
        f"(the group's samples against {e(against)}), their real runs sent to the cluster together "
        f"({seconds_text(groups.seconds)} for all of them; each group's cost below is its share of that and its "
        "own statistics).</p>"
    )
    markers = groups.markers()
    for g, est in groups.estimates.items():
        ds = est.to_dataset()
        parts.append(f"<section><h2>{e(g)}</h2>")
        parts.append(answer_html(str(ds.attrs.get("answer", "no prediction: see the summary"))))
        if est.has_curve:
            data = base64.b64encode(_curve_png(ds, dpi)).decode("ascii")
            parts.append(f"<img alt='stability curve of {e(g)}' src='data:image/png;base64,{data}'>")
        kept = ", ".join(markers[g]) if markers[g] else "none"
        parts.append(f"<p><b>Stable features</b> (kept on nearly every rerun): {e(kept)}</p>")
        parts.append(f"<p><small>{e(cost_line(est.cost))}</small></p></section>")
    parts.append(f"<p><small>report by ensstab_dask {e(__version__)}.</small></p>")
    text = page("ensstab_dask groups report", parts)
    return write_page(out, text)
