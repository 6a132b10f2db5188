"""The estimate in words: what ``Estimate.summary()`` and ``ensstab estimate`` print.

The answer comes first, in words a biologist can act on (:func:`plain_answer`): for each
ensemble size, how many of the top n_target features two reruns share, with its
interval; the size beyond which more members hardly help; whether to believe it, in one
sentence. Then the method's quantities for those who want them: the verdict, and one
number per line in plain words with the symbol in brackets, where it came from, and its
interval named for what it is an interval of.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ensstab_dask.budget.cost import duration
from ensstab_dask.estimates.records.parts import EstimateFields, FittedSimulator
from ensstab_dask.estimates.words.features import kept_features
from ensstab_dask.estimates.words.trust import headline, undecided_sizes
from ensstab_dask.indices import INDICES, shared_features
from ensstab_dask.models import SelfCheck, get_model
from ensstab_dask.outputs import json_number
from ensstab_dask.wording import Param, spell

__all__ = [
    "estimate_details",
    "estimate_summary",
    "plain_answer",
    "interval_text",
    "best_n_target",
    "single_selector_stability",
]


# What each interval in ``intervals`` is an interval of: the summary names it.
_INTERVAL_KINDS = {
    "t_uniform": "range of fresh draws of the uniform selector",
    "n_useful": "bootstrap interval over the real runs",
    "real_stability": "bootstrap interval over the real runs",
    "p": "bootstrap interval over the real runs",
    "h": "interval from the real ensemble copies (Student's t)",
}


def interval_text(est: EstimateFields, key: str, fmt: str) -> str:
    """``"95% bootstrap interval over the real runs [lo, hi]"`` for ``key`` (the kind of
    interval named, see ``_INTERVAL_KINDS``), or "" without a bootstrap."""
    pred = est.prediction
    if key not in pred.intervals:
        return ""
    lo, hi = pred.intervals[key]
    kind = _INTERVAL_KINDS.get(key, "interval")
    return f"{pred.confidence:.0%} {kind} [{lo:{fmt}}, {hi:{fmt}}]"


def number_line(words: str, value: str, where: str = "", *notes: str) -> str:
    """``words: value, where; note; note``: one number, where it came from, its interval."""
    return f"    {words}: {value}" + (f", {where}" if where else "") + "".join(f"; {n}" for n in notes if n)


def estimate_summary(est: EstimateFields) -> str:
    """The estimate for people: the verdict first, then plain words with the symbols in
    brackets, one number per line (with its interval, saying what interval it is)."""
    lines = [
        *plain_answer(est),
        "",
        f"The method's quantities: stability of ensembles of the base selector ({est.settings['index']} index; "
        f"{est.n_feature} features, each run keeps its top {est.n_target} (n_target))",
        *_verdict(est),
        *_measured(est),
        *_simulator(est),
        *_curve(est),
    ]
    if est.self_check is not None:
        lines += ["", "  " + _check_text(est.self_check)]
    if est.accuracy is not None:
        lines += ["", "  " + accuracy_line(est.accuracy)]
    lines += ["", "  " + cost_line(est.cost)]
    return "\n".join(lines)


def accuracy_line(accuracy) -> str:
    """The accuracy from the halves in one line: per measured size, the mean over copies and
    its SE (:mod:`~ensstab_dask.estimates.stages.held_out`)."""
    a = accuracy
    metric = "R^2" if a.attrs["metric"] == "r2" else "balanced accuracy"
    sizes = zip(a["m_measured"].values, a["accuracy"].values, a["accuracy_se"].values)
    per = "; ".join(f"m = {int(m)}: {v:.3f} (SE {se:.3f})" for m, v, se in sizes)
    return (
        f"Accuracy of the kept features on the half of the samples each real ensemble copy did not see ({metric} "
        f"of {a.attrs['predictor']}, mean over {int(a.attrs['copies'])} copies): {per}"
    )


def cost_line(cost) -> str:
    """What the estimate spent, in one line: its real runs as they were paid for (made here,
    or reused from the cache at the seconds they took when made), never priced from the
    seconds of reading a cache."""
    runs, per_run = cost.runs, cost.seconds_per_run
    rate = f"{per_run:.2f} s each" if np.isfinite(per_run) else "how long they took not recorded"
    if runs.reused and not runs.made:
        how = f", all reused from the cache ({rate} when made)"
    elif runs.reused:
        how = f", {runs.made} made here and {runs.reused} reused from the cache ({rate})"
    else:
        how = f" ({rate})" if runs.made else ""
    here = " here" if runs.reused else ""
    return (
        f"cost: {cost.real_runs} real runs of the selector{how}, {cost.simulated_runs} simulated runs, "
        f"{sum(cost.seconds.values()):.1f} s{here}"
    )


#: More members "hardly help" once the largest ensemble predicted shares fewer than this
#: many more features (a 20th of n_target, at least one feature).
_HARDLY = 0.05


def plain_answer(est: EstimateFields) -> list[str]:
    """The answer in plain words: shared features per ensemble size, where more members
    stop helping, and whether to believe it (the first lines of :func:`estimate_summary`)."""
    k = est.n_target
    if not est.has_curve:
        lines = ["Answer: none. " + _sentence(headline(est.warnings[0]) + _more(est.warnings))]
        return lines + kept_features(est) + [f"  Note: {_sentence(n)}" for n in est.notes]
    index = est.settings["index"]
    m = [int(v) for v in est.curve["m_ensemble"].values]
    shared = shared_features(est.curve["stability"].values, index, est.n_feature, k)
    intervals = est.curve_interval()
    lines = [
        f"Answer: two runs of the ensemble, each on its own random half of the samples, would have about this "
        f"many of their top {k} features (of {est.n_feature}) in common:"
    ]
    width = len(str(max(m)))
    for size, r in zip(m, shared):
        who = "1 selector (no ensemble)" if size == 1 else f"an ensemble of {size:>{width}}"
        text = f"    {who}: {r:4.1f} of {k} ({r / k:.0%})"
        if size in intervals:
            lo, hi = shared_features(np.array(intervals[size]), index, est.n_feature, k)
            text += f"; {est.prediction.confidence:.0%} interval {lo:.1f} to {hi:.1f}"
        lines.append(text)
    if len(m) > 1:
        bounds = {size: tuple(shared_features(np.array(b), index, est.n_feature, k)) for size, b in intervals.items()}
        lines.append("  " + _plateau(est, m, shared, bounds))
    lines += _which_k(est)
    lines += ["  " + line for line in _believe(est)]
    if est.spending is not None:
        lines.append("  " + spell(est.spending.sentence(), est.verdict.spelling))
    # The notes qualify the curve: beside it, before the features.
    lines += [f"  Note: {_sentence(n)}" for n in est.notes] + kept_features(est)
    return lines + ["  " + _in_the_index(index, est.n_feature, k, shared[0], est.curve["stability"].values[0])]


def _which_k(est: EstimateFields) -> list[str]:
    """With several n_target: which keeps the most stable top features at the largest size."""
    if est.surface is None:
        return []
    best = best_n_target(est.surface)
    if best is None:
        return ["  Which n_target: none of those asked has a curve."]
    index = est.settings["index"]
    parts = [
        f"top {k}: {v:.3f} ({r:.1f} of {k})" if np.isfinite(v) else f"top {k}: no curve"
        for k, v, r in zip(best["n_target"], best["stability"], best["shared"])
    ]
    doubt = "" if best["best_reliable"] else f" (the estimate at n_target = {best['best']} is not reliable)"
    return [
        f"  Which n_target: at {best['m_ensemble']} members the top {best['best']} is the most stable{doubt}; "
        f"{index} and features shared, " + ", ".join(parts) + "."
    ]


def best_n_target(surface: xr.Dataset) -> dict | None:
    """At the largest size asked: each n_target's stability and the share of its top features
    two reruns have in common; the n_target with the highest stability (None when no
    n_target has a curve). ``surface``: :func:`~ensstab_dask.estimates.stages.surface.surface_dataset`'s."""
    m = int(surface["m_ensemble"].values[-1])
    ks = [int(k) for k in surface["n_target"].values]
    values = surface["stability"].values[:, -1]
    if not np.isfinite(values).any():
        return None
    n_feature, index = int(surface.attrs["n_feature"]), str(surface.attrs["index"])
    shared = [
        float(shared_features(np.array([v]), index, n_feature, k)[0]) if np.isfinite(v) else float("nan")
        for v, k in zip(values, ks)
    ]
    best = int(np.nanargmax(values))
    return {
        "m_ensemble": m,
        "n_target": ks,
        "stability": [float(v) for v in values],
        "shared": shared,
        "best": ks[best],
        "best_reliable": bool(surface["reliable"].values[best]),
    }


