"""The ``ensstab`` command line: output, JSON, help, and one-line errors in its own words
with exit status 2. Ctrl-C is in test_cli_signals.py."""

import inspect
import json
import socket
import subprocess
import sys

import numpy as np
import pytest

import ensstab_dask as es
from ensstab_dask.cli import UsageError, build_parser, main, parse_values
from ensstab_dask.sweeps.storage import SweepStore


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
        (["simulate", "--p", "1.5"], "--p must be in [0.0, 1.0]"),
        (["simulate", "--n-target", "3000"], "--n-target must be in [1, 2000]"),
        (["simulate", "--m-ensemble", "1,x"], "--m-ensemble"),
        (["simulate", "--m-stability", "1"], "--m-stability must be >= 2"),
        (["simulate", "--aggregate", "max"], "invalid choice"),
        (["simulate", "--n-useful", "ten"], "invalid int value"),
        (["nosuchcommand"], "invalid choice"),
        (["sweep", "--n-useful", "20:10:5", "--p", "0.5"], "--n-useful: range '20:10:5' needs step > 0"),
    ],
)
def test_bad_input_one_line_exit_2(args, needle):
    res = run(*args)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr
    assert lines[0].startswith("ensstab: error: "), res.stderr  # every error, the parser's and the library's
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


def _sweep_args(store) -> list[str]:
    grid = "sweep --n-feature 300 --n-target 10 --n-useful 10,25,40 --p 0.3,0.6,0.9 --m-stability 12 --repeats 3"
    return [*grid.split(), "--store", str(store), "--scheduler", "synchronous"]


@pytest.mark.slow
def test_the_resume_note_goes_to_stderr_as_a_plain_line(tmp_path):
    store = tmp_path / "s.zarr"
    first = run(*_sweep_args(store), "--quiet")
    assert first.returncode == 0, first.stderr
    assert first.stderr == ""  # --quiet: warnings only, and there are none
    chunk = sorted(p for p in (store / "stability_draws").rglob("*") if p.is_file() and p.name != "zarr.json")[0]
    chunk.unlink()  # one n_useful row's draws: three cells to recompute
    again = run(*_sweep_args(store))
    assert again.returncode == 0, again.stderr
    assert "Resuming" not in again.stdout
    lines = again.stderr.splitlines()
    assert f"Resuming {store}: 6 cells already done, 3 to compute" in lines, again.stderr
    # The library's messages, one plain line each: no logger name or level in front.
    assert "sweep: computing 3 of 9 cells in 3 tasks" in lines
    assert not any(line.startswith(("INFO", "WARNING", "ensstab_dask.")) for line in lines), again.stderr
    # The damaged row is a warning: shown with --quiet too.
    chunk = sorted(p for p in (store / "stability_draws").rglob("*") if p.is_file() and p.name != "zarr.json")[0]
    chunk.unlink()
    quiet = run(*_sweep_args(store), "--quiet")
    assert quiet.returncode == 0, quiet.stderr
    warning = f"sweep: 3 cells of {store} are marked done but hold no data: recomputing them"
    assert quiet.stderr.splitlines() == [warning]


@pytest.mark.slow
def test_quiet_has_one_spelling_in_every_command(tmp_path):
    store = tmp_path / "s.zarr"
    for flag in ("-q", "--quiet", "--no-progress"):
        res = run(*_sweep_args(store), flag)
        assert res.returncode == 0 and res.stderr == "", (flag, res.stderr)  # not even the resume note
    for command in (["sweep", "--n-useful", "20", "--p", "0.5"], ["estimate"], ["validate"]):
        # --quiet is the spelling; --no-progress, the old sweep's, is its alias in every command.
        assert build_parser().parse_args([*command, "--quiet"]).quiet
        assert build_parser().parse_args([*command, "--no-progress"]).quiet
        assert not build_parser().parse_args(command).quiet


# Item: a sweep that cannot start leaves no store behind --------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


