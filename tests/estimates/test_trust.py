"""Whether the estimate can be trusted: guard rails, the bootstrap's honesty, layouts."""

import json
import re
import warnings

import numpy as np
import pytest
import xarray as xr
from small_problem import DATA, SMALL
from synthetic import single_selector

import ensstab_dask as es
from ensstab_dask.cli import main as cli_main
from ensstab_dask.estimates.records.spending import Cost
from ensstab_dask.estimates.stages.pipeline import (
    assemble_runs,
    estimate,
    estimate_from_runs,
    fixed_point_power,
    pool_sizes,
    real_subsets,
    threshold_draws,
    useful_draws,
)
from ensstab_dask.estimates.words.trust import guard_rails, notes
from ensstab_dask.indices import (
    NogueiraStability,
    index_range,
    jackknife_std,
    pairwise_stability_se,
    stability_of_subsets,
)
from ensstab_dask.models.bootstrap import bootstrap_runs, lagrange_weights, rate_posterior
from ensstab_dask.models.simulator_fit import SimulatorFit
from ensstab_dask.real.datasets import load_dataset, make_microarray
from ensstab_dask.real.selectors import default_selector, resample_indices
from ensstab_dask.seeding import make_rng
from ensstab_dask.simulator.estimators import smaller_n_target
from ensstab_dask.simulator.fixed_point import check_fixed_point
from ensstab_dask.simulator.kernel import top_subsets


def noise(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((62, 300)), rng.permutation(np.repeat([0, 1], 31))


# -- guard rails --------------------------------------------------------------------------


def test_pure_noise_is_not_a_prediction():
    X, y = noise()
    with pytest.warns(es.UnreliableEstimateWarning, match="not distinguishable from chance"):
        e = estimate(X, y, 10, client="synchronous", **SMALL)
    assert not e.reliable and not e.has_curve
    # Chance is the one reason: no "fewer useful features" advice, nothing about a clamped n_useful.
    assert len(e.warnings) == 1 and e.notes == []
    assert np.isnan(e.curve["stability"]).all()
    d = e.to_dict()
    assert d["reliable"] is False and d["curve"] is None and d["curve_interval"] is None and d["warnings"]
    text = e.summary()
    assert "nothing to say" in text and "m_ensemble = " not in text and "1.0000" not in text
    # The answer comes first, in plain words, then the verdict above every number.
    assert text.splitlines()[0] == "Answer: none. The selector's picks are not distinguishable from chance."
    # Which features, whatever the verdict: none is kept on 90 % of the self-check's copies here.
    assert text.splitlines()[1].startswith("  Kept on at least 90% of reruns (9 or more of 10 real ensembles of 4")
    assert text.splitlines()[4].startswith("  reliable: NO")
    json.dumps(d)


@pytest.mark.slow
def test_cli_on_pure_noise_says_so(tmp_path, capsys):
    X, y = noise(1)
    path = tmp_path / "noise.csv"
    header = ",".join([f"g{i}" for i in range(X.shape[1])] + ["label"])
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="")
    out = tmp_path / "noise.json"
    args = ["estimate", "--data", str(path), "--label", "label", "--n-target", "10", "--m-stability", "12"]
    args += ["--n-runs", "24", "--m-ensemble", "1,3", "--repeats", "4", "--n-estimators", "20", "--n-boot", "20"]
    assert cli_main(args + ["--scheduler", "synchronous", "--json", str(out)]) == 0
    shown = capsys.readouterr()
    assert "reliable: NO" in shown.out and "no curve is predicted" in shown.out and "m_ensemble = " not in shown.out
    assert "UnreliableEstimateWarning" not in shown.err  # printed once, in the summary
    d = json.loads(out.read_text())
    assert d["reliable"] is False and d["curve"] is None and d["warnings"]


