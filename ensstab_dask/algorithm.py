"""The whole estimate (SPEC section 7, the paper's Algorithm 1), stage by stage.

:func:`estimate` runs the real base selector on a few resamples of the data and
simulates everything else. Its stages are functions of their own, so that each can be
tested alone and re-run on resampled inputs (:mod:`ensstab_dask.uncertainty`):

1. :func:`real_subsets` (one pool) or :func:`~ensstab_dask.selectors.real_run_plan`
   (every pool in one submission): the real runs, as their top-``n_target`` subsets;
2. :func:`threshold_draws`: t_uniform, ``repeats`` draws of ``n_runs`` uniform selectors;
3. :func:`useful_draws`: A[f], one draw per threshold, each from ``n_runs`` runs of the
   pool (without replacement when the pool is larger), and :func:`round_n_useful`;
4. :func:`real_stability_of`: the single real selector's stability, with Nogueira's
   interval;
5. p from that stability (:func:`~ensstab_dask.estimation.estimate_p`, common random
   numbers, ``repeats x m_stability`` simulated copies so that its noise is small);
6. the fixed point u = A[f_{u,p}] and :func:`fixed_point_power`, whether the check could
   have failed at all;
7. :func:`predict_curve`: the simulated curve for each ``m_ensemble``;

then a bootstrap over the real runs gives every quantity an interval, and
:func:`guard_rails` says when the method has nothing to say.

Which runs calibrate the simulator (``calibration_layout``, SPEC section 8):

* ``"paper"``: every run on ``resample`` (random halves): the paper's method, one pool
  of ``max(m_stability, n_runs)`` runs;
* ``"ensemble"``: p from ``m_stability`` runs in the ensemble's own weak-selector layout
  (``member_resample``, default a bootstrap sample of a random half, as the naive check's
  bagging ensembles), n_useful from ``n_runs`` runs on ``resample``: two pools. The
  default: the validation harness found it at least as good as the paper's layout on
  all four reference datasets (README, "Validation");
* ``"ensemble-all"``: n_useful and p both from one pool in the weak-selector layout.

The naive check (:mod:`ensstab_dask.naive`), leave-one-out accuracy
(:mod:`ensstab_dask.accuracy`) and the validation harness (:mod:`ensstab_dask.validation`)
live in their own modules.
"""

from __future__ import annotations

import warnings as _warnings
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from ._stability import NogueiraStability, nogueira_stability, stability_of_subsets
from ._validation import (
    AGGREGATES,
    CALIBRATION_LAYOUTS,
    DEFAULT_CALIBRATION_LAYOUT,
    DEFAULT_MODEL,
    INDICES,
    check_choice,
    check_int,
    check_m_ensemble,
    check_real,
    check_seed,
)
from ._version import __version__
from .cluster import ClientLike, connect
from .datasets import check_data
from .estimation import (
    FixedPointCheck,
    PEstimate,
    check_fixed_point,
    count_useful,
    estimate_p,
    selection_counts,
    threshold_draws,
    uniform_subsets,
)
from .models import Context, CurveModel, Prediction, SelfCheck, clip_to_index, get_model
from .models._base import CALIBRATE as _CALIBRATE
from .models._base import CHECK_COPIES as _CHECK_COPIES
from .models._base import COPIES as _COPIES
from .models._base import MEMBER_RUNS as _MEMBER_RUNS
from .models._base import POOL as _POOL
from .models._base import POWER as _POWER
from .models._base import REAL as _REAL
from .models._base import T_UNIFORM as _T_UNIFORM
from .models._base import VERIFY as _VERIFY
from .models._base import P as _P
from .models.onda import predict_curve
from .progress import StageBar, StageClock, note_dashboard
from .seeding import SeedLike, Stream, as_seed_sequence, derive, make_rng
from .selectors import Copies, Pool, check_resample, describe_selector, make_scorer, real_run_plan, real_runs
from .simulation import top_subsets

__all__ = [
    "estimate",
    "Estimate",
    "CALIBRATION_LAYOUTS",
    "real_subsets",
    "threshold_draws",
    "useful_draws",
    "round_n_useful",
    "real_stability_of",
    "fixed_point_power",
    "predict_curve",
    "guard_rails",
    "blocking_reasons",
    "caution_reasons",
    "runs_from_copies",
]

# The fixed-point check has power when it would fail for a u this far off (factor).
_POWER_FACTOR = 1.5


# -- stages --------------------------------------------------------------------------


def real_subsets(
    X, y, n_target: int, *, n_runs: int, selector=None, resample="half", seed: SeedLike = 0, client="synchronous"
) -> np.ndarray:
    """Stage 1: the top-``n_target`` subsets of ``n_runs`` real runs, shape (n_runs, n_target).

    Run ``i`` is :func:`~ensstab_dask.selectors.real_runs`'s run ``i`` with this seed, so
    the first k runs of a larger pool are exactly the runs of a pool of k.
    """
    ranks = real_runs(X, y, n_target, n_runs=n_runs, selector=selector, resample=resample, seed=seed, client=client)
    return top_subsets(ranks, n_target)


def useful_draws(subsets: np.ndarray, n_feature: int, thresholds, *, n_runs: int, rng: np.random.Generator):
    """Stage 3: A[f] for each threshold, from ``n_runs`` runs of ``subsets`` each.

    When the pool holds more than ``n_runs`` runs, each draw takes ``n_runs`` of them
    without replacement (``rng``), so the spread reflects the choice of runs; otherwise
    every draw uses the same runs and the spread is the threshold's alone.
    """
    pool = len(subsets)
    return np.array(
        [count_useful(subsets[rng.choice(pool, n_runs, replace=False)], n_feature, int(t)) for t in thresholds]
    )


def round_n_useful(draws, n_target: int, n_feature: int) -> int:
    """The n_useful the simulator runs at: the mean of the draws, rounded, within [n_target, n_feature].

    The simulator is defined only there. A clamped value is not what the real runs
    measured: pass ``n_useful=(mean of the draws, this value)`` to :func:`caution_reasons`,
    which says so.
    """
    return int(min(max(round(float(np.mean(draws))), n_target), n_feature))


def real_stability_of(subsets: np.ndarray, n_feature: int, index: str) -> tuple[float, NogueiraStability]:
    """Stage 4: the stability of the single real selector, and Nogueira's 95 % interval."""
    return float(stability_of_subsets(subsets, n_feature, index)), nogueira_stability(subsets, n_feature)


