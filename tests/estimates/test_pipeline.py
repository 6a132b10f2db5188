"""The whole estimate (Algorithm 1), the naive real check and `ensstab estimate`."""

import json
import os
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from small_problem import DATA, SMALL

from ensstab_dask.cli import main as cli_main
from ensstab_dask.estimates.records.spending import Cost
from ensstab_dask.estimates.stages.pipeline import estimate
from ensstab_dask.exceptions import UnreliableEstimateWarning
from ensstab_dask.real.accuracy import prediction_accuracy
from ensstab_dask.real.datasets import make_microarray, reference_dataset
from ensstab_dask.real.naive import real_ensemble_stability
from ensstab_dask.real.selectors import default_selector

DATA_DIR = os.environ.get("ENSSTAB_DATA_DIR")


#: Keys every estimate's JSON has, whatever its model.
JSON_KEYS = ("n_feature", "n_target", "t_uniform", "n_useful", "stability_one_selector", "paper_stability", "reliable")


@pytest.fixture(scope="module")
def est():
    return estimate(DATA.X, DATA.y, 10, client="synchronous", **SMALL)


def test_estimate_fields(est):
    # The default layout: n_runs on halves, m_stability in the members' layout; 10 copies of 4 for the self-check.
    assert est.real_runs == 24 + 12 + 10 * 4
    assert est.n_target == 10 and est.n_feature == 300
    assert len(est.single.n_useful_draws) == 4
    # 15 informative features shifted by 2 sd: n_useful finds them (its bootstrap SE here
    # is about 0.7, so 4 SE is 3 features), unclamped, and the features counted are they.
    assert abs(est.single.n_useful - 15) <= 3 and est.single.n_useful == round(est.single.n_useful_mean)
    useful = np.flatnonzero(est.single.selection_counts > est.single.t_uniform)
    assert np.isin(useful, DATA.informative).mean() >= 0.8 and np.isin(DATA.informative, useful).mean() >= 0.8
    assert 0 < est.single.real_stability <= 1
    assert est.single.real_nogueira.lower <= est.single.real_nogueira.stability <= est.single.real_nogueira.upper
    # A selector the simulator models: p inside its range, a fixed point that holds and could have failed.
    assert 0 < est.fit.p < 1 and not est.fit.p_fit.at_boundary
    assert est.fit.fixed_point_holds is True and est.fit.fixed_point_power is True
    # Every single-selector guard rail passes, yet 20-tree forests make ensembles far less
    # stable than the simulator's (measured on the 10 check copies: z = +3.6 at m = 4): the
    # self-check alone says so, names the sizes, and widens the interval.
    chk = est.self_check
    assert (chk.copies, chk.members, chk.sizes) == (10, 4, (2, 3, 4)) and not chk.passed and chk.excess > 0
    assert est.has_curve and not est.reliable and est.warnings == [chk.warning()]
    assert "m = 4: predicted" in chk.warning() and "z = +" in chk.warning()
    assert list(est.curve["m_ensemble"].values) == [1, 3]
    assert set(est.curve.data_vars) >= {"stability", "stability_std", "stability_lower", "stability_upper"}
    assert est.cost.simulated_runs > est.real_runs
    assert set(est.cost.seconds) >= {"real_runs", "p", "verify", "predict", "bootstrap"}
    # With m_ensemble = 1 the prediction must reproduce the stability p was fitted to,
    # within the Monte-Carlo spread of both.
    assert abs(est.predicted()[1] - est.single.real_stability) < 0.1
    for name in ("n_useful", "real_stability", "p", "t_uniform"):
        lo, hi = est.prediction.intervals[name]
        assert lo <= hi, name
    assert (
        est.prediction.intervals["real_stability"][0]
        <= est.single.real_stability
        <= est.prediction.intervals["real_stability"][1]
    )
    for m, (lo, hi) in est.curve_interval().items():
        assert 0 <= lo <= hi <= 1, m
    d = est.to_dict()
    assert {*JSON_KEYS, "p", "n_useful_v"} <= set(d)
    # The paper's model: one selector's stability is the real runs' own, the measure p is fitted to.
    assert d["paper_stability"]["value"] == d["stability_one_selector"]["value"] == est.single.real_stability
    assert d["confidence"] == 0.95 and d["n_boot"] == 50
    assert set(d["curve"]) == set(d["curve_interval"]) == {"1", "3"}
    assert len(d["n_useful_interval"]) == len(d["p_interval"]) == 2
    assert "NOT a validated prediction" in est.summary() and "95% interval" in est.summary()
    assert "widened by the self-check's error" in est.summary() and "Self-check FAILED" in est.summary()
    assert d["self_check"]["passed"] is False and d["self_check"]["sizes"] == [2, 3, 4]
    json.dumps(d)  # JSON-able as it is


