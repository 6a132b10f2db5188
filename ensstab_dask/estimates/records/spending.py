"""What an estimate spent: its real runs as they were paid for (made here or reused from the
cache), the seconds of each stage, and the rounds of a precision.

:class:`Cost` is part of every :class:`~ensstab_dask.estimates.records.estimate.Estimate` (its line
in the summary, ``real_runs``, ``runs_made``, ``runs_reused``, ``seconds_per_real_run``
and ``seconds`` in the JSON, ``seconds_*`` in the Dataset's attributes); :class:`Spending`
of an estimate with a ``precision`` (:mod:`~ensstab_dask.estimates.stages.rounds`).
:mod:`~ensstab_dask.estimates.records.parts` names them with the estimate's other records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

import numpy as np
import xarray as xr

from ensstab_dask.outputs import json_number
from ensstab_dask.wording import param

__all__ = ["RunsSpent", "Cost", "Round", "Spending"]


@dataclass(frozen=True)
class RunsSpent:
    """How an estimate's real runs were paid for: ``made`` here, in ``made_seconds`` of wall
    time, and ``reused`` from the cache of real runs, which took ``reused_seconds`` when
    they were made (as their cache entries recorded it; NaN where an entry did not)."""

    made: int = 0
    reused: int = 0
    made_seconds: float = 0.0
    reused_seconds: float = 0.0

    def __add__(self, other: RunsSpent) -> RunsSpent:
        return RunsSpent(
            self.made + other.made,
            self.reused + other.reused,
            self.made_seconds + other.made_seconds,
            self.reused_seconds + other.reused_seconds,
        )

    @property
    def seconds_per_run(self) -> float:
        """Wall seconds per real run as the runs were made, here or when the reused ones
        were (NaN when no run's time is known): never the seconds of reading a cache."""
        known = np.isfinite(self.reused_seconds) and self.reused > 0
        runs = self.made + (self.reused if known else 0)
        seconds = self.made_seconds + (self.reused_seconds if known else 0.0)
        return seconds / runs if runs else float("nan")


@dataclass(frozen=True)
class Cost:
    """What the estimate spent: runs of the real selector and of the simulated one, the
    wall time of each stage (``seconds``, which later stages of the same estimate add to),
    and how the real runs were paid for (``runs``: made here or reused from the cache)."""

    real_runs: int
    simulated_runs: int
    seconds: dict[str, float]
    runs: RunsSpent = field(default_factory=RunsSpent)

    #: The keys of :meth:`to_dict` that say how this run of the estimate went (its wall times,
    #: which runs it made and which it read back), not what it estimated: the same estimate
    #: made again, elsewhere or from the cache, differs in these alone.
    HOW_IT_RAN: ClassVar[tuple[str, ...]] = ("seconds", "runs_made", "runs_reused", "seconds_per_real_run")

    @property
    def seconds_per_run(self) -> float:
        """Wall seconds per real run as made (:attr:`RunsSpent.seconds_per_run`)."""
        return self.runs.seconds_per_run

    def seconds_as_made(self) -> float:
        """The estimate's wall time as if every real run were made in it: where some were
        reused from the cache, the real runs' stage is their count at the seconds per run
        they took when made (:attr:`seconds_per_run`), not the seconds of reading them; the
        stages' own seconds where none was reused or no run's time is known."""
        total = float(sum(self.seconds.values()))
        per_run = self.seconds_per_run
        if not self.runs.reused or not np.isfinite(per_run):
            return total
        return total - float(self.seconds.get("real_runs", 0.0)) + per_run * self.real_runs

    def to_dict(self) -> dict[str, Any]:
        return {
            "real_runs": self.real_runs,
            "runs_made": self.runs.made,
            "runs_reused": self.runs.reused,
            "seconds_per_real_run": json_number(self.seconds_per_run),
            "simulated_runs": self.simulated_runs,
            "seconds": self.seconds,
        }

    def add_to(self, ds: xr.Dataset) -> xr.Dataset:
        ds.attrs.update(real_runs=self.real_runs, simulated_runs=self.simulated_runs)
        ds.attrs.update(runs_made=self.runs.made, runs_reused=self.runs.reused)
        # Not seconds_*: those are the stages' times, which a reader sums.
        ds.attrs.update(real_run_seconds_each=self.seconds_per_run)
        ds.attrs.update({f"seconds_{k}": v for k, v in self.seconds.items()})
        return ds


class Next(str, Enum):
    """What came after a round of :func:`~ensstab_dask.estimates.stages.rounds.spend_in_rounds`:
    another round (and what it grew), or why the rounds stopped. A ``str``, as the JSON
    records it."""

    MEMBERS = "more members per copy"
    COPIES = "more copies"
    REACHED = "reached"
    CAP = "cap"
    NO_CURVE = "no curve"
    #: Without a precision: the first round says the curve still climbs, every copy grows.
    CLIMBS = "the curve still climbs"
    #: Without a precision: the layout the rounds ended on.
    KEPT = "kept"


#: Why the rounds stopped short of the precision, as the sentence says it.
_STOPPED = {Next.NO_CURVE: "the estimate has no curve to narrow", Next.CAP: "the cap on real runs stops it"}


@dataclass(frozen=True)
class Round:
    """One round: the design estimated on, what it cost in all, the half-width it gave at
    the largest size (and the model band within it), and what came next."""

    copies: int
    members: int
    real_runs: int
    half_width: float
    band: float
    next: Next

    def to_dict(self) -> dict[str, Any]:
        return {
            "copies": self.copies,
            "members": self.members,
            "real_runs": self.real_runs,
            "half_width": self.half_width,
            "band": self.band,
            "next": Next(self.next).value,
        }


@dataclass(frozen=True)
class Spending:
    """How an estimate spent its real runs in rounds, in order: to reach a ``precision``,
    or without one (``precision`` None) the layout's own growth, when the first round says
    the curve still climbs (``because`` says how it said so)."""

    precision: float | None
    max_real_runs: int
    at: int  # the ensemble size the half-width is read at (the largest asked)
    rounds: tuple[Round, ...]
    wanted_runs: int | None = None  # where the cap stopped it: the real runs the next round would have had
    because: str = ""  # without a precision: why the layout grew ("" where it did not)

    @property
    def reached(self) -> bool | None:
        """Whether the last round's half-width is within the precision asked (None: none was)."""
        if self.precision is None:
            return None
        return bool(self.rounds[-1].half_width <= self.precision)

    @property
    def real_runs(self) -> int:
        return self.rounds[-1].real_runs

    def _layout_sentence(self) -> str:
        first, last = self.rounds[0], self.rounds[-1]
        began = (
            f"Layout: a first round of {first.copies} real ensemble copies of {first.members} weak selectors "
            f"({first.real_runs} runs)"
        )
        if len(self.rounds) == 1:
            return f"{began}; the curve had settled where measured, so they were kept."
        return f"{began}; {self.because}, so every copy grew to {last.members}: {last.real_runs} real runs in all."

    def sentence(self) -> str:
        """What was spent and why, in one sentence."""
        if self.precision is None:
            return self._layout_sentence()
        last = self.rounds[-1]
        n = len(self.rounds)
        spent = f"{last.real_runs} real runs ({last.copies} copies of {last.members}) in {n} round{'s' * (n > 1)}"
        if self.reached:
            return (
                f"Precision: half-width {last.half_width:.3f} at m = {self.at}, within the {self.precision:g} "
                f"asked, after {spent}."
            )
        why = _STOPPED.get(last.next, str(last.next))
        if last.next == Next.CAP and self.wanted_runs:
            why += "; to go on, pass " + param("max_real_runs", self.wanted_runs)
        return (
            f"Precision NOT reached: half-width {last.half_width:.3f} at m = {self.at} > the {self.precision:g} "
            f"asked, after {spent}: " + why + "."
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON's ``spending``: the layout's growth records why it grew, a precision's
        rounds what was asked, the cap and whether it was reached."""
        rounds = {"at": self.at, "rounds": [r.to_dict() for r in self.rounds]}
        if self.precision is None:
            return {"because": self.because, **rounds}
        return {
            "precision": self.precision,
            "max_real_runs": self.max_real_runs,
            "reached": self.reached,
            "wanted_runs": self.wanted_runs,
            **rounds,
        }
