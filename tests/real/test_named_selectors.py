"""The selectors the command line names come from one table: an entry added there is a
``--selector`` choice, run end to end, and refused for a task it does not serve."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ensstab_dask.cli import main
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.named_selectors import NAMED_SELECTORS, NamedSelector, named_selector


def _tree(n_estimators: int, task: str):
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(max_features="sqrt")


def test_a_selector_added_to_the_table_is_a_choice_run_end_to_end(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(NAMED_SELECTORS, "toy-tree", NamedSelector(_tree, tasks=("classification",), trees=False))
    out = tmp_path / "est.json"
    argv = ["estimate", "--selector", "toy-tree", "--n-target", "5", "--m-ensemble", "1,5", "--n-boot", "0"]
    assert main([*argv, "--scheduler", "synchronous", "--quiet", "--no-cache", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["settings"]["selector"].startswith("DecisionTreeClassifier(")
    with pytest.raises(InvalidParameterError, match="'toy-tree' serves classification only; a regression target takes"):
        named_selector("toy-tree", 10, "regression")


def test_the_table_names_every_choice_and_refuses_others(capsys):
    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    help_text = capsys.readouterr().out
    assert all(name in help_text for name in NAMED_SELECTORS)
    with pytest.raises(
        InvalidParameterError,
        match="selector must be one of rf, extra-trees, logistic, l1-logistic, linear-svm, f-test",
    ):
        named_selector("svm", 10)
    assert np.isclose(named_selector("rf", 7, "regression").get_params()["n_estimators"], 7)


#: Informative features among the top 5 of three runs (of 15; chance alone keeps 0.5 of the 10
#: informative of 300): the hinge loss at scikit-learn's C = 1 separates 30 samples of 300 features
#: with weight spread over many of them, so the SVM's |coefficient| finds fewer.
FOUND = {"l1-logistic": 10, "linear-svm": 4, "f-test": 12, "mutual-info": 10}


@pytest.mark.parametrize("name", list(FOUND))
def test_each_named_selector_ranks_the_informative_features_first_and_depends_on_its_seed_alone(name):
    """On a strong effect, a run's top features are mostly informative ones (make_microarray's
    ``informative``); a run is its seed's, the mutual information's noise included."""
    from ensstab_dask.real.datasets import make_microarray
    from ensstab_dask.real.selectors import real_run

    data = make_microarray(n_samples=60, n_feature=300, n_informative=10, effect=3.0, seed=2)
    selector = named_selector(name, 10)
    found = 0
    for seed in (3, 4, 5):
        ranks = real_run(data.X, data.y, 5, selector=selector, seed=seed)
        found += int(np.isin(np.flatnonzero(ranks <= 5), data.informative).sum())
    np.testing.assert_array_equal(ranks, real_run(data.X, data.y, 5, selector=selector, seed=5))
    assert found >= FOUND[name], (name, found)


def test_the_named_selectors_say_what_they_are_and_serve_their_tasks(capsys):
    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "l1-logistic: L1-penalised logistic regression" in help_text and "(classification only)" in help_text
    for name in ("f-test", "mutual-info", "rf", "extra-trees"):
        assert "regression" in NAMED_SELECTORS[name].tasks
        named_selector(name, 10, "regression").get_params()
    for name in ("l1-logistic", "linear-svm", "logistic"):
        with pytest.raises(InvalidParameterError, match=f"'{name}' serves classification only"):
            named_selector(name, 10, "regression")
