"""What the pictures show, checked on the rendered figure: legends list only what is drawn
and cover none of it, axes of counts have whole-number ticks, the cost picture does not
call a scaled time measured, and xarray's own ``.plot`` gets short labels without "[1]"."""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pytest
import xarray as xr
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection, QuadMesh
from matplotlib.colors import to_hex
from matplotlib.contour import ContourSet
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from xarray.plot.utils import label_from_attrs

import ensstab_dask as es
from ensstab_dask import plotting
from ensstab_dask.plotting.pictures import PICTURES, Observations, kind_of
from ensstab_dask.real.datasets import make_microarray

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Three consecutive sizes: matplotlib's default locator puts ticks at 1.5 and 2.5 here.
M = (1, 2, 3)


def _draw(name, ds, ax, *, real_stability, n_useful, n_runs):
    """A report picture drawn as the report draws it."""
    PICTURES[kind_of(ds)][name].draw(ds, ax, Observations(real_stability, n_useful, n_runs))


@pytest.fixture(scope="module")
def est_and_real():
    """A small estimate with calibration surfaces, and the naive check of the same problem."""
    from sklearn.ensemble import ExtraTreesClassifier

    data = make_microarray(seed=2, n_samples=40, n_feature=300, n_informative=15)
    sel = ExtraTreesClassifier(n_estimators=30, max_features="sqrt", n_jobs=1)
    kw = dict(selector=sel, m_ensemble=M, m_stability=8, seed=4, client="synchronous")
    with warnings.catch_warnings():  # the paper's model: calibration surfaces and the fixed point to draw
        # This small selector trips a guard rail; irrelevant here.
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        est = es.estimate(data.X, data.y, 10, repeats=4, calibrate=True, n_runs=24, n_boot=20, model="onda", **kw)
    real = es.real_ensemble_stability(data.X, data.y, 10, **kw)
    return est, real


@pytest.fixture(scope="module")
def est_ds(est_and_real):
    """The estimate with the naive check, as a Dataset."""
    est, real = est_and_real
    return est.to_dataset(real)


@pytest.fixture(scope="module")
def sweep_ds():
    return es.sweep(
        300,
        10,
        n_useful=[10, 20, 30, 40, 60, 80],
        p=[0.2, 0.4, 0.6, 0.8, 1.0],
        m_ensemble=[1, 4],
        n_runs=6,
        m_stability=10,
        repeats=3,
        seed=1,
        client="synchronous",
        progress=False,
    )


def _report_axes():
    """An Axes in a figure like the report's (same size, constrained layout), on an Agg
    canvas: a bare Figure's canvas.draw() lays nothing out, and positions would be stale."""
    fig = Figure(figsize=(7.5, 5.2), layout="constrained")
    FigureCanvasAgg(fig)
    return fig.add_subplot()


def _drew(artist) -> bool:
    """Whether an artist put anything on the canvas (a contour level the surface never
    reaches leaves a set of empty paths; an empty scatter has no offsets)."""
    if not artist.get_visible():
        return False
    if isinstance(artist, Line2D):
        return len(artist.get_xdata()) > 0
    if isinstance(artist, ContourSet):
        return any(len(p.vertices) for p in artist.get_paths())
    if isinstance(artist, Collection):
        return len(artist.get_offsets()) > 0 or any(len(p.vertices) for p in artist.get_paths())
    return True


def _style(artist) -> tuple:
    """What a reader matches a legend entry to a mark by: hatch, or colour with line style
    or marker. Read from the artists themselves, never from their labels."""
    if isinstance(artist, Patch) or (isinstance(artist, ContourSet) and artist.filled):
        hatch = artist.get_hatch() if isinstance(artist, Patch) else (artist.hatches or [None])[0]
        return ("hatch", hatch)
    if isinstance(artist, Line2D):
        marker = artist.get_marker()
        if marker not in ("", "None", None, " "):
            return ("marker", marker, to_hex(artist.get_color()))
        return ("line", to_hex(artist.get_color()), artist.get_linestyle())
    if isinstance(artist, ContourSet):
        ls = artist.get_linestyle()[0]
        dashed = ls[1] is not None and len(ls[1]) > 0
        return ("line", to_hex(artist.get_edgecolor()[0]), "--" if dashed else "-")
    if isinstance(artist, Collection):  # a scatter
        return ("marker", "o", to_hex(artist.get_facecolor()[0]))
    raise TypeError(type(artist))