@pytest.mark.slow
@pytest.mark.parametrize("address", ["unreachable", "tcp://127.0.0.1:99999"])
def test_a_sweep_whose_scheduler_fails_leaves_no_store_and_the_corrected_rerun_runs(tmp_path, address):
    """The template used to be written before connecting: the rerun, with its other
    settings, was then refused ("made with different settings") by a store with no cell done."""
    if address == "unreachable":
        address = f"tcp://127.0.0.1:{_closed_port()}"
    store = tmp_path / "s.zarr"
    small = ["sweep", "--n-feature", "300", "--n-target", "10", "--n-useful", "10,20", "--store", str(store), "-q"]
    failed = run(*small, "--p", "0.5", "--scheduler", address, "--timeout", "2")
    lines = failed.stderr.strip().splitlines()
    assert failed.returncode == 2 and len(lines) == 1 and lines[0].startswith("ensstab: error: "), failed.stderr
    assert not store.exists()
    rerun = run(*small, "--p", "0.3,0.6", "--m-stability", "6", "--repeats", "2", "--scheduler", "synchronous")
    assert rerun.returncode == 0, rerun.stderr
    assert "sweep done (n_useful: 2, p: 2, m_ensemble: 1)" in rerun.stdout


# Help -----------------------------------------------------------------------------------


