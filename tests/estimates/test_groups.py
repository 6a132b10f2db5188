"""One group against the rest, for every group: each group's estimate is the estimate of
its own question bit for bit, every group's runs go to the cluster in one submission, the
cache keys them per group, and the results come as one Dataset, one JSON and columns of
an AnnData's var."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import ensstab_dask as es
import ensstab_dask.real.runs as runs_module
from ensstab_dask.cli import main
from ensstab_dask.estimates.stages.groups import group_problems
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.selectors import default_selector

pd = pytest.importorskip("pandas")

GROUPS = ["CD14+ Monocyte", "Dendritic", "CD56+ NK"]
SIZES = [30, 18, 24]
OPTIONS = dict(selector=default_selector(10), m_ensemble=(1, 5, 20), n_boot=20, progress=False)


def _study(seed: int = 0):
    """72 cells x 90 genes; group k shifts genes 5k .. 5k + 4."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(GROUPS, SIZES)
    X = rng.standard_normal((len(labels), 90))
    for k, g in enumerate(GROUPS):
        X[labels == g, 5 * k : 5 * k + 5] += 2.0
    return X, labels


class _Submissions:
    """Counts the submissions of real runs, calling through to the real ones."""

    def __init__(self, monkeypatch):
        self.count = 0
        real = runs_module.run_tasks

        def counted(*args, **kwargs):
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(runs_module, "run_tasks", counted)


def test_each_group_is_its_own_estimate_bit_for_bit_from_one_submission(two_process_client, monkeypatch):
    X, labels = _study()
    submissions = _Submissions(monkeypatch)
    res = es.estimate_groups(X, labels, 5, client=two_process_client, **OPTIONS)
    assert submissions.count == 1
    assert res.groups == sorted(GROUPS)  # every group, in the order class_counts prints them
    g = "Dendritic"  # one group asked alone is enough: every group's runs come from the same submission
    alone = es.estimate(X, (labels == g).astype(int), 5, client="synchronous", **OPTIONS)
    assert res.estimates[g].predicted() == alone.predicted()
    assert res.estimates[g].curve_interval() == alone.curve_interval()
    assert all(est.cost.runs.made == 200 for est in res.estimates.values()) and alone.cost.runs.made == 200
    markers = res.markers()
    for k, g in enumerate(GROUPS):  # each group's stable genes are its own shifted ones
        assert markers[g] and set(markers[g]) <= {f"x{5 * k + j}" for j in range(5)}


def test_against_one_group_uses_the_two_groups_samples_alone():
    X, labels = _study()
    res = es.estimate_groups(X, labels, 5, groups="Dendritic", reference="CD56+ NK", client="synchronous", **OPTIONS)
    two = np.isin(labels, ["Dendritic", "CD56+ NK"])
    alone = es.estimate(X[two], (labels[two] == "Dendritic").astype(int), 5, client="synchronous", **OPTIONS)
    assert res.groups == ["Dendritic"] and res.estimates["Dendritic"].predicted() == alone.predicted()


def test_the_cache_keys_runs_per_group_and_runs_only_what_it_lacks(tmp_path, monkeypatch):
    X, labels = _study()
    first = es.estimate_groups(X, labels, 5, groups=GROUPS[:2], cache_dir=tmp_path, client="synchronous", **OPTIONS)
    submissions = _Submissions(monkeypatch)
    again = es.estimate_groups(X, labels, 5, cache_dir=tmp_path, client="synchronous", **OPTIONS)
    assert submissions.count == 1  # the third group's runs, the two others' read back
    for g in GROUPS[:2]:
        assert (
            again.estimates[g].cost.runs.reused == 200
            and again.estimates[g].predicted() == first.estimates[g].predicted()
        )
    assert again.estimates[GROUPS[2]].cost.runs.made == 200


def test_x_is_hashed_once_for_every_group_and_keys_each_groups_runs_as_alone(tmp_path, monkeypatch):
    """With a cache, X's bytes are read once for all the groups (each group's key is then
    its labels'), and each key is the one its data alone would have: the runs cached by a
    group's own estimate are the group's."""
    import ensstab_dask.real.cache_files as cache_files
    from ensstab_dask.estimates.stages.groups import group_problems

    X, labels = _study()
    seen = []
    real_update = cache_files._update

    def counting(h, arrays):
        seen.extend(arr is X or (hasattr(arr, "base") and arr.base is X) for arr in arrays)
        return real_update(h, arrays)

    monkeypatch.setattr(cache_files, "_update", counting)
    es.estimate_groups(X, labels, 5, cache_dir=tmp_path, client="synchronous", **OPTIONS)
    assert sum(seen) == 1  # X once, for the three groups
    monkeypatch.setattr(cache_files, "_update", real_update)
    problem = group_problems(labels)[GROUPS[1]]
    alone = es.estimate(X, problem.y, 5, cache_dir=tmp_path, client="synchronous", **OPTIONS)
    assert alone.cost.runs.reused == 200 and alone.cost.runs.made == 0


