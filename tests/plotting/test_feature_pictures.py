"""The pictures of which features and of the stability over n_target: drawn from an
Estimate, its Datasets or its netCDF file, with the names on the axis, and in the report."""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pytest
import xarray as xr

import ensstab_dask as es
from ensstab_dask import plotting
from ensstab_dask.plotting.pictures import PICTURES, Picture
from ensstab_dask.plotting.report import pictures_for
from ensstab_dask.real.selectors import default_selector

matplotlib.use("Agg")

DATA = es.make_microarray(n_feature=300, n_informative=12, effect=2.0, seed=1)

pytestmark = pytest.mark.slow  # one small estimate (200 forest fits) behind them all


@pytest.fixture(scope="module")
def est():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        return es.estimate(
            DATA.X,
            DATA.y,
            [5, 3, 8],
            selector=default_selector(10),
            m_ensemble=(1, 3, 5, 30),
            n_boot=20,
            client="synchronous",
            progress=False,
            seed=3,
            feature_names=DATA.feature_names,
        )


@pytest.mark.parametrize("source", ["estimate", "dataset", "netcdf"])
def test_the_frequency_picture_names_the_top_features(est, source, tmp_path):
    obj = est
    if source == "dataset":
        obj = est.to_dataset()
    elif source == "netcdf":
        est.to_netcdf(tmp_path / "e.nc")
        obj = xr.open_dataset(tmp_path / "e.nc").load()
    ax = plotting.plot_feature_frequencies(obj, top=12)
    table = est.feature_table()
    assert [t.get_text() for t in ax.get_yticklabels()] == table["name"][:12].tolist()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "3", "5", "20"]
    shown = ax.images[0].get_array()
    np.testing.assert_allclose(shown[:, -1], table["frequency_m20"][:12])


@pytest.mark.parametrize("source", ["estimate", "netcdf"])
def test_the_surface_picture_has_a_line_per_n_target(est, source, tmp_path):
    obj = est
    if source == "netcdf":
        est.to_netcdf(tmp_path / "e.nc")
        obj = xr.open_dataset(tmp_path / "e.nc").load()
    ax = plotting.plot_stability_surface(obj)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [label.split(" (")[0] for label in labels] == ["top 3", "top 5", "top 8"]
    reliable = est.surface["reliable"].values
    assert [("not reliable" in label) for label in labels] == [not r for r in reliable]
    for line, k in zip(ax.get_lines(), (3, 5, 8)):
        np.testing.assert_array_equal(line.get_ydata(), est.surface["stability"].sel(n_target=k).values)


def test_the_report_shows_both_pictures_with_their_words(est, tmp_path):
    ds = est.to_dataset()
    names = pictures_for(ds)
    assert "feature_frequency" in names and "stability_surface" in names
    index = plotting.write_report(est, tmp_path / "report")
    page = index.read_text()
    assert (tmp_path / "report" / "feature_frequency.png").is_file()
    assert (tmp_path / "report" / "stability_surface.png").is_file()
    for name in ("feature_frequency", "stability_surface"):
        assert PICTURES["estimate"][name].title in page and f"{name}.png" in page
    assert "Kept on at least 90% of reruns" in page  # the plain answer, with its feature line


def test_without_a_surface_there_is_no_surface_picture_and_the_features_stay(est):
    ds = est.to_dataset().drop_vars([v for v in est.to_dataset().data_vars if v.startswith("surface_")])
    assert "stability_surface" not in pictures_for(ds) and "feature_frequency" in pictures_for(ds)
    ds.attrs["has_curve"] = 0  # pure noise: no curve, and the features all the same
    assert "feature_frequency" in pictures_for(ds) and "stability_curve" not in pictures_for(ds)
    with pytest.raises(ValueError, match="expected an Estimate asked for several n_target"):
        plotting.plot_stability_surface(ds)


@pytest.mark.parametrize("source", ["estimate", "netcdf"])
def test_the_stability_path_draws_each_top_feature_and_the_cutoff(est, source, tmp_path):
    from ensstab_dask.plotting.features import plot_stability_path

    obj = est
    if source == "netcdf":
        est.to_netcdf(tmp_path / "e.nc")
        obj = xr.open_dataset(tmp_path / "e.nc").load()
    ax = plot_stability_path(obj, top=6)
    table = est.feature_table()
    lines = ax.get_lines()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [*table["name"][:6], "cutoff 0.90"]
    for line, (_, row) in zip(lines[:6], table.head(6).iterrows()):
        np.testing.assert_array_equal(line.get_xdata(), [1, 3, 5, 20])  # the measured sizes only
        np.testing.assert_allclose(line.get_ydata(), [row[f"frequency_m{m}"] for m in (1, 3, 5, 20)])
    np.testing.assert_array_equal(lines[6].get_ydata(), [0.9, 0.9])  # the cutoff the features were kept at
    assert plot_stability_path(est, cutoff=0.7).get_lines()[-1].get_ydata()[0] == 0.7


def test_a_toy_picture_registered_in_one_place_is_drawn_and_explained(est, tmp_path, monkeypatch):
    def draw(ds, ax, seen):
        ax.plot(ds["m_ensemble"].values, ds["stability"].values)

    def applies(ds, seen):
        return "stability" in ds

    toy = Picture("toy", "A toy picture", "The curve of the top {n_target} features, once more.", draw, applies)
    monkeypatch.setitem(PICTURES["estimate"], "toy", toy)
    assert pictures_for(est.to_dataset())[-1] == "toy"
    page = plotting.write_report(est, tmp_path / "report").read_text()
    assert (tmp_path / "report" / "toy.png").is_file()
    assert "A toy picture" in page and f"The curve of the top {est.n_target} features, once more." in page