def test_paper_layout_without_bootstrap_is_the_same_wherever_it_runs(two_process_client):
    """calibration_layout='paper' with n_boot=0 is the paper's method as it was before the
    bootstrap and the guard rails: one pool of runs on random halves, no intervals. Its
    result depends on the seed alone, bit for bit, not on where the runs and simulations
    execute; and it hits what it is fitted to."""
    from ensstab_dask.simulator.kernel import simulated_stability

    kw = dict(SMALL, n_boot=0, calibration_layout="paper")
    e = estimate(DATA.X, DATA.y, 10, client="synchronous", **kw)
    # The same seed in 2 worker processes over TCP: every number identical.
    d = estimate(DATA.X, DATA.y, 10, client=two_process_client, **kw)
    assert (d.fit.p, d.single.n_useful, d.single.real_stability) == (
        e.fit.p,
        e.single.n_useful,
        e.single.real_stability,
    )
    assert (d.single.t_uniform, d.single.n_useful_mean) == (e.single.t_uniform, e.single.n_useful_mean)
    np.testing.assert_array_equal(d.single.n_useful_draws, e.single.n_useful_draws, strict=True)
    np.testing.assert_array_equal(d.single.t_uniform_draws, e.single.t_uniform_draws, strict=True)
    xr.testing.assert_identical(d.curve, e.curve)
    a, b = e.to_dict(), d.to_dict()
    for key in Cost.HOW_IT_RAN:
        a.pop(key), b.pop(key)
    assert a == b
    # The paper's layout: one pool of max(m_stability, n_runs) = 24 runs on halves (the
    # default layout adds 12 more in the members' layout), plus the self-check's 10 x 4.
    assert e.real_runs == 24 + 10 * 4 and e.settings["calibration_layout"] == "paper"
    # n_boot = 0: no intervals at all.
    assert e.prediction.intervals == {} and e.curve_interval() == {} and "stability_lower" not in e.curve
    # With m_ensemble = 1 the curve is the single simulated selector at (n_useful, p), and p
    # was fitted to make that equal the real stability: they agree within the Monte-Carlo
    # noise of the curve (repeats x m_stability copies) and of the fit (as many copies).
    assert e.has_curve
    se = float(e.curve["stability_std"].sel(m_ensemble=1)) / np.sqrt(SMALL["repeats"])
    assert abs(e.predicted()[1] - e.single.real_stability) <= 4 * np.sqrt(2) * se
    # And so does an independent simulation at the fitted (n_useful, p), on streams the
    # estimate never used: 20 replicates of m_stability copies.
    ind = np.array(
        [simulated_stability(300, 10, e.single.n_useful, e.fit.p, m_stability=12, seed=10_000 + r) for r in range(20)]
    )
    se_ind = np.sqrt(ind.var(ddof=1) / len(ind) + se**2)
    assert abs(ind.mean() - e.single.real_stability) <= 4 * se_ind


def test_estimate_is_reproducible_and_the_same_on_a_cluster(est, two_process_client):
    again = estimate(DATA.X, DATA.y, 10, client=two_process_client, **SMALL)
    a, b = est.to_dict(), again.to_dict()
    for key in Cost.HOW_IT_RAN:
        a.pop(key), b.pop(key)
    assert a == b


