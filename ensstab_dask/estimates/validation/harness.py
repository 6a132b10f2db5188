"""The validation harness: the estimate against the naive check (docs/method.md section 11).

The naive check is the yardstick and by far the dearer side (``m_stability x
max(m_ensemble)`` real runs), so :func:`naive_check` caches its Dataset as netCDF under
a key made of the data's bytes and every setting that changes it: a rerun of the
harness on the same data reuses it, anything else recomputes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import time
import warnings as _warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from ensstab_dask.checks import check_m_ensemble, check_seed
from ensstab_dask.cluster import ClientLike, connect
from ensstab_dask.cluster.progress import note_dashboard
from ensstab_dask.estimates.records.estimate import Estimate
from ensstab_dask.estimates.stages.pipeline import estimate_checked
from ensstab_dask.estimates.validation.comparison import compare, verdict, z_text
from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
from ensstab_dask.exceptions import UnreliableEstimateWarning
from ensstab_dask.outputs import json_number
from ensstab_dask.real.cache_files import check_cache_dir, read_checked, write_checked
from ensstab_dask.real.datasets import CheckedData
from ensstab_dask.real.naive import NaiveRequest, check_naive_cost, measure_naive
from ensstab_dask.real.resamples import check_resample_classes
from ensstab_dask.real.runs import Copies, check_plan_classes
from ensstab_dask.real.selectors import selector_for, task_for
from ensstab_dask.settings import DEFAULTS, check_given, takes_settings
from ensstab_dask.wording import Spelling

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's own from Python 3.11

    from ensstab_dask.settings.options import EstimateOptions

__all__ = ["validate", "validate_checked", "Validation", "naive_check", "naive_check_checked", "naive_cache_path"]

logger = logging.getLogger("ensstab_dask.validate")

# Bump when the naive check's streams or layout change: old cache files then miss.
# 3: halves and bootstraps stratified by class. 4: ensembles made by
# aggregation.copy_ensembles (the estimate's), tie-breaks from one stream per size.
_NAIVE_FORMAT = 4


def naive_cache_path(X, y, n_target: int, *, cache_dir, **settings) -> Path:
    """Where :func:`naive_check` keeps the naive curve of these data and settings (the
    selector among them says whether ``y`` is a regression target)."""
    data = CheckedData.of(X, y, n_target=n_target)
    return _naive_path(data, n_target, cache_dir, settings)


def _naive_path(data: CheckedData, n_target: int, cache_dir, settings: dict) -> Path:
    """:func:`naive_cache_path` of data already checked (its digest made at most once)."""
    h = hashlib.sha256(data.digest.encode())
    settings = dict(settings, n_target=int(n_target), format=_NAIVE_FORMAT)
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    return Path(cache_dir) / f"naive-{h.hexdigest()[:20]}.nc"


def _request(n_target: int, naive: NaiveSettings, data: CheckedData) -> NaiveRequest:
    """The naive check that ``naive`` asks of ``data`` (the bagging layout, the selector for its task)."""
    selector = selector_for(naive.selector, data.y)
    return NaiveRequest(
        n_target,
        tuple(naive.m_ensemble),
        naive.m_stability,
        selector,
        "bagging",
        naive.aggregate,
        naive.index,
        naive.seed,
    )


def _read_cached(path: Path) -> xr.Dataset | None:
    """A cached naive curve whose checksum holds, or None, when the file cannot be read,
    has no checksum or fails it: the curve is then
    recomputed and the file replaced, and a warning (logger ``ensstab_dask.validate``)
    says which file and why (:func:`~ensstab_dask.real.cache_files.read_checked`)."""
    return read_checked(path, logger=logger, what="validate: cached naive curve")


def naive_check(
    X,
    y,
    n_target: int,
    naive: NaiveSettings | None = None,
    *,
    cache_dir: str | os.PathLike | None = None,
    client: ClientLike = None,
    progress: bool = True,
    allow_large: bool = False,
) -> xr.Dataset:
    """:func:`~ensstab_dask.real.naive.real_ensemble_stability` (bagging layout), cached.

    With ``cache_dir`` the result is read from, or written to, ``cache_dir`` (see
    :func:`naive_cache_path`); ``attrs["cached"]`` says whether it was reused. The
    settings recorded in the file are checked against the request before it is used.
    A plain callable selector is never cached: its name is all that describes it, and
    two functions of one name would share a file. ``naive``: default ``NaiveSettings()``.
    ``y`` is a regression target when it holds fractions or the selector is a regressor.
    """
    naive = NaiveSettings() if naive is None else naive
    data = CheckedData.of(X, y, n_target=n_target, task=task_for("auto", naive.selector))
    return naive_check_checked(
        data, n_target, naive, cache_dir=cache_dir, client=client, progress=progress, allow_large=allow_large
    )


def naive_check_checked(
    data: CheckedData, n_target: int, naive: NaiveSettings, *, cache_dir, client, progress: bool, allow_large: bool
) -> xr.Dataset:
    """:func:`naive_check` of data already checked for the selector's task."""
    settings = naive.to_dict()
    m_list = settings["m_ensemble"]
    path = None
    # A callable is described by its name only, which does not identify it: not cached.
    cacheable = naive.selector is None or hasattr(naive.selector, "get_params")
    if cache_dir is not None and cacheable:
        check_cache_dir(cache_dir)
        path = _naive_path(data, n_target, cache_dir, settings)
        digest = data.digest
        ds = _read_cached(path) if path.exists() else None
        if ds is not None:
            if [int(m) for m in ds["m_ensemble"].values] == m_list and all(
                str(ds.attrs.get(k)) == str({**settings, "data_digest": digest}[k])
                for k in ("m_stability", "selector", "aggregate", "index", "seed", "data_digest")
            ):
                ds.attrs["cached"] = 1
                ds.attrs["cache_file"] = str(path)
                return ds
    check_resample_classes(data.y, "half")
    request = _request(n_target, naive, data)
    check_naive_cost(data, request, allow_large=allow_large)
    ds = measure_naive(data, request, client=client, progress=progress)
    if path is not None:
        ds.attrs["data_digest"] = digest  # what the curve was measured on, checked when it is read back
    if path is not None and write_checked(ds, path, logger=logger, what="validate: naive curve") is not None:
        ds.attrs["cache_file"] = str(path)
    ds.attrs["cached"] = 0
    return ds