def test_a_regressor_for_groups_is_refused_and_the_dataset_keeps_only_shared_attrs():
    X, labels = _study()
    with pytest.raises(InvalidParameterError, match="is a regressor, but y is a classification"):
        es.estimate_groups(X, labels, 5, selector=default_selector(5, task="regression"), client="synchronous")
    res = es.estimate_groups(X, labels, 5, groups=GROUPS[:2], client="synchronous", **OPTIONS)
    ds = res.to_dataset()
    each = [est.to_dataset().attrs for est in res.estimates.values()]
    kept = set(ds.attrs) - {"kind", "reference", "groupby"}
    assert kept and all(k in a and np.array_equal(a[k], ds.attrs[k]) for a in each for k in kept)
    assert "answer" not in ds.attrs  # each group's own


@pytest.mark.parametrize(
    ("groups", "reference", "says"),
    [
        ("B cells", "rest", "'B cells' is not one"),
        ("Dendritic,Dendritic", "rest", "each once"),
        ("Dendritic", "Dendritic", "each once, not the reference"),
        (None, "T cells", "reference must be 'rest' or one of the groups"),
    ],
)
def test_groups_that_are_not_there_are_refused(groups, reference, says):
    _, labels = _study()
    with pytest.raises(InvalidParameterError, match=says):
        group_problems(labels, groups, reference)


def test_results_as_one_dataset_one_json_and_columns_of_var(tmp_path):
    anndata = pytest.importorskip("anndata", reason="anndata is not installed (pip install '.[anndata]')")
    X, labels = _study()
    res = es.estimate_groups(X, labels, 5, groupby="cell_type", client="synchronous", **OPTIONS)
    ds = res.to_dataset()
    assert ds["stability"].dims == ("group", "m_ensemble") and ds["group"].values.tolist() == res.groups
    assert json.loads(json.dumps(res.to_dict()))["groups"].keys() == set(GROUPS)
    adata = anndata.AnnData(X=X, obs=pd.DataFrame({"cell_type": labels}, index=[f"c{i}" for i in range(len(X))]))
    adata.var_names = [f"x{j}" for j in range(X.shape[1])]
    written = es.write_frequencies_to_var(adata, res)
    assert f"ensstab_{GROUPS[0]}_frequency_m20" in written and len(written) == 4 * len(GROUPS)
    names = adata.uns["ensstab_markers"]["names"]  # rank_genes_groups' layout: a field per group
    assert sorted(names.dtype.names) == sorted(GROUPS)
    stable = res.markers()["Dendritic"]
    assert list(names["Dendritic"][: len(stable)]) == stable  # the stable genes lead
    assert adata.uns["ensstab_markers"]["stable"]["Dendritic"].sum() == len(stable)
    adata.write_h5ad(tmp_path / "out.h5ad")  # what scanpy users keep
    with pytest.raises(InvalidParameterError, match="already"):
        es.write_frequencies_to_var(adata, res)


def test_cli_groupby_gives_one_answer_per_group(tmp_path, capsys):
    X, labels = _study()
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame.insert(0, "cell_type", labels)
    path = tmp_path / "cells.csv"
    frame.to_csv(path, index=False)
    out, nc, report = tmp_path / "g.json", tmp_path / "g.nc", tmp_path / "report"
    argv = ["estimate", "--data", str(path), "--groupby", "cell_type", "--groups", "Dendritic,CD56+ NK"]
    argv += ["--n-target", "5", "--n-estimators", "10", "--m-ensemble", "1,5,20", "--n-boot", "20"]
    argv += ["--json", str(out), "--output", str(nc), "--report", str(report)]
    assert main([*argv, "--scheduler", "synchronous", "--quiet", "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "== 'Dendritic' against the rest ==" in text and "stable features per group (2 groups" in text
    record = json.loads(out.read_text())
    assert list(record["groups"]) == ["Dendritic", "CD56+ NK"] and record["groupby"] == "cell_type"
    import xarray as xr

    with xr.open_dataset(nc) as ds:
        assert ds["group"].values.tolist() == ["Dendritic", "CD56+ NK"]
    page = (report / "index.html").read_text()
    assert page.count("<section>") == 2 and "<h2>CD56+ NK</h2>" in page and page.count("data:image/png") == 2


@pytest.mark.parametrize(
    "extra",
    [["--groupby", "cell_type", "--label", "cell_type"], ["--groups", "Dendritic"], ["--reference", "Dendritic"]],
)
def test_cli_group_options_out_of_place_are_one_line(tmp_path, capsys, extra):
    argv = ["estimate", "--n-target", "5", "--scheduler", "synchronous", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["validate", "--groupby", "cell_type"]) == 2


def test_a_group_named_rest_is_estimated_against_every_other_sample_and_said(caplog):
    """'rest' is the reference's keyword: a group of that name was once never estimated,
    without a word."""
    _, labels = _study()
    named = np.where(labels == "Dendritic", "rest", labels)
    with caplog.at_level(logging.WARNING, logger="ensstab_dask"):
        problems = group_problems(named)
    assert "rest" in problems and set(problems) == set(np.unique(named))
    assert problems["rest"].rows is None and problems["rest"].y.tolist() == (named == "rest").astype(int).tolist()
    (said,) = [r.getMessage() for r in caplog.records]
    assert "a group is named 'rest'" in said and "rename it" in said
