"""The parts of an :class:`~ensstab_dask.estimates.records.estimate.Estimate`, each a record a reader can name.

* :class:`SingleSelector`: what the real runs measured of the single selector (t_uniform,
  A[f], its stability and Nogueira's interval, how often each feature was picked);
* :class:`FittedSimulator` (:class:`~ensstab_dask.models.simulator_fit.SimulatorFit`):
  the paper's simulator fitted to them (p, the fixed point, the calibration, the point it
  predicts at); only a model whose curve is the simulator's has one;
* :class:`CurvePrediction`: the model's curve, its bootstrap and intervals, and what made it;
* :class:`Verdict`: whether to believe it (``reliable``, the warnings and the notes);
* :class:`~ensstab_dask.estimates.records.spending.Cost` and
  :class:`~ensstab_dask.estimates.records.spending.Spending` (in their own module): the
  real and simulated runs behind it and the seconds of each stage, and the rounds of real
  runs it spent.

Each record knows its own part of the estimate's JSON (``to_dict``) and of its Dataset
(``add_to``); so do the adapters :func:`parts` puts around the self-check, the spending,
the features and the surface. A part a model did not compute is no record at all: its
keys are absent from the JSON, not null.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Union

import numpy as np
import xarray as xr

from ensstab_dask.estimates.records.spending import Cost, Spending
from ensstab_dask.estimates.stages.features import feature_rows, stable_features
from ensstab_dask.indices import NogueiraStability
from ensstab_dask.models import SelfCheck
from ensstab_dask.models.simulator_fit import SimulatorFit
from ensstab_dask.outputs import json_attrs, json_number
from ensstab_dask.wording import Spelling, python, spell

__all__ = [
    "EstimateFields",
    "Part",
    "SingleSelector",
    "FittedSimulator",
    "CurvePrediction",
    "Verdict",
    "Smaller",
    "parts",
    "COORD_ATTRS",
    "with_coord_attrs",
]


class Part(Protocol):
    """What the estimate's JSON and Dataset read of each of its parts."""

    def to_dict(self) -> dict[str, Any]: ...

    def add_to(self, ds: xr.Dataset) -> xr.Dataset: ...


#: What :func:`~ensstab_dask.simulator.estimators.smaller_n_target` found: ``(k, A[f] at k)``;
#: ``False`` when no smaller n_target qualifies; ``None`` when it was not looked for
#: (runs given as subsets, without their rankings, or where the guard rails advise none).
Smaller = Union[tuple[int, float], Literal[False], None]


def _pair(v) -> list | None:
    return None if v is None else [json_number(v[0]), json_number(v[1])]


