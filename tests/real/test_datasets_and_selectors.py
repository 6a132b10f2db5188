"""Datasets (files, reference data, embedded default) and real selector runs."""

import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.io import savemat

import ensstab_dask as es
from ensstab_dask.real.datasets import check_data, load_dataset, make_microarray, reference_dataset
from ensstab_dask.real.runs import Pool, real_runs
from ensstab_dask.real.selectors import default_selector, make_scorer, real_run, resample_indices

DATA_DIR = os.environ.get("ENSSTAB_DATA_DIR")
needs_data = pytest.mark.skipif(
    not DATA_DIR or not Path(DATA_DIR, "colon.mat").exists(),
    reason="reference datasets not found: set ENSSTAB_DATA_DIR to the folder holding colon.mat",
)


def small():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 6))
    y = np.array([0, 1] * 6)
    return X, y


def test_load_mat_npz_csv_agree(tmp_path):
    X, y = small()
    savemat(tmp_path / "d.mat", {"X": X, "Y": y[:, None]})
    np.savez(tmp_path / "d.npz", X=X, y=y, feature_names=np.array([f"f{i}" for i in range(6)]))
    header = ",".join([f"f{i}" for i in range(6)] + ["label"])
    rows = [",".join([repr(float(v)) for v in r] + [str(int(c))]) for r, c in zip(X, y)]
    (tmp_path / "d.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    for name in ("d.mat", "d.npz", "d.csv"):
        d = load_dataset(tmp_path / name)
        np.testing.assert_allclose(d.X, X)
        assert list(d.y) == list(y)
    assert list(load_dataset(tmp_path / "d.csv").feature_names) == [f"f{i}" for i in range(6)]
    assert list(load_dataset(tmp_path / "d.csv", label=-1).y) == list(y)


@pytest.mark.parametrize(
    "write, match",
    [
        (lambda p: savemat(p / "x.mat", {"X": np.ones((5, 3))}), "key 'Y' is missing"),
        (lambda p: savemat(p / "x.mat", {"data": np.ones((5, 3))}), "key 'X' is missing"),
        (lambda p: (p / "x.mat").write_bytes(b"not a mat file"), "not a readable MATLAB"),
        (lambda p: np.savez(p / "x.npz", X=np.ones((5, 3))), "key 'y' \\(or 'Y'\\) is missing"),
        (lambda p: (p / "x.csv").write_text("a,b\n1,2\n3,4\n"), "choose the label column"),
        (lambda p: (p / "x.txt").write_text("1"), "unknown format '.txt'"),
    ],
)
def test_malformed_files_name_what_is_missing(tmp_path, write, match):
    write(tmp_path)
    (path,) = [p for p in tmp_path.iterdir()]
    with pytest.raises(ValueError, match=match):
        load_dataset(path)


def test_csv_label_column_errors(tmp_path):
    (tmp_path / "x.csv").write_text("a,b,label\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n")
    with pytest.raises(ValueError, match="label column 'klass' is missing"):
        load_dataset(tmp_path / "x.csv", label="klass")
    with pytest.raises(ValueError, match="does not exist"):
        load_dataset(tmp_path / "nope.csv")


@pytest.mark.parametrize(
    "X, y, kw, match",
    [
        (np.array([[1.0, np.nan]] * 6), [0, 1] * 3, {}, "NaN or inf"),
        (np.array([[1.0, np.inf]] * 6), [0, 1] * 3, {}, "NaN or inf"),
        (np.ones((6, 3)), [0, 1] * 2, {}, "different lengths: 6 samples in X, 4 labels"),
        (np.ones((6, 3)), [1] * 6, {}, "at least 2 classes"),
        (np.ones((3, 3)), [0, 1, 0], {}, "at least 4 samples"),
        (np.ones((6, 3)), [0, 1] * 3, {"n_target": 3}, "n_target must be < n_feature=3"),
        (np.ones(6), [0, 1] * 3, {}, "X must be 2-D"),
        (np.ones((6, 3)), np.array([0, 1, None, 1, 0, 1], dtype=object), {}, "missing labels"),
        (np.ones((6, 3)), np.linspace(0, 1, 6), {"task": "classification"}, "y must hold class labels .*fractions"),
        (np.ones((6, 3)), np.ones((6, 2)), {}, r"y must be 1-D .*got shape \(6, 2\)"),
        (np.ones((6, 0)), [0, 1] * 3, {}, "X must have at least 1 feature"),
        (np.ones((6, 3)), np.array([0.0, 1, np.nan, 1, 0, 1]), {}, "y contains NaN or inf"),
    ],
)
def test_bad_data_is_refused(X, y, kw, match):
    with pytest.raises(ValueError, match=match):
        check_data(X, y, **kw)


def test_complex_data_is_refused():
    with pytest.raises(TypeError, match="X must be real-valued"):
        check_data(np.ones((6, 3)) * 1j, [0, 1] * 3)
    with pytest.raises(TypeError, match="y must be real-valued"):
        check_data(np.ones((6, 3)), np.array([0, 1] * 3) * 1j)
    with pytest.raises(TypeError, match="X must be a dense numeric"):
        check_data([["a", "b"]] * 6, [0, 1] * 3)


def test_check_data_accepts_what_scikit_learn_accepts_and_refuses_in_one_line():
    # Lists, string labels, a .mat file's column of labels.
    X, y = check_data([[1, 2], [3, 4], [5, 6], [7, 8]], np.array([["a"], ["b"], ["a"], ["b"]]))
    assert X.dtype == np.float64 and X.shape == (4, 2) and y.tolist() == ["a", "b", "a", "b"]
    # scikit-learn's own messages for these span several lines (the array, advice).
    for X, y in ((np.ones(6), [0, 1] * 3), (np.ones((6, 3)) * 1j, [0, 1] * 3)):
        with pytest.raises((ValueError, TypeError)) as info:
            check_data(X, y)
        assert "\n" not in str(info.value) and str(info.value).startswith("X must be")


def test_embedded_default_is_deterministic_and_informative():
    a, b = make_microarray(seed=0), make_microarray(seed=0)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    assert a.X.shape == (62, 2000) and np.bincount(a.y).tolist() == [40, 22]
    assert len(a.informative) == 40 and len(set(a.informative)) == 40
    # Informative features separate the classes; the others do not (beyond chance).
    t = stats.ttest_ind(a.X[a.y == 1], a.X[a.y == 0]).statistic
    other = np.setdiff1d(np.arange(2000), a.informative)
    assert np.median(np.abs(t[a.informative])) > 3 * np.median(np.abs(t[other]))
    assert not np.array_equal(make_microarray(seed=1).X, a.X)


@needs_data
def test_reference_datasets_match_their_readme():
    shapes = {"colon": (62, 2000, 2), "lymphoma": (96, 4026, 9), "prostate": (102, 5966, 2)}
    for name, (n, d, k) in shapes.items():
        data = reference_dataset(name)
        assert data.X.shape == (n, d) and len(np.unique(data.y)) == k


def test_reference_dataset_needs_a_folder(monkeypatch):
    monkeypatch.delenv("ENSSTAB_DATA_DIR", raising=False)
    with pytest.raises(ValueError, match="set ENSSTAB_DATA_DIR"):
        reference_dataset("colon")
    with pytest.raises(ValueError, match="name must be one of"):
        reference_dataset("iris")


Y62 = np.repeat([0, 1], [40, 22])  # the embedded default's classes


def test_resampling():
    rng = np.random.default_rng(0)
    half = resample_indices(Y62, "half", rng)
    assert len(half) == 31 and len(set(half)) == 31
    assert np.bincount(Y62[half]).tolist() == [20, 11]  # stratified: each class halved
    frac = resample_indices(Y62, 0.8, rng)
    assert len(frac) == 49 and len(set(frac)) == 49
    boot = resample_indices(Y62, "bootstrap", rng)
    assert len(boot) == 62 and len(set(boot)) < 62
    assert np.bincount(Y62[boot]).tolist() == [40, 22]  # a stratified bootstrap keeps each class's count
    with pytest.raises(ValueError, match="resample must be"):
        resample_indices(Y62, "thirds", rng)
    with pytest.raises(ValueError, match=r"resample must be in \(0.0, 1.0\]"):
        resample_indices(Y62, 1.5, rng)
    with pytest.raises(ValueError, match=r"y must be 1-D class labels.*got shape \(\)"):
        resample_indices(62, "half", rng)


@pytest.mark.parametrize("resample", ["half", "bagging", "bootstrap", 0.5, 1.0])
def test_every_resample_holds_every_class(resample):
    # 4 samples per class: unstratified, a half of 8 samples is all one class in 1 draw of 35.
    for y in (np.repeat([0, 1], 4), np.repeat(["a", "b", "c"], 4)):
        rng = np.random.default_rng(1)
        for _ in range(300):
            idx = resample_indices(y, resample, rng)
            assert set(y[idx]) == set(y), (resample, y[idx])
    if resample in ("half", "bagging"):
        assert np.unique(y[resample_indices(y, resample, rng)], return_counts=True)[1].tolist() == [2, 2, 2]


def test_stratified_halves_are_uniform_within_each_class():
    # Each sample is in a half with probability 1/2 (20 of 40, 11 of 22). The largest of 62
    # deviations over 4000 draws: 4.8 SE, which one of 62 normals exceeds with probability 1e-4.
    rng = np.random.default_rng(2)
    hits = np.zeros(62)
    for _ in range(4000):
        hits[resample_indices(Y62, "half", rng)] += 1
    assert np.abs(hits / 4000 - 0.5).max() < 4.8 * np.sqrt(0.25 / 4000)


def test_resampling_draws_only_from_the_generator_given():
    np.random.seed(1)
    a = resample_indices(Y62, "bagging", np.random.default_rng(7))
    np.random.seed(2)
    assert np.array_equal(a, resample_indices(Y62, "bagging", np.random.default_rng(7)))


def test_a_class_too_small_for_the_resample_is_refused():
    X = np.random.default_rng(0).standard_normal((5, 4))
    y = np.array([0, 0, 0, 0, 1])
    with pytest.raises(ValueError, match="resample='half' needs at least 2 samples of every class.*class 1 has 1"):
        resample_indices(y, "half", np.random.default_rng(0))
    with pytest.raises(ValueError, match="resample='bagging' needs at least 2 samples"):
        resample_indices(y, "bagging", np.random.default_rng(0))
    with pytest.raises(ValueError, match="resample=0.25 needs at least 4 samples of every class"):
        resample_indices(np.repeat([0, 1], [8, 3]), 0.25, np.random.default_rng(0))
    assert set(y[resample_indices(y, "bootstrap", np.random.default_rng(0))]) == {0, 1}
    # Refused before any run is sent anywhere, by the single run and by the pools.
    with pytest.raises(ValueError, match="resample='half' needs at least 2 samples of every class"):
        real_run(X, y, 2, selector=lambda X, y, rng: np.zeros(4))
    with pytest.raises(ValueError, match="resample='half' needs at least 2 samples of every class"):
        real_runs(X, y, 2, Pool(2), client="tcp://127.0.0.1:9")


def test_real_run_ranks_and_reproducibility():
    d = make_microarray(n_feature=300, n_informative=10, effect=2.0, seed=0)
    sel = default_selector(n_estimators=50)
    r1 = real_run(d.X, d.y, 10, selector=sel, seed=4)
    assert (np.sort(r1) == np.arange(1, 301)).all()
    assert (real_run(d.X, d.y, 10, selector=sel, seed=4) == r1).all()
    top = np.flatnonzero(r1 <= 10)
    assert np.isin(top, d.informative).sum() >= 5  # a strong signal is found


def test_a_plan_of_pools_and_copies_gives_each_item_exactly_as_alone(two_process_client):
    """One submission for every run: the same ranks as each item run on its own, on a
    cluster or not, whatever the batch size."""
    from ensstab_dask.real.naive import real_ensemble_runs
    from ensstab_dask.real.runs import Copies, real_run_plan

    data = make_microarray(n_feature=60, n_informative=6, effect=2.0, seed=4)
    sel = default_selector(5)
    plan = [Pool(5, "half", 1), Copies(3, 4, 2), Pool(3, "bagging", 3)]
    kw = dict(selector=sel, client="synchronous", progress=False)
    alone = [
        real_runs(data.X, data.y, 3, plan[0], **kw),
        real_ensemble_runs(data.X, data.y, plan[1], **kw),
        real_runs(data.X, data.y, 3, plan[2], **kw),
    ]
    for client, batch_size in (("synchronous", 1), (two_process_client, 2)):
        got = real_run_plan(data.X, data.y, plan, selector=sel, client=client, batch_size=batch_size, progress=False)
        assert [g.shape for g in got] == [(5, 60), (3, 4, 60), (3, 60)]
        for g, a in zip(got, alone):
            np.testing.assert_array_equal(g, a)


def test_ties_in_scores_are_broken_at_random():
    d = make_microarray(n_feature=5, n_informative=0, seed=0)

    def flat(X, y, rng):
        return np.zeros(X.shape[1])

    ranks = real_runs(d.X, d.y, 2, Pool(3000, seed=0), selector=flat, client="synchronous", batch_size=500)
    first = np.argmin(ranks, axis=1)
    assert stats.chisquare(np.bincount(first, minlength=5)).pvalue > 1e-4


def test_coef_selectors_and_multiclass_norm():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 8))
    y = np.repeat([0, 1, 2], 20)
    X[y == 1, 3] += 3
    X[y == 2, 5] -= 3
    r = real_run(X, y, 2, selector=LogisticRegression(max_iter=500), resample=1.0, seed=0)
    assert set(np.flatnonzero(r <= 2)) == {3, 5}


