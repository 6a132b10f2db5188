"""The ``ensstab`` command line: output, JSON, and one-line errors with exit status 2."""

import json
import subprocess
import sys

import pytest

from ensstab_dask.cli import UsageError, main, parse_values


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "ensstab_dask.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_simulate_prints_curve_and_writes_json(tmp_path):
    out = tmp_path / "curve.json"
    res = run("simulate", "--n-feature", "500", "--m-ensemble", "1,3", "--m-stability", "10", "--json", str(out))
    assert res.returncode == 0, res.stderr
    assert "m_ensemble" in res.stdout
    data = json.loads(out.read_text())
    assert set(data["curve"]) == {"1", "3"} and data["n_feature"] == 500
    assert all(0 <= v <= 1 for v in data["curve"].values())


@pytest.mark.parametrize(
    "args, needle",
    [
        (["simulate", "--p", "1.5"], "p must be in [0.0, 1.0]"),
        (["simulate", "--n-target", "3000"], "n_target must be in [1, 2000]"),
        (["simulate", "--m-ensemble", "1,x"], "--m-ensemble"),
        (["simulate", "--m-stability", "1"], "m_stability must be >= 2"),
        (["simulate", "--aggregate", "max"], "invalid choice"),
        (["simulate", "--n-useful", "ten"], "invalid int value"),
        (["nosuchcommand"], "invalid choice"),
    ],
)
def test_bad_input_one_line_exit_2(args, needle):
    res = run(*args)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr
    assert "Traceback" not in res.stderr


def test_parse_values():
    assert parse_values("1,5,10") == [1, 5, 10]
    assert parse_values("20:50:10") == [20, 30, 40, 50]
    assert parse_values("0.1:0.3:0.1", float) == [0.1, 0.2, 0.3]
    assert parse_values("1,4:6:1", int) == [1, 4, 5, 6]
    with pytest.raises(UsageError):
        parse_values("5:1:1")
    with pytest.raises(UsageError):
        parse_values("1,,2")


def test_main_returns_status_in_process(capsys):
    assert main(["simulate", "--n-feature", "300", "--m-ensemble", "1", "--m-stability", "5"]) == 0
    assert main(["simulate", "--p", "nan"]) == 2
    assert "NaN" in capsys.readouterr().err
