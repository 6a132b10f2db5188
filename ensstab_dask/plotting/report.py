"""A report of an estimate or a sweep: the pictures that apply and a self-contained index.html.

``ensstab report RESULT.nc -o DIR`` writes one PNG per picture into DIR, and an
``index.html`` that shows them with the summary numbers. The images are embedded in the
page, so it opens with no server and can be mailed as one file. The report is written
into a temporary directory beside DIR and renamed into place
(:func:`~ensstab_dask.outputs.atomic_output`). An existing DIR is left alone unless
``overwrite=True``, and then it is replaced only once the new report is complete; a
failed write leaves it, and no temporary directory, behind.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import xarray as xr

from ensstab_dask._version import __version__
from ensstab_dask.checks import check_int, check_real
from ensstab_dask.estimates.validation.comparison import verdict, z_text
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices import index_range
from ensstab_dask.outputs import atomic_output, read_netcdf, refuse_to_replace
from ensstab_dask.plotting.common import as_dataset, attr_of, is_estimate, is_sweep
from ensstab_dask.plotting.cost import DIRECT_COPIES, seconds_as_made, seconds_text, total_seconds
from ensstab_dask.plotting.curve import FALL_WHY, explained_falls, sweep_curves
from ensstab_dask.plotting.pictures import PICTURES, Observations, kind_of, pictures_for
from ensstab_dask.simulator.calibration import n_useful_v_slice
from ensstab_dask.wording import param

# matplotlib is imported where a picture is drawn: it is slow to import.

__all__ = ["write_report", "pictures_for", "answer_html", "page", "STYLE"]


def _check_observations(ds: xr.Dataset, real_stability, n_useful, n_runs) -> None:
    """The observations a sweep's report calibrates against: used, or refused; never dropped.

    Both or neither of ``real_stability`` and ``n_useful`` (the calibration picture draws
    the two together), finite and in range, for a sweep with ``m_ensemble = 1`` (the
    single-selector surface they are compared with); ``n_runs``, one of the sweep's. An
    estimate carries its own observations: none of the three is taken for it.
    """
    given = [
        name
        for name, v in (("real_stability", real_stability), ("n_useful", n_useful), ("n_runs", n_runs))
        if v is not None
    ]
    if not given:
        return
    if not is_sweep(ds):
        raise InvalidParameterError(
            f"{given[0]} is for a sweep's report; an estimate's report draws its own observations, so it takes none"
        )
    if (real_stability is None) != (n_useful is None):
        missing = "n_useful" if n_useful is None else "real_stability"
        raise InvalidParameterError(
            f"{missing} is missing: the calibration picture needs real_stability and "
            "n_useful, the observed pair, together"
        )
    if real_stability is not None:
        if 1 not in ds["m_ensemble"].values:
            raise InvalidParameterError(
                param("real_stability")
                + f" is compared with the single-selector surface (m_ensemble = 1), which this sweep "
                f"lacks: its m_ensemble are {ds['m_ensemble'].values.tolist()}"
            )
        low, high = index_range(ds.attrs.get("index"))
        check_real(real_stability, "real_stability", minimum=low, maximum=high)
        check_real(n_useful, "n_useful", minimum=0.0)
    runs = sorted(set(np.asarray(ds["n_runs"].values).tolist()))
    if real_stability is not None and n_runs is None and len(runs) > 1:
        n_useful_v_slice(ds, n_runs)  # which of the sweep's n_useful_v to compare n_useful with: it says
    if n_runs is not None:
        if check_int(n_runs, "n_runs", minimum=1) not in runs:
            raise InvalidParameterError(param("n_runs") + f" must be one of this sweep's, {runs}; got {n_runs}")


#: The PNG text key under which a report's estimate curve carries the numbers it plots.
CURVE_KEY = "ensstab_curve"


def _numbers(values) -> list[float | None]:
    """Floats for JSON, NaN as null."""
    return [float(v) if np.isfinite(v) else None for v in np.asarray(values, dtype=float)]


def curve_numbers(ds: xr.Dataset) -> dict:
    """What an estimate's stability curve plots, in its units: per m_ensemble, the shared
    of n_target features of the prediction (as the plain answer prints them, unrounded),
    its interval and the naive check's, with what made them (``index``, ``n_target``,
    ``seed``...). The report writes it into ``stability_curve.png`` (key
    :data:`CURVE_KEY`, JSON), so that a copied picture can be checked against an answer."""
    from ensstab_dask.indices import shared_features

    a = ds.attrs
    index, n, k = str(a.get("index", "jaccard")), int(a["n_feature"]), int(a["n_target"])

    def shared(values):
        return _numbers(shared_features(np.asarray(values, dtype=float), index, n, k))

    out = {
        "picture": "stability_curve",
        "index": index,
        "n_feature": n,
        "n_target": k,
        "seed": a.get("seed"),
        "data": a.get("data"),
        "model": a.get("model"),
        "m_ensemble": [int(m) for m in ds["m_ensemble"].values],
        "predicted_shared": shared(ds["stability"].values),
        "predicted_stability": _numbers(ds["stability"].values),
    }
    if "stability_lower" in ds:
        out["confidence"] = float(a.get("confidence", 0.95))
        out["lower_shared"], out["upper_shared"] = shared(ds["stability_lower"]), shared(ds["stability_upper"])
    if "naive_stability" in ds:
        out["naive_shared"] = shared(ds["naive_stability"].values)
    out["ensstab_dask_version"] = __version__
    return {key: (v.item() if isinstance(v, np.generic) else v) for key, v in out.items()}


def picture_metadata(name: str, ds: xr.Dataset) -> dict[str, str]:
    """PNG text metadata of a report's picture: an estimate's stability curve carries the
    numbers it plots (:func:`curve_numbers`) under :data:`CURVE_KEY`; the others nothing
    beyond matplotlib's own."""
    if name == "stability_curve" and is_estimate(ds):
        return {CURVE_KEY: json.dumps(curve_numbers(ds), sort_keys=True)}
    return {}


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{v:.4g}"
    return str(v)


