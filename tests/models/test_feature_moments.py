"""Beyond the measured members: the features' rank moments, and the law beside them."""

import warnings

import numpy as np
import pytest

from ensstab_dask import rank_scores
from ensstab_dask.aggregation import aggregate_rankings
from ensstab_dask.estimates.stages.pipeline import estimate_from_runs
from ensstab_dask.indices import similarity_matrix
from ensstab_dask.models.feature_moments import CopyMoments, moment_curve, moment_prediction
from ensstab_dask.real.runs import runs_from_copies
from ensstab_dask.settings import EstimateSettings


def copies_of(n_copies, members, *, tau, sigma, top, signal, n_feature=300, seed=0):
    """Ranks (n_copies, members, n_feature) of weak selectors whose scores are a graded
    signal, a copy's own shift (``tau``) and the member's noise (``sigma``), clipped at 0."""
    rng = np.random.default_rng(seed)
    mu = np.zeros(n_feature)
    mu[:signal] = np.linspace(top, 0.0, signal, endpoint=False)
    shift = tau * rng.standard_normal((n_copies, 1, n_feature))
    scores = np.maximum(mu + shift + sigma * rng.standard_normal((n_copies, members, n_feature)), 0.0)
    return rank_scores(scores, seed=rng).astype(np.int32)


def truth(m, k, n_copies=300, **regime):
    """The stability of ensembles of ``m`` over ``n_copies`` independent copies, and its SE."""
    from ensstab_dask.indices import u_statistic_se

    ranks = copies_of(n_copies, m, seed=99, **regime)
    z = np.zeros((n_copies, ranks.shape[-1]))
    z[np.arange(n_copies)[:, None], aggregate_rankings(ranks, k, seed=1)] = 1.0
    sim = similarity_matrix(z, ranks.shape[-1], "jaccard")
    return sim[~np.eye(n_copies, dtype=bool)].mean(), u_statistic_se(sim)


STEEP = dict(tau=0.2, sigma=2.0, top=3.0, signal=40)  # member noise dominates: the curve climbs
FLAT = dict(tau=1.0, sigma=0.3, top=3.0, signal=40)  # the copies' own shifts dominate: it is flat


def test_at_the_largest_measured_size_the_moments_are_the_copies_own_ensembles():
    ranks = copies_of(8, 12, seed=1, **STEEP)
    moments = CopyMoments.of(ranks, 10, "mean_rank")
    # lambda = 1 at m = B: each pseudo-copy is its copy's ensemble of all its members.
    z = np.zeros((8, 300))
    z[np.arange(8)[:, None], np.argsort(ranks.sum(axis=1), axis=1, kind="stable")[:, :10]] = 1.0
    sim = similarity_matrix(z, 300, "jaccard")
    assert moment_curve(moments, [12], 10, "jaccard", seed=0)[0] == pytest.approx(sim[~np.eye(8, dtype=bool)].mean())


def test_the_prediction_climbs_where_members_disagree_and_stays_flat_where_copies_do():
    for regime, climbs in ((STEEP, True), (FLAT, False)):
        moments = CopyMoments.of(copies_of(10, 20, seed=2, **regime), 10, "mean_rank")
        (at_b,) = moment_curve(moments, [20], 10, "jaccard", seed=0)
        point, se = moment_prediction(moments, [200], 10, "jaccard", seed=0)
        rise = (point[0] - at_b) / se[0]
        assert (rise > 3) if climbs else (abs(rise) < 2), (regime, at_b, point, se)


def test_the_prediction_tracks_the_truth_beyond_the_measured_sizes():
    reps = 24
    points = np.array(
        [
            moment_prediction(
                CopyMoments.of(copies_of(10, 20, seed=100 + r, **STEEP), 10, "mean_rank"), [100], 10, "jaccard", seed=r
            )[0][0]
            for r in range(reps)
        ]
    )
    true, true_se = truth(100, 10, **STEEP)
    tolerance = 4 * np.hypot(points.std(ddof=1) / np.sqrt(reps), true_se)  # 4 SE of the comparison
    assert abs(points.mean() - true) <= tolerance, (points.mean(), true, tolerance)


def _estimate(ranks, **given):
    settings = EstimateSettings(
        n_feature=ranks.shape[-1], n_target=10, m_ensemble=(1, 10, 20, 50, 200), n_boot=20, seed=5, **given
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimate_from_runs(runs_from_copies(ranks, 10), settings, client="synchronous", copy_ranks=ranks)


def test_an_aggregate_that_is_no_mean_of_its_members_is_extrapolated_by_the_law_alone():
    ranks = copies_of(10, 20, seed=3, **STEEP)
    assert CopyMoments.of(ranks, 10, "median_rank") is None
    assert CopyMoments.of(ranks[:3], 10, "mean_rank") is None  # 3 copies: no centre without the pair and one more
    est = _estimate(ranks, aggregate="median_rank")
    assert est.curve.attrs["beyond_by"] == "law" and "stability_law" not in est.curve
    assert "a - b sqrt(c + 1/m) with a model band" in est.prediction.source
    assert _estimate(ranks, aggregate="vote").curve.attrs["beyond_by"] == "moments"


def test_where_the_two_predictions_disagree_the_interval_covers_both_and_the_answer_says_so():
    # 150 weakly graded features and little copy noise: the curve still climbs past 200,
    # and the law, bent over by the sizes measured, says far less than the moments.
    ranks = copies_of(10, 20, tau=0.05, sigma=1.0, top=2.0, signal=150, seed=4)
    est = _estimate(ranks)
    c = est.curve
    undecided = c["undecided"].values
    assert undecided.any() and not undecided[c["m_ensemble"].values <= 20].any()
    point, law = c["stability"].values[undecided], c["stability_law"].values[undecided]
    assert (c["stability_lower"].values[undecided] <= np.minimum(point, law)).all()
    assert (c["stability_upper"].values[undecided] >= np.maximum(point, law)).all()
    first = int(c["m_ensemble"].values[undecided][0])
    answer = est.summary()
    assert f"From m = {first} the data cannot tell" in answer
    assert f"{10 * (first - 20):,} more real runs" in answer and "the 200 made reused" in answer
    assert "up to the 200 predicted" not in answer  # no plateau is read where the data cannot tell


def test_where_the_two_agree_the_moments_alone_make_the_interval():
    est = _estimate(copies_of(10, 20, seed=6, **FLAT))
    c = est.curve
    assert not c["undecided"].values.any()
    beyond = c["m_ensemble"].values > 20
    half = (c["stability_upper"] - c["stability_lower"]).values[beyond] / 2
    from scipy import stats

    np.testing.assert_allclose(half, stats.t.ppf(0.975, 9) * c["stability_std"].values[beyond])
    assert "Believe it? Yes" in est.summary()
