"""The validation harness: the estimate against the naive check (SPEC section 11).

The naive check is the yardstick and by far the dearer side (``m_stability x
max(m_ensemble)`` real runs), so :func:`naive_check` caches its Dataset as netCDF under
a key made of the data's bytes and every setting that changes it: a rerun of the
harness on the same data reuses it, anything else recomputes.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from .algorithm import Estimate, estimate
from .datasets import check_data
from .naive import _check_m_ensemble, real_ensemble_stability
from .selectors import describe_selector

__all__ = ["validate", "Validation", "compare", "naive_check", "naive_cache_path"]

# Bump when the naive check's streams or layout change: old cache files then miss.
_NAIVE_FORMAT = 2


def naive_cache_path(X, y, n_target: int, *, cache_dir, **settings) -> Path:
    """Where :func:`naive_check` keeps the naive curve of these data and settings."""
    X, y = check_data(X, y, n_target=n_target)
    h = hashlib.sha256()
    for arr in (X, y):
        arr = np.ascontiguousarray(arr)
        h.update(f"{arr.dtype.str}{arr.shape}".encode())
        h.update(arr.tobytes())
    settings = dict(settings, n_target=int(n_target), format=_NAIVE_FORMAT)
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    return Path(cache_dir) / f"naive-{h.hexdigest()[:20]}.nc"


def _read_cached(path: Path) -> xr.Dataset | None:
    """A cached naive curve, or None when the file cannot be read (it is then recomputed
    and replaced: a cache is never a reason to fail)."""
    try:
        with xr.open_dataset(path) as cached:
            return cached.load()
    except Exception:  # noqa: BLE001 - a damaged cache file is a cache miss
        return None


def naive_check(
    X,
    y,
    n_target: int,
    *,
    m_ensemble=(1, 5, 10, 20, 30, 50),
    m_stability: int = 20,
    selector=None,
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    seed: int = 0,
    cache_dir: str | os.PathLike | None = None,
    client=None,
    timeout: float = 10.0,
    security=None,
) -> xr.Dataset:
    """:func:`~ensstab_dask.naive.real_ensemble_stability` (bagging layout), cached.

    With ``cache_dir`` the result is read from, or written to, ``cache_dir`` (see
    :func:`naive_cache_path`); ``attrs["cached"]`` says whether it was reused. The
    settings recorded in the file are checked against the request before it is used.
    A plain callable selector is never cached: its name is all that describes it, and
    two functions of one name would share a file.
    """
    m_list = _check_m_ensemble(m_ensemble)
    settings = dict(
        m_ensemble=m_list,
        m_stability=int(m_stability),
        selector=describe_selector(selector),
        aggregate=aggregate,
        index=index,
        seed=int(seed),
        layout="bagging",
    )
    path = None
    # A callable is described by its name only, which does not identify it: not cached.
    cacheable = selector is None or hasattr(selector, "get_params")
    if cache_dir is not None and cacheable:
        if not Path(cache_dir).is_dir():
            raise ValueError(f"cache_dir: directory {str(cache_dir)!r} does not exist")
        path = naive_cache_path(X, y, n_target, cache_dir=cache_dir, **settings)
        ds = _read_cached(path) if path.exists() else None
        if ds is not None:
            if [int(m) for m in ds["m_ensemble"].values] == m_list and all(
                str(ds.attrs.get(k)) == str(settings[k])
                for k in ("m_stability", "selector", "aggregate", "index", "seed")
            ):
                ds.attrs["cached"] = 1
                ds.attrs["cache_file"] = str(path)
                return ds
    ds = real_ensemble_stability(
        X,
        y,
        n_target,
        m_ensemble=m_list,
        m_stability=m_stability,
        selector=selector,
        aggregate=aggregate,
        index=index,
        seed=seed,
        client=client,
        timeout=timeout,
        security=security,
    )
    if path is not None:
        from .storage import write_netcdf

        write_netcdf(ds, path, overwrite=True)
        ds.attrs["cache_file"] = str(path)
    ds.attrs["cached"] = 0
    return ds


@dataclass
class Validation:
    """The estimate against the naive check, per ensemble size. See :func:`validate`."""

    estimate: Estimate = field(repr=False)
    naive: xr.Dataset = field(repr=False)
    per_m: dict[int, dict]
    seconds: dict[str, float]
    data: str = ""

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

        def num(v):
            return None if v is None or not np.isfinite(v) else float(v)

        return {
            "data": self.data,
            "n_feature": self.estimate.n_feature,
            "n_target": self.estimate.n_target,
            "reliable": self.estimate.reliable,
            "warnings": self.estimate.warnings,
            "confidence": self.estimate.confidence,
            "per_m": {
                str(m): {k: (num(v) if isinstance(v, float) else v) for k, v in row.items()}
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
        """Per ensemble size: predicted [interval], real +- SE, z, covered (a markdown table)."""
        level = f"{self.estimate.confidence:.0%}"
        rows = [
            f"| m_ensemble | predicted [{level} interval] | real (naive) +- SE | z | covered | within 2 SE |",
            "|---|---|---|---|---|---|",
        ]
        for m, r in self.per_m.items():
            pred = "n/a" if not np.isfinite(r["predicted"]) else f"{r['predicted']:.3f}"
            if np.isfinite(r["lower"]):
                pred += f" [{r['lower']:.3f}, {r['upper']:.3f}]"
            z = "n/a" if not np.isfinite(r["z"]) else f"{r['z']:+.1f}"
            covered = "n/a" if r["covered"] is None else ("yes" if r["covered"] else "no")
            rows.append(
                f"| {m} | {pred} | {r['real']:.3f} +- {r['real_se']:.3f} | {z} | "
                f"{covered} | {'yes' if r['within_2se'] else 'no'} |"
            )
        return "\n".join(rows)

    def summary(self) -> str:
        e, n = self.estimate, self.naive
        lines = [
            e.summary(),
            "",
            f"Validation against the naive check ({int(n.attrs['real_runs'])} real runs, m_stability="
            f"{int(n.attrs['m_stability'])}{', cached' if int(n.attrs.get('cached', 0)) else ''}):",
            self.table(),
            (
                f"interval covers the naive value at {self.covered} of {len(self.per_m)} sizes"
                if any(r["covered"] is not None for r in self.per_m.values())
                else "no interval to cover anything (n_boot=0, or no curve)"
            )
            + f"; within 2 SE at {self.within_2se} of {len(self.per_m)}",
            f"estimate: {e.real_runs} real runs, {self.seconds['estimate']:.1f} s; naive check: "
            f"{int(n.attrs['real_runs'])} real runs, {self.seconds['naive']:.1f} s",
        ]
        return "\n".join(lines)


def compare(est: Estimate, naive: xr.Dataset) -> dict[int, dict]:
    """Per ensemble size: the prediction, its interval, the naive value, its SE, z and the verdicts.

    ``z = (predicted - real) / real_se``; ``covered`` when the interval holds the naive
    value (None when there is no interval: ``n_boot=0`` or no curve); ``within_2se``
    when ``|z| <= 2`` (False without a curve: the method had nothing to say).
    """
    pred = est.predicted()
    interval = est.curve_interval()
    out = {}
    for m, r, se in zip(naive["m_ensemble"].values, naive["stability"].values, naive["stability_se"].values):
        m = int(m)
        nan = float("nan")
        p = pred.get(m, nan) if est.has_curve else nan
        lo, hi = interval.get(m, (nan, nan)) if est.has_curve else (nan, nan)
        z = (p - r) / se if np.isfinite(p) and se > 0 else float("nan")
        out[m] = {
            "predicted": float(p),
            "lower": float(lo),
            "upper": float(hi),
            "real": float(r),
            "real_se": float(se),
            "z": float(z),
            # None (JSON null) without an interval (n_boot=0): neither covered nor missed.
            "covered": bool(lo <= r <= hi) if np.isfinite(lo) else None,
            "within_2se": bool(np.isfinite(z) and abs(z) <= 2.0),
        }
    return out


def validate(
    X,
    y,
    n_target: int,
    *,
    m_ensemble=(1, 5, 10, 20, 30, 50),
    m_stability: int = 20,
    selector=None,
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    seed: int = 0,
    cache_dir: str | os.PathLike | None = None,
    client=None,
    timeout: float = 10.0,
    security=None,
    data: str = "",
    **estimate_options,
) -> Validation:
    """Run the estimate and the naive check on the same data, and compare them per m.

    Both run on one Dask cluster (``client``; a local one is started once for both when
    None). The naive check uses the bagging layout with ``m_stability`` copies and is
    cached in ``cache_dir`` (see :func:`naive_check`); the estimate gets the same
    ``m_ensemble``, ``m_stability``, ``selector``, ``aggregate``, ``index`` and ``seed``
    plus ``estimate_options`` (any other keyword of :func:`~ensstab_dask.estimate`).
    """
    from .cluster import connect

    m_list = _check_m_ensemble(m_ensemble)
    for bad in ("X", "y", "n_target", "client", "security", "timeout"):
        if bad in estimate_options:
            raise TypeError(f"validate() got {bad!r} twice")
    common = dict(m_ensemble=m_list, m_stability=m_stability, selector=selector, aggregate=aggregate, index=index)
    with connect(client, timeout=timeout, security=security) as c:
        target = "synchronous" if c is None else c
        t0 = time.perf_counter()
        est = estimate(X, y, n_target, seed=seed, client=target, **common, **estimate_options)
        t_est = time.perf_counter() - t0
        naive = naive_check(X, y, n_target, seed=seed, cache_dir=cache_dir, client=target, **common)
    # The naive check's own clock, from a running cluster (a cached one keeps the time it took then).
    seconds = {"estimate": t_est, "naive": float(naive.attrs["seconds"])}
    return Validation(est, naive, compare(est, naive), seconds, data)