def _estimate_rows(ds: xr.Dataset) -> list[tuple[str, str]]:
    a = ds.attrs
    rows = [
        ("data", a.get("data", "")),
        ("features (n_feature) / kept per selector (n_target)", f"{a['n_feature']} / {a['n_target']}"),
        ("base selector", a.get("selector", "")),
        ("t_uniform (chance threshold)", f"{a['t_uniform']:.2f} ± {a['t_uniform_std']:.2f}"),
        ("n_useful = A[f]", f"{a['n_useful']} (mean {a['n_useful_mean']:.1f} ± {a['n_useful_std']:.1f})"),
        *_single_selector_rows(a),
    ]
    p = attr_of(ds, "p")
    if p is not None and np.isfinite(float(p)):  # the simulator's fit: a model that simulates nothing has no p
        rows.append(("p", _fmt(p)))
    rows.insert(3, ("model behind the curve", f"{a.get('model', '?')}: {a.get('curve_source', '')}".rstrip(": ")))
    level = f"{float(a.get('confidence', 0.95)):.0%}"
    for key, label in (
        ("n_useful_interval", "n_useful"),
        ("p_interval", "p"),
        ("real_stability_interval", "stability"),
    ):
        if key in a and np.size(a[key]) == 2:
            rows.append((f"{level} interval of {label}", f"[{_fmt(a[key][0])}, {_fmt(a[key][1])}]"))
    if "reliable" in a:
        verdict = "yes" if int(a["reliable"]) else "NO: " + "; ".join(str(a.get("warnings", "")).splitlines())
        rows.insert(0, ("reliable", verdict))
    if attr_of(ds, "n_useful_v") is not None:
        holds = "holds" if int(a["fixed_point_holds"]) else "does NOT hold"
        if int(a["fixed_point_holds"]) and str(a.get("fixed_point_power", "")) == "0":
            holds += ", but would also hold for clearly different u (no power)"
        rows.append(("A[f_(u,p)] (fixed point)", f"{a['n_useful_v']:.1f} ± {a['n_useful_v_std']:.1f}: {holds}"))
    if attr_of(ds, "calibrated_n_useful") is not None:
        rows.append(("calibrated (n_useful, p)", f"({a['calibrated_n_useful']}, {a['calibrated_p']:.3f})"))
    rows += [
        ("real runs / simulated runs", f"{a['real_runs']} / {a['simulated_runs']}"),
        ("wall time of the estimate", _wall_time(ds)),
    ]
    if "naive_seconds" in a:
        rows.append(
            (
                "naive real check",
                f"{a['naive_real_runs']} real runs, {a['naive_seconds']:.1f} s, layout {a.get('naive_layout', '?')}",
            )
        )
    return rows


