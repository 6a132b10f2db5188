"""The naive check: ensemble stability measured with real runs (docs/method.md sections 7-8).

:func:`real_ensemble_stability` is what the estimate replaces:
``m_stability x max(m_ensemble)`` real runs. Each copy has its own random half of the
data and a pool of ``max(m_ensemble)`` weak selectors fitted on bootstrap samples of it
(``layout="bagging"``, the method's layout, docs/method.md section 8); the ensemble of size m is
the first m of the pool. Each ensemble is then exactly an ensemble of m independent
weak selectors, so reusing the pool across m changes no ensemble's distribution (the
curve's points are correlated, not biased). ``layout="independent"`` gives every weak
selector its own half of all the data; the simulator does not model that layout.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from ensstab_dask._version import __version__
from ensstab_dask.aggregation import copy_ensembles
from ensstab_dask.budget.cost import check_cost
from ensstab_dask.checks import AGGREGATES, DEFAULT_M_ENSEMBLE, check_choice, check_int, check_m_ensemble, check_seed
from ensstab_dask.cluster import ClientLike, connect
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices import INDICES, nogueira_stability, stability_of_subsets, stability_se
from ensstab_dask.real.datasets import CheckedData
from ensstab_dask.real.resamples import check_resample_classes
from ensstab_dask.real.runs import Copies, real_run_plan, say_the_price
from ensstab_dask.real.selectors import checked_run, describe_selector, make_scorer, selector_for, task_for
from ensstab_dask.seeding import SeedLike, Stream, as_seed_sequence, make_rng

__all__ = [
    "real_ensemble_stability",
    "real_ensemble_runs",
    "pool_naive_checks",
    "naive_ensembles",
    "check_naive_cost",
    "NaiveRequest",
    "measure_naive",
    "naive_real_runs",
    "LAYOUTS",
]

#: How the weak selectors of a real ensemble see the data (docs/method.md section 8).
LAYOUTS = ("bagging", "independent")


def naive_real_runs(m_ensemble, m_stability: int) -> int:
    """The naive check's real runs: ``m_stability`` copies of the largest ensemble."""
    return m_stability * max(m_ensemble)


@dataclass(frozen=True)
class NaiveRequest:
    """What a naive check measures, checked on construction: ``m_stability`` copies of
    ensembles of up to ``max(m_ensemble)`` weak selectors, ``n_target`` features each
    (checked against the data by :meth:`CheckedData.of
    <ensstab_dask.real.datasets.CheckedData.of>`), aggregated and compared as said;
    ``selector`` as :func:`~ensstab_dask.real.selectors.selector_for` made it for the data."""

    n_target: int
    m_ensemble: tuple[int, ...] = tuple(DEFAULT_M_ENSEMBLE)
    m_stability: int = 50
    selector: Any = None
    layout: str = "bagging"
    aggregate: str = "mean_rank"
    index: str = "jaccard"
    seed: Any = 0

    def __post_init__(self) -> None:
        checked = dict(
            n_target=check_int(self.n_target, "n_target", minimum=1),
            m_ensemble=tuple(check_m_ensemble(self.m_ensemble)),
            m_stability=check_int(self.m_stability, "m_stability", minimum=2),
            layout=check_choice(self.layout, "layout", LAYOUTS),
            aggregate=check_choice(self.aggregate, "aggregate", AGGREGATES),
            index=check_choice(self.index, "index", INDICES),
            seed=check_seed(self.seed),
        )
        for name, value in checked.items():
            object.__setattr__(self, name, value)  # frozen: set once, here

    @property
    def real_runs(self) -> int:
        return naive_real_runs(self.m_ensemble, self.m_stability)


def check_naive_cost(data: CheckedData, request: NaiveRequest, *, allow_large: bool = False) -> None:
    """The naive check's ``m_stability x max(m_ensemble)`` real runs against the cost
    threshold (:func:`~ensstab_dask.budget.cost.check_cost`), one of them timed on the data
    when refused: callers that run it after other work (validation) check it first."""
    check_cost(
        "the naive check",
        n_feature=data.n_feature,
        real_runs=request.real_runs,
        sizes=len(request.m_ensemble),
        allow_large=allow_large,
        time_one_run=lambda: checked_run(data, selector=request.selector),
    )


