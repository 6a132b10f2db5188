"""When the method has nothing to say, or says it without proof: the guard rails.

:func:`guard_rails` is the one place that decides whether an estimate is ``reliable``
(:func:`verdict` gives its record):
the reasons that block any prediction (:func:`blocking_reasons`, checked before p is
fitted), the cautions of the paper's simulator (:func:`caution_reasons`) and the model's
self-check (docs/method.md section 13). An estimate is reliable when no reason is left.

Every reason reads ``"what it means, in plain words: the method's detail"``: the summary
opens with the part before the first ``": "`` (:func:`headline`), for a reader who does
not know the method's symbols.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from ensstab_dask.estimates.records.parts import SingleSelector, Smaller, Verdict
from ensstab_dask.indices import NogueiraStability
from ensstab_dask.models import Prediction, SelfCheck
from ensstab_dask.models.simulator_fit import SimulatorFit
from ensstab_dask.simulator.estimators import PEstimate
from ensstab_dask.simulator.fixed_point import FixedPointCheck
from ensstab_dask.wording import param, words

__all__ = [
    "guard_rails",
    "verdict",
    "blocking_reasons",
    "caution_reasons",
    "notes",
    "headline",
    "curve_shape_notes",
    "undecided_sizes",
    "reach_notes",
    "FAR_BEYOND",
]


def headline(reason: str) -> str:
    """The plain-words part of a reason (see the module docstring)."""
    return reason.split(": ", 1)[0]


def fewer_useful_than_asked(n_useful_mean: float, n_target: int, *, simulator: bool, smaller: Smaller = None) -> str:
    """The selector is stable, but counts no more useful features than it is asked to keep
    (A[f] <= n_target, where docs/method.md section 11.2 has the method say nothing): a
    smaller signal than n_target, common and legitimate, not noise.

    A[f] is counted against a threshold that depends on n_target, so the count at a
    smaller n_target is not this one: the advice names a k only when the same runs were
    counted there (``smaller``).
    """
    than = "fewer than" if n_useful_mean < n_target else "no more than"
    plain = f"the selector finds about {n_useful_mean:.1f} useful features, {than} the n_target = {n_target} it keeps"
    anchored = words("use ", param("model", "anchored"), ", which measures real ensembles")
    if smaller:
        k, count = smaller
        plain += f"; at n_target = {k} the same runs count {count:.1f}, more than it keeps, so ask for " + param(
            "n_target", k
        )
        plain += (", or " + anchored) if simulator else ""
    elif smaller is False:
        plain += "; no smaller n_target counts more than it keeps on these runs"
        plain += (", so " + anchored) if simulator else ""
    else:
        plain += "; ask for a smaller n_target" + ((", or " + anchored) if simulator else "")
    detail = (
        f"A[f] = {n_useful_mean:.1f} features are picked more often than chance allows, so the rest of each "
        f"top {n_target} is filled by chance"
    )
    if simulator:
        detail += "; the paper's simulator says nothing at A[f] <= n_target"
    return plain + ": " + detail


def blocking_reasons(
    *,
    n_target: int,
    n_runs: int,
    n_useful_mean: float,
    t_draws: np.ndarray,
    real_nogueira: NogueiraStability,
    simulator: bool = True,
    smaller: Smaller = None,
) -> list[str]:
    """Why no curve can be predicted at all (empty when one can): checked before p is fitted.

    A selector that counts no more useful features than n_target (A[f] <= n_target, where
    the method says nothing: docs/method.md section 11.2) blocks only the paper's simulator
    (``simulator``); a model that measures real ensembles has a curve for it (see
    :func:`notes`).
    """
    out = []
    saturated = int((np.asarray(t_draws) >= n_runs).sum())
    chance = real_nogueira.lower <= 0.0
    if chance:
        why = "so p cannot be fitted" if simulator else "so there is no stability to predict"
        out.append(
            f"the selector's picks are not distinguishable from chance: Nogueira's stability of the real runs has "
            f"the 95% interval [{real_nogueira.lower:.3f}, {real_nogueira.upper:.3f}], which includes 0, {why}"
        )
    if saturated * 2 > len(t_draws):
        out.append(
            f"{n_runs} runs are too few to tell a useful feature from chance: t_uniform reached n_runs = {n_runs} "
            f"in {saturated} of {len(t_draws)} draws, so no feature can be counted above it and A[f] says nothing; "
            "increase n_runs"
        )
    if simulator and not chance and n_useful_mean <= n_target:
        # A threshold that reached n_runs in some draws undercounts A[f]: then too few runs,
        # not a small signal, is what is true.
        if saturated:
            out.append(_undercounted(n_runs, saturated, len(t_draws)))
        else:
            out.append(fewer_useful_than_asked(n_useful_mean, n_target, simulator=True, smaller=smaller))
    return out


def _undercounted(n_runs: int, saturated: int, draws: int) -> str:
    return (
        f"{n_runs} runs are too few to count every useful feature: t_uniform reached n_runs = {n_runs} in "
        f"{saturated} of {draws} draws, where A[f] cannot see useful features, so n_useful is "
        "underestimated; increase n_runs"
    )


def notes(
    *,
    n_target: int,
    n_useful_mean: float,
    real_nogueira: NogueiraStability,
    simulator: bool,
    saturated: int = 0,
    smaller: Smaller = None,
) -> list[str]:
    """What is true and worth saying but does not make an estimate unreliable (nothing
    when the threshold reached n_runs in ``saturated`` draws: A[f] is undercounted there)."""
    if not simulator and not saturated and real_nogueira.lower > 0.0 and n_useful_mean <= n_target:
        return [fewer_useful_than_asked(n_useful_mean, n_target, simulator=False, smaller=smaller)]
    return []


def curve_shape_notes(
    m: Sequence[int],
    stability: Iterable[float],
    measured_up_to: int | None = None,
    std: Iterable[float] | None = None,
) -> tuple[list[str], list[str]]:
    """What the curve's shape shows, said as it is: ``(cautions, notes)``.

    A size beyond the measured ones predicted below the largest measured value by more than
    twice their combined s.d. (``std``) is a caution: no curve measured on real data falls
    with m, so such an extrapolation is evidence against itself, and the estimate is not a
    validated prediction. A smaller fall there (within the noise) is a note, as is each
    size from which a measured or simulated curve falls. ``measured_up_to``: the largest
    measured size (None: a simulated curve). Sizes without a value are passed over."""
    values = np.asarray(list(stability), dtype=float)
    sd = np.zeros(len(values)) if std is None else np.nan_to_num(np.asarray(list(std), dtype=float))
    pairs = [(int(a), float(v), float(e)) for a, v, e in zip(m, values, sd) if np.isfinite(v)]
    cautions, notes_ = [], []
    if measured_up_to is not None:
        at_b = [(a, v, e) for a, v, e in pairs if a == measured_up_to]
        below = [
            (b, vb, eb)
            for b, vb, eb in pairs
            if at_b and b > measured_up_to and vb < at_b[0][1] - 2 * np.hypot(eb, at_b[0][2])
        ]
        if below:
            a, va, _ = at_b[0]
            b, vb, _ = below[0]
            cautions.append(
                f"the extrapolation falls below what was measured: {vb:.3f} at m = {b} against {va:.3f} measured at "
                f"m = {a}, by more than twice their noise; more members do not make an ensemble less stable on any "
                "curve measured, so the sizes beyond the measured ones are likely underestimated"
            )
    for (a, va, _), (b, vb, _) in zip(pairs, pairs[1:]):
        if vb >= va:
            continue
        if measured_up_to is not None and a <= measured_up_to < b:
            if not cautions:  # a fall beyond the noise is the caution's, said there
                notes_.append(
                    f"the measured value at m = {a} ({va:.3f}) is above the extrapolated {vb:.3f} at m = {b}, "
                    "within their noise"
                )
        else:
            notes_.append(
                f"the curve falls from m = {a} ({va:.3f}) to m = {b} ({vb:.3f}): more members make this "
                "ensemble less stable there, or the curve's noise is larger than the step"
            )
    return cautions, notes_


def undecided_sizes(curve) -> list[int]:
    """The sizes beyond the measured ones where the model's two predictions disagree
    (``undecided`` in the curve), in order; empty for a model with one prediction."""
    if "undecided" not in curve:
        return []
    return [int(m) for m, u in zip(curve["m_ensemble"].values, curve["undecided"].values) if bool(u)]


#: How far beyond the largest measured size a curve may reach before a note says that its
#: answer there rests on the extrapolation alone.
FAR_BEYOND = 10


def reach_notes(m: Sequence[int], measured_up_to: int | None) -> list[str]:
    """A note when the largest size asked is more than :data:`FAR_BEYOND` times the largest
    measured one: nothing real was measured there, only the extrapolation says it."""
    if measured_up_to is None or not m or max(m) <= FAR_BEYOND * measured_up_to:
        return []
    top = max(m)
    return [
        f"the answer at m = {top} is {top / measured_up_to:,.0f}x the largest size measured on real ensembles "
        f"(m = {measured_up_to}): there it rests on the extrapolation alone, which the self-check at the "
        "measured sizes does not test"
    ]


def caution_reasons(
    *,
    n_runs: int,
    t_draws: np.ndarray,
    p_fit: PEstimate | None,
    fixed_point: FixedPointCheck | None,
    power: FixedPointCheck | None,
    verified: bool = True,
    calibration_empty: bool = False,
    n_useful: tuple[float, int] | None = None,
) -> list[str]:
    """Why a simulated curve is not a validated prediction (empty when nothing says so).

    ``verified=False``: the fixed point was not checked (``verify=False``);
    ``calibration_empty``: ``calibrate=True`` found no (u, p) consistent with both
    statistics; ``n_useful``: (A[f], the n_useful simulated), when
    :func:`round_n_useful` had to clamp A[f] into [n_target, n_feature].
    """
    out = []
    if n_useful is not None and round(n_useful[0]) != n_useful[1]:
        measured, used = n_useful
        bound = "n_target" if used > measured else "n_feature"
        out.append(
            f"the simulator runs at {used} useful features, not the {measured:.1f} counted: n_useful was clamped "
            f"from A[f] = {measured:.1f} to {bound} = {used}, because the simulator needs "
            f"n_target <= n_useful <= n_feature, and {used} is not what the real runs measured"
        )
    if not verified:
        out.append(
            "nothing confirms the number of useful features: the fixed point was not checked ("
            + param("verify", False)
            + ")"
        )
    if calibration_empty:
        out.append(
            "the simulator cannot match the selector's stability and its count of useful features at once: the "
            "calibration grid has no (u, p) consistent with both the real stability and A[f] (the curve uses the "
            "uncalibrated (u, p))"
        )
    saturated = int((np.asarray(t_draws) >= n_runs).sum())
    if 0 < saturated * 2 <= len(t_draws):
        out.append(_undercounted(n_runs, saturated, len(t_draws)))
    if p_fit is not None and p_fit.at_boundary:
        out.append(
            f"the simulated selector cannot be made as stable as the real one: p = {p_fit.p:.3f} is at the end of "
            f"its search range, and the simulated single selector cannot reach the real stability "
            f"{p_fit.target:.4f}"
        )
    if fixed_point is not None and not fixed_point.holds:
        out.append(
            "the simulator does not reproduce how often the selector picks its features: the fixed point does not "
            f"hold (u = {fixed_point.n_useful}, A[f_(u,p)] = {fixed_point.mean:.1f})"
        )
    if fixed_point is not None and fixed_point.holds and (power is None or power.holds):
        where = (
            f"u = A[f_(u,p)] also holds at u = {power.n_useful} (A = {power.mean:.1f})"
            if power is not None
            else "there is no larger u to try it at"
        )
        out.append(
            "nothing confirms the number of useful features: the fixed-point check has no power at "
            f"p = {fixed_point.p:.3f} ({where}), so it cannot confirm n_useful (p is too close to 1)"
        )
    return out


class GuardRails(NamedTuple):
    """What :func:`guard_rails` decided: whether a curve can be predicted at all, the
    reasons it cannot (``blocking``), and the reasons the curve is not a validated
    prediction (``cautions``)."""

    predictable: bool
    blocking: list[str]
    cautions: list[str]


def guard_rails(
    single: SingleSelector,
    n_target: int,
    fit: SimulatorFit | None = None,
    *,
    verified: bool = True,
    n_useful: int | None = None,
    simulator: bool = True,
    self_check: SelfCheck | None = None,
) -> GuardRails:
    """Whether the method has anything to say, and whether to believe it (docs/method.md
    section 11): the only place ``Estimate.reliable`` is decided.

    Returns :class:`GuardRails` ``(predictable, blocking, cautions)``: :func:`blocking_reasons` mean no curve
    can be predicted at all (``simulator``: the curve would be the paper's simulator's);
    cautions mean the curve is there but is not a validated prediction: the paper's
    simulator's (:func:`caution_reasons` on its ``fit``, only when the curve is the
    ``simulator``'s; ``n_useful`` is the value simulated, when A[f] had to be clamped) and
    a failed ``self_check``. Without a curve there is nothing to be cautious about:
    cautions are then empty. ``single.smaller`` gives the advice when A[f] is at or below
    n_target. The estimate is reliable when both lists are empty.
    """
    blocking = blocking_reasons(
        n_target=n_target,
        n_runs=single.n_runs,
        n_useful_mean=single.n_useful_mean,
        t_draws=single.t_uniform_draws,
        real_nogueira=single.real_nogueira,
        simulator=simulator,
        smaller=single.smaller,
    )
    cautions: list[str] = []
    if blocking:
        return GuardRails(False, blocking, cautions)
    if simulator:
        fit = SimulatorFit() if fit is None else fit
        cautions += caution_reasons(
            n_runs=single.n_runs,
            t_draws=single.t_uniform_draws,
            p_fit=fit.p_fit,
            fixed_point=fit.fixed_point,
            power=fit.power,
            verified=verified,
            calibration_empty=fit.calibration_empty,
            n_useful=None if n_useful is None else (single.n_useful_mean, n_useful),
        )
    if self_check is not None and not self_check.passed:
        cautions.append(self_check.warning())
    return GuardRails(not blocking, blocking, cautions)


def verdict(
    single: SingleSelector,
    n_target: int,
    fit: SimulatorFit,
    check: SelfCheck | None,
    *,
    predicted: bool,
    verify: bool,
    simulator: bool,
    prediction: Prediction | None = None,
) -> Verdict:
    """The estimate's :class:`~ensstab_dask.estimates.records.parts.Verdict`: the reasons of
    :func:`guard_rails` as its warnings, and its :func:`notes`. ``predicted``: a curve was
    predicted; ``verify``: the fixed point was to be checked; ``simulator``: the curve is
    the paper's simulator's, fitted as ``fit``, at ``single.n_useful``.
    ``prediction`` (the model's curve, and in its ``attrs["measured_up_to"]`` the largest
    size measured on real ensembles where a model measures some, as
    :meth:`~ensstab_dask.models.CurveModel.measured_up_to` reads it) adds the notes of the
    curve's shape (:func:`curve_shape_notes`) and of its reach (:func:`reach_notes`)."""
    rails = guard_rails(
        single,
        n_target,
        fit,
        verified=verify or not predicted,
        n_useful=single.n_useful,
        simulator=simulator,
        self_check=check,
    )
    blocking, cautions = rails.blocking, list(rails.cautions)
    said = notes(
        n_target=n_target,
        n_useful_mean=single.n_useful_mean,
        real_nogueira=single.real_nogueira,
        simulator=simulator,
        saturated=int((single.t_uniform_draws >= single.n_runs).sum()),
        smaller=single.smaller,
    )
    if prediction is not None and predicted:
        curve, measured = prediction.curve, prediction.attrs.get("measured_up_to")
        m, measured = [int(v) for v in curve["m_ensemble"].values], None if measured is None else int(measured)
        std = curve["stability_std"].values if "stability_std" in curve else None
        doubts, shape = curve_shape_notes(m, curve["stability"].values, measured, std)
        cautions += doubts
        said += shape + reach_notes(m, measured)
    return Verdict(warnings=blocking + cautions, notes=said)