def _wall_time(ds: xr.Dataset) -> str:
    """The estimate's wall time, its real runs at the seconds they took when made: the
    figure of the cost picture and the terminal's cost line, with how this run paid them."""
    made, here = seconds_as_made(ds), total_seconds(ds)
    reused = int(ds.attrs.get("runs_reused", 0))
    if not reused or abs(made - here) < 0.05:
        return seconds_text(made)
    return (
        f"{seconds_text(made)} ({reused} of its real runs read back from the cache, at the seconds they took when "
        f"made; this run took {seconds_text(here)})"
    )


def _single_selector_rows(a: dict) -> list[tuple[str, str]]:
    """One selector's stability as the text and the JSON say it, then the paper's measure
    named for what it is."""
    index = a.get("index", "jaccard")
    one = f"{a['stability_one_selector_value']:.4f}"
    if "stability_one_selector_lower" in a:
        one += (
            f", {a['stability_one_selector_interval']} [{a['stability_one_selector_lower']:.4f}, "
            f"{a['stability_one_selector_upper']:.4f}]"
        )
    paper = f"{a['paper_stability_value']:.4f}"
    if "paper_stability_lower" in a:
        paper += f", bootstrap interval [{a['paper_stability_lower']:.4f}, {a['paper_stability_upper']:.4f}]"
    paper += (
        f"; Nogueira's index {a['paper_stability_nogueira']:.4f}, 95% CI "
        f"[{a['paper_stability_nogueira_lower']:.4f}, {a['paper_stability_nogueira_upper']:.4f}]"
    )
    return [
        (f"one selector's stability ({index})", f"{one} ({a['stability_one_selector_from']})"),
        (
            f"the paper's measure: {a['paper_stability_runs']} real runs alone ({index})",
            f"{paper} ({a['paper_stability_from']})",
        ),
    ]


def _curve_table(ds: xr.Dataset) -> str:
    """The curve per size and, beside a naive check, the verdict
    :func:`~ensstab_dask.estimates.validation.comparison.compare` gave (``compare_*``). Each cell
    carries its column's name, so that a narrow screen shows each size as a card of named
    values (``table.wide`` in :data:`STYLE`)."""
    naive = "naive_stability" in ds
    band = "stability_lower" in ds
    heads = ["m_ensemble", "predicted", f"{float(ds.attrs.get('confidence', 0.95)):.0%} interval" if band else "± sd"]
    if naive:
        heads += ["naive real", "± SE", "combined z", "within 2 SE (combined)"]
    rows = []
    for i, m in enumerate(ds["m_ensemble"].values):
        s, sd = float(ds["stability"][i]), float(ds["stability_std"][i])
        spread = (
            f"[{float(ds['stability_lower'][i]):.4f}, {float(ds['stability_upper'][i]):.4f}]" if band else f"{sd:.4f}"
        )
        cells = [str(int(m)), f"{s:.4f}", spread]
        if naive:
            r, se = float(ds["naive_stability"][i]), float(ds["naive_stability_se"][i])
            row = {"predicted": s, "z": float(ds["compare_z"][i]), "within_2se": bool(ds["compare_within_2se"][i])}
            cells += [f"{r:.4f}", f"{se:.4f}", z_text(row["z"]), verdict(row)]
        rows.append("<tr>" + "".join(f"<td data-label='{h}'>{c}</td>" for h, c in zip(heads, cells)) + "</tr>")
    head = "<tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr>"
    return f"<table class='wide'>{head}{''.join(rows)}</table>"