def _legend_matches_drawing(ax) -> set[str]:
    """Every legend entry stands for a mark that was drawn, and every drawn line, band or
    marker has its entry: matched by style (colour, line style, hatch, marker)."""
    legend = ax.get_legend()
    handles = legend.legend_handles
    texts = [t.get_text() for t in legend.get_texts()]
    marks = [a for a in list(ax.get_lines()) + list(ax.collections) if not isinstance(a, QuadMesh) and _drew(a)]
    drawn = {_style(a) for a in marks}
    listed = {_style(h): t for h, t in zip(handles, texts)}
    assert not set(listed) - drawn, f"listed but not drawn: {[listed[k] for k in set(listed) - drawn]}"
    assert not drawn - set(listed), f"drawn but not listed: {drawn - set(listed)}"
    return set(texts)


# Legends -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obs",
    [
        (0.05, 6.0),  # every line and band on the surface
        (0.3, 15.0),  # n_useful_v never reaches 15 here: no orange line, no \\ band
        (0.9, 4.0),  # a stability only the corner cell reaches
    ],
)
def test_sweep_calibration_legend_lists_only_what_is_drawn(sweep_ds, obs):
    ax = _report_axes()
    # The report's own drawing code, as `ensstab report SWEEP.nc --real-stability ...` runs it.
    _draw("calibration", sweep_ds, ax, real_stability=obs[0], n_useful=obs[1], n_runs=6)
    listed = _legend_matches_drawing(ax)
    v = sweep_ds["n_useful_v"].sel(m_ensemble=4)
    orange = [t for t in listed if t.startswith("n_useful_v = observed")]
    # The orange line exists exactly when the observation is inside the surface's range.
    assert bool(orange) == bool(float(v.min()) < obs[1] < float(v.max()))


@pytest.mark.slow
def test_estimate_calibration_legend_lists_only_what_is_drawn(est_ds):
    ax = _report_axes()
    plotting.plot_calibration(est_ds, ax=ax)
    listed = _legend_matches_drawing(ax)
    assert any(t.startswith("stability = observed") for t in listed)


@pytest.mark.parametrize("source", ["estimate", "sweep"])
def test_calibration_legend_covers_nothing_and_is_not_clipped(est_ds, sweep_ds, source):
    ax = _report_axes()
    if source == "estimate":
        plotting.plot_calibration(est_ds, ax=ax)
    else:
        plotting.plot_calibration(sweep_ds, 0.05, 6.0, n_runs=6, ax=ax)
    fig = ax.get_figure()
    fig.canvas.draw()  # positions are final only once drawn
    legend = ax.get_legend().get_window_extent()
    # Not over the surface at all: wherever the lines run, they cannot be under it.
    assert not legend.overlaps(ax.get_window_extent())
    # And no line, band or marker vertex under it (the orange line in particular).
    for artist in list(ax.collections) + list(ax.get_lines()):
        if isinstance(artist, ContourSet):
            xy = np.concatenate(
                [artist.get_transform().transform(p.vertices) for p in artist.get_paths() if len(p.vertices)]
                or [np.empty((0, 2))]
            )
        elif isinstance(artist, Line2D):
            xy = artist.get_transform().transform(artist.get_xydata())
        else:
            continue
        inside = (xy[:, 0] >= legend.x0) & (xy[:, 0] <= legend.x1) & (xy[:, 1] >= legend.y0) & (xy[:, 1] <= legend.y1)
        assert not inside.any(), f"{artist.get_label()} is under the legend"
    # Whole inside the figure: a legend moved outside the axes must not be cut off.
    assert fig.bbox.contains(legend.x0, legend.y0) and fig.bbox.contains(legend.x1, legend.y1)