def test_calibration_finds_the_selectors_cell_or_says_there_is_none():
    from oracle import literal_ranking

    def simulated_17_07(X, y, rng):
        # The paper's simulated weak selector at (u = 17, p = 0.7), literally (docs/method.md
        # section 2): 17 and 0.7 both lie on the calibration grid built around A[f] = 17.
        return -np.asarray(literal_ranking(X.shape[1], 10, 17, 0.7, rng), dtype=float)

    def one_of_two_sets(X, y, rng):
        # Features 0-9 or 10-19, each with probability 1/2: A[f] = 20 (each is picked in
        # about half the runs) at a stability of at least 0.45 (with 12 runs, at least 30 of
        # the 66 pairs agree exactly). The simulator cannot do both: the only u of the grid
        # within 2 of 20 is 21, at most about 0.31 stable even at p = 1, and the next one
        # down, 17, is counted at 17 features or fewer.
        s = np.zeros(X.shape[1])
        s[(0 if rng.random() < 0.5 else 10) + np.arange(10)] = 1.0
        return s

    kw = dict(SMALL, n_boot=0)
    # A selector the simulator models exactly: the intersection is not empty, calibration
    # lands on (or next to) its own cell, and the curve is simulated there, not at the
    # uncalibrated (n_useful, p) (which differ at this seed: p is fitted, not on the grid).
    e = estimate(DATA.X, DATA.y, 10, client="synchronous", calibrate=True, **dict(kw, selector=simulated_17_07))
    assert "calibrate" in e.cost.seconds
    cal = e.fit.calibration
    assert cal.attrs["any_consistent"] == 1 and e.fit.calibrated is not None
    assert e.fit.calibrated == (cal.attrs["best_n_useful"], cal.attrs["best_p"])
    assert bool(cal["consistent"].sel(n_useful=e.fit.calibrated[0], p=e.fit.calibrated[1]))
    assert e.fit.calibrated[0] == 17 and abs(e.fit.calibrated[1] - 0.7) <= 0.1 + 1e-9, e.fit.calibrated
    assert (e.curve.attrs["simulator_n_useful"], e.curve.attrs["simulator_p"]) == e.fit.calibrated
    assert e.fit.calibrated != (e.single.n_useful, e.fit.p)
    assert not any("calibration grid" in w for w in e.warnings)
    assert f"n_useful = {e.curve.attrs['simulator_n_useful']}," in e.summary()
    ds = e.to_dataset()
    assert ds.attrs["simulator_n_useful"] == e.fit.calibrated[0] and ds.attrs["n_useful"] == e.single.n_useful
    # A selector no (u, p) of the simulator matches on both statistics: said so, and the
    # curve uses the uncalibrated (u, p).
    with pytest.warns(UnreliableEstimateWarning, match="calibration grid has no .u, p. consistent"):
        e = estimate(DATA.X, DATA.y, 10, client="synchronous", calibrate=True, **dict(kw, selector=one_of_two_sets))
    assert e.single.n_useful == 20 and e.single.real_stability >= 0.45
    cal = e.fit.calibration
    assert cal.attrs["any_consistent"] == 0 and not bool(cal["consistent"].any()) and e.fit.calibrated is None
    assert (e.curve.attrs["simulator_n_useful"], e.curve.attrs["simulator_p"]) == (e.single.n_useful, e.fit.p)
    assert any("calibration grid has no (u, p) consistent" in w for w in e.warnings) and not e.reliable
    assert f"n_useful = {e.single.n_useful}," in e.summary()


def test_saturated_threshold_is_reported():
    # n_runs = 2: t_uniform reaches n_runs, so nothing can be counted above it.
    with pytest.warns(UnreliableEstimateWarning, match="t_uniform reached n_runs = 2"):
        e = estimate(DATA.X, DATA.y, 10, client="synchronous", **dict(SMALL, n_runs=2, repeats=20))
    assert e.single.threshold_saturated > 0 and "increase n_runs" in e.summary()
    assert not e.reliable and not e.has_curve and np.isnan(e.curve["stability"]).all()
    assert e.to_dict()["curve"] is None


def test_estimate_netcdf_round_trip(est, tmp_path):
    path = est.to_netcdf(tmp_path / "e.nc")
    ds = xr.open_dataset(path).load()
    np.testing.assert_array_equal(ds["stability"].values, est.curve["stability"].values)
    assert ds.attrs["n_useful"] == est.single.n_useful and ds.attrs["p"] == est.fit.p
    assert ds.attrs["reliable"] == int(est.reliable) and ds.attrs["confidence"] == 0.95
    np.testing.assert_array_equal(ds.attrs["p_interval"], est.prediction.intervals["p"])
    np.testing.assert_array_equal(ds["stability_lower"].values, est.curve["stability_lower"].values)
    assert ds.sizes["boot"] == 50 and {"n_useful_boot", "p_boot", "stability_boot"} <= set(ds.data_vars)
    with pytest.raises(ValueError, match="exists"):
        est.to_netcdf(tmp_path / "e.nc")


