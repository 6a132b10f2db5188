"""t_uniform, n_useful, p and the fixed point (docs/method.md sections 4-6)."""

import itertools

import numpy as np
import pytest
from oracle import literal_uniform_threshold
from scipy import stats

import ensstab_dask as es
from ensstab_dask.checks import P_METHODS

P_MIN = 1e-4


def test_uniform_subsets_are_uniform():
    n = 30_000
    sub = es.uniform_subsets(6, 3, n, seed=1)
    assert sub.shape == (n, 3) and (np.diff(sub, axis=1) > 0).all()
    combos = {c: i for i, c in enumerate(itertools.combinations(range(6), 3))}
    counts = np.bincount([combos[tuple(r)] for r in sub], minlength=len(combos))
    assert stats.chisquare(counts).pvalue > P_MIN


def test_uniform_threshold_distribution_matches_literal():
    N, K, runs, R = 30, 3, 10, 3000
    fast = np.array([es.uniform_threshold(N, K, runs, seed=s) for s in range(R)])
    rng = np.random.default_rng(0)
    lit = np.array([literal_uniform_threshold(N, K, runs, rng) for _ in range(R)])
    values = np.union1d(fast, lit)
    table = np.array([[np.sum(fast == v) for v in values], [np.sum(lit == v) for v in values]])
    assert stats.chi2_contingency(table).pvalue > P_MIN


def test_count_useful_by_hand():
    subsets = [[0, 1], [0, 2], [0, 1], [3, 4]]
    # counts: f0 3, f1 2, f2 1, f3 1, f4 1
    assert es.count_useful(subsets, 6, 1) == 2
    assert es.count_useful(subsets, 6, 2) == 1
    assert es.count_useful(np.array(subsets), 6, 0, n_target=2) == 5
    assert list(es.selection_counts(subsets, 6)) == [3, 2, 1, 1, 1, 0]


def test_simulated_n_useful_structure():
    # p = 1 and n_useful = n_target: every run picks S' itself, so exactly n_target
    # features reach n_runs > t_uniform.
    assert es.simulated_n_useful(500, 10, 10, 1.0, n_runs=20, seed=0) == 10
    # A given threshold is used as is.
    assert es.simulated_n_useful(500, 10, 10, 1.0, n_runs=20, threshold=20, seed=0) == 0
    # p = 1, n_useful = 30: features in S' are picked n_runs/3 times on average, others never.
    v = es.simulated_n_useful(2000, 10, 30, 1.0, n_runs=60, seed=1)
    assert 10 <= v <= 30


def test_simulated_n_useful_reproducible():
    a = es.simulated_n_useful(1000, 20, 60, 0.5, n_runs=30, seed=3)
    assert a == es.simulated_n_useful(1000, 20, 60, 0.5, n_runs=30, seed=3)


@pytest.mark.parametrize("method", P_METHODS)
def test_estimate_p_recovers_the_p_that_made_the_target(method):
    N, K, u, p_true = 2000, 20, 60, 0.6
    # A precise target from an independent, larger simulation.
    target = es.simulated_stability(N, K, u, p_true, m_stability=400, seed=777)
    fit = es.estimate_p(target, N, K, u, m_stability=200, method=method, seed=1)
    assert abs(fit.p - p_true) < 0.05, fit
    assert float(fit) == fit.p
    assert not fit.at_boundary


def test_estimate_p_bisection_bracket_and_boundaries():
    N, K, u = 2000, 20, 60
    fit = es.estimate_p(0.999, N, K, u, seed=0)
    assert fit.p == 1.0 and fit.at_boundary
    fit = es.estimate_p(0.0, N, K, u, seed=0)
    assert fit.p == pytest.approx(K / N) and fit.at_boundary
    fit = es.estimate_p(0.1, N, K, u, seed=0, xtol=1e-3)
    ps = [p for p, _ in fit.evaluations]
    assert len(ps) <= 14  # two ends plus about log2(1/xtol) midpoints
    assert abs(fit.stability - 0.1) < 0.03


def test_estimate_p_accepts_negative_targets_for_chance_corrected_indices():
    fit = es.estimate_p(-0.01, 2000, 20, 60, index="kuncheva", m_stability=20, seed=0)
    assert fit.at_boundary and fit.p == pytest.approx(0.01)