def ten_informative_csv(path) -> None:
    """60 samples x 500 features, 10 of them shifted by 1.5 in one class: a true signal
    smaller than the default n_target of 20."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((60, 500)), np.repeat([0, 1], 30)
    X[y == 1, :10] += 1.5
    header = ",".join([f"g{i}" for i in range(500)] + ["label"])
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="", fmt="%.6g")


@pytest.mark.slow
def test_a_signal_smaller_than_n_target_is_said_and_still_gets_a_curve(tmp_path, capsys):
    path, out = tmp_path / "ten.csv", tmp_path / "ten.json"
    ten_informative_csv(path)
    # The default model measures real ensembles: a curve, and the count said as a note.
    args = ["estimate", "--data", str(path), "--n-estimators", "50", "--n-boot", "20", "--scheduler", "synchronous"]
    assert cli_main(args + ["--quiet", "--json", str(out)]) == 0
    shown = capsys.readouterr().out
    d = json.loads(out.read_text())
    assert d["curve"] is not None and all(v is not None for v in d["curve"].values())
    assert not any("hardly beats" in w or "chance" in w.split(": ")[0] for w in d["warnings"]), d["warnings"]
    (note,) = d["notes"]
    k, count = advised(note)
    assert count > k and f"fewer than the n_target = 20 it keeps; at n_target = {k} the same runs" in note
    answer = shown.splitlines()[1:]  # after the data line
    assert answer[0].startswith("Answer: two runs of the ensemble") and "an ensemble of 50:" in shown
    assert any(line.startswith("  Note: ") and f"--n-target {k}" in line for line in answer[:12])
    # The count as measured is printed, never the clamped n_target.
    assert f"useful features counted (A[f], picked more often than t_uniform): {d['n_useful_mean']:.1f}" in shown
    # The paper's simulator cannot run below n_target: it says why, and what to do instead.
    data = load_dataset(path)
    with pytest.warns(es.UnreliableEstimateWarning, match="fewer than the n_target = 20"):
        e = es.estimate(data.X, data.y, 20, **dict(SMALL, selector=default_selector(50), model="onda"))
    assert not e.has_curve and e.notes == [] and len(e.warnings) == 1
    first = e.summary().splitlines()[0]
    assert first.startswith("Answer: none. The selector finds about") and "model='anchored'" in first
    # The advice was counted, not guessed: asked for the n_target it names, the same seed
    # counts what it promised, above that n_target, and the simulator has a curve.
    k, count = advised(e.warnings[0])
    assert count > k
    there = es.estimate(data.X, data.y, k, **dict(SMALL, selector=default_selector(50), model="onda"))
    assert f"{there.single.n_useful_mean:.1f}" == f"{count:.1f}" and there.has_curve, there.warnings


def advised(reason: str) -> tuple[int, float]:
    """The n_target a fewer-useful-features reason advises, and the count it promises there."""
    found = re.search(r"at n_target = (\d+) the same runs count ([\d.]+), more than it keeps", reason)
    assert found, reason
    return int(found[1]), float(found[2])


def test_the_advised_n_target_is_counted_on_the_same_runs():
    """:func:`smaller_n_target` returns the largest k whose count, by the pipeline's own
    stages and seeds, exceeds k: checked against a direct count at every k."""
    rng = np.random.default_rng(5)
    n_feature, n_runs = 120, 16
    # 6 features always ranked on top (shuffled among themselves), the rest at random.
    scores = rng.random((n_runs, n_feature))
    scores[:, :6] += 10
    ranks = np.argsort(np.argsort(-scores, axis=1), axis=1) + 1
    t_seed, pool_seed = np.random.SeedSequence(1), np.random.SeedSequence(2)

    def count(k):
        t = threshold_draws(n_feature, k, n_runs, repeats=8, seed=t_seed)
        return useful_draws(top_subsets(ranks, k), n_feature, t, n_runs=n_runs, rng=make_rng(pool_seed)).mean()

    got = smaller_n_target(ranks, n_feature, 10, n_runs=n_runs, repeats=8, t_seed=t_seed, pool_seed=pool_seed)
    assert got is not None
    k, c = got
    assert c == count(k) > k and all(count(j) <= j for j in range(k + 1, 10))
    # Nothing qualifies when every ranking is random.
    noise = np.argsort(rng.random((n_runs, n_feature)), axis=1) + 1
    assert smaller_n_target(noise, n_feature, 3, n_runs=n_runs, repeats=8, t_seed=t_seed, pool_seed=pool_seed) is None


def _noise_cli_args(tmp_path) -> list[str]:
    X, y = noise(1)
    path = tmp_path / "noise.csv"
    header = ",".join([f"g{i}" for i in range(X.shape[1])] + ["label"])
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="")
    return [
        "estimate",
        "--data",
        str(path),
        "--label",
        "label",
        "--n-target",
        "10",
        "--m-stability",
        "12",
        "--n-runs",
        "24",
        "--m-ensemble",
        "1,3",
        "--repeats",
        "4",
        "--n-estimators",
        "20",
        "--n-boot",
        "20",
        "--scheduler",
        "synchronous",
        "--quiet",
    ]


@pytest.mark.slow
def test_the_cli_silences_only_its_own_warnings(tmp_path, monkeypatch, capsys):
    """NumPy's warnings inside an estimate reach the user; the guard rails, which the
    summary prints, are not repeated on stderr."""
    from ensstab_dask.estimates.stages import single as algorithm

    stability_of = algorithm.real_stability_of

    def dividing_by_zero(*args, **kwargs):
        np.log(np.zeros(1))  # NumPy warns: divide by zero
        return stability_of(*args, **kwargs)

    monkeypatch.setattr(algorithm, "real_stability_of", dividing_by_zero)
    with pytest.warns(RuntimeWarning, match="divide by zero") as seen:
        assert cli_main(_noise_cli_args(tmp_path)) == 0
    assert "reliable: NO" in capsys.readouterr().out
    assert not [w for w in seen if issubclass(w.category, es.UnreliableEstimateWarning)]


@pytest.mark.slow
def test_a_bug_keeps_its_traceback_and_a_users_mistake_is_one_line(tmp_path, monkeypatch, capsys):
    from ensstab_dask.estimates.stages import single as algorithm

    def broken(*args, **kwargs):
        raise ValueError("an internal function broke")

    args = _noise_cli_args(tmp_path)
    monkeypatch.setattr(algorithm, "round_n_useful", broken)
    with pytest.raises(ValueError, match="an internal function broke"):  # python -m: traceback, exit 1
        cli_main(args)
    monkeypatch.undo()
    assert cli_main(args[:-5] + ["--n-boot", "3", "--scheduler", "synchronous", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ensstab: error: ") and "n-boot" in err[0]


def _nog(lower):
    return NogueiraStability(0.2, 0.01, lower, 0.4, 0.05, 20)


def _check(u, p, mean, holds):
    return es.FixedPointCheck(u, p, np.array([mean]), mean, 0.0, 2.0, holds)


def _rails(
    nogueira_lower,
    *,
    n_useful_mean=45.0,
    t_draws=(4, 5),
    smaller=None,
    fixed_point=None,
    power=None,
    calibration=None,
    **options,
):
    """The guard rails on a problem with n_target = 20 and n_runs = 50."""
    single = single_selector(50, n_useful_mean, t_draws, _nog(nogueira_lower), smaller)
    return guard_rails(
        single, 20, SimulatorFit(fixed_point=fixed_point, power=power, calibration=calibration), **options
    )


def test_guard_rails_each_reason():
    ok = _rails(0.1, fixed_point=_check(45, 0.8, 45, True), power=_check(68, 0.8, 60, False))
    assert ok == (True, [], [])
    # Fewer useful features than n_target: no simulator curve, and the advice to ask for fewer.
    low = _rails(0.1, n_useful_mean=19.4, smaller=(15, 16.2))
    assert not low[0] and "fewer than the n_target = 20" in low[1][0] and "count 16.2" in low[1][0]
    assert "ask for n_target=15" in low[1][0] and "use model='anchored'" in low[1][0]  # the library's words
    # A k is named only when the same runs were counted there.
    unsearched = _rails(0.1, n_useful_mean=19.4)[1][0]
    assert "ask for a smaller n_target" in unsearched
    none = _rails(0.1, n_useful_mean=19.4, smaller=False)[1][0]
    assert "no smaller n_target counts more than it keeps on these runs, so use model='anchored'" in none
    # A model that measures real ensembles has a curve there: the count is a note, not a doubt.
    direct = _rails(0.1, n_useful_mean=19.4, simulator=False)
    assert direct == (True, [], [])
    assert "fewer than" in notes(n_target=20, n_useful_mean=19.4, real_nogueira=_nog(0.1), simulator=False)[0]
    # Exactly n_target: the method says nothing there either (A[f] at or below n_target), and asks for fewer.
    exact = _rails(0.1, n_useful_mean=20.0, smaller=(19, 19.5))
    assert not exact[0] and "no more than the n_target = 20" in exact[1][0] and "n_target=19" in exact[1][0]
    sat = _rails(0.1, t_draws=(50, 50, 4))
    assert not sat[0] and "t_uniform reached n_runs = 50 in 2 of 3" in sat[1][0]
    some = _rails(0.1, t_draws=(50, 4, 4))
    assert some[0] and "underestimated" in some[2][0]
    zero = _rails(-0.01)
    assert not zero[0] and "includes 0" in zero[1][0]
    fails = _rails(0.1, fixed_point=_check(45, 0.8, 30, False))
    assert fails[0] and "does not hold" in fails[2][0]
    weak = _rails(0.1, fixed_point=_check(45, 0.99, 45, True), power=_check(68, 0.99, 67, True))
    assert weak[0] and "no power" in weak[2][0] and "u = 68" in weak[2][0]


def test_fixed_point_power_is_absent_near_p_1():
    # At p near 1 the simulator's A[f_(u,p)] follows u whatever u is: the check cannot fail.
    near_one = fixed_point_power(2000, 20, 60, 0.999, n_runs=50, repeats=10, seed=1)
    assert near_one.n_useful == 90 and near_one.holds
    # At p = 0.8 a u of 90 is counted at fewer: the check would catch an overestimate.
    moderate = fixed_point_power(2000, 20, 60, 0.8, n_runs=50, repeats=10, seed=1)
    assert not moderate.holds and moderate.mean < 88
    assert check_fixed_point(2000, 20, 60, 0.8, n_runs=50, repeats=10, seed=0).holds
    assert fixed_point_power(100, 20, 80, 0.8, n_runs=50, repeats=10) is None  # 120 > n_feature


# -- layouts --------------------------------------------------------------------------------


def test_bagging_resample_is_a_bootstrap_of_a_half():
    labels = np.repeat([0, 1], [40, 22])
    rng = make_rng(0)
    for _ in range(20):
        idx = resample_indices(labels, "bagging", rng)
        assert len(idx) == 31 and len(np.unique(idx)) < 31  # 31 draws from one half, with repeats
    # Every draw lies in one half: over many draws of one stream, no more than 31 values.
    seen = resample_indices(labels, "bagging", make_rng(5))
    assert set(seen) <= set(resample_indices(labels, "half", make_rng(5)))


@pytest.mark.slow
@pytest.mark.parametrize("layout, runs", [("paper", 24), ("ensemble", 36), ("ensemble-all", 24)])
def test_layouts_count_their_runs_and_are_stage_for_stage(layout, runs):
    e = estimate(DATA.X, DATA.y, 10, client="synchronous", calibration_layout=layout, **SMALL)
    # The paper's model also makes 10 real ensemble copies of 4 for its self-check.
    assert e.real_runs == runs + 40 and e.settings["calibration_layout"] == layout
    # The same estimate from the first runs of larger pools, as the validation benchmark makes it.
    from ensstab_dask.real.naive import real_ensemble_runs
    from ensstab_dask.real.runs import Copies
    from ensstab_dask.seeding import Stage, Stream, derive
    from ensstab_dask.settings import EstimateSettings

    kw = dict(selector=SMALL["selector"], client="synchronous")
    seeds = {stage: derive(1, Stream.ESTIMATE, stage) for stage in (Stage.REAL, Stage.MEMBER_RUNS, Stage.CHECK_COPIES)}
    half = real_subsets(DATA.X, DATA.y, 10, n_runs=30, resample="half", seed=seeds[Stage.REAL], **kw)
    member = real_subsets(DATA.X, DATA.y, 10, n_runs=30, resample="bagging", seed=seeds[Stage.MEMBER_RUNS], **kw)
    check = real_ensemble_runs(DATA.X, DATA.y, Copies(10, 4, seeds[Stage.CHECK_COPIES]), progress=False, **kw)
    settings = EstimateSettings(n_feature=300, n_target=10, calibration_layout=layout, **SMALL)
    runs = assemble_runs(layout, n_runs=24, m_stability=12, half=half, member=member)
    pooled = estimate_from_runs(runs, settings, client="synchronous", check_ranks=check)
    a, b = e.to_dict(), pooled.to_dict()
    for key in Cost.HOW_IT_RAN:
        a.pop(key), b.pop(key)
    assert a == b


def test_pool_sizes_and_missing_runs():
    assert pool_sizes("paper", n_runs=50, m_stability=20) == (50, 0)
    assert pool_sizes("ensemble", n_runs=50, m_stability=20) == (50, 20)
    assert pool_sizes("ensemble-all", n_runs=10, m_stability=20) == (0, 20)
    with pytest.raises(ValueError, match="member: calibration_layout='ensemble' needs 20 runs; got 0"):
        assemble_runs("ensemble", n_runs=5, m_stability=20, half=np.zeros((5, 3), int))


# -- the bootstrap is honest ---------------------------------------------------------------


def test_u_statistic_standard_error_is_unbiased():
    """E[se^2] equals the variance of the stability over independent experiments; the
    jackknife's is larger. Tolerance: 4 standard errors of the difference."""
    N, K, U, R = 2000, 20, 20, 300
    subsets = es.simulate_ensembles(N, K, 60, 0.75, size=R * U, seed=7).reshape(R, U, K)
    values = np.array([stability_of_subsets(s, N, "jaccard") for s in subsets])
    se2 = np.array([pairwise_stability_se(s, N) ** 2 for s in subsets])
    var = values.var(ddof=1)
    tol = 4 * np.sqrt(var**2 * 2 / (R - 1) + se2.var(ddof=1) / R)
    assert abs(se2.mean() - var) < tol, (se2.mean(), var, tol)
    jack2 = np.mean([jackknife_std(s, N) ** 2 for s in subsets[:60]])
    assert jack2 > se2.mean()
    with pytest.raises(ValueError, match="at least 4"):
        pairwise_stability_se(subsets[0, :3], N)


