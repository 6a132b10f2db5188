"""Regression targets: detection and refusals, quantile-stratified resamples, the
regressor as the default selector, and the estimate, the naive check, validate and the
CLI end to end on a continuous label."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ensstab_dask as es
from ensstab_dask.cli import main
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import check_data, load_dataset
from ensstab_dask.real.selectors import default_selector, resample_indices, selector_for
from ensstab_dask.real.targets import strata, task_of
from ensstab_dask.seeding import make_rng

pd = pytest.importorskip("pandas")


def _study(n_samples: int = 40, n_feature: int = 60, seed: int = 0):
    """y a noisy sum of the first 5 features: a regression target with fractions."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_feature))
    y = X[:, :5].sum(axis=1) + 0.5 * rng.standard_normal(n_samples)
    return X, y


def test_auto_reads_fractions_as_regression_and_whole_numbers_as_classes():
    X, y = _study()
    assert check_data(X, y)[1].dtype == np.float64
    assert task_of(check_data(X, y)[1]) == "regression"
    labels = check_data(X, np.repeat([1.0, 2.0], 20))[1]
    assert labels.dtype == np.int64 and task_of(labels) == "classification"
    counts = np.arange(40) % 7
    assert task_of(check_data(X, counts, task="regression")[1]) == "regression"
    assert task_of(check_data(X, counts)[1]) == "classification"


@pytest.mark.parametrize(
    ("y", "task", "says"),
    [
        (np.repeat([0, 1], 20), "regression", "only 2 values"),
        (np.repeat(["a", "b", "c", "d"], 10), "regression", "must be numeric"),
        (np.linspace(0, 1, 40), "classification", "fractions"),
        (np.r_[np.nan, np.linspace(0, 1, 39)], "auto", "y contains NaN"),
        (np.r_[np.nan, np.linspace(0, 1, 39)], "regression", "y contains NaN"),
        (np.linspace(0, 1, 40), "lasso", "task must be one of"),
        (np.arange(40) % 20 * 1.0, "auto", "20 distinct whole numbers as floats: .* pass task='regression'"),
        (np.arange(40), "auto", "40 distinct whole numbers as integers: .* pass task='regression'"),
        (np.repeat([0.5, 1.5], 20), "regression", "recode them as whole numbers or text"),
    ],
)
def test_what_cannot_be_a_target_is_refused_in_one_line(y, task, says):
    X, _ = _study()
    with pytest.raises(InvalidParameterError, match=says) as info:
        check_data(X, y, task=task)
    assert "\n" not in str(info.value)


def test_quantile_bins_hold_equal_counts_and_each_half_takes_half_of_each():
    _, y = _study(n_samples=40)
    bins = strata(y)
    assert np.bincount(bins).tolist() == [10, 10, 10, 10]
    assert np.all(np.diff(bins[np.argsort(y)]) >= 0)  # bins follow the order of y
    for seed in range(5):
        half = resample_indices(y, "half", make_rng(seed))
        assert np.bincount(bins[half], minlength=4).tolist() == [5, 5, 5, 5]
    assert np.array_equal(strata(np.repeat([3, 1], 20)), np.repeat([3, 1], 20))  # class labels as they are
    assert np.unique(strata(y[:15])).tolist() == [0]  # too few samples for two bins of 10: none


def test_a_classifier_for_a_target_and_a_regressor_for_classes_are_refused():
    _, y = _study()
    assert type(selector_for(None, y)).__name__ == "RandomForestRegressor"
    assert selector_for(None, np.repeat([0, 1], 20)) is None  # the default forest, as before
    with pytest.raises(InvalidParameterError, match="RandomForestClassifier is a classifier, but y is a regression"):
        selector_for(default_selector(5), y)
    with pytest.raises(InvalidParameterError, match="is a regressor, but y is a classification"):
        selector_for(default_selector(5, task="regression"), np.repeat([0, 1], 20))
    with pytest.raises(InvalidParameterError, match="prediction_accuracy|fractions"):
        es.prediction_accuracy(*_study(), 3, client="synchronous")


def test_estimate_on_a_target_ranks_its_signal_and_records_the_regressor(two_process_client):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 80))
    y = X[:, :2].sum(axis=1) + 0.3 * rng.standard_normal(60)
    est = es.estimate(
        X,
        y,
        5,
        selector=default_selector(50, task="regression"),
        m_ensemble=(1, 5, 20),
        client=two_process_client,
        progress=False,
    )
    assert "RandomForestRegressor" in est.to_dict()["settings"]["selector"]
    ranks = est.features["mean_rank"].values
    assert set(np.argsort(ranks)[:2]) == {0, 1}  # the two features y is made of, first of 80
    assert ranks[:2].max() < 0.7 * np.sort(ranks)[2]
    assert 0 < est.predicted()[20] <= 1


def test_validate_and_the_naive_check_run_on_a_target():
    X, y = _study(n_samples=40, n_feature=50)
    val = es.validate(
        X,
        y,
        5,
        selector=default_selector(5, task="regression"),
        m_ensemble=(1, 5),
        m_stability=6,
        n_boot=0,
        client="synchronous",
        progress=False,
    )
    assert "RandomForestRegressor" in val.naive.attrs["selector"]
    assert sorted(val.per_m) == [1, 5]


