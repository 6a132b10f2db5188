"""Selectors without coef_ or feature_importances_: scores_ under "auto" (SelectKBest), and
any other scores through ImportanceSelector's importance_getter, as scikit-learn's
SelectFromModel and RFE take it."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import ensstab_dask as es
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.selectors import ImportanceSelector, describe_selector, make_scorer, real_run


@pytest.fixture(scope="module")
def data():
    return make_microarray(n_samples=40, n_feature=60, n_informative=6, effect=2.5, seed=3)


def test_selectkbest_is_scored_by_its_f_statistics(data):
    scores = make_scorer(SelectKBest(f_classif))(data.X, data.y, np.random.default_rng(0))
    f, _ = f_classif(data.X, data.y)
    np.testing.assert_array_equal(scores, f)  # the whole data: the scorer is handed the resample


def test_a_constant_feature_s_nan_score_ranks_last(data):
    X = data.X.copy()
    X[:, 5] = 1.0  # f_classif: 0/0, NaN (with a RuntimeWarning)
    with pytest.warns(RuntimeWarning):
        ranks = real_run(X, data.y, 5, selector=SelectKBest(f_classif), seed=1)
    assert ranks[5] == X.shape[1]


def test_importance_getter_as_scikit_learn_takes_it(data):
    rng = np.random.default_rng(0)
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    auto = make_scorer(pipe)(data.X, data.y, np.random.default_rng(0))
    path = make_scorer(ImportanceSelector(pipe, "named_steps.logisticregression.coef_"))(data.X, data.y, rng)
    np.testing.assert_array_equal(auto, path)
    # A callable of the fitted estimator; its values made one per feature as SelectFromModel does.
    signed = ImportanceSelector(SelectKBest(f_classif), lambda est: -est.pvalues_)
    scores = make_scorer(signed)(data.X, data.y, rng)
    np.testing.assert_allclose(scores, f_classif(data.X, data.y)[1])
    best = ImportanceSelector(SelectKBest(f_classif), lambda est: 1 - est.pvalues_)
    ranks = real_run(data.X, data.y, 6, selector=best, seed=2)
    assert np.isin(np.flatnonzero(ranks <= 6), data.informative).sum() >= 4  # a strong signal is found


def test_importance_selector_is_a_clonable_seeded_estimator(data):
    from sklearn.ensemble import RandomForestClassifier

    sel = ImportanceSelector(RandomForestClassifier(n_estimators=5), importance_getter="feature_importances_")
    assert "estimator__random_state" in sel.get_params()
    twin = clone(sel).set_params(estimator__random_state=4)
    assert twin.estimator.random_state == 4 and sel.estimator.random_state is None
    a = real_run(data.X, data.y, 5, selector=sel, seed=9)
    np.testing.assert_array_equal(a, real_run(data.X, data.y, 5, selector=sel, seed=9))  # the forest is seeded
    assert describe_selector(sel).startswith("ImportanceSelector(RandomForestClassifier(n_estimators=5)")


def test_a_getter_that_finds_nothing_is_refused_with_the_way_out(data):
    from sklearn.neighbors import KNeighborsClassifier

    with pytest.raises(InvalidParameterError, match=r"KNeighborsClassifier exposes none of coef_.*ImportanceSelector"):
        make_scorer(KNeighborsClassifier())(data.X, data.y, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match=r"importance_getter 'nope_'"):
        make_scorer(ImportanceSelector(SelectKBest(), "nope_"))(data.X, data.y, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match=r"importance_getter <function .*> returned None, not one score"):
        make_scorer(ImportanceSelector(SelectKBest(), lambda est: None))(data.X, data.y, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match=r"importance_getter 'classes_' returned a ndarray of text"):
        y = np.array(["a", "b"])[data.y]
        make_scorer(ImportanceSelector(LogisticRegression(), "classes_"))(data.X, y, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="importance_getter must be 'auto'"):
        make_scorer(ImportanceSelector(SelectKBest(), 3))(data.X, data.y, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="has no parameter 'k'"):
        ImportanceSelector(SelectKBest()).set_params(k=3)


def test_estimate_runs_with_selectkbest(data):
    """What a user runs: the library's estimate with a univariate selector."""
    est = es.estimate(
        data.X,
        data.y,
        6,
        selector=SelectKBest(f_classif),
        m_ensemble=[1, 5],
        n_boot=0,
        client="synchronous",
        progress=False,
        feature_names=data.feature_names,
    )
    counts = est.single.selection_counts
    top = np.argsort(-counts)[:6]
    assert np.isin(top, data.informative).sum() >= 4
    assert "SelectKBest" in est.to_dataset().attrs.get("selector", describe_selector(SelectKBest(f_classif)))