@dataclass(frozen=True)
class SingleSelector:
    """What the real runs measured of the single selector (docs/method.md sections 4-5).

    Attributes
    ----------
    n_runs : int
        Runs behind each draw of t_uniform and A[f].
    t_uniform_draws : ndarray
        The chance threshold, one draw per repeat (each the most picks of any feature by
        ``n_runs`` uniform selectors); ``t_uniform`` and ``t_uniform_std`` are their mean
        and standard deviation.
    n_useful_draws : ndarray
        A[f], one draw per threshold; ``n_useful_mean`` and ``n_useful_std`` likewise.
    n_useful : int
        A[f] rounded into [n_target, n_feature]: the value a simulator runs at.
    real_stability : float
        The single real selector's stability in the estimate's index.
    real_nogueira : NogueiraStability
        The same runs by Nogueira's index, with its 95 % interval.
    selection_counts, uniform_counts : ndarray
        Times each feature was in the top n_target of the ``n_runs`` real runs, and of the
        first draw's uniform runs.
    smaller : tuple, False or None
        The smaller n_target the same runs support (:data:`Smaller`).
    """

    n_runs: int
    t_uniform_draws: np.ndarray = field(repr=False)
    n_useful_draws: np.ndarray = field(repr=False)
    n_useful: int
    real_stability: float
    real_nogueira: NogueiraStability
    selection_counts: np.ndarray = field(repr=False)
    uniform_counts: np.ndarray = field(repr=False)
    smaller: Smaller = None

    @property
    def t_uniform(self) -> float:
        return float(self.t_uniform_draws.mean())

    @property
    def t_uniform_std(self) -> float:
        return float(self.t_uniform_draws.std(ddof=1))

    @property
    def n_useful_mean(self) -> float:
        return float(self.n_useful_draws.mean())

    @property
    def n_useful_std(self) -> float:
        return float(self.n_useful_draws.std(ddof=1))

    @property
    def threshold_saturated(self) -> int:
        """Draws in which t_uniform reached n_runs: no feature can be counted above it there,
        so those draws of A[f] are 0 whatever the selector (n_runs is too small)."""
        return int((self.t_uniform_draws >= self.n_runs).sum())

    def to_dict(self) -> dict[str, Any]:
        # The stability of one selector is the estimate's to say (single_selector_stability):
        # these runs' own is one of its measures.
        return {
            "t_uniform": self.t_uniform,
            "t_uniform_std": self.t_uniform_std,
            "n_useful": self.n_useful,
            "n_useful_mean": self.n_useful_mean,
            "n_useful_std": self.n_useful_std,
        }

    def add_to(self, ds: xr.Dataset) -> xr.Dataset:
        """The counts over ``feature`` and the draws over ``repeat``, the statistics in ``attrs``."""
        # Short long_names for xarray's .plot labels (see sweep._var_attrs); the rest in description.
        runs = {"units": "runs", "description": f"times in the top n_target of {self.n_runs} runs"}
        real = dict(runs, long_name="times picked (real)", description="real selector: " + runs["description"])
        uniform = dict(runs, long_name="times picked (uniform)", description="uniform selector: " + runs["description"])
        ds["selection_counts"] = ("feature", self.selection_counts, real)
        ds["uniform_counts"] = ("feature", self.uniform_counts, uniform)
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
        ds.attrs.update(json_attrs(self.to_dict()))
        return ds


#: The simulator's fit as the Estimate records it: the one record the fit is made as.
FittedSimulator = SimulatorFit