def _write_csv(tmp_path, y) -> str:
    X, _ = _study(n_samples=len(y), n_feature=60)
    frame = pd.DataFrame(X, columns=[f"g{i}" for i in range(X.shape[1])])
    frame.insert(0, "y", y)
    path = tmp_path / "reg.csv"
    frame.to_csv(path, index=False)
    return str(path)


def test_cli_estimates_a_continuous_label_end_to_end(tmp_path, capsys):
    _, y = _study()
    path = _write_csv(tmp_path, y)
    out = tmp_path / "est.json"
    argv = ["estimate", "--data", path, "--label", "y", "--n-target", "5", "--n-estimators", "5"]
    argv += ["--m-ensemble", "1,5", "--n-boot", "0", "--scheduler", "synchronous", "--quiet", "--json", str(out)]
    assert main(argv) == 0
    assert "y a continuous target from" in capsys.readouterr().out
    record = json.loads(out.read_text())
    assert record["target"]["task"] == "regression" and "classes" not in record
    assert "RandomForestRegressor" in record["settings"]["selector"]
    assert np.isclose(record["target"]["median"], np.median(y))


@pytest.mark.parametrize(
    ("label", "extra", "says"),
    [
        ("two", ["--task", "regression"], "only 2 values"),
        ("y", ["--selector", "logistic"], "selector 'logistic' serves classification only"),
        ("y", ["--classes", "1,2"], "--classes selects classes"),
    ],
)
def test_cli_refuses_what_a_target_cannot_do_in_one_line(tmp_path, capsys, label, extra, says):
    _, y = _study()
    path = _write_csv(tmp_path, y)
    frame = pd.read_csv(path)
    frame.insert(1, "two", np.repeat([0, 1], 20))
    frame.to_csv(path, index=False)
    argv = ["estimate", "--data", path, "--label", label, "--n-estimators", "5", "--scheduler", "synchronous"]
    assert main([*argv, "--n-target", "5", *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_csv_of_more_samples_than_features_takes_a_target_when_told(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.standard_normal((30, 4)), columns=list("abcd"))
    frame.insert(0, "y", rng.standard_normal(30))
    path = tmp_path / "long.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InvalidParameterError, match="task='regression'"):
        load_dataset(path, label="y")
    assert task_of(load_dataset(path, label="y", task="regression").y) == "regression"


def test_a_checked_target_of_whole_numbers_is_never_read_as_classes_again():
    """A count target checked as regression and given anew: refused under auto, asking which,
    and a regression with a regressor as selector (which reads it as its target)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 40))
    y = X[:, :2].sum(axis=1) + 0.3 * rng.standard_normal(60)
    counts = check_data(X, np.round(4 * (y - y.min())), task="regression")[1]  # whole numbers, from the signal
    assert counts.dtype == np.float64
    with pytest.raises(InvalidParameterError, match="distinct whole numbers"):
        es.estimate(X, counts, 5, client="synchronous", progress=False)
    kw = dict(m_ensemble=(1, 5), n_boot=0, client="synchronous", progress=False)
    est = es.estimate(X, counts, 5, selector=default_selector(20, task="regression"), **kw)
    assert est.has_curve
    val = es.validate(X, counts, 5, selector=default_selector(20, task="regression"), m_stability=5, **kw)
    assert est.predicted() == val.estimate.predicted()
    assert "RandomForestRegressor" in val.naive.attrs["selector"]


@pytest.mark.parametrize("scale", [1e-9, 1e-300, 1e-310, 1e300])
def test_a_targets_units_do_not_change_what_the_selector_finds(scale):
    """In mol/L (y x 1e-9) the forest's impurities once fell below scikit-learn's epsilon
    (every importance 0: the ranking was the tie-break's); at y x 1e300 they overflowed
    into NaN. In standard units the signal is found at any scale."""
    from ensstab_dask.real.selectors import real_run

    X, y = _study(n_samples=60, n_feature=50)
    selector = default_selector(50, task="regression")
    ranks = np.array([real_run(X, y * scale, 5, selector=selector, seed=s, task="regression") for s in range(4)])
    # Chance (the tie-break's ranking, as once at 1e-9) puts them at a mean rank of 25.5 of 50,
    # with a standard deviation of 3.2 over these 20 ranks.
    assert ranks[:, :5].mean() < 16, ranks[:, :5]


def test_a_target_scaled_by_a_power_of_two_gives_the_same_runs_bit_for_bit():
    from ensstab_dask.real.selectors import real_run
    from ensstab_dask.real.targets import standardized

    X, y = _study()
    selector = default_selector(20, task="regression")
    base = real_run(X, y, 5, selector=selector, seed=3, task="regression")
    for scale in (2.0**-40, 2.0**60):
        np.testing.assert_array_equal(real_run(X, y * scale, 5, selector=selector, seed=3, task="regression"), base)
    z = standardized(y * 1e-310)
    assert abs(z.mean()) < 1e-12 and abs(z.std() - 1) < 1e-12
