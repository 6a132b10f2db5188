"""What a user reads of ``ensstab estimate`` is true and short: a noise bound that bounds
(or says it does not), one number for one selector's stability in the text, the JSON and
the report, a first screen without undefined terms, headlines from the data rather than
from a seam, the report in one step, and the cache in a folder named for what it holds.

The command runs on the embedded default as users run it, with 100 trees instead of 300
(a size, ``--n-estimators``; fewer make a forest whose answer is not reliable) and the
synchronous scheduler; its real runs are made once for the module, and each test reads
them back from the cache.
"""

import html
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

import ensstab_dask as es
from ensstab_dask.cli import main
from ensstab_dask.estimates.words.summary import _plateau

SMALL = ["--n-estimators", "100", "--scheduler", "synchronous", "--quiet"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A cache folder holding the default's 200 real runs (100 trees)."""
    folder = str(tmp_path_factory.mktemp("runs"))
    assert main(["estimate", *SMALL, "--cache-dir", folder]) == 0
    return folder


def _run(capsys, cache: str, *args: str) -> str:
    assert main(["estimate", *SMALL, "--cache-dir", cache, *args]) == 0
    return capsys.readouterr().out


def _line(text: str, start: str) -> str:
    (line,) = [x for x in text.splitlines() if x.strip().startswith(start)]
    return line


@pytest.mark.parametrize("choice", [[], ["--pfer", "1"], ["--cutoff", "0.8"], ["--cutoff", "0.6"]])
def test_no_bound_above_the_list_and_the_copies_that_make_one_are_an_option(choice, capsys, cache):
    out = _run(capsys, cache, *choice)
    kept = _line(out, "Kept on at least")
    listed = int(re.search(r"\((\d+) features?;", kept)[1]) if "features;" in kept or "feature;" in kept else 0
    bound = re.search(r"at most ([\d.]+) of them are expected to be noise", kept)
    if bound:
        assert float(bound[1]) < listed, kept
    elif listed:
        assert re.search(r"the bound on how many of them are noise, [\d.]+, is not below \d+: it says nothing", kept)
    if not listed:
        return
    # The options that bound the noise by 1 (by the PFER), in the command line's words; each depends on the
    # problem alone (n_target 20 of 2000 features), so it is the same whatever the forest.
    (advice,) = [x for x in out.splitlines() if x.strip().startswith("To bound the noise")]
    assert ADVICE[" ".join(choice)] in advice and "copies=" not in advice and "cutoff=" not in advice


#: What each choice's advice says on the embedded default (10 copies measured).
ADVICE = {
    "": "by 1, pass --copies 21: 21 real ensembles, the 10 already made reused, priced before it runs; the list may "
    "shrink, as more ensembles tell chance from stability.",
    "--pfer 1": "by 1, pass --copies 11 with --cutoff 0.95 (in place of the PFER): 11 real ensembles",
    "--cutoff 0.8": "by 1, pass --copies 47: 47 real ensembles",
    "--cutoff 0.6": "by 1, pass --copies 11 with --cutoff 0.95: 11 real ensembles",
}


def test_one_stability_for_one_selector_in_the_text_the_json_and_the_report(capsys, cache, tmp_path):
    out = _run(capsys, cache, "--json", str(tmp_path / "e.json"), "--report", str(tmp_path / "report"))
    text = _line(out, "stability of one weak selector")
    said = re.search(r"\(jaccard index\): ([\d.]+),", text)[1]
    d = json.loads((tmp_path / "e.json").read_text())
    assert f"{d['stability_one_selector']['value']:.4f}" == said
    assert "real_stability" not in d  # the paper's measure is named for what it is
    assert d["paper_stability"]["runs"] == 10 and "first weak selector of each" in d["paper_stability"]["from"]
    page = html.unescape((tmp_path / "report" / "index.html").read_text())
    (row,) = re.findall(r"<th>one selector's stability \(jaccard\)</th><td>([\d.]+)", page)
    assert row == said
    # The answer's single selector is the same number, in shared features.
    shared = float(re.search(r"1 selector \(no ensemble\):\s+([\d.]+) of 20", out)[1])
    assert shared == round(40 * float(said) / (1 + float(said)), 1)
    assert "wrote " + str(tmp_path / "report" / "index.html") in out


def test_the_first_screen_believe_it_is_short_and_in_plain_words(capsys, cache):
    out = _run(capsys, cache)
    first = out.split("\n\n")[0]
    believe = _line(first, "Believe it?")
    assert len(believe.strip()) <= 200, believe
    for term in ("the law", "copy's", "weak selectors", "held out", "extrapolated from ensembles of"):
        assert term not in first, term
    assert _line(first, "Above 20 members it is extrapolated").strip().endswith("the largest measured).")
    # The check's prediction saw each ensemble's first members: the line says so, not "not used".
    assert "extrapolated from each ensemble's first 10 members, it predicted all 20 in 10 real ensembles" in believe
    index = _line(first, "Below, the method's terms:")
    assert "k of 20 features in common is a Jaccard index of k / (40 - k), so" in index
    # The details the first screen leaves out are in the self-check's line below.
    assert "it cannot see an unlucky draw of the copies" in _line(out, "Self-check passed")


def test_the_report_comes_in_one_step_and_is_refused_before_the_work(capsys, cache, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x.txt").write_text("mine")
    assert main(["estimate", *SMALL, "--cache-dir", cache, "--report", str(tmp_path / "taken")]) == 2
    err = capsys.readouterr().err
    assert "--report" in err and "exists and is not empty" in err and "Traceback" not in err
    assert (tmp_path / "taken" / "x.txt").read_text() == "mine"  # nothing the user had is touched
    # An output inside the report's folder would be replaced with it: refused before the work too.
    args = ["--output", str(tmp_path / "r" / "e.nc"), "--report", str(tmp_path / "r")]
    (tmp_path / "r").mkdir()
    assert main(["estimate", *SMALL, "--cache-dir", cache, *args]) == 2
    assert "is inside --report" in capsys.readouterr().err and not (tmp_path / "r" / "e.nc").exists()


class CountingForest(RandomForestClassifier):
    """A random forest that counts its fits: what the cache spares is counted by the selector."""

    fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.mark.filterwarnings("ignore::ensstab_dask.exceptions.UnreliableEstimateWarning")
def test_more_copies_run_only_the_new_ones_and_are_priced_first(tmp_path):
    data = es.make_microarray(n_feature=150, n_informative=8, effect=3.0, seed=2)
    forest = CountingForest(n_estimators=5, random_state=0)
    CountingForest.fits = 0
    opts = dict(selector=forest, m_ensemble=(1, 5), n_boot=0, client="synchronous", progress=False, cache_dir=tmp_path)
    first = es.estimate(data.X, data.y, 5, **opts)
    assert CountingForest.fits == 200 and first.features.attrs["copies"] == 10
    CountingForest.fits = 0
    more = es.estimate(data.X, data.y, 5, copies=12, **opts)
    assert CountingForest.fits == 40  # 2 new copies of 20 weak selectors, the 10 cached read back
    assert (more.cost.runs.made, more.cost.runs.reused) == (40, 200)
    assert more.features.attrs["copies"] == 12 and more.settings["copies"] == 12
    # The first 10 copies are the same runs: their counts at m = 20 cannot exceed the 12 copies' by more than 2.
    assert np.all(more.features["count"].values[:, -1] - first.features["count"].values[:, -1] <= 2)
    CountingForest.fits = 0
    with pytest.raises(ValueError, match="20000 real runs|20,000 real runs"):
        es.estimate(data.X, data.y, 5, copies=1000, **opts)
    assert CountingForest.fits <= 1  # refused on its price: at most the one run that times the selector
    with pytest.raises(ValueError, match="copies: model='onda' measures no real ensemble copies"):
        es.estimate(data.X, data.y, 5, copies=12, model="onda", **opts)


def test_a_fall_inside_the_interval_is_not_a_fall_and_a_measured_size_beyond_is_said():
    data = es.make_microarray(n_feature=150, n_informative=8, effect=3.0, seed=2)
    est = es.estimate(
        data.X, data.y, 5, selector=es.default_selector(20), m_ensemble=(1, 5, 10), client="synchronous", progress=False
    )
    assert est.reliable and est.self_check.sizes == (20,)
    m = [10, 20, 30, 50]  # n_target 20's numbers: the plateau reads the shared features and their intervals
    wiggle = np.array([3.6, 4.2, 4.1, 4.2])  # the seam between measured and extrapolated sizes
    wide = {10: (2.7, 4.4), 20: (2.4, 5.6), 30: (2.8, 5.1), 50: (2.9, 5.3)}
    assert "do not always help" not in _plateau(est, m, wiggle, wide)
    # A fall larger than the plateau's gain (1 feature) is still no fall while the intervals overlap ...
    big = np.array([3.6, 5.5, 4.0, 4.1])
    overlapping = {10: (3.0, 4.2), 20: (4.5, 6.5), 30: (3.0, 5.0), 50: (3.1, 5.1)}
    assert "do not always help" not in _plateau(est, m, big, overlapping)
    assert "do not always help" in _plateau(est, m, big, {})  # ... which, without intervals, it would be
    narrow = {10: (3.5, 3.7), 20: (4.1, 4.3), 30: (2.0, 2.2), 50: (1.9, 2.1)}
    fall = np.array([3.6, 4.2, 2.1, 2.0])
    assert "do not always help here: the curve is highest at 20 members" in _plateau(est, m, fall, narrow)
    # Still gaining at the largest size asked: what the self-check measured beyond it is said.
    rising = _plateau(est, [1, 5, 10], np.array([0.5, 1.5, 3.0]), {})
    measured = est.self_check.measured[0]
    shared = 2 * 5 * measured / (1 + measured)  # k of 5 in common is a Jaccard index of k / (10 - k)
    assert f"real ensembles measured for the self-check share {shared:.1f} of 5 at 20" in rising
    assert "adding 20 to the sizes asked gives it with an interval, from the same runs" in rising
    assert math.isfinite(shared)


def test_the_default_cache_is_named_for_what_it_holds(capsys, cache, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    default = tmp_path / "ensstab_dask" / "real-runs"
    default.mkdir(parents=True)
    for entry in Path(cache).iterdir():  # the runs an estimate cached, where the default cache keeps them
        shutil.copy(entry, default / entry.name)
    capsys.readouterr()
    assert main(["estimate", *SMALL[:-1]]) == 0
    assert f"reused 200 real runs from {default} (ran 0)" in capsys.readouterr().err