def _in_the_index(index: str, n: int, k: int, shared: float, value: float) -> str:
    """The answer's shared features in the index the method's quantities below are given in."""
    formula = INDICES[index].of_k.format(two_k=2 * k, k=k, n=n, k_squared=k * k, n_minus_k=n - k)
    in_common = f"k of {k} features in common is {formula}"
    return f"Below, the method's terms: {in_common}, so {shared:.1f} of {k} is {value:.3f}."


def _plateau(est: EstimateFields, m: list[int], shared: np.ndarray, bounds: dict[int, tuple[float, float]]) -> str:
    """The size beyond which more members add less than a 20th of n_target shared features;
    on a curve that falls somewhere (beyond its interval), where it is highest instead; on a
    curve still gaining at the largest size, what the self-check measured beyond it."""
    k = est.n_target
    gain = max(1.0, _HARDLY * k)
    falls = [
        (a, b)
        for a in range(len(m))
        for b in range(a + 1, len(m))
        # A fall is one the intervals do not overlap on (without them, one of the gain or more).
        if (bounds[m[a]][0] > bounds[m[b]][1] if m[a] in bounds and m[b] in bounds else shared[a] >= shared[b] + gain)
    ]
    if falls:
        top = int(np.argmax(shared))
        member = "member" if m[top] == 1 else "members"
        return (
            f"More members do not always help here: the curve is highest at {m[top]} {member} "
            f"({shared[top]:.1f} of {k}) and falls beyond its interval between some sizes (see the notes)."
        )
    # Where the two predictions disagree the curve's height is unknown: no plateau is read there.
    undecided = undecided_sizes(est.curve)
    known = [i for i, size in enumerate(m) if not undecided or size < undecided[0]]
    if undecided and len(known) < 2:
        return f"From m = {undecided[0]} on the data cannot tell how far the curve climbs (see below)."
    m, shared = [m[i] for i in known], np.asarray(shared)[known]
    beyond = f"; from m = {undecided[0]} on the data cannot tell (see below)" if undecided else ""
    top = np.nanmax(shared)  # a size without a value is passed over
    enough = next((size for size, r in zip(m, shared) if top - r < gain), m[-1])
    what = f"{gain:g} shared feature" + ("" if gain == 1 else "s")
    if enough == m[-1]:
        more = beyond or _measured_beyond(est, m[-1])
        return (
            f"It still gains at {m[-1]} members (at least {what} from the size before): larger ensembles may "
            f"share more{more}."
        )
    return f"Beyond about {enough} members, more add less than {what} (up to the {m[-1]} predicted{beyond})."


