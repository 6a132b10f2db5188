"""Pictures and the report: each draws the data it is given, labelled; errors are clear."""

from __future__ import annotations

import base64
import re
import subprocess
import sys

import matplotlib
import numpy as np
import pytest
import xarray as xr
from sweep_cases import tiny_sweep

import ensstab_dask as es
import ensstab_dask.accessor  # noqa: F401 - registers ds.ensstab
from ensstab_dask import plotting
from ensstab_dask.outputs import write_netcdf
from ensstab_dask.plotting.report import write_report
from ensstab_dask.real.datasets import make_microarray

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

M = (1, 3, 6)


@pytest.fixture(scope="module")
def result():
    """A small estimate with calibration and the naive check, and its Dataset."""
    from sklearn.ensemble import ExtraTreesClassifier

    data = make_microarray(seed=2, n_samples=40, n_feature=300, n_informative=15)
    sel = ExtraTreesClassifier(n_estimators=30, max_features="sqrt", n_jobs=1)
    kw = dict(selector=sel, m_ensemble=M, m_stability=8, seed=4, client="synchronous")
    # The paper's model: it has the calibration surfaces and the fixed point to draw.
    est = es.estimate(data.X, data.y, 10, repeats=4, calibrate=True, n_runs=24, n_boot=40, model="onda", **kw)
    real = es.real_ensemble_stability(data.X, data.y, 10, **kw)
    return est, real, est.to_dataset(real)


@pytest.fixture(scope="module")
def sweep_ds():
    return es.sweep(
        300,
        10,
        n_useful=[10, 20, 40, 80],
        p=[0.2, 0.5, 0.8, 1.0],
        m_ensemble=[1, 4],
        n_runs=6,
        m_stability=10,
        repeats=3,
        seed=1,
        client="synchronous",
        progress=False,
    )


def _labelled(ax):
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    assert ax.get_legend() is not None and ax.get_legend().get_texts()


@pytest.mark.slow
def test_dataset_holds_what_the_pictures_need(result):
    est, real, ds = result
    assert ds["selection_counts"].sum() == est.settings["n_runs"] * 10
    assert ds["uniform_counts"].sum() == est.settings["n_runs"] * 10
    # The uniform draw kept is the first draw behind t_uniform.
    assert int(ds["uniform_counts"].max()) == int(est.single.t_uniform_draws[0])
    np.testing.assert_array_equal(ds["naive_stability"], real["stability"])
    assert ds["calibration_consistent"].dtype == np.int8
    assert ds.attrs["naive_real_runs"] == 8 * max(M)


def test_stability_curve_draws_prediction_band_and_naive(result):
    """In the answer's units: features two runs share (of n_target), the index on the right."""
    from ensstab_dask.indices import index_of_shared, shared_features

    _, real, ds = result
    n, k = ds.attrs["n_feature"], ds.attrs["n_target"]

    def shared(values):
        return shared_features(np.asarray(values), "jaccard", n, k)

    fig, ax = plt.subplots()
    assert plotting.plot_stability_curve(ds, ax=ax) is ax
    _labelled(ax)
    assert ax.get_ylabel() == f"features two runs share (of their top {k})"
    lines = [ln for ln in ax.get_lines() if "(simulator u=" in ln.get_label()]
    np.testing.assert_allclose(lines[0].get_ydata(), shared(ds["stability"].values))
    # The band is the bootstrap interval, exactly, in shared features.
    (band,) = [c for c in ax.collections if "interval" in c.get_label()]
    ys = band.get_paths()[0].vertices[:, 1]
    expected = shared(np.r_[ds["stability_lower"], ds["stability_upper"]])
    assert set(np.round(ys, 12)) == set(np.round(expected, 12))
    naive = [c for c in ax.containers if c.get_label().startswith("naive")][0]
    np.testing.assert_allclose(naive.lines[0].get_ydata(), shared(real["stability"].values))
    # Error bars are +-2 jackknife SE of the index, mapped to shared features.
    segs = naive.lines[2][0].get_segments()
    st, se = real["stability"].values, real["stability_se"].values
    np.testing.assert_allclose([s[0, 1] for s in segs], shared(st - 2 * se))
    np.testing.assert_allclose([s[1, 1] for s in segs], shared(st + 2 * se))
    # The right-hand axis reads the same heights as the index.
    (right,) = [a for a in fig.axes if a is not ax and a.get_ylabel()] or [ax.child_axes[0]]
    assert right.get_ylabel() == "stability (jaccard index)"
    np.testing.assert_allclose(index_of_shared(shared(st), "jaccard", n, k), st)