# Ticks ---------------------------------------------------------------------------------


def _ticks_in_view(axis, limits) -> np.ndarray:
    lo, hi = sorted(limits)
    locs = np.asarray(axis.get_ticklocs())
    return locs[(locs >= lo - 1e-9) & (locs <= hi + 1e-9)]


@pytest.mark.parametrize("name", ["stability_curve", "cost", "selection_counts", "fixed_point"])
def test_axes_of_counts_have_whole_number_ticks(est_ds, name):
    ax = _report_axes()
    _draw(name, est_ds, ax, real_stability=None, n_useful=None, n_runs=None)
    ax.get_figure().canvas.draw()
    ticks = _ticks_in_view(ax.xaxis, ax.get_xlim())
    assert len(ticks) >= 2
    np.testing.assert_array_equal(ticks, np.round(ticks), err_msg=f"{name}: x ticks {ticks}")


def test_sweep_m_axis_has_whole_number_ticks(sweep_ds):
    ax = _report_axes()
    plotting.plot_stability_curve(sweep_ds, ax=ax)  # m_ensemble 1 and 4: default ticks at 1.5, 2.5, 3.5
    ax.get_figure().canvas.draw()
    ticks = _ticks_in_view(ax.xaxis, ax.get_xlim())
    assert set(ticks) >= {1.0, 4.0} and np.all(ticks == np.round(ticks)), ticks


@pytest.mark.parametrize("name", ["surface", "calibration"])
def test_a_sweeps_surfaces_are_ticked_at_its_grid_values(sweep_ds, name):
    ax = _report_axes()
    _draw(name, sweep_ds, ax, real_stability=0.2, n_useful=25, n_runs=6)
    ax.get_figure().canvas.draw()
    assert list(ax.get_xticks()) == list(sweep_ds["p"].values)
    assert list(ax.get_yticks()) == list(sweep_ds["n_useful"].values)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["10", "20", "30", "40", "60", "80"]


def test_a_sweeps_report_has_captions_of_its_own(sweep_ds, est_ds, tmp_path):
    """A sweep has no real runs: its band is not a bootstrap and its n_useful was not counted."""
    from html import unescape

    from ensstab_dask.plotting.report import write_report

    sweep = unescape(write_report(sweep_ds, tmp_path / "sweep").read_text())
    assert "±1 standard deviation over the sweep's repeats" in sweep
    for estimate_words in ("bootstrap", "counted on the real selector", "estimate's own"):
        assert estimate_words not in sweep
    with_obs = write_report(sweep_ds, tmp_path / "calibrated", real_stability=0.2, n_useful=25, n_runs=6)
    assert "the n_useful you gave (n_useful)" in unescape(with_obs.read_text())  # the parameter's name
    # ... or the caller's name for it: ensstab report names its options.
    named = write_report(
        sweep_ds,
        tmp_path / "named",
        real_stability=0.2,
        n_useful=25,
        n_runs=6,
        parameter_names={"n_useful": "--n-useful", "real_stability": "--real-stability"},
    )
    assert "the n_useful you gave (--n-useful)" in unescape(named.read_text())
    # The estimate keeps its own words, and opens with its answer.
    estimate = write_report(est_ds, tmp_path / "estimate").read_text()
    assert "a bootstrap over them" in estimate
    # The runs are random halves of the same samples, not new data.
    assert "new data" not in estimate and "random half of the same samples" in estimate
    assert estimate.index("<p class='lead'>Answer: ") < estimate.index("<table")


