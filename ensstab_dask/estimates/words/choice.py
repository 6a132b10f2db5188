"""The answer to "which selector, and how large an ensemble": two sentences from the
compared estimates' curves and their accuracy from the halves.

Among every (selector, measured size) with an accuracy, those within one standard error
of the best accuracy qualify (the SE of their difference: the two SEs over copies
combined); of those, the one whose ensembles share the most features (the predicted
curve, as shared features of ``n_target``) is chosen, the smaller size on a tie. The
second sentence says, for each other selector, the smallest size at which its curve
keeps as many (beyond the measured sizes it is the model's extrapolation), or the most it
keeps up to the largest size asked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ensstab_dask.estimates.records.estimate import Estimate
from ensstab_dask.indices.registry import shared_features

__all__ = ["Choice", "choose", "choice_sentences", "shared_curve"]


def shared_curve(est: Estimate) -> dict[int, tuple[float, float, float]]:
    """The predicted curve as shared features of ``n_target``: ``{m: (shared, lower, upper)}``
    (the bounds NaN without an interval)."""
    index, n, k = est.settings["index"], est.n_feature, est.n_target
    interval = est.curve_interval()
    out = {}
    for m, v in est.predicted().items():
        lo, hi = interval.get(m, (np.nan, np.nan))
        out[m] = tuple(float(shared_features(x, index, n, k)) if np.isfinite(x) else np.nan for x in (v, lo, hi))
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class Choice:
    """The chosen selector and size, and what it keeps at what accuracy."""

    selector: str
    m: int
    shared: float
    lower: float
    upper: float
    accuracy: float
    accuracy_se: float
    metric: str


def choose(estimates: dict[str, Estimate]) -> Choice | None:
    """The (selector, measured size) keeping the most features among those within one SE
    of the best accuracy (module docstring); None where no estimate has an accuracy and a
    curve."""
    points = []
    for name, est in estimates.items():
        if est.accuracy is None or not est.has_curve:
            continue
        curve = shared_curve(est)
        a = est.accuracy
        for m, acc, se in zip(a["m_measured"].values, a["accuracy"].values, a["accuracy_se"].values):
            if int(m) in curve and np.isfinite(curve[int(m)][0]):
                points.append((name, int(m), float(acc), float(se), *curve[int(m)], a.attrs["metric"]))
    if not points:
        return None
    best = max(points, key=lambda p: p[2])
    # Within one SE of their difference (sqrt(se_best^2 + se^2)): the best's own SE alone is 0
    # where every copy scored perfectly, and would then admit only ties to the last digit.
    eligible = [p for p in points if best[2] - p[2] <= np.hypot(best[3], p[3])]
    name, m, acc, se, shared, lo, hi, metric = max(eligible, key=lambda p: (p[4], -p[1]))
    return Choice(name, m, shared, lo, hi, acc, se, metric)


def choice_sentences(estimates: dict[str, Estimate]) -> list[str]:
    """The two sentences of the module docstring; one saying why where none can be chosen."""
    choice = choose(estimates)
    if choice is None:
        return [
            "No choice: no selector has both a predicted curve and an accuracy from the halves "
            "(give a predictor, and see each selector's warnings)."
        ]
    first = next(iter(estimates.values()))
    metric = "balanced accuracy" if choice.metric == "balanced_accuracy" else "R^2"
    band = f" ({choice.lower:.1f} to {choice.upper:.1f})" if np.isfinite(choice.lower) else ""
    sentences = [
        f"{choice.selector} at m = {choice.m} keeps {choice.shared:.1f} of {first.n_target}{band} at "
        f"{choice.accuracy:.2f} {metric} (SE {choice.accuracy_se:.2f}): the most shared features among the "
        "selectors and sizes within one SE of the best accuracy."
    ]
    others = []
    for name, est in estimates.items():
        if name == choice.selector or not est.has_curve:
            continue
        curve = shared_curve(est)
        reach = [m for m, (v, _, _) in sorted(curve.items()) if np.isfinite(v) and v >= choice.shared]
        if reach:
            others.append(f"{name} needs m = {reach[0]} to keep as many")
        else:
            m_top = max(curve)
            others.append(f"{name} keeps at most {np.nanmax([v for v, _, _ in curve.values()]):.1f} (to m = {m_top})")
    if others:
        sentences.append("; ".join(others) + ".")
    return sentences