def _measured_beyond(est: EstimateFields, largest: int) -> str:
    """What the self-check measured on real ensembles larger than the sizes asked, and how
    to have it with its interval; else that larger sizes were not predicted."""
    chk = est.self_check
    beyond = [] if chk is None else [(m, v) for m, v in zip(chk.sizes, chk.measured) if m > largest and np.isfinite(v)]
    if not beyond:
        return f", but sizes above {largest} were not predicted"
    index, k = est.settings["index"], est.n_target
    said = ", ".join(
        f"{shared_features(np.array([v]), index, est.n_feature, k)[0]:.1f} of {k} at {m}" for m, v in beyond
    )
    sizes = " and ".join(str(m) for m, _ in beyond)
    return (
        f": real ensembles measured for the self-check share {said}; adding {sizes} to the sizes asked gives "
        f"{'it' if len(beyond) == 1 else 'them'} with an interval, from the same runs"
    )


def _believe(est: EstimateFields) -> list[str]:
    """Whether to believe the curve, in at most two short lines of plain words: the verdict
    (up to the size from which the model's two predictions disagree, where there is one)
    and, when the answer reaches beyond the sizes measured, how far (the details are in the
    self-check's line of the method's quantities)."""
    if not est.reliable:
        return [f"Believe it? No, not as a validated prediction: {headline(est.warnings[0])}{_more(est.warnings)}."]
    chk = est.self_check
    if chk is None:
        said = "none of the method's checks objected"
    elif chk.made_from:  # the checked prediction saw part of the ensembles it is checked on: say which
        said = (
            f"extrapolated from {chk.made_from}, it predicted all {chk.members} in {chk.copies} real ensembles "
            "within their noise"
        )
    else:
        said = (
            f"{chk.copies} real ensembles of {chk.members} members, not used to make the prediction, matched it "
            "within their noise"
        )
    undecided = undecided_sizes(est.curve)
    sizes = [int(v) for v in est.curve["m_ensemble"].values]
    if undecided:
        first = undecided[0]
        decided = [m for m in sizes if m < first]
        upto = f"Up to m = {decided[-1]}, yes: {said}" if decided else "Not at any size asked"
        lines = [f"Believe it? {upto}. From m = {first} the data cannot tell: {_cannot_tell(est, first)}."]
    else:
        lines = [f"Believe it? Yes: {said}."]
    measured = get_model(est.settings.get("model", "onda")).measured_up_to(est.curve.attrs)
    top = sizes[-1]
    if measured is not None and top > measured:
        lines.append(
            f"Above {measured} members it is extrapolated from the sizes measured (up to {top}, "
            f"{_times(top / measured)} the largest measured)."
        )
    return lines