@dataclass(frozen=True)
class CurvePrediction:
    """The model's curve and what made it.

    Attributes
    ----------
    model : str
        The curve model (:mod:`ensstab_dask.models`).
    simulator : bool
        The curve is the paper's simulator's (its cautions apply).
    curve : xarray.Dataset
        ``stability`` and ``stability_std`` over ``m_ensemble``, with its interval
        (``stability_lower``, ``stability_upper``) when there is a bootstrap; all NaN when
        ``has_curve`` is False.
    has_curve : bool
        False when the method has nothing to say.
    confidence : float
        Level of ``intervals`` and of the curve's interval.
    n_boot : int
        Bootstrap replicates behind them (0: none).
    intervals : dict
        The model's parameters' intervals (``t_uniform``, ``n_useful``, ``real_stability``,
        ``p``, ``h``: those it has).
    bootstrap : xarray.Dataset or None
        The replicates (``stability_boot`` over ``boot``, and the parameters').
    source, interval_of : str
        What made the curve and what its bootstrap resamples, in words.
    h, within_copy_stability : int and float, or None
        The two-level model's preferred-set size and the real statistic it is fitted to.
    """

    model: str
    simulator: bool
    curve: xr.Dataset = field(repr=False)
    has_curve: bool = True
    confidence: float = 0.95
    n_boot: int = 0
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    bootstrap: xr.Dataset | None = field(default=None, repr=False)
    source: str = ""
    interval_of: str = "real runs"
    h: int | None = None
    within_copy_stability: float | None = None

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
        bootstrap replicates, or without a bootstrap the point's own Monte-Carlo or sampling error."""
        c = self.curve
        if self.bootstrap is not None and "stability_boot" in self.bootstrap:
            sd = np.nanstd(self.bootstrap["stability_boot"].values, axis=0, ddof=1)
        else:
            sd = c["stability_std"].values
        return {int(m): float(v) for m, v in zip(c["m_ensemble"].values, sd)}

    def curve_band(self) -> dict[int, float]:
        """The model band of each predicted stability (``stability_band``: the half-spread
        of the extrapolation's two ends beyond the measured sizes), 0 where the curve has none."""
        c = self.curve
        band = c["stability_band"].values if "stability_band" in c else np.zeros(c.sizes["m_ensemble"])
        return {int(m): float(v) for m, v in zip(c["m_ensemble"].values, band)}

    def _model_dict(self) -> dict[str, Any]:
        """The intervals and what made the curve; ``h`` and its statistic for a model that has them."""
        out: dict[str, Any] = {"confidence": self.confidence, "n_boot": int(self.n_boot)}
        # real_stability's interval is said with the paper's measure it belongs to (paper_stability).
        out.update({f"{key}_interval": _pair(v) for key, v in self.intervals.items() if key != "real_stability"})
        out["model"] = self.model
        if self.h is not None:
            out["h"] = self.h
        if self.within_copy_stability is not None:
            out["within_copy_stability"] = self.within_copy_stability
        out.update(curve_source=self.source, interval_of=self.interval_of, simulator=self.simulator)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The keys above, then the curve: ``curve``, ``curve_interval`` and ``curve_std`` by
        size, null when the method has nothing to say."""
        out = self._model_dict()
        if not self.has_curve:
            return dict(out, curve=None, curve_interval=None, curve_std=None)
        c = self.curve
        out["curve"] = {str(m): json_number(s) for m, s in self.predicted().items()}
        out["curve_interval"] = {str(m): _pair(v) for m, v in self.curve_interval().items()}
        sizes, std = c["m_ensemble"].values, c["stability_std"].values
        out["curve_std"] = {str(int(m)): json_number(s) for m, s in zip(sizes, std)}
        if "stability_law" in c:  # the second prediction beyond the measured sizes, and where the two disagree
            law = c["stability_law"].values
            out["curve_law"] = {str(int(m)): json_number(v) for m, v in zip(sizes, law) if np.isfinite(v)}
            out["curve_undecided"] = [int(m) for m, u in zip(sizes, c["undecided"].values) if bool(u)]
        return out

    def dataset(self) -> xr.Dataset:
        """The curve with its bootstrap replicates: the estimate's Dataset starts here."""
        ds = self.curve.copy()
        return ds if self.bootstrap is None else ds.merge(self.bootstrap)

    def add_to(self, ds: xr.Dataset) -> xr.Dataset:
        ds.attrs.update(json_attrs(self._model_dict()))
        ds.attrs["has_curve"] = int(self.has_curve)
        return ds


@dataclass(frozen=True)
class Verdict:
    """Whether to believe the estimate: ``reliable`` is False whenever ``warnings`` is not
    empty (each opens with what it means in plain words, up to its first ``": "``);
    ``notes`` say what is true and worth saying but no reason to doubt it (a selector that
    finds fewer useful features than ``n_target``, for a model that measures real ensembles)."""

    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: How the estimate's words name a setting (:mod:`ensstab_dask.wording`): the spelling
    #: its warnings and notes are in, which its summary and answer use too.
    spelling: Spelling = field(default=python, repr=False, compare=False)

    @property
    def reliable(self) -> bool:
        return not self.warnings

    def spelled(self, spelling: Spelling) -> Verdict:
        """The verdict with the settings its words name as ``spelling`` writes them."""
        return Verdict([spell(w, spelling) for w in self.warnings], [spell(n, spelling) for n in self.notes], spelling)

    def to_dict(self) -> dict[str, Any]:
        return {"reliable": bool(self.reliable), "warnings": list(self.warnings), "notes": list(self.notes)}

    def add_to(self, ds: xr.Dataset) -> xr.Dataset:
        ds.attrs.update(reliable=int(self.reliable), warnings="\n".join(self.warnings), notes="\n".join(self.notes))
        return ds


