"""compare(): an estimate per selector from its own runs, every selector's runs in one
submission and cached as its own; the accuracy of each copy's features on the half it
did not see; the choice; and the ``ensstab compare`` command that runs it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ensstab_dask as es
import ensstab_dask.real.runs as runs_module
from ensstab_dask.cli import main
from ensstab_dask.estimates.stages.held_out import copy_halves
from ensstab_dask.estimates.stages.real_runs import RealRunner, real_run_items
from ensstab_dask.estimates.words.choice import choose, shared_curve
from ensstab_dask.plotting.compare_report import pareto_front
from ensstab_dask.real.runs import Copies, real_run_plan
from ensstab_dask.settings import EstimateSettings

#: Small: 4 copies of 20 (80 runs a selector), 10-tree forests; the logistic predictor where the
#: forest's own is not what a test is about.
SMALL = dict(m_ensemble=(1, 5, 20), n_boot=20, copies=4, client="synchronous", progress=False)
FOREST = es.default_selector(10)


class _Submissions:
    """Counts the submissions of real runs and the problems each carries."""

    def __init__(self, monkeypatch):
        self.problems: list[int] = []
        real = runs_module.group_run_plan

        def counted(X, problems, *args, **kwargs):
            self.problems.append(len(problems))
            return real(X, problems, *args, **kwargs)

        monkeypatch.setattr("ensstab_dask.estimates.stages.together.group_run_plan", counted)


def _data(effect: float = 3.0, seed: int = 1):
    return es.make_microarray(n_samples=40, n_feature=150, n_informative=10, effect=effect, seed=seed)


def test_each_selector_is_its_own_estimate_and_a_rerun_makes_only_the_new_selectors_runs(tmp_path, monkeypatch):
    data = _data()
    forest, quick = FOREST, dict(SMALL, predictor="logistic")
    submissions = _Submissions(monkeypatch)
    first = es.compare(data.X, data.y, 5, selectors={"forest": forest, "f": "f-test"}, cache_dir=tmp_path, **quick)
    assert submissions.problems == [2]  # both selectors' runs in one submission
    alone = es.estimate(data.X, data.y, 5, selector=forest, **quick)
    assert first.estimates["forest"].predicted() == alone.predicted()  # bit for bit, as if alone
    np.testing.assert_array_equal(first.estimates["forest"].accuracy["accuracy"], alone.accuracy["accuracy"])
    again = es.compare(
        data.X, data.y, 5, selectors={"forest": forest, "f": "f-test", "l1": "l1-logistic"}, cache_dir=tmp_path, **quick
    )
    assert submissions.problems == [2, 1]  # only the new selector's runs are made
    made = {k: (e.cost.runs.made, e.cost.runs.reused) for k, e in again.estimates.items()}
    assert made == {"forest": (0, 80), "f": (0, 80), "l1": (80, 0)}
    assert again.estimates["f"].predicted() == first.estimates["f"].predicted()
    record = again.to_dict()["selectors"]["l1"]
    assert {"curve", "curve_interval", "accuracy", "runs_made", "runs_reused"} <= set(record)
    assert (record["runs_made"], record["runs_reused"]) == (80, 0) and set(record["accuracy"]["score"]) == {
        "1",
        "5",
        "20",
    }
    ds = again.to_dataset()
    assert ds["stability"].dims == ("selector", "m_ensemble") and ds["selector"].values.tolist() == [
        "forest",
        "f",
        "l1",
    ]
    assert ds["accuracy"].dims == ("selector", "m_measured")


def test_a_copys_half_is_the_half_its_weak_selectors_were_fitted_on():
    """The samples each weak selector of copy c saw (a scorer that records them: X's first
    column is the sample's number) lie in copy_halves' half of copy c, and the unseen half
    is the rest."""
    data = _data()
    X = data.X.copy()
    X[:, 0] = np.arange(X.shape[0])
    seen: list[set] = []

    def recording(Xr, yr, rng):
        seen.append(set(Xr[:, 0].astype(int).tolist()))
        return rng.random(Xr.shape[1])

    settings = EstimateSettings(n_feature=X.shape[1], n_target=5, m_ensemble=(1, 5), selector=recording)
    item = real_run_items(settings)["copies"]
    small = Copies(3, 4, item.seed, item.layout)  # copy c's half does not depend on how many are made
    real_run_plan(X, data.y, [small], selector=recording, client="synchronous", progress=False)
    runner = RealRunner(X, data.y, recording, "synchronous")
    halves = copy_halves(runner, item.seed, 3)
    for c in range(3):
        members = seen[4 * c : 4 * c + 4]
        assert all(m <= set(halves[c].tolist()) for m in members)
        assert set().union(*members) != set(range(X.shape[0]))  # the other half is unseen


def test_accuracy_from_the_halves_is_chance_without_signal_and_high_with_it():
    """No signal (effect 0): the balanced accuracy over copies is 1/2 within 4 SE, at every
    measured size; a strong signal: above 0.9 at the largest ensemble."""
    none = _data(effect=0.0, seed=5)
    with pytest.warns(es.UnreliableEstimateWarning, match="not distinguishable from chance"):
        # 10 copies: the SE over copies, which the tolerance is made of, is then well measured.
        est = es.estimate(none.X, none.y, 5, selector=FOREST, predictor="logistic", **{**SMALL, "copies": 10})
    a = est.accuracy
    assert a.attrs["metric"] == "balanced_accuracy" and int(a.attrs["copies"]) == 10
    assert (np.abs(a["accuracy"] - 0.5) <= 4 * a["accuracy_se"]).all(), a["accuracy"].values
    strong = _data(effect=3.0, seed=6)
    said = es.estimate(strong.X, strong.y, 5, selector=FOREST, predictor="logistic", **SMALL)
    assert float(said.accuracy["accuracy"].sel(m_measured=20)) > 0.9
    assert "Accuracy of the kept features on the half of the samples each real ensemble copy did not see" in (
        said.summary()
    )


def test_a_regression_target_is_scored_by_r2_and_logistic_refused_for_it():
    data = _data()
    y = data.X[:, data.informative[:3]].sum(axis=1) + np.random.default_rng(0).normal(size=len(data.y))
    est = es.estimate(data.X, y, 5, predictor="rf", selector=es.default_selector(10, task="regression"), **SMALL)
    assert est.accuracy.attrs["metric"] == "r2" and float(est.accuracy["accuracy"].sel(m_measured=20)) > 0.2
    with pytest.raises(es.InvalidParameterError, match="predictor='logistic' serves classification only"):
        es.estimate(data.X, y, 5, predictor="logistic", **SMALL)


def test_the_choice_keeps_the_most_features_within_one_se_of_the_best_accuracy():
    data = _data()
    hostile = "forest\x1b[2J"  # a name with a terminal's control sequence in it
    res = es.compare(data.X, data.y, 5, selectors={hostile: FOREST, "f": "f-test"}, predictor="logistic", **SMALL)
    assert "\x1b" not in res.summary() and "forest" in res.summary()  # printed as visible text, never run
    choice = choose(res.estimates)
    assert choice is not None and res.choice()[0].startswith(f"{choice.selector} at m = {choice.m} keeps")
    points = []
    for est in res.estimates.values():
        curve, a = shared_curve(est), est.accuracy
        points += [
            (float(acc), float(se), curve[int(m)][0])
            for m, acc, se in zip(a["m_measured"].values, a["accuracy"].values, a["accuracy_se"].values)
        ]
    best = max(points)
    eligible = [p for p in points if best[0] - p[0] <= np.hypot(best[1], p[1])]
    assert choice.shared == max(p[2] for p in eligible)


def test_the_pareto_front_holds_the_points_no_other_beats_on_both():
    points = [(1.0, 0.9), (2.0, 0.8), (1.5, 0.7), (0.5, 0.95), (2.0, 0.85)]
    assert pareto_front(points) == [3, 0, 4]


def test_compare_refuses_one_selector_a_name_it_lacks_and_a_selector_setting():
    data = _data()
    with pytest.raises(es.InvalidParameterError, match="selectors must name at least two"):
        es.compare(data.X, data.y, 5, selectors=["rf"], **SMALL)
    with pytest.raises(es.InvalidParameterError, match="'svm' is not one of rf, extra-trees"):
        es.compare(data.X, data.y, 5, selectors=["rf", "svm"], **SMALL)
    with pytest.raises(es.InvalidParameterError, match="compare takes several as selectors="):
        es.compare(data.X, data.y, 5, selector=es.default_selector(5), **SMALL)


def test_the_command_compares_selectors_end_to_end(tmp_path, capsys):
    out, report, nc = tmp_path / "c.json", tmp_path / "rep", tmp_path / "c.nc"
    argv = ["compare", "--selectors", "rf,f-test", "--n-estimators", "10", "--m-ensemble", "1,5,20"]
    argv += ["--n-boot", "20", "--predictor", "logistic", "--scheduler", "synchronous", "--quiet", "--no-cache"]
    assert main([*argv, "--json", str(out), "--report", str(report), "--output", str(nc)]) == 0
    printed = capsys.readouterr().out
    assert "within one SE of the best accuracy" in printed
    record = json.loads(out.read_text())
    assert list(record["selectors"]) == ["rf", "f-test"] and record["choice"][0] in printed
    assert (report / "index.html").is_file() and nc.is_file()
    assert main(["compare", "--selectors", "rf", "--scheduler", "synchronous"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "ensstab: error: --selectors must name at least two selectors to compare; got 1 (rf)"
    ]
    # --predictor none: stability alone, and the choice says it cannot choose without accuracy.
    assert main([*argv[:-4], "--predictor", "none", "--scheduler", "synchronous", "--quiet", "--no-cache"]) == 0
    assert "No choice: no selector has both a predicted curve and an accuracy" in capsys.readouterr().out
    assert main(["compare", "--selector", "rf", "--scheduler", "synchronous"]) == 2
    assert "compare takes several: --selectors a,b,..." in capsys.readouterr().err
