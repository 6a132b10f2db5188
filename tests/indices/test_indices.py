"""Stability indices: hand-computed examples, identities and the Nogueira variance."""

import math

import numpy as np
import pytest
from oracle import literal_jaccard
from scipy import stats

import ensstab_dask as es
from ensstab_dask.indices import INDICES

# Three subsets of 6 features, worked by hand:
#   a = {0,1,2}, b = {1,2,3}, c = {0,1,4}
#   |a&b| = 2, |a&c| = 2, |b&c| = 1; unions 4, 4, 5
SUBSETS = [[0, 1, 2], [1, 2, 3], [0, 1, 4]]
N = 6


def test_jaccard_by_hand():
    # (2/4 + 2/4 + 1/5) / 3 = 0.4
    assert es.stability(SUBSETS, N) == pytest.approx(0.4)
    assert es.stability(SUBSETS, N, index="jaccard") == pytest.approx(literal_jaccard(SUBSETS))


def test_dice_by_hand():
    # 2*2/6, 2*2/6, 2*1/6 -> (2/3 + 2/3 + 1/3) / 3 = 5/9
    assert es.stability(SUBSETS, N, index="dice") == pytest.approx(5 / 9)


def test_kuncheva_by_hand():
    # (r*6 - 9) / (3*3): r=2 -> 1/3, r=2 -> 1/3, r=1 -> -1/3; mean 1/9
    assert es.stability(SUBSETS, N, index="kuncheva") == pytest.approx(1 / 9)


def test_nogueira_by_hand():
    # p_f = (2/3, 1, 2/3, 1/3, 1/3, 0); mean p(1-p) = (4 * 2/9) / 6 = 4/27
    # s^2 mean = 3/2 * 4/27 = 2/9; k = 3 -> denominator (1/2)(1/2) = 1/4
    # 1 - (2/9) / (1/4) = 1/9
    assert es.stability(SUBSETS, N, index="nogueira") == pytest.approx(1 / 9)


def test_unequal_sizes():
    assert es.stability([[0], [0, 1]], 4) == pytest.approx(0.5)
    assert es.stability([[0], [0, 1]], 4, index="dice") == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="same size"):
        es.stability([[0], [0, 1]], 4, index="kuncheva")


def test_input_forms_agree():
    z = np.zeros((3, N), dtype=bool)
    for i, s in enumerate(SUBSETS):
        z[i, s] = True
    for index in INDICES:
        ref = es.stability(SUBSETS, N, index=index)
        assert es.stability(np.array(SUBSETS), N, index=index) == pytest.approx(ref)
        assert es.stability(z, N, index=index) == pytest.approx(ref)
        assert es.stability([set(s) for s in SUBSETS], N, index=index) == pytest.approx(ref)


def test_identical_subsets_have_stability_one():
    s = [[1, 4, 7]] * 5
    for index in INDICES:
        assert es.stability(s, 10, index=index) == pytest.approx(1.0)


def test_nogueira_equals_mean_pairwise_kuncheva_for_equal_sizes():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n, k, m = rng.integers(5, 40), None, rng.integers(2, 12)
        k = int(rng.integers(1, n))
        subsets = [rng.choice(n, k, replace=False) for _ in range(m)]
        assert es.stability(subsets, int(n), index="nogueira") == pytest.approx(
            es.stability(subsets, int(n), index="kuncheva"), abs=1e-12
        )


def reference_nogueira_variance(z):
    """The per-run loop of the authors' Python reference code, written out."""
    M, d = z.shape
    pf = z.mean(axis=0)
    k = z.sum(axis=1)
    kbar = k.mean()
    denom = (kbar / d) * (1 - kbar / d)
    stab = 1 - (M / (M - 1)) * np.mean(pf * (1 - pf)) / denom
    phi = np.zeros(M)
    for i in range(M):
        phi[i] = (1 / denom) * (
            np.mean(z[i] * pf)
            - (k[i] * kbar) / d**2
            + (stab / 2) * ((2 * k[i] * kbar) / d**2 - k[i] / d - kbar / d + 1)
        )
    return stab, (4 / M**2) * np.sum((phi - phi.mean()) ** 2)


def test_nogueira_variance_matches_reference_formula_with_unequal_sizes():
    rng = np.random.default_rng(3)
    z = rng.random((12, 30)) < 0.3
    res = es.nogueira_stability(z, 30)
    stab, var = reference_nogueira_variance(z.astype(float))
    assert res.stability == pytest.approx(stab) and res.variance == pytest.approx(var)
    half = stats.norm.ppf(0.975) * math.sqrt(var)
    assert res.lower == pytest.approx(stab - half) and res.upper == pytest.approx(stab + half)


