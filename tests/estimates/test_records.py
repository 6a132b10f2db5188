"""The Estimate's records: a dozen fields a reader can name, and a JSON without the parts a
model did not compute."""

import dataclasses
import json
import math
import warnings

import pytest

import ensstab_dask as es
from ensstab_dask.estimates.records.parts import parts
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.selectors import default_selector

DATA = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
TINY = dict(m_ensemble=(1, 3), m_stability=5, n_runs=10, repeats=2, n_boot=20, client="synchronous", progress=False)


@pytest.fixture(scope="module")
def estimates():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        return {
            model: es.estimate(DATA.X, DATA.y, 3, selector=default_selector(5), model=model, **TINY)
            for model in ("anchored", "onda")
        }


def _empty(d: dict, where: str = "") -> list[str]:
    """The keys, at any depth of nested dicts, whose value is null or NaN."""
    out = []
    for k, v in d.items():
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(where + k)
        elif isinstance(v, dict):
            out += _empty(v, f"{where}{k}.")
    return out


def test_an_estimate_holds_its_records_and_nothing_else():
    """An estimate is its records, each a concept of its own (a new one is a decision, said
    here): the problem, the settings, and what each stage found."""
    assert [f.name for f in dataclasses.fields(es.Estimate)] == [
        "n_feature",
        "n_target",
        "settings",
        "single",
        "prediction",
        "verdict",
        "cost",
        "fit",
        "self_check",
        "features",
        "accuracy",
        "surface",
        "spending",
    ]


def test_a_default_model_json_has_nothing_its_model_did_not_compute(estimates):
    """Every key is a number the model computed: no row of nulls for the simulator's fit,
    the two-level model's h, the intervals it has none of, the rounds or the surface
    nobody asked for. (The settings record what the user passed, unset ones as null.)"""
    est = estimates["anchored"]
    d = est.to_dict()
    assert _empty({k: v for k, v in d.items() if k != "settings"}) == []
    assert est.fit is None and est.spending is None and est.surface is None
    assert not {"p", "n_useful_v", "fixed_point_holds", "calibrated", "h", "p_interval", "spending", "surface"} & set(d)
    # What the docs show is there.
    assert {"reliable", "warnings", "notes", "confidence", "curve", "curve_interval", "features"} <= set(d)
    json.dumps(d, allow_nan=False)
    ds = est.to_dataset()
    assert "none" not in [v for k, v in ds.attrs.items() if k not in est.settings]


@pytest.mark.parametrize("model", ["anchored", "onda"])
def test_no_attr_is_none_or_of_a_simulator_that_did_not_run(estimates, model):
    """An absent attribute is a value not computed: no 'none' strings, settings included
    (precision and max_real_runs are None by default), and the simulator's parameters only
    where a simulator ran."""
    est = estimates[model]
    unset = [k for k, v in est.settings.items() if v is None]
    assert model != "anchored" or {"precision", "max_real_runs"} <= set(unset)
    ds = est.to_dataset()
    assert [k for k, v in ds.attrs.items() if isinstance(v, str) and v == "none"] == []
    assert not set(unset) & set(ds.attrs)
    simulator = sorted(k for k in ds.attrs if k.startswith("simulator_"))
    if model == "anchored":
        assert simulator == [] and ds.attrs["simulator"] == 0 and ds.attrs["model"] == "anchored"
    else:
        assert simulator == ["simulator_n_useful", "simulator_p"]
        assert (ds.attrs["simulator_n_useful"], ds.attrs["simulator_p"]) == (est.single.n_useful, est.fit.p)


def test_json_attrs_leave_out_what_is_none():
    from ensstab_dask.outputs import json_attrs

    out = json_attrs({"a": None, "b": {"x": 1, "y": None}, "c": True, "d": [1, None]})
    assert set(out) == {"b_x", "c", "d"} and out["c"] == 1
    assert math.isnan(out["d"][1])


def test_every_coordinate_carries_its_attrs_and_keeps_them_on_disk(estimates, tmp_path):
    """Each dimension of the Dataset is a coordinate with a long_name (and units where the
    values have them), from the one table, also after a netCDF round trip."""
    import xarray as xr

    from ensstab_dask.estimates.records.parts import COORD_ATTRS

    est = estimates["anchored"]
    ds = est.to_dataset()
    assert set(ds.sizes) <= set(ds.coords)
    assert {"m_ensemble", "feature", "feature_name", "m_measured", "boot", "repeat"} <= set(ds.coords)
    for name in ds.coords:
        assert ds[name].attrs == COORD_ATTRS[name], name
        assert ds[name].attrs.get("units") != "1", name
    assert ds["m_measured"].attrs["units"] == "selectors" and "units" not in ds["feature_name"].attrs
    est.to_netcdf(tmp_path / "e.nc")
    with xr.open_dataset(tmp_path / "e.nc") as back:
        assert {n: back[n].attrs for n in back.coords} == {n: ds[n].attrs for n in ds.coords}


def test_the_features_are_over_feature_and_m_measured(estimates):
    """The Dataset's feature frequencies are feature_* over (feature, m_measured), named by
    feature_name."""
    est = estimates["anchored"]
    ds = est.to_dataset()
    assert ds["feature_frequency"].dims == ("feature", "m_measured")
    assert ds["feature_name"].dims == ("feature",) and "name" not in ds.variables


def test_a_simulator_estimate_keeps_its_fit(estimates):
    est = estimates["onda"]
    d = est.to_dict()
    assert est.fit is not None and d["p"] == est.fit.p and d["n_useful_v"] == est.fit.n_useful_v
    assert d["fixed_point_holds"] == est.fit.fixed_point_holds and "calibrated" not in d  # calibrate=False
    assert est.to_dataset().attrs["p"] == est.fit.p


@pytest.mark.parametrize("model", ["anchored", "onda"])
def test_the_json_and_the_dataset_are_the_records_parts(estimates, model):
    est = estimates[model]
    own = {"n_feature", "n_target", "settings", "version", "stability_one_selector", "paper_stability"}
    keys = [k for part in parts(est) for k in part.to_dict()]
    assert len(keys) == len(set(keys)), "two parts write the same key"
    assert set(est.to_dict()) == own | set(keys)
    ds = est.to_dataset()
    assert ds.attrs["reliable"] == int(est.reliable) and ds.attrs["real_runs"] == est.real_runs
    assert (ds["selection_counts"].values == est.single.selection_counts).all()


def test_the_features_and_the_dataset_share_dimension_and_coordinate_names(estimates):
    """est.features and est.to_dataset() name the features' dimensions and coordinates alike:
    (feature, m_measured), named by feature_name; the table's columns are its sizes."""
    est = estimates["anchored"]
    ds, f = est.to_dataset(), est.features
    assert f["frequency"].dims == ds["feature_frequency"].dims == ("feature", "m_measured")
    assert f["feature_name"].values.tolist() == ds["feature_name"].values.tolist()
    assert f["m_measured"].values.tolist() == ds["m_measured"].values.tolist()
    sizes = [int(c.removeprefix("frequency_m")) for c in est.feature_table().columns if c[-1].isdigit()]
    assert sizes == f["m_measured"].values.tolist()