def test_pipeline_scored_like_scikit_learn_importance_getter_auto():
    """A pipeline is scored by its last step; a multi-class coef_ by its L1 norm over classes."""
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(3)
    X = rng.standard_normal((90, 6)) * [1, 10, 100, 1, 1, 1]
    y = np.repeat([0, 1, 2], 30)
    X[y == 1, 1] += 20
    X[y == 2, 4] -= 2
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    scores = make_scorer(pipe)(X, y, np.random.default_rng(0))
    coef = clone(pipe).fit(X, y)[-1].coef_
    assert coef.shape == (3, 6)
    np.testing.assert_allclose(scores, np.linalg.norm(coef, ord=1, axis=0), rtol=1e-10)
    assert not np.allclose(scores, np.linalg.norm(coef, axis=0))  # not the L2 norm
    top = np.flatnonzero(real_run(X, y, 2, selector=pipe, resample=1.0, seed=0) <= 2)
    assert set(top) == {1, 4}


def test_pipeline_steps_are_seeded_by_the_run():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    d = make_microarray(n_feature=60, n_informative=5, seed=0)
    pipe = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=10, n_jobs=1))
    a, b = (real_run(d.X, d.y, 5, selector=pipe, seed=s) for s in (1, 1))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, real_run(d.X, d.y, 5, selector=pipe, seed=2))


