"""Ensemble aggregation and random tie-breaking, against exact distributions."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from oracle import exact_ranking_distribution, literal_ensemble_subset
from scipy import stats

import ensstab_dask as es
from ensstab_dask.checks import AGGREGATES

P_MIN = 1e-4


def exact_scores(ranks, n_target, aggregate):
    m, n = ranks.shape
    if aggregate == "mean_rank":
        return [Fraction(int(ranks[:, f].sum()), m) for f in range(n)]
    if aggregate == "median_rank":
        s = np.sort(ranks, axis=0)
        return [Fraction(int(s[(m - 1) // 2, f] + s[m // 2, f]), 2) for f in range(n)]
    if aggregate == "vote":
        return [-int((ranks[:, f] <= n_target).sum()) for f in range(n)]
    return [-sum(Fraction(1, int(r)) for r in ranks[:, f]) for f in range(n)]


def exact_subset_distribution(ranks, n_target, aggregate):
    """Probability of each chosen subset under a uniform random tie-break."""
    score = exact_scores(ranks, n_target, aggregate)
    kth = sorted(score)[n_target - 1]
    better = [f for f in range(len(score)) if score[f] < kth]
    tied = [f for f in range(len(score)) if score[f] == kth]
    need = n_target - len(better)
    combos = list(itertools.combinations(tied, need))
    return {tuple(sorted(better + list(c))): Fraction(1, len(combos)) for c in combos}


@pytest.mark.parametrize("aggregate", AGGREGATES)
def test_ensemble_subset_distribution_is_exact(aggregate):
    # Exact law of the subset chosen by an ensemble of two simulated selectors: the
    # ranking law (enumerated) convolved with the uniform tie-break.
    N, K, u, p, m = 5, 2, 3, Fraction(3, 5), 2
    law = exact_ranking_distribution(N, K, u, p)
    exact: dict[tuple, Fraction] = {}
    items = list(law.items())
    for (r1, p1), (r2, p2) in itertools.product(items, items):
        ranks = np.array([r1, r2])
        for subset, q in exact_subset_distribution(ranks, K, aggregate).items():
            exact[subset] = exact.get(subset, Fraction(0)) + p1 * p2 * q
    n = 40_000
    sub = es.simulate_ensembles(N, K, u, float(p), m_ensemble=m, size=n, aggregate=aggregate, seed=11)
    keys = sorted(exact)
    counts = np.array([np.sum((sub == np.array(k)).all(axis=1)) for k in keys])
    assert counts.sum() == n
    expected = np.array([float(exact[k]) for k in keys]) * n
    assert stats.chisquare(counts, expected).pvalue > P_MIN


def test_tie_break_is_uniform_not_by_index():
    # All scores equal: every k-subset must be equally likely.
    scores = np.zeros((30_000, 5), dtype=np.int64)
    chosen = es.top_k(scores, 2, seed=3)
    codes = chosen[:, 0] * 5 + chosen[:, 1]
    counts = np.bincount(codes, minlength=25)[[a * 5 + b for a, b in itertools.combinations(range(5), 2)]]
    assert counts.sum() == 30_000
    assert stats.chisquare(counts).pvalue > P_MIN


def test_top_k_strict_order_and_partial_ties():
    scores = np.array([[5, 1, 3, 3, 3, 9]])
    seen = set()
    rng = np.random.default_rng(0)
    for _ in range(200):
        c = tuple(es.top_k(scores, 3, seed=rng)[0])
        assert c[0] == 1 and set(c[1:]) <= {2, 3, 4}
        seen.add(c)
    assert len(seen) == 3
    assert (es.top_k(scores, 6, seed=0) == np.arange(6)).all()


def test_aggregate_rankings_hand_example():
    ranks = np.array([[1, 2, 3, 4], [2, 1, 4, 3], [1, 3, 2, 4]])
    # mean ranks 4/3, 2, 3, 11/3 -> {0, 1}
    assert list(es.aggregate_rankings(ranks, 2, seed=0)) == [0, 1]
    # median ranks 1, 2, 3, 4 -> {0, 1}
    assert list(es.aggregate_rankings(ranks, 2, aggregate="median_rank", seed=0)) == [0, 1]
    # votes for top-2: f0 3, f1 2, f2 1, f3 0 -> {0, 1}; for top-1: f0 2, f1 1 -> {0}
    assert list(es.aggregate_rankings(ranks, 1, aggregate="vote", seed=0)) == [0]
    # reciprocal sums: f0 2.5, f1 1.83, f2 1.08, f3 0.83
    assert list(es.aggregate_rankings(ranks, 3, aggregate="reciprocal_rank", seed=0)) == [0, 1, 2]


def test_rank_scores_random_ties():
    s = np.array([0.5, 0.0, 0.0, 0.9, 0.0])
    seen = set()
    for seed in range(100):
        r = es.rank_scores(s, seed=seed)
        assert r[3] == 1 and r[0] == 2 and sorted(r[[1, 2, 4]]) == [3, 4, 5]
        seen.add(tuple(r))
    assert len(seen) == 6


def test_literal_ensemble_oracle_agrees_with_library():
    # The two aggregation paths agree whenever there is no tie at the boundary.
    rng = np.random.default_rng(1)
    for _ in range(50):
        ranks = np.array([rng.permutation(8) + 1 for _ in range(3)])
        for agg in AGGREGATES:
            exact = exact_subset_distribution(ranks, 3, agg)
            if len(exact) == 1:
                assert tuple(es.aggregate_rankings(ranks, 3, aggregate=agg, seed=0)) == next(iter(exact))
                assert tuple(literal_ensemble_subset(ranks, 3, agg, rng)) == next(iter(exact))


def test_reciprocal_rank_exact_ties_are_broken_at_random():
    # f0 has ranks (3, 6) and f1 has (4, 4): 1/3 + 1/6 = 1/4 + 1/4 exactly, though their
    # fixed-point sums differ. Exact sums: f2 2, f3 and f7 5/8, f0 and f1 1/2, then f6
    # 10/21, f5 11/30, f4 12/35. The top 4 is f2, f3, f7 and one of f0, f1 at random.
    ranks = np.array([[3, 4, 1, 2, 5, 6, 7, 8], [6, 4, 1, 8, 7, 5, 3, 2]])
    n = 400
    picks = [tuple(es.aggregate_rankings(ranks, 4, aggregate="reciprocal_rank", seed=s)) for s in range(n)]
    assert all({2, 3, 7} <= set(p) and len(set(p) & {0, 1}) == 1 for p in picks)
    f0 = sum(0 in p for p in picks) / n
    assert abs(f0 - 0.5) < 4 * math.sqrt(0.25 / n)


@pytest.mark.parametrize("aggregate", AGGREGATES)
def test_ensemble_subsets_match_literal_pipeline_on_six_features(aggregate):
    # Too many ranking triples to enumerate: compare the law of the chosen subset with
    # the literal algorithm + literal aggregation (exact rationals, random tie-break).
    from oracle import literal_rankings

    N, K, u, p, m = 6, 2, 4, 0.65, 3
    n_fast, n_lit = 30_000, 3000
    fast = es.simulate_ensembles(N, K, u, p, m_ensemble=m, size=n_fast, aggregate=aggregate, seed=5)
    lit_ranks = literal_rankings(N, K, u, p, n_lit * m, seed=6).reshape(n_lit, m, N)
    rng = np.random.default_rng(7)
    lit = np.array([literal_ensemble_subset(r, K, aggregate, rng) for r in lit_ranks])
    combos = {c: i for i, c in enumerate(itertools.combinations(range(N), K))}
    table = np.array(
        [
            np.bincount([combos[tuple(r)] for r in fast], minlength=len(combos)),
            np.bincount([combos[tuple(r)] for r in lit], minlength=len(combos)),
        ]
    )
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > P_MIN