def test_a_sweeps_band_is_labelled_as_its_repeats_spread(sweep_ds):
    """The legend's entries are the p values, one per curve, in order; what the bands are
    is its title, not an entry between two p values."""
    ax = plotting.plot_stability_curve(sweep_ds, ax=_report_axes())
    legend = ax.get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == [f"p = {v:.2f}" for v in sweep_ds["p"].values]
    assert legend.get_title().get_text() == "bands: ±1 sd over the 3 repeats"
    assert all(not c.get_label() or c.get_label().startswith("_") for c in ax.collections)  # no band listed


def _note(ax) -> str:
    return "\n".join(t.get_text() for t in ax.texts).replace("\n", " ")


def test_a_sweeps_fall_from_one_selector_is_explained_in_the_picture_and_the_report(sweep_ds, tmp_path):
    """At high p the simulated curve falls from m = 1 (here at p 0.8 and 1.0, n_useful 40):
    the picture notes it under the axes, the report's caption says why; a sweep whose drawn
    curves do not fall says neither."""
    from html import unescape

    from ensstab_dask.plotting.curve import FALL_WHY, falls_from_smallest_m
    from ensstab_dask.plotting.report import write_report

    stab, sd = sweep_ds["stability"].sel(n_useful=40), sweep_ds["stability_std"].sel(n_useful=40)
    assert falls_from_smallest_m(stab, sd, sweep_ds["p"].values) == [0.8, 1.0]
    ax = _report_axes()
    plotting.plot_stability_curve(sweep_ds, ax=ax)
    note = _note(ax)
    assert note.startswith("At p = 0.80, 1.00 the curve falls from m = 1:") and "mean-rank ensemble" in note
    fig = ax.get_figure()
    fig.canvas.draw()
    (text,) = ax.texts
    assert fig.bbox.contains(*text.get_window_extent().p0) and fig.bbox.contains(*text.get_window_extent().p1)
    assert not text.get_window_extent().overlaps(ax.get_window_extent())  # under the axes, over no curve
    html = unescape(write_report(sweep_ds, tmp_path / "falls").read_text())
    assert "Here the curves at p = 0.80, 1.00 fall below their value at m = 1 (n_useful = 40). " + FALL_WHY in html

    # Vote and reciprocal rank do not fall so: the reason is mean rank's, and is given for it only.
    assert not plotting.plot_stability_curve(sweep_ds.assign_attrs(aggregate="vote"), ax=_report_axes()).texts
    low = sweep_ds.sel(p=[0.2, 0.4])
    ax = plotting.plot_stability_curve(low, ax=_report_axes())
    assert not ax.texts
    html = unescape(write_report(low, tmp_path / "rises").read_text())
    assert "Here the curve" not in html and FALL_WHY not in html


def test_the_fall_is_what_the_caption_says():
    """The caption's reason, measured: at p = 1 a single selector's top n_target are all
    useful (two share n_target^2/n_useful of them, Jaccard n_target/(2 n_useful - n_target)),
    an ensemble of 5's top is about half useless features, and the useful ones fill it
    again with more members."""
    N, K, u = 2000, 20, 60
    useful = {
        m: float((es.simulate_ensembles(N, K, u, 1.0, m_ensemble=m, size=100, seed=3) < u).sum(1).mean())
        for m in (1, 5, 50)
    }
    assert useful[1] == K and 0.35 * K < useful[5] < 0.65 * K and useful[50] > 0.95 * K
    single = es.simulated_stability(N, K, u, 1.0, m_stability=100, seed=3)
    five = es.simulated_stability(N, K, u, 1.0, m_ensemble=5, m_stability=100, seed=3)
    assert single == pytest.approx(K / (2 * u - K), abs=0.02) and five < single / 2


# The fixed point ------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["estimate", "sweep"])
def test_the_fixed_point_diagonal_never_runs_below_zero(est_ds, sweep_ds, source):
    ax = _report_axes()
    _draw(
        "fixed_point", est_ds if source == "estimate" else sweep_ds, ax, real_stability=None, n_useful=None, n_runs=None
    )
    (diagonal,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("u = n_useful_v")]
    x, y = np.asarray(diagonal.get_xdata()), np.asarray(diagonal.get_ydata())
    np.testing.assert_array_equal(x, y)
    assert x.min() >= 0
    if source == "sweep":  # A[f] reaches 0 at low p: the diagonal starts at 0, not below
        assert float(sweep_ds["n_useful_v"].min()) < 1 and x.min() == 0