@dataclass(frozen=True)
class _Checked:
    """The self-check's part: ``self_check`` in the JSON, ``self_check_*`` in ``attrs``."""

    check: SelfCheck

    def to_dict(self) -> dict[str, Any]:
        return {"self_check": self.check.to_dict()}

    def add_to(self, ds: xr.Dataset) -> xr.Dataset:
        chk = self.check.to_dict()
        ds.attrs["self_check_passed"] = int(chk.pop("passed"))
        ds.attrs["self_check_held_out"] = chk.pop("held_out")
        for k, v in chk.items():
            ds.attrs[f"self_check_{k}"] = v if isinstance(v, int) else np.array(v, dtype=float)
        return ds


@dataclass(frozen=True)
class _Spent:
    """The rounds of real runs (a precision's, or the layout's growth): ``spending`` in the
    JSON, its sentence in ``attrs``."""

    spending: Spending
    spelling: Spelling

    def to_dict(self) -> dict[str, Any]:
        return {"spending": self.spending.to_dict()}

    def add_to(self, ds: xr.Dataset) -> xr.Dataset:
        ds.attrs.update(spending=spell(self.spending.sentence(), self.spelling))
        if self.spending.reached is not None:
            ds.attrs.update(spending_reached=int(self.spending.reached))
        return ds


@dataclass(frozen=True)
class _Features:
    """The features: the table's first 100 rows and the stable ones in the JSON;
    ``feature_*`` over ``feature`` and ``m_measured`` (their sizes are not the curve's)."""

    features: xr.Dataset

    def to_dict(self) -> dict[str, Any]:
        return {"features": feature_rows(self.features), "stable_features": stable_features(self.features)}

    def add_to(self, ds: xr.Dataset) -> xr.Dataset:
        f = self.features.rename({k: f"feature_{k}" for k in self.features.data_vars})
        f.attrs = {}
        ds = ds.merge(f)
        ds.attrs.update({f"features_{k}": v for k, v in self.features.attrs.items()})
        return ds


@dataclass(frozen=True)
class _Accuracy:
    """The accuracy from the halves: ``accuracy`` (score and SE per measured size) in the
    JSON; ``accuracy``, ``accuracy_se`` over ``m_measured`` and ``accuracy_copy`` over
    (``copy``, ``m_measured``) in the Dataset, the metric and predictor in its attributes."""

    accuracy: xr.Dataset

    def to_dict(self) -> dict[str, Any]:
        a = self.accuracy
        sizes = [str(int(m)) for m in a["m_measured"].values]
        return {
            "accuracy": {
                "metric": a.attrs["metric"],
                "predictor": a.attrs["predictor"],
                "copies": int(a.attrs["copies"]),
                "score": {m: json_number(v) for m, v in zip(sizes, a["accuracy"].values)},
                "se": {m: json_number(v) for m, v in zip(sizes, a["accuracy_se"].values)},
            }
        }

    def add_to(self, ds: xr.Dataset) -> xr.Dataset:
        a = self.accuracy.copy()
        a.attrs = {}
        ds = ds.merge(a)
        ds.attrs.update({f"accuracy_{k}": v for k, v in self.accuracy.attrs.items()})
        return ds


