"""The pictures of a report, one :class:`Picture` record each: its name, title, caption,
how it is drawn and when it applies. :data:`PICTURES` holds them by the kind of result
(an estimate or a sweep), in the order the report shows them; a new picture is one
record there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import xarray as xr

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.plotting.common import attr_of, is_estimate, is_sweep
from ensstab_dask.plotting.cost import plot_cost
from ensstab_dask.plotting.curve import plot_stability_curve
from ensstab_dask.plotting.features import plot_feature_frequencies, plot_stability_path, plot_stability_surface
from ensstab_dask.plotting.fit import plot_calibration, plot_fixed_point, plot_selection_counts, plot_surface

__all__ = ["Picture", "Observations", "PICTURES", "pictures_for", "kind_of"]


class Observations(NamedTuple):
    """What a sweep's report calibrates against (an estimate's carries its own): the real
    selector's stability and n_useful, and which of the sweep's n_runs to compare with."""

    real_stability: float | None = None
    n_useful: float | None = None
    n_runs: int | None = None


class Picture(NamedTuple):
    """One picture of a report.

    ``caption`` says what it shows and how to read it, for people who have not read the
    code; its ``{fields}`` are filled from the result (``plotting.report``'s caption
    words). ``draw(ds, ax, seen)`` draws it on a Matplotlib axes; ``applies(ds, seen)``
    says whether the result has what it shows (``seen``: the :class:`Observations`).
    """

    name: str
    title: str
    caption: str
    draw: Callable[[xr.Dataset, Any, Observations], None]
    applies: Callable[[xr.Dataset, Observations], bool]


def _calibration(ds: xr.Dataset, ax, seen: Observations) -> None:
    plot_calibration(ds, seen.real_stability, seen.n_useful, n_runs=seen.n_runs, ax=ax)


def _fixed_point(ds: xr.Dataset, ax, seen: Observations) -> None:
    plot_fixed_point(ds, n_runs=seen.n_runs, ax=ax)


def _has_curve(ds: xr.Dataset, seen: Observations) -> bool:
    # No curve when the method had nothing to say: nothing to draw, nor to time per m.
    return bool(int(ds.attrs.get("has_curve", 1)))


def _has_features(ds: xr.Dataset, seen: Observations) -> bool:
    return "feature_frequency" in ds  # whatever the verdict


def _calibrates(ds: xr.Dataset, seen: Observations) -> bool:
    """A sweep is calibrated against both observations, on its single-selector surface."""
    observed = seen.real_stability is not None and seen.n_useful is not None
    return observed and 1 in ds["m_ensemble"].values


#: Every picture, by the kind of result it is drawn for, in the report's order.
PICTURES: dict[str, dict[str, Picture]] = {
    "estimate": {
        p.name: p
        for p in (
            Picture(
                "calibration",
                "Calibration",
                "The heat map is the simulator's single-selector stability over its two parameters: n_useful, the "
                "number of features that carry signal, and p, how strongly the selector prefers them. The white line "
                "is where the simulated stability equals the real selector's; the // hatching is its tolerance band. "
                "The dashed orange line is where the simulator's n_useful_v equals the n_useful counted on the real "
                "selector; the \\\\ hatching is its band. Red dots are parameters consistent with both observations. "
                "The star is the chosen (n_useful, p), and the cross is the estimate's own. A line or band whose "
                "value the surface never reaches is not drawn, and the legend below the picture lists only what is "
                "drawn.",
                draw=_calibration,
                applies=lambda ds, seen: "calibration_stability" in ds,
            ),
            Picture(
                "fixed_point",
                "Fixed point",
                "The simulator is fitted with the n_useful counted on the real selector. Counting again on the "
                "simulator (n_useful_v = A[f_(u,p)]) should give the same number, so the point should lie on the "
                "dotted diagonal within its error bar. If it does not, the simulator does not describe this selector "
                "well, and the prediction should be trusted less.",
                draw=_fixed_point,
                applies=lambda ds, seen: attr_of(ds, "n_useful_v") is not None or "calibration_n_useful_v" in ds,
            ),
            Picture(
                "stability_curve",
                "Stability against ensemble size",
                "The predicted stability of an ensemble of m weak selectors, for each m, in the answer's units: how "
                "many of their top {n_target} features two runs of the ensemble share (left axis); the {index} index "
                "of the same is on the right axis. The band is its interval: how far the prediction moves with the "
                "{interval_of} it was fitted on (a bootstrap over them){and_simulation}. It includes the model's own "
                "error only as far as the self-check measured it (the band is widened when the check failed). When "
                "the naive real check was run, its values are drawn with error bars of ±2 standard errors; where they "
                "miss the band, the model does not describe the selector at that m.",
                draw=lambda ds, ax, seen: plot_stability_curve(ds, ax=ax),
                applies=_has_curve,
            ),
            Picture(
                "stability_surface",
                "Stability over n_target",
                "The predicted stability against the ensemble size, one line per n_target (the top k features kept), "
                "each from the same real runs: a real run ranks every feature, so every k costs no more runs. The "
                "bands are the intervals at each k; a dashed line is an n_target whose own estimate is not reliable. "
                "Stability indices are not equally demanding at every k (two random top-40 lists share more than two "
                "random top-10 lists), so read the plain answer's shared features too.",
                draw=lambda ds, ax, seen: plot_stability_surface(ds, ax=ax),
                applies=lambda ds, seen: "surface_stability" in ds,
            ),
            Picture(
                "feature_frequency",
                "Which features",
                "How often a real ensemble keeps each feature in its top n_target: each cell is the fraction of the "
                "real ensemble copies (reruns of the whole study, each on its own random half of the samples) whose "
                "ensemble of that size keeps the feature; the features shown are those most often kept at the largest "
                "size. A feature kept on nearly every rerun is one the ensemble reports reliably; the plain answer "
                "names those at 90 % or more, with the bound on how many of them chance alone would put there. The "
                "table (ensstab estimate's feature table, or Estimate.feature_table()) has every feature, with "
                "intervals.",
                draw=lambda ds, ax, seen: plot_feature_frequencies(ds, ax=ax),
                applies=_has_features,
            ),
            Picture(
                "stability_path",
                "Stability path",
                "The same frequencies as lines: for the features most often kept at the largest measured size, one "
                "line each, how often a real ensemble of each measured size keeps it (only the sizes the copies "
                "measured are drawn: 1, the sizes asked up to a copy's weak selectors, and that many). The dashed "
                "line is the cutoff a feature must reach to be called stable, the one the plain answer used.",
                draw=lambda ds, ax, seen: plot_stability_path(ds, ax=ax),
                applies=_has_features,
            ),
            Picture(
                "selection_counts",
                "Selection counts",
                "How many features were picked 0, 1, 2, ... times in n_runs runs of the real selector (black), and of "
                "a selector that picks features uniformly at random (gray). t_uniform, the most that chance alone "
                "gives, is the dotted line. The features picked more often than that are n_useful.",
                draw=lambda ds, ax, seen: plot_selection_counts(ds, ax=ax),
                applies=lambda ds, seen: True,
            ),
            Picture(
                "cost",
                "Cost",
                "Wall time. The estimate gives the whole curve for one measured cost (blue). Measuring one ensemble "
                "size m directly with {direct_copies} copies needs {direct_copies} x m real runs: the dashed black "
                "line is that count times the seconds per real run timed in {rate_from}, scaled, not timed m by "
                "m.{naive_dot} {ratio_words}",
                draw=lambda ds, ax, seen: plot_cost(ds, ax=ax),
                applies=_has_curve,
            ),
        )
    },
    # A sweep has no real runs: its pictures read differently (what a band is, what is observed).
    # {real_stability} and {n_useful}: how the caller names those parameters (write_report's ``parameter_names``).
    "sweep": {
        p.name: p
        for p in (
            Picture(
                "calibration",
                "Calibration",
                "The heat map is the simulator's single-selector stability over its two parameters: n_useful, the "
                "number of features that carry signal, and p, how strongly the selector prefers them; the ticks are "
                "the sweep's grid values. The white line is where the simulated stability equals the stability you "
                "gave ({real_stability}); the // hatching is its tolerance band. The dashed orange line is where the "
                "simulator's own count n_useful_v equals the n_useful you gave ({n_useful}); the \\\\ hatching is its "
                "band. Red dots are grid cells consistent with both, and the star the closest of them. A line or band "
                "whose value the surface never reaches is not drawn, and the legend lists only what is drawn.",
                draw=_calibration,
                applies=_calibrates,
            ),
            Picture(
                "surface",
                "Stability surface",
                "The simulated stability over (n_useful, p), at the sweep's smallest ensemble size (the single "
                "selector when it includes m_ensemble = 1); the ticks are the sweep's grid values. Give a real "
                "selector's stability and n_useful ({real_stability}, {n_useful}) to see where they match.",
                draw=lambda ds, ax, seen: plot_surface(ds, ax=ax),
                applies=lambda ds, seen: not _calibrates(ds, seen),
            ),
            Picture(
                "fixed_point",
                "Fixed point",
                "For a few p (one line each), the number of useful features the simulator itself counts (n_useful_v = "
                "A[f_(u,p)]) against the n_useful u it was run with, with error bars of ±1 standard deviation over "
                "the sweep's repeats. Where a line crosses the dotted diagonal, u = A[f_(u,p)]: a fixed point, where "
                "the simulator reproduces its own count. An estimate is trusted only at such a point.",
                draw=_fixed_point,
                applies=lambda ds, seen: True,
            ),
            Picture(
                "stability_curve",
                "Stability against ensemble size",
                "The simulated stability of an ensemble of m weak selectors against m, for a few p at one n_useful. "
                "Each band is ±1 standard deviation over the sweep's repeats: the simulation's own noise (a sweep "
                "involves no real runs).{fall_words}",
                draw=lambda ds, ax, seen: plot_stability_curve(ds, ax=ax),
                applies=lambda ds, seen: ds.sizes["m_ensemble"] > 1,
            ),
        )
    },
}


def kind_of(ds: xr.Dataset) -> str:
    """``"estimate"`` or ``"sweep"``: which pictures ``ds`` gets; anything else is refused."""
    if is_estimate(ds):
        return "estimate"
    if is_sweep(ds):
        return "sweep"
    raise InvalidParameterError(
        "not an ensstab result: expected an estimate's Dataset (Estimate.to_dataset()) or a sweep's"
    )


def pictures_for(ds: xr.Dataset, *, real_stability=None, n_useful=None) -> list[str]:
    """The pictures that apply to ``ds``, in the order the report shows them."""
    seen = Observations(real_stability, n_useful)
    return [name for name, picture in PICTURES[kind_of(ds)].items() if picture.applies(ds, seen)]
