"""One answer per question: one number for one selector's stability in the summary, a count
of useful features that does not change with the sizes asked, and an answer that says how
far beyond the measured sizes it reaches."""

import warnings

import pytest

import ensstab_dask as es
from ensstab_dask.checks import DEFAULT_M_ENSEMBLE, DEFAULT_N_RUNS
from ensstab_dask.real.selectors import default_selector

DATA = es.make_microarray(n_feature=120, n_informative=8, effect=3.0, seed=1)
FAST = dict(selector=default_selector(5), n_boot=0, client="synchronous", progress=False, seed=2)


def _estimate(**options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        return es.estimate(DATA.X, DATA.y, 4, **FAST, **options)


def test_the_default_n_runs_is_the_largest_default_size():
    assert DEFAULT_N_RUNS == max(DEFAULT_M_ENSEMBLE)  # so a default estimate counts as before


@pytest.mark.parametrize("model", ["anchored", "onda"])
def test_the_useful_feature_count_does_not_change_with_the_sizes_asked(model):
    extra = dict(m_stability=6, repeats=2) if model == "onda" else {}
    few, more = (_estimate(m_ensemble=m, model=model, **extra) for m in ((1, 5, 10), (1, 5, 10, 100)))
    assert few.settings["n_runs"] == more.settings["n_runs"] == DEFAULT_N_RUNS
    assert few.single.n_useful == more.single.n_useful
    assert few.single.n_useful_mean == more.single.n_useful_mean


def test_the_summary_says_one_stability_and_how_far_it_reaches():
    est = _estimate(m_ensemble=(1, 20, 100000))
    text = est.summary()
    assert len([line for line in text.splitlines() if "stability of one" in line]) == 1
    assert "Nogueira" not in text
    lines = text.splitlines()
    believe = next(i for i, line in enumerate(lines) if "Believe it?" in line)
    if est.reliable:  # the reach is the verdict's second short line
        assert lines[believe + 1] == (
            "  Above 20 members it is extrapolated from the sizes measured (up to 100000, 5,000x the largest measured)."
        )
    # The verdict's notes carry the reach too, for the JSON and the report.
    assert any("5,000x the largest size measured" in note for note in est.to_dict()["notes"])
