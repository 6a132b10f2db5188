"""The Estimate's records: a dozen fields a reader can name, and a JSON without the parts a
model did not compute."""

import dataclasses
import json
import math
import warnings

import pytest

import ensstab_dask as es
from ensstab_dask.estimates.records import parts
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


def test_an_estimate_holds_at_most_a_dozen_fields():
    assert len(dataclasses.fields(es.Estimate)) <= 12


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


def test_a_simulator_estimate_keeps_its_fit(estimates):
    est = estimates["onda"]
    d = est.to_dict()
    assert est.fit is not None and d["p"] == est.fit.p and d["n_useful_v"] == est.fit.n_useful_v
    assert d["fixed_point_holds"] == est.fit.fixed_point_holds and "calibrated" not in d  # calibrate=False
    assert est.to_dataset().attrs["p"] == est.fit.p


@pytest.mark.parametrize("model", ["anchored", "onda"])
def test_the_json_and_the_dataset_are_the_records_parts(estimates, model):
    est = estimates[model]
    own = {"n_feature", "n_target", "settings", "version"}
    keys = [k for part in parts(est) for k in part.to_dict()]
    assert len(keys) == len(set(keys)), "two parts write the same key"
    assert set(est.to_dict()) == own | set(keys)
    ds = est.to_dataset()
    assert ds.attrs["reliable"] == int(est.reliable) and ds.attrs["real_runs"] == est.real_runs
    assert (ds["selection_counts"].values == est.single.selection_counts).all()
