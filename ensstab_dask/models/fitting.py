"""Fitting the paper's simulator to the real runs (docs/method.md sections 5-6): p from
the real stability, the fixed point u = A[f_{u,p}] and whether that check has any power,
and with ``calibrate=True`` the intersection of the two surfaces over a (u, p) grid.
Only models whose curve is the simulator's (``CurveModel.simulator``) are fitted.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ensstab_dask.models import Context
from ensstab_dask.models.simulator_fit import SimulatorFit
from ensstab_dask.seeding import SeedLike, Stage
from ensstab_dask.simulator.calibration import calibrate
from ensstab_dask.simulator.estimators import estimate_p
from ensstab_dask.simulator.fixed_point import FixedPointCheck, check_fixed_point
from ensstab_dask.sweeps.sweep import sweep

__all__ = ["SimulatorFit", "fit_simulator", "fixed_point_power"]

# The fixed-point check has power when it would fail for a u this far off (factor).
_POWER_FACTOR = 1.5


def fixed_point_power(
    n_feature: int, n_target: int, n_useful: int, p: float, *, n_runs: int, repeats: int, seed: SeedLike = 0
) -> FixedPointCheck | None:
    """Stage 6b: the fixed-point check at a clearly wrong u = 1.5 n_useful.

    The fixed point catches an overestimated n_useful (docs/method.md section 6): a simulator with
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


# -- the whole estimate --------------------------------------------------------------


def fit_simulator(ctx: Context, *, n_useful_mean: float, bar) -> SimulatorFit:
    """Stages 5 and 6: p from the real stability, the fixed point and its power, and with
    ``calibrate`` the intersection of the two surfaces (``p_method``, ``verify`` and
    ``calibrate`` are ``ctx.settings``'), on the real statistics ``ctx`` holds; returns them
    with the point the simulator predicts at."""
    s = ctx.settings
    n_feature, n_target, n_useful = s.n_feature, s.n_target, ctx.n_useful
    # The simulated curve gets repeats x m_stability copies: the mean pairwise index does
    # not depend on the number of copies, its noise does, and the real side already
    # brings its own.
    p_copies = ctx.m_stability * s.repeats
    with ctx.clock.stage("p"):
        p_fit = estimate_p(
            ctx.real_stability,
            n_feature,
            n_target,
            n_useful,
            m_stability=p_copies,
            method=s.p_method,
            index=s.index,
            seed=ctx.stream(Stage.P),
        )
    p_hat = float(p_fit.p)
    fit = SimulatorFit(p_fit=p_fit, u_pred=n_useful, p_pred=p_hat, simulated=len(p_fit.evaluations) * p_copies)
    bar.done()
    if s.verify:
        with ctx.clock.stage("verify"):
            point = dict(n_runs=ctx.n_runs, repeats=s.repeats)
            fixed = check_fixed_point(n_feature, n_target, n_useful, p_hat, **point, seed=ctx.stream(Stage.VERIFY))
            power = fixed_point_power(n_feature, n_target, n_useful, p_hat, **point, seed=ctx.stream(Stage.POWER))
        ran = (1 + (power is not None)) * s.repeats * ctx.n_runs
        fit = replace(fit, fixed_point=fixed, power=power, simulated=fit.simulated + ran)
        bar.done()
    if s.calibrate:
        with ctx.clock.stage("calibrate"):
            fit = _calibrate(ctx, fit, n_useful_mean)
        bar.done()
    return fit


def _calibrate(ctx: Context, fit: SimulatorFit, n_useful_mean: float) -> SimulatorFit:
    """Intersect the two surfaces over a (u, p) grid (docs/method.md section 6); a consistent cell
    becomes the point the simulator predicts at."""
    s = ctx.settings
    n_feature, n_target, n_useful = s.n_feature, s.n_target, ctx.n_useful
    grid_u = sorted({int(v) for v in np.unique(np.geomspace(n_target, min(n_feature, 8 * n_useful), 16).round())})
    grid_p = sorted({round(v, 3) for v in np.linspace(max(0.05, n_target / n_feature), 1.0, 20)})
    reps = max(3, s.repeats // 4)
    surf = sweep(
        n_feature,
        n_target,
        n_useful=grid_u,
        p=grid_p,
        m_ensemble=[1],
        n_runs=ctx.n_runs,
        m_stability=ctx.m_stability,
        repeats=reps,
        aggregate=s.aggregate,
        index=s.index,
        seed=ctx.sweep_seed(Stage.CALIBRATE),
        client=ctx.client,
        progress=False,
    )
    cal = calibrate(surf, ctx.real_stability, n_useful_mean, n_runs=ctx.n_runs)
    cal.attrs.update(estimate_n_useful=n_useful, estimate_p=fit.p_pred)
    ran = fit.simulated + len(grid_u) * len(grid_p) * reps * (ctx.m_stability + ctx.n_runs)
    fit = replace(fit, calibration=cal, simulated=ran)
    if not cal.attrs["any_consistent"]:
        return fit
    cell = (cal.attrs["best_n_useful"], cal.attrs["best_p"])
    return replace(fit, calibrated=cell, u_pred=cell[0], p_pred=cell[1])
