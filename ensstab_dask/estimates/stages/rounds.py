"""Real runs spent in rounds: the layout's own growth, and precision on demand.

With ``layout="adaptive"`` and no ``precision``, a model's first round may say that the
curve still climbs where it was measured (:meth:`~ensstab_dask.models.CurveModel.grown_design`):
then every copy grows to the members it names, reusing the first round's runs
(:func:`grow_layout`), and the answer says what happened.

A model that measures real ensemble copies (its :meth:`~ensstab_dask.models.CurveModel.copy_design`,
``(G, B)``: G copies of B weak selectors) starts with that design. When the user asks
for a ``precision`` (the half-width they need at the largest ensemble size) the
estimate reads its own interval there and, while it is wider, grows the design and
estimates again, up to ``max_real_runs``. Copies and members are prefix-stable
(:class:`~ensstab_dask.real.runs.Copies`): a round runs only the new ones, and every
round's estimate is the one a single run of its design would give.

Which to grow is read off the interval (docs/method.md section 14.3): its half-width
at the largest size is the sampling part (it falls as ``1 / sqrt(G)``, so more copies)
plus the model band beyond the measured sizes (it falls only by measuring further out,
so more members per copy). The larger part is grown: members double (up to the
largest size asked), or copies grow to what the sampling part says reaches the
target, at most four-fold per round, in steps of 5.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from scipy import stats

from ensstab_dask.cluster.progress import StageClock
from ensstab_dask.estimates.records.estimate import Estimate
from ensstab_dask.estimates.records.spending import Next, Round, Spending
from ensstab_dask.estimates.stages.assemble import estimate_on_runs
from ensstab_dask.estimates.stages.real_runs import EnsembleCopies, RealRunner
from ensstab_dask.real.run_cache import grow_copies
from ensstab_dask.real.runs import Copies, runs_from_copies
from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive
from ensstab_dask.settings import EstimateSettings

__all__ = ["half_width", "next_design", "spend_in_rounds", "grow_layout", "grow_copies", "spend_real_runs"]

#: Copies are added in steps of this many, and at most this factor per round.
_COPY_STEP, _GROWTH = 5, 4


def half_width(curve, m: int, confidence: float) -> tuple[float, float]:
    """``(half-width, band part)`` of the curve's interval at size ``m``: half the
    interval's width, or the normal quantile times the SE without an interval; the part of
    it the model band makes (the band read as a two-SD range, at the same quantile; 0
    where measured or not carried). The two parts add in quadrature."""
    at = curve.sel(m_ensemble=m)
    q = float(stats.norm.ppf(0.5 + confidence / 2))
    if "stability_lower" in curve:
        width = float(at["stability_upper"] - at["stability_lower"]) / 2.0
    else:
        width = q * float(at["stability_std"])
    band = q * float(at["stability_band"]) / 2.0 if "stability_band" in curve else 0.0
    return width, band


def next_design(
    design: tuple[int, int], width: float, band: float, *, precision: float, max_real_runs: int, largest: int
) -> tuple[tuple[int, int] | None, Next]:
    """The next round's ``(copies, members)`` and why, or ``(None, reason)`` to stop.

    The larger part of the half-width is grown: the model band's (beyond the measured
    sizes) by doubling the members, the sampling part (the half-width without the band's,
    in quadrature) by the copies it says reach the target (``G (part / allowed)^2``, at
    most four-fold, in steps of 5). A step the cap
    does not allow falls back to the other part, then to what the cap leaves.
    """
    G, B = design
    if width <= precision:
        return None, Next.REACHED
    room = max_real_runs - G * B
    sampling = math.sqrt(max(width**2 - band**2, 0.0))
    members = (G, min(2 * B, largest)) if largest > B else None
    copies = None
    if sampling > 0:
        allowed = math.sqrt(precision**2 - band**2) if precision > band else precision / 2.0
        wanted = G * (sampling / allowed) ** 2
        G2 = min(max(math.ceil(wanted / _COPY_STEP) * _COPY_STEP, G + _COPY_STEP), _GROWTH * G)
        G2 = min(G2, G + (room // B) // _COPY_STEP * _COPY_STEP)
        copies = (G2, B) if G2 > G else None
    options = [(members, Next.MEMBERS), (copies, Next.COPIES)]
    for choice, why in options if band >= sampling else options[::-1]:
        if choice is not None and choice[0] * choice[1] <= max_real_runs:
            return choice, why
    return None, Next.CAP


def spend_in_rounds(
    first: Any,
    design: tuple[int, int],
    grow: Callable[[tuple[int, int], tuple[int, int]], Any],
    *,
    precision: float,
    max_real_runs: int,
) -> tuple[Any, Spending]:
    """Estimates on growing designs until the half-width at the largest size is within
    ``precision`` or ``max_real_runs`` stops it.

    ``first`` is the estimate on ``design``; ``grow(old, new)`` runs what ``new`` adds to
    ``old`` and returns the estimate on ``new``. Returns the last estimate and the
    :class:`Spending` record.
    """
    est, rounds, wanted_runs = first, [], None
    largest = int(max(est.curve["m_ensemble"].values))
    while True:
        G, B = design
        if not est.has_curve:
            rounds.append(Round(G, B, est.real_runs, math.nan, math.nan, Next.NO_CURVE))
            break
        width, band = half_width(est.curve, largest, est.prediction.confidence)
        new, why = next_design(design, width, band, precision=precision, max_real_runs=max_real_runs, largest=largest)
        rounds.append(Round(G, B, est.real_runs, width, band, why))
        if why == Next.CAP:
            wanted = next_design(design, width, band, precision=precision, max_real_runs=2**62, largest=largest)[0]
            wanted_runs = None if wanted is None else wanted[0] * wanted[1]
        if new is None:
            break
        est, design = grow(design, new), new
    return est, Spending(precision, max_real_runs, largest, tuple(rounds), wanted_runs)


def grow_layout(
    first: Any, design: tuple[int, int], grow: Callable[[tuple[int, int], tuple[int, int]], Any], *, model
) -> tuple[Any, Spending | None]:
    """The layout's own growth, without a precision: ``first`` is the estimate on
    ``design``; where ``model``'s :meth:`~ensstab_dask.models.CurveModel.grown_design`
    reads off it that the curve still climbs, ``grow(old, new)`` runs what the grown
    design adds and returns the estimate on it. Returns the last estimate and the
    :class:`Spending` record (``precision`` None) of its one or two rounds; None where the
    first round measured every size asked, so that nothing rests on its extrapolation."""
    largest = int(max(first.curve["m_ensemble"].values))
    if largest <= design[1]:
        return first, None
    confidence = first.prediction.confidence

    def round_of(est, layout: tuple[int, int], why: Next) -> Round:
        width, band = half_width(est.curve, largest, confidence) if est.has_curve else (math.nan, math.nan)
        return Round(layout[0], layout[1], est.real_runs, width, band, why)

    grown = model.grown_design(design, first.curve, first.self_check)
    if grown is None:
        return first, Spending(None, first.real_runs, largest, (round_of(first, design, Next.KEPT),))
    new, because = grown
    est = grow(design, new)
    rounds = (round_of(first, design, Next.CLIMBS), round_of(est, new, Next.KEPT))
    return est, Spending(None, est.real_runs, largest, rounds, because=because)


class _Grower:
    """``grow(old, new)`` of the rounds on real runs: runs only the copies and members
    ``new`` adds to ``old`` (on ``runner``), then every stage after the real runs on the
    grown copies (:func:`~ensstab_dask.estimates.stages.assemble.estimate_on_runs`), every stage's
    seconds adding up over the rounds on ``clock``; ``copies`` holds the grown copies."""

    def __init__(
        self, runner: RealRunner, settings: EstimateSettings, copies: EnsembleCopies, clock: StageClock, names
    ):
        assert copies.model is not None  # rounds grow a model's own copies
        self.runner, self.settings, self.copies, self.clock, self.names = runner, settings, copies, clock, names
        self.seed = derive(as_seed_sequence(settings.seed), Stream.ESTIMATE, Stage.COPIES)

    def __call__(self, old: tuple[int, int], new: tuple[int, int]) -> Estimate:
        (G, B), (G2, B2), seed = old, new, self.seed
        plan = [Copies(G, B2 - B, seed, first_member=B)] * (B2 > B)  # new members of the old copies
        plan += [Copies(G2 - G, B2, seed, first_copy=G)] * (G2 > G)  # new copies
        spent = dict(self.clock)
        with self.clock.stage("real_runs"):
            made = self.runner.run(plan)
        assert self.copies.model is not None
        ranks = grow_copies(self.copies.model, made.pop(0) if B2 > B else None, made.pop(0) if G2 > G else None)
        self.copies = dataclasses.replace(self.copies, model=ranks, spent=self.runner.spent())
        runs, runner = runs_from_copies(ranks, self.settings.n_target), self.runner
        est = estimate_on_runs(
            runs,
            self.settings,
            self.copies,
            client=runner.client,
            progress=runner.progress,
            clock=self.clock,
            feature_names=self.names,
        )
        for stage, seconds in spent.items():
            self.clock[stage] += seconds
        return est


def spend_real_runs(
    first: Estimate,
    runner: RealRunner,
    settings: EstimateSettings,
    copies: EnsembleCopies,
    *,
    clock: StageClock,
    feature_names=None,
) -> tuple[Estimate, EnsembleCopies]:
    """The estimate again on more real copies until ``settings.precision`` is reached or
    ``settings.max_real_runs`` stops it (:func:`spend_in_rounds`), with its
    :class:`~ensstab_dask.estimates.records.parts.Spending` record; without a precision, on the
    layout's own growth (:func:`grow_layout`, with ``layout="adaptive"``). ``first`` is the
    estimate on ``copies``, the first round's; each round runs only the copies and members
    it adds (on ``runner``), then every stage after the real runs on the grown copies, and
    every stage's seconds add up over the rounds on ``clock``. Returns the last estimate
    and the copies it was made on."""
    design = settings.copy_design
    assert design is not None and copies.model is not None  # the settings refused precision otherwise
    grow = _Grower(runner, settings, copies, clock, feature_names)
    if settings.precision is None:
        est, spending = grow_layout(first, design, grow, model=settings.curve_model)
    else:
        assert settings.max_real_runs is not None  # the settings set the cap
        est, spending = spend_in_rounds(
            first, design, grow, precision=settings.precision, max_real_runs=settings.max_real_runs
        )
    return dataclasses.replace(est, spending=spending), grow.copies