def _sweep_rows(ds: xr.Dataset) -> list[tuple[str, str]]:
    rows = [
        (d, f"{ds.sizes[d]} values, {_fmt(ds[d].values.min())} to {_fmt(ds[d].values.max())}")
        for d in ("n_useful", "p", "m_ensemble")
    ]
    keys = ("n_feature", "n_target", "m_stability", "n_runs", "repeats", "aggregate", "index", "seed")
    return rows + [(k, _fmt(ds.attrs[k])) for k in keys if k in ds.attrs]


def _caption_words(ds: xr.Dataset, kind: str, parameter_names: Mapping[str, str]) -> dict[str, str]:
    """What the captions' placeholders say for this result: the parameters as the caller
    names them, and for an estimate what its model ran (a simulation or none) and what
    its cost picture draws (the naive check as run, and so a ratio at equal precision,
    only when there was one)."""
    words = {p: parameter_names.get(p, p) for p in ("real_stability", "n_useful")}
    if kind == "estimate":
        simulator = bool(int(ds.attrs["simulator"]))
        words.update(
            n_target=str(ds.attrs.get("n_target", "n_target")),
            index=str(ds.attrs.get("index", "jaccard")).capitalize(),
            interval_of=str(ds.attrs.get("interval_of", "real runs")),
            and_simulation=" and with the simulation" if simulator else "",
        )
        words.update(_cost_words(ds))
    elif kind == "sweep":
        words["fall_words"] = _fall_words(ds)
    return words


def _fall_words(ds: xr.Dataset) -> str:
    """What the sweep's curve caption adds when a drawn curve falls from the smallest
    m_ensemble (the p values :func:`plot_stability_curve` draws by default): why."""
    if ds.sizes.get("m_ensemble", 0) < 2:
        return ""
    stab, sd, chosen = sweep_curves(ds, None, None, 5)
    falling = explained_falls(ds, stab, sd, chosen)
    if not falling:
        return ""
    ps = ", ".join(f"{pv:.2f}" for pv in falling)
    one = len(falling) == 1
    return (
        f" Here the curve{'' if one else 's'} at p = {ps} fall{'s' if one else ''} below {'its' if one else 'their'} "
        f"value at m = {int(stab['m_ensemble'][0])} (n_useful = {int(stab['n_useful'])}). {FALL_WHY}"
    )


def _cost_words(ds: xr.Dataset) -> dict[str, str]:
    """The cost caption's placeholders: it describes only what :func:`plot_cost` draws."""
    if "naive_seconds" not in ds.attrs:
        return dict(
            direct_copies=str(DIRECT_COPIES),
            rate_from="the estimate's own runs (no naive check was run)",
            naive_dot="",
            ratio_words="The label at the right is the speed-up in time at the largest m: it compares real runs "
            "only, not precision, and a direct measurement of as many copies may be more precise than the "
            "estimate; without a naive check there is no measured variance to compare them at equal precision "
            "(ensstab validate runs one).",
        )
    ratio = "naive_stability_se" in ds and "compare_predicted_se" in ds
    return dict(
        direct_copies=str(int(ds.attrs["naive_m_stability"])),
        rate_from="the naive check",
        naive_dot=" The black dot is the naive check as it was run and timed, at the largest m.",
        ratio_words="The label at the right is the speed-up in time at the largest m (real runs only)"
        + (
            ", then the ratio at equal precision: (naive runs x naive variance) / (estimate runs x estimate "
            "variance), each variance its standard error squared; above 1 the estimate is the cheaper way to "
            "that precision, below 1 measuring directly is."
            if ratio
            else "; this result stored no standard errors to compare them at equal precision."
        ),
    )


STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222;
       line-height: 1.45; overflow-wrap: break-word; }