def test_bad_selector():
    d = make_microarray(n_feature=20, n_informative=2, seed=0)
    with pytest.raises(TypeError, match="selector must be"):
        real_run(d.X, d.y, 2, selector=42)
    with pytest.raises(ValueError, match="scores of shape"):
        real_run(d.X, d.y, 2, selector=lambda X, y, rng: np.zeros(3))
    # What a selector returned is said, not numpy's words about it (nor its contents).
    for returned, said in [
        (["up"] * 20, "a list of text with shape (20,)"),
        (None, "None"),
        (0.5, "a single float"),
        ([[1.0], [1.0, 2.0]], "a list of rows of different lengths"),
    ]:
        with pytest.raises(ValueError, match=rf"^the selector returned {re.escape(said)}, not one score per feature$"):
            real_run(d.X, d.y, 2, selector=lambda X, y, rng, r=returned: r)
    # A callable of the wrong arity fails before anything is sent to a worker.
    with pytest.raises(TypeError, match=r"selector: a callable selector is called as selector\(X, y, rng\)"):
        es.estimate(d.X, d.y, 2, selector=lambda X, y: np.zeros(20), client="tcp://127.0.0.1:9")


def test_real_runs_identical_on_a_cluster_and_batched(two_process_client):
    d = make_microarray(n_feature=200, n_informative=10, effect=2.0, seed=0)
    sel = default_selector(n_estimators=20)
    ref = real_runs(d.X, d.y, 10, Pool(6, seed=9), selector=sel, client="synchronous")
    got = real_runs(d.X, d.y, 10, Pool(6, seed=9), selector=sel, client=two_process_client, batch_size=4)
    assert np.array_equal(ref, got)
    # Run i is seeded derive(seed, Stream.REAL_RUNS, i): one run equals the i-th of the batch.
    from ensstab_dask.seeding import Stream, derive

    assert np.array_equal(real_run(d.X, d.y, 10, selector=sel, seed=derive(9, Stream.REAL_RUNS, 3)), ref[3])


