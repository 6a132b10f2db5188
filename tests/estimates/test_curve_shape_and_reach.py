"""A curve's shape and reach said as they are: a measured point above the next extrapolated
one (a note within the noise, a caution beyond it, which makes the verdict "not
reliable"), a curve that falls, an answer far beyond the measured sizes (notes of the
verdict, so in the JSON and the summary), and the plateau's words on a falling curve and
where the two predictions disagree."""

from types import SimpleNamespace

import numpy as np
import xarray as xr
from synthetic import single_selector

from ensstab_dask.estimates.words.summary import _plateau
from ensstab_dask.estimates.words.trust import FAR_BEYOND, curve_shape_notes, reach_notes, verdict
from ensstab_dask.indices import NogueiraStability
from ensstab_dask.models import Prediction, get_model
from ensstab_dask.models.simulator_fit import SimulatorFit


def test_a_rising_curve_has_no_shape_note():
    assert curve_shape_notes([1, 5, 20, 50], [0.1, 0.3, 0.5, 0.55], 20) == ([], [])
    assert curve_shape_notes([1, 5], [0.1, 0.1], None) == ([], [])  # flat is not falling


def test_a_measured_point_above_the_extrapolated_next_one_within_the_noise_is_a_note():
    cautions, notes = curve_shape_notes([1, 5, 20, 30, 50], [0.1, 0.25, 0.301, 0.296, 0.31], 20, [0.01] * 5)
    assert cautions == []
    assert notes == [
        "the measured value at m = 20 (0.301) is above the extrapolated 0.296 at m = 30, within their noise"
    ]


def test_an_extrapolation_below_the_measured_beyond_the_noise_is_a_caution():
    # 0.128 at m = 20 against 0.136 measured at m = 10, each with an SE of 0.002: 2.8 combined SE below.
    cautions, notes = curve_shape_notes([1, 5, 10, 20, 50], [0.05, 0.1, 0.136, 0.128, 0.133], 10, [0.002] * 5)
    assert len(cautions) == 1 and notes == []
    assert cautions[0].startswith(
        "the extrapolation falls below what was measured: 0.128 at m = 20 against 0.136 measured at m = 10"
    )
    # Without an SE the smallest fall is beyond the noise.
    assert curve_shape_notes([1, 10, 20], [0.05, 0.136, 0.135], 10)[0]


def test_a_dip_is_said_as_a_fall_and_a_nan_is_passed_over():
    _, notes = curve_shape_notes([1, 5, 10, 20], [0.3, 0.2, np.nan, 0.25], None)
    assert len(notes) == 1 and notes[0].startswith("the curve falls from m = 1 (0.300) to m = 5 (0.200)")


def test_the_reach_note_comes_beyond_the_factor():
    assert reach_notes([1, 20 * FAR_BEYOND], 20) == []
    (note,) = reach_notes([1, 100000], 20)
    assert note.startswith("the answer at m = 100000 is 5,000x the largest size measured on real ensembles (m = 20)")
    assert reach_notes([1, 100000], None) == []  # a simulated curve measures no size


def _judged(stability, std):
    nog = NogueiraStability(stability=0.3, variance=1e-4, lower=0.28, upper=0.32, alpha=0.05, n_subsets=50)
    single = single_selector(50, 45.0, [4, 5], nog)
    curve = xr.Dataset(
        {"stability": ("m_ensemble", stability), "stability_std": ("m_ensemble", std)},
        coords={"m_ensemble": [1, 20, 100000]},
    )
    prediction = Prediction(curve=curve, attrs={"measured_up_to": 20})
    return verdict(
        single, 20, SimulatorFit(), None, predicted=True, verify=True, simulator=False, prediction=prediction
    )


def test_a_fall_below_the_measured_beyond_the_noise_makes_the_estimate_unreliable():
    judged = _judged([0.1, 0.301, 0.25], [0.01, 0.01, 0.01])
    (warning,) = judged.warnings
    assert warning.startswith("the extrapolation falls below what was measured")
    assert not any("above the extrapolated" in n for n in judged.notes)


def test_the_verdict_carries_the_notes_into_the_record():
    nog = NogueiraStability(stability=0.3, variance=1e-4, lower=0.28, upper=0.32, alpha=0.05, n_subsets=50)
    single = single_selector(50, 45.0, [4, 5], nog)
    curve = xr.Dataset(
        {"stability": ("m_ensemble", [0.1, 0.301, 0.296]), "stability_std": ("m_ensemble", [0.01] * 3)},
        coords={"m_ensemble": [1, 20, 100000]},
    )
    prediction = Prediction(curve=curve, attrs={"measured_up_to": 20})  # as the anchored model makes it
    assert get_model("anchored").measured_up_to(prediction.attrs) == 20
    judged = verdict(
        single,
        20,
        SimulatorFit(),
        None,
        predicted=True,
        verify=True,
        simulator=False,
        prediction=prediction,
    )
    assert not judged.warnings and len(judged.notes) == 2
    assert "above the extrapolated 0.296" in judged.notes[0] and "5,000x" in judged.notes[1]
    assert get_model("onda").measured_up_to({}) is None


def test_the_plateau_never_says_more_add_less_on_a_falling_curve():
    curve = xr.Dataset(coords={"m_ensemble": [1, 5, 10, 20]})
    top20 = SimpleNamespace(n_target=20, self_check=None, curve=curve)  # what the plateau reads of an estimate
    said = _plateau(top20, [1, 5, 10, 20], np.array([8.0, 6.0, 6.5, 7.0]), {})  # no interval: a fall of 1 or more
    assert "more add less" not in said and "highest at 1 member" in said
    rising = _plateau(top20, [1, 5, 10, 20], np.array([4.0, 8.0, 9.5, 9.9]), {})
    assert rising.startswith("Beyond about 10 members, more add less than 1 shared feature")


def test_the_plateau_is_read_only_where_the_two_predictions_agree():
    curve = xr.Dataset(
        {"undecided": ("m_ensemble", [False, False, False, True, True])}, coords={"m_ensemble": [1, 10, 20, 50, 100]}
    )
    est = SimpleNamespace(n_target=20, self_check=None, curve=curve)
    said = _plateau(est, [1, 10, 20, 50, 100], np.array([2.0, 5.0, 7.0, 9.0, 9.1]), {})
    assert said == (
        "It still gains at 20 members (at least 1 shared feature from the size before): larger ensembles may share "
        "more; from m = 50 on the data cannot tell (see below)."
    )
    settled = _plateau(est, [1, 10, 20, 50, 100], np.array([2.0, 7.0, 7.5, 9.0, 12.0]), {})
    assert settled.startswith("Beyond about 10 members, more add less than 1 shared feature (up to the 20 predicted;")