def test_default_grid_stays_on_the_rising_branch():
    # Below n_target/n_feature the curve falls again; a target there is ambiguous, and the
    # default grid, like bisection, answers on the rising branch and says it hit the end.
    N, K, u = 100, 10, 30
    low = es.simulated_stability(N, K, u, 0.0, m_stability=50, seed=0)
    for method in ("grid", "bisect"):
        fit = es.estimate_p(low, N, K, u, method=method, seed=0)
        assert fit.p >= K / N


def test_estimate_p_grid_is_custom():
    fit = es.estimate_p(0.1, 2000, 20, 60, method="grid", grid=[0.1, 0.5, 0.9], seed=0)
    assert fit.p in (0.1, 0.5, 0.9) and len(fit.evaluations) == 3


def test_fixed_point_holds_where_it_must():
    # p = 1, u = n_target: A[f_{u,p}] = u exactly.
    chk = es.check_fixed_point(500, 10, 10, 1.0, n_runs=20, repeats=5, seed=0)
    assert chk.holds and chk.mean == 10 and chk.std == 0
    it = es.iterate_fixed_point(500, 10, 10, 1.0, n_runs=20, repeats=5, seed=0)
    assert it.converged and it.n_useful == 10 and it.history == (10,)


def test_fixed_point_iteration_converges_to_a_checked_fixed_point():
    # p = 1, u = 15 > n_target: S' features clear t_uniform only sometimes, so A < u and
    # the iteration walks down; wherever it stops, the check must agree it is a fixed point.
    it = es.iterate_fixed_point(500, 10, 15, 1.0, n_runs=20, repeats=10, max_iter=30, seed=0)
    assert it.history[0] == 15 and len(it.means) == len(it.history) - (0 if it.converged else 1)
    assert it.converged and it.reason == "fixed point"
    chk = es.check_fixed_point(500, 10, it.n_useful, 1.0, n_runs=20, repeats=10, seed=0)
    assert abs(chk.mean - it.n_useful) <= 0.5 and chk.holds


def test_fixed_point_iteration_never_fakes_convergence_below_n_target():
    # With p small almost nothing clears t_uniform: A[f] falls below n_target, where the
    # simulator is undefined; clamping would report a spurious fixed point.
    it = es.iterate_fixed_point(2000, 20, 500, 0.05, n_runs=30, repeats=5, seed=0)
    assert not it.converged and it.reason == "below n_target"
    assert it.means[-1] < 20


def test_fixed_point_fails_far_from_it():
    # With p small, few features clear t_uniform: A[f] is far below u = 500.
    chk = es.check_fixed_point(2000, 20, 500, 0.05, n_runs=30, repeats=5, seed=0)
    assert not chk.holds and chk.mean < 100


# --- bad input: every public function names the parameter and the allowed range ----

