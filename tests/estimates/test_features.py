"""Which features: selection frequencies over the real ensemble copies, their intervals, the
table, the bound on features of no signal (and the bound checked on pure noise)."""

import warnings

import numpy as np
import pytest
from scipy import stats

import ensstab_dask as es
from ensstab_dask.aggregation import copy_ensembles
from ensstab_dask.estimates.stages.features import (
    FREQUENT,
    check_feature_memory,
    false_stable_bound,
    feature_bytes,
    feature_names_of,
    feature_table,
    measured_sizes,
    selection_frequencies,
    stable_features,
)
from ensstab_dask.real.selectors import default_selector
from ensstab_dask.settings import EstimateSettings
from ensstab_dask.simulator.kernel import simulate_rankings


def _copies(G: int, B: int, n_feature: int = 60, seed: int = 0) -> np.ndarray:
    """G copies of B simulated weak selectors (ranks 1..n_feature), 10 useful features."""
    return simulate_rankings(n_feature, 5, 10, 0.8, size=G * B, seed=seed).reshape(G, B, n_feature)


@pytest.mark.parametrize("G, B", [(10, 20), (3, 7), (13, 4), (25, 30)])
def test_any_number_of_copies_and_members(G, B):
    """The table is read from the copies' shape: each ensemble keeps exactly n_target
    features, so each size's frequencies sum to n_target, in steps of 1/G."""
    ranks = _copies(G, B)
    sizes = measured_sizes((1, 5, 10, 20, 30, 50), B)
    assert sizes[0] == 1 and sizes[-1] == B and all(m <= B for m in sizes)
    ds = selection_frequencies(ranks, 5, sizes, seed=1)
    assert ds["frequency"].dims == ("feature", "m_measured") and ds.attrs["copies"] == G
    np.testing.assert_allclose(ds["frequency"].sum("feature").values, 5.0)
    np.testing.assert_array_equal(ds["count"].values, np.rint(ds["frequency"].values * G))
    assert ds["count"].max() <= G
    np.testing.assert_allclose(ds["mean_rank"].values, ranks.reshape(G * B, -1).mean(axis=0))


def test_the_counts_are_the_copies_ensembles_and_the_intervals_clopper_pearsons():
    ranks = _copies(10, 20)
    ds = selection_frequencies(ranks, 5, [20], seed=7, confidence=0.9)
    top = copy_ensembles(ranks, 5, 20, es.make_rng(7))  # the same draws
    # At m = B each copy's ensemble is all of its members: the 5 smallest sums of ranks.
    untied = 0
    for c in range(10):
        sums = np.sort(ranks[c].sum(axis=0))
        if sums[4] < sums[5]:  # no tie at the cut to break at random
            untied += 1
            assert set(top[c]) == set(np.argsort(ranks[c].sum(axis=0))[:5])
    assert untied >= 5
    expected = np.bincount(top.ravel(), minlength=60)
    np.testing.assert_array_equal(ds["count"].values[:, 0], expected)
    for c in np.unique(expected):
        ci = stats.binomtest(int(c), 10).proportion_ci(confidence_level=0.9, method="exact")
        row = ds.isel(feature=int(np.flatnonzero(expected == c)[0]), m_measured=0)
        assert float(row["frequency_lower"]) == pytest.approx(ci.low, abs=1e-12)
        assert float(row["frequency_upper"]) == pytest.approx(ci.high, abs=1e-12)


def test_the_table_is_sorted_named_and_complete():
    ranks = _copies(10, 20)
    names = [f"gene{i}" for i in range(60)]
    ds = selection_frequencies(ranks, 5, [1, 5, 20], seed=2, names=names)
    table = feature_table(ds)
    assert list(table.columns[:6]) == ["name", "feature", "frequency_m1", "frequency_m5", "frequency_m20", "mean_rank"]
    assert {"frequency_m20_lower", "frequency_m20_upper", "frequency_m1_lower"} <= set(table.columns)
    assert len(table) == 60 and sorted(table["feature"]) == list(range(60))
    assert table["name"].tolist() == [names[i] for i in table["feature"]]
    top = table["frequency_m20"].to_numpy()
    assert np.all(np.diff(top) <= 0)  # most often kept first
    ties = table[table["frequency_m20"] == top[-1]]["mean_rank"].to_numpy()
    assert np.all(np.diff(ties) >= 0)  # then by mean rank
    # The simulated selector's useful features are its first 10: they lead the table.
    assert set(table["feature"][:5]) <= set(range(10))


def test_names_are_checked_and_default_to_scikit_learns():
    assert feature_names_of(None, 3).tolist() == ["x0", "x1", "x2"]
    assert feature_names_of(np.array([1, 2, 3]), 3).tolist() == ["1", "2", "3"]
    with pytest.raises(ValueError, match=r"feature_names must hold one name per feature of X \(3\)"):
        feature_names_of(["a", "b"], 3)