@dataclass(frozen=True)
class _Surface:
    """The curve at several n_target: ``surface`` and ``surface_interval`` in the JSON,
    ``surface_*`` over (``n_target``, ``m_ensemble``)."""

    surface: xr.Dataset

    def to_dict(self) -> dict[str, Any]:
        """``{k: {m: value}}`` and ``{k: {m: [lo, hi]}}`` (null where there is none)."""
        values, intervals = {}, {}
        for k in self.surface["n_target"].values:
            row = self.surface.sel(n_target=k)
            m, lo, hi = row["m_ensemble"].values, row["stability_lower"].values, row["stability_upper"].values
            values[str(int(k))] = {str(int(a)): json_number(v) for a, v in zip(m, row["stability"].values)}
            intervals[str(int(k))] = {
                str(int(a)): None if not (np.isfinite(b) and np.isfinite(c)) else [float(b), float(c)]
                for a, b, c in zip(m, lo, hi)
            }
        return {"surface": values, "surface_interval": intervals}

    def add_to(self, ds: xr.Dataset) -> xr.Dataset:
        renamed = self.surface.rename({k: f"surface_{k}" for k in self.surface.data_vars})
        return ds.merge(renamed.drop_attrs(deep=False))


#: What the features' coordinates were called before they shared the estimate's Dataset's names.
#: Every coordinate an estimate's Dataset can have, and its attributes, in one place
#: (:func:`with_coord_attrs`). Units where the values have them; a name or a ratio has
#: none (xarray would print "[1]"), only its long_name and description.
COORD_ATTRS: dict[str, dict[str, str]] = {
    "m_ensemble": dict(long_name="m_ensemble", units="selectors", description="weak selectors in one ensemble"),
    "m_measured": dict(long_name="m_measured", units="selectors", description="sizes the real copies measured"),
    "feature": dict(long_name="feature", units="column", description="the feature's column in X, from 0"),
    "feature_name": dict(long_name="feature name", description="from the data's header, var_names or feature_names"),
    "n_target": dict(long_name="features kept (n_target)", units="features", description="top features kept"),
    "boot": dict(long_name="bootstrap replicate", units="replicate", description="from 0"),
    "repeat": dict(long_name="repeat", units="draw", description="a draw of t_uniform and A[f], from 0"),
    "n_useful": dict(long_name="n_useful", units="features", description="the simulator's useful features (grid)"),
    "p": dict(long_name="p", description="the simulator's probability of picking a useful feature (grid)"),
}


def with_coord_attrs(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` with every dimension a coordinate (a counter from 0 where it had none) and
    every coordinate of :data:`COORD_ATTRS` carrying its attributes."""
    counters = {d: np.arange(n) for d, n in ds.sizes.items() if d not in ds.coords}
    ds = ds.assign_coords(counters)
    for name, attrs in COORD_ATTRS.items():
        if name in ds.coords:
            ds[name].attrs = dict(attrs)
    return ds


class EstimateFields(Protocol):
    """What the words read of an estimate: the records of
    :class:`~ensstab_dask.estimates.records.estimate.Estimate`, named by what it has (the modules of
    words are imported by the result's, so they cannot import it)."""

    n_feature: int
    n_target: int
    settings: dict
    single: SingleSelector
    fit: FittedSimulator | None
    prediction: CurvePrediction
    self_check: SelfCheck | None
    verdict: Verdict
    cost: Cost
    features: xr.Dataset | None
    accuracy: xr.Dataset | None
    surface: xr.Dataset | None
    spending: Spending | None

    @property
    def curve(self) -> xr.Dataset: ...
    @property
    def has_curve(self) -> bool: ...
    @property
    def reliable(self) -> bool: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def notes(self) -> list[str]: ...

    def curve_interval(self) -> dict[int, tuple[float, float]]: ...


def parts(est) -> list[Part]:
    """An estimate's parts, in the order its JSON and Dataset give them: those it has."""
    out: list[Any] = [est.verdict, est.single, est.fit, est.prediction]
    out += [None if est.self_check is None else _Checked(est.self_check), est.cost]
    out += [None if est.spending is None else _Spent(est.spending, est.verdict.spelling)]
    out += [None if est.features is None else _Features(est.features)]
    out += [None if est.accuracy is None else _Accuracy(est.accuracy)]
    out += [None if est.surface is None else _Surface(est.surface)]
    return [p for p in out if p is not None]