@pytest.mark.slow
def test_bootstrap_spread_of_n_useful_matches_independent_pools():
    """Near-threshold simulated selector (its S' features are counted about as often as
    chance allows): the bootstrap's spread of A[f] over the replicates of one pool must
    match the spread of A[f] over independent pools. The sd over 100 pools has a relative
    standard error of about 7 %, the mean bootstrap sd over 30 pools about 3 %; 4 of
    them put the ratio in [0.7, 1.35] if the bootstrap is right (it measures 1.1-1.2,
    slightly conservative; the plain resampling of runs gave 5.6 on a clean selector)."""
    N, K, n_runs = 2000, 20, 50
    thresholds = threshold_draws(N, K, n_runs, repeats=100, seed=5)
    values, spreads = [], []
    for r in range(100):
        sub = es.simulate_ensembles(N, K, 150, 0.5, size=n_runs, seed=1000 + r)
        t = threshold_draws(N, K, n_runs, repeats=20, seed=2000 + r)
        values.append(useful_draws(sub, N, t, n_runs=n_runs, rng=make_rng(r)).mean())
        if r < 30:
            boot = bootstrap_runs((sub, sub[:20]), N, thresholds, n_runs=n_runs, repeats=20, n_boot=200, seed=r)
            spreads.append(boot.n_useful.std(ddof=1))
    ratio = np.mean(spreads) / np.std(values, ddof=1)
    assert 0.7 < ratio < 1.35, ratio


