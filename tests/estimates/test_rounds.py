"""Precision on demand: real runs spent in rounds until the interval at the largest size is
as narrow as asked, or the cap stops it; each round's estimate is the one its design gives."""

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from synthetic import real_like_copies

import ensstab_dask as es
from ensstab_dask.estimates.stages.pipeline import estimate_from_runs
from ensstab_dask.estimates.stages.rounds import next_design, spend_in_rounds
from ensstab_dask.estimates.words.summary import plain_answer
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.runs import Copies, real_run_plan, runs_from_copies
from ensstab_dask.real.selectors import default_selector
from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive
from ensstab_dask.settings import EstimateSettings

SIZES = (1, 5, 10, 20, 50, 200)
_copies = real_like_copies


def _on(big: np.ndarray, settings):
    def on(design):
        copies = np.ascontiguousarray(big[: design[0], : design[1]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return estimate_from_runs(runs_from_copies(copies, 20), settings, client="synchronous", copy_ranks=copies)

    return on


def test_the_larger_part_of_the_half_width_is_grown():
    common = dict(precision=0.03, max_real_runs=1000, largest=200)
    assert next_design((10, 20), 0.025, 0.01, **common) == (None, "reached")
    # The model band dominates (0.045 against a sampling part of sqrt(0.06^2 - 0.045^2) = 0.040):
    # members double (measured further out).
    assert next_design((10, 20), 0.06, 0.045, **common) == ((10, 40), "more members per copy")
    # Sampling dominates: the parts add in quadrature, so the sampling part is
    # sqrt(0.06^2 - 0.01^2) = 0.059 against sqrt(0.03^2 - 0.01^2) = 0.028 allowed:
    # (0.059 / 0.028)^2 x 10 = 44 copies -> capped at 4x.
    assert next_design((10, 20), 0.06, 0.01, **common) == ((40, 20), "more copies")
    # Modestly short: (0.0439 / 0.0283)^2 x 10 = 24.1 -> 25 copies (steps of 5).
    assert next_design((10, 20), 0.045, 0.01, **common) == ((25, 20), "more copies")
    # Members never beyond the largest size asked; the cap bounds the copies.
    assert next_design((10, 150), 0.06, 0.045, precision=0.03, max_real_runs=2000, largest=200)[0] == (10, 200)
    assert next_design((10, 20), 0.06, 0.01, precision=0.03, max_real_runs=300, largest=200) == (
        (15, 20),
        "more copies",
    )
    assert next_design((10, 20), 0.06, 0.01, precision=0.03, max_real_runs=200, largest=200) == (None, "cap")
    # Nothing beyond the measured sizes: only copies can help.
    assert next_design((10, 20), 0.06, 0.0, precision=0.03, max_real_runs=1000, largest=20)[0] == (40, 20)


@pytest.mark.parametrize("precision, reached", [(0.035, True), (0.005, False)])
def test_precision_is_reached_or_the_cap_is_named_on_synthetic_copies(precision, reached):
    settings = EstimateSettings(n_feature=500, n_target=20, m_ensemble=SIZES, n_boot=100, seed=3, model="anchored")
    big = _copies(40, 200, seed=3)
    on = _on(big, settings)
    est, spent = spend_in_rounds(
        on((10, 20)), (10, 20), lambda old, new: on(new), precision=precision, max_real_runs=800
    )
    last = spent.rounds[-1]
    assert spent.reached is reached
    assert last.real_runs <= 800 and est.real_runs == last.real_runs == last.copies * last.members
    lo, hi = est.curve_interval()[200]
    assert last.half_width == pytest.approx((hi - lo) / 2)
    if reached:
        assert last.half_width <= precision and last.next == "reached"
        assert "within the 0.035 asked" in spent.sentence()
    else:
        assert last.next == "cap" and "NOT reached" in spent.sentence() and spent.wanted_runs > 800
        assert f"the cap on real runs stops it; to go on, pass max_real_runs={spent.wanted_runs}" in spent.sentence()
    # Every round's estimate is the one its design gives on its own, bit for bit.
    alone = on((last.copies, last.members))
    np.testing.assert_array_equal(est.curve["stability"].values, alone.curve["stability"].values)
    assert est.curve_interval() == alone.curve_interval()


@pytest.mark.slow
def test_more_copies_narrow_the_sampling_part_as_one_over_sqrt_copies():
    """The rule's premise, on copies where nothing is extrapolated: the SE at m = 20 over 10
    copies is about twice the SE over 40 (to the sampling error of 6 draws each)."""
    settings = EstimateSettings(n_feature=500, n_target=20, m_ensemble=(1, 20), n_boot=0, seed=0, model="anchored")
    ratios = []
    for seed in range(6):
        on = _on(_copies(40, 20, seed=100 + seed), settings)
        ratios.append(float(on((10, 20)).curve["stability_std"][-1] / on((40, 20)).curve["stability_std"][-1]))
    assert 1.5 < np.mean(ratios) < 2.7, ratios


def test_a_round_runs_only_what_it_adds_and_gives_the_design_s_own_runs():
    """Copies grown by blocks (new members of old copies, new copies) are the runs a single
    design of that size makes, so the rounds' answer is that design's answer."""
    data = make_microarray(n_feature=120, n_informative=10, effect=2.5, seed=4)
    seed = derive(as_seed_sequence(7), Stream.ESTIMATE, Stage.COPIES)
    sel = default_selector(5)
    whole, old, members, copies = real_run_plan(
        data.X,
        data.y,
        [Copies(4, 6, seed), Copies(2, 3, seed), Copies(2, 3, seed, first_member=3), Copies(2, 6, seed, first_copy=2)],
        selector=sel,
        client="synchronous",
        progress=False,
    )
    grown = np.concatenate([np.concatenate([old, members], axis=1), copies], axis=0)
    np.testing.assert_array_equal(grown, whole)


@pytest.mark.slow
def test_estimate_with_precision_spends_rounds_on_real_runs_and_says_so():
    data = make_microarray(n_feature=150, n_informative=10, effect=2.0, seed=2)
    kw = dict(
        selector=default_selector(10),
        m_ensemble=(1, 5, 20, 40),
        n_boot=50,
        client="synchronous",
        progress=False,
        seed=5,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = es.estimate(data.X, data.y, 5, precision=0.001, max_real_runs=400, **kw)
    spent = est.spending
    assert spent is not None and len(spent.rounds) >= 2 and not spent.reached
    assert spent.rounds[-1].next == "cap" and est.real_runs == spent.real_runs <= 400
    assert est.to_dict()["spending"]["rounds"][0]["real_runs"] == 200
    assert any(f"pass max_real_runs={spent.wanted_runs}" in line for line in plain_answer(est))
    # The design it ended on, estimated directly, is the same estimate.
    last = spent.rounds[-1]
    seed = derive(as_seed_sequence(5), Stream.ESTIMATE, Stage.COPIES)
    (ranks,) = real_run_plan(
        data.X,
        data.y,
        [Copies(last.copies, last.members, seed)],
        selector=default_selector(10),
        client="synchronous",
        progress=False,
    )
    settings = EstimateSettings(
        n_feature=150,
        n_target=5,
        m_ensemble=(1, 5, 20, 40),
        n_boot=50,
        seed=5,
        selector=default_selector(10),
        precision=0.001,
        max_real_runs=400,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = estimate_from_runs(runs_from_copies(ranks, 5), settings, client="synchronous", copy_ranks=ranks)
    np.testing.assert_array_equal(est.curve["stability"].values, alone.curve["stability"].values)


def test_precision_settings_are_checked_before_any_work():
    base = dict(n_feature=100, n_target=5)
    with pytest.raises(InvalidParameterError, match="precision: model='onda' does not measure real ensemble copies"):
        EstimateSettings(**base, model="onda", precision=0.03)
    with pytest.raises(InvalidParameterError, match="max_real_runs caps the rounds of real runs"):
        EstimateSettings(**base, max_real_runs=500)
    with pytest.raises(InvalidParameterError, match="max_real_runs must be at least 200"):
        EstimateSettings(**base, precision=0.03, max_real_runs=100)
    with pytest.raises(InvalidParameterError, match=r"precision must be in \(0.0, 1.0\]; got 0.0"):
        EstimateSettings(**base, precision=0.0)
    assert EstimateSettings(**base, precision=0.03).max_real_runs == 1000
    assert EstimateSettings(**base).to_dict()["precision"] is None


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "ensstab_dask.cli", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--precision", "0.03", "--model", "onda"], "--precision: --model onda does not measure real ensemble copies"),
        (["--max-real-runs", "500"], "none was asked for (got 500): pass --precision HALF_WIDTH too"),
        (["--precision", "0.03", "--max-real-runs", "100"], "--max-real-runs must be at least 200"),
        (["--precision", "-1"], "--precision must be in (0.0, 1.0]"),
    ],
)
def test_precision_options_are_one_line_errors(args, needle):
    res = _cli("estimate", "--quiet", *args)
    assert res.returncode == 2 and needle in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr


@pytest.mark.slow
def test_precision_on_the_embedded_default_names_what_it_spent(tmp_path):
    """The README's main command with a precision it cannot reach under its cap (only the
    forest's size shrunk): the answer and the JSON say what was spent and why it stopped."""
    out = tmp_path / "e.json"
    res = _cli(
        "estimate",
        "--precision",
        "0.002",
        "--max-real-runs",
        "400",
        "--n-estimators",
        "30",
        "--quiet",
        "--json",
        str(out),
    )
    assert res.returncode == 0, res.stderr
    spent = json.loads(out.read_text())["spending"]
    assert not spent["reached"] and spent["rounds"][-1]["next"] == "cap"
    assert spent["rounds"][0]["real_runs"] == 200 and spent["rounds"][-1]["real_runs"] <= 400
    assert (
        "Precision NOT reached" in res.stdout and f"to go on, pass --max-real-runs {spent['wanted_runs']}" in res.stdout
    )
