"""The stability over n_target: the same real runs, each row bit for bit the estimate at that
n_target alone; no extra real run; refused for models that would refit at every n_target."""

import warnings

import numpy as np
import pytest

import ensstab_dask as es
from ensstab_dask.cli import main as cli_main
from ensstab_dask.estimates.stages.surface import n_target_list
from ensstab_dask.estimates.words.summary import best_n_target
from ensstab_dask.real.selectors import default_selector

DATA = es.make_microarray(n_feature=300, n_informative=12, effect=2.0, seed=1)
KW = dict(m_ensemble=(1, 3, 5, 30), n_boot=20, client="synchronous", progress=False, seed=3)


def _counting_forest(calls: list):
    """A random forest of 10 trees as a callable, counting the real runs it makes."""

    def forest(X, y, rng):
        calls.append(1)
        return default_selector(10).set_params(random_state=int(rng.integers(2**31))).fit(X, y).feature_importances_

    return forest


def _estimate(n_target, calls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)  # this small forest's self-check may fail
        return es.estimate(DATA.X, DATA.y, n_target, selector=_counting_forest(calls), **KW)


@pytest.mark.slow
def test_each_row_is_the_single_n_target_estimate_bit_for_bit_and_costs_no_real_run():
    calls: list = []
    est = _estimate([5, 3, 8], calls)
    assert len(calls) == est.real_runs == 200  # one estimate's real runs, not three
    surface = est.surface
    assert surface["n_target"].values.tolist() == [3, 5, 8] and surface.attrs["own_n_target"] == 5
    assert est.n_target == 5 and est.to_dict()["real_runs"] == 200
    for k in (3, 5, 8):
        alone_calls: list = []
        alone = _estimate(k, alone_calls)
        assert len(alone_calls) == alone.real_runs == est.real_runs  # the JSON's real-run count is the same
        row = surface.sel(n_target=k)
        for name in ("stability", "stability_lower", "stability_upper"):
            assert np.array_equal(row[name].values, alone.curve[name].values), (k, name)  # to the bit
        assert bool(row["reliable"]) == alone.reliable
        if k == 5:  # the estimate's own n_target is untouched by asking for more
            assert np.array_equal(est.curve["stability"].values, alone.curve["stability"].values)
            np.testing.assert_array_equal(est.features["frequency"].values, alone.features["frequency"].values)
    d = est.to_dict()
    assert set(d["surface"]) == set(d["surface_interval"]) == {"3", "5", "8"}
    assert set(d["surface"]["3"]) == {"1", "3", "5", "30"}
    assert d["surface"]["8"]["30"] == float(surface["stability"].sel(n_target=8, m_ensemble=30))
    lo, hi = d["surface_interval"]["3"]["30"]
    assert lo <= d["surface"]["3"]["30"] <= hi
    best = best_n_target(surface)
    assert best["best"] == [3, 5, 8][int(np.argmax(surface["stability"].values[:, -1]))]
    line = next(x for x in est.summary().splitlines() if x.startswith("  Which n_target:"))
    assert f"at 30 members the top {best['best']} is the most stable" in line
    assert "top 3: " in line and "top 8: " in line
    ds = est.to_dataset()
    assert ds["surface_stability"].dims == ("n_target", "m_ensemble")


def test_a_model_without_a_cheap_surface_is_refused_before_any_run():
    calls: list = []
    for model in ("onda", "two-level", "random-effects"):
        with pytest.raises(ValueError, match=r"n_target: several values .* need a model that measures its curve"):
            es.estimate(DATA.X, DATA.y, [5, 10], selector=_counting_forest(calls), model=model, **KW)
    assert calls == []


@pytest.mark.parametrize(
    "value, match",
    [
        ([5, 5], r"must not repeat a value"),
        ([], r"at least one value"),
        ("5,10", r"n_target must be an int, or a list of ints"),
        ([5, 300], r"n_target must be < n_feature=300; got 300"),
        ([5, 2.5], r"n_target must be an int; got float 2.5"),
        (True, r"n_target must be an int"),
    ],
)
def test_bad_n_target_lists_name_the_parameter(value, match):
    with pytest.raises(ValueError, match=match):
        n_target_list(value, n_feature=300)


def test_n_target_list_keeps_the_estimates_own_first():
    assert n_target_list(20, n_feature=2000) == [20]
    assert n_target_list((20, 10, 40), n_feature=2000) == [20, 10, 40]
    assert n_target_list(np.arange(10, 51, 10), n_feature=2000) == [10, 20, 30, 40, 50]


@pytest.mark.parametrize(
    "args, said",
    [
        (["estimate", "--n-target", "10,20", "--validate"], "--n-target: --validate compares one n_target"),
        (["validate", "--n-target", "10:30:10"], "--n-target: validate compares one n_target with the naive check"),
        (["estimate", "--n-target", "10,x"], "--n-target: expected integers like 1,5,10 or start:stop:step"),
        (["estimate", "--n-target", "10,20", "--model", "onda"], "--n-target: several values (the stability over"),
    ],
)
def test_cli_n_target_lists_refused_in_one_line(args, said, capsys):
    assert cli_main([*args, "--scheduler", "synchronous", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err
    assert "model='anchored'" not in err[0]  # the command line's words


@pytest.mark.slow
def test_with_a_precision_the_other_rows_are_estimates_on_the_copies_the_rounds_reached():
    """The rounds are chosen at the first n_target; the features and the other rows are
    counted on the copies they reached, the features under the data's names."""
    from ensstab_dask.estimates.stages.pipeline import estimate_from_runs
    from ensstab_dask.real.runs import Copies, real_run_plan, runs_from_copies
    from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive
    from ensstab_dask.settings import EstimateSettings

    data = es.make_microarray(n_feature=150, n_informative=10, effect=2.0, seed=2)
    kw = dict(selector=default_selector(10), m_ensemble=(1, 5, 20, 40), n_boot=50, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = es.estimate(
            data.X,
            data.y,
            [5, 8],
            precision=0.001,
            max_real_runs=400,
            client="synchronous",
            progress=False,
            feature_names=data.feature_names,
            **kw,
        )
    last = est.spending.rounds[-1]
    assert len(est.spending.rounds) >= 2 and est.real_runs == last.copies * last.members
    assert (est.features.attrs["copies"], est.features.attrs["members"]) == (last.copies, last.members)
    assert est.features["feature_name"].values.tolist() == data.feature_names.tolist()
    seed = derive(as_seed_sequence(5), Stream.ESTIMATE, Stage.COPIES)
    (ranks,) = real_run_plan(
        data.X,
        data.y,
        [Copies(last.copies, last.members, seed)],
        selector=kw["selector"],
        client="synchronous",
        progress=False,
    )
    settings = EstimateSettings(n_feature=150, n_target=8, precision=0.001, max_real_runs=400, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = estimate_from_runs(runs_from_copies(ranks, 8), settings, client="synchronous", copy_ranks=ranks)
    assert np.array_equal(est.surface["stability"].sel(n_target=8).values, alone.curve["stability"].values)
    assert np.array_equal(est.surface["stability"].sel(n_target=5).values, est.curve["stability"].values)
