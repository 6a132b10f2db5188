"""A user's CSV as pandas or a spreadsheet writes it: the index ``to_csv()`` writes, a
column of sample ids, and genes as rows are each read, or refused in one line that says
what to pass, before any work starts."""

import logging

import numpy as np
import pytest

from ensstab_dask.cli import main
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import load_dataset

pd = pytest.importorskip("pandas")

N, P = 8, 12
NAMES = [f"g{i:05d}" for i in range(P)]


def _frame() -> "pd.DataFrame":
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(N, P)), columns=NAMES, index=[f"s{i}" for i in range(N)])
    return frame.assign(label=np.array(["a", "b"] * (N // 2)))


def _genes_as_rows(frame, *, label_row: bool) -> "pd.DataFrame":
    table = frame[NAMES].T.astype(object)
    if label_row:
        table.loc["label"] = frame["label"].to_numpy()
    return table


def _counts() -> "pd.DataFrame":
    rng = np.random.default_rng(0)
    index = [f"s{i}" for i in range(N)]
    return pd.DataFrame(rng.poisson(3, size=(N, 40)), columns=[f"g{i:05d}" for i in range(40)], index=index)


#: Each file as a user writes it: how it is written, the label asked for, and then either
#: the shape read and the sample-id warning's words, or the one-line refusal and its hint.
CASES = {
    "to_csv, string index": (lambda f, p: f.to_csv(p), "label", (N, P), "named '', is read as sample ids"),
    "to_csv, int index": (lambda f, p: f.reset_index(drop=True).to_csv(p), "label", (N, P), "named ''"),
    "index named sample_id": (
        lambda f, p: f.rename_axis("sample_id").to_csv(p),
        "label",
        (N, P),
        "named 'sample_id', is read as sample ids, not as a feature (its values are text",
    ),
    "sample column, index=False": (
        lambda f, p: f.rename_axis("sample").reset_index().to_csv(p, index=False),
        "label",
        (N, P),
        "named 'sample', is read as sample ids",
    ),
    "numeric index named id": (
        lambda f, p: _counts().reset_index(drop=True).rename_axis("id").assign(label=[0, 1] * (N // 2)).to_csv(p),
        "label",
        (N, 40),
        "named 'id', is read as sample ids, not as a feature (its values are whole numbers",
    ),
    "genes as rows, label row": (
        lambda f, p: _genes_as_rows(f, label_row=True).to_csv(p),
        "label",
        (N, P),
        "read as one column per sample (each row a feature), because the label 'label' is a row name",
    ),
    "genes as rows, floats, a sample as label": (
        lambda f, p: _genes_as_rows(f, label_row=False).to_csv(p),
        "s0",
        None,
        "the label column 's0' holds fractions, not class labels, in more rows (12) than features (7): is the "
        "file one column per sample? name its label row, with transpose=True",
    ),
    "genes as rows, counts, a sample as label": (
        lambda f, p: _counts().T.rename_axis("gene").to_csv(p),
        "s0",
        None,
        "not class labels, in more rows (40) than features (7): is the file one column per sample? name its "
        "label row, with transpose=True",
    ),
    "genes as rows, counts, no label": (
        lambda f, p: _counts().T.rename_axis("gene").to_csv(p),
        None,
        None,
        "choose the label column with label=...; columns start ['gene', 's0', 's1', 's2', 's3'] (a file of one "
        "column per sample: name its label row, with transpose=True)",
    ),
    "a text column among the features": (
        lambda f, p: f.assign(batch=["x", "y"] * (N // 2)).to_csv(p, index=False),
        "label",
        None,
        "feature columns must be numeric; 1 of 13 are not, the first ['batch']: leave them out of the file, or "
        "name a column of sample ids with index_col=NAME",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_csv_as_written_is_read_or_refused_in_one_line_with_the_hint(tmp_path, case, caplog):
    write, label, shape, words = CASES[case]
    path = tmp_path / "d.csv"
    write(_frame(), path)
    caplog.set_level(logging.WARNING, logger="ensstab_dask")
    if shape is None:
        with pytest.raises(InvalidParameterError) as info:
            load_dataset(path, label=label)
        message = str(info.value)
        assert "\n" not in message and words in message, message
        return
    data = load_dataset(path, label=label)
    assert data.X.shape == shape
    assert data.feature_names[0] == "g00000" and "id" not in data.feature_names.tolist()
    assert sorted(set(map(str, data.y))) in (["a", "b"], ["0", "1"])
    assert any(words in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]


def test_genes_as_rows_read_transposed_holds_the_same_numbers_as_the_samples_file(tmp_path):
    frame = _frame()
    frame.to_csv(tmp_path / "samples.csv")
    _genes_as_rows(frame, label_row=True).to_csv(tmp_path / "genes.csv")
    rows = load_dataset(tmp_path / "samples.csv")
    for transpose in (None, True):
        genes = load_dataset(tmp_path / "genes.csv", transpose=transpose)
        np.testing.assert_array_equal(genes.X, rows.X)  # each number parsed from the same text
        assert genes.y.tolist() == rows.y.tolist() and genes.feature_names.tolist() == NAMES
    with pytest.raises(InvalidParameterError, match=r"'label' is a row name, not a column: .* with transpose=True$"):
        load_dataset(tmp_path / "genes.csv", transpose=False)


def test_index_col_by_name_or_position_and_false_for_none(tmp_path, caplog):
    path = tmp_path / "d.csv"
    _counts().reset_index(drop=True).rename_axis("id").assign(label=[0, 1] * (N // 2)).to_csv(path)
    caplog.set_level(logging.WARNING, logger="ensstab_dask")
    by_name, by_position = load_dataset(path, index_col="id"), load_dataset(path, index_col=0)
    assert caplog.records == []  # chosen, not guessed: nothing to say
    np.testing.assert_array_equal(by_name.X, by_position.X)
    assert by_name.X.shape == (N, 40)
    every = load_dataset(path, index_col=False)  # the ids as a feature, as asked
    assert every.X.shape == (N, 41) and every.feature_names[0] == "id"
    np.testing.assert_array_equal(every.X[:, 0], np.arange(N))
    for bad, words in [("label", "index_col 'label' is the label column"), ("nope", "index_col 'nope' is missing")]:
        with pytest.raises(InvalidParameterError, match=words):
            load_dataset(path, index_col=bad)
    with pytest.raises(InvalidParameterError, match="index_col 99 is out of range for 42 columns"):
        load_dataset(path, index_col=99)


def test_a_numeric_first_column_under_another_name_stays_a_feature(tmp_path):
    """Whole numbers, one per row, are ids only under an id's name: a count feature is not."""
    path = tmp_path / "d.csv"
    _counts().rename(columns={"g00000": "age"}).assign(age=np.arange(N) + 30, label=[0, 1] * (N // 2)).to_csv(
        path, index=False
    )
    assert load_dataset(path).feature_names[0] == "age"


def test_csv_options_are_refused_for_other_formats(tmp_path):
    np.savez(tmp_path / "d.npz", X=np.zeros((4, 2)), y=[0, 1, 0, 1])
    with pytest.raises(InvalidParameterError, match=r"^index_col is for .csv files; .*d.npz is not one"):
        load_dataset(tmp_path / "d.npz", index_col=0)
    with pytest.raises(InvalidParameterError, match=r"^transpose is for .csv files"):
        load_dataset(tmp_path / "d.npz", transpose=False)
    with pytest.raises(InvalidParameterError, match=r"^layer is for .h5ad files"):
        load_dataset(tmp_path / "d.npz", layer="counts")


# The CLI: a to_csv() file runs; genes as rows runs (detected) or is refused in one line, exit
# 2, no traceback, before any cluster starts.

TINY = ["--n-target", "3", "--n-estimators", "5", "--m-ensemble", "1,5", "--n-boot", "0", "--quiet"]


@pytest.fixture
def no_cluster(monkeypatch):
    """Any local cluster started fails the test."""
    import distributed

    def refused(*args, **kwargs):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(distributed, "LocalCluster", refused)


def test_cli_estimate_runs_on_a_to_csv_file(tmp_path, capsys):
    path = tmp_path / "d.csv"
    frame = _frame()
    frame = pd.concat([frame] * 2).set_axis([f"s{i}" for i in range(2 * N)])  # classes of 8: halves of 4
    frame[NAMES] += np.random.default_rng(1).normal(size=(2 * N, P))
    frame.rename_axis("sample_id").to_csv(path)
    assert main(["estimate", "--data", str(path), "--label", "label", "--scheduler", "synchronous", *TINY]) == 0
    captured = capsys.readouterr()
    assert f"data: {path}; X {2 * N} x {P}; 2 classes: a (8), b (8)" in captured.out
    assert "named 'sample_id', is read as sample ids" in captured.err and "pass --no-index-col" in captured.err


@pytest.mark.parametrize("flags", [[], ["--transpose"]])
def test_cli_genes_as_rows_runs_detected_or_transposed(tmp_path, capsys, flags):
    path = tmp_path / "genes.csv"
    frame = _frame()
    frame = pd.concat([frame] * 2).set_axis([f"s{i}" for i in range(2 * N)])
    frame[NAMES] += np.random.default_rng(1).normal(size=(2 * N, P))
    _genes_as_rows(frame, label_row=True).to_csv(path)
    assert main(["estimate", "--data", str(path), "--scheduler", "synchronous", *flags, *TINY]) == 0
    captured = capsys.readouterr()
    assert f"X {2 * N} x {P}; 2 classes: a (8), b (8)" in captured.out
    said = "read as one column per sample (each row a feature), because the label 'label' is a row name"
    assert (said in captured.err) == (not flags)


@pytest.mark.parametrize(
    "write, flags, words",
    [
        (
            lambda p: _genes_as_rows(_frame(), label_row=True).to_csv(p),
            ["--no-transpose"],
            "'label' is a row name, not a column: the file holds one column per sample; read it with --transpose",
        ),
        (
            lambda p: _counts().T.rename_axis("gene").to_csv(p),
            ["--label", "s0"],
            "is the file one column per sample? name its label row, with --transpose",
        ),
        (
            lambda p: _genes_as_rows(_frame(), label_row=False).to_csv(p),
            ["--label", "s0"],
            "holds fractions, not class labels",
        ),
        (lambda p: _frame().to_csv(p), ["--index-col", "0", "--no-index-col"], "contradict each other"),
    ],
)
def test_cli_a_shape_problem_is_one_line_exit_2_before_any_cluster(tmp_path, capsys, no_cluster, write, flags, words):
    path = tmp_path / "genes.csv"
    write(path)
    assert main(["estimate", "--data", str(path), *flags, *TINY]) == 2  # the default scheduler: a local cluster
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("ensstab: error: ")]
    assert len(errors) == 1 and words in errors[0] and err.endswith(errors[0] + "\n"), err
    assert "Traceback" not in err and len(err.splitlines()) <= 2  # at most a warning of what was read before


def _sorted_study(n: int = 30, p: int = 8) -> "pd.DataFrame":
    """A study as a lab exports it: rows sorted by class, so a numbering follows the label."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"f{j}" for j in range(p)])
    return frame.assign(label=np.repeat([0, 1], n // 2))


@pytest.mark.parametrize(
    "name, values, why",
    [
        ("sample_id", np.arange(100, 130), "its values are whole numbers, one per row, under a name of sample ids"),
        ("barcode", [f"AACG{i:03d}" for i in range(30)], "its values are text, one per row"),
        ("Unnamed: 9", np.arange(30), "its values are whole numbers, one per row, under a name of sample ids"),
        ("order", np.random.default_rng(0).permutation(30) + 1, "its values are the whole numbers 1 to 30"),
    ],
    ids=["sample_id last", "barcode text", "pandas' empty name", "a numbering under another name"],
)
def test_a_column_of_ids_anywhere_is_read_as_sample_ids_and_said(tmp_path, caplog, name, values, why):
    """The label must not leak: ids numbered in the order of the classes would rank among the
    best features."""
    path = tmp_path / "d.csv"
    _sorted_study().assign(**{name: values}).to_csv(path, index=False)
    caplog.set_level(logging.WARNING, logger="ensstab_dask")
    data = load_dataset(path)
    assert data.feature_names.tolist() == [f"f{j}" for j in range(8)]
    (said,) = [r.getMessage() for r in caplog.records if "sample ids" in r.getMessage()]
    assert f"the last column, named '{name}', is read as sample ids, not as a feature ({why}" in said
    assert said.endswith("pass index_col=False to read it as a feature")
    if name != "barcode":  # text is no feature either way
        assert load_dataset(path, index_col=False).feature_names.tolist()[-1] == name  # undone as said


def test_a_column_named_like_ids_whose_values_repeat_is_refused(tmp_path):
    path = tmp_path / "d.csv"
    _sorted_study().assign(patient_id=np.repeat(np.arange(15), 2)).to_csv(path, index=False)
    with pytest.raises(InvalidParameterError) as info:
        load_dataset(path)
    assert "the last column, named 'patient_id', reads as sample ids, but its values are not one per row" in str(
        info.value
    )
    assert load_dataset(path, index_col=False).X.shape == (30, 9)
    assert load_dataset(path, index_col="patient_id").X.shape == (30, 8)


def test_repeated_sample_ids_are_said(tmp_path, caplog):
    path = tmp_path / "d.csv"
    _sorted_study().assign(sample=[f"s{i % 27}" for i in range(30)]).to_csv(path, index=False)
    caplog.set_level(logging.WARNING, logger="ensstab_dask")
    assert load_dataset(path, index_col="sample").X.shape == (30, 8)
    (said,) = [r.getMessage() for r in caplog.records]
    assert said == (
        f"{path}: 3 of 30 sample ids repeat an earlier one ('s0' x2, 's1' x2, 's2' x2): is a sample in the file "
        "twice? a resample then holds copies of one sample, and the selection looks more stable than it is"
    )


@pytest.mark.parametrize(
    "name, values, why",
    [
        ("SampleID", np.arange(100, 130), "under a name of sample ids"),
        ("PatientID", np.arange(100, 130), "under a name of sample ids"),
        ("patient", np.arange(1, 31), "under a name of sample ids"),
        ("subject", [f"S{i:02d}" for i in range(30)], "its values are text, one per row"),
        ("order", np.arange(1, 61, 2), "the whole numbers 1 to 59 in steps of 2, one per row: a numbering"),
    ],
)
def test_ids_the_last_round_read_as_features_are_read_as_ids(tmp_path, caplog, name, values, why):
    """Each of these, sorted by class, once ranked 3rd of 41 as a feature, without a word."""
    path = tmp_path / "d.csv"
    _sorted_study().assign(**{name: values}).to_csv(path, index=False)
    caplog.set_level(logging.WARNING, logger="ensstab_dask")
    assert load_dataset(path).feature_names.tolist() == [f"f{j}" for j in range(8)]
    (said,) = [r.getMessage() for r in caplog.records if "sample ids" in r.getMessage()]
    assert f"named '{name}', is read as sample ids" in said and why in said
    if not isinstance(values[0], str):  # a numbering of rows sorted by class gives the label away: said
        assert "it alone separates the classes perfectly" in said


@pytest.mark.parametrize(
    "values, kind",
    [
        (np.sort(np.random.default_rng(1).choice(10_000, 30, replace=False)), "values monotone in row order"),
        (np.cumsum(np.random.default_rng(1).random(30)), "values monotone in row order"),
        (
            np.r_[np.random.default_rng(1).permutation(15), 100 + np.random.default_rng(2).permutation(15)] * 7 + 3,
            "whole numbers, one per row",
        ),
    ],
    ids=["sorted codes", "a timestamp", "unordered whole numbers"],
)
def test_a_column_that_alone_gives_the_label_away_is_named_before_any_run(tmp_path, caplog, values, kind):
    """No name list catches every id column: one that is unique whole numbers or monotone in
    row order, and alone separates the classes, is named with the two ways out."""
    path = tmp_path / "d.csv"
    _sorted_study().assign(record=values).to_csv(path, index=False)
    caplog.set_level(logging.WARNING, logger="ensstab_dask")
    assert load_dataset(path).feature_names.tolist()[-1] == "record"  # kept as it is
    (said,) = [r.getMessage() for r in caplog.records]
    assert f"the last column, named 'record', is read as a feature, and holds {kind}; it alone separates" in said
    assert "index_col=NAME" in said and "index_col=False" in said
    caplog.clear()
    load_dataset(path, index_col=False)
    assert not caplog.records  # the user's choice, said: no more words


def test_a_column_that_orders_a_target_almost_exactly_is_named(tmp_path, caplog):
    frame = _sorted_study().drop(columns="label")
    target = np.sort(np.random.default_rng(3).normal(size=30)) + 0.01  # rows sorted by the target
    path = tmp_path / "r.csv"
    frame.assign(target=target, stamp=np.cumsum(np.random.default_rng(4).random(30))).to_csv(path, index=False)
    caplog.set_level(logging.WARNING, logger="ensstab_dask")
    load_dataset(path, task="regression")
    (said,) = [r.getMessage() for r in caplog.records]
    assert "named 'stamp', is read as a feature" in said and "orders the target almost exactly" in said


def test_genes_that_look_like_ids_stay_features(tmp_path, caplog):
    """A gene named IDS in a count matrix (its counts repeat) once refused the whole file;
    an age of 30..59 read as a numbering is said with the way out, and that it alone
    separates the classes when it does; a strong continuous marker is not named."""
    rng = np.random.default_rng(5)
    counts = _sorted_study().assign(IDS=rng.poisson(3, 30))
    counts.to_csv(tmp_path / "counts.csv", index=False)
    assert "IDS" in load_dataset(tmp_path / "counts.csv").feature_names.tolist()
    caplog.set_level(logging.WARNING, logger="ensstab_dask")
    marker = _sorted_study().assign(marker=np.r_[rng.normal(0, 1, 15), rng.normal(10, 1, 15)])
    marker.to_csv(tmp_path / "marker.csv", index=False)
    assert load_dataset(tmp_path / "marker.csv").feature_names.tolist()[-1] == "marker" and not caplog.records
    _sorted_study().assign(age=rng.permutation(np.arange(30, 60))).to_csv(tmp_path / "age.csv", index=False)
    load_dataset(tmp_path / "age.csv")
    (said,) = [r.getMessage() for r in caplog.records]
    assert "the whole numbers 30 to 59, one per row: a numbering)" in said and "index_col=False" in said
    assert load_dataset(tmp_path / "age.csv", index_col=False).feature_names.tolist()[-1] == "age"
