"""Precision on demand: real runs spent in rounds until the interval is as narrow as asked.

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
from ensstab_dask.estimates.assemble import estimate_on_runs
from ensstab_dask.estimates.real_runs import EnsembleCopies, RealRunner
from ensstab_dask.estimates.records import Round, Spending
from ensstab_dask.estimates.result import Estimate
from ensstab_dask.estimates.spending import Next
from ensstab_dask.real.run_cache import grow_copies
from ensstab_dask.real.runs import Copies, runs_from_copies
from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive
from ensstab_dask.settings import EstimateSettings

__all__ = ["half_width", "next_design", "spend_in_rounds", "grow_copies", "spend_real_runs"]

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
    :class:`~ensstab_dask.estimates.records.Spending` record. ``first`` is the estimate on
    ``copies``, the first round's; each round runs only the copies and members it adds
    (on ``runner``), then every stage after the real runs on the grown copies
    (:func:`~ensstab_dask.estimates.assemble.estimate_on_runs`), and every stage's seconds
    add up over the rounds on ``clock``. Returns the last estimate and the copies it was
    made on."""
    design = settings.copy_design
    assert design is not None and copies.model is not None  # the settings refused precision otherwise
    seed = derive(as_seed_sequence(settings.seed), Stream.ESTIMATE, Stage.COPIES)
    grown = copies

    def grow(old: tuple[int, int], new: tuple[int, int]) -> Estimate:
        nonlocal grown
        (G, B), (G2, B2) = old, new
        plan = [Copies(G, B2 - B, seed, first_member=B)] * (B2 > B)  # new members of the old copies
        plan += [Copies(G2 - G, B2, seed, first_copy=G)] * (G2 > G)  # new copies
        spent = dict(clock)
        with clock.stage("real_runs"):
            made = runner.run(plan)
        assert grown.model is not None  # a precision is refused for a model without copies
        ranks = grow_copies(grown.model, made.pop(0) if B2 > B else None, made.pop(0) if G2 > G else None)
        grown = dataclasses.replace(grown, model=ranks, spent=runner.spent())
        runs, names = runs_from_copies(ranks, settings.n_target), feature_names
        est = estimate_on_runs(
            runs, settings, grown, client=runner.client, progress=runner.progress, clock=clock, feature_names=names
        )
        for stage, seconds in spent.items():
            clock[stage] += seconds
        return est

    assert settings.precision is not None and settings.max_real_runs is not None  # the settings set the cap
    est, spending = spend_in_rounds(
        first, design, grow, precision=settings.precision, max_real_runs=settings.max_real_runs
    )
    return dataclasses.replace(est, spending=spending), grown
