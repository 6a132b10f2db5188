"""The two-level model beyond the paper: its h, fitted from real copies, in the estimate.

The kernel itself is tested against the literal model in test_kernel.py.
"""

import numpy as np
import pytest
from cli_runs import cli_estimate
from small_problem import DATA, SMALL

import ensstab_dask as es
from ensstab_dask.simulator.estimators import estimate_h, within_copy_stability
from ensstab_dask.simulator.kernel import top_subsets

SMALL = {k: v for k, v in SMALL.items() if k != "model"}


def test_h_is_recovered_from_copies_of_a_known_two_level_selector():
    """Copies simulated at a known h: the fitted h must lie where a within-copy stability
    4 standard errors either side of the observed one would put it, and contain the truth."""
    N, K, u, p, h_true, G, B = 800, 10, 50, 0.6, 25, 60, 5
    ranks = es.simulate_rankings(N, K, u, p, size=G * B, seed=21, variant="two-level", h=h_true, copy_size=B)
    subsets = top_subsets(ranks, K).reshape(G, B, K)
    per_copy = np.array([within_copy_stability(c[None], N) for c in subsets])
    jw, se = per_copy.mean(), per_copy.std(ddof=1) / np.sqrt(G)
    assert jw == pytest.approx(within_copy_stability(subsets, N))
    fit = estimate_h(jw, N, K, u, p, design=(200, B), seed=3)
    lo = estimate_h(jw + 4 * se, N, K, u, p, design=(200, B), seed=3).h
    hi = estimate_h(jw - 4 * se, N, K, u, p, design=(200, B), seed=3).h
    assert lo <= fit.h <= hi and lo <= h_true <= hi, (lo, fit.h, hi)
    assert hi - lo < u - K  # the statistic says something about h


def test_h_saturates_at_its_bounds_and_says_so():
    N, K, u, p = 500, 10, 40, 0.7
    top = estimate_h(1.0, N, K, u, p, seed=0)
    bottom = estimate_h(0.0, N, K, u, p, seed=0)
    assert (top.h, top.at_boundary) == (K, True) and (bottom.h, bottom.at_boundary) == (u, True)
    with pytest.raises(ValueError, match="subsets must have shape"):
        within_copy_stability(np.zeros((3, 10)), N)


@pytest.mark.slow
def test_two_level_estimate_fits_h_counts_its_runs_and_leaves_the_paper_model_alone():
    onda = es.estimate(DATA.X, DATA.y, 10, client="synchronous", model="onda", **SMALL)
    same = es.estimate(DATA.X, DATA.y, 10, client="synchronous", model="onda", **SMALL)
    two = es.estimate(DATA.X, DATA.y, 10, client="synchronous", model="two-level", **SMALL)
    np.testing.assert_array_equal(onda.curve["stability"].values, same.curve["stability"].values)
    assert onda.prediction.h is None and onda.prediction.model == "onda"
    # Same real runs for u and p, plus 4 copies x 5 weak selectors for h.
    assert two.real_runs == onda.real_runs + 20
    assert (two.single.n_useful, two.fit.p) == (onda.single.n_useful, onda.fit.p)
    assert 10 <= two.prediction.h <= two.single.n_useful and two.curve.attrs["simulator_h"] == two.prediction.h
    lo, hi = two.prediction.intervals["h"]
    assert lo <= two.prediction.h <= hi
    # m = 1 does not depend on h (a copy of one selector draws S_m from all of S'); the
    # band is the paper model's widened by h's uncertainty, never narrowed.
    c = two.curve
    assert (c["stability_lower"] <= c["stability"]).all() and (c["stability"] <= c["stability_upper"]).all()
    d = two.to_dict()
    assert d["model"] == "two-level" and d["h"] == two.prediction.h and d["h_interval"] == [lo, hi]
    assert "(h, two-level model): " in two.summary()


def test_cli_estimate_with_the_two_level_model(tmp_path, capsys):
    options = "--n-target 10 --m-ensemble 1,3 --m-stability 12 --n-runs 24 --repeats 4 --n-boot 0 --n-estimators 20"
    d = cli_estimate(tmp_path, capsys, DATA.X, DATA.y, *options.split(), "--model", "two-level")
    assert d["model"] == "two-level" and 10 <= d["h"] <= d["n_useful"] and d["settings"]["model"] == "two-level"
