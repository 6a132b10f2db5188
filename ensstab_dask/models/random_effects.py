"""The random-effects model of real ranks (``model="random-effects"``, docs/random_effects_model.md).

Fitted to ``COPY_DESIGN`` real ensemble copies; the curve is simulated from a per-feature
copy + bootstrap model of their ranks (:mod:`ensstab_dask.random_effects`), its interval
a bootstrap of the copies. Self-check: the model refitted on the first half of each
copy's weak selectors predicts ensembles of all of them, measured on the same copies.
"""

from __future__ import annotations

import numpy as np

from ..measured import copy_similarities, weighted
from ..random_effects import PAIRWISE_INDICES, RandomEffects, random_effects_curve
from ._base import CHECK, RANDOM_EFFECTS, Context, CurveModel, Prediction, SelfCheck

__all__ = ["RandomEffectsModel"]


class RandomEffectsModel(CurveModel):
    name = "random-effects"
    indices = PAIRWISE_INDICES
    interval_of = "real ensemble copies"

    def copy_design(self) -> tuple[int, int] | None:
        return (10, 10)

    def source(self, prediction: Prediction) -> str:
        return "random-effects model of the real ranks"

    def stages(self, n_boot: int) -> list[str]:
        return ["random-effects model"]

    def predict(self, ctx: Context, bar) -> Prediction:
        with ctx.clock.stage("random_effects"):
            return self._predict(ctx, bar)

    def _predict(self, ctx: Context, bar) -> Prediction:
        out = random_effects_curve(ctx.copies(), ctx.n_target, ctx.m_list, index=ctx.index, n_boot=ctx.n_boot,
                                   confidence=ctx.confidence, seed=ctx.stream(RANDOM_EFFECTS),
                                   client=ctx.client)  # fmt: skip
        curve = ctx.curve_dataset(out["stability"], out["stability_std"], lower=out.get("lower"),
                                  upper=out.get("upper"), description="predicted ensemble stability")  # fmt: skip
        boot = None
        if ctx.n_boot:
            boot = ctx.boot_dataset(out["replicates"], "predicted stability, bootstrap replicates of the real copies")
        bar.done()
        return Prediction(curve=curve, bootstrap=boot)

    def self_check(self, ctx: Context, prediction: Prediction) -> SelfCheck | None:
        """Refit on the first ``B // 2`` weak selectors of each copy, predict ``m = B``.

        The measured side uses all ``B`` weak selectors of the same copies, so the two
        sides are correlated; their standard errors are added in quadrature all the same
        (the full model's spread at ``B`` stands in for the refit's), which overstates the
        difference's noise: the check errs towards passing.
        """
        ranks = ctx.copies()
        G, B, _ = ranks.shape
        half = B // 2
        if half < 2:
            return None
        model = RandomEffects.fit(ranks[:, :half])
        predicted = model.stability(B, ctx.n_target, m_stability=400, index=ctx.index, seed=ctx.stream(CHECK))
        sim = copy_similarities(ranks, ctx.n_target, [B], aggregate=ctx.aggregate, index=ctx.index,
                                seed=ctx.stream(CHECK, 1))  # fmt: skip
        measured, se_meas = weighted(sim, np.ones(1))
        spread = prediction.spread(B)
        se_pred = spread if np.isfinite(spread) else se_meas
        return SelfCheck(
            sizes=(B,),
            predicted=np.array([predicted]),
            measured=np.array([measured]),
            se=np.array([np.hypot(se_pred, se_meas)]),
            copies=G,
            members=B,
            held_out=f"refitted on the first {half} weak selectors of each copy",
        )