def test_estimated_n_useful_finds_the_informative_features():
    data = make_microarray(n_feature=400, n_informative=20, effect=2.5, seed=0)
    e = estimate(data.X, data.y, 10, client="synchronous", **dict(SMALL, m_ensemble=(1, 12)))
    # A strong signal: n_useful should be close to the 20 informative features.
    assert 12 <= e.single.n_useful_mean <= 30, e.single.n_useful_mean
    useful = np.flatnonzero(e.single.selection_counts > e.single.t_uniform)
    assert np.isin(useful, data.informative).mean() > 0.7


def test_real_ensemble_stability(two_process_client):
    kw = dict(selector=default_selector(10), m_ensemble=(1, 2, 4), m_stability=4, seed=2)
    ds = real_ensemble_stability(DATA.X, DATA.y, 10, client="synchronous", **kw)
    assert list(ds["m_ensemble"].values) == [1, 2, 4]
    assert ds.attrs["real_runs"] == 16 and ds.attrs["layout"] == "bagging" and ds.attrs["modelled_by_simulator"] == 1
    # The features each copy selected are kept, and the SE is the U-statistic's of them:
    # Hoeffding's variance, each zeta estimated from its definition by enumerating distinct
    # copies (the jackknife where that estimate is not positive).
    from oracle import literal_jackknife_se, literal_u_statistic_variance

    from ensstab_dask.indices import stability, stability_se
    from ensstab_dask.simulator.kernel import simulate_ensembles

    assert ds["selected"].shape == (3, 4, 10)
    for i in range(3):
        chosen = ds["selected"].values[i]
        assert ds["stability"].values[i] == pytest.approx(stability(chosen, 300))
        var = literal_u_statistic_variance(chosen)
        want = np.sqrt(var) if var > 0 else literal_jackknife_se(chosen)
        assert ds["stability_se"].values[i] == pytest.approx(want, rel=1e-9)
    # And that SE is the real spread: over 400 independent experiments of 16 ensembles of
    # 3 simulated selectors, the mean squared SE matches the variance of the stability
    # within 4 standard errors of their difference. The band is under 0.4 of the variance:
    # the jackknife, which overstates the variance by about 1.4 here, would fail it.
    R, U = 400, 16
    stab, var = np.empty(R), np.empty(R)
    for r in range(R):
        sub = simulate_ensembles(300, 10, 40, 0.5, m_ensemble=3, size=U, seed=r)
        stab[r], var[r] = stability(sub, 300), stability_se(sub, 300) ** 2
    diff = var - (stab - stab.mean()) ** 2 * R / (R - 1)
    band = 4 * diff.std(ddof=1) / np.sqrt(R)
    assert abs(diff.mean()) <= band < 0.4 * stab.var(ddof=1), (var.mean(), stab.var(ddof=1), band)
    assert ((ds.nogueira_lower <= ds.nogueira) & (ds.nogueira <= ds.nogueira_upper)).all()
    assert ((0 <= ds.stability) & (ds.stability <= 1)).all()
    dist = real_ensemble_stability(DATA.X, DATA.y, 10, client=two_process_client, batch_size=3, **kw)
    np.testing.assert_array_equal(ds["stability"].values, dist["stability"].values)
    ind = real_ensemble_stability(DATA.X, DATA.y, 10, client="synchronous", layout="independent", **kw)
    assert ind.attrs["modelled_by_simulator"] == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(m_ensemble=()), "m_ensemble must hold at least one"),
        (dict(repeats=1), "repeats must be >= 2"),
        (dict(p_method="newton"), "p_method must be one of"),
        (dict(resample="thirds"), "resample must be"),
        (dict(seed=-3), "seed must be in .0, 9223372036854775807."),
        (dict(n_boot=5), r"n_boot must be 0 .no bootstrap. or in \[20, 10000\]"),
        (dict(n_boot=10**8), r"n_boot must be 0 .no bootstrap. or in \[20, 10000\].*got 100000000"),
        (dict(n_boot=-1), "n_boot must be >= 0"),
        (dict(confidence=1.0), "confidence must be in"),
        (dict(calibration_layout="halves"), "calibration_layout must be one of"),
        (dict(member_resample="thirds"), "resample must be one of"),
    ],
)
def test_estimate_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        estimate(DATA.X, DATA.y, 10, client="synchronous", **dict(SMALL, **kwargs))