def test_selection_counts_bars_are_the_histograms(result):
    _, _, ds = result
    ax = plotting.plot_selection_counts(ds)
    _labelled(ax)
    n_runs = int(ds.attrs["n_runs"])
    real_bars, uni_bars = ax.containers[:2]
    np.testing.assert_array_equal(
        [b.get_height() for b in real_bars], np.bincount(ds["selection_counts"].values, minlength=n_runs + 1)
    )
    np.testing.assert_array_equal(
        [b.get_height() for b in uni_bars], np.bincount(ds["uniform_counts"].values, minlength=n_runs + 1)
    )
    (vline,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("t_uniform")]
    assert vline.get_xdata()[0] == pytest.approx(ds.attrs["t_uniform"])


def test_calibration_marks_the_chosen_cell_and_the_consistent_ones(result, sweep_ds):
    _, _, ds = result
    ax = plotting.plot_calibration(ds)
    _labelled(ax)
    star = [ln for ln in ax.get_lines() if ln.get_marker() == "*"][0]
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (
        ds.attrs["calibration_best_p"],
        ds.attrs["calibration_best_n_useful"],
    )
    # On a sweep, the red dots are exactly the cells calibrate() calls consistent.
    cal = sweep_ds.ensstab.calibrate(0.18, 6.3, n_runs=6, stability_rtol=0.3, n_useful_atol=2)
    assert int(cal["consistent"].sum()) >= 2
    ax = plotting.plot_calibration(sweep_ds, 0.18, 6.3, n_runs=6, stability_rtol=0.3, n_useful_atol=2)
    dots = {tuple(xy) for xy in ax.collections[-1].get_offsets().tolist()}
    want = cal["consistent"].transpose("n_useful", "p")
    expected = {(float(p), float(u)) for u in want.n_useful.values for p in want.p.values if want.sel(n_useful=u, p=p)}
    assert dots == expected


def test_fixed_point_curves_and_estimate_point(result, sweep_ds):
    _, _, ds = result
    ax = plotting.plot_fixed_point(sweep_ds, n_runs=6)
    _labelled(ax)
    curves = [c for c in ax.containers if c.get_label().startswith("p = ")]
    assert len(curves) == 4
    np.testing.assert_allclose(curves[0].lines[0].get_ydata(), sweep_ds["n_useful_v"].sel(p=0.2, m_ensemble=1))
    ax = plotting.plot_fixed_point(ds)
    point = [c for c in ax.containers if c.get_label().startswith("estimate")][0]
    assert point.lines[0].get_ydata()[0] == pytest.approx(ds.attrs["n_useful_v"])
    assert any(ln.get_label().startswith("u = n_useful_v") for ln in ax.get_lines())


def test_cost_compares_whole_curve_with_each_m(result):
    _, real, ds = result
    table = plotting.cost_table(ds)
    per_run = real.attrs["seconds"] / real.attrs["real_runs"]
    np.testing.assert_allclose(table["naive_seconds"], 8 * np.array(M) * per_run)
    assert table.attrs["basis"] == "measured"
    total = sum(v for k, v in ds.attrs.items() if k.startswith("seconds_"))
    np.testing.assert_allclose(table["estimate_seconds"], total)
    _labelled(plotting.plot_cost(ds))
    # Without the naive check the per-run cost is projected from the estimate's own runs.
    est = result[0]
    assert plotting.cost_table(est).attrs["basis"] == "projected"


