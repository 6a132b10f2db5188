"""Measure what is cheap, model only the extrapolation (``model="anchored"``).

``COPY_DESIGN`` = (G, B) real ensemble copies in the naive check's own layout (each copy
its own stratified random half, its ``B`` weak selectors bootstrap samples of it) are a
small naive check: the stability at every ``m <= B`` is measured on them directly,
unbiased by construction, with the U-statistic's standard error over the copies
(:mod:`ensstab_dask.models.measured`). Only ``m > B`` is a model: the law
``S(m) = a - b sqrt(c + 1/m)``, ``c >= 0`` (docs/method.md section 14.1: ``1 / m`` when
the copies' limits differ, ``1 / sqrt(m)`` when they do not), fitted by generalised least
squares to the measured sizes in ``[B/4, B]`` under the copies' covariance of the curve,
``c`` chosen on a grid.

Uncertainty: at the fitted ``c`` an extrapolated value is a linear combination of
measured stabilities, with an exact standard error (a U-statistic over the copies). The
bootstrap of the copies fits ``c`` again in every replicate, so the choice of ``c`` is
part of the spread; its deviations are rescaled by the U-statistic's SE over the
bootstrap's at the fitted ``c``, with Student's t on ``G - 1`` degrees of freedom in place
of the normal quantile. Beyond ``B`` the interval is widened by the model band, half the
spread between the law's two ends (the lines in ``1 / sqrt(m)`` and ``1 / m`` through the
same sizes): what the measured curve cannot tell. The reported standard error combines
the bootstrap's (the choice of ``c`` included, without the t factor) and the band read as
a two-SD range.

Self-check: the prediction's law (its ``c``), with ``(a, b)`` fitted to the sizes in
``[B/4, B/2]`` alone, predicts ``m = B``, which is measured; the difference is one more
linear combination, with its own exact standard error, estimated from ``G`` copies: a
``|z|`` above Student's t quantile on ``G - 1`` degrees of freedom fails it. The error it
shows beyond its noise is carried to the extrapolated sizes in proportion to how far each
lies beyond ``B`` (in ``1 / sqrt(m)``) against the check's own distance, and added to
their intervals.

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
    ROOT_C,
    copy_similarities,
    curve_covariance,
    fit_root_law,
    law_sizes,
    pair_means,
    root_law_weights,
    weighted,
)
from ensstab_dask.seeding import Stage, make_rng

__all__ = ["Anchored", "COPY_DESIGN"]

#: (real ensemble copies, weak selectors per copy): 200 real runs, whatever m_ensemble.
COPY_DESIGN = (10, 20)


class Anchored(CurveModel):
    name = "anchored"
    paper_runs = False
    surface = True  # every n_target from the same copies
    indices = PAIRWISE_INDICES
    interval_of = "real ensemble copies"
    single_selector = (
        "the same quantity measured on every pair of weak selectors from different real ensemble copies (all "
        f"{COPY_DESIGN[0] * COPY_DESIGN[1]} runs), so more precise"
    )

    def copy_design(self) -> tuple[int, int] | None:
        return COPY_DESIGN

    def source(self, prediction: Prediction) -> str:
        B = prediction.attrs["measured_up_to"]
        return (
            f"measured on real ensemble copies up to m_ensemble = {B}, extrapolated beyond by the law "
            "a - b sqrt(c + 1/m) with a model band"
        )

    def stages(self, n_boot: int) -> list[str]:
        return ["measured curve"]

    def _weights(self, B: int, targets, cov: np.ndarray, c: float) -> np.ndarray:
        """Rows of weights over the sizes 1..B: a unit row for a measured size, the law's
        row at ``c`` beyond ``B`` (:func:`~ensstab_dask.models.measured.root_law_weights`
        through :func:`~ensstab_dask.models.measured.law_sizes`)."""
        fit = np.array(law_sizes(B))
        beyond = [m for m in targets if m > B]
        rows = root_law_weights(fit, cov[np.ix_(fit - 1, fit - 1)], beyond, c) if beyond else np.empty((0, len(fit)))
        W = np.zeros((len(targets), B))
        for i, m in enumerate(targets):
            if m <= B:
                W[i, m - 1] = 1.0
            else:
                W[i, fit - 1] = rows[beyond.index(m)]
        return W

    def _fit_c(self, curve: np.ndarray, cov: np.ndarray, top: int):
        """The law's c fitted to the measured sizes up to ``top`` (per row of ``curve``)."""
        fit = np.array(law_sizes(top))
        return fit_root_law(fit, curve[..., fit - 1], cov[np.ix_(fit - 1, fit - 1)])

    def _band(self, B: int, targets, cov: np.ndarray, curve: np.ndarray) -> np.ndarray:
        """The model band: half the spread between the law's two ends (``c = 0``, the line
        in ``1 / sqrt(m)``; the largest ``c``, the line in ``1 / m``) through the same
        sizes, at each size beyond ``B`` (0 where measured): what the measured curve cannot
        tell about the extrapolation (docs/method.md section 14.1)."""
        ends = [self._weights(B, targets, cov, c) @ curve for c in (ROOT_C[0], ROOT_C[-1])]
        return np.abs(ends[0] - ends[1]) / 2.0

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
        curve, cov = pair_means(sim), curve_covariance(sim)
        c = self._fit_c(curve, cov, B)
        W = self._weights(B, s.m_list, cov, c)
        point_se = np.array([weighted(sim, w) for w in W])
        point, se = point_se[:, 0], point_se[:, 1]
        band = self._band(B, s.m_list, cov, curve)
        std = np.hypot(se, band / 2.0)  # the band read as a two-SD range of the extrapolant
        lower = upper = boot = None
        if s.n_boot:
            # Copies drawn with replacement; in each replicate the law's c is fitted again,
            # so its choice is part of the spread. Deviations are rescaled by what the
            # U-statistic says of the spread at the fitted c (a bootstrap of a mean over
            # pairs overstates it: pairs of one copy drawn twice are left out), widened by
            # Student's t over the normal quantile (that SE is itself estimated from G
            # copies), and the interval by the band.
            rng = make_rng(ctx.stream(Stage.MEASURED, 1))
            means = pair_means(sim, rng.integers(G, size=(s.n_boot, G)))
            fixed = means @ W.T
            cs = self._fit_c(means, cov, B)
            refit = np.empty_like(fixed)
            for value in np.unique(cs):
                rows = cs == value
                refit[rows] = means[rows] @ self._weights(B, s.m_list, cov, float(value)).T
            sd = fixed.std(axis=0, ddof=1)
            tail = 0.5 + s.confidence / 2
            scale = np.where(sd > 0, se / np.where(sd > 0, sd, 1.0), 0.0)
            dev = (refit - refit.mean(axis=0)) * scale
            beyond = np.asarray(s.m_list) > B  # measured sizes keep the U-statistic's SE exactly
            std = np.where(beyond, np.hypot(dev.std(axis=0, ddof=1), band / 2.0), se)  # the choice of c included
            reps = point + dev * stats.t.ppf(tail, G - 1) / stats.norm.ppf(tail)
            lower, upper = np.array([percentile_interval(reps[:, j], s.confidence) for j in range(len(W))]).T
            lower, upper = lower - band, upper + band
            boot = ctx.boot_dataset(reps, "bootstrap replicates of the real copies (the law refitted), rescaled")
        curve_ds = ctx.curve_dataset(
            point, std, lower=lower, upper=upper, description="measured (m <= B) or extrapolated ensemble stability"
        )
        curve_ds["stability_band"] = ("m_ensemble", band)
        curve_ds["stability_band"].attrs = {
            "long_name": "model band",
            "description": "half the spread between the extrapolation law's two ends, beyond the measured sizes",
        }
        bar.done()
        attrs = {"measured_up_to": B, "copies": G, "law_c": c}
        return Prediction(
            curve=curve_ds,
            bootstrap=boot,
            attrs=attrs,
            state={"similarities": sim, "covariance": cov},
        )

    def self_check(self, ctx: Context, prediction: Prediction) -> SelfCheck | None:
        B = ctx.copies().shape[1]
        if B < 4:
            return None
        sim, cov = prediction.state["similarities"], prediction.state["covariance"]
        curve = pair_means(sim)
        c = prediction.attrs["law_c"]  # the prediction's law, its (a, b) from the lower half alone
        fit = np.array([m for m in law_sizes(B) if m <= B // 2])
        w = np.zeros(B)
        w[fit - 1] = root_law_weights(fit, cov[np.ix_(fit - 1, fit - 1)], [B], c)[0]
        w[B - 1] -= 1.0
        diff, se = weighted(sim, w)
        measured = float(curve[B - 1])
        return SelfCheck(
            sizes=(B,),
            predicted=np.array([measured + diff]),
            measured=np.array([measured]),
            se=np.array([se]),
            copies=ctx.copies().shape[0],
            members=B,
            held_out=f"extrapolated from ensembles of {fit[0]} to {fit[-1]} to m = {B}",
            # The difference's SE is estimated from G copies: Student's t, not the normal 2.
            limit=round(float(stats.t.ppf(0.975, ctx.copies().shape[0] - 1)), 2),
        )

    def widen(self, prediction: Prediction, check: SelfCheck) -> None:
        """The check's excess error, carried to each extrapolated size in proportion to its
        distance beyond ``B`` in ``1 / sqrt(m)`` (measured sizes are not widened)."""
        B = prediction.attrs["measured_up_to"]
        x = 1.0 / np.sqrt(prediction.curve["m_ensemble"].values.astype(float))
        own = 1.0 / np.sqrt(B // 2) - 1.0 / np.sqrt(B)
        scale = np.maximum(0.0, 1.0 / np.sqrt(B) - x) / own
        _widen(prediction.curve, check.excess * scale)