def _cannot_tell(est: EstimateFields, first: int) -> str:
    """Why the size ``first`` is beyond what the runs can tell, and what measuring it costs:
    every copy grown to ``first`` members, the runs made reused."""
    at = est.curve.sel(m_ensemble=first)
    index, k = est.settings["index"], est.n_target
    moments, law = (
        shared_features(np.array([float(at[key])]), index, est.n_feature, k)[0]
        for key in ("stability", "stability_law")
    )
    G, B = int(est.curve.attrs.get("copies", 0)), int(est.curve.attrs["measured_up_to"])
    more = G * (first - B)
    pace = est.cost.seconds_per_run
    when = f", about {duration(more * pace)} at this run's pace" if np.isfinite(pace) and pace > 0 else ""
    grow = est.verdict.spelling(Param("members", first))
    return (
        f"the features' rank moments predict {moments:.1f} of {k} shared and the law {law:.1f}, further apart than "
        f"their noise, so the interval covers both; growing each of the {G} copies to {first} members (pass "
        f"{grow}) would measure it: {more:,} more real runs{when}, the {G * B:,} made reused where a cache keeps them"
    )


def _times(ratio: float) -> str:
    """``2.5x``, ``5,000x``: a factor as the reach says it."""
    return f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.2g}x"


def _sentence(text: str) -> str:
    """A reason as a sentence: capitalised, with a full stop."""
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _more(reasons: list[str]) -> str:
    return "" if len(reasons) < 2 else f" ({len(reasons) - 1} more reason{'s' * (len(reasons) > 2)} below)"


def _verdict(est: EstimateFields) -> list[str]:
    """Whether to believe what follows: before any number."""
    lines: list[str] = []
    if est.reliable:
        checked = "" if est.self_check is None else " and the self-check passed"
        lines.append(f"  reliable: yes (no guard rail tripped{checked})")
    else:
        lines.append(
            "  reliable: NO"
            + ("" if est.has_curve else ": the method has nothing to say here, and no curve is predicted")
        )
        lines += [f"  warning: {w}" for w in est.warnings]
    return lines


