"""The random-effects model of real ranks (beyond the paper), on data where the truth is known."""

import numpy as np
import pytest
from cli_runs import cli_estimate
from scipy.stats import rankdata

import ensstab_dask as es
from ensstab_dask.indices import stability_of_subsets
from ensstab_dask.models.random_effects import random_effects_curve
from ensstab_dask.models.rank_effects import RandomEffects, single_stability_across_copies
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.selectors import default_selector
from ensstab_dask.simulator.kernel import top_subsets

N, K = 300, 10


def additive_world(copies, members, seed):
    """A world that satisfies the model: feature f of member j of copy c has the value
    mu_f + d_cf + e_cjf (d normal per copy and feature, e normal), and an ensemble keeps
    the n_target smallest means. What the model must predict is this world's naive check."""
    rng = np.random.default_rng(seed)
    d = rng.standard_normal((copies, 1, N)) * 20.0
    e = rng.standard_normal((copies, members, N)) * 60.0
    return MU + d + e


MU = np.r_[np.linspace(1.0, 60.0, 25), np.full(N - 25, 150.0)]


def true_curve(m_list, copies=400, seed=99):
    """The naive check of the world itself, with many copies."""
    out = []
    for m in m_list:
        values = additive_world(copies, m, seed).mean(axis=1)
        out.append(stability_of_subsets(np.argpartition(values, K - 1, axis=1)[:, :K], N, "jaccard"))
    return np.array(out)


def test_moments_are_recovered():
    rng = np.random.default_rng(0)
    G, B = 40, 20
    mu = rng.normal(100, 30, N)
    values = mu + rng.standard_normal((G, 1, N)) * 4.0 + rng.standard_normal((G, B, N)) * 10.0
    fit = RandomEffects.fit(values)
    # Per-feature estimates from 40 x 20 values, averaged over 300 features: tight.
    assert np.mean(fit.within_var) == pytest.approx(100.0, rel=4 * np.sqrt(2 / (G * (B - 1) * N)))
    assert np.mean(fit.between_var) == pytest.approx(16.0, rel=0.15)
    assert np.abs(fit.mu - mu).mean() < 4 * np.sqrt((16 + 100 / B) / G)


def test_predictions_from_10_copies_are_unbiased_where_the_model_holds():
    """Twelve independent sets of 10 copies of 10 from a world the model describes: the
    mean prediction is within 4 standard errors of the truth at m = 5 and 10; at m = 30
    it is biased up by less than one prediction's spread (measured: +0.034 with an sd of
    0.034; it shrinks with more copies: +0.009 with 40). The docs state this bias."""
    m_list = [5, 10, 30]
    truth = true_curve(m_list)
    preds = np.array(
        [
            [RandomEffects.fit(additive_world(10, 10, seed)).stability(m, K, m_stability=400, seed=1) for m in m_list]
            for seed in range(5, 17)
        ]
    )
    mean, sd = preds.mean(axis=0), preds.std(axis=0, ddof=1)
    se = sd / np.sqrt(len(preds))
    assert np.all(np.abs(mean[:2] - truth[:2]) <= 4 * se[:2]), (mean, truth, se)
    assert 0 <= mean[2] - truth[2] <= sd[2] + 4 * se[2], (mean, truth, sd)


def test_the_copy_bootstrap_interval_covers_the_truth():
    m_list = [5, 10]
    truth = true_curve(m_list)
    covered = 0
    for seed in range(20, 28):
        band = random_effects_curve(additive_world(10, 10, seed), K, m_list, n_boot=40, seed=seed)
        covered += int(np.all((band["lower"] <= truth) & (truth <= band["upper"])))
    # 95 % intervals, two sizes each: 8 trials with P(cover both) >= 0.9 give >= 5 with
    # probability above 0.99.
    assert covered >= 5, covered


def test_single_selectors_are_compared_across_copies_only():
    r = rankdata(additive_world(6, 4, seed=2), axis=2, method="ordinal").astype(np.int64)
    subs = top_subsets(r.reshape(24, N), K).reshape(6, 4, K)
    want = np.mean([stability_of_subsets(subs[:, j], N, "jaccard") for j in range(4)])
    assert single_stability_across_copies(subs, N) == pytest.approx(want)
    assert single_stability_across_copies(subs, N, copy_ids=np.arange(6)) == pytest.approx(want)
    # A bootstrap replicate (copy 0 twice): every pair of rows from different copies, by brute force.
    ids = np.array([0, 0, 1, 2, 3, 4, 5])
    rows = subs[ids]

    def jac(a, b):
        return len(set(a) & set(b)) / len(set(a) | set(b))

    brute = np.mean(
        [
            np.mean([jac(rows[a, j], rows[b, j]) for a in range(7) for b in range(7) if ids[a] != ids[b]])
            for j in range(4)
        ]
    )
    assert single_stability_across_copies(rows, N, copy_ids=ids) == pytest.approx(brute)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="ranks must have shape"):
        RandomEffects.fit(np.zeros((1, 5, N)))
    with pytest.raises(ValueError, match="at least 2 distinct copies"):
        RandomEffects.fit(np.zeros((3, 5, N)), copy_ids=[1, 1, 1])
    with pytest.raises(ValueError, match="not the simulated selector"):
        es.simulate_rankings(50, 4, 20, 0.5, variant="random-effects")


@pytest.mark.slow
def test_estimate_with_the_random_effects_model():
    data = make_microarray(n_feature=300, n_informative=15, effect=2.0, seed=3)
    kw = dict(
        selector=default_selector(20),
        m_ensemble=(1, 3, 8),
        m_stability=12,
        n_runs=24,
        repeats=4,
        seed=1,
        n_boot=40,
        client="synchronous",
    )
    onda = es.estimate(data.X, data.y, 10, model="onda", **kw)
    est = es.estimate(data.X, data.y, 10, model="random-effects", **kw)
    # The paper's runs and 10 copies of 10; no check copies (its self-check refits on half of each copy).
    assert est.real_runs == onda.real_runs - 40 + 100 and est.prediction.model == "random-effects"
    assert est.self_check.sizes == (10,) and est.self_check.copies == 10 and est.fit is None
    c = est.curve
    assert (c["stability_lower"] <= c["stability"]).all() and (c["stability"] <= c["stability_upper"]).all()
    assert "random-effects model of the real ranks" in est.summary()
    assert est.to_dict()["model"] == "random-effects"
    with pytest.raises(ValueError, match="model='random-effects' supports"):
        es.estimate(data.X, data.y, 10, model="random-effects", index="nogueira", **kw)


def test_cli_estimate_with_the_random_effects_model(tmp_path, capsys):

    from ensstab_dask.cli import main as cli_main

    data = make_microarray(n_feature=300, n_informative=15, effect=2.0, seed=3)
    options = "--n-target 10 --m-ensemble 1,3 --m-stability 12 --n-runs 24 --repeats 4 --n-boot 0 --n-estimators 20"
    d = cli_estimate(tmp_path, capsys, data.X, data.y, *options.split(), "--model", "random-effects")
    assert d["model"] == "random-effects" and d["real_runs"] == 24 + 12 + 100
    assert (
        cli_main(
            [
                "sweep",
                "--n-feature",
                "300",
                "--n-target",
                "10",
                "--n-useful",
                "20",
                "--p",
                "0.5",
                "--model",
                "random-effects",
            ]
        )
        == 2
    )
    assert "invalid choice" in capsys.readouterr().err
