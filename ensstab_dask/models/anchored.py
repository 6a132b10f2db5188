"""Measure what is cheap, predict only beyond it (``model="anchored"``).

``COPY_DESIGN`` = (G, B) real ensemble copies in the naive check's own layout (each copy
its own stratified random half, its ``B`` weak selectors bootstrap samples of it) are a
small naive check: the stability at every ``m <= B`` is measured on them directly,
unbiased by construction, with the U-statistic's standard error over the copies
(:mod:`ensstab_dask.models.measured`), each size averaged over the arcs of
:data:`MEMBER_ORDERS` random circular orders of each copy's members
(:mod:`~ensstab_dask.models.member_arcs`; one task per copy on a cluster). Beyond ``B``
two predictions: the features' rank moments (:mod:`~ensstab_dask.models.feature_moments`;
the curve reports it, with its SE and Student's t on ``G - 1`` degrees of freedom), and
the law ``S(m) = a - b sqrt(c + 1/m)``, ``c >= 0`` (docs/method.md section 14.1),
fitted by generalised least squares to the measured sizes in ``[B/4, B]`` under the
copies' covariance of the curve, ``c`` chosen on a grid, its SE the jackknife over copies
with ``c`` chosen again, its model band half the spread between its two ends (the lines
in ``1 / sqrt(m)`` and ``1 / m``), read as a two-SD range of its error. Where the two
differ by more than :data:`DISAGREE_Z` of their combined s.d. the size is ``undecided``:
its interval covers both, its ``stability_band`` is half their distance. For an
aggregate that is no mean of its members' scores the law alone predicts, its band in the
interval.

Self-check (a member split): each copy's first ``h = ceil(B/2)`` weak selectors alone
measure the curve up to ``h``; the law fitted there (``c`` chosen again, sizes
``ceil(B/4)..h``) predicts ``S(B)``, which all ``B`` measure. The difference's standard
error is the jackknife over copies (``c`` chosen again without each copy); ``|z|`` above
:data:`CHECK_LIMIT` fails it. It sees a law whose shape is wrong over the measured sizes;
it cannot see an unlucky draw of copies (the interval's job) nor a second rise of the
curve that starts beyond ``B``. The error it shows beyond its noise is carried to the
extrapolated sizes in proportion to how far each lies beyond ``B`` (in ``1 / sqrt(m)``)
against the check's own distance, and added to their intervals.

It needs no single-selector runs of its own: t_uniform, A[f] and the real stability
that guard against pure noise come from the copies' runs (the first weak selector of
each copy for the stability: runs on independent halves).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from ensstab_dask.cluster import run_tasks
from ensstab_dask.indices import PAIRWISE_INDICES, pair_means_without_each
from ensstab_dask.models._base import Context, CurveModel, Prediction, Reused, SelfCheck, widened_band
from ensstab_dask.models.feature_moments import CopyMoments, moment_prediction
from ensstab_dask.models.measured import (
    ROOT_C,
    curve_covariance,
    fit_root_law,
    law_sizes,
    pair_means,
    root_law_weights,
    weighted,
)
from ensstab_dask.models.member_arcs import ArcDesign, arc_tops, pair_similarities
from ensstab_dask.seeding import Stage, make_rng

__all__ = [
    "Anchored",
    "COPY_DESIGN",
    "ADAPTIVE_DESIGN",
    "MEMBER_ORDERS",
    "CHECK_LIMIT",
    "GROW_SPLIT_Z",
    "GROW_BAND",
    "DISAGREE_Z",
]

#: (real ensemble copies, weak selectors per copy): 200 real runs, whatever m_ensemble.
COPY_DESIGN = (10, 20)
#: The first round of ``layout="adaptive"``: 200 real runs, every copy grown to twice its
#: members (400 in all) where it says the curve still climbs (:meth:`Anchored.grown_design`).
ADAPTIVE_DESIGN = (20, 10)
#: The first round's member split beyond this |z|, or its model band at the largest size
#: asked beyond GROW_BAND of its SE, says the curve still climbs where it was measured, and
#: the copies grow (chosen on the synthetic harness at seed 0:
#: benchmarks/results/adaptive-layout.md).
GROW_SPLIT_Z = 1.5
GROW_BAND = 2.5
#: Random circular orders of each copy's members behind each measured size (each gives ``B``
#: ensembles of every size below ``B``: :mod:`~ensstab_dask.models.member_arcs`): their
#: noise is amplified by the extrapolation (benchmarks/results/member-draws.md).
MEMBER_ORDERS = 16
#: Beyond the measured sizes, the moments' prediction and the law's disagree (the data cannot
#: tell which holds) where they differ by more than this many of their combined s.d. (chosen
#: on the synthetic harness at seed 0: benchmarks/results/beyond-b.md).
DISAGREE_Z = 1.5


class _Law(NamedTuple):
    """The law's prediction: its point, sampling SE, model band, interval half-width, and
    the t quantile its intervals use."""

    point: np.ndarray
    se: np.ndarray
    band: np.ndarray
    half: np.ndarray
    t: float

    @property
    def spread(self) -> np.ndarray:
        """Its s.d.: the sampling error and half the band (a two-SD range), in quadrature."""
        return np.hypot(self.se, self.band / 2.0)


class _Measured(NamedTuple):
    """What the measured stage found: the copies' similarities per size, the member split's
    (None without one), the law's prediction, its ``c``, and the bootstrap's unscaled
    deviations (None without a bootstrap)."""

    similarities: np.ndarray
    split: np.ndarray | None
    law: _Law
    c: float
    spread: np.ndarray | None


#: The member split's self-check fails beyond this |z| (chosen on the synthetic harness
#: at seed 0: benchmarks/results/alarm.md).
CHECK_LIMIT = 3.0


class Anchored(CurveModel):
    name = "anchored"
    paper_runs = False
    surface = True  # every n_target from the same copies
    indices = PAIRWISE_INDICES
    interval_of = "real ensemble copies"
    single_selector = "measured on every pair of weak selectors from different real ensemble copies (all their runs)"

    def copy_design(self) -> tuple[int, int] | None:
        return COPY_DESIGN

    def adaptive_design(self) -> tuple[int, int] | None:
        return ADAPTIVE_DESIGN

    def grown_design(
        self, design: tuple[int, int], curve, check: SelfCheck | None
    ) -> tuple[tuple[int, int], str] | None:
        """Every copy grown to twice its members where the first round extrapolates and says
        the curve still climbs: its member split's ``|z|`` beyond :data:`GROW_SPLIT_Z` (the
        law's shape is wrong over the measured sizes), or its model band at the largest
        size beyond :data:`GROW_BAND` of the SE there (the measured sizes cannot tell the
        law's ends apart), or no curve or SE to judge it by."""
        G, B = design
        largest = int(curve["m_ensemble"].values.max())
        if largest <= B:
            return None  # every size asked is measured: nothing rests on the law
        z = float(check.z[0]) if check is not None else float("nan")
        at = curve.sel(m_ensemble=largest)
        # An estimate with no curve (a guard rail blocked it) carries no band.
        point, band, se = (
            float(at[k]) if k in at else np.nan for k in ("stability", "stability_band", "stability_std")
        )
        if abs(z) > GROW_SPLIT_Z:
            why = f"its member split is off by {abs(z):.1f} SE (more than {GROW_SPLIT_Z:g}): the curve still climbs"
        elif band > GROW_BAND * se:
            why = (
                f"its model band at m = {largest} is {band / se:.1f} SE (more than {GROW_BAND:g}): the sizes measured "
                "cannot tell how far the curve still climbs"
            )
        elif not (np.isfinite(z) or check is None) or not (np.isfinite(point) and np.isfinite(band) and se > 0):
            why = "it gave no curve: more runs may tell the selector from chance"
        else:
            return None
        return (G, 2 * B), why

    def source(self, prediction: Prediction) -> str:
        B = prediction.attrs["measured_up_to"]
        if prediction.attrs.get("beyond_by") == "moments":
            return (
                f"measured on real ensemble copies up to m_ensemble = {B}, predicted beyond from the features' rank "
                "moments, beside the law a - b sqrt(c + 1/m)"
            )
        return (
            f"measured on real ensemble copies up to m_ensemble = {B}, extrapolated beyond by the law "
            "a - b sqrt(c + 1/m) with a model band"
        )

    def measured_up_to(self, attrs: Mapping[str, Any]) -> int | None:
        return int(attrs["measured_up_to"])

    def stages(self, n_boot: int) -> list[str]:
        return ["measured curve"]

    def _weights(self, B: int, targets, cov: np.ndarray, c: float) -> np.ndarray:
        """Rows of weights over the sizes 1..B: a unit row for a measured size, the law's
        row at ``c`` beyond ``B`` (:func:`~ensstab_dask.models.measured.root_law_weights`
        through :func:`~ensstab_dask.models.measured.law_sizes`)."""
        fit = np.array(law_sizes(B))
        targets = np.asarray(targets)
        beyond = targets > B
        W = np.zeros((len(targets), B))
        W[np.flatnonzero(~beyond), targets[~beyond] - 1] = 1.0
        if beyond.any():
            W[np.ix_(beyond, fit - 1)] = root_law_weights(
                fit, cov[np.ix_(fit - 1, fit - 1)], targets[beyond].tolist(), c
            )
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
        ranks = ctx.copies()
        s = ctx.settings
        G, B, _ = ranks.shape
        with ctx.clock.stage("measured"):
            sim, split = self._similarities(ctx, ranks)
            measured = _Measured(sim, split, *self._law(ctx, sim, B))
        point, se = measured.law.point.copy(), measured.law.se.copy()
        beyond = np.asarray(s.m_list) > B
        moments = CopyMoments.of(ranks, s.n_target, s.aggregate) if beyond.any() else None
        if moments is not None:
            with ctx.clock.stage("moments"):
                sizes = np.asarray(s.m_list)[beyond]
                point[beyond], se[beyond] = moment_prediction(
                    moments, sizes, s.n_target, s.index, ctx.stream(Stage.MOMENTS)
                )
        return self._prediction(ctx, measured, point, se, moments is not None, bar)

    def _law(self, ctx: Context, sim: np.ndarray, B: int):
        """The measured curve up to ``B`` and the law beyond it (:class:`_Law`), the law's
        ``c``, and the bootstrap's unscaled deviations (None without a bootstrap)."""
        s = ctx.settings
        G = sim.shape[1]
        curve, cov = pair_means(sim), curve_covariance(sim)
        c = self._fit_c(curve, cov, B)
        W = self._weights(B, s.m_list, cov, c)
        point_se = np.array([weighted(sim, w) for w in W])
        point, se = point_se[:, 0], point_se[:, 1]
        beyond = np.asarray(s.m_list) > B
        if beyond.any():
            se = np.where(beyond, self._jackknife_se(B, s.m_list, pair_means_without_each(sim).T, cov), se)
        band = self._band(B, s.m_list, cov, curve)
        from scipy import stats  # here: scipy.stats takes about a second to import (ensstab --help)

        tail = 0.5 + s.confidence / 2
        t, z = float(stats.t.ppf(tail, G - 1)), float(stats.norm.ppf(tail))
        # The law's own interval: sampling error by Student's t (the SE is estimated from G
        # copies), the band as a two-SD range of the law's own error, in quadrature.
        law = _Law(point, se, band, np.hypot(t * se, z * band / 2.0), t)
        return law, c, (self._deviations(ctx, sim, cov) if s.n_boot else None)

    def _prediction(self, ctx: Context, measured: _Measured, point, se, by_moments: bool, bar) -> Prediction:
        """The curve: measured up to ``B``; beyond, the moments' ``point`` and ``se`` where
        ``by_moments`` (the interval covering the law's too where the two disagree), else
        the law's."""
        s = ctx.settings
        sim, split, law, c, spread = measured
        G, B = sim.shape[1], sim.shape[0]
        beyond = np.asarray(s.m_list) > B
        band, half = law.band, law.half
        undecided = np.zeros(len(point), dtype=bool)
        if by_moments:
            undecided = beyond & (np.abs(point - law.point) > DISAGREE_Z * np.hypot(se, law.spread))
            # Where the two predictions differ beyond their noise, the data cannot tell which
            # holds: the interval covers both, and the band is half their distance.
            band = np.where(undecided, np.abs(point - law.point) / 2.0, 0.0)
            half = np.where(beyond, law.t * se, half)
        lower = upper = boot = None
        if spread is not None:  # a bootstrap was asked for (n_boot > 0)
            lower, upper = point - half, point + half
            lower = np.where(undecided, np.minimum(lower, law.point - law.half), lower)
            upper = np.where(undecided, np.maximum(upper, law.point + law.half), upper)
            sd = spread.std(axis=0, ddof=1)
            replicates = point + spread * np.where(sd > 0, se / np.where(sd > 0, sd, 1.0), 0.0)
            boot = ctx.boot_dataset(replicates, self._REPLICATES)
        curve_ds = ctx.curve_dataset(
            point, se, lower=lower, upper=upper, description="measured (m <= B) or extrapolated ensemble stability"
        )
        curve_ds["stability_band"] = ("m_ensemble", band)
        curve_ds["stability_band"].attrs = {
            "long_name": "model band",
            "description": "beyond the measured sizes, half the distance between the two predictions where they "
            "disagree (the law's own band where it alone predicts)",
        }
        if by_moments:
            self._second_prediction(curve_ds, law, beyond, undecided)
        bar.done()
        attrs = {"measured_up_to": B, "copies": G, "law_c": c, "beyond_by": "moments" if by_moments else "law"}
        return Prediction(
            curve=curve_ds,
            bootstrap=boot,
            attrs=attrs,
            reused=Reused(similarities=sim, member_split=split),
        )

    @staticmethod
    def _second_prediction(curve, law: _Law, beyond: np.ndarray, undecided: np.ndarray) -> None:
        """The law's prediction beside the moments' (NaN where measured), and where the two disagree."""
        nan = np.where(beyond, 0.0, np.nan)
        curve["stability_law"] = ("m_ensemble", law.point + nan)
        curve["stability_law"].attrs = {
            "long_name": "the law's stability",
            "description": "the second prediction beyond the measured sizes: the law a - b sqrt(c + 1/m)",
        }
        curve["stability_law_std"] = ("m_ensemble", law.spread + nan)
        curve["stability_law_std"].attrs = {
            "long_name": "the law's s.d.",
            "description": "its sampling error and half its model band, in quadrature",
        }
        curve["undecided"] = ("m_ensemble", undecided)
        curve["undecided"].attrs = {
            "long_name": "the data cannot tell",
            "description": f"the two predictions differ by more than {DISAGREE_Z:g} of their combined s.d.: "
            "the interval covers both",
        }

    _REPLICATES = "bootstrap replicates of the real copies (the law refitted), scaled to the standard error"

    def _jackknife_se(self, B: int, targets, loo: np.ndarray, cov: np.ndarray) -> np.ndarray:
        """The jackknife's standard error over copies at ``targets``, ``c`` chosen again
        on each leave-one-copy-out curve (``loo``: (G, B))."""
        G = len(loo)
        cs = np.atleast_1d(self._fit_c(loo, cov, B))
        reps = np.array([self._weights(B, targets, cov, float(cs[g])) @ loo[g] for g in range(G)])
        return np.sqrt((G - 1) / G * ((reps - reps.mean(axis=0)) ** 2).sum(axis=0))

    def _deviations(self, ctx: Context, sim, cov) -> np.ndarray:
        """Bootstrap replicates of the copies, the law's ``c`` fitted again in each, as
        deviations from their mean, (n_boot, sizes): scaled so that their standard deviation
        is the reported SE at every size (a bootstrap of a mean over pairs overstates the
        spread: pairs of one copy drawn twice are left out), the shape of the spread at the
        size the SE measured."""
        s = ctx.settings
        G, B = sim.shape[1], sim.shape[0]
        rng = make_rng(ctx.stream(Stage.MEASURED, 1))
        ids = rng.integers(G, size=(s.n_boot, G))
        # A replicate that drew one copy G times has no pair of distinct copies, and no mean
        # over pairs: drawn again (a bootstrap of the U-statistic given a pair; with 3 copies
        # one replicate in 9, with 10 one in a billion).
        while (single := (ids == ids[:, :1]).all(axis=1)).any():
            ids[single] = rng.integers(G, size=(int(single.sum()), G))
        means = pair_means(sim, ids)
        cs = self._fit_c(means, cov, B)
        refit = np.empty((s.n_boot, len(s.m_list)))
        for value in np.unique(cs):
            rows = cs == value
            refit[rows] = means[rows] @ self._weights(B, s.m_list, cov, float(value)).T
        return refit - refit.mean(axis=0)

    def _check_sizes(self, B: int) -> tuple[int, np.ndarray]:
        """The member split's first members ``h`` and the sizes its law is fitted to."""
        h = -(-B // 2)
        return h, np.arange(max(1, min(-(-B // 4), h - 2)), h + 1)  # law_sizes' rule, from B's own smallest size

    def _similarities(self, ctx: Context, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The measured curve's similarities, and the member split's (None where it has too
        few copies or sizes), in one submission of every copy's arcs to where ``ctx`` runs
        (:func:`arc_tops_on`)."""
        s = ctx.settings
        G, B, n = ranks.shape
        seed = ctx.stream(Stage.MEASURED)
        designs = [ArcDesign.of(s.n_target, range(1, B + 1), MEMBER_ORDERS, seed, aggregate=s.aggregate)]
        h, fit = self._check_sizes(B)
        split = G >= 4 and len(fit) >= 3  # three sizes fit the law's three parameters; four copies make a jackknife
        if split:
            seed = ctx.stream(Stage.CHECK)
            designs.append(ArcDesign.of(s.n_target, fit, MEMBER_ORDERS, seed, aggregate=s.aggregate, members=h))
        sims = [pair_similarities(tops, n, s.index) for tops in arc_tops_on(ctx.client, ranks, designs)]
        return sims[0], (sims[1] if split else None)

    def self_check(self, ctx: Context, prediction: Prediction) -> SelfCheck | None:
        half = prediction.reused.member_split
        if half is None:
            return None
        G, B = half.shape[1], prediction.attrs["measured_up_to"]
        h, fit = self._check_sizes(B)
        assert prediction.reused.similarities is not None  # predict measured them with the split
        at_b = prediction.reused.similarities[B - 1]
        cov = curve_covariance(half)
        curves = np.vstack([pair_means(half), pair_means_without_each(half).T])  # the copies, then without each
        cs = np.atleast_1d(fit_root_law(fit, curves, cov))
        predicted = np.array([root_law_weights(fit, cov, [B], float(c))[0] @ row for c, row in zip(cs, curves)])
        measured = np.concatenate([[pair_means(at_b[None])[0]], pair_means_without_each(at_b[None])[0]])
        diff = predicted - measured
        se = float(np.sqrt((G - 1) / G * ((diff[1:] - diff[1:].mean()) ** 2).sum()))
        return SelfCheck(
            sizes=(B,),
            predicted=predicted[:1],
            measured=measured[:1],
            se=np.array([se]),
            copies=G,
            members=B,
            held_out=f"extrapolated from ensembles of {fit[0]} to {fit[-1]} of each copy's first {h} weak selectors "
            f"to m = {B}",
            limit=CHECK_LIMIT,
            blind_to=f"an unlucky draw of the copies (the interval covers that) or a rise of the curve that starts "
            f"beyond m = {B}",
            made_from=f"each ensemble's first {h} members",
        )

    def widened(self, prediction: Prediction, check: SelfCheck) -> Prediction:
        """The check's excess error, carried to each extrapolated size in proportion to its
        distance beyond ``B`` in ``1 / sqrt(m)`` (measured sizes are not widened); a new record."""
        B = prediction.attrs["measured_up_to"]
        x = 1.0 / np.sqrt(prediction.curve["m_ensemble"].values.astype(float))
        own = 1.0 / np.sqrt(-(-B // 2)) - 1.0 / np.sqrt(B)
        scale = np.maximum(0.0, 1.0 / np.sqrt(B) - x) / own
        return replace(prediction, curve=widened_band(prediction.curve, check.excess * scale))


def _arc_tops_task(ranks: np.ndarray, designs: list[ArcDesign], copies: range) -> list[np.ndarray]:
    return [arc_tops(ranks[copies.start : copies.stop], d, copies) for d in designs]


def arc_tops_on(client, ranks: np.ndarray, designs: list[ArcDesign]) -> list[np.ndarray]:
    """:func:`~ensstab_dask.models.member_arcs.arc_tops` of every copy for each design, where
    ``client`` says: in this process, one batch of every copy; on a cluster, one task per
    copy (0.1 s or more at a few thousand features), the ranks sent once. The result does
    not depend on which: each copy's draws come from its own streams."""
    G = len(ranks)
    local = client is None or client == "synchronous"
    tasks = [(range(0, G),)] if local else [(range(g, g + 1),) for g in range(G)]
    parts = run_tasks(_arc_tops_task, tasks, shared=(ranks, designs), client=client)
    assert parts is not None
    return [np.concatenate([p[i] for p in parts]) for i in range(len(designs))]