def test_nogueira_variance_estimates_the_sampling_variance():
    # Many independent experiments of M runs of one simulated selector: the mean of the
    # variance estimates must match the empirical variance of the estimator. The R
    # version's sign error would double it. Empirical variance has relative standard
    # error sqrt(2/(R-1)) ~ 1.6 %; 4 of them, plus 2 % for the delta method's bias at
    # M = 30 (measured: about -3 % +- 2.6 % over 3000 experiments).
    Nf, K, u, p, M, R = 100, 10, 20, 0.5, 30, 8000
    ranks = es.simulate_rankings(Nf, K, u, p, size=M * R, seed=21)
    z = (ranks <= K).reshape(R, M, Nf)
    stabs, variances = [], []
    for r in range(R):
        res = es.nogueira_stability(z[r], Nf)
        stabs.append(res.stability)
        variances.append(res.variance)
    ratio = np.mean(variances) / np.var(stabs, ddof=1)
    assert abs(ratio - 1) < 4 * math.sqrt(2 / (R - 1)) + 0.02, ratio
    # And the 95 % interval covers the population value about 95 % of the time.
    truth = np.mean(stabs)
    cover = np.mean([abs(s - truth) <= 1.96 * math.sqrt(v) for s, v in zip(stabs, variances)])
    assert abs(cover - 0.95) < 4 * math.sqrt(0.95 * 0.05 / R) + 0.01


def test_nogueira_two_sample_test():
    Nf, K, M = 200, 10, 40
    a = es.simulate_rankings(Nf, K, 20, 0.6, size=M, seed=1) <= K
    b = es.simulate_rankings(Nf, K, 20, 0.6, size=M, seed=2) <= K
    c = es.simulate_rankings(Nf, K, 100, 0.2, size=M, seed=3) <= K
    same = es.nogueira_test(a, b, Nf)
    diff = es.nogueira_test(a, c, Nf)
    assert not same.reject and same.pvalue > 0.05
    assert diff.reject and diff.pvalue < 1e-6 and diff.statistic < 0
    # Under H0 the test rejects about alpha of the time.
    rejections = 0
    R = 400
    ranks = es.simulate_rankings(Nf, K, 20, 0.6, size=2 * M * R, seed=9) <= K
    for r in range(R):
        rejections += es.nogueira_test(
            ranks[2 * r * M : (2 * r + 1) * M], ranks[(2 * r + 1) * M : (2 * r + 2) * M], Nf
        ).reject
    rate = rejections / R
    assert abs(rate - 0.05) < 4 * math.sqrt(0.05 * 0.95 / R)


def test_pairwise_similarity_matrix():
    sim = es.pairwise_similarity(SUBSETS, N)
    assert sim.shape == (3, 3)
    assert sim[0, 1] == pytest.approx(0.5) and sim[1, 2] == pytest.approx(0.2)
    assert np.allclose(np.diag(sim), 1.0)


@pytest.mark.parametrize(
    "subsets, n_feature, index, exc, match",
    [
        ([[0, 1]], 5, "jaccard", ValueError, "at least 2"),
        ([[0, 1], [1, 7]], 5, "jaccard", ValueError, r"outside \[0, 5\)"),
        ([[0, 1], [1, -1]], 5, "jaccard", ValueError, "outside"),
        ([[0, 0], [1, 2]], 5, "jaccard", ValueError, "duplicate"),
        ([[0, 1], [1, 2]], 5, "cosine", ValueError, "index must be one of"),
        ([[0.5, 1], [1, 2]], 5, "jaccard", TypeError, "integer feature indices"),
        ([[], [1, 2]], 5, "jaccard", ValueError, "empty"),
        ([[0, 1, 2, 3, 4]] * 2, 5, "kuncheva", ValueError, "0 < subset size"),
        ([[0, 1], [1, 2]], 0, "jaccard", ValueError, "n_feature must be >= 1"),
        ("abc", 5, "jaccard", TypeError, "sequence of subsets"),
    ],
)
def test_bad_input(subsets, n_feature, index, exc, match):
    with pytest.raises(exc, match=match):
        es.stability(subsets, n_feature, index=index)


def test_bad_alpha():
    with pytest.raises(ValueError, match=r"alpha must be in \(0.0, 1.0\)"):
        es.nogueira_stability(SUBSETS, N, alpha=1.5)


def test_fast_path_of_the_simulations_equals_the_public_function():
    from ensstab_dask.indices import stability_of_subsets

    rng = np.random.default_rng(0)
    subsets = np.sort(np.stack([rng.choice(300, 10, replace=False) for _ in range(30)]), axis=1)
    for index in INDICES:
        assert stability_of_subsets(subsets, 300, index) == es.stability(subsets, 300, index=index)


def test_the_u_statistic_se_is_never_0_where_the_pairs_differ():
    """With few units the unbiased variance can come out negative (this kernel of 4 does);
    the jackknife over units stands in, so a spread that exists is never an SE of 0."""
    from ensstab_dask.indices import u_statistic_se

    rng = np.random.default_rng(0)
    for _ in range(10):  # the tenth symmetric kernel of this stream has a negative estimate
        a = rng.random((4, 4))
    h = (a + a.T) / 2
    off = h.copy()
    np.fill_diagonal(off, 0.0)
    loo = (off.sum() - 2 * off.sum(axis=1)) / (3 * 2)  # the mean over pairs without each unit
    jackknife = math.sqrt(3 / 4 * ((loo - loo.mean()) ** 2).sum())
    assert u_statistic_se(h) == pytest.approx(jackknife) and jackknife > 0
    assert u_statistic_se(np.full((5, 5), 0.3)) == pytest.approx(0.0, abs=1e-6)  # every pair alike: no spread