@pytest.mark.slow
def test_plots_from_a_netcdf_roundtrip_show_what_the_estimate_shows(result, tmp_path):
    est, real, ds = result
    from matplotlib.colors import to_rgba

    def arr(values):
        return np.asarray(np.ma.filled(np.ma.asarray(values, dtype=float), np.nan), dtype=float)

    def drawn(ax):
        """Everything a reader sees on ``ax``: texts, limits, ticks and each artist's data."""
        ax.figure.canvas.draw()  # fixes ticks and tick labels
        patches = [p for p in ax.patches if p.get_visible()]
        return {
            "labels": (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()),
            "scales": (ax.get_xscale(), ax.get_yscale()),
            "limits": arr([*ax.get_xlim(), *ax.get_ylim()]),
            "ticks": (
                arr(ax.get_xticks()),
                arr(ax.get_yticks()),
                [t.get_text() for t in ax.get_xticklabels()],
                [t.get_text() for t in ax.get_yticklabels()],
            ),
            "legend": None if ax.get_legend() is None else [t.get_text() for t in ax.get_legend().get_texts()],
            "children": sorted(type(c).__name__ for c in ax.get_children()),
            "lines": [
                (
                    ln.get_label(),
                    arr(ln.get_xdata()),
                    arr(ln.get_ydata()),
                    ln.get_marker(),
                    ln.get_linestyle(),
                    to_rgba(ln.get_color()),
                )
                for ln in ax.get_lines()
            ],
            "collections": [
                (
                    type(c).__name__,
                    c.get_label(),
                    arr(c.get_offsets()),
                    [arr(p.vertices) for p in c.get_paths()],
                    None if c.get_array() is None else arr(c.get_array()),
                )
                for c in ax.collections
            ],
            "patches": [(type(p).__name__, p.get_label(), arr(p.get_bbox().bounds)) for p in patches],
            "texts": [(t.get_text(), arr(t.get_position())) for t in ax.texts],
            "containers": [(type(c).__name__, c.get_label(), len(c)) for c in ax.containers],
            "images": [arr(im.get_array()) for im in ax.get_images()],
        }

    def flatten(obj):
        """Nested tuples, lists and dicts as one flat list of leaves (arrays are leaves)."""
        if isinstance(obj, dict):
            return [leaf for k in sorted(obj) for leaf in [k, *flatten(obj[k])]]
        if isinstance(obj, (list, tuple)):
            return [leaf for item in obj for leaf in flatten(item)] + [len(obj)]
        return [obj]

    def assert_same_picture(a, b, where):
        assert a.keys() == b.keys()
        for key in a:
            got, want = a[key], b[key]
            flat_got, flat_want = flatten(got), flatten(want)
            assert len(flat_got) == len(flat_want), (where, key)
            for x, y in zip(flat_got, flat_want):
                if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
                    np.testing.assert_array_equal(x, y, err_msg=f"{where}: {key}")
                else:
                    assert x == y, (where, key, x, y)

    def roundtrip(dataset, name):
        path = tmp_path / name
        write_netcdf(dataset, path)
        with xr.open_dataset(path) as back:
            return back.load()

    alone = roundtrip(est.to_dataset(), "alone.nc")
    with_naive = roundtrip(ds, "with_naive.nc")
    fns = (
        plotting.plot_stability_curve,
        plotting.plot_selection_counts,
        plotting.plot_cost,
        plotting.plot_fixed_point,
        plotting.plot_calibration,
    )
    for fn in fns:
        # The estimate alone, and read back from its netCDF file: the same picture.
        want = fn(est)
        _labelled(want)
        assert_same_picture(drawn(fn(alone)), drawn(want), f"{fn.__name__}, estimate alone")
        # With the naive check, given beside the estimate (the curve) or stored with it (the
        # rest), and read back: the same picture.
        want = fn(est, real=real) if fn is plotting.plot_stability_curve else fn(ds)
        assert_same_picture(drawn(fn(with_naive)), drawn(want), f"{fn.__name__}, with the naive check")
        plt.close("all")
    # The pictures draw the estimate's own numbers (a round-trip of nothing would pass the above),
    # in shared features (the answer's units).
    from ensstab_dask.indices import shared_features

    def shared(values):
        return shared_features(np.asarray(values), "jaccard", est.n_feature, est.n_target)

    ax = plotting.plot_stability_curve(with_naive)
    curve = [ln for ln in ax.get_lines() if "(simulator u=" in ln.get_label()][0]
    np.testing.assert_array_equal(curve.get_xdata(), list(M))
    np.testing.assert_array_equal(curve.get_ydata(), shared(est.curve["stability"].values))
    naive = [c for c in ax.containers if c.get_label().startswith("naive")][0]
    np.testing.assert_array_equal(naive.lines[0].get_ydata(), shared(real["stability"].values))


def test_sweep_curves(sweep_ds):
    ax = plotting.plot_stability_curve(sweep_ds, n_useful=20, p=[0.5, 1.0])
    _labelled(ax)
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), sweep_ds["stability"].sel(n_useful=20, p=1.0))