BAD = [
    (lambda: es.simulate_rankings(10, 11, 11, 0.5), ValueError, "n_target must be in \\[1, 10\\]"),
    (lambda: es.simulate_rankings(10, 3, 2, 0.5), ValueError, "n_useful must be in \\[3, 10\\]"),
    (lambda: es.simulate_rankings(10, 3, 11, 0.5), ValueError, "n_useful must be in \\[3, 10\\]"),
    (lambda: es.simulate_rankings(10, 3, 5, 1.5), ValueError, "p must be in \\[0.0, 1.0\\]"),
    (lambda: es.simulate_rankings(10, 3, 5, -0.1), ValueError, "p must be in"),
    (lambda: es.simulate_rankings(10, 3, 5, float("nan")), ValueError, "p must be a number .* got NaN"),
    (lambda: es.simulate_rankings(10, 3, 5, "0.5"), TypeError, "p must be a real number"),
    (lambda: es.simulate_rankings(10.5, 3, 5, 0.5), TypeError, "n_feature must be an int"),
    (lambda: es.simulate_rankings(10, 3, 5, 0.5, size=-1), ValueError, "size must be >= 0"),
    (lambda: es.simulate_rankings(10, True, 5, 0.5), TypeError, "n_target must be an int"),
    (lambda: es.simulate_rankings(10, 3, 5, 0.5, seed=-1), ValueError, "seed must be a non-negative int"),
    (lambda: es.simulate_rankings(10, 3, 5, 0.5, seed="x"), TypeError, "seed must be None"),
    (lambda: es.simulated_stability(10, 3, 5, 0.5, m_stability=1), ValueError, "m_stability must be >= 2"),
    (lambda: es.simulated_stability(10, 3, 5, 0.5, m_ensemble=0), ValueError, "m_ensemble must be >= 1"),
    (lambda: es.simulated_stability(10, 3, 5, 0.5, aggregate="max"), ValueError, "aggregate must be one of"),
    (lambda: es.simulated_stability(10, 3, 5, 0.5, index="cosine"), ValueError, "index must be one of"),
    (lambda: es.uniform_threshold(10, 3, 0), ValueError, "n_runs must be >= 1"),
    (lambda: es.uniform_threshold(10, 12, 3), ValueError, "n_target must be in"),
    (lambda: es.count_useful([[0, 1], [1, 2, 3]], 5, 1, n_target=2), ValueError, "exactly 2 features"),
    (lambda: es.count_useful([[0, 1], [1, 9]], 5, 1), ValueError, "outside"),
    (lambda: es.count_useful([[0, 1], [1, 1]], 5, 1), ValueError, "duplicate"),
    (lambda: es.count_useful(np.array([[0, 1], [1, 1]]), 5, 1), ValueError, "duplicate"),
    (lambda: es.count_useful([[0, 1]], 5, -1), ValueError, "threshold must be >= 0"),
    (lambda: es.simulated_n_useful(10, 3, 5, 0.5, n_runs=0), ValueError, "n_runs must be >= 1"),
    (lambda: es.estimate_p(0.3, 10, 3, 5, m_stability=1), ValueError, "m_stability must be >= 2"),
    (lambda: es.estimate_p(0.3, 10, 3, 5, method="newton"), ValueError, "method must be one of"),
    (lambda: es.estimate_p(float("nan"), 10, 3, 5), ValueError, "target_stability must be a number"),
    (lambda: es.estimate_p(0.3, 10, 3, 5, method="grid", grid=[0.5, 2.0]), ValueError, "grid values must be in"),
    (lambda: es.estimate_p(0.3, 10, 3, 5, bounds=0.1), ValueError, "bounds must be a pair"),
    (lambda: es.estimate_p(0.3, 10, 3, 5, bounds=[0.1]), ValueError, "bounds must be a pair"),
    (lambda: es.estimate_p(0.3, 10, 3, 5, bounds=[0.5, 0.2]), ValueError, "bounds must satisfy"),
    (lambda: es.estimate_p(0.3, 10, 10, 10), ValueError, "n_target == n_feature"),
    (lambda: es.estimate_p(-0.2, 10, 3, 5), ValueError, "target_stability must be in \\[0.0, 1.0\\]"),
    (
        lambda: es.simulated_stability(10, 10, 10, 0.5, index="nogueira"),
        ValueError,
        "undefined when n_target == n_feature",
    ),
    (lambda: es.top_k(np.array([np.nan, 0.0, 1.0]), 2), ValueError, "NaN"),
    (lambda: es.count_useful([[0.0, float("inf")]], 5, 1), TypeError, "integer feature indices"),
    (lambda: es.check_fixed_point(10, 3, 5, 0.5, n_runs=5, repeats=0), ValueError, "repeats must be >= 1"),
    (lambda: es.iterate_fixed_point(10, 3, 5, 0.5, n_runs=5, max_iter=0), ValueError, "max_iter must be >= 1"),
    (lambda: es.aggregate_rankings(np.array([[1, 2, 3]]), 4), ValueError, "n_target must be in"),
    (lambda: es.aggregate_rankings(np.array([[1.0, 2.0, 3.0]]), 1), TypeError, "integer ranks"),
    (
        lambda: es.aggregate_rankings(np.array([[1, 2, 3]]), 1, aggregate="borda"),
        ValueError,
        "aggregate must be one of",
    ),
]


@pytest.mark.parametrize("call, exc, match", BAD, ids=range(len(BAD)))
def test_bad_input_is_refused_with_a_clear_message(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