def _help(command: str, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


def test_every_command_says_what_it_does_and_shows_its_defaults(capsys):
    for command in ("simulate", "sweep", "estimate", "validate", "report", "verify", "export"):
        raw = _help(command, capsys)
        description = raw.split("\n\n")[1]  # after the usage, before the options
        assert not description.startswith(("options:", "positional")) and len(description) > 60, (command, raw)
        text = " ".join(raw.split())  # argparse wraps lines at the terminal's width
        if command in ("simulate", "sweep", "estimate", "validate"):
            for option, default in (("--aggregate", "mean_rank"), ("--index", "jaccard"), ("--seed", "0")):
                described = text.split(f" {option} ", 1)[1].split(" --", 1)[0]
                assert len(described) > 40 and f"(default: {default})" in described, (command, option, described)
            assert "--m-stability M_STABILITY ensemble copies" in text
        if command in ("sweep", "estimate", "validate"):
            assert "examples: ensstab " + command in text
        assert "(default: None)" not in text
    raw = _help("estimate", capsys)
    assert raw.rstrip().splitlines()[-4:] == [
        "  ensstab estimate                          # the embedded default study (no download)",
        "  ensstab estimate --data colon.mat --n-target 20 --json colon.json",
        "  ensstab estimate --data cells.h5ad --label condition --n-target 10,20,40 --features features.csv",
        "  ensstab estimate --data study.csv --label class --scheduler tcp://10.0.0.5:8786 --quiet",
    ]  # the examples one per line, not wrapped into a paragraph
    text = " ".join(raw.split())
    assert "--m-ensemble M_ENSEMBLE ensemble sizes to predict" in text and "(default: 1,5,10,20,30,50)" in text
    assert "--p-method {bisect,grid} how p is fitted to the real selector's stability" in text
    text = " ".join(_help("export", capsys).split())
    assert "STORE the sweep's zarr store" in text and "OUT.nc the netCDF file to write" in text


def _defaults(function) -> dict:
    parameters = inspect.signature(function).parameters.items()
    return {k: p.default for k, p in parameters if p.default is not inspect.Parameter.empty}


def test_the_defaults_are_the_library_functions_defaults():
    parser = build_parser()
    commands = {
        "simulate": ([], es.simulated_stability),
        "sweep": (["--n-useful", "30", "--p", "0.5"], es.sweep),
        "estimate": ([], es.estimate),
        "validate": ([], es.validate),
    }
    for command, (required, function) in commands.items():
        args = vars(parser.parse_args([command, *required]))
        library = _defaults(function)
        if command == "validate":  # the estimate's other options reach estimate() through **estimate_options
            library = {**_defaults(es.estimate), **library}
        # Not the same thing under one name: the grid, the CLI's selector name and data path.
        shared = set(args) & set(library) - {"m_ensemble", "n_useful", "p", "selector", "data"}
        assert {"m_stability", "aggregate", "index", "seed"} <= shared, command
        for name in shared:
            assert args[name] == library[name], (command, name, args[name], library[name])
        if isinstance(library.get("m_ensemble"), tuple):  # estimate's and validate's sizes
            assert parse_values(args["m_ensemble"]) == list(library["m_ensemble"])


# Errors in the command line's words -------------------------------------------------------


def test_negative_list_values_reach_the_range_check(capsys):
    for p in (["--p", "-0.2,0.5"], ["--p=-0.2,0.5"]):
        assert main(["sweep", "--n-useful", "30", *p, "--scheduler", "synchronous"]) == 2
        assert capsys.readouterr().err == "ensstab: error: --p values must be in [0.0, 1.0]; got -0.2\n"
    assert main(["sweep", "--n-useful", "-5:30:5", "--p", "0.5", "--scheduler", "synchronous"]) == 2
    assert capsys.readouterr().err == "ensstab: error: --n-useful values must be in [20, 2000]; got -5\n"


@pytest.mark.parametrize(
    "args, line",
    [
        (["simulate", "--h", "30"], "--h is a parameter of --model two-level only, not of --model onda"),
        (["simulate", "--model", "two-level"], "--h is needed by --model two-level: the size of each ensemble copy's"),
        (["sweep", "--n-useful", "30", "--p", "0.5", "--scheduler", "bogus"], "--scheduler must be processes, "),
        (["sweep", "--n-useful", "30", "--p", "0.5", "--scheduler", "tcp://127.0.0.1"], "--scheduler: malformed"),
        (
            ["sweep", "--n-useful", "30", "--p", "0.5", "--store", "/no/such/dir/s.zarr"],
            "--store: directory '/no/such/dir'",
        ),
    ],
)
def test_errors_name_the_options_not_the_library_parameters(args, line, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"ensstab: error: {line}"), err
    assert "=" not in err[0], err  # no h=, model=, client=...


def _store(path):
    es.sweep(
        300,
        10,
        n_useful=[20, 40],
        p=[0.5, 0.9],
        m_ensemble=[1],
        m_stability=5,
        repeats=2,
        seed=3,
        client="synchronous",
        progress=False,
        store=path,
    )
    return path


def test_library_hints_become_options(tmp_path, capsys):
    import zarr

    store = _store(tmp_path / "s.zarr")
    zarr.open_group(str(store), mode="r+")["completed"][0, 0, 0] = 0  # one cell not done: incomplete
    assert main(["export", str(store), str(tmp_path / "x.nc")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].endswith("rerun the sweep to finish it, or pass --allow-incomplete"), err
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "old.txt").write_text("")
    assert main(["report", str(store), "-o", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("ensstab: error: --output ") and "pass --overwrite to" in err[0], err
    assert "overwrite=True" not in err[0] and "CLI" not in err[0]


def test_report_reads_a_sweep_store_and_says_what_it_reads(tmp_path, capsys):
    store = _store(tmp_path / "s.zarr")
    assert main(["report", str(store), "-o", str(tmp_path / "r")]) == 0
    assert "wrote " in capsys.readouterr().out and (tmp_path / "r" / "index.html").exists()
    # The captions name the command line's options, not the library's parameters.
    assert "(--real-stability, --n-useful)" in (tmp_path / "r" / "index.html").read_text()
    assert main(["report", str(store), "-o", str(tmp_path / "c"), "--real-stability", "0.2", "--n-useful", "25"]) == 0
    assert "the n_useful you gave (--n-useful)" in (tmp_path / "c" / "index.html").read_text()
    csv = tmp_path / "good.csv"
    csv.write_text("a,b,label\n1,2,0\n3,4,1\n")
    for result, what in ((csv, "is not a netCDF file"), (tmp_path, "is a directory but not a sweep store")):
        assert main(["report", str(result), "-o", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and f"{result} {what}; report reads a netCDF file" in err[0], err
        assert "sweep store" in err[0] and not (tmp_path / "x").exists()
    assert np.isfinite(SweepStore(store).load()["stability"]).all()  # the store is only read


def test_the_suite_keeps_out_of_the_users_home(_home_left_alone):
    """The default naive-check cache follows $XDG_CACHE_HOME, which the suite points at a
    temporary folder (conftest): a test run leaves ~/.cache alone."""
    from ensstab_dask.cli._common import default_cache_dir

    assert default_cache_dir().startswith(str(_home_left_alone))


def test_estimate_validate_is_the_validation_harness(monkeypatch, capsys):
    """``ensstab estimate --validate`` runs validate()'s work (the estimate and the naive check
    on one cluster, the naive check's cost first, on the data checked once), not a copy of it."""
    from ensstab_dask.cli import _commands

    called = {}

    def harness(data, n_target, settings, **kwargs):
        called.update(settings, **kwargs, n_target=n_target)
        raise es.InvalidParameterError("the harness was called")

    def no_estimate(*args, **kwargs):
        raise AssertionError("estimate() called on its own")

    monkeypatch.setattr(_commands, "validate_checked", harness)
    monkeypatch.setattr(_commands, "estimate_checked", no_estimate)
    assert main(["estimate", "--validate", "--n-target", "7", "--m-stability", "6", "--scheduler", "synchronous"]) == 2
    assert capsys.readouterr().err == "ensstab: error: the harness was called\n"
    assert called["n_target"] == 7 and called["m_stability"] == 6 and called["client"] == "synchronous"
    from ensstab_dask.cli._common import default_cache_dir

    assert called["cache_dir"] == default_cache_dir()  # the real runs and the naive curve kept, as validate's


@pytest.mark.parametrize("command", [["estimate", "--validate"], ["validate"]])
def test_the_naive_check_of_the_command_line_has_the_librarys_copies(monkeypatch, capsys, command):
    """Without --m-stability, validate (and estimate --validate) compare with the library's
    direct measurement, 20 copies (1,000 real runs at m = 50), not the estimate's 50."""
    from ensstab_dask.cli import _commands

    called = {}

    def harness(data, n_target, settings, **kwargs):
        called.update(settings)
        raise es.InvalidParameterError("the harness was called")

    monkeypatch.setattr(_commands, "validate_checked", harness)
    assert main([*command, "--scheduler", "synchronous"]) == 2
    assert called["m_stability"] == inspect.signature(es.validate).parameters["m_stability"].default == 20
    capsys.readouterr()


def test_the_library_words_become_the_commands_options():
    """OptionSpelling: the one place the settings a library message names become options, per
    command, read from the message's parts (never from its words)."""
    from ensstab_dask.cli._common import OptionSpelling
    from ensstab_dask.wording import Code, param, words

    def said(command: list[str], message) -> str:
        return message.spelled(OptionSpelling(build_parser().parse_args(command).cli_options))

    estimate = ["estimate"]
    message = words(param("output"), " 'e.json' exists; pass ", param("overwrite", True), " to replace it")
    assert str(message) == "output 'e.json' exists; pass overwrite=True to replace it"
    assert said(estimate, message) == "--output 'e.json' exists; pass --overwrite to replace it"
    message = words("so ask for ", param("n_target", 13), ", or use ", param("model", "anchored"), ", which ...")
    assert str(message) == "so ask for n_target=13, or use model='anchored', which ..."
    assert said(estimate, message) == "so ask for --n-target 13, or use --model anchored, which ..."
    assert said(estimate, words("not checked (", param("verify", False), ")")) == "not checked (--no-verify)"
    assert said(estimate, words("or pass ", param("allow_large", True))) == "or pass --yes"
    assert said(estimate, words("with ", param("label", ...), ";")) == "with --label ...;"
    tls = words("pass ", param("security", Code("distributed.security.Security(tls_ca_file=...)")), " or set it")
    assert str(tls) == "pass security=distributed.security.Security(tls_ca_file=...) or set it"
    assert said(estimate, tls) == "pass --tls-ca-file, --tls-cert and --tls-key or set it"
    # A parameter the command has no option for keeps Python's spelling; plain text is never read.
    assert said(["export", "s.zarr", "o.nc"], words("pass ", param("allow_large", True))) == "pass allow_large=True"
    assert said(estimate, words("one cell (m_ensemble=1000000)")) == "one cell (m_ensemble=1000000)"


def test_a_finished_sweep_names_its_next_steps_and_they_run_as_printed(tmp_path, capsys, monkeypatch):
    """A finished sweep said "sweep done" and nothing of what to do with its store."""
    import shlex

    monkeypatch.chdir(tmp_path)
    args = (
        "sweep --n-feature 200 --n-target 10 --n-useful 20,30 --p 0.5 --m-stability 5 --repeats 2 --scheduler "
        "synchronous --quiet"
    ).split()
    assert main([*args, "--store", "first try.zarr"]) == 0
    out = capsys.readouterr().out.splitlines()
    steps = out[out.index("next:") + 1 :]
    commands = [shlex.split(s.split("   (")[0]) for s in steps]  # each as printed, before its explanation
    assert [c[:2] for c in commands] == [["ensstab", "verify"], ["ensstab", "export"], ["ensstab", "report"]]
    for command in commands:
        assert main(command[1:]) == 0, (command, capsys.readouterr().err)
    assert (tmp_path / "first try.nc").is_file() and (tmp_path / "first try-report" / "index.html").is_file()
    # Into a netCDF file only: the report of that file is the one step.
    assert main([*args, "--output", "s.nc"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[out.index("next:") + 1 :] == ["  ensstab report s.nc -o s-report/   (pictures and an index.html)"]
