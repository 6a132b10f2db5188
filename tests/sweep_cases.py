"""The small sweep most sweep tests run, and how to compare and watch its stores
(shared by tests/sweeps and tests/cluster)."""

import time

import numpy as np
import xarray as xr

from ensstab_dask.sweeps.storage import SweepStore

GRID = dict(n_useful=[10, 25, 40], p=[0.3, 0.6, 0.9], m_ensemble=[1, 4], m_stability=12, repeats=3, seed=7)
N, K = 300, 10
VARS = ("stability", "stability_std", "n_useful_v", "n_useful_v_std", "stability_draws", "n_useful_v_draws")


def assert_same(a: xr.Dataset, b: xr.Dataset) -> None:
    """Bit-identical data and coordinates (attrs like the creation time may differ)."""
    for v in VARS:
        np.testing.assert_array_equal(a[v].values, b[v].values, err_msg=v, strict=True)
    for c in a.coords:
        np.testing.assert_array_equal(a[c].values, b[c].values, err_msg=c)


def blocks_done(store) -> int:
    """Blocks of a sweep store marked complete; 0 before the store exists or mid-rename."""
    try:
        return int(SweepStore(store).completed().sum())
    except Exception:  # not there yet, or the template is mid-rename
        return 0


def wait_for_blocks(store, n: int, alive, timeout: float = 120) -> int:
    """Wait until ``n`` blocks of ``store`` are done while ``alive()``; return how many are."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        done = blocks_done(store)
        if done >= n:
            return done
        time.sleep(0.05)
    raise AssertionError(f"the sweep ended or stalled before {n} blocks were done: make it longer")


def tiny_sweep(n_useful, p, m_ensemble, **options) -> xr.Dataset:
    """A sweep of 300 features, n_target 10, 5 copies and 2 repeats, run here, on the
    grid given (``options``: any other keyword of ``sweep``, a ``store`` say)."""
    import ensstab_dask as es

    small = dict(m_stability=5, repeats=2, client="synchronous", progress=False)
    return es.sweep(N, K, n_useful=n_useful, p=p, m_ensemble=m_ensemble, **{**small, **options})