def test_rate_posterior_pools_chance_counts():
    # 1990 features at chance (rate 0.01) and 10 at 0.4: the chance ones are pooled near 0.01.
    rng = np.random.default_rng(0)
    counts = np.concatenate([rng.binomial(50, 0.01, 1990), rng.binomial(50, 0.4, 10)])
    grid, post = rate_posterior(counts, 50)
    mean = post @ grid
    assert np.allclose(post.sum(axis=1), 1.0)
    chance = mean[:1990][counts[:1990] == 3]
    assert (chance < 0.03).all()  # seen 3 times in 50, yet judged a chance feature
    assert np.all(np.abs(mean[1990:] - 0.4) < 0.15)


def test_lagrange_weights_are_exact_for_quadratics():
    nodes = np.array([10.0, 15.0, 22.0])
    x = np.array([10.0, 12.3, 15.0, 21.0])
    f = 0.3 * nodes**2 - 2 * nodes + 1
    np.testing.assert_allclose(lagrange_weights(nodes, x) @ f, 0.3 * x**2 - 2 * x + 1)
    np.testing.assert_allclose(lagrange_weights(nodes, [40.0]) @ f, f[-1])  # clipped to the design
    np.testing.assert_allclose(lagrange_weights(np.array([5.0]), [1.0, 9.0]), [[1.0], [1.0]])