@dataclass
class Validation:
    """The estimate against the naive check, per ensemble size. See :func:`validate`.

    Attributes
    ----------
    estimate : Estimate
    naive : xarray.Dataset
        The naive check (:func:`~ensstab_dask.real_ensemble_stability`).
    per_m : dict
        For each ensemble size, the prediction, its interval, the naive value, its SE,
        ``z`` and the verdicts ``covered`` and ``within_2se``.
    seconds : dict
        Wall time of the estimate (``estimate``: its real runs at the seconds they took
        when made, here or when the cache's were; ``estimate_here``: this call's) and of the
        naive check (as made, also when it was read from its cache).
    data : str
        The data's name.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> from ensstab_dask.real.datasets import make_microarray
    >>> from ensstab_dask.real.selectors import default_selector
    >>> data = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> val = es.validate(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3), m_stability=5,
    ...                   n_runs=10, repeats=2, n_boot=0, client="synchronous", progress=False, data="toy")
    >>> val.data, sorted(val.seconds)
    ('toy', ['estimate', 'estimate_here', 'naive'])
    >>> val.covered, val.within_2se <= len(val.per_m)
    (0, True)
    >>> d = val.to_dict()
    >>> d["sizes"], d["data"]
    (2, 'toy')
    """

    estimate: Estimate = field(repr=False)
    naive: xr.Dataset = field(repr=False)
    per_m: dict[int, dict]
    seconds: dict[str, float]
    data: str = ""

    def _here(self) -> str:
        """This call's own time, where the cache made it differ from the cost as made."""
        here = self.seconds.get("estimate_here", self.seconds["estimate"])
        return f" as made ({here:.1f} s here, its runs read from the cache)" if self.estimate.cost.runs.reused else ""

    @property
    def covered(self) -> int:
        """Ensemble sizes whose interval covers the naive value."""
        return sum(bool(r["covered"]) for r in self.per_m.values())

    @property
    def within_2se(self) -> int:
        """Ensemble sizes whose prediction is within 2 standard errors of the naive value."""
        return sum(bool(r["within_2se"]) for r in self.per_m.values())

    def to_dict(self) -> dict:
        """The keys of ``ensstab validate --json``."""

        return {
            "data": self.data,
            "n_feature": self.estimate.n_feature,
            "n_target": self.estimate.n_target,
            "reliable": self.estimate.reliable,
            "warnings": self.estimate.warnings,
            "confidence": self.estimate.prediction.confidence,
            "per_m": {
                str(m): {k: (json_number(v) if isinstance(v, float) else v) for k, v in row.items()}
                for m, row in self.per_m.items()
            },
            "covered": self.covered,
            "within_2se": self.within_2se,
            "sizes": len(self.per_m),
            "estimate_real_runs": self.estimate.real_runs,
            "naive_real_runs": int(self.naive.attrs["real_runs"]),
            "naive_m_stability": int(self.naive.attrs["m_stability"]),
            "naive_cached": bool(int(self.naive.attrs.get("cached", 0))),
            "seconds": self.seconds,
            "estimate": self.estimate.to_dict(),
        }

    def to_dataset(self) -> xr.Dataset:
        """The estimate's Dataset with the naive check beside it (``naive_*``)."""
        return self.estimate.to_dataset(self.naive)

    def table(self) -> str:
        """Per ensemble size, a markdown table: the prediction with its interval, the naive
        check's real value and its standard error (SE), z, whether the interval covers the
        real value, and the verdict: within 2 combined SE of the real value or outside
        (z and SE combine both sides' standard errors and, beyond the measured sizes, the
        model band shown beside the prediction's SE; see :func:`compare`)."""
        level = f"{self.estimate.prediction.confidence:.0%}"
        rows = [
            f"| m_ensemble | predicted [{level} bootstrap interval] | SE of prediction | real (naive check) | "
            "SE of real | combined z | interval covers real | verdict |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for m, r in self.per_m.items():
            pred = "n/a" if not np.isfinite(r["predicted"]) else f"{r['predicted']:.3f}"
            if np.isfinite(r["lower"]):
                pred += f" [{r['lower']:.3f}, {r['upper']:.3f}]"
            z = z_text(r["z"])
            covered = "n/a" if r["covered"] is None else ("yes" if r["covered"] else "no")
            se = f"{r['predicted_se']:.3f}" + (f" (band {r['band']:.3f})" if r["band"] > 0 else "")
            rows.append(
                f"| {m} | {pred} | {se} | {r['real']:.3f} | {r['real_se']:.3f} | {z} | {covered} | {verdict(r)} |"
            )
        return "\n".join(rows)

    def spelled(self, spelling: Spelling) -> Validation:
        """The validation with its estimate's words in ``spelling`` (:meth:`Estimate.spelled`)."""
        return dataclasses.replace(self, estimate=self.estimate.spelled(spelling))

    def summary(self) -> str:
        """The estimate's summary (its verdict first), then :meth:`comparison`."""
        return self.estimate.summary() + "\n\n" + self.comparison()

    def comparison(self) -> str:
        """The check against the naive measurement: per ensemble size (:meth:`table`), then
        the counts in words and the cost of each side."""
        e, n = self.estimate, self.naive
        sizes = len(self.per_m)
        copies = int(n.attrs["m_stability"])
        cached = "; cached from an earlier run" if int(n.attrs.get("cached", 0)) else ""
        lines = [
            f"Check against the naive measurement ({int(n.attrs['real_runs'])} real runs: "
            f"{copies} real ensemble copies of {int(n.attrs['real_runs']) // copies} weak selectors{cached}).",
            "Per ensemble size: the predicted stability, the real one with its standard error (SE), and whether "
            "the prediction is within 2 SE of it:",
            self.table(),
            (
                f"the {e.prediction.confidence:.0%} interval covers the real value at {self.covered} of {sizes} sizes"
                if any(r["covered"] is not None for r in self.per_m.values())
                else "no interval to cover anything (n_boot=0, or no curve)"
            )
            + f"; the prediction is within 2 SE of it at {self.within_2se} of {sizes}",
            f"cost: estimate {e.real_runs} real runs, {self.seconds['estimate']:.1f} s{self._here()}; naive check "
            f"{int(n.attrs['real_runs'])} real runs, {self.seconds['naive']:.1f} s",
        ]
        return "\n".join(lines)


#: The settings whose default the harness sets otherwise than an estimate: the naive check's copies.
VALIDATE_DEFAULTS = {"m_stability": NaiveSettings.m_stability}


@takes_settings(**VALIDATE_DEFAULTS)
def validate(
    X,
    y,
    n_target: int,
    *,
    cache_dir: str | os.PathLike | None = None,
    client: ClientLike = None,
    data: str = "",
    progress: bool = True,
    allow_large: bool = False,
    task: str = "auto",
    feature_names=None,
    **settings: Unpack[EstimateOptions],
) -> Validation:
    """Run the estimate and the naive check on the same data, and compare them per m.

    Both run on one Dask cluster (``client``; a local one is started once for both when
    None). The naive check uses the bagging layout with ``m_stability`` copies (by
    default fewer than an estimate's: its signature says how many) and is cached in ``cache_dir`` (see
    :func:`naive_check`); the estimate gets every setting, and the naive check the
    ``m_ensemble``, ``m_stability``, ``selector``, ``aggregate``, ``index`` and ``seed`` it
    shares with it.
    ``progress``: a bar per stage on stderr (the estimate's real runs and simulations,
    the naive check's real runs) and the dashboard link; False: nothing.

    Parameters
    ----------
    X, y : the data (n_samples, n_feature) and class labels or a regression target
    n_target : int
        Features each selector keeps.
    task, feature_names
        What ``y`` asks, and the features' names (see :func:`~ensstab_dask.estimate`).
    cache_dir : path, optional
        Where the naive check and the estimate's real runs are cached (:func:`naive_check`,
        :mod:`ensstab_dask.real.run_cache`); None: not cached.
    client
        Where everything runs (see :mod:`ensstab_dask.cluster`).
    data : str
        A name for the data, recorded in the result.
    progress : bool
    allow_large : bool
        Run the estimate and the naive check even above the cost thresholds
        (:mod:`ensstab_dask.budget.cost`); the naive check's cost is checked before the estimate
        runs.
    **settings

    Returns
    -------
    Validation

    Examples
    --------
    A tiny run (5-tree forests, no bootstrap), to show the calls:

    >>> import ensstab_dask as es
    >>> from ensstab_dask.real.datasets import make_microarray
    >>> from ensstab_dask.real.selectors import default_selector
    >>> data = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> val = es.validate(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3), m_stability=5,
    ...                   n_runs=10, repeats=2, n_boot=0, client="synchronous", progress=False)
    >>> sorted(val.per_m), sorted(val.per_m[3])
    ([1, 3], ['band', 'covered', 'lower', 'predicted', 'predicted_se', 'real', 'real_se', 'upper', 'within_2se', 'z'])
    >>> val.estimate.real_runs, int(val.naive.attrs["real_runs"])  # the default model's 10 copies of 20
    (200, 15)
    >>> val.per_m[1]["covered"] is None  # n_boot=0: no interval to cover the naive value
    True
    """

    check_given(settings, "validate")
    selector = {**DEFAULTS, **settings}["selector"]
    checked = CheckedData.of(X, y, feature_names=feature_names, task=task_for(task, selector))
    val = validate_checked(
        checked,
        n_target,
        settings,
        source=data,
        client=client,
        progress=progress,
        cache_dir=cache_dir,
        allow_large=allow_large,
    )
    for w in val.estimate.warnings:
        _warnings.warn(w, UnreliableEstimateWarning, stacklevel=2)
    return val


def validate_checked(
    data: CheckedData,
    n_target: int,
    settings: Mapping[str, Any],
    *,
    source: str,
    client: ClientLike,
    progress: bool,
    cache_dir: str | os.PathLike | None,
    allow_large: bool,
) -> Validation:
    """:func:`validate` of data already checked for the selector's task, the settings as
    :func:`~ensstab_dask.settings.check_given` passed them (``source``: :func:`validate`'s
    ``data``); its warnings are its caller's to give."""
    given = {**DEFAULTS, **VALIDATE_DEFAULTS, **settings}
    m_list = check_m_ensemble(given["m_ensemble"])
    seed = check_seed(given["seed"])  # once: the estimate and the naive check share it
    selector = selector_for(given["selector"], data.y)  # a regressor for a target
    m_stability = given["m_stability"]
    common: dict[str, Any] = dict(m_ensemble=m_list, m_stability=m_stability, selector=selector)
    common.update(aggregate=given["aggregate"], index=given["index"])
    others: dict[str, Any] = {k: v for k, v in settings.items() if k not in (*common, "seed")}
    if cache_dir is not None:
        check_cache_dir(cache_dir)
    # Before any cluster starts: a class too small for the naive check's copies (the
    # estimate checks its own runs before it runs them), and a naive check too large to run.
    check_plan_classes(data.y, [Copies(1, 1)])
    naive_settings = NaiveSettings(seed=seed, **common)
    check_naive_cost(data, _request(n_target, naive_settings, data), allow_large=allow_large)
    with connect(client) as c:
        note_dashboard(c, progress)
        run: dict[str, Any] = dict(client="synchronous" if c is None else c, progress=progress, cache_dir=cache_dir)
        t0 = time.perf_counter()
        est = estimate_checked(data, n_target, {**common, **others, "seed": seed}, allow_large=allow_large, **run)
        t_est = time.perf_counter() - t0
        naive = naive_check_checked(data, n_target, naive_settings, allow_large=allow_large, **run)
    # Both as made: the naive check's own clock (a cached one keeps the time it took then), the
    # estimate's real runs at the seconds they took when made (the cache's reading is not a cost).
    as_made = t_est + est.cost.seconds_as_made() - sum(est.cost.seconds.values())
    seconds = {"estimate": as_made, "estimate_here": t_est, "naive": float(naive.attrs["seconds"])}
    return Validation(est, naive, compare(est, naive), seconds, source)