def _measured(est: EstimateFields) -> list[str]:
    """What the real runs measured, and which runs each statistic came from."""
    one, s, index = est.single, est.settings, est.settings["index"]
    lines: list[str] = []
    useful_on = _runs_of(s)[0]
    n_draws = len(one.t_uniform_draws)
    lines += ["", "  Measured on the real runs:"]
    spread = ""
    if len(one.t_uniform_draws) > 1:
        t_lo, t_hi = int(one.t_uniform_draws.min()), int(one.t_uniform_draws.max())
        spread = f"standard deviation {one.t_uniform_std:.2f}, draws from {t_lo} to {t_hi}"
    lines.append(
        number_line(
            f"chance threshold (t_uniform, most picks of any feature by {s['n_runs']} random selectors)",
            f"{one.t_uniform:.2f}",
            f"mean of {n_draws} draws",
            spread,
        )
    )
    # The count as measured (never the value the simulator was clamped to: see _simulator).
    lines.append(
        number_line(
            "useful features counted (A[f], picked more often than t_uniform)",
            f"{one.n_useful_mean:.1f}",
            f"from {s['n_runs']} real runs on {useful_on}, mean over {n_draws} threshold draws "
            f"(standard deviation {one.n_useful_std:.1f})",
            interval_text(est, "n_useful", ".1f"),
        )
    )
    one_selector = single_selector_stability(est)["stability_one_selector"]
    interval = one_selector.get("interval")
    # A weak selector where the number is the real copies' members, the real selector's own elsewhere.
    kind = "weak" if _one_from_curve(est) else "real"
    lines.append(
        number_line(
            f"stability of one {kind} selector ({index} index)",
            f"{one_selector['value']:.4f}",
            one_selector["from"],
            "" if interval is None else f"{interval} [{one_selector['lower']:.4f}, {one_selector['upper']:.4f}]",
        )
    )
    lines.append("      (its other measures are in the details)")
    return lines


def _runs_of(s: dict) -> tuple[str, str]:
    """Which real runs A[f] and the paper's stability came from (``calibration_layout``),
    in words."""
    halves = "random halves" if s.get("resample", "half") == "half" else f"resamples ({s['resample']})"
    members = f"the weak selectors' layout ({s.get('member_resample', 'bagging')})"
    return {
        "paper": (halves, halves),
        "ensemble": (halves, members),
        "ensemble-all": (members, members),
        "copies": (
            "the real ensemble copies' weak selectors (those of one copy share its half)",
            "the first weak selector of each real ensemble copy",
        ),
    }.get(str(s.get("calibration_layout", "copies")), (halves, halves))  # recorded when the paper's runs were made


def _interval(lo_hi) -> dict:
    """``lower`` and ``upper`` as JSON holds them; none without a finite interval (absent, not null)."""
    if lo_hi is None or not np.isfinite(lo_hi).all():
        return {}
    return {"lower": json_number(lo_hi[0]), "upper": json_number(lo_hi[1])}


def _one_from_curve(est: EstimateFields) -> bool:
    """Whether one selector's stability is the curve's m_ensemble = 1 (measured on every pair
    of weak selectors from different real copies) rather than the real runs' own."""
    sizes = [int(v) for v in est.curve["m_ensemble"].values]
    return est.has_curve and 1 in sizes and get_model(est.settings.get("model", "onda")).measures_copies