# The cost picture ------------------------------------------------------------------------


def test_the_cost_picture_is_ticked_at_the_ensemble_sizes(est_ds):
    """At the sizes priced (as the stability curve), not at a locator's round numbers:
    sizes 1, 5, 13 would get 0, 2, 4, ... or 0, 5, 10, 15."""
    sizes = [1, 5, 13]
    ds = est_ds.assign_coords(m_ensemble=sizes)
    ax = _report_axes()
    plotting.plot_cost(ds, ax=ax)
    ax.get_figure().canvas.draw()
    assert list(_ticks_in_view(ax.xaxis, ax.get_xlim())) == sizes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "5", "13"]
    ax = _report_axes()
    plotting.plot_cost(est_ds, ax=ax)
    assert list(ax.get_xticks()) == list(M)


def test_the_cost_label_sits_inside_the_axes_under_the_title(est_ds):
    ax = _report_axes()
    plotting.plot_cost(est_ds, ax=ax)
    ax.get_figure().canvas.draw()
    (label,) = ax.texts
    box, inside = label.get_window_extent(), ax.get_window_extent()
    assert inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1)
    assert not box.overlaps(ax.title.get_window_extent())


def test_cost_picture_does_not_call_scaled_times_measured(est_ds):
    ax = plotting.plot_cost(est_ds, ax=_report_axes())
    table = plotting.cost_table(est_ds)
    (per_m,) = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == len(M)]
    np.testing.assert_allclose(per_m.get_ydata(), table["naive_seconds"])
    assert "measured" not in per_m.get_label() and "scaled" in per_m.get_label()
    assert "not timed" in table["naive_seconds"].attrs["description"]
    # The one timed naive value is the run itself, at the largest m, and says so.
    (as_run,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("naive check as run")]
    assert "(measured)" in as_run.get_label()
    assert as_run.get_ydata()[0] == pytest.approx(est_ds.attrs["naive_seconds"])
    assert as_run.get_xdata()[0] == max(M)


def test_cost_picture_and_caption_say_what_is_compared(est_and_real, est_ds):
    """Without a naive check: time at the naive check's copies count, labelled runs only, and
    a caption without the dot it does not draw. With one: the ratio at equal precision is
    (naive runs x naive SE^2) / (estimate runs x estimate SE^2) per size, and is said."""
    from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
    from ensstab_dask.plotting.cost import DIRECT_COPIES, cost_words, equal_precision_ratio
    from ensstab_dask.plotting.report import _caption_words

    est, real = est_and_real
    alone = est.to_dataset()
    assert DIRECT_COPIES == NaiveSettings.m_stability == 20
    table = plotting.cost_table(alone)
    np.testing.assert_array_equal(table["naive_real_runs"], DIRECT_COPIES * np.array(M))
    assert "equal_precision_ratio" not in table and table.attrs["compared"] == "runs only, not at equal precision"
    ax = plotting.plot_cost(alone, ax=_report_axes())
    (label,) = [t.get_text() for t in ax.texts]
    assert label == cost_words(table) and "not at equal precision" in label
    assert not [ln for ln in ax.get_lines() if ln.get_label().startswith("naive check as run")]
    caption = PICTURES["estimate"]["cost"].caption.format_map(_caption_words(alone, "estimate", {}))
    assert "black dot" not in caption and "not precision" in caption and "20 x m real runs" in caption

    table = plotting.cost_table(est_ds)
    copies = int(real.attrs["m_stability"])
    want = copies * np.array(M) * est_ds["naive_stability_se"].values ** 2
    want /= est.real_runs * np.array([est.curve_se()[m] for m in M]) ** 2
    np.testing.assert_allclose(table["equal_precision_ratio"], want)
    np.testing.assert_allclose(
        table["equal_precision_ratio"],
        equal_precision_ratio(
            copies * np.array(M), real["stability_se"].values, est.real_runs, list(est.curve_se().values())
        ),
    )
    assert table.attrs["compared"] == "equal precision"
    ax = plotting.plot_cost(est_ds, ax=_report_axes())
    (label,) = [t.get_text() for t in ax.texts]
    assert label.endswith(f"{float(table['equal_precision_ratio'][-1]):.2g}x at equal precision")
    caption = PICTURES["estimate"]["cost"].caption.format_map(_caption_words(est_ds, "estimate", {}))
    assert "black dot" in caption and "equal precision" in caption and f"{copies} x m real runs" in caption


