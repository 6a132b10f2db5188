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

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["Round", "Spending", "half_width", "next_design", "spend_in_rounds", "grow_copies"]

#: Copies are added in steps of this many, and at most this factor per round.
_COPY_STEP, _GROWTH = 5, 4


@dataclass(frozen=True)
class Round:
    """One round: the design estimated on, what it cost in all, the half-width it gave at
    the largest size (and the model band within it), and what came next."""

    copies: int
    members: int
    real_runs: int
    half_width: float
    band: float
    next: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "copies": self.copies,
            "members": self.members,
            "real_runs": self.real_runs,
            "half_width": self.half_width,
            "band": self.band,
            "next": self.next,
        }


@dataclass(frozen=True)
class Spending:
    """How an estimate with a ``precision`` spent its real runs: the rounds, in order."""

    precision: float
    max_real_runs: int
    at: int  # the ensemble size the half-width is read at (the largest asked)
    rounds: tuple[Round, ...]
    wanted_runs: int | None = None  # where the cap stopped it: the real runs the next round would have had
    words: Callable[[str], str] = field(default=str, compare=False, repr=False)  # the command line rewords it

    @property
    def reached(self) -> bool:
        """Whether the last round's half-width is within the precision asked."""
        return bool(self.rounds[-1].half_width <= self.precision)

    @property
    def real_runs(self) -> int:
        return self.rounds[-1].real_runs

    def sentence(self) -> str:
        """What was spent and why, in one sentence."""
        last = self.rounds[-1]
        n = len(self.rounds)
        spent = f"{last.real_runs} real runs ({last.copies} copies of {last.members}) in {n} round{'s' * (n > 1)}"
        if self.reached:
            return self.words(
                f"Precision: half-width {last.half_width:.3f} at m = {self.at}, within the {self.precision:g} "
                f"asked, after {spent}."
            )
        if last.next == "cap":
            why = "the cap on real runs stops it" + (
                f"; to go on, pass max_real_runs={self.wanted_runs}" if self.wanted_runs else ""
            )
        else:
            why = {"no curve": "the estimate has no curve to narrow"}.get(last.next, last.next)
        return self.words(
            f"Precision NOT reached: half-width {last.half_width:.3f} at m = {self.at} > the {self.precision:g} "
            f"asked, after {spent}: {why}."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "precision": self.precision,
            "max_real_runs": self.max_real_runs,
            "at": self.at,
            "reached": self.reached,
            "wanted_runs": self.wanted_runs,
            "rounds": [r.to_dict() for r in self.rounds],
        }


def half_width(curve, m: int, confidence: float) -> tuple[float, float]:
    """``(half-width, band)`` of the curve's interval at size ``m``: half the interval's
    width, or the normal quantile times the SE without a bootstrap interval; the model
    band (0 where measured or not carried)."""
    at = curve.sel(m_ensemble=m)
    if "stability_lower" in curve:
        width = float(at["stability_upper"] - at["stability_lower"]) / 2.0
    else:
        width = float(stats.norm.ppf(0.5 + confidence / 2) * at["stability_std"])
    band = float(at["stability_band"]) if "stability_band" in curve else 0.0
    return width, band


def next_design(
    design: tuple[int, int], width: float, band: float, *, precision: float, max_real_runs: int, largest: int
) -> tuple[tuple[int, int] | None, str]:
    """The next round's ``(copies, members)`` and why, or ``(None, reason)`` to stop.

    The larger part of the half-width is grown: the model band (beyond the measured
    sizes) by doubling the members, the sampling part by the copies it says reach the
    target (``G (part / allowed)^2``, at most four-fold, in steps of 5). A step the cap
    does not allow falls back to the other part, then to what the cap leaves.
    """
    G, B = design
    if width <= precision:
        return None, "reached"
    room = max_real_runs - G * B
    sampling = max(width - band, 0.0)
    members = (G, min(2 * B, largest)) if largest > B else None
    copies = None
    if sampling > 0:
        allowed = precision - band if precision > band else precision / 2.0
        wanted = G * (sampling / allowed) ** 2
        G2 = min(max(math.ceil(wanted / _COPY_STEP) * _COPY_STEP, G + _COPY_STEP), _GROWTH * G)
        G2 = min(G2, G + (room // B) // _COPY_STEP * _COPY_STEP)
        copies = (G2, B) if G2 > G else None
    options = [(members, "more members per copy"), (copies, "more copies")]
    for choice, why in options if band >= sampling else options[::-1]:
        if choice is not None and choice[0] * choice[1] <= max_real_runs:
            return choice, why
    return None, "cap"


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
            rounds.append(Round(G, B, est.real_runs, math.nan, math.nan, "no curve"))
            break
        width, band = half_width(est.curve, largest, est.confidence)
        new, why = next_design(design, width, band, precision=precision, max_real_runs=max_real_runs, largest=largest)
        rounds.append(Round(G, B, est.real_runs, width, band, why))
        if why == "cap":
            wanted = next_design(design, width, band, precision=precision, max_real_runs=2**62, largest=largest)[0]
            wanted_runs = None if wanted is None else wanted[0] * wanted[1]
        if new is None:
            break
        est, design = grow(design, new), new
    return est, Spending(precision, max_real_runs, largest, tuple(rounds), wanted_runs)


def grow_copies(old: np.ndarray, extra_members: np.ndarray | None, extra_copies: np.ndarray | None) -> np.ndarray:
    """The copy ranks of the grown design: ``old`` (G, B, F), its copies' new members
    (G, B2 - B, F) and the new copies (G2 - G, B2, F)."""
    ranks = old if extra_members is None else np.concatenate([old, extra_members], axis=1)
    return ranks if extra_copies is None else np.concatenate([ranks, extra_copies], axis=0)