def single_selector_stability(est: EstimateFields) -> dict[str, dict]:
    """One selector's stability as every output gives it (the text, the JSON, the report).

    ``stability_one_selector`` is the one number: the curve's ``m_ensemble = 1`` where the
    model measures real ensemble copies and the curve has that size (every pair of weak
    selectors from different copies, the most precise measure), else the real runs' own
    stability; with its interval (``lower``, ``upper``; absent without one) and where it
    comes from. ``paper_stability`` is the paper's measure, named for what it is: the index
    over the stability runs alone (what the paper's simulator's p is fitted to), with
    Nogueira's index of the same runs and its interval.
    """
    one, s = est.single, est.settings
    useful_on, stability_on = _runs_of(s)
    runs = int(s.get("stability_runs", s["m_stability"]))
    on = f"from {runs} real runs: {stability_on}" if stability_on != useful_on else f"from {runs} of those runs"
    real_interval = est.prediction.intervals.get("real_stability")
    nog = one.real_nogueira
    paper = {
        "value": json_number(one.real_stability),
        "runs": runs,
        "from": on,
        **_interval(real_interval),
        "nogueira": json_number(nog.stability),
        "nogueira_lower": json_number(nog.lower),
        "nogueira_upper": json_number(nog.upper),
    }
    model = get_model(s.get("model", "onda"))
    if _one_from_curve(est):
        lo_hi = est.curve_interval().get(1)
        value = float(est.curve["stability"].sel(m_ensemble=1))
        widened = "" if est.self_check is None or est.self_check.passed else ", widened by the self-check's error"
        kind = f"bootstrap interval over the {est.prediction.interval_of}{widened}"
        words = model.single_selector
    else:
        lo_hi, value, kind, words = real_interval, one.real_stability, _INTERVAL_KINDS["real_stability"], on
    one_selector = {
        "value": json_number(value),
        "index": s["index"],
        "from": words,
        **_interval(lo_hi),
    }
    if "lower" in one_selector:
        one_selector["interval"] = f"{est.prediction.confidence:.0%} {kind}"
    return {"stability_one_selector": one_selector, "paper_stability": paper}


def _simulator(est: EstimateFields) -> list[str]:
    """The paper's simulator fitted to the real runs (p, the fixed point, calibration, h)."""
    s, one, fit, pred = est.settings, est.single, est.fit, est.prediction
    lines: list[str] = []
    if fit is not None and (np.isfinite(fit.p) or fit.n_useful_v is not None):
        # A curve that does not come from this simulator: say so.
        unused = "" if pred.simulator else " (not what makes the curve here)"
        lines += ["", f"  The paper's simulator fitted to them{unused}:"]
        rounded = round(one.n_useful_mean)
        how = "A[f] rounded" if rounded == one.n_useful else f"A[f] clamped into [n_target, n_feature], not {rounded}"
        lines.append(number_line("useful features simulated (n_useful)", f"{one.n_useful}", how))
    if fit is not None and fit.p_fit is not None and np.isfinite(fit.p):
        at_end = "at the end of its search range" if fit.p_fit.at_boundary else ""
        lines.append(
            number_line(
                "selector strength (p, the chance a rank goes to a favoured useful feature)",
                f"{fit.p:.4f}",
                "",
                interval_text(est, "p", ".3f"),
                at_end,
            )
        )
    if fit is not None and fit.n_useful_v is not None:
        lines += _fixed_point(fit, s["repeats"])
    if fit is not None and fit.calibrated is not None:
        lines.append(
            number_line(
                "calibrated simulator (n_useful, p), where both real statistics are matched at once",
                f"({fit.calibrated[0]}, {fit.calibrated[1]:.3f})",
            )
        )
    if pred.h is not None:
        lines.append(
            number_line(
                "preferred features per ensemble copy (h, two-level model)",
                f"{pred.h}",
                "",
                interval_text(est, "h", ".0f"),
            )
        )
        lines.append(
            number_line(
                "stability of the weak selectors within one real copy, what h is fitted to",
                f"{pred.within_copy_stability:.4f}",
            )
        )
    return lines


def _fixed_point(fit: FittedSimulator, repeats: int) -> list[str]:
    """The fixed point u = A[f_(u,p)], and whether the check could have failed."""
    if not fit.fixed_point_holds:
        verdict = "does NOT hold: the simulator may not model this selector"
    elif fit.fixed_point_power is False:
        verdict = "holds, but so it would for other u: no evidence either way"
    else:
        verdict = "holds"
    return [
        number_line(
            "useful features the fitted simulator itself counts (A[f_(u,p)])",
            f"{fit.n_useful_v:.1f}",
            f"mean of {repeats} draws (standard deviation {fit.n_useful_v_std:.1f})",
        ),
        number_line("fixed point (n_useful = A[f_(u,p)])", verdict),
    ]