def real_ensemble_runs(
    X, y, copies: Copies, *, selector=None, client: ClientLike = None, batch_size: int = 1, progress: bool = True
) -> np.ndarray:
    """The rankings of every weak selector of the real ensemble ``copies``.

    Seeded as :class:`~ensstab_dask.real.runs.Copies` says: a copy and its first members
    do not depend on how many copies or members are asked for. Arguments are taken as
    validated.

    Returns
    -------
    ranks : ndarray of int64, shape (copies, members, n_feature)
    """
    return real_run_plan(
        X,
        y,
        [copies],
        selector=selector,
        client=client,
        batch_size=batch_size,
        progress=progress,
        desc="naive check",
    )[0]


def real_ensemble_stability(
    X,
    y,
    n_target: int,
    *,
    m_ensemble=DEFAULT_M_ENSEMBLE,
    m_stability: int = 50,
    selector=None,
    layout: str = "bagging",
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    seed: SeedLike = 0,
    client: ClientLike = None,
    batch_size: int = 1,
    progress: bool = True,
    allow_large: bool = False,
    task: str = "auto",
) -> xr.Dataset:
    """The naive check: measure ensemble stability with real runs (see the module docstring).

    ``progress``: a bar of the real runs on stderr (see :mod:`ensstab_dask.cluster.progress`).

    Parameters
    ----------
    X, y : the data (n_samples, n_feature) and class labels
    n_target : int
        Features each ensemble keeps.
    m_ensemble : int or sequence of int
        Ensemble sizes measured; ``m_stability x max(m_ensemble)`` real runs in all.
    m_stability : int
        Real ensemble copies behind each stability value.
    selector : None, scikit-learn estimator or callable
        The base selector (see :mod:`ensstab_dask.real.selectors`); None is the default
        random forest.
    layout : {'bagging', 'independent'}
        How the weak selectors see the data (see the module docstring).
    aggregate : {'mean_rank', 'median_rank', 'vote', 'reciprocal_rank'}
    index : {'jaccard', 'dice', 'kuncheva', 'nogueira'}
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)
    client
        Where the real runs run (see :mod:`ensstab_dask.cluster`).
    batch_size : int
        Real runs per Dask task.
    progress : bool
    allow_large : bool
        Run even above 10,000 real runs; without it the check is refused before any
        work, saying what it would cost (:mod:`ensstab_dask.budget.cost`).
    task : {'auto', 'classification', 'regression'}
        What ``y`` is (:mod:`ensstab_dask.real.targets`; "auto" reads it from ``y``, and a
        regressor as ``selector`` makes it a regression target). A regression target's
        default selector is a random forest regressor, its resamples stratified by
        quantile bins of ``y``.

    Returns
    -------
    xarray.Dataset over ``m_ensemble``: ``stability`` (``index``), ``nogueira`` with its
    ``nogueira_lower``/``nogueira_upper`` 95 % interval, and ``attrs`` with the real-run
    count and wall time.

    Examples
    --------
    5 copies of ensembles of up to 3 five-tree forests: 15 real runs.

    >>> import ensstab_dask as es
    >>> from ensstab_dask.real.datasets import make_microarray
    >>> from ensstab_dask.real.selectors import default_selector
    >>> data = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> real = es.real_ensemble_stability(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3),
    ...                                   m_stability=5, client="synchronous", progress=False)
    >>> int(real.attrs["real_runs"]), real["m_ensemble"].values.tolist()
    (15, [1, 3])
    >>> real["stability"].dims, real["selected"].shape  # (m_ensemble, copy, rank)
    (('m_ensemble',), (2, 5, 3))
    >>> bool((real.nogueira_lower <= real.nogueira).all())
    True
    """
    data = CheckedData.of(X, y, n_target=n_target, task=task_for(task, selector))
    check_resample_classes(data.y, "half")  # here, not in the first task on a worker
    request = NaiveRequest(
        n_target, m_ensemble, m_stability, selector_for(selector, data.y), layout, aggregate, index, seed
    )
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    check_naive_cost(data, request, allow_large=allow_large)
    return measure_naive(data, request, client=client, progress=progress, batch_size=batch_size)


