"""The seam every curve model implements, and the self-check behind ``reliable``.

A curve model turns real runs into a predicted stability curve over ``m_ensemble``. It
says which real runs it needs (the paper's single-selector runs, real ensemble copies in
the naive check's layout, or both) and what they cost; :func:`~ensstab_dask.estimate`
makes them, runs the single-selector stages every model shares (t_uniform, A[f], the
real stability and what blocks any prediction), fits the paper's simulator when the
model is a simulator, and then asks the model for its :class:`Prediction`. The pipeline
never branches on a model's name: a new model is a new module with a subclass of
:class:`CurveModel`, registered in :mod:`ensstab_dask.models`.

**The self-check** (docs/method.md section 11; docs/anchored_model.md). Every model is checked against real
ensembles it did not use for the point it predicts: real ensemble copies in the naive
check's layout, measured at the check sizes without any model
(:mod:`ensstab_dask.models.measured`). The combined z of each size is
``(predicted - measured) / sqrt(SE_pred^2 + SE_measured^2)``, or the standard deviation
of the difference over a joint bootstrap of the copies when both sides come from the
same copies. A check with ``|z| > 2`` at any size fails: the estimate is not reliable,
and the error it measured beyond its noise (``|difference| - 2 SE``) is added to the
interval, so that the interval covers the error the model was seen to make.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ensstab_dask.cluster.progress import StageClock
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices import INDICES
from ensstab_dask.models.model_settings import ModelSettings
from ensstab_dask.models.simulator_fit import SimulatorFit
from ensstab_dask.outputs import json_number
from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive, int_from

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["CurveModel", "Context", "Prediction", "SelfCheck", "CHECK_Z"]

#: A self-check fails beyond this combined |z|.
CHECK_Z = 2.0


@dataclass
class Context:
    """What the shared stages found, handed to a model: the estimate's ``settings``, where
    work runs, and the real runs' statistics.

    ``n_runs`` is the runs behind each draw of t_uniform and A[f]: the settings', or fewer
    when the pool holds fewer (a model's copies); ``m_stability`` the real runs behind the
    real stability, and so the simulated copies behind each simulated one. ``seed`` is the
    settings' seed as a SeedSequence. ``n_useful`` is A[f] rounded, and ``fit`` the paper's
    simulator fitted to the real runs (:class:`~ensstab_dask.models.simulator_fit.SimulatorFit`:
    p, and the point the simulator predicts at, the calibrated one with ``calibrate=True``;
    empty when the model is no simulator). ``copy_ranks``: the
    model's real ensemble copies, (G, B, n_feature); ``check_ranks``: copies made for the
    self-check only. ``clock``: a model times its stages with ``with ctx.clock.stage(name):``.
    """

    settings: ModelSettings
    client: Any
    n_runs: int
    m_stability: int
    useful_pool: np.ndarray | None = None
    stability_runs: np.ndarray | None = None
    n_useful: int = 0
    real_stability: float = float("nan")
    fit: SimulatorFit = field(default_factory=SimulatorFit)
    copy_ranks: np.ndarray | None = None
    check_ranks: np.ndarray | None = None
    clock: StageClock = field(default_factory=StageClock)  # where a model times its stages
    seed: np.random.SeedSequence = field(init=False)

    def __post_init__(self) -> None:
        self.seed = as_seed_sequence(self.settings.seed)

    def copies(self) -> np.ndarray:
        """The model's real ensemble copies, (G, B, n_feature): a model whose
        :meth:`CurveModel.copy_design` asks for them always gets them."""
        if self.copy_ranks is None:
            raise InvalidParameterError("copy_ranks: this model fits real ensemble copies, and none were given")
        return self.copy_ranks

    def pools(self) -> tuple[np.ndarray, np.ndarray]:
        """The paper's runs, (useful pool, stability runs), as top-``n_target`` subsets."""
        if self.useful_pool is None or self.stability_runs is None:
            raise InvalidParameterError("runs: this model needs the paper's single-selector runs, and none were given")
        return self.useful_pool, self.stability_runs

    def stream(self, stage: Stage, *keys: int) -> np.random.SeedSequence:
        """The SeedSequence of an estimate stage."""
        return derive(self.seed, Stream.ESTIMATE, stage, *keys)

    def sweep_seed(self, stage: Stage) -> int:
        """An int seed for a stage that runs through the sweep engine (which records ints)."""
        return int_from(self.stream(stage), bits=32)

    def curve_dataset(self, stability, std, *, lower=None, upper=None, description: str) -> xr.Dataset:
        """The curve as the estimate's Dataset over ``m_ensemble`` (short long_names, no units
        on a stability: xarray's .plot labels)."""
        import xarray as xr  # here: xarray and pandas take most of a second to import (ensstab --help)

        one = {"long_name": f"stability ({self.settings.index})"}
        curve = xr.Dataset(
            {
                "stability": ("m_ensemble", np.asarray(stability, float), dict(one, description=description)),
                "stability_std": (
                    "m_ensemble",
                    np.asarray(std, float),
                    {"long_name": "stability s.d.", "description": "Monte-Carlo or sampling error of the point"},
                ),
            },
            coords={"m_ensemble": self.settings.m_list},
        )
        if lower is not None:
            level = f"{self.settings.confidence:.0%}"
            curve["stability_lower"] = ("m_ensemble", np.asarray(lower, float), dict(one, long_name=f"{level} lower"))
            curve["stability_upper"] = ("m_ensemble", np.asarray(upper, float), dict(one, long_name=f"{level} upper"))
        return curve

    def boot_dataset(self, replicates: np.ndarray, description: str) -> xr.Dataset:
        """Bootstrap replicates of the curve, (n_boot, len(m_list)), as ``stability_boot`` over ``boot``."""
        import xarray as xr  # here: as in curve_dataset

        attrs = {"long_name": f"stability ({self.settings.index})", "description": description}
        return xr.Dataset(
            {"stability_boot": (("boot", "m_ensemble"), np.asarray(replicates, float), attrs)},
            coords={"m_ensemble": self.settings.m_list},
        )


@dataclass(frozen=True)
class Reused:
    """What a model's prediction measured that its self-check or band reads again, named."""

    #: The anchored model's similarities of each pair of copies at each member count (members x pairs).
    similarities: np.ndarray | None = None
    #: The anchored model's similarities of the members held out for its self-check; None: no split.
    member_split: np.ndarray | None = None
    #: The two-level model's within-copy stability of each copy (h's interval reads their spread).
    per_copy: np.ndarray | None = None


@dataclass
class Prediction:
    """What a model predicts: the curve (with ``stability_lower``/``stability_upper`` when
    it has a bootstrap), its replicates, the intervals of its own parameters, the
    simulated runs it spent, and what the summary says about it."""

    curve: xr.Dataset
    bootstrap: xr.Dataset | None = None
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    simulated: int = 0
    attrs: dict = field(default_factory=dict)
    h: int | None = None
    within_copy_stability: float | None = None
    reused: Reused = field(default_factory=Reused, repr=False)

    def spread(self, m: int) -> float:
        """The prediction's standard error at ``m``: its bootstrap's standard deviation when
        ``m`` is predicted with a bootstrap, else its Monte-Carlo error."""
        sizes = [int(v) for v in self.curve["m_ensemble"].values]
        if m not in sizes:
            return float("nan")
        j = sizes.index(m)
        if self.bootstrap is not None and "stability_boot" in self.bootstrap:
            return float(np.nanstd(self.bootstrap["stability_boot"].values[:, j], ddof=1))
        return float(self.curve["stability_std"].values[j])


@dataclass(frozen=True)
class SelfCheck:
    """The model against real ensembles it did not use, at ``sizes`` (see the module docstring).

    ``held_out`` says in words what was held out; ``copies`` x ``members``: the real
    ensemble copies the measured side comes from. ``limit``: the largest ``|z|`` that
    passes (:data:`CHECK_Z`, or a Student's t quantile where the SE is estimated from a
    few copies). ``blind_to``: in words, the errors the check cannot see ("" when the
    model does not say), which a passing check's answer names. ``made_from``: in plain
    words, the part of those ensembles the checked prediction was made from ("" when it
    was made without them).
    """

    sizes: tuple[int, ...]
    predicted: np.ndarray
    measured: np.ndarray
    se: np.ndarray
    copies: int
    members: int
    held_out: str
    limit: float = CHECK_Z
    blind_to: str = ""
    made_from: str = ""

    @property
    def z(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.predicted - self.measured) / self.se

    @property
    def passed(self) -> bool:
        """Every size within ``|z| <= limit``; a size whose z cannot be computed (a standard
        error of 0, or none) fails it: a check that cannot see an error is no check."""
        z = self.z
        return bool(np.all(np.isfinite(z) & (np.abs(z) <= self.limit)))

    @property
    def excess(self) -> float:
        """The largest error beyond the check's own noise, ``|difference| - limit SE`` (0 when
        it passed); where the SE is unknown, the whole difference."""
        diff = np.abs(self.predicted - self.measured)
        se = np.where(np.isfinite(self.se), self.se, 0.0)
        d = diff - self.limit * se
        d = d[np.isfinite(d)]
        return float(max(0.0, d.max())) if d.size else 0.0

    def warning(self) -> str:
        """The failed check in words: sizes, both values and the z."""
        parts = [
            f"m = {m}: predicted {p:.3f}, measured {r:.3f} "
            + (f"(z = {z:+.1f})" if np.isfinite(z) else "(no z: the difference's standard error is 0 or unknown)")
            for m, p, r, z in zip(self.sizes, self.predicted, self.measured, self.z)
            if not (np.isfinite(z) and abs(z) <= self.limit)
        ]
        return (
            f"the model missed real ensembles it was checked against, by more than their noise: the self-check "
            f"failed ({self.held_out}); measured on {self.copies} real copies of {self.members} at "
            + "; ".join(parts)
            + "; its interval was widened by the error seen"
        )

    def to_dict(self) -> dict:
        return {
            "passed": self.passed,
            "limit": self.limit,
            "sizes": list(self.sizes),
            "predicted": [json_number(v) for v in self.predicted],
            "measured": [json_number(v) for v in self.measured],
            "se": [json_number(v) for v in self.se],
            "z": [json_number(v) for v in self.z],
            "copies": self.copies,
            "members": self.members,
            "held_out": self.held_out,
        }


class CurveModel:
    """A model of the stability curve (see the module docstring).

    Class attributes a model sets:

    * ``name``: what ``model=`` names it by;
    * ``simulator``: the curve comes from the paper's simulator at a fitted (u, p): the
      estimate fits p (and checks the fixed point), and the simulator's cautions bear on
      it;
    * ``paper_runs``: it asks for the paper's single-selector runs (``n_runs`` on halves
      and ``m_stability`` in the weak selectors' layout, by ``calibration_layout``);
    * ``indices``: the stability indices it can predict;
    * ``source`` and ``interval_of``: what makes the curve, and what its bootstrap
      resamples, in the summary's words;
    * ``single_selector``: what the curve's ``m_ensemble = 1`` is, in the summary's words
      beside the real runs' own stability of one selector.
    * ``surface``: the curve at another n_target costs no real run and no simulation
      (it is measured on the same real ensemble copies), so the estimate can give the
      stability over several n_target (:mod:`ensstab_dask.estimates.stages.surface`).
    """

    name: ClassVar[str]
    simulator: ClassVar[bool] = False
    paper_runs: ClassVar[bool] = True
    surface: ClassVar[bool] = False
    indices: ClassVar[Collection[str]] = INDICES
    interval_of: ClassVar[str] = "real runs"
    single_selector: ClassVar[str] = "the model's value of the same quantity"

    def copy_design(self) -> tuple[int, int] | None:
        """(copies, weak selectors per copy) of real ensemble copies the model fits, or None."""
        return None

    @property
    def measures_copies(self) -> bool:
        """Whether the curve is measured on the model's real ensemble copies, which a
        ``precision`` can grow in rounds (:mod:`ensstab_dask.estimates.stages.rounds`)."""
        return self.copy_design() is not None

    def adaptive_design(self) -> tuple[int, int] | None:
        """The first round of ``layout="adaptive"`` (copies, weak selectors per copy), which
        :meth:`grown_design` may grow; None for a model whose copies do not grow."""
        return None

    def grown_design(
        self, design: tuple[int, int], curve, check: SelfCheck | None
    ) -> tuple[tuple[int, int], str] | None:
        """The layout to grow the first round's copies to, and why in words, or None to keep
        it: read off the first round's ``curve`` and ``check``
        (:func:`~ensstab_dask.estimates.stages.rounds.grow_layout`)."""
        return None

    def check_design(self) -> tuple[int, int] | None:
        """Copies made for the self-check alone; None when the model checks itself on its own."""
        return None

    def source(self, prediction: Prediction) -> str:
        """What made the curve, for the summary."""
        raise NotImplementedError

    def measured_up_to(self, attrs: Mapping[str, Any]) -> int | None:
        """The largest ensemble size the curve measures on real ensembles, from its
        prediction's ``attrs`` (larger sizes are extrapolated); None when no size is
        measured (a simulated curve)."""
        return None

    def stages(self, n_boot: int) -> list[str]:
        """The simulation stages :meth:`predict` reports to the progress bar, in order."""
        return ["prediction"]

    def predict(self, ctx: Context, bar) -> Prediction:
        """The curve at ``ctx.settings.m_list``; ``bar.done()`` after each of :meth:`stages`."""
        raise NotImplementedError

    def self_check(self, ctx: Context, prediction: Prediction) -> SelfCheck | None:
        """The model against real ensembles it did not use; None when it cannot be checked."""
        return None

    def widened(self, prediction: Prediction, check: SelfCheck) -> Prediction:
        """The prediction with the error the self-check saw beyond its noise added to its
        interval, in quadrature, at every size (models that measure some sizes directly
        override this); a new record, the one given left as it was."""
        down = np.full(len(prediction.curve["m_ensemble"]), check.excess)
        return replace(prediction, curve=widened_band(prediction.curve, down))


def widened_band(curve: xr.Dataset, down: np.ndarray, up: np.ndarray | None = None) -> xr.Dataset:
    """The curve with ``stability_lower`` widened by ``down`` and ``stability_upper`` by
    ``up`` (default ``down``), each in quadrature with the band's own half-width; a new
    Dataset (``curve`` itself where nothing widens)."""
    up = down if up is None else up
    if "stability_lower" not in curve or not (np.any(down > 0) or np.any(up > 0)):
        return curve
    point = curve["stability"].values
    lo, hi = curve["stability_lower"].values, curve["stability_upper"].values
    return curve.assign(
        stability_lower=curve["stability_lower"].copy(data=point - np.hypot(point - lo, down)),
        stability_upper=curve["stability_upper"].copy(data=point + np.hypot(hi - point, up)),
    )
