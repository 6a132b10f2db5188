"""The paper's simulator (``model="onda"``) and the two-level simulator (``model="two-level"``).

``onda`` is the method of Onda et al. as published: the curve is the simulated weak
selector's at the fitted (n_useful, p) (docs/method.md sections 2-7), its interval a
bootstrap over the paper's real runs (:mod:`ensstab_dask.models.bootstrap`), widened only
when its self-check fails.

Neither simulator is fitted to real ensembles, so both are self-checked on
``CHECK_DESIGN`` real ensemble copies made for that alone (40 real runs): the simulated
curve at the check sizes against the stability measured on those copies.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ensstab_dask.indices import PAIRWISE_INDICES
from ensstab_dask.models._base import Context, CurveModel, Prediction, SelfCheck, widened_band
from ensstab_dask.models.bootstrap import bootstrap_estimate
from ensstab_dask.models.measured import copy_similarities, weighted
from ensstab_dask.seeding import Stage
from ensstab_dask.simulator.estimators import estimate_h, per_copy_stability, threshold_draws
from ensstab_dask.simulator.kernel import top_subsets

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["Onda", "TwoLevel", "CHECK_DESIGN", "CHECK_SIZES", "predict_curve"]

#: Real ensemble copies behind a simulator's self-check: 10 copies (45 pairs) of 4 weak
#: selectors, 40 real runs, checked at every size from 2 to 4. The paper's model errs
#: most at small ensembles (its curve dips near m = 3 to 5 where real curves rise), and
#: the pairs of copies, not the ensemble size, set the check's power: many copies of few
#: weak selectors (docs/validation.md, "Every model's self-check", says why not 8 of 5).
CHECK_DESIGN = (10, 4)
CHECK_SIZES = (2, 3, 4)


def predict_curve(
    ctx: Context, *, seed: int, model: str = "onda", h: int | None = None, m_ensemble: list[int] | None = None
) -> xr.Dataset:
    """Stage 7: the simulated stability at (``ctx.fit.u_pred``, ``ctx.fit.p_pred``) for each
    ``m_ensemble`` (default the estimate's), a one-cell sweep with the estimate's settings."""
    from ensstab_dask.sweeps.sweep import sweep  # here: sweeps import xarray and pandas (ensstab --help)

    s = ctx.settings
    pred = sweep(
        s.n_feature,
        s.n_target,
        n_useful=[ctx.fit.u_pred],
        p=[ctx.fit.p_pred],
        m_ensemble=s.m_list if m_ensemble is None else m_ensemble,
        n_runs=ctx.n_runs,
        m_stability=ctx.m_stability,
        repeats=s.repeats,
        aggregate=s.aggregate,
        index=s.index,
        seed=seed,
        client=ctx.client,
        progress=False,
        model=model,
        h=h,
    )
    curve = pred[["stability", "stability_std", "stability_draws"]].squeeze(["n_useful", "p"], drop=True)
    return curve.drop_vars("n_runs", errors="ignore")


class Onda(CurveModel):
    """The paper's simulated weak selector at the fitted (n_useful, p)."""

    name = "onda"
    single_selector = "the fitted simulator's, whose p is chosen to match the real runs' figure"
    simulator = True

    def check_design(self) -> tuple[int, int] | None:
        return CHECK_DESIGN

    def source(self, prediction: Prediction) -> str:
        a = prediction.attrs
        return f"{self.name} simulator at n_useful = {a['simulator_n_useful']}, p = {a['simulator_p']:.4f}"

    def stages(self, n_boot: int) -> list[str]:
        return ["prediction"] + ["bootstrap"] * bool(n_boot)

    def _h(self, ctx: Context, prediction: Prediction) -> int | None:
        return None

    def predict(self, ctx: Context, bar) -> Prediction:
        out = Prediction(curve=None, attrs={"simulator_n_useful": ctx.fit.u_pred, "simulator_p": ctx.fit.p_pred})  # type: ignore[arg-type]
        h = self._h(ctx, out)
        if h is not None:
            bar.done()
        s = ctx.settings
        with ctx.clock.stage("predict"):
            out.curve = predict_curve(ctx, seed=ctx.sweep_seed(Stage.PREDICT), model=self.name, h=h)
        out.simulated += s.repeats * ctx.m_stability * sum(s.m_list)
        bar.done()
        if s.n_boot:
            with ctx.clock.stage("bootstrap"):
                out.simulated += self._bootstrap(ctx, out, h)
            bar.done()
        return out

    def _bootstrap(self, ctx: Context, out: Prediction, h: int | None) -> int:
        """The bootstrap of the real runs behind the curve's band; the simulated runs it spent."""
        s = ctx.settings
        thresholds = threshold_draws(
            s.n_feature, s.n_target, ctx.n_runs, repeats=max(100, s.repeats), seed=ctx.stream(Stage.T_BOOT)
        )
        out.intervals, out.bootstrap, sim_b = bootstrap_estimate(ctx, thresholds, out.curve, h_of=self._h_of(ctx, h))
        return sim_b + self._widen_for_h(ctx, out, h)

    def _h_of(self, ctx: Context, h: int | None):
        return None

    def _widen_for_h(self, ctx: Context, out: Prediction, h: int | None) -> int:
        return 0

    def self_check(self, ctx: Context, prediction: Prediction) -> SelfCheck | None:
        """The simulated curve at :data:`CHECK_SIZES` against the check copies' measured stability.

        The two sides are independent (the simulator never saw the check copies), so
        their standard errors add in quadrature: the prediction's is its bootstrap's
        spread at the size (or the nearest size) among ``m_ensemble``, or its Monte-Carlo
        error where that is larger.
        """
        ranks = ctx.check_ranks
        s = ctx.settings
        if ranks is None or s.index not in PAIRWISE_INDICES:
            return None
        G, B, _ = ranks.shape
        sizes = [m for m in CHECK_SIZES if m <= B]
        sim = copy_similarities(
            ranks, s.n_target, sizes, aggregate=s.aggregate, index=s.index, seed=ctx.stream(Stage.CHECK)
        )
        measured = [weighted(sim, np.eye(len(sizes))[i]) for i in range(len(sizes))]
        pred = predict_curve(ctx, seed=ctx.sweep_seed(Stage.CHECK), model=self.name, h=prediction.h, m_ensemble=sizes)
        # A size the estimate did not predict has no bootstrap of its own: the spread at the
        # nearest predicted size stands in for the real runs' share (the Monte-Carlo error
        # alone would leave it out), whichever is larger.
        mc = pred["stability_std"].values / np.sqrt(s.repeats)
        nearest = [min(s.m_list, key=lambda k: abs(np.log(k / m))) for m in sizes]
        se_pred = np.array([np.nanmax([s, prediction.spread(k)]) for k, s in zip(nearest, mc)])
        se_meas = np.array([se for _, se in measured])
        return SelfCheck(
            sizes=tuple(sizes),
            predicted=pred["stability"].values.astype(float),
            measured=np.array([v for v, _ in measured]),
            se=np.hypot(se_pred, se_meas),
            copies=G,
            members=B,
            held_out="real ensembles the simulator was not fitted to",
        )


class TwoLevel(Onda):
    """Each ensemble copy draws its own preferred set of ``h`` features from S' (docs/two_level_model.md).

    ``h`` is fitted to the stability of weak selectors within a real copy, on
    :meth:`copy_design` real copies; its Student-t interval over the copies widens the
    curve's band.
    """

    name = "two-level"

    def copy_design(self) -> tuple[int, int] | None:
        return (4, 5)

    def source(self, prediction: Prediction) -> str:
        return super().source(prediction) + f", h = {prediction.h}"

    def stages(self, n_boot: int) -> list[str]:
        return ["h"] + super().stages(n_boot)

    def _h(self, ctx: Context, prediction: Prediction) -> int | None:
        with ctx.clock.stage("h"):
            return self._fit_h(ctx, prediction)

    def _fit_h(self, ctx: Context, prediction: Prediction) -> int:
        s = ctx.settings
        copies = _top_copies(ctx.copies(), s.n_target)
        per_copy = per_copy_stability(copies, s.n_feature, index=s.index)
        prediction.reused = replace(prediction.reused, per_copy=per_copy)
        jw = float(per_copy.mean())
        fit = _estimate_h(ctx, jw, copies.shape[1])
        prediction.h, prediction.within_copy_stability = fit.h, jw
        prediction.attrs["simulator_h"] = fit.h
        return fit.h

    def _h_of(self, ctx: Context, h: int | None):
        # Each replicate's u keeps the fitted h's place between n_target and u.
        assert h is not None  # _h fitted it
        return lambda u: _scaled_h(h, ctx.fit.u_pred, int(u), ctx.settings.n_target)

    def _widen_for_h(self, ctx: Context, out: Prediction, h: int | None) -> int:
        """h's interval, and the curve's band widened by it.

        The within-copy stability's interval is Student's t over the copies (few copies:
        a bootstrap of 4 would be too narrow); its ends map to h through
        :func:`~ensstab_dask.simulator.estimators.estimate_h`, and the curve is simulated at both
        h. The shift they give is added to the band in quadrature, as an error
        independent of the (u, p) replicates (it comes from other real runs). Returns the
        simulated runs spent.
        """
        per_copy = out.reused.per_copy
        assert per_copy is not None  # _fit_h measured them
        s = ctx.settings
        G = len(per_copy)
        from scipy import stats  # here: scipy.stats takes about a second to import (ensstab --help)

        half = stats.t.ppf(0.5 + s.confidence / 2, G - 1) * per_copy.std(ddof=1) / np.sqrt(G)
        size = ctx.copies().shape[1]
        ends = [_estimate_h(ctx, per_copy.mean() + d, size).h for d in (half, -half)]
        h_lo, h_hi = min(ends), max(ends)
        point = out.curve["stability"].values
        seed = ctx.sweep_seed(Stage.H_BOUNDS)
        alt = [predict_curve(ctx, seed=seed, model=self.name, h=hh)["stability"].values for hh in (h_lo, h_hi)]
        out.curve = widened_band(
            out.curve, np.maximum(0.0, point - np.minimum(*alt)), np.maximum(0.0, np.maximum(*alt) - point)
        )
        out.intervals["h"] = (float(h_lo), float(h_hi))
        return 2 * s.repeats * ctx.m_stability * sum(s.m_list)


def _estimate_h(ctx: Context, within: float, copy_size: int):
    """:func:`~ensstab_dask.simulator.estimators.estimate_h` of a within-copy stability, at
    the fitted (u, p), for copies of ``copy_size`` weak selectors, from the h stage's stream."""
    s = ctx.settings
    return estimate_h(
        within,
        s.n_feature,
        s.n_target,
        ctx.fit.u_pred,
        ctx.fit.p_pred,
        design=(200, copy_size),
        index=s.index,
        seed=ctx.stream(Stage.H),
    )


def _top_copies(copy_ranks: np.ndarray, n_target: int) -> np.ndarray:
    """The top-``n_target`` subsets of every weak selector of every copy: (G, B, n_target)."""
    G, B, n_feature = copy_ranks.shape
    return top_subsets(copy_ranks.reshape(-1, n_feature), n_target).reshape(G, B, n_target)


def _scaled_h(h: int, u: int, u_new: int, n_target: int) -> int:
    """The h at another u that keeps h's relative place in [n_target, u]."""
    if u == n_target:
        return n_target
    return int(min(u_new, max(n_target, round(n_target + (h - n_target) * (u_new - n_target) / (u - n_target)))))
