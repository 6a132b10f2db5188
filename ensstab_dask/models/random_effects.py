"""The random-effects model of real ranks (``model="random-effects"``, docs/random_effects_model.md).

Fitted to ``COPY_DESIGN`` real ensemble copies; the curve is simulated from a per-feature
copy + bootstrap model of their ranks (:mod:`ensstab_dask.models.rank_effects`), its interval
a bootstrap of the copies. Self-check: the model refitted on the first half of each
copy's weak selectors predicts ensembles of all of them, measured on the same copies.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ensstab_dask.cluster import ClientLike, map_shared
from ensstab_dask.indices import PAIRWISE_INDICES
from ensstab_dask.models._base import Context, CurveModel, Prediction, SelfCheck
from ensstab_dask.models.bootstrap import percentile_interval
from ensstab_dask.models.measured import copy_similarities, weighted
from ensstab_dask.models.rank_effects import RandomEffects, fitted_curves
from ensstab_dask.seeding import SeedLike, Stage, make_rng

__all__ = ["RandomEffectsModel", "random_effects_curve", "M_STABILITY"]


class RandomEffectsModel(CurveModel):
    name = "random-effects"
    indices = PAIRWISE_INDICES
    interval_of = "real ensemble copies"
    single_selector = "the random-effects model's, fitted to the real ensemble copies' ranks"

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
        s = ctx.settings
        out = random_effects_curve(
            ctx.copies(),
            s.n_target,
            s.m_list,
            index=s.index,
            n_boot=s.n_boot,
            confidence=s.confidence,
            seed=ctx.stream(Stage.RANDOM_EFFECTS),
            client=ctx.client,
        )
        curve = ctx.curve_dataset(
            out["stability"],
            out["stability_std"],
            lower=out.get("lower"),
            upper=out.get("upper"),
            description="predicted ensemble stability",
        )
        boot = None
        if s.n_boot:
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
        s = ctx.settings
        model = RandomEffects.fit(ranks[:, :half])
        predicted = model.stability(B, s.n_target, m_stability=M_STABILITY, index=s.index, seed=ctx.stream(Stage.CHECK))
        sim = copy_similarities(
            ranks, s.n_target, [B], aggregate=s.aggregate, index=s.index, seed=ctx.stream(Stage.CHECK, 1)
        )
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
            made_from=f"each ensemble's first {half} members",
        )


#: Simulated copies behind the model's curve (and its self-check's prediction).
M_STABILITY = 400

#: Bootstrap replicates per Dask task: small tasks, 50 of them at the default 200
#: replicates, enough to keep 16 workers busy.
_REPLICATES_PER_TASK = 4


def random_effects_curve(
    ranks: np.ndarray,
    n_target: int,
    m_ensemble: list[int],
    *,
    index: str = "jaccard",
    n_boot: int = 0,
    confidence: float = 0.95,
    seed: SeedLike = 0,
    client: ClientLike = None,
) -> dict:
    """The predicted curve, and with ``n_boot`` its interval from a bootstrap of the copies.

    Each bootstrap replicate draws the real copies with replacement (whole copies: the
    data's half and its weak selectors go together), refits the model and simulates the
    curve again, with a quarter of the pairs; the interval therefore covers the real
    copies' sampling and the simulation's noise. The replicates are centred on the point
    (their median moved to it), because a replicate's repeated copies bias it low. The
    point is simulated from :data:`M_STABILITY` copies. The point, its Monte-Carlo error
    and the replicates run as tasks on ``client`` (see :mod:`ensstab_dask.cluster`); the
    result does not depend on where.

    Returns a dict: ``stability`` and ``stability_std`` (Monte-Carlo) per m, and with a
    bootstrap ``lower``, ``upper`` and ``replicates`` (n_boot, len(m_ensemble)).
    """
    ranks = np.asarray(ranks)
    G = ranks.shape[0]
    # The weak selectors' own top subsets (smallest rank first; real ranks have no ties).
    subsets = np.sort(np.argpartition(ranks, n_target - 1, axis=2)[:, :, :n_target], axis=2)
    rng = make_rng(seed)
    seeds = rng.integers(2**63, size=1 + n_boot)
    # The point, and its Monte-Carlo error from two independent halves of its pairs.
    m_stability = M_STABILITY
    half = m_stability // 2
    jobs: list[tuple[np.ndarray | None, int, Any]] = [
        (None, m_stability, seeds[0]),
        (None, half, seeds[0] + 1),
        (None, half, seeds[0] + 2),
    ]
    for i in range(n_boot):
        ids = np.sort(rng.integers(G, size=G))
        if len(np.unique(ids)) < 2:
            ids[0] = (ids[0] + 1) % G  # a replicate needs two distinct copies
        jobs.append((ids, max(2, m_stability // 4), seeds[1 + i]))
    # The point's jobs cost as much as several replicates each: one task apiece.
    tasks = [[job] for job in jobs[:3]] + [
        jobs[k : k + _REPLICATES_PER_TASK] for k in range(3, len(jobs), _REPLICATES_PER_TASK)
    ]
    shared = (ranks, subsets, n_target, list(m_ensemble), index)
    curves = np.concatenate(map_shared(fitted_curves, shared, [(t,) for t in tasks], client=client))
    point, a, b = curves[:3]
    out = {"stability": point, "stability_std": np.abs(a - b) / 2, "model": RandomEffects.fit(ranks)}
    if n_boot:
        reps = curves[3:]
        # A replicate holds about 63 % distinct copies, so its pairs' centres are noisier and
        # its curve lower than the point's: the replicates are used as spreads about their
        # median, placed on the point (docs/random_effects_model.md, "Uncertainty").
        reps = reps - np.median(reps, axis=0) + point
        lo, hi = np.array([percentile_interval(reps[:, j], confidence) for j in range(len(m_ensemble))]).T
        out.update(lower=lo, upper=hi, replicates=reps)
    return out
