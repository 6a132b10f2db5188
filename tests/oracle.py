"""The literal algorithms of docs/method.md, written plainly: the oracles of the test suite.

Nothing here is fast or clever on purpose. The benchmark also times
:func:`literal_rankings` as the baseline the fast kernel is compared with.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np


def literal_ranking(n_feature, n_target, n_useful, p, rng):
    """One simulated weak selector, exactly as docs/method.md section 2 states it."""
    s_m = rng.choice(n_useful, size=n_target, replace=False).tolist()
    return _literal_ranking_given(s_m, n_feature, p, rng)


def literal_rankings(n_feature, n_target, n_useful, p, size, seed):
    rng = np.random.default_rng(seed)
    return np.array([literal_ranking(n_feature, n_target, n_useful, p, rng) for _ in range(size)], dtype=np.int64)


def exact_ranking_distribution(n_feature, n_target, n_useful, p):
    """Exact probability of every full ranking under the literal algorithm.

    Enumerates S_m and every sequence of picks, with exact rational arithmetic when p is
    a Fraction. Returns a dict mapping the tuple ``rank`` (rank of each feature) to its
    probability. Only for tiny n_feature.
    """
    p = Fraction(p)
    dist: dict[tuple, Fraction] = {}
    subsets = list(itertools.combinations(range(n_useful), n_target))
    w_subset = Fraction(1, len(subsets))

    def walk(remaining_in, remaining_out, order, prob):
        if not remaining_in and not remaining_out:
            rank = [0] * n_feature
            for pos, f in enumerate(order, start=1):
                rank[f] = pos
            key = tuple(rank)
            dist[key] = dist.get(key, Fraction(0)) + prob
            return
        if remaining_in and remaining_out:
            p_in, p_out = p, 1 - p
        elif remaining_in:
            p_in, p_out = Fraction(1), Fraction(0)
        else:
            p_in, p_out = Fraction(0), Fraction(1)
        if p_in:
            for f in remaining_in:
                walk(remaining_in - {f}, remaining_out, order + [f], prob * p_in / len(remaining_in))
        if p_out:
            for f in remaining_out:
                walk(remaining_in, remaining_out - {f}, order + [f], prob * p_out / len(remaining_out))

    for s in subsets:
        walk(frozenset(s), frozenset(range(n_feature)) - frozenset(s), [], w_subset)
    return dist


def literal_ensemble_subset(ranks, n_target, aggregate, rng):
    """Aggregate one ensemble's rankings, literally, with a uniform random tie-break."""
    m, n = ranks.shape
    if aggregate == "mean_rank":
        score = [Fraction(int(ranks[:, f].sum()), m) for f in range(n)]
    elif aggregate == "median_rank":
        score = [Fraction(int(np.sort(ranks[:, f])[(m - 1) // 2] + np.sort(ranks[:, f])[m // 2]), 2) for f in range(n)]
    elif aggregate == "vote":
        score = [-int((ranks[:, f] <= n_target).sum()) for f in range(n)]
    elif aggregate == "reciprocal_rank":
        score = [-sum(Fraction(1, int(r)) for r in ranks[:, f]) for f in range(n)]
    else:
        raise ValueError(aggregate)
    tiebreak = rng.permutation(n)
    order = sorted(range(n), key=lambda f: (score[f], tiebreak[f]))
    return sorted(order[:n_target])


def literal_jaccard(subsets):
    subsets = [set(s) for s in subsets]
    total, pairs = 0.0, 0
    for a, b in itertools.combinations(subsets, 2):
        total += len(a & b) / len(a | b)
        pairs += 1
    return total / pairs


def literal_uniform_threshold(n_feature, n_target, n_runs, rng):
    counts = [0] * n_feature
    for _ in range(n_runs):
        for f in rng.choice(n_feature, size=n_target, replace=False):
            counts[f] += 1
    return max(counts)


def literal_two_level_rankings(n_feature, n_target, n_useful, h, p, copy_size, n_copies, seed):
    """The two-level model (docs/two_level_model.md), literally: each copy draws its H,
    a uniform h-subset of S', and each of its weak selectors draws S_m from H and then
    ranks as docs/method.md section 2 states."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_copies):
        H = rng.choice(n_useful, size=h, replace=False)
        for _ in range(copy_size):
            s_m = H[rng.choice(h, size=n_target, replace=False)]
            rows.append(_literal_ranking_given(s_m.tolist(), n_feature, p, rng))
    return np.array(rows, dtype=np.int64)


def _literal_ranking_given(s_m, n_feature, p, rng):
    """docs/method.md section 2's ranking loop, given the preferred set ``s_m``."""
    remaining_in = list(s_m)
    remaining_out = [f for f in range(n_feature) if f not in s_m]
    rank = [0] * n_feature
    for i in range(1, n_feature + 1):
        r = rng.random()
        if (r < p and not remaining_in) or (r >= p and remaining_out):
            s = remaining_out.pop(rng.integers(len(remaining_out)))
        else:
            s = remaining_in.pop(rng.integers(len(remaining_in)))
        rank[s] = i
    return rank


def exact_two_level_pair_distribution(n_feature, n_target, n_useful, h, p):
    """Exact probability of the rankings of two weak selectors of one copy under the
    two-level model: the pair (rank_1 + rank_2) as one tuple. Only for tiny n_feature."""
    base = exact_ranking_distribution(n_feature, n_target, h, p)  # S_m drawn from range(h)
    sets = list(itertools.combinations(range(n_useful), h))
    dist: dict[tuple, Fraction] = {}
    for H in sets:
        # A bijection sending range(h) onto H (the rest in order): the model is invariant
        # to how H's members and the others are ordered among themselves.
        sigma = list(H) + [f for f in range(n_feature) if f not in H]
        cond = {}
        for rank, prob in base.items():
            relabelled = [0] * n_feature
            for j, f in enumerate(sigma):
                relabelled[f] = rank[j]
            cond[tuple(relabelled)] = prob
        w = Fraction(1, len(sets))
        for r1, p1 in cond.items():
            for r2, p2 in cond.items():
                key = r1 + r2
                dist[key] = dist.get(key, Fraction(0)) + w * p1 * p2
    return dist


def literal_u_statistic_variance(subsets):
    """Hoeffding's variance of the mean pairwise Jaccard index of ``subsets`` (a U-statistic
    of degree 2), each zeta estimated without bias from its definition by enumerating
    distinct runs: zeta_2 = E h(a,b)^2 - theta^2, zeta_1 = E h(a,b) h(a,c) - theta^2, with
    theta^2 estimated by E h(a,b) h(c,d) over four distinct runs. Var = (2 (U-2) zeta_1 +
    zeta_2) / C(U, 2). May come out at or below 0 for few runs. Only for small U."""
    sets = [set(int(f) for f in s) for s in subsets]
    U = len(sets)

    def h(a, b):
        return len(sets[a] & sets[b]) / len(sets[a] | sets[b])

    def mean(values):
        values = list(values)
        return sum(values) / len(values)

    runs = range(U)
    theta2 = mean(h(a, b) * h(c, d) for a, b, c, d in itertools.permutations(runs, 4))
    zeta2 = mean(h(a, b) ** 2 for a, b in itertools.permutations(runs, 2)) - theta2
    zeta1 = mean(h(a, b) * h(a, c) for a, b, c in itertools.permutations(runs, 3)) - theta2
    return (2 * (U - 2) * zeta1 + zeta2) / (U * (U - 1) / 2)


def literal_jackknife_se(subsets):
    """Leave-one-run-out jackknife standard error of the mean pairwise Jaccard index."""
    U = len(subsets)
    loo = [literal_jaccard([s for j, s in enumerate(subsets) if j != i]) for i in range(U)]
    mean = sum(loo) / U
    return ((U - 1) / U * sum((v - mean) ** 2 for v in loo)) ** 0.5