def measure_naive(
    data: CheckedData, request: NaiveRequest, *, client: ClientLike, progress: bool, batch_size: int = 1
) -> xr.Dataset:
    """:func:`real_ensemble_stability` of data and a request already checked (and priced)."""
    r = request
    ss = as_seed_sequence(r.seed)
    pool = max(r.m_ensemble)
    copies = Copies(r.m_stability, pool, ss, r.layout)
    with connect(client) as c:  # one cluster for the price and the runs
        target = "synchronous" if c is None else c
        if progress:
            scorer, runs = make_scorer(r.selector), copies.runs
            say_the_price("the naive check", data.X, data.y, scorer, target, to_make=runs, total=runs)
        t0 = time.perf_counter()
        ranks = real_ensemble_runs(
            data.X, data.y, copies, selector=r.selector, client=target, batch_size=batch_size, progress=progress
        )
    measured = _measure(ranks, r.m_ensemble, r.n_target, data.n_feature, aggregate=r.aggregate, index=r.index, ss=ss)
    seconds = time.perf_counter() - t0
    ds = _naive_dataset(list(r.m_ensemble), measured, r.index)
    ds.attrs.update(
        title="ensstab_dask naive real ensemble stability",
        kind="naive_check",
        n_feature=data.n_feature,
        n_target=r.n_target,
        m_stability=r.m_stability,
        layout=r.layout,
        modelled_by_simulator=int(r.layout == "bagging"),
        aggregate=r.aggregate,
        index=r.index,
        seed=r.seed,
        selector=describe_selector(r.selector),
        real_runs=r.real_runs,
        seconds=seconds,
        ensstab_dask_version=__version__,
    )
    return ds


@dataclass
class _Measured:
    """The naive check's values, one per ensemble size: the features each copy's ensemble
    selected, their stability (the chosen index) with its standard error, and Nogueira's
    stability with its 95 % interval."""

    selected: list[np.ndarray]
    stability: list[float]
    stability_se: list[float]
    nogueira: list[float]
    nogueira_lower: list[float]
    nogueira_upper: list[float]


def _measure(ranks: np.ndarray, m_list, n_target: int, n_feature: int, *, aggregate: str, index: str, ss) -> _Measured:
    """Each copy's ensemble of its first m weak selectors, for every m, and the stability
    of those ensembles across the copies. ``ranks``: as :func:`real_ensemble_runs` gives them.

    The ensembles come from :func:`~ensstab_dask.aggregation.copy_ensembles`, the estimate's
    own, on the first m members (so every one of them): one layout, one aggregation and one
    law of tie-breaks for the naive check and the estimate's copies."""
    out = _Measured([], [], [], [], [], [])
    for m in m_list:
        _add_size(out, naive_ensembles(ranks, m, n_target, ss, aggregate=aggregate), n_feature, index)
    return out


def naive_ensembles(ranks: np.ndarray, m: int, n_target: int, ss, *, aggregate: str = "mean_rank") -> np.ndarray:
    """The features each copy's ensemble of its first ``m`` weak selectors keeps, (copies,
    n_target), as the naive check of seed sequence ``ss`` makes them (``ranks``: as
    :func:`real_ensemble_runs` gives them)."""
    # (copy 0, member 0) is no member's stream: it is kept for the aggregation.
    rng = make_rng(ss, Stream.REAL_ENSEMBLE, 0, 0, m)
    return copy_ensembles(ranks[:, :m], n_target, m, rng, aggregate=aggregate)


def _add_size(out: _Measured, chosen: np.ndarray, n_feature: int, index: str) -> None:
    """One ensemble size's values, from the features each copy's ensemble ``chosen``."""
    out.stability.append(stability_of_subsets(chosen, n_feature, index))
    out.selected.append(chosen)
    out.stability_se.append(stability_se(chosen, n_feature, index))
    res = nogueira_stability(chosen, n_feature)
    out.nogueira.append(res.stability)
    out.nogueira_lower.append(res.lower)
    out.nogueira_upper.append(res.upper)


#: What independent naive checks must share to be pooled: one question asked of one data.
_POOLED_ALIKE = ("n_feature", "n_target", "index", "aggregate", "selector", "layout", "data_digest")