def test_a_nan_score_stays_the_worst_through_importance_selector():
    """A constant feature's F statistic is NaN: the worst score, also once ImportanceSelector
    has turned it into -inf and the scorer reads the wrapper's importances again."""
    import warnings

    from sklearn.feature_selection import SelectKBest, f_classif

    from ensstab_dask import ImportanceSelector
    from ensstab_dask.real.selectors import _feature_importances

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 5)), np.repeat([0, 1], 15)
    X[:, 2] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = ImportanceSelector(SelectKBest(f_classif)).fit(X, y)
    scores = _feature_importances(sel)
    assert scores[2] == -np.inf and np.argmin(scores) == 2


def test_a_pipeline_is_scored_on_its_input_features_and_a_step_that_changes_them_is_refused(data):
    """A scaler and a forest: the forest's importances are the input features' (a tree splits a
    standardised feature where it splits the raw one), so the pipeline's runs are the forest's,
    rank for rank, by "auto" and by scikit-learn's string path alike. A step that mixes, drops
    or adds features, or cannot say what it outputs, is refused before its scores are used."""
    from sklearn.decomposition import PCA
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer

    forest = RandomForestClassifier(n_estimators=20)
    pipe = Pipeline([("scale", StandardScaler()), ("rf", forest)])
    plain = real_run(data.X, data.y, 6, selector=forest, seed=4)
    np.testing.assert_array_equal(real_run(data.X, data.y, 6, selector=pipe, seed=4), plain)
    by_path = ImportanceSelector(pipe, importance_getter="named_steps.rf.feature_importances_")
    np.testing.assert_array_equal(real_run(data.X, data.y, 6, selector=by_path, seed=4), plain)
    one_to_one = Pipeline([("log", FunctionTransformer(np.abs, feature_names_out="one-to-one")), ("rf", forest)])
    real_run(data.X, data.y, 6, selector=one_to_one, seed=4)  # says it keeps the features: scored
    refused = {
        "PCA": (Pipeline([("pca", PCA(10)), ("rf", forest)]), "outputs 10 features other than the 60 it is given"),
        "SelectKBest": (Pipeline([("k", SelectKBest(f_classif, k=10)), ("rf", forest)]), "drops 50 of the 60"),
        "FunctionTransformer": (Pipeline([("f", FunctionTransformer(np.abs)), ("rf", forest)]), "cannot say which"),
    }
    for kind, (bad, said) in refused.items():
        with pytest.raises(InvalidParameterError, match=said) as caught:
            real_run(data.X, data.y, 6, selector=bad, seed=4)
        assert str(caught.value).startswith("selector: the pipeline's step"), kind


def test_an_estimate_runs_with_a_pipeline_selector(data):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline

    pipe = Pipeline([("scale", StandardScaler()), ("rf", RandomForestClassifier(n_estimators=10))])
    est = es.estimate(
        data.X, data.y, 4, selector=pipe, m_ensemble=(1, 5), n_boot=0, client="synchronous", progress=False
    )
    assert est.real_runs == 200 and est.features is not None
    assert np.isin(np.flatnonzero(est.single.selection_counts > est.single.t_uniform), data.informative).any()