table:not(.answer) td, table:not(.answer) th { overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 1rem 0; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
td.number { text-align: right; white-space: nowrap; }
figure { margin: 2rem 0; } img { max-width: 100%; height: auto; } figcaption { color: #444; }
pre { background: #f6f6f6; padding: 0.8rem; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.85rem; }
p.lead { font-size: 1.1rem; }
section { border-top: 1px solid #ddd; margin-top: 2rem; }
@media (max-width: 480px) {
  body { margin: 1rem auto; padding: 0 0.6rem; } table { font-size: 0.85rem; } th, td { padding: 0.2rem 0.3rem; }
  table.wide, table.wide tbody, table.wide tr, table.wide td { display: block; }
  table.wide tr:first-child { display: none; }
  table.wide tr { border: 1px solid #ccc; margin-bottom: 0.5rem; }
  table.wide td { border: none; }
  table.wide td::before { content: attr(data-label) ": "; font-weight: 600; }
}
"""

#: A row of the answer's table as :func:`~ensstab_dask.estimates.words.summary.plain_answer` writes
#: it: ``    an ensemble of 5:  7.2 of 20 (36%); 95% interval 6.4 to 8.1``.
_ANSWER_ROW = re.compile(
    r"^ {4}(?P<who>.+?):\s+(?P<shared>[\d.]+) of (?P<k>\d+) \((?P<share>\d+%)\)"
    r"(?:; (?P<level>\d+%) interval (?P<lo>[\d.]+) to (?P<hi>[\d.]+))?$"
)


def answer_html(answer: str) -> str:
    """The answer in plain words as a page shows it: its first sentence, the features two
    runs share at each ensemble size as a table, and each of its other lines (where more
    members stop helping, whether to believe it, the features kept, what to do next) a
    paragraph of its own, the words as the terminal printed them."""
    e = html.escape
    parts, rows, level = [], [], "95%"
    for line in answer.splitlines():
        row = _ANSWER_ROW.match(line)
        if row:
            level = row["level"] or level
            interval = f"{row['lo']} to {row['hi']}" if row["lo"] else ""
            rows.append(
                f"<tr><td>{e(row['who'])}</td><td class='number'>{row['shared']} of {row['k']}</td>"
                f"<td class='number'>{row['share']}</td><td class='number'>{e(interval)}</td></tr>"
            )
            continue
        if rows:  # the table ends where the rows do
            parts.append(_answer_table(rows, level))
            rows = []
        text = line.strip()
        if not text:
            continue
        head, sep, rest = text.partition("? ")
        if sep and len(head) < 20:  # "Believe it? Yes: ...": the question in bold
            parts.append(f"<p><strong>{e(head)}?</strong> {e(rest)}</p>")
        else:
            tag = "<p class='lead'>" if not parts else "<p>"
            parts.append(f"{tag}{e(text)}</p>")
    if rows:
        parts.append(_answer_table(rows, level))
    return "\n".join(parts)


def _answer_table(rows: list[str], level: str) -> str:
    head = f"<tr><th>ensemble</th><th>features two runs share</th><th>share</th><th>{level} interval</th></tr>"
    return f"<table class='answer'>{head}{''.join(rows)}</table>"


def page(title: str, body: list[str]) -> str:
    """A self-contained HTML page: its own style, nothing fetched, readable from 390 px up."""
    head = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
    )
    return "\n".join([head, *body, "</body></html>"])


def _html(ds: xr.Dataset, kind: str, images: list[tuple[str, bytes]], parameter_names: Mapping[str, str]) -> str:
    e = html.escape
    parts = []
    if kind == "estimate":
        parts.append("<h1>Predicted stability of ensemble feature selectors</h1>")
        if "answer" in ds.attrs:  # a result may lack one (no curve, or a file from elsewhere)
            parts.append(answer_html(str(ds.attrs["answer"])))
        how = (
            "fitted a two-parameter simulator (n_useful, p) of it, and predicted by simulation"
            if bool(int(ds.attrs["simulator"]))
            else f"and estimated with the {ds.attrs.get('model', '')} model ({ds.attrs.get('curve_source', '')})"
        )
        parts.append(
            f"<p>The estimate ran the real base selector a few times, {e(how)} how stable ensembles of it will be: "
            "how much the selected features agree when the study is repeated, each time on its own random half of "
            "the same samples (1 = always the same features, 0 = no overlap).</p>"
        )
        rows = _estimate_rows(ds)
    else:
        parts.append("<h1>Sweep of the simulated selector</h1>")
        rows = _sweep_rows(ds)
    parts.append(
        "<table>" + "".join(f"<tr><th>{e(str(k))}</th><td>{e(str(v))}</td></tr>" for k, v in rows) + "</table>"
    )
    if kind == "estimate":
        if int(ds.attrs.get("has_curve", 1)):
            parts.append("<h2>Predicted stability by ensemble size</h2>" + _curve_table(ds))
        else:
            parts.append("<h2>No prediction</h2><p>The method has nothing to say here; see the warnings above.</p>")
    for name, png in images:
        title, text = PICTURES[kind][name].title, PICTURES[kind][name].caption
        text = text.format_map(_caption_words(ds, kind, parameter_names))
        data = base64.b64encode(png).decode("ascii")
        parts.append(
            f"<figure><h2>{e(title)}</h2><img alt='{e(title)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{e(text)} (<code>{e(name)}.png</code>)</figcaption></figure>"
        )
    if "summary" in ds.attrs:
        parts.append(f"<h2>Summary as printed</h2><pre>{e(str(ds.attrs['summary']))}</pre>")
    written_by = ds.attrs.get("ensstab_dask_version", ds.attrs.get("version", "?"))
    parts.append(f"<p><small>report by ensstab_dask {e(__version__)}; result by {e(str(written_by))}.</small></p>")
    return page(f"ensstab_dask {kind} report", parts)


def write_report(
    result,
    out_dir,
    *,
    overwrite: bool = False,
    real_stability: float | None = None,
    n_useful: float | None = None,
    n_runs: int | None = None,
    dpi: int = 110,
    parameter_names: Mapping[str, str] | None = None,
) -> Path:
    """Write the pictures that apply to ``result`` and an ``index.html`` into ``out_dir``.

    Parameters
    ----------
    result : path of a netCDF file, a Dataset, or an Estimate
        From ``ensstab estimate --output`` / ``Estimate.to_dataset()``, or a sweep.
    out_dir : path
        Created; an existing one is replaced only with ``overwrite=True``.
    real_stability, n_useful, n_runs : optional
        For a sweep: the observations to calibrate against (see :func:`~ensstab_dask.plotting.plot_calibration`),
        ``real_stability`` and ``n_useful`` together; refused for an estimate, and where they
        cannot be used (:func:`_check_observations`), never dropped.
    parameter_names : mapping, optional
        How the captions name the parameters ``real_stability`` and ``n_useful``
        (default: by those names); ``ensstab report`` passes its options' names.

    Returns
    -------
    Path of ``index.html``.
    """
    from matplotlib.figure import Figure

    out = Path(out_dir)
    # Before the result is read: never onto a store, nor over a directory that is not a report.
    refuse_to_replace(out, directory=True, overwrite=overwrite)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(param("out_dir") + f" {out} exists and is not a directory")
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise InvalidParameterError(
            param("out_dir") + f" {out} exists and is not empty; pass " + param("overwrite", True) + " to replace it"
        )
    if isinstance(result, (str, os.PathLike)):
        path = Path(result)
        if not path.is_file():
            raise InvalidParameterError(param("result") + f" {path}: no such file")
        ds = read_netcdf(path)  # bounded in time, its checksum checked: a damaged file is refused
    else:
        ds = as_dataset(result)
    kind = kind_of(ds)
    seen = Observations(real_stability, n_useful, n_runs)
    pictures = [picture for picture in PICTURES[kind].values() if picture.applies(ds, seen)]
    _check_observations(ds, real_stability, n_useful, n_runs)

    out.parent.mkdir(parents=True, exist_ok=True)
    # overwrite=True: an existing empty out_dir is replaced without it, and a non-empty one
    # was refused above, before the result was read.
    with atomic_output(out, overwrite=True, directory=True) as tmp:
        images = []
        for picture in pictures:
            name = picture.name
            fig = Figure(figsize=(7.5, 5.2), layout="constrained")
            picture.draw(ds, fig.add_subplot(), seen)
            fig.savefig(tmp / f"{name}.png", dpi=dpi, metadata=picture_metadata(name, ds))
            images.append((name, (tmp / f"{name}.png").read_bytes()))
        (tmp / "index.html").write_text(_html(ds, kind, images, parameter_names or {}), encoding="utf-8")
    return out / "index.html"