def test_equal_precision_ratio_is_runs_times_variance():
    from ensstab_dask.plotting.cost import equal_precision_ratio

    # Four times the runs at half the standard error: the same work, ratio 1.
    assert float(equal_precision_ratio(400, 0.02, 100, 0.04)) == pytest.approx(1.0)
    assert float(equal_precision_ratio(1000, 0.01, 200, 0.01)) == pytest.approx(5.0)
    assert np.isnan(equal_precision_ratio(1000, 0.0, 200, 0.01)) and np.isnan(equal_precision_ratio(1000, 0.01, 200, 0))


# xarray's own labels -----------------------------------------------------------------------


def _check_label(da: xr.DataArray) -> str:
    label = label_from_attrs(da)
    assert "\n" not in label, f"{da.name}: xarray wraps {label!r} (over 30 characters)"
    assert "[1]" not in label and "[]" not in label, f"{da.name}: {label!r}"
    assert da.attrs.get("units", None) != "1", da.name
    return label


def test_sweep_and_naive_variables_have_short_labels_and_descriptions(sweep_ds):
    for name in list(sweep_ds.data_vars) + list(sweep_ds.coords):
        _check_label(sweep_ds[name])
    for name in ("stability", "stability_std", "n_useful_v", "n_useful_v_std", "n_useful", "p", "m_ensemble"):
        assert sweep_ds[name].attrs["description"], name
    data = make_microarray(n_feature=200, n_informative=10, effect=2.0, seed=1)
    naive = es.real_ensemble_stability(
        data.X, data.y, 5, m_ensemble=[1, 2], m_stability=3, selector=es.default_selector(5), client="synchronous"
    )
    for name in list(naive.data_vars) + list(naive.coords):
        _check_label(naive[name])


def test_estimate_variables_have_short_labels(est_ds):
    owned = [
        "stability",
        "stability_std",
        "stability_draws",
        "selection_counts",
        "uniform_counts",
        "t_uniform_draws",
        "n_useful_draws",
        "calibration_stability",
        "calibration_n_useful_v",
        "naive_stability",
        "naive_stability_se",
        "naive_nogueira_lower",
        "naive_nogueira_upper",
        "m_ensemble",
        "n_useful",
        "p",
    ]
    for name in owned:
        _check_label(est_ds[name])
    assert _check_label(est_ds["selection_counts"]) == "times picked (real) [runs]"


def test_xarray_plot_gets_a_clean_label(sweep_ds, est_ds):
    ax = plt.figure().add_subplot()
    est_ds["stability"].plot(ax=ax)
    assert ax.get_ylabel() == "stability (jaccard)"
    assert ax.get_xlabel() == "m_ensemble [selectors]"
    # A surface: the colour bar gets the variable's label, the axes the coordinates'.
    fig = plt.figure()
    ax = fig.add_subplot()
    sweep_ds["stability"].sel(m_ensemble=4).plot(ax=ax, x="p", y="n_useful")
    colorbar_label = fig.axes[-1].get_ylabel()
    assert colorbar_label == "stability (jaccard)"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("p", "n_useful [features]")