def test_clear_errors(result, sweep_ds):
    with pytest.raises(ValueError, match="needs real_stability and n_useful"):
        plotting.plot_calibration(sweep_ds)
    with pytest.raises(ValueError, match="plot_selection_counts needs an estimate"):
        plotting.plot_selection_counts(sweep_ds)
    with pytest.raises(TypeError, match="expected a sweep Dataset, an Estimate"):
        plotting.plot_cost([1, 2])
    no_cal = result[2].drop_vars([v for v in result[2] if v.startswith("calibration_")])
    with pytest.raises(ValueError, match="calibrate=True"):
        plotting.plot_calibration(no_cal)
    # The same estimate with its surfaces draws.
    assert plotting.plot_calibration(result[2]).get_title().startswith("Calibration")


def _images(index) -> list[bytes]:
    text = index.read_text()
    return [base64.b64decode(b) for b in re.findall(r"src='data:image/png;base64,([^']+)'", text)]


def test_report_is_self_contained_and_never_clobbers(result, tmp_path):
    _, _, ds = result
    out = tmp_path / "report"
    index = write_report(ds, out)
    pngs = sorted(out.glob("*.png"))
    assert [p.stem for p in pngs] == sorted(
        ["calibration", "fixed_point", "stability_curve", "feature_frequency", "stability_path"]
        + ["selection_counts", "cost"]
    )
    embedded = _images(index)
    assert sorted(embedded) == sorted(p.read_bytes() for p in pngs)  # every picture inside the page
    text = index.read_text()
    assert not re.search(r"(src|href)=['\"](?!data:)", text)  # nothing to fetch
    assert f"{ds.attrs['p']:.4f}" in text and "within 2 SE" in text
    # An existing report is not touched without overwrite, and replaced whole with it.
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not empty"):
        write_report(ds, out)
    assert (out / "notes.txt").read_text() == "mine"
    # overwrite=True replaces a report, never a folder holding more than one: notes.txt is the user's.
    with pytest.raises(ValueError, match="not a report"):
        write_report(ds, out, overwrite=True)
    assert (out / "notes.txt").read_text() == "mine"
    (out / "notes.txt").unlink()
    (out / "index.html").write_text("an older report")
    write_report(ds, out, overwrite=True)
    assert (out / "index.html").read_text() != "an older report"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_report_of_a_sweep(sweep_ds, tmp_path):
    index = write_report(sweep_ds, tmp_path / "a")
    assert sorted(p.stem for p in index.parent.glob("*.png")) == ["fixed_point", "stability_curve", "surface"]
    index = write_report(sweep_ds, tmp_path / "b", real_stability=0.3, n_useful=15, n_runs=6)
    assert "calibration" in {p.stem for p in index.parent.glob("*.png")}


