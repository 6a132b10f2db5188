"""Names from the data never reach a terminal raw: every name the command line prints
(class labels, groups, features, files), the logs, the answer's text and the feature table
show their control characters as escapes."""

from __future__ import annotations

import numpy as np

import ensstab_dask as es
from ensstab_dask.cli import main
from ensstab_dask.outputs.visible import visible
from ensstab_dask.real.selectors import default_selector

#: Retitles the window, clears the screen and colours what follows, on a terminal.
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31mRED"
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mRED"


def test_visible_escapes_controls_and_leaves_everything_else():
    assert visible(HOSTILE) == SHOWN
    assert visible("gène\u00a0α 1") == "gène\u00a0α 1"  # not controls: left as they are
    assert visible("a\u202eb\u2028c\x85d\x7f") == "a\\u202eb\\u2028c\\x85d\\x7f"  # bidi override, separators, C1, DEL
    assert visible("one\nline\ttab\r", keep="\n\t") == "one\nline\ttab\\r"
    assert visible(3) == "3"


def _hostile_csv(folder):
    """A label of three classes, one named HOSTILE, and a feature named HOSTILE, in a file
    whose own name holds an escape."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((45, 10))
    y = np.repeat(["a" + HOSTILE, "b", "c"], 15)
    X[y == "b", :2] += 2
    names = ["g" + HOSTILE, *(f"f{j}" for j in range(1, 10))]
    path = folder / "h\x1b[31m.csv"
    rows = [",".join([*names, "label"])] + [",".join([*map(str, X[i]), y[i]]) for i in range(45)]
    path.write_text("\n".join(rows) + "\n")
    return path


SMALL = [
    *("--n-target", "2", "--n-estimators", "5", "--m-ensemble", "1,5", "--n-boot", "0", "--scheduler", "synchronous"),
    *("--copies", "4", "--members", "5"),
]


def test_every_name_the_command_prints_is_shown_escaped(tmp_path, capsys, caplog):
    path = _hostile_csv(tmp_path)
    assert main(["estimate", "--data", str(path), *SMALL, "--no-cache", "--groupby", "label"]) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert f"3 classes: a{SHOWN} (15)" in out  # a class label on the data line
    assert f"== 'a{SHOWN}' against the rest ==" in out  # a group
    assert f"  b: g{SHOWN}" in out  # a feature, among the stable features per group
    assert "h\\x1b[31m.csv" in out  # the file
    table = tmp_path / "f.csv"
    assert (
        main(
            [
                "estimate",
                "--data",
                str(path),
                *SMALL,
                "--no-cache",
                "--classes",
                f"a{HOSTILE},b",
                "--features",
                str(table),
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err
    assert f"g{SHOWN}" in table.read_text() and "\x1b" not in table.read_text()  # the feature table


def test_an_error_and_a_log_line_naming_a_hostile_file_are_shown_escaped(tmp_path, capsys):
    path = _hostile_csv(tmp_path)
    text = path.read_text().splitlines()
    path.write_text("\n".join([text[0].replace("f1,", f"g{HOSTILE},", 1), *text[1:]]) + "\n")  # a repeated name: logged
    assert main(["estimate", "--data", str(path), *SMALL, "--no-cache", "--n-target", "20"]) == 2
    _, err = capsys.readouterr()
    assert "\x1b" not in err and "\x07" not in err
    assert "h\\x1b[31m.csv" in err and "made unique" in err  # the log line, then the error
    assert err.strip().splitlines()[-1].startswith("ensstab: error: --n-target must be < n_feature=10")


def test_the_libraries_answer_shows_names_escaped():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 12))
    y = np.repeat([0, 1], 20)
    X[y == 1, 0] += 3
    names = np.array(["g" + HOSTILE, *(f"f{j}" for j in range(1, 12))])
    kw = dict(m_ensemble=(1, 5), n_boot=0, copies=4, members=5, client="synchronous", progress=False)
    est = es.estimate(X, y, 2, feature_names=names, selector=default_selector(5), **kw)
    assert "\x1b" not in est.summary() and f"g{SHOWN}" in est.summary()
    assert "g" + HOSTILE in est.features["feature_name"].values.tolist()  # the data's names kept as they are