@pytest.mark.slow
def test_interval_widens_with_fewer_real_runs():
    """The interval is about the real runs: a quarter of the runs gives a wider interval."""
    kw = dict(SMALL, m_ensemble=(1,), n_boot=100)
    many = estimate(DATA.X, DATA.y, 10, client="synchronous", **dict(kw, m_stability=24, n_runs=24))
    few = estimate(DATA.X, DATA.y, 10, client="synchronous", **dict(kw, m_stability=6, n_runs=24))
    width = {
        k: e.prediction.intervals["real_stability"][1] - e.prediction.intervals["real_stability"][0]
        for k, e in (("many", many), ("few", few))
    }
    assert width["few"] > 1.3 * width["many"], width


def test_more_guard_rails_and_checked_flags():
    unverified = _rails(0.1, verified=False)
    assert unverified[0] and "not checked" in unverified[2][0]
    empty = _rails(0.1, calibration=xr.Dataset())  # a calibration grid without a consistent cell
    assert "no (u, p) consistent" in empty[2][0]
    with pytest.raises(TypeError, match="verify must be True or False"):
        estimate(DATA.X, DATA.y, 10, client="synchronous", verify="no", **SMALL)


def test_design_keeps_a_node_clipped_at_p_1():
    from ensstab_dask.models.bootstrap import _nodes

    nodes = _nodes(np.array([0.95, 0.99, 1.0]), 0.98, 0.01, integer=False, low=0.01, high=1.0, gap=0.05)
    assert nodes == pytest.approx([0.93, 0.98, 1.0])
    assert _nodes(np.array([1.0, 1.0]), 1.0, 0.01, integer=False, low=0.01, high=1.0, gap=0.05) == [0.95, 1.0]


