"""When the method has nothing to say, or says it without proof: the guard rails.

:func:`guard_rails` is the one place that decides whether an estimate is ``reliable``:
the reasons that block any prediction (:func:`blocking_reasons`, checked before p is
fitted), the cautions of the paper's simulator (:func:`caution_reasons`) and the model's
self-check (docs/method.md section 13). An estimate is reliable when no reason is left.
"""

from __future__ import annotations

import numpy as np

from ._stability import NogueiraStability
from .estimation import PEstimate
from .fixed_point import FixedPointCheck
from .models import SelfCheck

__all__ = ["guard_rails", "blocking_reasons", "caution_reasons"]


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
    p_fit: PEstimate | None = None,
    fixed_point: FixedPointCheck | None = None,
    power: FixedPointCheck | None = None,
    verified: bool = True,
    calibration_empty: bool = False,
    n_useful: int | None = None,
    simulator: bool = True,
    self_check: SelfCheck | None = None,
) -> tuple[bool, list[str], list[str]]:
    """Whether the method has anything to say, and whether to believe it (docs/method.md
    section 11): the only place ``Estimate.reliable`` is decided.

    Returns ``(predictable, blocking, cautions)``: :func:`blocking_reasons` mean no curve
    can be predicted at all; cautions mean the curve is there but is not a validated
    prediction: the paper's simulator's (:func:`caution_reasons`, only when the curve is
    the ``simulator``'s; ``n_useful`` is the value simulated, when A[f] had to be clamped)
    and a failed ``self_check``. The estimate is reliable when both lists are empty.
    """
    blocking = blocking_reasons(
        n_target=n_target, n_runs=n_runs, n_useful_mean=n_useful_mean, t_draws=t_draws, real_nogueira=real_nogueira
    )
    cautions = []
    if simulator:
        cautions += caution_reasons(
            n_runs=n_runs, t_draws=t_draws, p_fit=p_fit, fixed_point=fixed_point, power=power, verified=verified,
            calibration_empty=calibration_empty, n_useful=None if n_useful is None else (n_useful_mean, n_useful),
        )  # fmt: skip
    if self_check is not None and not self_check.passed:
        cautions.append(self_check.warning())
    return not blocking, blocking, cautions
