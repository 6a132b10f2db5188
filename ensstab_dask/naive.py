"""The naive check: ensemble stability measured with real runs (SPEC sections 7-8).

:func:`real_ensemble_stability` is what the estimate replaces:
``m_stability x max(m_ensemble)`` real runs. Each copy has its own random half of the
data and a pool of ``max(m_ensemble)`` weak selectors fitted on bootstrap samples of it
(``layout="bagging"``, the method's layout, SPEC section 8); the ensemble of size m is
the first m of the pool. Each ensemble is then exactly an ensemble of m independent
weak selectors, so reusing the pool across m changes no ensemble's distribution (the
curve's points are correlated, not biased). ``layout="independent"`` gives every weak
selector its own half of all the data; the simulator does not model that layout.
"""

from __future__ import annotations

import time

import numpy as np
import xarray as xr

from ._validation import AGGREGATES, INDICES, check_choice, check_int, check_seed
from ._version import __version__
from .aggregation import aggregate_rankings
from .cluster import ClientLike, connect, map_shared
from .datasets import check_data
from .seeding import SeedLike, Stream, as_seed_sequence, derive, make_rng
from .selectors import _member_batch, describe_selector, make_scorer
from .stability import _stability_of_array, nogueira_stability, stability_se

__all__ = ["real_ensemble_stability", "real_ensemble_runs", "LAYOUTS"]

#: How the weak selectors of a real ensemble see the data (SPEC section 8).
LAYOUTS = ("bagging", "independent")


def _check_m_ensemble(m_ensemble) -> list[int]:
    """Ensemble sizes, validated like a sweep's grid (sorted, >= 1, no duplicates)."""
    from .sweep import _check_grid

    return _check_grid(m_ensemble, "m_ensemble", "m", 0, 0).tolist()


def real_ensemble_runs(
    X,
    y,
    *,
    m_stability: int,
    pool: int,
    selector=None,
    layout: str = "bagging",
    seed: SeedLike = 0,
    client: ClientLike = None,
    batch_size: int = 1,
    timeout: float = 10.0,
    security=None,
) -> np.ndarray:
    """The rankings of ``pool`` weak selectors in each of ``m_stability`` real ensemble copies.

    Copy ``c`` has its half from ``derive(seed, Stream.REAL_ENSEMBLE, c)`` and member ``j``
    its bootstrap from ``(.., c, j + 1)``, so a copy and its first members do not depend on
    how many copies or members are asked for. Arguments are taken as validated.

    Returns
    -------
    ranks : ndarray of int64, shape (m_stability, pool, n_feature)
    """
    scorer = make_scorer(selector)
    ss = as_seed_sequence(seed)
    tasks = []
    for copy in range(m_stability):
        copy_ss = derive(ss, Stream.REAL_ENSEMBLE, copy)
        members = [derive(ss, Stream.REAL_ENSEMBLE, copy, j + 1) for j in range(pool)]
        for start in range(0, pool, batch_size):
            tasks.append((copy, copy_ss, members[start : start + batch_size]))
    with connect(client, timeout=timeout, security=security) as c:
        parts = map_shared(
            _member_batch, (scorer, X, y, layout), [(cs, ms) for _, cs, ms in tasks], client=c or "synchronous"
        )
    ranks = np.empty((m_stability, pool, X.shape[1]), dtype=np.int64)
    filled = np.zeros(m_stability, dtype=int)
    for (copy, _, ms), part in zip(tasks, parts):
        ranks[copy, filled[copy] : filled[copy] + len(ms)] = part
        filled[copy] += len(ms)
    return ranks


def real_ensemble_stability(
    X,
    y,
    n_target: int,
    *,
    m_ensemble=(1, 5, 10, 20, 30, 50),
    m_stability: int = 50,
    selector=None,
    layout: str = "bagging",
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    seed: int = 0,
    client: ClientLike = None,
    batch_size: int = 1,
    timeout: float = 10.0,
    security=None,
) -> xr.Dataset:
    """The naive check: measure ensemble stability with real runs (see the module docstring).

    Returns
    -------
    xarray.Dataset over ``m_ensemble``: ``stability`` (``index``), ``nogueira`` with its
    ``nogueira_lower``/``nogueira_upper`` 95 % interval, and ``attrs`` with the real-run
    count and wall time.
    """
    X, y = check_data(X, y, n_target=n_target)
    n_feature = X.shape[1]
    m_list = _check_m_ensemble(m_ensemble)
    m_stability = check_int(m_stability, "m_stability", minimum=2)
    check_choice(layout, "layout", LAYOUTS)
    check_choice(aggregate, "aggregate", AGGREGATES)
    check_choice(index, "index", INDICES)
    seed = check_seed(seed)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    ss = as_seed_sequence(seed)
    pool = max(m_list)
    t0 = time.perf_counter()
    ranks = real_ensemble_runs(
        X, y, m_stability=m_stability, pool=pool, selector=selector, layout=layout, seed=ss, client=client,
        batch_size=batch_size, timeout=timeout, security=security,
    )  # fmt: skip
    stab, stab_se, nog, lo, hi, selected = [], [], [], [], [], []
    for m in m_list:
        chosen = np.stack(
            [
                aggregate_rankings(
                    ranks[copy, :m], n_target, aggregate=aggregate, seed=make_rng(ss, Stream.REAL_ENSEMBLE, copy, 0, m)
                )
                for copy in range(m_stability)
            ]
        )
        stab.append(_stability_of_array(chosen, n_feature, index))
        selected.append(chosen)
        stab_se.append(stability_se(chosen, n_feature, index))
        res = nogueira_stability(chosen, n_feature)
        nog.append(res.stability)
        lo.append(res.lower)
        hi.append(res.upper)
    seconds = time.perf_counter() - t0
    coords = {
        "m_ensemble": (
            "m_ensemble",
            m_list,
            {"long_name": "weak selectors per ensemble (m_ensemble)", "units": "selectors"},
        )
    }
    ds = xr.Dataset(
        {
            "stability": ("m_ensemble", stab, {"long_name": f"real ensemble stability ({index})", "units": "1"}),
            "stability_se": (
                "m_ensemble",
                stab_se,
                {
                    "long_name": "standard error of the real stability (U-statistic; jackknife for nogueira)",
                    "units": "1",
                },
            ),
            "selected": (
                ("m_ensemble", "copy", "rank"),
                np.stack(selected),
                {"long_name": "features each real ensemble copy selected", "units": "feature index"},
            ),
            "nogueira": ("m_ensemble", nog, {"long_name": "Nogueira stability of the real ensembles", "units": "1"}),
            "nogueira_lower": ("m_ensemble", lo, {"long_name": "lower end of Nogueira's 95 % interval", "units": "1"}),
            "nogueira_upper": ("m_ensemble", hi, {"long_name": "upper end of Nogueira's 95 % interval", "units": "1"}),
        },
        coords=coords,
    )
    ds.attrs.update(
        title="ensstab_dask naive real ensemble stability",
        n_feature=n_feature,
        n_target=n_target,
        m_stability=m_stability,
        layout=layout,
        modelled_by_simulator=int(layout == "bagging"),
        aggregate=aggregate,
        index=index,
        seed=seed,
        selector=describe_selector(selector),
        real_runs=m_stability * pool,
        seconds=seconds,
        ensstab_dask_version=__version__,
    )
    return ds