def test_the_bound_is_meinshausen_buhlmanns_plus_the_copies_binomial_error():
    # The formula, evaluated independently at a few t, is never below the bound (the bound is its minimum).
    q, p, G = 20, 2000, 10
    bound = false_stable_bound(q, p, G, 0.9)
    for t in (0.55, 0.6, 0.7, 0.9):
        pi = np.linspace(1e-4, t, 20001)
        value = q * q / ((2 * t - 1) * p) + q * (stats.binom.sf(8, G, pi) / pi).max()
        assert bound <= value + 1e-9
    assert bound == pytest.approx(2.47, abs=0.01)  # the figure docs/method.md section 17.2 quotes
    assert false_stable_bound(20, 500, 10) == pytest.approx(5.23, abs=0.01)
    # More copies: the binomial term shrinks towards Meinshausen and Buhlmann's own 0.25.
    more = [false_stable_bound(q, p, g, 0.9) for g in (10, 20, 50, 100, 1000)]
    assert np.all(np.diff(more) < 0) and 0.25 < more[-1] < 0.3
    assert np.isnan(false_stable_bound(q, p, G, 0.5))  # no such bound at 1/2 or below


def test_a_feature_table_that_would_not_fit_is_refused_before_any_run():
    """The table's memory against half this machine's, with a problem the simulator's own
    cell check lets through."""
    import psutil

    total = psutil.virtual_memory().total
    n_feature = total // 6000  # the simulator's cells need about 2,200 bytes a feature here, the table 3,900
    settings = EstimateSettings(n_feature=n_feature, n_target=20)
    assert feature_bytes(n_feature, 10, 20, 5) > total // 2
    with pytest.raises(ValueError, match=r"the feature table \(n_feature=\d+, 10 copies of 20, 4 sizes\) would need"):
        check_feature_memory(settings)
    check_feature_memory(EstimateSettings(n_feature=2000, n_target=20))  # the default problem fits


def test_an_estimate_carries_its_features_named_after_a_dataframes_columns():
    pd = pytest.importorskip("pandas")
    data = es.make_microarray(n_feature=120, n_informative=8, effect=3.0, seed=1)
    X = pd.DataFrame(data.X, columns=[f"probe_{i}" for i in range(120)])
    calls = []

    def forest(X, y, rng):
        calls.append(1)
        return default_selector(5).set_params(random_state=int(rng.integers(2**31))).fit(X, y).feature_importances_

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        est = es.estimate(
            X, data.y, 4, selector=forest, m_ensemble=(1, 5, 30), n_boot=0, client="synchronous", progress=False, seed=2
        )
    assert len(calls) == est.real_runs == 200  # the model's copies, and no run more
    ds = est.features
    assert ds["m_measured"].values.tolist() == [1, 5, 20]  # measured sizes: up to B = 20, and B
    assert ds["feature_name"].values.tolist() == list(X.columns)
    table = est.feature_table()
    assert table["name"].iloc[0].startswith("probe_") and table["feature"].iloc[0] in data.informative
    d = est.to_dict()
    assert len(d["features"]) == 100 and d["features"][0]["name"] == table["name"].iloc[0]
    assert d["stable_features"]["threshold"] == FREQUENT and d["stable_features"]["m_ensemble"] == 20
    assert d["stable_features"]["names"] == table["name"][table["frequency_m20"] >= FREQUENT].tolist()
    assert "Kept on at least 90% of reruns (9 or more of 10 real ensembles of 20" in est.summary()
    with pytest.raises(ValueError, match="feature_names must hold one name per feature"):
        es.estimate(data.X, data.y, 4, feature_names=["a"], client="synchronous", progress=False)


@pytest.mark.slow
def test_on_pure_noise_no_feature_is_frequent_and_the_bound_holds_over_20_seeds():
    """60 samples x 500 features of noise, a random forest (3 trees, for time), the default
    model's copies: at the largest measured size no feature reaches 0.6 in any of 20
    studies, and the mean count at each threshold is within false_stable_bound. The table
    and its line come whatever the verdict."""
    thresholds = (0.6, 0.7, 0.8, 0.9)
    counts, top = np.zeros((20, len(thresholds))), []
    for seed in range(20):
        rng = np.random.default_rng(1000 + seed)
        X, y = rng.standard_normal((60, 500)), np.repeat([0, 1], 30)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
            est = es.estimate(
                X, y, 20, selector=default_selector(3), n_boot=0, client="synchronous", progress=False, seed=seed
            )
        freq = est.features["frequency"].values[:, -1]
        top.append(freq.max())
        counts[seed] = [(freq >= t - 1e-12).sum() for t in thresholds]
        said = est.summary()
        assert "Kept on at least 90% of reruns" in said and ": none; the most often kept" in said
        assert stable_features(est.features)["names"] == []
    assert max(top) < 0.6, top
    bounds = [false_stable_bound(20, 500, 10, t) for t in thresholds]
    assert np.all(counts.mean(axis=0) <= bounds), (counts.mean(axis=0), bounds)
