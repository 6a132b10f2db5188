"""Measure what is cheap, model only the extrapolation (``model="anchored"``).

``COPY_DESIGN`` = (G, B) real ensemble copies in the naive check's own layout (each copy
its own stratified random half, its ``B`` weak selectors bootstrap samples of it) are a
small naive check: the stability at every ``m <= B`` is measured on them directly,
unbiased by construction, with the U-statistic's standard error over the copies
(:mod:`ensstab_dask.models.measured`). Only ``m > B`` is a model: the line in ``1 / sqrt(m)``
through the measured sizes in ``[B/2, B]`` (why that coordinate: the module docstring
of :mod:`ensstab_dask.models.measured`). Every value is a linear combination of measured
stabilities, so its standard error is exact (a U-statistic over the copies) and the
interval is a bootstrap of the copies rescaled to it, with Student's t on ``G - 1``
degrees of freedom in place of the normal quantile (the SE is estimated from ``G``
copies).

Self-check: the same extrapolation from the sizes in ``[B/4, B/2]`` predicts ``m = B``,
which is measured; the difference is one more linear combination, with its own exact
standard error. The error it shows beyond its noise is carried to the extrapolated sizes
in proportion to how far each lies beyond ``B`` (in ``1 / sqrt(m)``) against the check's
own distance, and added to their intervals.

It needs no single-selector runs of its own: t_uniform, A[f] and the real stability
that guard against pure noise come from the copies' runs (the first weak selector of
each copy for the stability: runs on independent halves).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ensstab_dask.indices import PAIRWISE_INDICES
from ensstab_dask.models._base import Context, CurveModel, Prediction, SelfCheck, _widen
from ensstab_dask.models.bootstrap import percentile_interval
from ensstab_dask.models.measured import (
    copy_similarities,
    extrapolation_weights,
    fit_sizes,
    pair_means,
    weighted,
)
from ensstab_dask.seeding import Stage, make_rng

__all__ = ["Anchored", "COPY_DESIGN"]

#: (real ensemble copies, weak selectors per copy): 200 real runs, whatever m_ensemble.
COPY_DESIGN = (10, 20)


class Anchored(CurveModel):
    name = "anchored"
    paper_runs = False
    indices = PAIRWISE_INDICES
    interval_of = "real ensemble copies"

    def copy_design(self) -> tuple[int, int] | None:
        return COPY_DESIGN

    def source(self, prediction: Prediction) -> str:
        B = prediction.attrs["measured_up_to"]
        return f"measured on real ensemble copies up to m_ensemble = {B}, extrapolated in 1/sqrt(m) beyond"

    def stages(self, n_boot: int) -> list[str]:
        return ["measured curve"]

    def _weights(self, B: int, targets) -> np.ndarray:
        """Rows of weights over the sizes 1..B: a unit row for a measured size, the
        extrapolation's row beyond ``B``."""
        fit = fit_sizes(B)
        W = np.zeros((len(targets), B))
        for i, m in enumerate(targets):
            if m <= B:
                W[i, m - 1] = 1.0
            else:
                W[i, np.array(fit) - 1] = extrapolation_weights(fit, [m])[0]
        return W

    def predict(self, ctx: Context, bar) -> Prediction:
        with ctx.clock.stage("measured"):
            return self._predict(ctx, bar)

    def _predict(self, ctx: Context, bar) -> Prediction:
        ranks = ctx.copies()
        s = ctx.settings
        G, B, _ = ranks.shape
        sim = copy_similarities(
            ranks, s.n_target, range(1, B + 1), aggregate=s.aggregate, index=s.index, seed=ctx.stream(Stage.MEASURED)
        )
        W = self._weights(B, s.m_list)
        point_se = np.array([weighted(sim, w) for w in W])
        point, se = point_se[:, 0], point_se[:, 1]
        lower = upper = boot = None
        if s.n_boot:
            # Copies drawn with replacement, each replicate's deviation rescaled to the
            # U-statistic's unbiased standard error (a bootstrap of a mean over pairs
            # overstates it: pairs of one copy drawn twice are left out), and widened by
            # Student's t over the normal quantile: that SE is itself estimated from G copies.
            rng = make_rng(ctx.stream(Stage.MEASURED, 1))
            raw = pair_means(sim, rng.integers(G, size=(s.n_boot, G))) @ W.T
            dev = raw - raw.mean(axis=0)
            sd = dev.std(axis=0, ddof=1)
            tail = 0.5 + s.confidence / 2
            se_t = se * stats.t.ppf(tail, G - 1) / stats.norm.ppf(tail)
            reps = point + dev * np.where(sd > 0, se_t / np.where(sd > 0, sd, 1.0), 0.0)
            lower, upper = np.array([percentile_interval(reps[:, j], s.confidence) for j in range(len(W))]).T
            boot = ctx.boot_dataset(reps, "bootstrap replicates of the real copies, rescaled to the exact SE")
        curve = ctx.curve_dataset(point, se, lower=lower, upper=upper,
                                  description="measured (m <= B) or extrapolated ensemble stability")  # fmt: skip
        bar.done()
        attrs = {"measured_up_to": B, "copies": G}
        return Prediction(
            curve=curve,
            bootstrap=boot,
            attrs=attrs,
            state={"similarities": sim},
        )

    def self_check(self, ctx: Context, prediction: Prediction) -> SelfCheck | None:
        B = ctx.copies().shape[1]
        if B < 4:
            return None
        w = np.zeros(B)
        fit = fit_sizes(B // 2)
        w[np.array(fit) - 1] = extrapolation_weights(fit, [B])[0]
        w[B - 1] -= 1.0
        sim = prediction.state["similarities"]
        diff, se = weighted(sim, w)
        measured = float(pair_means(sim)[B - 1])
        return SelfCheck(
            sizes=(B,),
            predicted=np.array([measured + diff]),
            measured=np.array([measured]),
            se=np.array([se]),
            copies=ctx.copies().shape[0],
            members=B,
            held_out=f"extrapolated from ensembles of {fit[0]} to {fit[-1]} to m = {B}",
        )

    def widen(self, prediction: Prediction, check: SelfCheck) -> None:
        """The check's excess error, carried to each extrapolated size in proportion to its
        distance beyond ``B`` in ``1 / sqrt(m)`` (measured sizes are not widened)."""
        B = prediction.attrs["measured_up_to"]
        x = 1.0 / np.sqrt(prediction.curve["m_ensemble"].values.astype(float))
        own = 1.0 / np.sqrt(B // 2) - 1.0 / np.sqrt(B)
        scale = np.maximum(0.0, 1.0 / np.sqrt(B) - x) / own
        _widen(prediction.curve, check.excess * scale)
