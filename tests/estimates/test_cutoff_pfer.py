"""The stable features' cutoff and PFER: Meinshausen and Buhlmann's formula both ways (as R's
stabs computes it), the finite-copies bound the list obeys, and the copies a stated PFER needs."""

import math

import numpy as np
import pytest
import xarray as xr
from scipy import stats

from ensstab_dask.estimates.stages.features import (
    CUTOFF_GRID,
    _clopper_pearson,
    copies_for_pfer,
    copies_needed,
    false_stable_bound,
    mb_cutoff,
    mb_pfer,
    selection_frequencies,
    stable_features,
    with_pfer,
)
from ensstab_dask.simulator.kernel import simulate_rankings


@pytest.mark.parametrize("q, p", [(20, 2000), (5, 100), (50, 20000), (10, 500)])
@pytest.mark.parametrize("cutoff", [0.55, 0.6, 0.75, 0.9, 1.0])
def test_mb_pfer_and_cutoff_are_the_formula_and_invert_each_other(q, p, cutoff):
    # stabs: PFER = q^2 / ((2 cutoff - 1) p), cutoff = (q^2 / (PFER p) + 1) / 2, written out here.
    assert mb_pfer(q, p, cutoff) == pytest.approx(q * q / ((2 * cutoff - 1) * p), rel=1e-15)
    assert mb_cutoff(q, p, mb_pfer(q, p, cutoff)) == pytest.approx(cutoff, rel=1e-12)
    assert mb_pfer(q, p, mb_cutoff(q, p, 1.3)) == pytest.approx(1.3, rel=1e-12)


def test_the_figures_the_docs_quote():
    assert mb_pfer(20, 2000, 0.9) == pytest.approx(0.25)
    assert mb_cutoff(20, 2000, 1.0) == pytest.approx(0.6)
    assert math.isnan(mb_pfer(20, 2000, 0.5))
    assert mb_cutoff(20, 2000, 0.1) > 1  # below q^2/p = 0.2 no cutoff bounds it (the settings refuse it)


@pytest.mark.parametrize("cutoff", [0.6, 0.75, 0.9])
def test_the_finite_copies_bound_exceeds_mb_and_tends_to_it(cutoff):
    q, p = 20, 2000
    bounds = [false_stable_bound(q, p, G, cutoff) for G in (10, 100, 1000)]
    assert all(b > mb_pfer(q, p, cutoff) for b in bounds)
    assert bounds[0] > bounds[1] > bounds[2]


def test_copies_needed_is_the_count_from_which_on_the_bound_holds():
    q, p = 20, 2000
    G = copies_needed(q, p, 0.9, 1.0)
    bounds = [false_stable_bound(q, p, g, 0.9) for g in range(1, 501)]
    assert all(b <= 1.0 for b in bounds[G - 1 :]) and bounds[G - 2] > 1.0
    assert G == 21  # 16 copies meet it once, 20 do not: the count moves in steps of ceil(0.9 G)
    assert bounds[15] <= 1.0 and bounds[19] > 1.0
    # A lower cutoff needs more copies; a looser PFER fewer.
    assert copies_needed(q, p, 0.75, 1.0) > G > copies_needed(q, p, 0.9, 2.0)


def test_no_copies_reach_the_pfer_at_mbs_own_cutoff():
    """At MB's cutoff for a PFER the finite-copies bound is above that PFER at every G."""
    q, p = 20, 2000
    assert copies_needed(q, p, mb_cutoff(q, p, 1.0), 1.0) is None
    assert copies_needed(q, p, 0.9, mb_pfer(q, p, 0.9)) is None
    cutoff, G = copies_for_pfer(q, p, 1.0)
    assert cutoff in CUTOFF_GRID and cutoff > mb_cutoff(q, p, 1.0)
    assert G == min(g for c in CUTOFF_GRID if (g := copies_needed(q, p, c, 1.0)) is not None)
    assert false_stable_bound(q, p, G, cutoff) <= 1.0


