"""Every option the command line is given is used or refused in one line, before the work:
never dropped, never read as left out, never an output that replaces what it must not."""

import json

import pytest

import ensstab_dask as es
from ensstab_dask.cli import main as cli_main
from ensstab_dask.settings import EstimateSettings

SIMULATE = "simulate --n-feature 200 --n-target 5 --n-useful 20 --m-ensemble 1 --m-stability 5".split()
SMALL_SWEEP = dict(
    n_useful=[20, 40],
    p=[0.5, 0.9],
    m_ensemble=[1, 3],
    m_stability=5,
    repeats=2,
    seed=3,
    client="synchronous",
    progress=False,
)


def one_line_error(capsys) -> str:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ensstab: error: "), err
    return lines[0]


def test_simulate_json_replaces_a_file_only_with_overwrite(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    assert cli_main([*SIMULATE, "--json", str(notes)]) == 2
    assert "--json" in one_line_error(capsys) and notes.read_text() == "my notes\n"
    assert cli_main([*SIMULATE, "--json", str(notes), "--overwrite"]) == 0
    assert json.loads(notes.read_text())["curve"].keys() == {"1"}


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_json_and_output_naming_one_file_are_refused_before_the_work(tmp_path, capsys, overwrite):
    same = tmp_path / "same.out"
    assert cli_main(["estimate", "--json", str(same), "--output", str(same), *overwrite]) == 2
    assert "--json and --output name one file" in one_line_error(capsys)
    assert not same.exists()
    link = tmp_path / "link.out"
    link.symlink_to(same)  # one file by two names
    assert cli_main(["estimate", "--json", str(link), "--output", str(same), *overwrite]) == 2
    assert "name one file" in one_line_error(capsys)


@pytest.mark.parametrize(
    "args, option",
    [
        (["estimate", "--data", ""], "--data"),
        (["validate", "--data", " "], "--data"),
        (["estimate", "--json", ""], "--json"),
        (["validate", "--cache-dir", ""], "--cache-dir"),
        (["sweep", "--n-useful", "20", "--p", "0.5", "--store", ""], "--store"),
        (["sweep", "--n-useful", "20", "--p", "0.5", "--output", ""], "--output"),
        ([*SIMULATE, "--json", ""], "--json"),
        (["export", "", "x.nc"], "STORE"),
        (["verify", ""], "STORE"),
        (["report", "", "-o", "r"], "RESULT"),
    ],
)
def test_an_empty_path_is_refused_not_read_as_the_option_left_out(tmp_path, monkeypatch, capsys, args, option):
    """``--data "$FILE"`` with FILE unset ran on the embedded data; ``--store ''`` took the
    working folder and left a lock file beside it."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert cli_main(args) == 2
    line = one_line_error(capsys)
    assert f"argument {option}: an empty path" in line, line
    assert list(tmp_path.iterdir()) == [work] and not list(work.iterdir())  # no lock file, no output


def test_the_library_refuses_an_empty_store_path(tmp_path, monkeypatch):
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    with pytest.raises(ValueError, match="store is an empty path"):
        es.sweep(300, 10, store="", **SMALL_SWEEP)
    assert [p.name for p in tmp_path.iterdir()] == ["work"]


@pytest.mark.parametrize("seed", [2**63, 10**30])
def test_simulate_refuses_a_seed_it_could_not_record(tmp_path, capsys, seed):
    out = tmp_path / "c.json"
    assert cli_main([*SIMULATE, "--seed", str(seed), "--json", str(out)]) == 2
    assert "--seed must be in [0, 9223372036854775807]" in one_line_error(capsys)
    assert not out.exists()
    assert cli_main([*SIMULATE, "--seed", str(2**63 - 1), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["seed"] == 2**63 - 1


@pytest.fixture(scope="module")
def sweep_nc(tmp_path_factory):
    """A small sweep with m_ensemble = 1, and one without it."""
    folder = tmp_path_factory.mktemp("sweeps")
    es.sweep(300, 10, **SMALL_SWEEP).to_netcdf(folder / "s.nc")
    es.sweep(300, 10, **dict(SMALL_SWEEP, m_ensemble=[3])).to_netcdf(folder / "no_single.nc")
    return folder


@pytest.mark.parametrize(
    "options, needle",
    [
        (["--real-stability", "nan"], "--real-stability and --n-useful go together"),
        (["--real-stability", "0.3"], "--real-stability and --n-useful go together"),
        (["--n-useful", "30"], "--real-stability and --n-useful go together"),
        (["--real-stability", "nan", "--n-useful", "30"], "--real-stability must be"),
        (["--real-stability", "1.5", "--n-useful", "30"], "--real-stability must be in [0.0, 1.0]"),
        (["--real-stability", "0.3", "--n-useful", "inf"], "--n-useful must be"),
        (["--n-runs", "7"], "--n-runs must be one of this sweep's, [1, 3]; got 7"),
    ],
)
def test_report_uses_every_observation_or_refuses_it(sweep_nc, tmp_path, capsys, options, needle):
    assert cli_main(["report", str(sweep_nc / "s.nc"), "-o", str(tmp_path / "r"), *options]) == 2
    assert needle in one_line_error(capsys)
    assert not (tmp_path / "r").exists()


def test_report_refuses_observations_it_cannot_draw(sweep_nc, tmp_path, capsys):
    options = ["--real-stability", "0.3", "--n-useful", "30"]
    assert cli_main(["report", str(sweep_nc / "no_single.nc"), "-o", str(tmp_path / "r"), *options]) == 2
    assert "single-selector surface (m_ensemble = 1), which this sweep lacks" in one_line_error(capsys)
    assert cli_main(["report", str(sweep_nc / "s.nc"), "-o", str(tmp_path / "r"), *options]) == 2
    assert "--n-runs must be given" in one_line_error(capsys)  # which n_useful_v: said before drawing
    assert cli_main(["report", str(sweep_nc / "s.nc"), "-o", str(tmp_path / "r"), *options, "--n-runs", "3"]) == 0
    assert (tmp_path / "r" / "calibration.png").exists()  # used: the calibration picture, not the plain surface


@pytest.mark.parametrize(
    "option, needle",
    [
        (["--confidence", "95"], "--confidence must be in (0.0, 1.0); got 95.0"),
        (["--m-stability", "1"], "--m-stability must be >= 2; got 1"),
        (["--n-boot", "5"], "--n-boot must be 0 (no bootstrap) or in [20, 10000]"),
        (["--member-resample", "thirds"], "--member-resample must be one of half, bootstrap, bagging"),
        (["--precision", "0"], "--precision must be in (0.0, 1.0]; got 0.0"),
    ],
)
@pytest.mark.parametrize("command", ["estimate", "validate"])
def test_each_setting_is_refused_by_its_own_check_before_the_data_are_read(tmp_path, capsys, command, option, needle):
    """The settings' constraints (settings.SETTINGS) check each option, once, before the data
    are read: here the data file does not exist, and the option is what is refused."""
    assert cli_main([command, *option, "--data", str(tmp_path / "absent.csv")]) == 2
    assert needle in one_line_error(capsys)


@pytest.mark.parametrize(
    "option, needle",
    [
        (["--n-target", "0"], "--n-target must be >= 1; got 0"),
        (["--n-target", "5,0"], "--n-target must be >= 1; got 0"),
        (["--max-real-runs", "300"], "--max-real-runs caps the rounds of real runs that a precision asks for"),
        (["--model", "onda", "--precision", "0.05"], "--model onda does not measure real ensemble copies"),
        (["--n-runs", "1000"], "--n-runs must be at most 200 with --model anchored"),
        (["--model", "anchored", "--calibrate"], "--calibrate calibrates the paper's simulator"),
        (["--n-estimators", "1000000000"], "--n-estimators 1000000000: the "),
        (["--model", "onda", "--m-ensemble", "1,1000000"], "simulated selectors"),
        (["--m-ensemble", "1:1000000:1"], "1,000,000 ensemble sizes, above the 1,000"),
    ],
)
@pytest.mark.parametrize("command", ["estimate", "validate"])
def test_options_that_do_not_go_together_or_cost_too_much_are_refused_before_the_data(
    tmp_path, capsys, command, option, needle
):
    """What the options decide alone (settings that must go together, the cost of the sizes
    and of --n-estimators) is refused before the data are read: here --data names a file
    that does not exist, and the option is what is refused, with nothing printed before."""
    assert cli_main([command, *option, "--data", str(tmp_path / "absent.csv")]) == 2
    assert needle in one_line_error(capsys)


def test_model_features_without_copies_is_refused_before_the_data(tmp_path, capsys):
    """--features with a model that runs no real ensemble copies: refused before the work,
    not after it (when the results would be lost)."""
    table = tmp_path / "f.csv"
    assert cli_main(["estimate", "--model", "onda", "--features", str(table), "--data", str(tmp_path / "x.csv")]) == 2
    assert "--features: --model onda runs no real ensemble copies" in one_line_error(capsys)
    assert not table.exists()


@pytest.mark.parametrize(
    "option", [["--p-method", "grid"], ["--resample", "0.5"], ["--calibration-layout", "ensemble"], ["--no-verify"]]
)
def test_an_option_the_model_does_not_use_is_said_in_one_line(tmp_path, capsys, option):
    """--model anchored with an option of the paper's models: a warning that names it, then
    the work goes on (here it stops at the absent data file, after the warning)."""
    assert cli_main(["estimate", *option, "--data", str(tmp_path / "absent.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith(f"ensstab: warning: {option[0]} is not used by --model anchored (only by --model onda")
    assert err[1].startswith("ensstab: error: --data")


def test_too_many_repeats_are_blamed_on_repeats(capsys):
    """--repeats 1e9 is refused before the data by what it costs; the p fit's cell, which
    holds repeats x m_stability copies, names both, not an m_stability nobody typed."""
    assert cli_main(["estimate", "--model", "onda", "--repeats", "1000000000", "--data", "absent.csv"]) == 2
    line = one_line_error(capsys)
    assert "simulated selectors" in line and "50000000000" not in line, line
    with pytest.raises(ValueError, match=r"the p fit's repeats=1000000000 x m_stability=50 copies") as caught:
        EstimateSettings(n_feature=2000, n_target=20, model="onda", repeats=10**9)
    assert "m_stability=50000000000" not in str(caught.value)
