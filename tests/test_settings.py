"""The estimate's settings (ensstab_dask.settings): one frozen object, checked once against
its table of constraints, recorded as the Estimate's settings; and the stage keys."""

import dataclasses

import numpy as np
import pytest

from ensstab_dask.seeding import Stage, Stream, derive
from ensstab_dask.settings import EstimateSettings, Int, Options, validate_params

PROBLEM = dict(n_feature=300, n_target=10)


def test_every_field_has_one_constraint_checked_in_the_estimates_order():
    names = [f.name for f in dataclasses.fields(EstimateSettings)]
    assert list(EstimateSettings._parameter_constraints) == names
    # The order of the checks (the first bad value is the one named) is the estimate's.
    assert names[2:] == ["m_ensemble", "m_stability", "n_runs", "repeats", "p_method", "verify", "calibrate",
                         "calibration_layout", "member_resample", "n_boot", "confidence", "aggregate", "index",
                         "resample", "seed", "selector", "model", "precision", "max_real_runs"]  # fmt: skip


def test_values_are_normalised_once_and_frozen():
    s = EstimateSettings(**PROBLEM, m_ensemble=[5, 1], seed=np.random.SeedSequence(4), n_boot=np.int64(20))
    assert s.m_ensemble == (1, 5) and s.m_list == [1, 5] and s.n_runs == 5  # n_runs=None: max(m_ensemble)
    assert s.seed == 4 and type(s.n_boot) is int
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.n_runs = 3
    assert EstimateSettings(**PROBLEM, m_ensemble=[1, 3], n_runs=7).n_runs == 7


def test_to_dict_is_what_an_estimate_records():
    s = EstimateSettings(**PROBLEM, resample=0.5, model="onda")
    assert list(s.to_dict()) == ["m_stability", "n_runs", "repeats", "p_method", "aggregate", "index", "resample",
                                 "calibration_layout", "member_resample", "n_boot", "confidence", "seed",
                                 "selector", "model"]  # fmt: skip
    assert s.to_dict()["resample"] == "0.5" and s.to_dict()["calibration_layout"] == "ensemble"
    # A model without the paper's single-selector runs, nor a simulator, records neither their layout and
    # resamples nor p's fit: it used none of them.
    assert list(EstimateSettings(**PROBLEM, model="anchored").to_dict()) == [
        "m_stability", "n_runs", "repeats", "aggregate", "index", "n_boot", "confidence", "seed", "selector", "model",
        "precision", "max_real_runs",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(m_stability=1), ValueError, "m_stability must be >= 2; got 1"),
        (dict(n_runs=0), ValueError, "n_runs must be >= 1; got 0"),
        (dict(verify="no"), TypeError, "verify must be True or False; got 'no'"),
        (dict(n_boot=5), ValueError, "n_boot must be 0 (no bootstrap) or in [20, 10000] for a percentile interval"),
        (dict(confidence=1.0), ValueError, "confidence must be in (0.0, 1.0); got 1.0"),
        (dict(model="three-level"), ValueError, "model must be one of "),
        (dict(n_target=300), ValueError, "n_target must be < n_feature=300; got 300"),
        (dict(calibrate=True, model="anchored"), ValueError, "calibrate=True calibrates the paper's simulator"),
        (dict(index="nogueira", model="anchored"), ValueError, "index 'nogueira' is not a mean over pairs of copies"),
    ],
)
def test_each_refusal_names_its_parameter(kwargs, error, message):
    with pytest.raises(error) as info:
        EstimateSettings(**dict(PROBLEM, **kwargs))
    assert str(info.value).startswith(message)


def test_validate_params_checks_in_order_and_fills_derived_defaults():
    table = {"a": Int(minimum=1), "b": Int(minimum=1), "how": Options(("x", "y"))}
    got = validate_params(table, {"a": np.int32(2), "b": None, "how": "x"}, {"b": lambda done: 3 * done["a"]})
    assert got == {"a": 2, "b": 6, "how": "x"}
    with pytest.raises(ValueError, match="a must be >= 1"):
        validate_params(table, {"a": 0, "b": 0, "how": "z"})


def test_the_stage_keys_keep_their_values():
    names = ["T_UNIFORM", "REAL", "POOL", "P", "VERIFY", "PREDICT", "CALIBRATE", "MEMBER_RUNS", "BOOT", "BOOT_P",
             "BOOT_CURVE", "POWER", "T_BOOT", "COPIES", "H", "H_BOUNDS", "RANDOM_EFFECTS", "CHECK_COPIES", "CHECK",
             "MEASURED", "FEATURES"]  # fmt: skip
    assert [(s.name, int(s)) for s in Stage] == [(name, i) for i, name in enumerate(names)]
    assert derive(3, Stream.ESTIMATE, Stage.CHECK, 1).spawn_key == (9, 18, 1)


def test_n_runs_beyond_the_copies_runs_is_refused_not_ignored():
    """The default model counts t_uniform and A[f] on its 200 copy runs: an n_runs above
    that is refused by name; left to its default, it is the 200 there are."""
    with pytest.raises(ValueError, match="n_runs must be at most 200 with model='anchored'.*got 1000000"):
        EstimateSettings(n_feature=500, n_target=10, n_runs=1_000_000)
    assert EstimateSettings(n_feature=500, n_target=10, m_ensemble=(1, 500)).n_runs == 200
    assert EstimateSettings(n_feature=500, n_target=10, m_ensemble=(1, 500), model="onda").n_runs == 500