def fixed_point_power(
    n_feature: int, n_target: int, n_useful: int, p: float, *, n_runs: int, repeats: int, seed: SeedLike = 0
) -> FixedPointCheck | None:
    """Stage 6b: the fixed-point check at a clearly wrong u = 1.5 n_useful.

    The fixed point catches an overestimated n_useful (SPEC section 6): a simulator with
    too many useful features is counted at fewer. Below the fitted u the map is the
    identity whenever every S' feature is counted, so only the upper side can speak. At
    p near 1 it cannot either: A[f_{u,p}] follows u whatever u is, and "u = A[f_{u,p}]
    holds" is no evidence. The check has power when it *fails* here. Returns that check,
    or None when 1.5 n_useful exceeds n_feature (nothing to try).
    """
    u = round(n_useful * _POWER_FACTOR)
    if not n_useful < u <= n_feature:
        return None
    return check_fixed_point(n_feature, n_target, u, p, n_runs=n_runs, repeats=repeats, seed=seed)


def blocking_reasons(
    *, n_target: int, n_runs: int, n_useful_mean: float, t_draws: np.ndarray, real_nogueira: NogueiraStability
) -> list[str]:
    """Why no curve can be predicted at all (empty when one can): checked before p is fitted."""
    out = []
    saturated = int((np.asarray(t_draws) >= n_runs).sum())
    if n_useful_mean <= n_target:
        out.append(
            f"A[f] = {n_useful_mean:.1f} is at or below n_target = {n_target}: the selector hardly beats one that "
            "picks features uniformly at random, so there is no n_useful to simulate"
        )
    if saturated * 2 > len(t_draws):
        out.append(
            f"t_uniform reached n_runs = {n_runs} in {saturated} of {len(t_draws)} draws: no feature can be counted "
            "above it, so A[f] says nothing; increase n_runs"
        )
    if real_nogueira.lower <= 0.0:
        out.append(
            f"the real selector's stability is not distinguishable from chance (Nogueira 95% interval "
            f"[{real_nogueira.lower:.3f}, {real_nogueira.upper:.3f}] includes 0), so p cannot be fitted"
        )
    return out


def caution_reasons(
    *,
    n_runs: int,
    t_draws: np.ndarray,
    p_fit: PEstimate | None,
    fixed_point: FixedPointCheck | None,
    power: FixedPointCheck | None,
    verified: bool = True,
    calibration_empty: bool = False,
    n_useful: tuple[float, int] | None = None,
) -> list[str]:
    """Why a simulated curve is not a validated prediction (empty when nothing says so).

    ``verified=False``: the fixed point was not checked (``verify=False``);
    ``calibration_empty``: ``calibrate=True`` found no (u, p) consistent with both
    statistics; ``n_useful``: (A[f], the n_useful simulated), when
    :func:`round_n_useful` had to clamp A[f] into [n_target, n_feature].
    """
    out = []
    if n_useful is not None and round(n_useful[0]) != n_useful[1]:
        measured, used = n_useful
        bound = "n_target" if used > measured else "n_feature"
        out.append(
            f"n_useful was clamped from A[f] = {measured:.1f} to {bound} = {used}: the simulator needs "
            f"n_target <= n_useful <= n_feature, and {used} is not what the real runs measured"
        )
    if not verified:
        out.append("the fixed point was not checked (verify=False): nothing confirms n_useful")
    if calibration_empty:
        out.append(
            "the calibration grid has no (u, p) consistent with both the real stability and A[f]: the simulator "
            "cannot match the selector on both at once (the curve uses the uncalibrated (u, p))"
        )
    saturated = int((np.asarray(t_draws) >= n_runs).sum())
    if 0 < saturated * 2 <= len(t_draws):
        out.append(
            f"t_uniform reached n_runs = {n_runs} in {saturated} of {len(t_draws)} draws, where A[f] cannot see "
            "useful features: n_useful is underestimated; increase n_runs"
        )
    if p_fit is not None and p_fit.at_boundary:
        out.append(
            f"p = {p_fit.p:.3f} is at the end of its search range: the simulated single selector cannot reach the "
            f"real stability {p_fit.target:.4f}"
        )
    if fixed_point is not None and not fixed_point.holds:
        out.append(
            f"the fixed point does not hold (u = {fixed_point.n_useful}, A[f_(u,p)] = {fixed_point.mean:.1f}): the "
            "simulator does not reproduce this selector's counts"
        )
    if fixed_point is not None and fixed_point.holds and (power is None or power.holds):
        where = (
            f"u = A[f_(u,p)] also holds at u = {power.n_useful} (A = {power.mean:.1f})"
            if power is not None
            else "there is no larger u to try it at"
        )
        out.append(
            f"the fixed-point check has no power at p = {fixed_point.p:.3f}: {where}, so it cannot confirm "
            "n_useful (p is too close to 1)"
        )
    return out


def guard_rails(
    *,
    n_target: int,
    n_runs: int,
    n_useful_mean: float,
    t_draws: np.ndarray,
    real_nogueira: NogueiraStability,
    p_fit: PEstimate | None,
    fixed_point: FixedPointCheck | None,
    power: FixedPointCheck | None,
    verified: bool = True,
    calibration_empty: bool = False,
) -> tuple[bool, list[str], list[str]]:
    """When the method has nothing to say (SPEC section 11).

    Returns ``(predictable, blocking, cautions)``: :func:`blocking_reasons` mean no curve
    can be predicted at all; :func:`caution_reasons` mean the curve is simulated but is
    not a validated prediction. The estimate is reliable when both lists are empty.
    """
    blocking = blocking_reasons(
        n_target=n_target, n_runs=n_runs, n_useful_mean=n_useful_mean, t_draws=t_draws, real_nogueira=real_nogueira
    )
    cautions = caution_reasons(
        n_runs=n_runs,
        t_draws=t_draws,
        p_fit=p_fit,
        fixed_point=fixed_point,
        power=power,
        verified=verified,
        calibration_empty=calibration_empty,
    )
    return not blocking, blocking, cautions


