"""The seeding contract (ensstab_dask.seeding): what a seed accepts, and that a row's
draws depend on the seed and the row's index only, never on batching or size."""

import numpy as np
import pytest

import ensstab_dask as es
import ensstab_dask.simulator.kernel as simulation
from ensstab_dask.seeding import MAX_SEED, Stream, derive, seed_to_int
from ensstab_dask.simulator.estimators import simulated_n_useful, uniform_subsets


@pytest.mark.parametrize("n_feature", [300, 2000, 5000])  # 32-bit and 64-bit shuffle keys
def test_a_smaller_size_is_a_prefix_of_a_larger_one(n_feature):
    big = es.simulate_rankings(n_feature, 10, 40, 0.5, size=301, seed=3)
    for size in (1, 5, 6, 64, 300):
        np.testing.assert_array_equal(es.simulate_rankings(n_feature, 10, 40, 0.5, size=size, seed=3), big[:size])
    ens = es.simulate_ensembles(n_feature, 10, 40, 0.5, m_ensemble=7, size=40, seed=4)
    np.testing.assert_array_equal(es.simulate_ensembles(n_feature, 10, 40, 0.5, m_ensemble=7, size=3, seed=4), ens[:3])
    sub = uniform_subsets(n_feature, 10, 500, seed=5)
    np.testing.assert_array_equal(uniform_subsets(n_feature, 10, 7, seed=5), sub[:7])


def test_draws_do_not_depend_on_how_many_rows_are_made_at_once(monkeypatch):
    args = (2000, 20, 60, 0.7)
    ranks = es.simulate_rankings(*args, size=700, seed=8)
    ens = es.simulate_ensembles(*args, m_ensemble=9, size=60, seed=9)
    two_level = es.simulate_ensembles(*args, m_ensemble=5, size=30, seed=10, variant="two-level", h=30)
    monkeypatch.setattr(simulation, "_BLOCK_BYTES", 2**16)  # one or two rows per batch
    assert simulation.block_rows(2000) < 5
    np.testing.assert_array_equal(es.simulate_rankings(*args, size=700, seed=8), ranks)
    np.testing.assert_array_equal(es.simulate_ensembles(*args, m_ensemble=9, size=60, seed=9), ens)
    np.testing.assert_array_equal(
        es.simulate_ensembles(*args, m_ensemble=5, size=30, seed=10, variant="two-level", h=30), two_level
    )


def test_what_a_seed_accepts_and_records():
    one = es.simulate_rankings(200, 5, 20, 0.5, size=3)
    np.testing.assert_array_equal(one, es.simulate_rankings(200, 5, 20, 0.5, size=3, seed=0))  # default 0
    np.testing.assert_array_equal(
        es.simulate_rankings(200, 5, 20, 0.5, size=3, seed=np.random.SeedSequence(7)),
        es.simulate_rankings(200, 5, 20, 0.5, size=3, seed=7),
    )
    # A Generator is drawn from: two calls differ, and the same Generator state repeats them.
    g = np.random.default_rng(1)
    a, b = (es.simulate_rankings(200, 5, 20, 0.5, size=3, seed=g) for _ in range(2))
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, es.simulate_rankings(200, 5, 20, 0.5, size=3, seed=np.random.default_rng(1)))
    # Recording functions reduce any seed to an int that reproduces the result.
    assert seed_to_int(12) == 12 and seed_to_int(np.random.SeedSequence(12)) == 12
    spawned = seed_to_int(np.random.SeedSequence(12).spawn(1)[0])
    assert 0 <= spawned <= MAX_SEED and spawned != 12
    kw = dict(n_useful=[20], p=[0.5], m_ensemble=[1, 3], m_stability=5, repeats=2, client="synchronous", progress=False)
    ds = es.sweep(200, 5, seed=np.random.default_rng(2), **kw)
    again = es.sweep(200, 5, seed=int(ds.attrs["seed"]), **kw)
    np.testing.assert_array_equal(ds["stability_draws"].values, again["stability_draws"].values)
    with pytest.raises(TypeError, match="seed must be"):
        seed_to_int(1.5)
    with pytest.raises(ValueError, match=r"seed must be in \[0, "):
        seed_to_int(-1)


def test_n_useful_v_has_common_random_numbers_along_n_useful():
    """The sweep's n_useful_v over u at fixed p: with the streams shared along u (layout
    2), the surface is smoother than with a stream per u (layout 1's keys)."""
    us = list(range(20, 61, 2))
    ds = es.sweep(
        500, 10, n_useful=us, p=[0.6], m_ensemble=[20], repeats=1, seed=3, client="synchronous", progress=False
    )
    shared = ds["n_useful_v"].squeeze().values
    per_u = np.array(
        [simulated_n_useful(500, 10, u, 0.6, n_runs=20, seed=derive(3, Stream.SWEEP_N_USEFUL_V, u, 20, 0)) for u in us]
    )
    rough = [np.abs(np.diff(v, 2)).mean() for v in (shared, per_u)]
    assert rough[0] < 0.5 * rough[1], rough
