"""The paper's simulator fitted to the real runs, as one record (:class:`SimulatorFit`):
what :func:`~ensstab_dask.models.fitting.fit_simulator` finds, what a model reads of it
from its :class:`~ensstab_dask.models.Context`, and the part of the
:class:`~ensstab_dask.estimates.records.estimate.Estimate` that holds it (its ``fit``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ensstab_dask.outputs import json_attrs, json_number

if TYPE_CHECKING:  # for the annotations only: the command line's parser imports this module
    import xarray as xr

    from ensstab_dask.simulator.estimators import PEstimate
    from ensstab_dask.simulator.fixed_point import FixedPointCheck

__all__ = ["SimulatorFit"]


@dataclass(frozen=True)
class SimulatorFit:
    """The paper's simulator fitted to the real runs (docs/method.md sections 5-6), empty
    for a model that is no simulator or when nothing can be predicted.

    Attributes
    ----------
    p_fit : PEstimate or None
        p from the real stability (``p`` is its value); None before it is fitted.
    fixed_point, power : FixedPointCheck or None
        The fixed point u = A[f_{u,p}] and the same check at a clearly wrong u (whether the
        first could have failed); None with ``verify=False`` (power: also when there is no
        larger u to try).
    calibration : xarray.Dataset or None
        With ``calibrate=True``, the two surfaces over a (u, p) grid.
    calibrated : (int, float) or None
        The (u, p) where both real statistics are matched at once, when the grid has one.
    u_pred, p_pred : int, float
        The point the simulator predicts at: A[f] and p, or the calibrated cell when
        ``calibrate=True`` found one.
    simulated : int
        The simulated selectors the fit ran.
    """

    # The first five in the order FittedSimulator took them positionally.
    p_fit: PEstimate | None = field(default=None, repr=False)
    fixed_point: FixedPointCheck | None = field(default=None, repr=False)
    power: FixedPointCheck | None = field(default=None, repr=False)
    calibration: xr.Dataset | None = field(default=None, repr=False)
    calibrated: tuple[int, float] | None = None
    u_pred: int = 0
    p_pred: float = float("nan")
    simulated: int = 0

    @property
    def p(self) -> float:
        """p fitted to the real stability at A[f] (NaN before it is)."""
        return float("nan") if self.p_fit is None else float(self.p_fit.p)

    @property
    def p_hat(self) -> float:
        """The same as :attr:`p` (the paper's name for it)."""
        return self.p

    @property
    def calibration_empty(self) -> bool:
        """The calibration grid ran and found no (u, p) consistent with both statistics."""
        return self.calibration is not None and self.calibrated is None

    @property
    def n_useful_v(self) -> float | None:
        """A[f_(u,p)]: the useful features the fitted simulator itself counts (its mean)."""
        return None if self.fixed_point is None else self.fixed_point.mean

    @property
    def n_useful_v_std(self) -> float | None:
        return None if self.fixed_point is None else self.fixed_point.std

    @property
    def fixed_point_holds(self) -> bool | None:
        return None if self.fixed_point is None else self.fixed_point.holds

    @property
    def fixed_point_power(self) -> bool | None:
        """Whether the fixed-point check could have failed: it fails at a clearly wrong u."""
        return None if self.fixed_point is None else self.power is not None and not self.power.holds

    def to_dict(self) -> dict[str, Any]:
        """``p``; the fixed point's keys when it was checked; ``calibrated`` when the grid ran
        (null when it found no consistent cell)."""
        out: dict[str, Any] = {"p": json_number(self.p)}
        if self.fixed_point is not None:
            out.update(
                n_useful_v=self.n_useful_v,
                n_useful_v_std=self.n_useful_v_std,
                fixed_point_holds=self.fixed_point_holds,
                fixed_point_power=self.fixed_point_power,
            )
        if self.calibration is not None:
            c = self.calibrated
            out["calibrated"] = None if c is None else {"n_useful": c[0], "p": c[1]}
        return out

    def add_to(self, ds: xr.Dataset) -> xr.Dataset:
        """The calibration's surfaces as ``calibration_*`` over (``n_useful``, ``p``), the fit in ``attrs``."""
        if self.calibration is not None:
            cal = self.calibration
            for name in ("stability", "n_useful_v", "consistent"):
                var = cal[name].astype("int8") if cal[name].dtype == bool else cal[name]
                ds[f"calibration_{name}"] = var.assign_attrs(cal[name].attrs)
            ds.attrs.update({f"calibration_{k}": v for k, v in cal.attrs.items()})
        ds.attrs.update(json_attrs(self.to_dict()))
        return ds