def test_estimate_refuses_bad_data():
    with pytest.raises(ValueError, match="n_target must be < n_feature=300"):
        estimate(DATA.X, DATA.y, 300, client="synchronous", **SMALL)
    with pytest.raises(ValueError, match="at least 2 classes"):
        estimate(DATA.X, np.zeros(len(DATA.y)), 10, client="synchronous", **SMALL)


@pytest.mark.slow
def test_cli_estimate_json_and_netcdf(tmp_path):
    np.savez(tmp_path / "d.npz", X=DATA.X, y=DATA.y)
    out_json, out_nc = tmp_path / "e.json", tmp_path / "e.nc"
    args = ["estimate", "--data", str(tmp_path / "d.npz"), "--n-target", "10", "--m-stability", "6"]
    args += ["--m-ensemble", "1,2", "--repeats", "3", "--n-estimators", "20", "--scheduler", "synchronous"]
    args += ["--n-runs", "24", "--n-boot", "50"]
    args += ["--json", str(out_json), "--output", str(out_nc), "--validate"]
    assert cli_main(args) == 0
    d = json.loads(out_json.read_text())
    assert {*JSON_KEYS, "curve", "real_runs", "simulated_runs", "seconds", "warnings", "confidence"} <= set(d)
    assert "curve_interval" in d
    # The default model fits no simulator: its keys are not there, rather than null.
    assert not {"p", "n_useful_v", "fixed_point_holds", "n_useful_interval", "p_interval"} & set(d)
    assert d["n_boot"] == 50 and set(d["curve_interval"]) == {"1", "2"}
    assert set(d["curve"]) == {"1", "2"} and set(d["validation"]["curve"]) == {"1", "2"}
    assert d["validation"]["real_runs"] == 12
    ds = xr.open_dataset(out_nc).load()
    # The naive check sits beside the prediction, for the report.
    assert {"stability", "naive_stability", "naive_stability_se", "selection_counts"} <= set(ds.data_vars)
    assert ds.attrs["naive_real_runs"] == 12
    # Existing outputs are not overwritten by accident.
    assert cli_main(args) == 2