# -- the result ----------------------------------------------------------------------


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
        The fitted quantities (SPEC sections 4-5); ``n_useful`` is the one simulated.
    curve : xarray.Dataset
        The predicted ``stability`` over ``m_ensemble`` (``predicted()`` as a dict).
    real_runs, simulated_runs : int
        Runs of the real selector and of the simulated one behind the estimate.
    reliable : bool
        False when any guard rail tripped; ``warnings`` says which, in words.
    has_curve : bool
        False when the method has nothing to say.
    confidence : float
        Level of ``intervals`` and ``curve_interval()``.
    seconds : dict
        Wall time of each stage.

    The other fields hold the draws, the fixed-point checks and the bootstrap behind
    these; ``to_dict()`` lists them.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> from ensstab_dask.datasets import make_microarray
    >>> from ensstab_dask.selectors import default_selector
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

    def to_dict(self) -> dict:
        """The JSON-able summary (the keys of ``ensstab estimate --json``); NaN becomes null."""

        def num(v):
            return None if v is None or not np.isfinite(v) else float(v)

        def pair(v):
            return None if v is None else [num(v[0]), num(v[1])]

        curve = {str(m): num(s) for m, s in self.predicted().items()}
        return {
            "reliable": bool(self.reliable),
            "warnings": list(self.warnings),
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
            "p": num(self.p),
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
                str(int(m)): num(s) for m, s in zip(self.curve["m_ensemble"].values, self.curve["stability_std"].values)
            }
            if self.has_curve
            else None,
            "real_runs": self.real_runs,
            "simulated_runs": self.simulated_runs,
            "seconds": self.seconds,
            "settings": self.settings,
            "version": __version__,
        }

    def to_dataset(self, real: xr.Dataset | None = None) -> xr.Dataset:
        """Everything the estimate found, as one Dataset (what the report and plots read).

        Parameters
        ----------
        real : xarray.Dataset, optional
            The naive check from :func:`~ensstab_dask.naive.real_ensemble_stability` on the
            same data, stored beside the prediction as ``naive_*`` variables.

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
            ds.attrs.update(
                naive_real_runs=int(real.attrs["real_runs"]),
                naive_seconds=float(real.attrs["seconds"]),
                naive_layout=real.attrs["layout"],
                naive_m_stability=int(real.attrs["m_stability"]),
            )
        skip = ("curve", "curve_std", "curve_interval", "settings", "seconds", "warnings", "self_check")
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
        ds.attrs["has_curve"] = int(self.has_curve)
        for k, v in self.settings.items():
            ds.attrs[k] = "none" if v is None else v
        for k, v in self.seconds.items():
            ds.attrs[f"seconds_{k}"] = v
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
            raise ValueError("real: the naive check does not match the estimate; " + "; ".join(diffs))

    def to_netcdf(self, path, *, overwrite: bool = False):
        from .storage import write_netcdf

        return write_netcdf(self.to_dataset(), path, overwrite=overwrite)

    # What each interval in ``intervals`` is an interval of: the summary names it.
    _INTERVAL_KINDS = {
        "t_uniform": "range of fresh draws of the uniform selector",
        "n_useful": "bootstrap interval over the real runs",
        "real_stability": "bootstrap interval over the real runs",
        "p": "bootstrap interval over the real runs",
        "h": "interval from the real ensemble copies (Student's t)",
    }

    def _interval_text(self, key: str, fmt: str) -> str:
        """``"95% bootstrap interval over the real runs [lo, hi]"`` for ``key`` (the kind of
        interval named, see ``_INTERVAL_KINDS``), or "" without a bootstrap."""
        if key not in self.intervals:
            return ""
        lo, hi = self.intervals[key]
        kind = self._INTERVAL_KINDS.get(key, "interval")
        return f"{self.confidence:.0%} {kind} [{lo:{fmt}}, {hi:{fmt}}]"

    def summary(self) -> str:
        """The estimate for people: the verdict first, then plain words with the symbols in
        brackets, one number per line (with its interval, saying what interval it is)."""
        s, nog = self.settings, self.real_nogueira
        index = s["index"]

        def line(words: str, value: str, where: str = "", *notes: str) -> str:
            """``words: value, where; note; note``: one number, where it came from, its interval."""
            return f"    {words}: {value}" + (f", {where}" if where else "") + "".join(f"; {n}" for n in notes if n)

        lines = [
            f"Estimated stability of ensembles of the base selector ({index} index; {self.n_feature} features, "
            f"each run keeps its top {self.n_target} (n_target))",
        ]
        # The verdict comes before any number: whether to believe what follows.
        if self.reliable:
            checked = "" if self.self_check is None else " and the self-check passed"
            lines.append(f"  reliable: yes (no guard rail tripped{checked})")
        else:
            lines.append(
                "  reliable: NO"
                + ("" if self.has_curve else ": the method has nothing to say here, and no curve is predicted")
            )
            lines += [f"  warning: {w}" for w in self.warnings]

        # Which runs each statistic came from (calibration_layout): say it where it is used.
        halves = "random halves" if s.get("resample", "half") == "half" else f"resamples ({s['resample']})"
        members = f"the weak selectors' layout ({s.get('member_resample', 'bagging')})"
        useful_on, stability_on = {
            "paper": (halves, halves),
            "ensemble": (halves, members),
            "ensemble-all": (members, members),
            "copies": (
                "the real ensemble copies' weak selectors (those of one copy share its half)",
                "the first weak selector of each real ensemble copy",
            ),
        }.get(str(s.get("calibration_layout")), (halves, halves))
        n_draws = len(self.t_uniform_draws) if self.t_uniform_draws is not None else s.get("repeats", 0)
        lines += ["", "  Measured on the real runs:"]
        lines.append(
            line(
                f"chance threshold (t_uniform, most picks of any feature by {s['n_runs']} random selectors)",
                f"{self.t_uniform:.2f}",
                f"mean of {n_draws} draws",
            )
        )
        if self.t_uniform_draws is not None and len(self.t_uniform_draws) > 1:
            t_lo, t_hi = int(self.t_uniform_draws.min()), int(self.t_uniform_draws.max())
            lines.append(line("t_uniform's standard deviation over the draws", f"{self.t_uniform_std:.2f}",
                              f"draws from {t_lo} to {t_hi}"))  # fmt: skip
        lines.append(
            line(
                "useful features (n_useful = A[f], picked more often than t_uniform)",
                f"{self.n_useful}",
                f"from {s['n_runs']} real runs on {useful_on}",
                self._interval_text("n_useful", ".1f"),
            )
        )
        lines.append(line("A[f] before rounding", f"{self.n_useful_mean:.1f}", f"mean over {n_draws} threshold draws"))
        lines.append(line("A[f]'s standard deviation over the threshold draws", f"{self.n_useful_std:.1f}"))
        lines.append(
            line(
                f"stability of one real selector ({index} index)",
                f"{self.real_stability:.4f}",
                f"from {s.get('stability_runs', s['m_stability'])} real runs: {stability_on}"
                if stability_on != useful_on
                else f"from {s.get('stability_runs', s['m_stability'])} of those runs",
                self._interval_text("real_stability", ".4f"),
            )
        )
        lines.append(
            line(
                "the same runs by Nogueira's index",
                f"{nog.stability:.4f}",
                "",
                f"Nogueira's {1 - nog.alpha:.0%} confidence interval [{nog.lower:.4f}, {nog.upper:.4f}]",
            )
        )

        if np.isfinite(self.p) or self.n_useful_v is not None:
            # A curve that does not come from this simulator: say so.
            unused = "" if self.simulator else " (not what makes the curve here)"
            lines += ["", f"  The paper's simulator fitted to them{unused}:"]
        if np.isfinite(self.p):
            at_end = "at the end of its search range" if self.p_fit is not None and self.p_fit.at_boundary else ""
            lines.append(
                line(
                    "selector strength (p, the chance a rank goes to a favoured useful feature)",
                    f"{self.p:.4f}",
                    "",
                    self._interval_text("p", ".3f"),
                    at_end,
                )
            )
        if self.n_useful_v is not None:
            if not self.fixed_point_holds:
                verdict = "does NOT hold: the simulator may not model this selector"
            elif self.fixed_point_power is False:
                verdict = "holds, but so it would for other u: no evidence either way"
            else:
                verdict = "holds"
            lines.append(
                line(
                    "useful features the fitted simulator itself counts (A[f_(u,p)])",
                    f"{self.n_useful_v:.1f}",
                    f"mean of {s['repeats']} draws",
                )
            )
            lines.append(line("A[f_(u,p)]'s standard deviation over the draws", f"{self.n_useful_v_std:.1f}"))
            lines.append(line("fixed point (n_useful = A[f_(u,p)])", verdict))
        if self.calibrated is not None:
            lines.append(
                line(
                    "calibrated simulator (n_useful, p), where both real statistics are matched at once",
                    f"({self.calibrated[0]}, {self.calibrated[1]:.3f})",
                )
            )
        if self.h is not None:
            lines.append(
                line(
                    "preferred features per ensemble copy (h, two-level model)",
                    f"{self.h}",
                    "",
                    self._interval_text("h", ".0f"),
                )
            )
            lines.append(
                line("stability of the weak selectors within one real copy, what h is fitted to",
                     f"{self.within_copy_stability:.4f}")
            )  # fmt: skip

        if self.has_curve:
            made = "Simulated" if self.simulator else "Estimated"
            heading = "Predicted stability" if self.reliable else f"{made} stability (NOT a validated prediction)"
            source = self.curve_source
            intervals = self.curve_interval()
            if intervals:
                of = self.interval_of
                widened = ", widened for h's interval" if "h" in self.intervals else ""
                if self.self_check is not None and not self.self_check.passed:
                    widened += ", widened by the self-check's error"
                band = (
                    f"each with its {self.confidence:.0%} bootstrap interval over the {of} "
                    f"({s['n_boot']} replicates{widened}):"
                )
            else:
                band = "no bootstrap (n_boot=0): each with the spread of one simulated measurement only:"
            lines += ["", f"  {heading} of an ensemble of m_ensemble weak selectors ({source}),", f"  {band}"]
            for m, value, sd in zip(
                self.curve["m_ensemble"].values, self.curve["stability"].values, self.curve["stability_std"].values
            ):
                if intervals:
                    lo, hi = intervals[int(m)]
                    note = f"{self.confidence:.0%} interval [{lo:.4f}, {hi:.4f}]"
                else:
                    note = f"standard deviation of one simulated measurement {sd:.4f}"
                lines.append(f"    m_ensemble = {int(m)}: {value:.4f}; {note}")
        if self.self_check is not None:
            lines += ["", "  " + _check_text(self.self_check)]
        lines += [
            "",
            f"  cost: {self.real_runs} real runs of the selector, {self.simulated_runs} simulated runs, "
            f"{sum(self.seconds.values()):.1f} s",
        ]
        return "\n".join(lines)


def _check_text(check: SelfCheck) -> str:
    """The self-check in one sentence for the summary."""
    sizes = ", ".join(
        f"m = {m}: predicted {p:.3f}, measured {r:.3f}, z = {z:+.1f}"
        for m, p, r, z in zip(check.sizes, check.predicted, check.measured, check.z)
    )
    verdict = "passed" if check.passed else "FAILED"
    return (
        f"Self-check {verdict} ({check.held_out}; measured on {check.copies} real ensemble copies of "
        f"{check.members}; |z| <= 2 passes): {sizes}"
    )


# -- the whole estimate --------------------------------------------------------------


def estimate(
    X,
    y,
    n_target: int,
    *,
    selector=None,
    m_ensemble=(1, 5, 10, 20, 30, 50),
    m_stability: int = 50,
    n_runs: int | None = None,
    repeats: int = 20,
    p_method: str = "bisect",
    verify: bool = True,
    calibrate: bool = False,
    calibration_layout: str = DEFAULT_CALIBRATION_LAYOUT,
    member_resample="bagging",
    n_boot: int = 200,
    confidence: float = 0.95,
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    resample="half",
    seed: SeedLike = 0,
    client: ClientLike = None,
    timeout: float = 10.0,
    security=None,
    model: str = DEFAULT_MODEL,
    progress: bool = True,
) -> Estimate:
    """Predict the stability of ensembles of a base selector on ``(X, y)`` (Algorithm 1).

    Parameters
    ----------
    X, y : the data (n_samples, n_feature) and labels
    n_target : int
        Features each selector keeps.
    selector : None, scikit-learn estimator or callable
        See :mod:`ensstab_dask.selectors`; None is the default random forest.
    m_ensemble : sequence of int
        Ensemble sizes to predict.
    m_stability : int
        Copies behind each stability value (real single selector and simulations).
    n_runs : int, optional
        Runs behind t_uniform and n_useful; default ``max(m_ensemble)``: the method ties
        it to the ensemble size.
    repeats : int
        Draws of t_uniform, n_useful, A[f_{u,p}] and of each predicted stability.
    p_method : {'bisect', 'grid'}
    verify : bool
        Check the fixed point u = A[f_{u,p}], and whether that check has power.
    calibrate : bool
        Also intersect the two surfaces over a (u, p) grid (SPEC section 6) and predict
        with the calibrated (u, p) when the intersection is not empty. The interval then
        is the bootstrap spread of the A[f]/p path placed around the calibrated point
        (the intersection itself is not re-run per replicate).
    calibration_layout : {'paper', 'ensemble', 'ensemble-all'}
        Which real runs calibrate the simulator; see the module docstring.
    member_resample : str or float
        How the ensemble's weak selectors see the data, for ``calibration_layout``
        other than ``'paper'``: ``'bagging'`` (default, a bootstrap sample of a random
        half, the naive check's layout), or any ``resample``.
    n_boot : int
        Bootstrap replicates of the real runs behind every interval; 0 turns the
        bootstrap off (then only the simulation's spread is reported).
    confidence : float
        Level of the percentile intervals, in (0, 1).
    aggregate, index : str
        Ensemble algorithm and stability index.
    resample : str or float
        Resample of the runs behind n_useful (and, for ``'paper'``, p): ``'half'``
        (default), ``'bootstrap'``, ``'bagging'`` or a fraction.
    seed : int
    client : where the real runs and the simulations run (see :mod:`ensstab_dask.cluster`).
    model : {'anchored', 'onda', 'two-level', 'random-effects'}
        What makes the curve (:mod:`ensstab_dask.models`). ``'anchored'``: measured on
        10 real ensemble copies of 20 weak selectors in the naive check's layout (200
        real runs, whatever ``m_ensemble``), extrapolated in ``1 / sqrt(m)`` beyond 20
        (docs/anchored_model.md); it needs no other real runs and ``index`` must be a
        pairwise one. ``'onda'``: the paper's simulator, exactly as published, plus 40
        real runs (10 copies of 4) for its self-check. ``'two-level'``: each ensemble
        copy has its own preferred set of ``h`` features (docs/two_level_model.md),
        ``h`` fitted to 20 more real runs (4 copies of 5). ``'random-effects'``: a model
        of the real weak selectors' ranks (docs/random_effects_model.md), fitted to 100
        more real runs (10 copies of 10); pairwise indices only. Every model is
        self-checked against real ensembles it did not use (``self_check``): a failed
        check makes the estimate unreliable and widens its interval by the error seen.
        The README's validation tables compare the four; the default is the one they
        chose out of sample.
    progress : bool
        Progress bars on stderr, one per stage (real runs, simulations), and the Dask
        dashboard link; drawn on a terminal or in a notebook, never into a file or a
        pipe (see :mod:`ensstab_dask.progress`). False: nothing.

    Returns
    -------
    Estimate

    Examples
    --------
    A tiny run (5-tree forests, a few runs, no bootstrap), to show the calls; a real
    estimate uses the defaults:

    >>> import ensstab_dask as es
    >>> from ensstab_dask.datasets import make_microarray
    >>> from ensstab_dask.selectors import default_selector
    >>> data = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> est = es.estimate(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3), m_stability=5,
    ...                   n_runs=10, repeats=2, n_boot=0, client="synchronous", progress=False)
    >>> est.real_runs  # the default model: 10 real ensemble copies of 20 weak selectors, whatever m_ensemble
    200
    >>> est.self_check.sizes  # checked against m = 20, measured on those copies
    (20,)
    >>> paper = es.estimate(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3), m_stability=5,
    ...                     n_runs=10, repeats=2, n_boot=0, client="synchronous", progress=False, model="onda")
    >>> paper.real_runs  # n_runs=10 behind n_useful, m_stability=5 behind the real stability, 40 for its self-check
    55
    >>> sorted(est.predicted())  # the predicted stability for each m_ensemble
    [1, 3]
    >>> est.reliable == (not est.warnings)
    True
    """
    X, y = check_data(X, y, n_target=n_target)
    n_feature = X.shape[1]
    m_list = check_m_ensemble(m_ensemble)
    m_stability = check_int(m_stability, "m_stability", minimum=2)
    n_runs = max(m_list) if n_runs is None else check_int(n_runs, "n_runs", minimum=1)
    repeats = check_int(repeats, "repeats", minimum=2)
    check_choice(p_method, "p_method", ("bisect", "grid"))
    for name, flag in (("verify", verify), ("calibrate", calibrate)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False; got {flag!r}")
    check_choice(calibration_layout, "calibration_layout", CALIBRATION_LAYOUTS)
    check_resample(member_resample)
    n_boot = check_int(n_boot, "n_boot", minimum=0)
    if 0 < n_boot < 20:
        raise ValueError(f"n_boot must be 0 (no bootstrap) or at least 20 for a percentile interval; got {n_boot}")
    confidence = check_real(confidence, "confidence", minimum=0.0, maximum=1.0, open_minimum=True, open_maximum=True)
    check_choice(aggregate, "aggregate", AGGREGATES)
    check_choice(index, "index", INDICES)
    check_resample(resample)
    seed = check_seed(seed)
    curve_model = get_model(model)
    if calibrate and not curve_model.simulator:
        raise ValueError(
            f"calibrate=True calibrates the paper's simulator over a (u, p) grid and needs model='onda' or "
            f"model='two-level'; model={model!r} is not a simulator"
        )
    if index not in curve_model.indices:
        raise ValueError(
            f"index {index!r} is not a mean over pairs of copies; model={model!r} supports "
            + ", ".join(map(repr, curve_model.indices))
        )
    from ._sweep import check_cell_memory

    # Before any real run: the prediction's largest cell, and the p fit's many copies.
    check_cell_memory(n_feature, n_target, max(m_list), m_stability, n_runs)
    check_cell_memory(n_feature, n_target, 1, m_stability * repeats, n_runs)
    scorer = make_scorer(selector)
    ss = as_seed_sequence(seed)
    settings = dict(
        m_stability=m_stability,
        n_runs=n_runs,
        repeats=repeats,
        p_method=p_method,
        aggregate=aggregate,
        index=index,
        resample=str(resample),
        calibration_layout=calibration_layout if curve_model.paper_runs else "copies",
        member_resample=str(member_resample),
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
        selector=describe_selector(selector),
        model=model,
    )

    with connect(client, timeout=timeout, security=security) as c:
        note_dashboard(c, progress)
        target = "synchronous" if c is None else c
        clock = StageClock()
        with clock.stage("real_runs"):
            runs, copy_ranks, check_ranks = _real_runs(
                X, y, n_target, curve_model, calibration_layout=calibration_layout, n_runs=n_runs,
                m_stability=m_stability, resample=resample, member_resample=member_resample, scorer=scorer, seed=ss,
                client=target, progress=progress,
            )  # fmt: skip
        est = estimate_from_runs(
            runs, n_feature, n_target, m_ensemble=m_list, n_runs=n_runs, repeats=repeats, p_method=p_method,
            verify=verify, calibrate=calibrate, n_boot=n_boot, confidence=confidence, aggregate=aggregate, index=index,
            settings=settings, seed=ss, client=target, model=model, copy_ranks=copy_ranks, check_ranks=check_ranks,
            progress=progress, clock=clock,
        )  # fmt: skip
    for w in est.warnings:
        _warnings.warn(w, RuntimeWarning, stacklevel=2)
    return est


def _real_runs(X, y, n_target, curve_model: CurveModel, *, calibration_layout, n_runs, m_stability, resample,
               member_resample, scorer, seed, client, progress):  # fmt: skip
    """Stage 1, every real run a model asks for: the paper's pools (as ``calibration_layout``
    says), its real ensemble copies, and copies for its self-check.

    Returns ``(runs, copy_ranks, check_ranks)``. A model without runs of the paper's
    gets its single-selector statistics from its copies (:func:`runs_from_copies`).
    """
    # One submission for every run: item by item, the workers idle at each item's tail.
    plan: dict[str, Pool | Copies] = {}
    if curve_model.paper_runs:
        half_n, member_n = pool_sizes(calibration_layout, n_runs=n_runs, m_stability=m_stability)
        for name, size, how, stage in (("half", half_n, resample, _REAL), ("member", member_n, member_resample,
                                                                              _MEMBER_RUNS)):  # fmt: skip
            if size:
                plan[name] = Pool(size, how, derive(seed, Stream.ESTIMATE, stage))
    for name, design, stage in (("copies", curve_model.copy_design(), _COPIES),
                                ("check", curve_model.check_design(), _CHECK_COPIES)):  # fmt: skip
        if design is not None:
            plan[name] = Copies(*design, derive(seed, Stream.ESTIMATE, stage))
    made = dict(zip(plan, real_run_plan(X, y, list(plan.values()), selector=scorer, client=client,
                                        progress=progress)))  # fmt: skip
    copy_ranks, check_ranks = made.pop("copies", None), made.pop("check", None)
    runs = None
    if made:
        pools = {name: top_subsets(r, n_target) for name, r in made.items()}
        runs = assemble_runs(calibration_layout, n_runs=n_runs, m_stability=m_stability, **pools)
    if runs is None:
        assert copy_ranks is not None  # a model without the paper's runs fits copies
        runs = runs_from_copies(copy_ranks, n_target)
    return runs, copy_ranks, check_ranks


def runs_from_copies(copy_ranks: np.ndarray, n_target: int) -> RealRuns:
    """The single-selector statistics' runs, taken from real ensemble copies (G, B, n_feature).

    The stability's runs are the first weak selector of each copy (independent halves,
    the weak selectors' layout); A[f] draws from all of the copies' runs, first weak
    selectors first (runs of one copy share its half, so A[f] counts a little more
    agreement than on independent halves). Every run is counted once.
    """
    G, B, n_feature = copy_ranks.shape
    pool = top_subsets(np.asarray(copy_ranks).transpose(1, 0, 2).reshape(-1, n_feature), n_target)
    return RealRuns(pool, pool[:G], True)


def pool_sizes(calibration_layout: str, *, n_runs: int, m_stability: int) -> tuple[int, int]:
    """Real runs needed on ``resample`` (halves) and in the weak-selector layout, for a layout."""
    check_choice(calibration_layout, "calibration_layout", CALIBRATION_LAYOUTS)
    pool = max(m_stability, n_runs)
    return {"paper": (pool, 0), "ensemble": (n_runs, m_stability), "ensemble-all": (0, pool)}[calibration_layout]


@dataclass(frozen=True)
class RealRuns:
    """The real runs behind an estimate, as top-``n_target`` subsets.

    ``useful`` are the runs behind A[f] (a pool of at least ``n_runs``); ``stability``
    those behind the single-selector stability. ``shared``: ``stability`` is the start of
    ``useful`` (one pool, counted once). The bootstrap draws the two statistics'
    replicates independently either way (see :func:`~ensstab_dask.uncertainty.bootstrap_runs`).
    """

    useful: np.ndarray = field(repr=False)
    stability: np.ndarray = field(repr=False)
    shared: bool

    @property
    def count(self) -> int:
        """Real runs made (a shared pool counts once)."""
        return len(self.useful) + (0 if self.shared else len(self.stability))


def assemble_runs(
    calibration_layout: str, *, n_runs: int, m_stability: int, half: np.ndarray | None = None, member=None
) -> RealRuns:
    """The runs a layout uses, from pools of runs on halves (``half``) and in the weak-selector
    layout (``member``). Run ``i`` of a pool does not depend on the pool's size, so taking
    the first runs of larger pools gives exactly the runs :func:`estimate` would make."""
    half_n, member_n = pool_sizes(calibration_layout, n_runs=n_runs, m_stability=m_stability)
    for name, pool, need in (("half", half, half_n), ("member", member, member_n)):
        if need and (pool is None or len(pool) < need):
            raise ValueError(
                f"{name}: calibration_layout={calibration_layout!r} needs {need} runs; got "
                f"{0 if pool is None else len(pool)}"
            )
    # The check above guarantees the pools the layout needs.
    if calibration_layout == "paper":
        assert half is not None
        pool = half[:half_n]
        return RealRuns(pool, pool[:m_stability], True)
    assert member is not None
    if calibration_layout == "ensemble":
        assert half is not None
        return RealRuns(half[:n_runs], member[:m_stability], False)
    pool = member[:member_n]
    return RealRuns(pool, pool[:m_stability], True)


def estimate_from_runs(
    runs: RealRuns,
    n_feature: int,
    n_target: int,
    *,
    m_ensemble: list[int],
    n_runs: int,
    repeats: int,
    p_method: str,
    verify: bool,
    calibrate: bool,
    n_boot: int,
    confidence: float,
    aggregate: str,
    index: str,
    settings: dict,
    seed: SeedLike,
    client,
    model: str = "onda",
    copy_ranks: np.ndarray | None = None,
    check_ranks: np.ndarray | None = None,
    progress: bool = False,
    clock: StageClock | None = None,
) -> Estimate:
    """Every stage after the real runs, on given runs: the single-selector statistics, the
    paper's simulator fit (for a simulator model), the model's curve and its self-check.

    ``copy_ranks``: the model's real ensemble copies, (copies, weak selectors per copy,
    n_feature); ``check_ranks``: copies made for the self-check alone (see
    :mod:`ensstab_dask.models`). :func:`estimate` is the real runs plus this; the
    validation benchmark calls it on shared pools to compare layouts without refitting
    the selector. Arguments are taken as validated. ``progress``: a bar over the
    simulation stages. ``clock``: where the stages' seconds go (:attr:`Estimate.seconds`),
    after those of earlier stages.
    """
    curve_model = get_model(model)
    clock = StageClock() if clock is None else clock
    ctx = Context(
        n_feature=n_feature, n_target=n_target, m_list=list(m_ensemble), n_runs=n_runs, repeats=repeats,
        m_stability=len(runs.stability), aggregate=aggregate, index=index, n_boot=n_boot, confidence=confidence,
        seed=as_seed_sequence(seed), client=client, useful_pool=runs.useful, stability_runs=runs.stability,
        copy_ranks=copy_ranks, check_ranks=check_ranks, clock=clock,
    )  # fmt: skip
    # A[f] counts n_runs runs against n_runs uniform ones; a pool of copies' runs may hold fewer.
    n_runs = ctx.n_runs = min(n_runs, len(runs.useful))
    with clock.stage("n_useful_and_stability"):
        t_draws = threshold_draws(n_feature, n_target, n_runs, repeats=repeats, seed=ctx.stream(_T_UNIFORM))
        u_draws = useful_draws(runs.useful, n_feature, t_draws, n_runs=n_runs, rng=make_rng(ctx.stream(_POOL)))
        ctx.n_useful = ctx.u_pred = round_n_useful(u_draws, n_target, n_feature)
        ctx.real_stability, real_nog = real_stability_of(runs.stability, n_feature, index)

    blocking = blocking_reasons(n_target=n_target, n_runs=n_runs, n_useful_mean=float(u_draws.mean()),
                                t_draws=t_draws, real_nogueira=real_nog)  # fmt: skip
    predictable = not blocking
    # One bar over the simulation stages about to run, in their order below (none when no
    # curve can be predicted): they are few and unequal, so a count of tasks would mislead.
    stages = (
        (["p"] + ["fixed point"] * int(verify) + ["calibration"] * int(calibrate)) * curve_model.simulator
        + curve_model.stages(n_boot)
        + ["self-check"]
    )
    sims = StageBar(stages if predictable else [], "simulations", enabled=progress)
    fit = SimulatorFit()
    prediction = check = None
    if predictable:
        if curve_model.simulator:
            fit = fit_simulator(ctx, p_method=p_method, verify=verify, calibrate=calibrate,
                                n_useful_mean=float(u_draws.mean()), bar=sims)  # fmt: skip
        prediction = curve_model.predict(ctx, sims)
        with clock.stage("self_check"):
            check = curve_model.self_check(ctx, prediction)
            if check is not None and not check.passed:
                curve_model.widen(prediction, check)
        sims.done()
        # A bootstrap can step outside what the index can take; an interval never does.
        curve = prediction.curve
        for end in ("stability_lower", "stability_upper"):
            if end in curve:
                curve[end].values = clip_to_index(curve[end].values, index)
        if "real_stability" in prediction.intervals:
            prediction.intervals["real_stability"] = tuple(clip_to_index(prediction.intervals["real_stability"], index))
    sims.close()
    issues = blocking + (
        caution_reasons(n_runs=n_runs, t_draws=t_draws, p_fit=fit.p_fit, fixed_point=fit.fixed_point,
                        power=fit.power, verified=verify or not predictable,
                        calibration_empty=fit.calibration is not None and fit.calibrated is None,
                        n_useful=(float(u_draws.mean()), ctx.n_useful))
        if curve_model.simulator
        else []
    )  # fmt: skip
    if check is not None and not check.passed:
        issues.append(check.warning())
    return _assemble(ctx, curve_model, prediction, check, fit, runs=runs, t_draws=t_draws, u_draws=u_draws,
                     real_nog=real_nog, issues=issues, predictable=predictable, settings=settings)  # fmt: skip


@dataclass
class SimulatorFit:
    """What fitting the paper's simulator found: p, the fixed point and its power, and with
    ``calibrate=True`` the (u, p) grid (empty for models that are no simulator)."""

    p_fit: PEstimate | None = None
    fixed_point: FixedPointCheck | None = None
    power: FixedPointCheck | None = None
    calibration: xr.Dataset | None = None
    calibrated: tuple[int, float] | None = None
    simulated: int = 0


def fit_simulator(ctx: Context, *, p_method: str, verify: bool, calibrate: bool, n_useful_mean: float,
                  bar) -> SimulatorFit:  # fmt: skip
    """Stages 5 and 6: p from the real stability, the fixed point and its power, and with
    ``calibrate`` the intersection of the two surfaces; sets ``ctx.p_hat`` and the point
    the simulator predicts at (``ctx.u_pred``, ``ctx.p_pred``)."""
    out = SimulatorFit()
    n_feature, n_target, n_useful = ctx.n_feature, ctx.n_target, ctx.n_useful
    # The simulated curve gets repeats x m_stability copies: the mean pairwise index does
    # not depend on the number of copies, its noise does, and the real side already
    # brings its own.
    p_copies = ctx.m_stability * ctx.repeats
    with ctx.clock.stage("p"):
        out.p_fit = estimate_p(ctx.real_stability, n_feature, n_target, n_useful, m_stability=p_copies,
                               method=p_method, index=ctx.index, seed=ctx.stream(_P))  # fmt: skip
    ctx.p_hat = ctx.p_pred = float(out.p_fit.p)
    bar.done()
    out.simulated += len(out.p_fit.evaluations) * p_copies
    if verify:
        with ctx.clock.stage("verify"):
            out.fixed_point = check_fixed_point(n_feature, n_target, n_useful, ctx.p_hat, n_runs=ctx.n_runs,
                                                repeats=ctx.repeats, seed=ctx.stream(_VERIFY))  # fmt: skip
            out.power = fixed_point_power(n_feature, n_target, n_useful, ctx.p_hat, n_runs=ctx.n_runs,
                                          repeats=ctx.repeats, seed=ctx.stream(_POWER))  # fmt: skip
        out.simulated += (1 + (out.power is not None)) * ctx.repeats * ctx.n_runs
        bar.done()
    if calibrate:
        with ctx.clock.stage("calibrate"):
            _calibrate(ctx, out, n_useful_mean)
        bar.done()
    return out


def _calibrate(ctx: Context, out: SimulatorFit, n_useful_mean: float) -> None:
    """Intersect the two surfaces over a (u, p) grid (SPEC section 6); a consistent cell
    becomes the point the simulator predicts at."""
    from ._sweep import sweep

    n_feature, n_target, n_useful = ctx.n_feature, ctx.n_target, ctx.n_useful
    grid_u = sorted({int(v) for v in np.unique(np.geomspace(n_target, min(n_feature, 8 * n_useful), 16).round())})
    grid_p = sorted({round(v, 3) for v in np.linspace(max(0.05, n_target / n_feature), 1.0, 20)})
    reps = max(3, ctx.repeats // 4)
    surf = sweep(n_feature, n_target, n_useful=grid_u, p=grid_p, m_ensemble=[1], n_runs=ctx.n_runs,
                 m_stability=ctx.m_stability, repeats=reps, aggregate=ctx.aggregate, index=ctx.index,
                 seed=ctx.sweep_seed(_CALIBRATE), client=ctx.client, progress=False)  # fmt: skip
    cal = surf.ensstab.calibrate(ctx.real_stability, n_useful_mean, n_runs=ctx.n_runs)
    cal.attrs.update(estimate_n_useful=n_useful, estimate_p=ctx.p_hat)
    if cal.attrs["any_consistent"]:
        out.calibrated = (cal.attrs["best_n_useful"], cal.attrs["best_p"])
        ctx.u_pred, ctx.p_pred = out.calibrated
    out.calibration = cal
    out.simulated += len(grid_u) * len(grid_p) * reps * (ctx.m_stability + ctx.n_runs)


def _assemble(ctx: Context, curve_model: CurveModel, prediction: Prediction | None, check: SelfCheck | None,
              fit: SimulatorFit, *, runs, t_draws, u_draws, real_nog, issues, predictable,
              settings) -> Estimate:  # fmt: skip
    """The :class:`Estimate` from what the stages found."""
    n_feature, n_target, m_list = ctx.n_feature, ctx.n_target, ctx.m_list
    if prediction is None:
        nan = np.full(len(m_list), np.nan)
        curve = xr.Dataset(
            {"stability": ("m_ensemble", nan), "stability_std": ("m_ensemble", nan.copy())},
            coords={"m_ensemble": m_list},
        )
        prediction = Prediction(curve=curve)
    curve = prediction.curve
    curve.attrs = {
        "title": "ensstab_dask predicted stability of ensembles",
        "kind": "estimate",  # what plotting and the report dispatch on (see plotting.result_kind)
        "simulator_n_useful": ctx.u_pred,  # calibrated when calibrate=True found a consistent cell
        "simulator_p": ctx.p_pred,
        "simulator_model": curve_model.name,
        **{k: v for k, v in prediction.attrs.items() if k not in ("simulator_n_useful", "simulator_p")},
    }
    copies = [r for r in (ctx.copy_ranks, ctx.check_ranks) if r is not None]
    n_real = (runs.count if curve_model.paper_runs else 0) + sum(r.shape[0] * r.shape[1] for r in copies)
    simulated = fit.simulated + prediction.simulated
    holds: bool | None = None
    has_power: bool | None = None
    if fit.fixed_point is not None:
        holds, has_power = fit.fixed_point.holds, fit.power is not None and not fit.power.holds
    return Estimate(
        n_feature=n_feature,
        n_target=n_target,
        settings=dict(settings, n_runs=ctx.n_runs, stability_runs=len(runs.stability)),
        t_uniform=float(t_draws.mean()),
        t_uniform_std=float(t_draws.std(ddof=1)),
        n_useful=ctx.n_useful,
        n_useful_mean=float(u_draws.mean()),
        n_useful_std=float(u_draws.std(ddof=1)),
        n_useful_draws=u_draws,
        real_stability=float(ctx.real_stability),
        real_nogueira=real_nog,
        p=ctx.p_hat,
        p_fit=fit.p_fit,
        n_useful_v=None if fit.fixed_point is None else fit.fixed_point.mean,
        n_useful_v_std=None if fit.fixed_point is None else fit.fixed_point.std,
        fixed_point_holds=holds,
        calibrated=fit.calibrated,
        curve=curve,
        real_runs=n_real,
        simulated_runs=int(simulated),
        seconds=ctx.clock,
        selection_counts=selection_counts(runs.useful[: ctx.n_runs], n_feature),
        t_uniform_draws=t_draws,
        # The first draw behind t_uniform, kept for the picture of counts; its max is t_draws[0].
        uniform_counts=selection_counts(
            uniform_subsets(n_feature, n_target, ctx.n_runs, seed=ctx.stream(_T_UNIFORM, 0)), n_feature
        ),
        calibration=fit.calibration,
        reliable=not issues,
        warnings=issues,
        has_curve=predictable,
        fixed_point_power=has_power,
        confidence=ctx.confidence,
        intervals=prediction.intervals,
        bootstrap=prediction.bootstrap,
        model=curve_model.name,
        h=prediction.h,
        within_copy_stability=prediction.within_copy_stability,
        self_check=check,
        curve_source=curve_model.source(prediction) if predictable else "",
        interval_of=curve_model.interval_of,
        simulator=curve_model.simulator,
    )