def _curve(est: EstimateFields) -> list[str]:
    """The predicted curve, each size with its interval, saying what it is an interval of."""
    s, pred = est.settings, est.prediction
    lines: list[str] = []
    if est.has_curve:
        made = "Simulated" if pred.simulator else "Estimated"
        heading = "Predicted stability" if est.reliable else f"{made} stability (NOT a validated prediction)"
        source = pred.source
        intervals = est.curve_interval()
        if intervals:
            of = pred.interval_of
            widened = ", widened for h's interval" if "h" in pred.intervals else ""
            if est.self_check is not None and not est.self_check.passed:
                widened += ", widened by the self-check's error"
            band = (
                f"each with its {pred.confidence:.0%} bootstrap interval over the {of} "
                f"({s['n_boot']} replicates{widened}):"
            )
        else:
            band = "no bootstrap (n_boot=0): each with the spread of one simulated measurement only:"
        lines += ["", f"  {heading} of an ensemble of m_ensemble weak selectors ({source}),", f"  {band}"]
        for m, value, sd in zip(
            est.curve["m_ensemble"].values, est.curve["stability"].values, est.curve["stability_std"].values
        ):
            if intervals:
                lo, hi = intervals[int(m)]
                note = f"{pred.confidence:.0%} interval [{lo:.4f}, {hi:.4f}]"
            else:
                note = f"standard deviation of one simulated measurement {sd:.4f}"
            lines.append(f"    m_ensemble = {int(m)}: {value:.4f}; {note}")
    return lines


def _check_text(check: SelfCheck) -> str:
    """The self-check in one sentence for the summary."""
    sizes = ", ".join(
        f"m = {m}: predicted {p:.3f}, measured {r:.3f}, z = {z:+.1f}"
        for m, p, r, z in zip(check.sizes, check.predicted, check.measured, check.z)
    )
    verdict = "passed" if check.passed else "FAILED"
    return (
        f"Self-check {verdict} ({check.held_out}; measured on {check.copies} real ensemble copies of "
        f"{check.members}; |z| <= {check.limit:g} passes): {sizes}"
        + (f"; it cannot see {check.blind_to}" if check.blind_to and check.passed else "")
    )


def estimate_details(est: EstimateFields) -> str:
    """Every measure of one selector's stability the estimate has, one per line: the one
    the summary says first, then the others, each named for what it is."""
    measures = single_selector_stability(est)
    one, paper, index = measures["stability_one_selector"], measures["paper_stability"], est.settings["index"]
    lines = [f"Details: one selector's stability, every measure of it ({index} index unless named)"]
    interval = "" if "interval" not in one else f"{one['interval']} [{one['lower']:.4f}, {one['upper']:.4f}]"
    lines.append(number_line("the estimate's (what every output says)", _number(one["value"]), one["from"], interval))
    if one["from"] != paper["from"]:
        lines.append(
            number_line(
                "the paper's measure (the index over the stability runs alone, what the simulator's p is fitted to)",
                _number(paper["value"]),
                paper["from"],
                interval_text(est, "real_stability", ".4f"),
            )
        )
    else:
        m_list = [int(v) for v in est.curve["m_ensemble"].values]
        if est.has_curve and 1 in m_list:
            at_one = float(est.curve["stability"].values[m_list.index(1)])
            model = get_model(est.settings.get("model", "onda"))
            lines.append(number_line("the curve's m_ensemble = 1", f"{at_one:.4f}", model.single_selector))
    nog = est.single.real_nogueira
    lines.append(
        number_line(
            "the same runs by Nogueira's index",
            _number(paper["nogueira"]),
            "",
            f"Nogueira's {1 - nog.alpha:.0%} confidence interval [{nog.lower:.4f}, {nog.upper:.4f}]",
        )
    )
    return "\n".join(lines)


def _number(value: float | None) -> str:
    return "not computed" if value is None else f"{value:.4f}"