def pool_naive_checks(checks: Sequence[xr.Dataset]) -> xr.Dataset:
    """Independent naive checks of one question (the same data and settings, other seeds)
    as one reference: at each ensemble size, the copies of every check that measured it,
    taken together (the stability over every pair of them, with its U-statistic SE; a pair
    across two checks is as independent as one within a check). A size only some checks
    measured rests on their copies alone: ``copies`` says how many each size rests on.

    Each check must record its data's digest (:func:`~ensstab_dask.estimates.validation.harness.naive_check`
    with a ``cache_dir`` does), so that only checks of one data pool.

    Returns a naive check's Dataset (``selected`` left out: the sizes hold unequal copies),
    with ``copies`` over ``m_ensemble``, and in ``attrs`` the ``seeds`` pooled, their
    ``real_runs`` and ``seconds`` summed, and ``m_stability`` the fewest copies a size rests on.

    Raises
    ------
    ValueError
        Fewer than two checks, one that records no data digest, checks of different
        questions, or a seed twice (one seed draws the same copies: they would count twice).
    """
    checks = list(checks)
    if len(checks) < 2:
        raise InvalidParameterError(f"checks: pool two naive checks or more; got {len(checks)}")
    for i, ds in enumerate(checks):
        if ds.attrs.get("kind") != "naive_check" or "selected" not in ds or "data_digest" not in ds.attrs:
            raise InvalidParameterError(
                f"checks[{i}] is not a naive check that records its data (naive_check with a cache_dir records "
                "them): without the data's digest, checks of other data could pool"
            )
    first = checks[0].attrs
    for ds in checks[1:]:
        for key in _POOLED_ALIKE:
            if str(ds.attrs.get(key)) != str(first.get(key)):
                raise InvalidParameterError(
                    f"checks: they differ in {key} ({first.get(key)!r} and {ds.attrs.get(key)!r}); only naive checks "
                    "of one question, on one data, pool"
                )
    seeds = [int(ds.attrs["seed"]) for ds in checks]
    if len(set(seeds)) < len(seeds):
        raise InvalidParameterError(f"checks: the seeds {seeds} repeat; a seed draws the same copies, not new ones")
    m_list = sorted({int(m) for ds in checks for m in ds["m_ensemble"].values})
    measured, copies = _Measured([], [], [], [], [], []), []
    for m in m_list:
        chosen = np.concatenate(
            [ds["selected"].sel(m_ensemble=m).values for ds in checks if m in ds["m_ensemble"].values]
        )
        _add_size(measured, chosen, int(first["n_feature"]), str(first["index"]))
        copies.append(len(chosen))
    measured.selected = [np.zeros((0, 0), dtype=np.int64)] * len(m_list)  # not kept: unequal copies
    pooled = _naive_dataset(m_list, measured, str(first["index"])).drop_vars("selected")
    pooled["copies"] = (
        "m_ensemble",
        np.array(copies),
        {"long_name": "real ensemble copies", "description": "copies each size's stability rests on"},
    )
    pooled.attrs.update({k: v for k, v in first.items() if k not in ("seed", "cache_file")})
    pooled.attrs.update(
        seeds=np.array(seeds),
        m_stability=int(min(copies)),  # the fewest copies a size rests on; `copies` has each
        real_runs=int(sum(int(ds.attrs["real_runs"]) for ds in checks)),
        seconds=float(sum(float(ds.attrs.get("seconds", 0.0)) for ds in checks)),
        cached=int(all(int(ds.attrs.get("cached", 0)) for ds in checks)),
    )
    return pooled


def _naive_dataset(m_list, measured: _Measured, index: str) -> xr.Dataset:
    """The naive check's values over ``m_ensemble``, with xarray's attributes."""
    coords = {
        "m_ensemble": (
            "m_ensemble",
            m_list,
            {"long_name": "m_ensemble", "units": "selectors", "description": "weak selectors per ensemble"},
        )
    }
    ds = xr.Dataset(
        {
            # Short long_names, no units on dimensionless values (xarray's .plot labels; see sweep._var_attrs).
            "stability": (
                "m_ensemble",
                measured.stability,
                {"long_name": f"stability ({index})", "description": f"real ensemble stability ({index} index)"},
            ),
            "stability_se": (
                "m_ensemble",
                measured.stability_se,
                {
                    "long_name": "stability SE",
                    "description": "standard error of the real stability (U-statistic; jackknife for nogueira)",
                },
            ),
            "selected": (
                ("m_ensemble", "copy", "rank"),
                np.stack(measured.selected),
                {"long_name": "selected feature", "description": "features each real ensemble copy selected (index)"},
            ),
            "nogueira": (
                "m_ensemble",
                measured.nogueira,
                {"long_name": "stability (nogueira)", "description": "Nogueira stability of the real ensembles"},
            ),
            "nogueira_lower": (
                "m_ensemble",
                measured.nogueira_lower,
                {"long_name": "nogueira, 95 % lower", "description": "lower end of Nogueira's 95 % interval"},
            ),
            "nogueira_upper": (
                "m_ensemble",
                measured.nogueira_upper,
                {"long_name": "nogueira, 95 % upper", "description": "upper end of Nogueira's 95 % interval"},
            ),
        },
        coords=coords,
    )
    return ds