def test_clopper_pearson_is_scipys_exact_interval_and_the_beta_quantiles():
    lower, upper = _clopper_pearson(10, 0.95)
    c = np.arange(11)
    with np.errstate(invalid="ignore"):
        lo = np.where(c > 0, stats.beta.ppf(0.025, c, 11 - c), 0.0)
        hi = np.where(c < 10, stats.beta.ppf(0.975, c + 1, 10 - c), 1.0)
    np.testing.assert_allclose(lower, lo, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(upper, hi, rtol=1e-12, atol=1e-15)


def test_the_list_is_kept_at_the_cutoff_and_says_both_bounds():
    ranks = simulate_rankings(60, 5, 10, 0.8, size=10 * 8, seed=0).reshape(10, 8, 60)
    ds = selection_frequencies(ranks, 5, [1, 8], seed=1, cutoff=0.7)
    st = stable_features(ds)
    freq = ds["frequency"].sel(m_measured=8).values
    assert len(st["names"]) == int((freq >= 0.7 - 1e-12).sum()) and st["threshold"] == 0.7
    assert st["mb_pfer"] == pytest.approx(mb_pfer(5, 60, 0.7))
    assert st["expected_false_at_most"] == pytest.approx(false_stable_bound(5, 60, 10, 0.7))
    assert not {"pfer", "copies_needed", "copies_needed_cutoff"} & set(st)  # no PFER asked for: not computed
    cut = mb_cutoff(5, 60, 1.0)
    st = stable_features(with_pfer(selection_frequencies(ranks, 5, [1, 8], seed=1, cutoff=cut), 1.0))
    assert st["threshold"] == pytest.approx(cut) and st["mb_pfer"] == pytest.approx(1.0)
    assert (st["copies_needed_cutoff"], st["copies_needed"]) == copies_for_pfer(5, 60, 1.0)


def test_the_settings_check_cutoff_and_pfer_by_name():
    from ensstab_dask.settings import EstimateSettings

    problem = dict(n_feature=2000, n_target=20)
    assert EstimateSettings(**problem).cutoff == 0.9 and EstimateSettings(**problem).pfer is None
    for kwargs, message in [
        (dict(cutoff=0.5), r"cutoff must be in \(0.5, 1.0\]; got 0.5"),
        (dict(pfer=0), r"pfer must be in \(0.0, "),
        (dict(pfer=0.1), r"pfer must be at least n_target\^2/n_feature = 0.2 with n_target=20 and n_feature=2000"),
        (dict(pfer=1, cutoff=0.8), "cutoff: give it or pfer, not both"),
        # Its cutoff is 1/2 in double precision: the bound after the work was None, and the summary a TypeError.
        (dict(pfer=1e308), r"pfer is too large \(got 1e\+308\): the cutoff it sets, .* is 1/2 in double precision"),
    ]:
        with pytest.raises(ValueError, match=message):
            EstimateSettings(**problem, **kwargs)


def test_an_estimates_features_are_kept_at_its_cutoff_or_its_pfers():
    from ensstab_dask.estimates.stages.features import copy_features, cutoff_of
    from ensstab_dask.settings import EstimateSettings

    ranks = simulate_rankings(60, 5, 10, 0.8, size=10 * 20, seed=0).reshape(10, 20, 60)
    at = EstimateSettings(n_feature=60, n_target=5, cutoff=0.7)
    assert cutoff_of(at) == 0.7 and copy_features(at, ranks, None).attrs["threshold"] == 0.7
    asked = EstimateSettings(n_feature=60, n_target=5, pfer=1.0)
    assert cutoff_of(asked) == mb_cutoff(5, 60, 1.0)
    st = stable_features(copy_features(asked, ranks, None))
    assert st["threshold"] == pytest.approx(mb_cutoff(5, 60, 1.0)) and st["pfer"] == 1.0
    assert (st["copies_needed_cutoff"], st["copies_needed"]) == copies_for_pfer(5, 60, 1.0)


def test_a_pfer_one_of_several_n_target_cannot_reach_is_refused_before_the_runs():
    """Every n_target asked is checked against the PFER before any real run, not after."""
    from ensstab_dask import estimate, make_microarray

    data = make_microarray(n_feature=100, seed=0)
    with pytest.raises(ValueError, match=r"pfer must be at least .* n_target=10"):
        estimate(data.X, data.y, [5, 10], pfer=0.5, client="tcp://127.0.0.1:9", progress=False)


def test_copies_already_enough_at_another_cutoff_are_advised_as_that_cutoff():
    """With 30 copies measured, a PFER of 1 needs no more copies: the lowest cutoff of the grid
    those 30 bound it at is advised, and no number of copies below those made."""
    from ensstab_dask.estimates.words.features import _advice
    from ensstab_dask.wording import python

    q, p = 20, 2000
    features = xr.Dataset(coords={"feature": np.arange(p)}, attrs={"n_target": q, "threshold": 0.6, "copies": 30})
    st = dict(with_pfer(features, 1.0).attrs)
    lowest = min(c for c in CUTOFF_GRID if (g := copies_needed(q, p, c, 1.0)) is not None and g <= 30)
    assert (st["copies_needed_cutoff"], st["copies_needed"]) == (lowest, 30)
    (said,) = _advice(st, python)
    assert said == f"  To bound the noise among them by 1, pass cutoff={lowest:g} (in place of the PFER)."
