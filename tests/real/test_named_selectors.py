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
    with pytest.raises(InvalidParameterError, match="selector must be one of rf, extra-trees, logistic"):
        named_selector("svm", 10)
    assert np.isclose(named_selector("rf", 7, "regression").get_params()["n_estimators"], 7)