def _column_sum(X, j):
    return float(X[:, j].sum())


def test_back_to_back_calls_with_the_same_data_keep_their_inputs(two_process_client):
    """map_shared scatters the data once per call. With content-hashed keys two calls in a
    row on the same data shared keys, and the first call's clean-up could delete the
    second's inputs ("lost dependencies"): the estimate with calibration_layout='ensemble'
    and the validation benchmark hit it. 30 calls in a row must all succeed."""
    from ensstab_dask.cluster import map_shared

    X = np.arange(600.0).reshape(20, 30)
    for _ in range(30):
        assert map_shared(_column_sum, (X,), [(j,) for j in range(4)], client=two_process_client) == [
            float(X[:, j].sum()) for j in range(4)
        ]


def test_data_the_method_cannot_use_is_the_packages_error_naming_x():
    """Complex or string X was a plain TypeError, which the CLI shows as a traceback; it is
    the package's error (still a TypeError, and a ValueError), as every other refusal of X."""
    for X in (np.ones((6, 3)) * 1j, [["a", "b"]] * 6):
        with pytest.raises(es.InvalidParameterError, match="^X must be") as info:
            check_data(X, [0, 1] * 3)
        assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_values_beyond_float32_are_refused_before_any_run():
    """1e39 passed the float64 check, and the forest's float32 cast refused it in the first run."""
    X = np.ones((6, 3))
    X[4, 2] = -1e39
    with pytest.raises(es.InvalidParameterError, match=r"float32's range.*1 values; first at sample 4, feature 2"):
        check_data(X, [0, 1] * 3)
    X[4, 2] = 3e38  # float32 holds it
    check_data(X, [0, 1] * 3)


