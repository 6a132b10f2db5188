"""The measured curve's ensembles: random circular orders of each copy's members and their arcs."""

import itertools

import numpy as np
import pytest
from synthetic import real_like_copies

from ensstab_dask import make_rng
from ensstab_dask.models import member_arcs
from ensstab_dask.models.measured import copy_similarities
from ensstab_dask.models.member_arcs import ArcDesign, arc_tops, pair_similarities

RANKS = real_like_copies(6, 8, 3)  # 6 copies of 8 weak selectors, 500 features
TIED = real_like_copies(6, 8, 4, tau=0.5, sigma=1.5, step=1.0, duplicated=20)  # scores tie everywhere


def _by_hand(ranks, design: ArcDesign, d: int, g: int) -> np.ndarray:
    """Copy g's arcs in draw d, written out: its stream's order of the members and of the
    features, each arc's summed ranks, the k lowest, ties to the first visited."""
    B, n = ranks.shape[1:]
    rng = make_rng(design.seed, d, g)
    order, visit = rng.permutation(B), rng.permutation(n)
    out = []
    for m in design.sizes:
        rows = []
        for a in range(B):
            members = order[(a + np.arange(m)) % B] if m < B else order
            score = ranks[g, members][:, visit].sum(axis=0)
            keep = np.lexsort((np.arange(n), score))[: design.n_target]  # by score, then visited position
            rows.append(np.sort(visit[keep]))
        out.append(rows)
    return np.array(out)


@pytest.mark.parametrize("ranks", [RANKS, TIED], ids=["continuous", "tied"])
def test_every_arc_keeps_what_its_members_sum_to(ranks):
    design = ArcDesign.of(5, (1, 3, 7, 8), 2, 11)
    got = np.sort(arc_tops(ranks, design), axis=-1)
    for d, g in itertools.product(range(2), range(len(ranks))):
        np.testing.assert_array_equal(got[g, d], _by_hand(ranks, design, d, g))


@pytest.mark.parametrize("aggregate", ["mean_rank", "vote"])
def test_leaving_out_the_features_no_arc_can_keep_changes_nothing(monkeypatch, aggregate):
    design = ArcDesign.of(5, range(1, 9), 3, 2, aggregate=aggregate)
    pruned = arc_tops(TIED, design)
    every = member_arcs._kept_columns
    monkeypatch.setattr(member_arcs, "_kept_columns", lambda mask, visit, n: every(np.ones_like(mask), visit, n))
    np.testing.assert_array_equal(np.sort(pruned, -1), np.sort(arc_tops(TIED, design), -1))


def test_a_copy_s_arcs_do_not_depend_on_its_batch():
    design = ArcDesign.of(5, range(1, 7), 2, 7, members=6)
    whole = arc_tops(TIED, design)
    parts = [arc_tops(TIED[g : g + 4], design, range(g, min(g + 4, 6))) for g in (0, 4)]
    np.testing.assert_array_equal(whole, np.concatenate(parts))
    assert whole.shape == (6, 2, 6, 6, 5)  # copies, draws, sizes, arcs (the first 6 members), kept
    with pytest.raises(ValueError, match=r"sizes must lie in \[1, 6\]"):
        arc_tops(TIED, ArcDesign.of(5, (7,), 1, 0, members=6))


def test_a_tie_is_broken_uniformly_at_random():
    """Two members that rank the features in opposite orders: at m = 2 every feature's sum
    is n + 1, and each feature is kept equally often (4 SE)."""
    n, k, draws = 40, 3, 2000
    ranks = np.stack([np.arange(1, n + 1), np.arange(n, 0, -1)])[None]
    tops = arc_tops(ranks, ArcDesign.of(k, (1, 2), draws, 0))[0, :, :, 0]  # (draws, sizes, k): one arc each
    assert np.all(np.sort(tops[:, 0], -1) == [0, 1, 2]) or np.all(np.isin(tops[:, 0], [0, 1, 2, 37, 38, 39]))
    counts = np.bincount(tops[:, 1].ravel(), minlength=n)
    expected = draws * k / n
    assert np.all(np.abs(counts - expected) < 4 * np.sqrt(expected)), counts


def test_the_similarities_are_the_pairs_of_the_copies_arcs():
    design = ArcDesign.of(5, (2, 8), 3, 1)
    tops = arc_tops(RANKS, design)
    sim = pair_similarities(tops, RANKS.shape[-1], "jaccard")
    g, h, i = 1, 4, 0
    shared = [len(np.intersect1d(a, b)) for a, b in zip(tops[g, :, i].reshape(-1, 5), tops[h, :, i].reshape(-1, 5))]
    assert sim[i, g, h] == pytest.approx(np.mean([s / (10 - s) for s in shared]))
    assert np.isnan(sim[i, g, g]) and sim[i, g, h] == sim[i, h, g]
    np.testing.assert_array_equal(sim, copy_similarities(RANKS, 5, (2, 8), draws=3, seed=1), strict=False)
