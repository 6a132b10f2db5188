"""Independent naive checks pooled into one reference (real.naive.pool_naive_checks): each
size's stability over the copies of every check that measured it, with its SE."""

import numpy as np
import pytest

from ensstab_dask.estimates.validation.harness import naive_check
from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
from ensstab_dask.indices import stability_of_subsets, stability_se
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.naive import pool_naive_checks, real_ensemble_stability
from ensstab_dask.real.selectors import default_selector

DATA = make_microarray(n_feature=120, n_informative=8, effect=3.0, seed=2)


def _check(cache, seed, m_ensemble=(1, 3), index="jaccard"):
    """A naive check as the harness makes it: cached, so that it records its data's digest."""
    settings = NaiveSettings(m_ensemble=m_ensemble, m_stability=4, selector=default_selector(5), index=index, seed=seed)
    return naive_check(DATA.X, DATA.y, 5, settings, cache_dir=cache, client="synchronous", progress=False)


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    cache = tmp_path_factory.mktemp("naive")
    return cache, _check(cache, 1), _check(cache, 2, m_ensemble=(1, 3, 5))


def test_each_size_rests_on_the_copies_of_every_check_that_measured_it(checks):
    _, a, b = checks
    pooled = pool_naive_checks([a, b])
    assert pooled["m_ensemble"].values.tolist() == [1, 3, 5]
    assert pooled["copies"].values.tolist() == [8, 8, 4]
    for m in (1, 3):
        both = np.concatenate([a["selected"].sel(m_ensemble=m).values, b["selected"].sel(m_ensemble=m).values])
        assert pooled["stability"].sel(m_ensemble=m) == stability_of_subsets(both, 120, "jaccard")
        assert pooled["stability_se"].sel(m_ensemble=m) == stability_se(both, 120, "jaccard")
    # The size one check alone measured is that check's, bit for bit.
    for var in ("stability", "stability_se", "nogueira"):
        assert pooled[var].sel(m_ensemble=5) == b[var].sel(m_ensemble=5)
    assert pooled.attrs["seeds"].tolist() == [1, 2]
    assert pooled.attrs["real_runs"] == a.attrs["real_runs"] + b.attrs["real_runs"] == 4 * 3 + 4 * 5
    assert "selected" not in pooled and "seed" not in pooled.attrs and "cache_file" not in pooled.attrs
    assert pooled.attrs["m_stability"] == 4  # the fewest copies a size rests on


def test_only_independent_checks_of_one_question_on_one_data_pool(checks):
    cache, a, b = checks
    with pytest.raises(ValueError, match=r"^checks: pool two naive checks or more; got 1$"):
        pool_naive_checks([a])
    with pytest.raises(ValueError, match=r"the seeds \[1, 1\] repeat"):
        pool_naive_checks([a, a])
    with pytest.raises(ValueError, match=r"^checks: they differ in index \('jaccard' and 'dice'\)"):
        pool_naive_checks([a, _check(cache, 3, index="dice")])
    other = make_microarray(n_feature=120, n_informative=8, effect=3.0, seed=5)  # the same shape, other data
    settings = NaiveSettings(m_ensemble=(1, 3), m_stability=4, selector=default_selector(5), seed=4)
    elsewhere = naive_check(other.X, other.y, 5, settings, cache_dir=cache, client="synchronous", progress=False)
    with pytest.raises(ValueError, match=r"^checks: they differ in data_digest"):
        pool_naive_checks([a, elsewhere])
    unrecorded = real_ensemble_stability(
        DATA.X,
        DATA.y,
        5,
        m_ensemble=(1, 3),
        m_stability=4,
        selector=default_selector(5),
        seed=6,
        client="synchronous",
        progress=False,
    )
    with pytest.raises(ValueError, match=r"^checks\[1\] is not a naive check that records its data"):
        pool_naive_checks([a, unrecorded])
