"""``StableFeatureSelector``: the estimate's stable features as a scikit-learn selector."""

import numpy as np
import pytest
from shared_runs import copy_runs
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import ensstab_dask as es
from ensstab_dask.estimates.stages.features import stable_features

DEFAULT = es.make_microarray(seed=0)  # the embedded default study


@pytest.fixture(scope="module")
def fitted(tmp_path_factory, default_study_runs):
    """In a Pipeline on the embedded default, with the default forest (300 trees), as users
    run it, from a copy of the session's cache of those 200 runs (tests/shared_runs.py): the
    selection is tested here, not the runs."""
    stable = es.StableFeatureSelector(20, cache_dir=str(copy_runs(default_study_runs, tmp_path_factory.mktemp("runs"))))
    model = make_pipeline(stable, LogisticRegression(max_iter=1000)).fit(DEFAULT.X, DEFAULT.y)
    return stable, model


def test_in_a_pipeline_it_keeps_the_estimate_s_stable_features(fitted):
    stable, model = fitted
    kept = stable_features(stable.estimate_.features)["names"]
    names = stable.estimate_.features["feature_name"].values
    assert sorted(names[stable.get_support()]) == sorted(kept) and len(kept) >= 5
    # Every one a planted informative feature, as the README says of the same answer.
    assert set(np.flatnonzero(stable.get_support())) <= set(DEFAULT.informative.tolist())
    assert model[-1].coef_.shape == (1, len(kept))
    assert stable.transform(DEFAULT.X).shape == (len(DEFAULT.X), len(kept))
    np.testing.assert_array_equal(stable.frequencies_ >= 0.9, stable.get_support())


def test_the_same_data_and_seed_keep_the_same_features_and_a_refit_reuses_its_runs(fitted, tmp_path):
    stable, _ = fitted
    again = clone(stable).fit(DEFAULT.X, DEFAULT.y)
    np.testing.assert_array_equal(again.get_support(), stable.get_support())
    assert again.estimate_.cost.runs.reused == 200 and again.estimate_.cost.runs.made == 0


def test_column_names_are_kept_and_bad_settings_refused():
    pd = pytest.importorskip("pandas")
    small = es.make_microarray(n_feature=120, n_informative=8, effect=3.0, seed=1)
    frame = pd.DataFrame(small.X, columns=[f"gene{i}" for i in range(120)])
    stable = es.StableFeatureSelector(4, m_ensemble=10, cutoff=0.6, selector=es.default_selector(5))
    with pytest.raises(NotFittedError):
        stable.get_support()
    stable.fit(frame, small.y)
    assert list(stable.feature_names_in_) == list(frame.columns)
    assert set(stable.get_feature_names_out()) <= set(frame.columns)
    with pytest.raises(es.InvalidParameterError, match=r"m_ensemble: 30 is not a size the copies measure"):
        es.StableFeatureSelector(4, m_ensemble=30, selector=es.default_selector(5)).fit(small.X, small.y)
    with pytest.raises(es.InvalidParameterError, match=r"settings: cutoff, seed are this selector's own parameters"):
        es.StableFeatureSelector(4, settings={"seed": 1, "cutoff": 0.8}).fit(small.X, small.y)
    # Another setting of the estimate travels as it is: twenty copies measure each frequency.
    twenty = es.StableFeatureSelector(
        4, m_ensemble=10, cutoff=0.6, selector=es.default_selector(5), settings={"copies": 20}
    ).fit(small.X, small.y)
    assert twenty.estimate_.features.attrs["copies"] == 20


#: scikit-learn's checks, at sizes they can run (3-tree forests, 4 copies of 4 members, no
#: bootstrap): 48 checks of a selector's contract, each fit an estimate.
CHECKED = es.StableFeatureSelector(
    1, m_ensemble=4, cutoff=0.75, selector=es.default_selector(3), settings={"copies": 4, "members": 4, "n_boot": 0}
)
#: The one check that does not apply, and why.
NOT_APPLYING = {
    "check_dtype_object": "X of text is refused in the package's own words ('X must be a dense numeric (n_samples, "
    "n_feature) array; it holds text'), not numpy's ('argument must be a string or a number')",
}


@parametrize_with_checks([CHECKED], expected_failed_checks=lambda estimator: NOT_APPLYING)
def test_scikit_learns_checks(estimator, check):
    check(estimator)
