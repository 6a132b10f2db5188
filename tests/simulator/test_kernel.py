"""The fast simulator against the literal algorithm of docs/method.md section 2.

Statistical tests use fixed seeds and thresholds of about 4 standard errors (a p-value
of 1e-4 for goodness-of-fit tests), so they are reproducible and fail only when the
distribution is wrong.
"""

import itertools
import math
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
from oracle import exact_ranking_distribution, literal_rankings
from scipy import stats

import ensstab_dask as es
from ensstab_dask.simulator.kernel import block_rows

P_MIN = 1e-4  # goodness-of-fit threshold, about 4 standard errors


def gof_pvalue(samples: np.ndarray, exact: dict) -> float:
    """Chi-square goodness of fit of sampled rankings against exact probabilities.

    Cells with an expected count below 5 are pooled into one cell; a sampled ranking
    with probability 0 fails the test outright.
    """
    n = len(samples)
    keys = list(exact)
    index = {k: i for i, k in enumerate(keys)}
    counts = np.zeros(len(keys))
    for row in map(tuple, samples):
        if row not in index:
            return 0.0  # impossible outcome
        counts[index[row]] += 1
    probs = np.array([float(exact[k]) for k in keys])
    expected = probs * n
    small = expected < 5
    obs = np.append(counts[~small], counts[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    if len(obs) < 2:
        return 1.0 if counts.sum() == n else 0.0
    return float(stats.chisquare(obs, exp).pvalue)


CONFIGS = [
    # (n_feature, n_target, n_useful, p)
    (5, 2, 3, Fraction(3, 5)),
    (5, 2, 3, Fraction(0)),  # p = 0
    (5, 2, 3, Fraction(1)),  # p = 1
    (4, 2, 2, Fraction(3, 10)),  # n_useful = n_target
    (4, 1, 4, Fraction(1, 2)),  # n_useful = n_feature
    (3, 3, 3, Fraction(1, 2)),  # n_target = n_feature
    (5, 1, 2, Fraction(9, 10)),
    (5, 2, 5, Fraction(1, 5)),  # p below n_target/n_feature
    (5, 2, 3, Fraction(1, 10**6)),  # tiny p: huge geometric gaps
    (5, 2, 3, 1 - Fraction(1, 10**6)),  # p just below 1
    (6, 3, 4, Fraction(1, 3)),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "N{}-K{}-u{}-p{}".format(*c))
def test_fast_kernel_matches_exact_ranking_distribution(config):
    n_feature, n_target, n_useful, p = config
    exact = exact_ranking_distribution(n_feature, n_target, n_useful, p)
    assert math.isclose(float(sum(exact.values())), 1.0)
    samples = es.simulate_rankings(n_feature, n_target, n_useful, float(p), size=60_000, seed=12345)
    assert gof_pvalue(samples, exact) > P_MIN


@pytest.mark.parametrize("config", CONFIGS[:4], ids=lambda c: "N{}-K{}-u{}-p{}".format(*c))
def test_literal_oracle_matches_exact_distribution(config):
    # The oracle sampler and the exact enumeration agree, so either can judge the kernel.
    n_feature, n_target, n_useful, p = config
    exact = exact_ranking_distribution(n_feature, n_target, n_useful, p)
    samples = literal_rankings(n_feature, n_target, n_useful, float(p), 6000, seed=7)
    assert gof_pvalue(samples, exact) > P_MIN


def test_rank_position_distribution_matches_literal_on_larger_case():
    # Too many rankings to enumerate: compare the (feature, rank) marginals of the
    # kernel with the literal algorithm, feature by feature (Bonferroni over features).
    N, K, u, p = 9, 3, 5, 0.7
    fast = es.simulate_rankings(N, K, u, p, size=40_000, seed=1)
    lit = literal_rankings(N, K, u, p, 8000, seed=2)
    for f in range(N):
        table = np.array([np.bincount(fast[:, f], minlength=N + 1)[1:], np.bincount(lit[:, f], minlength=N + 1)[1:]])
        table = table[:, table.sum(axis=0) > 0]
        assert stats.chi2_contingency(table).pvalue > P_MIN / N, f"feature {f}"


def test_rankings_are_permutations_and_shape():
    r = es.simulate_rankings(300, 7, 40, 0.4, size=50, seed=3)
    assert r.shape == (50, 300) and r.dtype == np.int64
    assert (np.sort(r, axis=1) == np.arange(1, 301)).all()


def test_p_one_and_p_zero_structure():
    N, K, u = 200, 10, 30
    r1 = es.simulate_rankings(N, K, u, 1.0, size=300, seed=4)
    top = r1 <= K
    assert (top.sum(axis=1) == K).all()
    assert not top[:, u:].any(), "with p = 1 the top n_target is S_m, inside S'"
    r0 = es.simulate_rankings(N, K, u, 0.0, size=300, seed=4)
    bottom = r0 > N - K
    assert not bottom[:, u:].any(), "with p = 0 S_m (inside S') is ranked last"
    # S_m is a uniform n_target-subset of S': every S' feature is in it K/u of the time.
    freq = top[:, :u].mean(axis=0)
    se = math.sqrt((K / u) * (1 - K / u) / 300)
    assert np.abs(freq - K / u).max() < 4.5 * se


def test_common_random_numbers_move_ranks_monotonically_in_p():
    N, K, u = 120, 6, 20
    ps = [0.0, 0.1, 0.3, 0.5, 0.8, 0.95, 1.0]
    ranks = [es.simulate_rankings(N, K, u, p, size=200, seed=99) for p in ps]
    in_sm = ranks[-1] <= K  # at p = 1 the S_m features hold ranks 1..K
    for lo, hi in zip(ranks, ranks[1:]):
        assert (hi[in_sm] <= lo[in_sm]).all()
        assert (hi[~in_sm] >= lo[~in_sm]).all()


def test_theorem_1_first_rank_probability():
    N, K, u, p = 40, 4, 10, 0.35
    n = 100_000
    r = es.simulate_rankings(N, K, u, p, size=n, seed=2024)
    first = np.argmin(r, axis=1)
    p0 = ((N - u) * p + (u - K)) / (u * (N - K))
    p_out = (1 - p) / (N - K)
    assert math.isclose(u * p0 + (N - u) * p_out, 1.0)
    for feats, prob in ((np.arange(u), p0), (np.arange(u, N), p_out)):
        hits = np.isin(first, feats).mean()
        expected = len(feats) * prob
        assert abs(hits - expected) < 4 * math.sqrt(expected * (1 - expected) / n)
    # The per-feature probability for one S' feature, too.
    f0 = (first == 0).mean()
    assert abs(f0 - p0) < 4 * math.sqrt(p0 * (1 - p0) / n)
    # p0 exceeds 1/N exactly when p > K/N.
    for q in (0.05, 0.1, 0.15, 0.5):
        theo = ((N - u) * q + (u - K)) / (u * (N - K))
        assert (theo > 1 / N) == (q > K / N)


def test_seeds_reproducible_and_distinct():
    a = es.simulate_rankings(100, 5, 20, 0.5, size=10, seed=1)
    b = es.simulate_rankings(100, 5, 20, 0.5, size=10, seed=1)
    c = es.simulate_rankings(100, 5, 20, 0.5, size=10, seed=2)
    assert (a == b).all() and not (a == c).all()
    ss = np.random.SeedSequence(1)
    assert (es.simulate_rankings(100, 5, 20, 0.5, size=10, seed=ss) == a).all()
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    x1 = es.simulate_rankings(100, 5, 20, 0.5, size=10, seed=g1)
    x2 = es.simulate_rankings(100, 5, 20, 0.5, size=10, seed=g2)
    assert (x1 == x2).all()
    # A Generator is consumed: the next call gives a different draw.
    assert not (es.simulate_rankings(100, 5, 20, 0.5, size=10, seed=g1) == x1).all()


def test_rows_span_several_blocks_consistently():
    N = 50_000  # a few rows per block
    rows = block_rows(N)
    size = 2 * rows + 3
    r = es.simulate_rankings(N, 5, 100, 0.5, size=size, seed=8)
    assert (np.sort(r, axis=1) == np.arange(1, N + 1)).all()
    # Ensembles read the same rows: member rankings are rows of simulate_rankings.
    sub = es.simulate_ensembles(N, 5, 100, 0.5, m_ensemble=1, size=size, seed=8)
    assert (sub == np.sort(np.argsort(r, axis=1)[:, :5], axis=1)).all()


def test_memory_is_bounded_by_chunking():
    N, m, U = 2000, 400, 20  # the full rankings would take U*m*N*8 = 128 MB
    tracemalloc.start()
    es.simulated_stability(N, 20, 60, 0.7, m_ensemble=m, m_stability=U, seed=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.1f} MB"
    assert block_rows(N) * N * 8 * 3 <= 64 * 2**20


def test_ensemble_stability_levels_off_at_random_subsets_of_s_prime():
    # docs/method.md section 8: at p = 1 ensembles converge to random n_target-subsets of S'.
    N, K, u = 500, 10, 30
    values = [es.simulated_stability(N, K, u, 1.0, m_ensemble=200, m_stability=60, seed=s) for s in range(8)]
    # E[J] of two independent random K-subsets of u features, exactly:
    hyper = stats.hypergeom(u, K, K)
    expected = sum(hyper.pmf(r) * r / (2 * K - r) for r in range(K + 1))
    se = np.std(values, ddof=1) / math.sqrt(len(values))
    assert abs(np.mean(values) - expected) < 4 * se


@pytest.mark.parametrize("key_bits", [1, 2, 3])
def test_shuffle_is_uniform_even_when_random_keys_tie(key_bits):
    # With 1-3 random bits per key almost every row has ties of every size: the
    # re-draw of tied groups must still give each of the 4! orders probability 1/24.
    from ensstab_dask.simulator.kernel import _shuffle_rows

    n = 48_000
    values = np.broadcast_to(np.arange(4, dtype=np.int64), (n, 4))
    out = _shuffle_rows(np.random.default_rng(key_bits), values, 3, key_bits=key_bits)
    assert (np.sort(out, axis=1) == np.arange(4)).all()
    perms = {p: i for i, p in enumerate(itertools.permutations(range(4)))}
    counts = np.bincount([perms[tuple(r)] for r in out], minlength=24)
    assert stats.chisquare(counts).pvalue > P_MIN


def test_shuffle_with_wide_keys_is_uniform():
    # n_feature >= 4096 takes the 64-bit key path: each value lands in each position
    # equally often, and any two values come in either order half of the time.
    from ensstab_dask.simulator.kernel import _shuffle_rows

    n, L = 4000, 5000
    values = np.broadcast_to(np.arange(1, L + 1, dtype=np.int64), (n, L))
    out = _shuffle_rows(np.random.default_rng(0), values, 6000)
    assert (np.sort(out, axis=1) == values).all()
    where_first = np.argmax(out == 1, axis=1)
    counts = np.bincount(where_first * 10 // L, minlength=10)
    assert stats.chisquare(counts).pvalue > P_MIN
    before = (np.argmax(out == 2, axis=1) < np.argmax(out == L, axis=1)).mean()
    assert abs(before - 0.5) < 4 * math.sqrt(0.25 / n)


# -- the two-level model (docs/two_level_model.md) --------------------------------------

TWO_LEVEL = [
    # (n_feature, n_target, n_useful, h, p)
    (4, 1, 3, 2, Fraction(3, 5)),
    (4, 1, 3, 1, Fraction(1, 2)),  # h = n_target: a copy's S_m is fixed
    (4, 1, 3, 3, Fraction(7, 10)),  # h = n_useful: the paper's model, pairs independent
    (4, 2, 3, 2, Fraction(1, 3)),
    (4, 1, 4, 2, Fraction(1)),  # p = 1
]


@pytest.mark.parametrize("config", TWO_LEVEL, ids=lambda c: "N{}-K{}-u{}-h{}-p{}".format(*c))
def test_two_level_kernel_matches_the_exact_pair_distribution(config):
    # Two weak selectors of one copy, jointly: the copy's H is what makes them depend.
    from oracle import exact_two_level_pair_distribution

    N, K, u, h, p = config
    exact = exact_two_level_pair_distribution(N, K, u, h, p)
    assert math.isclose(float(sum(exact.values())), 1.0)
    r = es.simulate_rankings(N, K, u, float(p), size=2 * 40_000, seed=5, variant="two-level", h=h, copy_size=2)
    pairs = np.concatenate([r[0::2], r[1::2]], axis=1)
    assert gof_pvalue(pairs, exact) > P_MIN


def test_two_level_literal_oracle_matches_the_exact_pair_distribution():
    from oracle import exact_two_level_pair_distribution, literal_two_level_rankings

    N, K, u, h, p = TWO_LEVEL[0]
    exact = exact_two_level_pair_distribution(N, K, u, h, p)
    r = literal_two_level_rankings(N, K, u, h, float(p), 2, 6000, seed=3)
    assert gof_pvalue(np.concatenate([r[0::2], r[1::2]], axis=1), exact) > P_MIN


def test_two_level_copies_of_five_match_the_literal_model_on_a_larger_case():
    # Beyond enumeration: how many S' features a copy's five selectors put in their top
    # n_target, jointly, kernel against the literal model (a contingency test).
    from oracle import literal_two_level_rankings

    N, K, u, h, p, m = 12, 3, 7, 4, 0.8, 5
    fast = es.simulate_rankings(N, K, u, p, size=m * 6000, seed=8, variant="two-level", h=h, copy_size=m)
    lit = literal_two_level_rankings(N, K, u, h, p, m, 3000, seed=9)

    def distinct_top(r):  # features of S' in the union of the copy's top-K sets
        top = (r <= K).reshape(-1, m, N)[:, :, :u]
        return top.any(axis=1).sum(axis=1)

    a, b = np.bincount(distinct_top(fast), minlength=u + 1), np.bincount(distinct_top(lit), minlength=u + 1)
    table = np.array([a, b])[:, (a + b) > 0]
    assert stats.chi2_contingency(table).pvalue > P_MIN


def test_two_level_ensembles_aggregate_the_copies_rankings():
    from ensstab_dask.aggregation import aggregate_rankings
    from ensstab_dask.seeding import Stream, as_seed_sequence, make_rng

    N, K, u, h, p, m, size = 60, 4, 20, 8, 0.7, 5, 30
    got = es.simulate_ensembles(N, K, u, p, m_ensemble=m, size=size, seed=11, variant="two-level", h=h)
    ranks = es.simulate_rankings(N, K, u, p, size=m * size, seed=11, variant="two-level", h=h, copy_size=m)
    tie_rng = make_rng(as_seed_sequence(11), Stream.ENSEMBLE_TIES)
    want = aggregate_rankings(ranks.reshape(size, m, N), K, seed=tie_rng)
    np.testing.assert_array_equal(got, want)
    # m = 1: one copy per selector, so S_m is uniform over S' as in the paper's model.
    single = es.simulate_ensembles(N, K, u, 1.0, size=4000, seed=2, variant="two-level", h=h)
    freq = np.bincount(single.ravel(), minlength=N)[:u] / 4000
    se = math.sqrt((K / u) * (1 - K / u) / 4000)
    assert np.abs(freq - K / u).max() < 4.5 * se and np.bincount(single.ravel(), minlength=N)[u:].sum() == 0


def test_two_level_copies_agree_more_and_the_onda_model_is_untouched():
    kw = dict(m_ensemble=10, m_stability=200, seed=4)
    onda = es.simulated_stability(500, 10, 40, 0.6, **kw)
    assert onda == es.simulated_stability(500, 10, 40, 0.6, variant="onda", **kw)
    tight = es.simulated_stability(500, 10, 40, 0.6, variant="two-level", h=12, **kw)
    loose = es.simulated_stability(500, 10, 40, 0.6, variant="two-level", h=40, **kw)
    assert tight > loose + 0.05  # a small H makes a copy's selectors agree, so ensembles settle sooner
    assert abs(loose - onda) < 0.05  # h = n_useful is the paper's model in distribution


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(variant="two-level"), "h is needed by variant="),
        (dict(variant="onda", h=5), "variant='two-level' only"),
        (dict(variant="two-level", h=3), r"h must be >= 4|h must be in"),
        (dict(variant="two-level", h=21), r"h must be in \[n_target, n_useful\] = \[4, 20\]"),
        (dict(variant="three-level", h=5), "variant must be one of"),
    ],
)
def test_two_level_bad_parameters_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        es.simulate_rankings(50, 4, 20, 0.5, size=2, seed=0, **kwargs)