@pytest.mark.slow
def test_report_cli(result, tmp_path):
    path = tmp_path / "e.nc"
    write_netcdf(result[2], path)
    cli = [sys.executable, "-m", "ensstab_dask.cli", "report", str(path), "-o", str(tmp_path / "r")]
    run = subprocess.run(cli, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "7 pictures" in run.stdout  # feature_frequency and stability_path among them (the self-check copies)
    again = subprocess.run(cli, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    missing = subprocess.run(
        cli[:4] + [str(tmp_path / "nope.nc"), "-o", str(tmp_path / "x")], capture_output=True, text=True, timeout=300
    )
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_naive_check_must_match_the_estimate(result):
    est, real, _ = result
    with pytest.raises(ValueError, match=r"m_ensemble: \[1, 3, 6\] in the estimate, \[1, 3\] in the naive check"):
        est.to_dataset(real.isel(m_ensemble=[0, 1]))
    with pytest.raises(ValueError, match="index: jaccard in the estimate, dice in the naive check"):
        est.to_dataset(real.assign_attrs(index="dice"))


def test_report_of_a_default_sweep_and_unknown_standard_errors(result, tmp_path):
    # A default sweep has n_runs = m_ensemble: the fixed point uses its largest n_runs.
    ds = tiny_sweep([10, 30], [0.5, 1.0], [1, 3])
    index = write_report(ds, tmp_path / "s")
    assert (index.parent / "fixed_point.png").exists()
    # Standard errors that cannot be computed are reported as such, not as a miss.
    est, real, _ = result
    est_ds = est.to_dataset(real.assign(stability_se=real["stability_se"] * np.nan))
    text = write_report(est_ds, tmp_path / "e").read_text()
    verdict = "<td data-label='within 2 SE (combined)'>"
    assert f"{verdict}n/a (SE 0 or unknown)</td>" in text and "outside 2 SE" not in text
    assert f"{verdict}within 2 SE</td>" not in text


def _verdicts(index) -> dict[int, str]:
    """The report's verdict per ensemble size: the last cell of each row of its curve table."""
    table = index.read_text().split("<h2>Predicted stability by ensemble size</h2>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td data-label='m_ensemble'>(\d+)</td>.*?<td[^>]*>([^<]*)</td></tr>", table)
    return {int(m): said for m, said in rows}


def test_the_report_gives_the_verdict_of_compare(result, tmp_path):
    """One verdict per size, compare()'s: with the combined SE, not the naive check's alone.

    The naive values sit 1.5 combined SE from the prediction, with an SE a quarter of the
    prediction's: more than 2 of the naive SE away (the old report said "no"), within 2
    combined SE (compare() says within)."""
    from ensstab_dask.estimates.validation.comparison import compare

    est, real, _ = result
    pred, pred_se = est.predicted(), est.curve_se()
    sizes = [int(m) for m in real["m_ensemble"].values]
    se = np.array([pred_se[m] / 4 for m in sizes])
    value = np.array([pred[m] + 1.5 * np.hypot(pred_se[m], s) for m, s in zip(sizes, se)])
    near = real.assign(stability=("m_ensemble", value), stability_se=("m_ensemble", se))
    rows = compare(est, near)
    assert all(
        rows[m]["within_2se"] and abs(rows[m]["predicted"] - rows[m]["real"]) > 2 * rows[m]["real_se"] for m in sizes
    )
    said = _verdicts(write_report(est.to_dataset(near), tmp_path / "near"))
    assert said == {m: "within 2 SE" for m in sizes}
    # And the other way: 3 combined SE off is outside, whatever the naive SE alone would say.
    far = near.assign(stability=("m_ensemble", [pred[m] + 3 * np.hypot(pred_se[m], s) for m, s in zip(sizes, se)]))
    said = _verdicts(write_report(est.to_dataset(far), tmp_path / "far"))
    assert said == {m: "outside 2 SE" for m in sizes} and not any(r["within_2se"] for r in compare(est, far).values())


def test_report_cli_on_a_file_that_is_not_netcdf(tmp_path):
    bogus = tmp_path / "x.nc"
    bogus.write_text("not netcdf")
    run = subprocess.run(
        [sys.executable, "-m", "ensstab_dask.cli", "report", str(bogus), "-o", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "not a netCDF file" in run.stderr
    assert not (tmp_path / "r").exists()


def test_every_result_says_what_it_is_and_plotting_dispatches_on_it():
    from ensstab_dask.plotting import result_kind

    sweep = tiny_sweep([20, 30], [0.5, 0.9], [1, 3])
    assert sweep.attrs["kind"] == "sweep" and result_kind(sweep) == "sweep"
    data = make_microarray(n_feature=200, n_informative=10, effect=2.0, seed=1)
    naive = es.real_ensemble_stability(
        data.X, data.y, 5, m_ensemble=[1, 2], m_stability=3, selector=es.default_selector(5), client="synchronous"
    )
    assert naive.attrs["kind"] == "naive_check"
    # A sweep's variables under another kind are not taken for a sweep.
    assert result_kind(sweep.assign_attrs(kind="naive_check")) == "naive_check"
    with pytest.raises((TypeError, ValueError)):
        plotting.plot_calibration(sweep.assign_attrs(kind="naive_check"), 0.1, 25, n_runs=3)


def test_an_estimates_report_takes_no_observations_rather_than_dropping_them(result, tmp_path):
    """An estimate draws its own observations: a sweep's are refused, not silently ignored."""
    ds = result[2]
    with pytest.raises(ValueError, match="real_stability is for a sweep's report"):
        write_report(ds, tmp_path / "e", real_stability=0.3, n_useful=30)
    with pytest.raises(ValueError, match="n_runs is for a sweep's report"):
        write_report(ds, tmp_path / "e", n_runs=20)
    assert not (tmp_path / "e").exists()