def test_stability_se_falls_back_to_the_jackknife():
    from ensstab_dask.indices import similarity_matrix, stability_se, u_statistic_variance

    def unbiased(s):
        z = np.zeros((len(s), 2000))
        z[np.arange(len(s))[:, None], s] = 1.0
        return u_statistic_variance(similarity_matrix(z, 2000, "jaccard"))

    zero = [
        s for s in (es.simulate_ensembles(2000, 20, 60, 0.75, size=4, seed=k) for k in range(200)) if unbiased(s) <= 0
    ]
    assert zero, "expected some 4-run samples whose unbiased variance is not positive"
    assert all(pairwise_stability_se(s, 2000) == pytest.approx(jackknife_std(s, 2000)) for s in zero)
    # The jackknife stands in (it is 0 only when every leave-one-out stability is the same).
    assert all(stability_se(s, 2000) == pytest.approx(jackknife_std(s, 2000)) for s in zero)
    assert sum(stability_se(s, 2000) > 0 for s in zero) > len(zero) / 2


def test_report_of_an_estimate_without_a_curve(tmp_path):
    from ensstab_dask.plotting.report import write_report

    X, y = noise(2)
    with pytest.warns(es.UnreliableEstimateWarning):
        e = estimate(X, y, 10, client="synchronous", **SMALL)
    e.to_netcdf(tmp_path / "e.nc")
    index = write_report(tmp_path / "e.nc", tmp_path / "rep")
    html = index.read_text()
    assert "No prediction" in html and "reliable" in html
    assert not (tmp_path / "rep" / "stability_curve.png").exists()


# Every interval within what its quantity can take -------------------------------------


def _assert_in_range(e) -> None:
    lo_i, hi_i = index_range(e.settings["index"])
    for m, (lo, hi) in e.curve_interval().items():
        assert lo_i <= lo <= hi <= hi_i, (m, lo, hi)
    bounds = {
        "real_stability": (lo_i, hi_i),
        "p": (0, 1),
        "n_useful": (0, e.n_feature),
        "t_uniform": (0, e.settings["n_runs"]),
        "h": (e.n_target, e.n_feature),
    }
    for key, (lo, hi) in e.prediction.intervals.items():
        assert bounds[key][0] <= lo <= hi <= bounds[key][1], (key, lo, hi)
    assert -1.0 <= e.single.real_nogueira.lower <= e.single.real_nogueira.upper <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("model", ["anchored", "onda"])
@pytest.mark.parametrize("which", ["noise", "embedded default"])
def test_every_interval_stays_within_its_quantitys_range(which, model):
    if which == "noise":
        X, y = noise(2)
    else:
        data = make_microarray(seed=0)
        X, y = data.X, data.y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)  # noise trips guard rails: not the point
        e = estimate(X, y, 20, client="synchronous", **dict(SMALL, m_ensemble=(1, 3, 20), model=model))
    _assert_in_range(e)