def test_files_that_are_not_data_are_called_what_they_are(tmp_path):
    """A header-only CSV was "feature columns must be numeric", a FIFO "does not exist",
    an .npz of Python objects a ValueError traceback."""
    (tmp_path / "h.csv").write_text("a,b,label\n")
    with pytest.raises(es.InvalidParameterError, match="h.csv: a header and no rows"):
        load_dataset(tmp_path / "h.csv")
    os.mkfifo(tmp_path / "d.npz")
    with pytest.raises(es.InvalidParameterError, match="is not a regular file .a FIFO"):
        load_dataset(tmp_path / "d.npz")
    np.savez(tmp_path / "o.npz", X=np.array([[1, "a"]] * 6, dtype=object), y=[0, 1] * 3)
    with pytest.raises(es.InvalidParameterError, match="o.npz: X, y and feature_names must be numeric or string"):
        load_dataset(tmp_path / "o.npz")


def _not_converging():
    """Data, and a logistic regression allowed one iteration: no run of it converges."""
    from sklearn.linear_model import LogisticRegression

    X = np.random.default_rng(0).normal(size=(40, 60))
    X[20:, :5] += 1.0
    return X, np.repeat([0, 1], 20), LogisticRegression(max_iter=1)


@pytest.mark.parametrize("where", ["processes", "threads", "synchronous"])
def test_a_selector_that_does_not_converge_is_said_once_with_the_count(where, two_process_client, recwarn):
    """A logistic regression that does not converge warned in every run of every worker
    process: 590 lines under --quiet. Now one warning says how many runs did not converge;
    the runs are as before; and the warnings machinery is left as it was found."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y, selector = _not_converging()
    client = two_process_client if where == "processes" else where
    before = (warnings.showwarning, list(warnings.filters))
    ranks = real_runs(X, y, 5, Pool(12), selector=selector, client=client, batch_size=3, progress=False)
    assert (warnings.showwarning, list(warnings.filters)) == before
    said = [w for w in recwarn if issubclass(w.category, ConvergenceWarning)]
    assert len(said) == 1, [str(w.message)[:80] for w in said]
    assert str(said[0].message).startswith("the selector did not converge in 12 of 12 real runs")
    np.testing.assert_array_equal(
        ranks, real_runs(X, y, 5, Pool(12), selector=selector, client="synchronous", progress=False)
    )


# What a file holds is never echoed; its slips are said out loud ------------------------------------

SECRET = "root:$6$Zk3vQ9SECRET7hashAbCdEf:19000:0:99999:7:::"
#: estimate's smallest run, for the cases where the point is what is said while reading the data.
TINY = ["--n-target", "3", "--n-estimators", "5", "--m-ensemble", "1,5", "--n-boot", "0"]
TINY += ["--scheduler", "synchronous", "--quiet"]


def _write_secret(path: Path) -> None:
    suffix = path.suffix
    if suffix == ".csv" and path.stem == "shadow":  # /etc/shadow copied as a CSV: one column, no commas
        path.write_text((SECRET + "\n") + "daemon:*:19000:0:99999:7:::\n" * 5)
    elif suffix == ".csv" and path.stem == "latin":  # not UTF-8: the decoder would quote the byte
        path.write_bytes(b"a,b,label\n\xe9" + SECRET.encode() + b",1,0\n1,2,1\n")
    elif suffix == ".csv":  # a value that is not a number, in a feature column
        rows = [f"{SECRET if i == 2 else i},{i},{i % 2}" for i in range(6)]
        path.write_text("a,b,label\n" + "\n".join(rows) + "\n")
    elif suffix == ".npz" and path.stem == "strings":  # numbers as text: scikit-learn would quote the first
        np.savez(path, X=np.full((6, 3), SECRET), y=[0, 1] * 3)
    elif suffix == ".mat" and path.stem == "chars":
        savemat(path, {"X": np.array([SECRET] * 6), "Y": np.array([[0], [1]] * 3)})
    else:  # the secret file itself, named as a data file
        path.write_text(SECRET + "\n")


@pytest.mark.parametrize(
    "name", ["shadow.csv", "latin.csv", "values.csv", "secret.npz", "strings.npz", "secret.mat", "chars.mat"]
)
def test_an_error_names_the_file_and_what_is_wrong_never_its_contents(tmp_path, name, capsys):
    """``--data /etc/shadow`` copied as ``x.csv`` printed the file's first line: the CSV's
    one "column name" was listed as the columns to choose the label from."""
    from ensstab_dask.cli import main

    path = tmp_path / name
    _write_secret(path)
    with pytest.raises(es.InvalidParameterError) as info:
        load_dataset(path)
    assert "SECRET" not in str(info.value)
    assert name in str(info.value) or name.startswith("strings")  # check_data names X, not the file
    assert main(["estimate", "--data", str(path), *TINY]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ensstab: error: ") and "SECRET" not in err, err
    assert "Zk3vQ9" not in err and "$6$" not in err


def test_a_csv_of_one_column_is_not_a_data_file(tmp_path):
    _write_secret(tmp_path / "shadow.csv")
    with pytest.raises(es.InvalidParameterError, match=r"shadow.csv: the header has 1 column\(s\); a CSV data file"):
        load_dataset(tmp_path / "shadow.csv", label="y")


def _csv(path: Path, header: list[str], X: np.ndarray, y, *, index=None) -> Path:
    columns = [*header]
    rows = []
    for i, (row, label) in enumerate(zip(X, y)):
        cells = [repr(float(v)) for v in row]
        rows.append(",".join(([str(index[i])] if index is not None else []) + cells + [str(label)]))
    path.write_text(",".join(columns) + "\n" + "\n".join(rows) + "\n")
    return path


def _dataset(n: int = 30, p: int = 6):
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, p)), np.repeat([0, 1], n // 2)


def _warned(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "ensstab_dask.real.datasets"]


def test_repeated_csv_feature_names_are_made_unique_as_scanpy_does_and_said(tmp_path, caplog):
    """``f0`` twice was read as ``f0`` and ``f0.1`` (pandas' renaming) without a word."""
    X, y = _dataset()
    path = _csv(tmp_path / "d.csv", ["f0", "f0", "f2", "f0", "f4", "f0-1", "label"], X, y)
    d = load_dataset(path)
    assert d.feature_names.tolist() == ["f0", "f0-2", "f2", "f0-3", "f4", "f0-1", "label"][:-1]
    np.testing.assert_allclose(d.X, X)
    (said,) = _warned(caplog)
    assert said.startswith(f"{path}: 1 feature name(s) repeat ('f0' x3): made unique as scanpy's var_names_make_unique")
    assert "('f0', 'f0-2', 'f0-3')" in said


def test_make_names_unique_is_anndatas_rule():
    anndata = pytest.importorskip("anndata")
    pd = pytest.importorskip("pandas")
    names = ["a", "a", "b", "a", "a-1", "b", ""]
    ours = es.real.datasets.make_names_unique(names).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anndata warns that "a-1" was taken
        theirs = anndata.utils.make_index_unique(pd.Index(names)).tolist()
    assert ours == theirs == ["a", "a-2", "b", "a-3", "a-1", "b-1", ""]


def test_npz_feature_names_all_equal_are_made_unique_and_said(tmp_path, caplog):
    X, y = _dataset()
    np.savez(tmp_path / "d.npz", X=X, y=y, feature_names=np.array(["gene"] * X.shape[1]))
    d = load_dataset(tmp_path / "d.npz")
    assert d.feature_names.tolist() == ["gene"] + [f"gene-{i}" for i in range(1, X.shape[1])]
    (said,) = _warned(caplog)
    assert "1 feature name(s) repeat ('gene' x6)" in said


@pytest.mark.parametrize("label", [None, "label", -1])
def test_a_label_column_given_twice_is_refused(tmp_path, label):
    """The second ``label`` became a feature, ranked among the first."""
    X, y = _dataset()
    path = _csv(
        tmp_path / "d.csv",
        ["f0", "label", "f2", "f3", "f4", "f5", "label"],
        np.column_stack([X[:, :1], y, X[:, 2:]]),
        y,
    )
    with pytest.raises(
        es.InvalidParameterError,
        match=r"d.csv: the label column 'label' appears 2 times in the header \(columns 1 and 6\)",
    ):
        load_dataset(path, label=label)


@pytest.mark.parametrize("written", ["pandas", "R", "twice"])
def test_the_row_names_column_is_read_as_sample_ids_not_a_feature(tmp_path, written, caplog):
    """``DataFrame.to_csv()`` writes the index as a first column named ''; sorted by class,
    that column (``Unnamed: 0``) was the 2nd best feature."""
    pd = pytest.importorskip("pandas")
    X, y = _dataset()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(label=y)
    path = tmp_path / "d.csv"
    if written == "pandas":
        frame.sort_values("label").to_csv(path)
        index = ["''"]
    elif written == "R":  # write.csv: a quoted empty name, the row names as strings
        frame.index = [f"sample{i}" for i in range(len(frame))]
        frame.to_csv(path, quoting=1)
        index = ["''"]
    else:  # written, read back without index_col, written again
        frame.to_csv(path)
        pd.read_csv(path).to_csv(path)
        index = ["''", "'Unnamed: 0'"]
    d = load_dataset(path)
    assert d.feature_names.tolist() == [f"f{j}" for j in range(X.shape[1])]
    assert d.X.shape == X.shape
    (said,) = _warned(caplog)
    assert said.startswith(f"{path}: the first column") and " and ".join(index) in said
    assert "read as sample ids" in said and "index=False" in said


def test_repeated_samples_are_counted_in_one_warning(tmp_path, caplog):
    X, y = _dataset()
    np.savez(tmp_path / "d.npz", X=np.vstack([X, X]), y=np.concatenate([y, y]))
    load_dataset(tmp_path / "d.npz")
    (said,) = _warned(caplog)
    assert said.startswith(f"{tmp_path / 'd.npz'}: 30 of 60 samples repeat an earlier one (same values, same label)")
    caplog.clear()
    X2 = np.vstack([X, X[:3] * -0.0 + X[:3]])  # one value, -0.0 and 0.0 alike
    np.savez(tmp_path / "e.npz", X=X2, y=np.concatenate([y, 1 - y[:3]]))
    load_dataset(tmp_path / "e.npz")
    (said,) = _warned(caplog)
    assert "3 repeat an earlier sample's values under another label" in said and "same label" not in said
    caplog.clear()
    load_dataset(_csv(tmp_path / "ok.csv", [f"f{j}" for j in range(6)] + ["label"], X, y))
    assert _warned(caplog) == []


def test_the_cli_says_each_slip_in_one_line_and_runs(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    from ensstab_dask.cli import main

    X, y = _dataset()
    frame = pd.DataFrame(X, columns=["f0", "f0", "f2", "f3", "f4", "f5"]).assign(label=y)
    pd.concat([frame, frame]).reset_index(drop=True).to_csv(tmp_path / "d.csv")
    assert main(["estimate", "--data", str(tmp_path / "d.csv"), *TINY]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    said = [line for line in lines if line.startswith(str(tmp_path / "d.csv"))]
    assert len(said) == 3, lines
    assert "read as sample ids" in said[0] and "('f0' x2)" in said[1] and "30 of 60 samples repeat" in said[2]


def test_a_label_that_is_a_column_name_and_a_position_is_the_name_and_said(tmp_path, caplog, capsys):
    """``--label 0`` where a column is named ``0`` took the first column, by position."""
    from ensstab_dask.cli import main
    from ensstab_dask.cli._common import load_data
    from ensstab_dask.cli._parser import build_parser

    X, y = _dataset()
    path = _csv(tmp_path / "d.csv", [f"f{j}" for j in range(6)] + ["0"], X, y)
    d = load_dataset(path, label=0)
    assert d.y.tolist() == y.tolist() and d.feature_names.tolist() == [f"f{j}" for j in range(6)]
    (said,) = _warned(caplog)
    assert said == (
        f"{path}: label 0 names a column and is a position: the column named '0' (column 6) is the label, "
        "not column 0 ('f0'); to use that one, give its name"
    )
    data, _, _ = load_data(build_parser().parse_args(["estimate", "--data", str(path), "--label", "0"]))
    assert data.y.tolist() == y.tolist()
    # Where the name is the position, or no column has that name, there is nothing to say.
    caplog.clear()
    path = _csv(tmp_path / "e.csv", ["0"] + [f"f{j}" for j in range(1, 6)] + ["label"], X, y)
    assert load_dataset(path, label=-1).y.tolist() == y.tolist()
    assert load_dataset(path, label="label").y.tolist() == y.tolist()
    assert _warned(caplog) == []
    assert main(["estimate", "--data", str(path), "--label", "0", *TINY]) == 2  # X[:, 0] is no class label
    assert "the label column '0' holds fractions, not class labels" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".mat", ".npz"])
def test_a_label_column_for_a_format_without_columns_is_refused(tmp_path, suffix, capsys):
    """``--label`` on a .mat or .npz file was dropped without a word."""
    from ensstab_dask.cli import main

    X, y = _dataset()
    path = tmp_path / f"d{suffix}"
    savemat(path, {"X": X, "Y": y[:, None]}) if suffix == ".mat" else np.savez(path, X=X, y=y)
    with pytest.raises(es.InvalidParameterError, match=r"^label is for .csv and .h5ad files, which have label columns"):
        load_dataset(path, label="y")
    assert main(["estimate", "--data", str(path), "--label", "y", *TINY]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ensstab: error: --label is for .csv and .h5ad files") and f"{path} holds its labels" in err
    assert load_dataset(path).y.tolist() == y.tolist()


def test_a_two_column_y_is_named_by_its_shape(tmp_path):
    """It was "30 samples in X, 60 labels in y": the loader had flattened it."""
    X, y = _dataset()
    np.savez(tmp_path / "d.npz", X=X, y=np.column_stack([y, y]))
    with pytest.raises(
        es.InvalidParameterError, match=r"^y must be 1-D \(one label per sample\); got shape \(30, 2\)$"
    ):
        load_dataset(tmp_path / "d.npz")
    savemat(tmp_path / "d.mat", {"X": X, "Y": np.column_stack([y, y])})
    with pytest.raises(es.InvalidParameterError, match=r"got shape \(30, 2\)$"):
        load_dataset(tmp_path / "d.mat")
    savemat(tmp_path / "row.mat", {"X": X, "Y": y[None, :]})  # a row of labels is one label per sample
    assert load_dataset(tmp_path / "row.mat").y.tolist() == y.tolist()


def test_a_file_named_npz_that_is_not_an_archive_is_called_what_it_is(tmp_path):
    """numpy's answer was to load it unsafely with allow_pickle; a lone .npy was a traceback."""
    import gzip

    X, y = _dataset()
    np.savez(tmp_path / "real.npz", X=X, y=y)
    (tmp_path / "gz.npz").write_bytes(gzip.compress((tmp_path / "real.npz").read_bytes()))
    (tmp_path / "text.npz").write_text("X,y\n1,0\n")
    np.save(tmp_path / "lone.npy", X)
    (tmp_path / "lone.npy").rename(tmp_path / "lone.npz")
    (tmp_path / "cut.npz").write_bytes((tmp_path / "real.npz").read_bytes()[:300])
    expected = {
        "gz.npz": "a gzip file, not a NumPy .npz archive: gunzip it",
        "text.npz": re.escape("not a NumPy .npz archive (the zip of arrays that numpy.savez(path, X=X, y=y) writes)"),
        "lone.npz": r"a single NumPy array \(.npy\), not a NumPy .npz archive of X and y",
        "cut.npz": "not a readable NumPy .npz archive",
    }
    for name, match in expected.items():
        with pytest.raises(es.InvalidParameterError, match=match) as info:
            load_dataset(tmp_path / name)
        assert "pickle" not in str(info.value), str(info.value)


def test_a_mat_file_whose_x_is_not_numbers_says_what_it_is(tmp_path):
    """A cell array X was "setting an array element with a sequence"."""
    X, y = _dataset()
    cells = np.empty((len(X), 1), dtype=object)
    for i, row in enumerate(X):
        cells[i, 0] = row
    savemat(tmp_path / "cell.mat", {"X": cells, "Y": y[:, None]})
    with pytest.raises(es.InvalidParameterError, match=r"cell.mat: X must be a numeric matrix, not a cell array$"):
        load_dataset(tmp_path / "cell.mat")
    labels = np.empty((len(y), 1), dtype=object)
    labels[:, 0] = ["a" if v else "b" for v in y]
    savemat(tmp_path / "celly.mat", {"X": X, "Y": labels})
    with pytest.raises(es.InvalidParameterError, match=r"Y must be a numeric vector of labels, not a cell array$"):
        load_dataset(tmp_path / "celly.mat")


@pytest.mark.parametrize("names", [["a", "b", "c"], [["a"] * 6] * 2], ids=["too few", "2-D"])
def test_feature_names_of_another_shape_are_refused_when_read(tmp_path, names):
    """Too few names were refused only once the work was done; a 2-D array of them was a traceback."""
    X, y = _dataset()
    np.savez(tmp_path / "d.npz", X=X, y=y, feature_names=np.array(names))
    with pytest.raises(
        es.InvalidParameterError, match=r"d.npz: feature_names must hold one name per feature of X \(6\)"
    ):
        load_dataset(tmp_path / "d.npz")