def test_cli_estimate_bad_data_file(tmp_path, capsys):
    (tmp_path / "bad.mat").write_bytes(b"junk")
    assert cli_main(["estimate", "--data", str(tmp_path / "bad.mat")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a readable MATLAB" in err[0]


@pytest.mark.skipif(
    not DATA_DIR or not Path(DATA_DIR, "colon.mat").exists(),
    reason="reference datasets not found: set ENSSTAB_DATA_DIR to the folder holding colon.mat",
)
@pytest.mark.parametrize("name, n_target", [("colon", 20), ("lymphoma", 40), ("prostate", 60)])
def test_estimate_on_reference_data_at_reduced_settings(name, n_target):
    data = reference_dataset(name)
    small = dict(SMALL, m_stability=5, n_runs=5, m_ensemble=(1, 3), n_boot=20)
    e = estimate(data.X, data.y, n_target, client="synchronous", **small)
    assert e.n_feature == data.X.shape[1] and e.single.n_useful == max(round(e.single.n_useful_mean), n_target)
    # Below n_target the paper's simulator has no curve (chance, or fewer useful features than asked).
    if round(e.single.n_useful_mean) < n_target:
        assert not e.has_curve and not e.reliable
    # n_runs on halves, m_stability in the members' layout, 10 copies of 4 for the self-check
    assert 0 < e.single.real_stability < 1 and e.real_runs == 5 + 5 + 40


@pytest.mark.slow
def test_prediction_accuracy_on_a_strong_signal(two_process_client):
    from sklearn.ensemble import RandomForestClassifier

    kw = dict(selector=default_selector(20), predictor=RandomForestClassifier(30), seed=0)
    res = prediction_accuracy(DATA.X, DATA.y, 10, client="synchronous", **kw)
    assert res.n_samples == 62 and len(res.predictions) == 62
    assert res.accuracy > 0.8  # 15 features shifted by 2 sd: easy to classify
    same = prediction_accuracy(DATA.X, DATA.y, 10, client=two_process_client, **kw)
    assert np.array_equal(res.predictions, same.predictions)
    ens = prediction_accuracy(DATA.X, DATA.y, 10, client="synchronous", m_ensemble=3, **kw)
    # Chance is the majority class (40 of 62): a strong signal beats it by 4 binomial SE.
    chance = np.bincount(DATA.y).max() / len(DATA.y)
    above = chance + 4 * np.sqrt(chance * (1 - chance) / len(DATA.y))
    assert ens.m_ensemble == 3 and ens.accuracy > above and res.accuracy > above


def test_jackknife_error_tracks_the_sampling_error():
    import ensstab_dask as es
    from ensstab_dask.indices import jackknife_std

    # Across 200 independent experiments of 20 runs, the jackknife standard error
    # should match the spread of the stability itself (its SD has ~5 % relative error).
    R, U = 200, 20
    subsets = es.simulate_ensembles(300, 10, 30, 0.6, size=R * U, seed=4).reshape(R, U, 10)
    values = [es.stability(s, 300) for s in subsets]
    jack = [jackknife_std(s, 300) for s in subsets]
    ratio = np.mean(jack) / np.std(values, ddof=1)
    assert 0.75 < ratio < 1.35, ratio
    assert jackknife_std(np.tile(np.arange(10), (5, 1)), 300) == 0


def test_prediction_accuracy_refuses_a_predictor_that_is_not_an_estimator():
    with pytest.raises(TypeError, match="predictor must be a scikit-learn estimator"):
        prediction_accuracy(DATA.X, DATA.y, 10, predictor="rf", client="synchronous")


def test_prediction_accuracy_needs_three_samples_of_every_class():
    y = DATA.y.copy()
    y[np.flatnonzero(y == 1)[:2]] = 2  # a third class of 2 samples
    with pytest.raises(ValueError, match="at least 3 samples of every class .*class 2 has 2"):
        prediction_accuracy(DATA.X, y, 10, client="tcp://127.0.0.1:9")


def test_noise_below_n_target_is_called_chance_and_its_count_printed_as_measured():
    noise = make_microarray(n_feature=300, n_informative=0, seed=3)  # A[f] far below n_target
    with pytest.warns(UnreliableEstimateWarning, match="not distinguishable from chance"):
        e = estimate(noise.X, noise.y, 10, client="synchronous", **SMALL)
    assert round(e.single.n_useful_mean) < 10 and not e.reliable and not e.has_curve
    # One reason: chance. No clamped n_useful, and no advice to ask for fewer features.
    assert len(e.warnings) == 1 and e.notes == []
    assert (
        f"useful features counted (A[f], picked more often than t_uniform): {e.single.n_useful_mean:.1f},"
        in e.summary()
    )


@pytest.mark.parametrize(
    "mean, used, said",
    [(6.2, 10, "to n_target = 10"), (10.4, 10, None), (9.5, 10, None), (312.0, 300, "to n_feature = 300")],
)
def test_caution_reasons_say_when_n_useful_was_clamped(mean, used, said):
    from ensstab_dask.estimates.words.trust import caution_reasons

    kw = dict(n_runs=24, t_draws=np.array([4, 5]), p_fit=None, fixed_point=None, power=None)
    out = caution_reasons(**kw, n_useful=(mean, used))
    assert [w for w in out if "clamped" in w] == ([] if said is None else [w for w in out if said in w])
    assert len(out) == (said is not None) and caution_reasons(**kw) == []


@pytest.mark.parametrize("index", ["jaccard", "dice", "kuncheva"])
def test_every_point_of_the_curve_lies_in_the_index_range(index):
    """Five features shifted by 6 sd: the anchored law, extrapolated to m = 1000, stepped
    past 1 (Jaccard 1.23, above its own interval [0.84, 1.0]); a point is clipped to the
    index's range as its interval is, and so is the self-check's prediction."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 100)), np.repeat([0, 1], 15)
    X[y == 1, :5] += 6.0
    est = estimate(
        X,
        y,
        5,
        selector=default_selector(20),
        m_ensemble=(1, 5, 50, 100, 1000),
        n_boot=50,
        index=index,
        client="synchronous",
    )
    low = -1.0 if index == "kuncheva" else 0.0
    point, lower, upper = (est.curve[v].values for v in ("stability", "stability_lower", "stability_upper"))
    assert np.all((low <= lower) & (lower <= point) & (point <= upper) & (upper <= 1.0)), (point, lower, upper)
    assert point[-1] == 1.0  # the law's point at m = 1000 was above 1: now the index's end
    assert np.all((low <= est.self_check.predicted) & (est.self_check.predicted <= 1.0))
