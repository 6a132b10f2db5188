"""The result of an estimate: :class:`Estimate`, its JSON (``to_dict``) and its Dataset
(``to_dataset``, what the report and the plots read). Its words are :mod:`ensstab_dask.estimates.summary`'s."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from ensstab_dask._version import __version__
from ensstab_dask.estimates.comparison import compare, comparison_dataset
from ensstab_dask.estimates.features import feature_rows, feature_table, stable_features
from ensstab_dask.estimates.rounds import Spending
from ensstab_dask.estimates.summary import estimate_summary, plain_answer
from ensstab_dask.estimates.surface import surface_json
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices import NogueiraStability
from ensstab_dask.models import SelfCheck
from ensstab_dask.outputs import json_number, write_netcdf
from ensstab_dask.simulator.estimators import PEstimate

__all__ = ["Estimate"]


@dataclass
class Estimate:
    """The result of :func:`estimate`. ``summary()`` for people, ``to_dataset()`` for xarray.

    ``reliable`` is False whenever ``warnings`` is not empty. When the method has
    nothing to say (``has_curve`` False) the curve is all NaN and is not presented.
    ``intervals`` maps ``t_uniform``, ``n_useful``, ``real_stability`` and ``p`` to
    their ``confidence`` intervals from the bootstrap over the real runs; the curve's
    are ``curve["stability_lower"]`` and ``curve["stability_upper"]``.

    Attributes
    ----------
    n_feature, n_target : int
        The problem.
    settings : dict
        The settings :func:`estimate` ran with (``n_runs``, ``m_stability``, ``seed`` ...).
    t_uniform, n_useful, real_stability, p : float or int
        The fitted quantities (docs/method.md sections 4-5); ``n_useful`` is the one simulated.
    curve : xarray.Dataset
        The predicted ``stability`` over ``m_ensemble`` (``predicted()`` as a dict).
    real_runs, simulated_runs : int
        Runs of the real selector and of the simulated one behind the estimate.
    reliable : bool
        False when any guard rail tripped; ``warnings`` says which, in words (each opens
        with what it means in plain words, up to its first ``": "``).
    notes : list of str
        What is true and worth saying but no reason to doubt the estimate (a selector that
        finds fewer useful features than ``n_target``, for a model that measures real
        ensembles).
    has_curve : bool
        False when the method has nothing to say.
    features : xarray.Dataset or None
        Each feature's selection frequency over the model's real ensemble copies, per
        measured ensemble size, with its interval and mean rank, named
        (:mod:`~ensstab_dask.estimates.features`); ``feature_table()`` as a table. Made
        whatever the verdict; None for a model without copies.
    surface : xarray.Dataset or None
        With several ``n_target``: the curve at each, over (``n_target``, ``m_ensemble``)
        (:mod:`~ensstab_dask.estimates.surface`).
    confidence : float
        Level of ``intervals`` and ``curve_interval()``.
    seconds : dict
        Wall time of each stage.

    The other fields hold the draws, the fixed-point checks and the bootstrap behind
    these; ``to_dict()`` lists them.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> from ensstab_dask.real.datasets import make_microarray
    >>> from ensstab_dask.real.selectors import default_selector
    >>> data = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> est = es.estimate(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3), m_stability=5,
    ...                   n_runs=10, repeats=2, n_boot=0, client="synchronous", progress=False)
    >>> est.n_feature, est.n_target, est.settings["n_runs"]
    (200, 3, 10)
    >>> est.curve_interval()  # empty: n_boot=0 turns the bootstrap off
    {}
    >>> ds = est.to_dataset()
    >>> ds.attrs["kind"], "stability" in ds
    ('estimate', True)
    """

    n_feature: int
    n_target: int
    settings: dict
    t_uniform: float
    t_uniform_std: float
    n_useful: int
    n_useful_mean: float
    n_useful_std: float
    n_useful_draws: np.ndarray = field(repr=False)
    real_stability: float
    real_nogueira: NogueiraStability
    p: float
    p_fit: PEstimate | None = field(repr=False)
    n_useful_v: float | None
    n_useful_v_std: float | None
    fixed_point_holds: bool | None
    calibrated: tuple[int, float] | None
    curve: xr.Dataset = field(repr=False)
    real_runs: int
    simulated_runs: int
    seconds: dict[str, float]
    selection_counts: np.ndarray | None = field(repr=False, default=None)
    t_uniform_draws: np.ndarray | None = field(repr=False, default=None)
    uniform_counts: np.ndarray | None = field(repr=False, default=None)
    calibration: xr.Dataset | None = field(repr=False, default=None)
    reliable: bool = True
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # true and worth saying, but no reason to doubt it
    has_curve: bool = True
    fixed_point_power: bool | None = None
    confidence: float = 0.95
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    bootstrap: xr.Dataset | None = field(repr=False, default=None)
    model: str = "onda"
    h: int | None = None  # the two-level model's preferred-set size
    within_copy_stability: float | None = None  # the real statistic h is fitted to
    self_check: SelfCheck | None = None  # the model against real ensembles it did not use
    curve_source: str = ""  # what made the curve, in words
    interval_of: str = "real runs"  # what the curve's bootstrap resamples
    simulator: bool = True  # the curve is the paper's simulator's (its cautions apply)
    features: xr.Dataset | None = field(repr=False, default=None)  # selection frequencies on the copies
    surface: xr.Dataset | None = field(repr=False, default=None)  # the curve at several n_target
    spending: Spending | None = None  # the rounds of real runs a precision asked for

    @property
    def threshold_saturated(self) -> int:
        """Draws in which t_uniform reached n_runs: no feature can be counted above it there,
        so those draws of A[f] are 0 whatever the selector (n_runs is too small)."""
        return int((self.t_uniform_draws >= self.settings["n_runs"]).sum())

    def predicted(self) -> dict[int, float]:
        """Predicted stability for each m_ensemble (NaN when there is no curve)."""
        return {int(m): float(s) for m, s in zip(self.curve["m_ensemble"].values, self.curve["stability"].values)}

    def curve_interval(self) -> dict[int, tuple[float, float]]:
        """The ``confidence`` interval of each predicted stability (empty without a bootstrap)."""
        if "stability_lower" not in self.curve:
            return {}
        c = self.curve
        return {
            int(m): (float(lo), float(hi))
            for m, lo, hi in zip(c["m_ensemble"].values, c["stability_lower"].values, c["stability_upper"].values)
        }

    def curve_se(self) -> dict[int, float]:
        """The standard error of each predicted stability: the standard deviation of its
        bootstrap replicates (every source of randomness the bootstrap covers), or without
        a bootstrap the point's own Monte-Carlo or sampling error."""
        c = self.curve
        if self.bootstrap is not None and "stability_boot" in self.bootstrap:
            sd = np.nanstd(self.bootstrap["stability_boot"].values, axis=0, ddof=1)
        else:
            sd = c["stability_std"].values
        return {int(m): float(v) for m, v in zip(c["m_ensemble"].values, sd)}

    def feature_table(self):
        """The features as a pandas table, most often kept first: ``name``, ``feature`` (its
        column), ``frequency_m<size>`` per measured size, ``mean_rank`` and the intervals
        (:func:`~ensstab_dask.estimates.features.feature_table`)."""
        if self.features is None:
            raise InvalidParameterError(f"model={self.model!r} ran no real ensemble copies: there is no feature table")
        return feature_table(self.features)

    def to_dict(self) -> dict:
        """The JSON-able summary (the keys of ``ensstab estimate --json``); NaN becomes null."""

        def pair(v):
            return None if v is None else [json_number(v[0]), json_number(v[1])]

        curve = {str(m): json_number(s) for m, s in self.predicted().items()}
        return {
            "reliable": bool(self.reliable),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "n_feature": self.n_feature,
            "n_target": self.n_target,
            "t_uniform": self.t_uniform,
            "t_uniform_std": self.t_uniform_std,
            "n_useful": self.n_useful,
            "n_useful_mean": self.n_useful_mean,
            "n_useful_std": self.n_useful_std,
            "real_stability": self.real_stability,
            "real_stability_nogueira": {
                "stability": self.real_nogueira.stability,
                "lower": self.real_nogueira.lower,
                "upper": self.real_nogueira.upper,
            },
            "p": json_number(self.p),
            "n_useful_v": self.n_useful_v,
            "n_useful_v_std": self.n_useful_v_std,
            "fixed_point_holds": self.fixed_point_holds,
            "fixed_point_power": self.fixed_point_power,
            "calibrated": None
            if self.calibrated is None
            else {"n_useful": self.calibrated[0], "p": self.calibrated[1]},
            "confidence": self.confidence,
            "n_boot": int(self.settings.get("n_boot", 0)),
            "t_uniform_interval": pair(self.intervals.get("t_uniform")),
            "n_useful_interval": pair(self.intervals.get("n_useful")),
            "real_stability_interval": pair(self.intervals.get("real_stability")),
            "p_interval": pair(self.intervals.get("p")),
            "model": self.model,
            "h": self.h,
            "h_interval": pair(self.intervals.get("h")),
            "within_copy_stability": self.within_copy_stability,
            "self_check": None if self.self_check is None else self.self_check.to_dict(),
            "curve_source": self.curve_source,
            "interval_of": self.interval_of,
            "simulator": self.simulator,
            "curve": curve if self.has_curve else None,
            "curve_interval": {str(m): pair(v) for m, v in self.curve_interval().items()} if self.has_curve else None,
            "curve_std": {
                str(int(m)): json_number(s)
                for m, s in zip(self.curve["m_ensemble"].values, self.curve["stability_std"].values)
            }
            if self.has_curve
            else None,
            "real_runs": self.real_runs,
            "simulated_runs": self.simulated_runs,
            "seconds": self.seconds,
            "settings": self.settings,
            "spending": None if self.spending is None else self.spending.to_dict(),
            "version": __version__,
            **self._features_dict(),
        }

    def _features_dict(self) -> dict:
        """The JSON's features (the first 100 rows of the table, the stable ones) and surface."""
        out: dict = {"features": None, "stable_features": None, "surface": None, "surface_interval": None}
        if self.features is not None:
            out.update(features=feature_rows(self.features), stable_features=stable_features(self.features))
        if self.surface is not None:
            out["surface"], out["surface_interval"] = surface_json(self.surface)
        return out

    def to_dataset(self, real: xr.Dataset | None = None) -> xr.Dataset:
        """Everything the estimate found, as one Dataset (what the report and plots read).

        Parameters
        ----------
        real : xarray.Dataset, optional
            The naive check from :func:`~ensstab_dask.real.naive.real_ensemble_stability` on the
            same data, stored beside the prediction as ``naive_*`` variables, with
            :func:`~ensstab_dask.estimates.comparison.compare`'s verdict per size as ``compare_*``.

        Returns
        -------
        xarray.Dataset
            ``stability``, ``stability_std``, ``stability_draws`` over ``m_ensemble`` (the
            predicted curve) with ``stability_lower``/``stability_upper`` (its interval)
            and ``stability_boot`` (the bootstrap replicates, over ``boot``);
            ``n_useful_boot``, ``real_stability_boot`` and ``p_boot`` over ``boot``;
            ``selection_counts`` and ``uniform_counts`` over ``feature``;
            ``t_uniform_draws`` and ``n_useful_draws`` over ``repeat``; with
            ``calibrate=True``, ``calibration_*`` surfaces over (``n_useful``, ``p``);
            every scalar of the estimate in ``attrs`` (``warnings`` joined by newlines).
        """
        ds = self.curve.copy()
        if self.bootstrap is not None:
            ds = ds.merge(self.bootstrap)
        # Short long_names for xarray's .plot labels (see sweep._var_attrs); the rest in description.
        runs = {"units": "runs", "description": f"times in the top n_target of {self.settings['n_runs']} runs"}
        ds["selection_counts"] = (
            "feature",
            self.selection_counts,
            dict(runs, long_name="times picked (real)", description="real selector: " + runs["description"]),
        )
        if self.uniform_counts is not None:
            ds["uniform_counts"] = (
                "feature",
                self.uniform_counts,
                dict(runs, long_name="times picked (uniform)", description="uniform selector: " + runs["description"]),
            )
        ds["t_uniform_draws"] = (
            "repeat",
            self.t_uniform_draws,
            {"long_name": "t_uniform", "units": "runs", "description": "t_uniform, one value per repeat"},
        )
        ds["n_useful_draws"] = (
            "repeat",
            self.n_useful_draws,
            {"long_name": "n_useful (A[f])", "units": "features", "description": "A[f], one value per repeat"},
        )
        if self.calibration is not None:
            cal = self.calibration
            for name in ("stability", "n_useful_v", "consistent"):
                var = cal[name].astype("int8") if cal[name].dtype == bool else cal[name]
                ds[f"calibration_{name}"] = var.assign_attrs(cal[name].attrs)
            ds.attrs.update({f"calibration_{k}": v for k, v in cal.attrs.items()})
        if real is not None:
            self._check_same_problem(real)
            for name in ("stability", "stability_se", "nogueira_lower", "nogueira_upper"):
                ds[f"naive_{name}"] = real[name].assign_attrs(real[name].attrs)
            # The verdict per size as compare() gives it, where the report reads it.
            ds = ds.merge(comparison_dataset(compare(self, real)))
            ds.attrs.update(
                naive_real_runs=int(real.attrs["real_runs"]),
                naive_seconds=float(real.attrs["seconds"]),
                naive_layout=real.attrs["layout"],
                naive_m_stability=int(real.attrs["m_stability"]),
            )
        ds = _with_features(ds, self.features, self.surface)
        skip = ("curve", "curve_std", "curve_interval", "settings", "seconds", "warnings", "notes", "self_check",
                "spending", "features", "stable_features", "surface", "surface_interval")  # fmt: skip
        flat = {k: v for k, v in self.to_dict().items() if k not in skip}
        for k, v in flat.items():
            if isinstance(v, dict):
                for kk, vv in v.items():
                    ds.attrs[f"{k}_{kk}"] = vv
            elif isinstance(v, list):
                ds.attrs[k] = np.array([np.nan if x is None else x for x in v], dtype=float)
            elif v is None:
                ds.attrs[k] = "none"
            elif isinstance(v, bool):
                ds.attrs[k] = int(v)
            else:
                ds.attrs[k] = v
        if self.self_check is not None:
            chk = self.self_check.to_dict()
            ds.attrs["self_check_passed"] = int(chk.pop("passed"))
            ds.attrs["self_check_held_out"] = chk.pop("held_out")
            for k, v in chk.items():
                ds.attrs[f"self_check_{k}"] = v if isinstance(v, int) else np.array(v, dtype=float)
        ds.attrs["warnings"] = "\n".join(self.warnings)
        ds.attrs["notes"] = "\n".join(self.notes)
        ds.attrs["has_curve"] = int(self.has_curve)
        if self.spending is not None:
            ds.attrs["spending"] = self.spending.sentence()
            ds.attrs["spending_reached"] = int(self.spending.reached)
        for k, v in self.settings.items():
            ds.attrs[k] = "none" if v is None else v
        for k, v in self.seconds.items():
            ds.attrs[f"seconds_{k}"] = v
        ds.attrs["answer"] = "\n".join(plain_answer(self))
        ds.attrs["summary"] = self.summary()
        return ds

    def _check_same_problem(self, real: xr.Dataset) -> None:
        """The naive check must measure what was predicted, or the two must not share a picture."""
        mine = {
            "m_ensemble": [int(m) for m in self.curve["m_ensemble"].values],
            "n_feature": self.n_feature,
            "n_target": self.n_target,
            "index": self.settings["index"],
            "aggregate": self.settings["aggregate"],
        }
        theirs = {
            "m_ensemble": [int(m) for m in real["m_ensemble"].values],
            **{k: real.attrs.get(k) for k in ("n_feature", "n_target", "index", "aggregate")},
        }
        diffs = [
            f"{k}: {mine[k]} in the estimate, {theirs[k]} in the naive check" for k in mine if mine[k] != theirs[k]
        ]
        if diffs:
            raise InvalidParameterError("real: the naive check does not match the estimate; " + "; ".join(diffs))

    def to_netcdf(self, path, *, overwrite: bool = False):
        return write_netcdf(self.to_dataset(), path, overwrite=overwrite)

    def summary(self) -> str:
        """The estimate for people: the verdict first, then plain words with the symbols in
        brackets, one number per line (with its interval, saying what interval it is);
        see :mod:`ensstab_dask.estimates.summary`."""
        return estimate_summary(self)


def _with_features(ds: xr.Dataset, features: xr.Dataset | None, surface: xr.Dataset | None) -> xr.Dataset:
    """The feature frequencies (``feature_*`` over ``feature`` and ``m_measured``: their
    sizes are not the curve's) and the surface (``surface_*`` over ``n_target`` and
    ``m_ensemble``) beside the curve, as the report reads them."""
    if features is not None:
        f = features.rename({"m_ensemble": "m_measured", "name": "feature_name"})
        f = f.rename({k: f"feature_{k}" for k in f.data_vars})
        f.attrs = {}
        ds = ds.merge(f)
        ds.attrs.update({f"features_{k}": v for k, v in features.attrs.items()})
    if surface is not None:
        ds = ds.merge(surface.rename({k: f"surface_{k}" for k in surface.data_vars}).drop_attrs(deep=False))
    return ds
