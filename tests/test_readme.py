"""What README.md and docs/*.md say of the program is true.

* The README's API tour and the Python snippets of docs/ run as written (in a temporary
  folder).
* Every shell command in a fenced block of the README and of docs/ (``ensstab ...``,
  ``python ...``) parses with the real parser, naming only flags that exist. The cheap ones
  run as written; the expensive ones run with sizes shrunk through options that change
  sizes only (``SHRUNK``), or are run by another test (``ELSEWHERE``), or need a cluster
  at an address (``BY_ADDRESS``), or are benchmarks that run for minutes to hours
  (``BENCHMARKS``: marked slow, and run only with ``ENSSTAB_DOCS_BENCHMARKS=1``).
  Commands that need the reference datasets skip, saying why, without
  ``$ENSSTAB_DATA_DIR``.
* The figures the docs copy from a benchmark are the benchmark's: the main command's real
  runs and time, the validation tables, the scaling tables.
* Every flag the READMEs name is the program's, every module path they name exists, and
  no page names an issue number.
"""

import argparse
import importlib
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from shared_runs import copy_runs

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAIN_COMMAND = ROOT / "benchmarks" / "results" / "main-command.json"
# "from 200 real runs; a direct measurement of the same curve with 20 copies of each ensemble takes 1,000"
RUNS_CLAIM = re.compile(
    r"from (\d[\d,]*) real runs; a direct measurement of the same curve with (\d+) copies of\s+each ensemble "
    r"takes (\d[\d,]*) \(`ensstab validate --m-stability (\d+)` runs both\)"
)
VALIDATION = ROOT / "benchmarks" / "results" / "validation.json"
# "On 2 cores, about 50 s (median of 3 runs of `python benchmarks/bench_main_command.py`"
TIME_CLAIM = re.compile(
    r"On (\d+) cores, about (\d+) s \(median\s+of (\d+) runs of\s+`python\s+benchmarks/bench_main_command.py`"
)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_readme_states_the_default_real_runs_and_the_measured_time():
    from ensstab_dask.checks import DEFAULT_MODEL
    from ensstab_dask.cli._parser import build_parser
    from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
    from ensstab_dask.models import get_model
    from ensstab_dask.real.naive import naive_real_runs

    text = " ".join(README.read_text().split())
    runs, copies, naive, flag = RUNS_CLAIM.search(text).groups()
    model = get_model(DEFAULT_MODEL)
    # The default model makes its copies and nothing else (the slow test below counts them).
    assert not model.paper_runs and model.check_design() is None
    assert _number(runs) == math.prod(model.copy_design())
    # The direct measurement priced is the naive check's default, and the command quoted runs that.
    cli = build_parser().parse_args(["validate", "--m-stability", flag])
    assert int(copies) == int(flag) == NaiveSettings.m_stability == cli.m_stability
    assert _number(naive) == naive_real_runs([int(m) for m in cli.m_ensemble.split(",")], int(copies))
    # The time is the benchmark's median, on the cores it says, from the file it wrote.
    cores, seconds, repeats = TIME_CLAIM.search(text).groups()
    measured = json.loads(MAIN_COMMAND.read_text())
    assert measured["command"] == "ensstab estimate" and measured["real_runs"] == _number(runs)
    assert int(cores) == measured["cores"] and int(repeats) == len(measured["seconds"])
    assert abs(int(seconds) - measured["median_seconds"]) <= max(1.0, 0.05 * measured["median_seconds"])


def _options(parser: argparse.ArgumentParser) -> dict[str, set[str]]:
    """Every subcommand's long options, and under "" all of them."""
    found: dict[str, set[str]] = {"": set()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = {s for a in sub._actions for s in a.option_strings if s.startswith("--")}
                found[""] |= found[name]
    return found


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


@pytest.mark.parametrize(
    "doc", ["README.md", "examples/README.md", "deploy/README.md", *(f"docs/{p.name}" for p in DOCS[1:])]
)
def test_every_flag_a_readme_names_is_the_programs(doc):
    """`ensstab CMD --flag` lines against that command's parser, a benchmark's flags against
    its script, and a flag named alone (CLI `--n-boot`) against the CLI's and the scripts'
    (or another program's, named on a line of its own in the same page: `dask worker ...`)."""
    from ensstab_dask.cli._parser import build_parser

    options = _options(build_parser())
    scripts = set().union(*(FLAG.findall(f.read_text()) for f in (ROOT / "benchmarks").glob("*.py")))
    text = (ROOT / doc).read_text()
    code = re.findall(r"```(?:bash|console|sh)\n(.*?)```", text, flags=re.S) + re.findall(r"`([^`\n]+)`", text)
    lines = [line for snippet in code for line in snippet.replace("\\\n", " ").splitlines() if FLAG.search(line)]
    alone = re.compile(r"\s*(--[\w-]+(\s+\S+)?\s*)+$")
    # Flags of other programs: on their own lines here, or in the deploy files that run them (dask worker).
    others = set().union(
        *(
            FLAG.findall(f.read_text())
            for f in (ROOT / "deploy").rglob("*")
            if f.suffix in (".yaml", ".yml", ".sh", ".py", "") and f.is_file()
        )
    )
    checks = []
    for line in lines:
        command = re.search(r"\bensstab (\w[\w-]*)", line)
        script = re.search(r"python (benchmarks/\w+\.py|docs/\w+\.py)", line)
        if command and command[1] in options:  # from `ensstab CMD` on (docker's own flags come before it)
            checks.append((line, FLAG.findall(line[command.end() :]), options[command[1]]))
        elif script:
            checks.append((line, FLAG.findall(line[script.end() :]), set(FLAG.findall((ROOT / script[1]).read_text()))))
        elif not alone.match(line):
            others |= set(FLAG.findall(line))
    for line in lines:
        if alone.match(line):
            checks.append((line, FLAG.findall(line), options[""] | scripts | others))
    wrong = [
        f"{flag} in {line.strip()!r}"
        for line, flags, allowed in checks
        for flag in flags
        if flag not in allowed | {"--help"}
    ]
    assert wrong == []


#: What the tour's notebook run reports after it, for the checks below (a cell of its own,
#: run after the tour's cell, as a reader inspects what the tour left).
TOUR_REPORT = """
import json
print("TOUR " + json.dumps({
    "predicted": sorted(est.predicted()), "per_m": sorted(val.per_m), "real_runs": est.real_runs,
    "validation_runs": [val.estimate.cost.runs.made, val.estimate.cost.runs.reused],
    "feature_208": str(est.to_dataset()["feature_name"].values[208]),
    "holds": str(chk.holds), "mean": str(round(chk.mean)),
    "settled": str(es.iterate_fixed_point(2000, 20, 200, fit.p, n_runs=30).n_useful),
}))
"""


@pytest.mark.slow
def test_api_tour_runs_as_a_script_and_in_a_notebook(tmp_path, default_study_runs):
    """The README's Python block, as written: saved to a file and run with ``python`` (its
    local cluster's worker processes import the file again), then as a notebook's cell in a
    Jupyter kernel, in the same folder (reading the runs the script cached there).

    The folder starts with the session's cache of the embedded default's 200 real runs
    (tests/shared_runs.py): what is tested here is the tour's calls and what they print,
    not the runs, which the main command's test and the pins make."""
    nbformat = pytest.importorskip("nbformat", reason="nbformat is in the test extra")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is in the test extra")
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no python block"
    copy_runs(default_study_runs, tmp_path)
    (tmp_path / "tour.py").write_text(blocks[0])
    env = dict(os.environ, MPLBACKEND="Agg")
    res = subprocess.run([sys.executable, "tour.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-3000:]
    assert "NoConsistentCellWarning" not in res.stderr  # its observations fit a cell of its sweep
    assert "Answer: two runs of the ensemble" in res.stdout  # its print(est.summary())
    assert (tmp_path / "sweep.zarr").is_dir() and list(tmp_path.glob("naive-*.nc"))

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(blocks[0]), nbformat.v4.new_code_cell(TOUR_REPORT)])
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": tmp_path}})
    client.execute()  # raises CellExecutionError, with the failing cell, if any cell fails
    said = [o.get("text", "") for o in nb.cells[1].outputs if o.get("name") == "stdout"]
    got = json.loads("".join(said).split("TOUR ", 1)[1])
    assert got["predicted"] == got["per_m"] == [1, 5, 10]
    # The validation's estimate read the 200 real runs from "." and made none.
    assert got["validation_runs"] == [0, got["real_runs"]] == [0, 200]
    # The library names the embedded default's features as the command line does.
    assert got["feature_208"] == "g00208"
    # What the tour's comments say its fixed-point check and iteration return, they return.
    said_check = re.search(r"chk\.holds, round\(chk\.mean\)  # \((\w+), (\d+)\)", blocks[0])
    assert (got["holds"], got["mean"]) == (said_check[1], said_check[2])
    settled = re.search(r"iterate_fixed_point\(2000, 20, 200, fit\.p, n_runs=30\)\.n_useful  # (\d+):", blocks[0])
    assert got["settled"] == settled[1]


@pytest.mark.slow
def test_main_command_with_the_cli_defaults(tmp_path, default_study_runs):
    """`ensstab estimate`, the README's first command, as users run it (all defaults:
    embedded default, 300 trees, local cluster), with --json to read what it said.

    Its cache starts with the session's copy of the embedded default's 200 real runs
    (tests/shared_runs.py, made by ``estimate`` with the same defaults): what is tested is
    the answer as printed, the same whether its runs were made here or read back."""
    import json
    import subprocess
    import sys

    out, table = tmp_path / "e.json", tmp_path / "features.csv"
    res = subprocess.run(
        [sys.executable, "-m", "ensstab_dask.cli", "estimate", "--features", str(table), "--json", str(out)]
        + ["--cache-dir", str(copy_runs(default_study_runs, tmp_path / "runs"))],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    # The answer in plain words first (after the line naming the data), then the verdict before the numbers.
    assert res.stdout.splitlines()[1].startswith("Answer: two runs of the ensemble")
    # The answer the README quotes is this command's, line for line (a result depends on its seed alone).
    quoted = re.search(r"```text\n(Answer: .*?)```", README.read_text(), flags=re.S)[1].splitlines()
    printed = res.stdout.splitlines()
    assert [line for line in quoted if line.strip() != "..."] == [line for line in printed if line in quoted]
    assert res.stdout.index("Believe it? ") < res.stdout.index("reliable:") < res.stdout.index("m_ensemble = ")
    d = json.loads(out.read_text())
    # The default model: 10 real ensemble copies of 20 weak selectors, and nothing else.
    claimed = _number(RUNS_CLAIM.search(" ".join(README.read_text().split()))[1])  # the README's figure, counted here
    assert d["real_runs"] == claimed and d["model"] == "anchored" and "calibration_layout" not in d["settings"]
    assert d["self_check"]["passed"] is True and d["self_check"]["sizes"] == [20]
    assert set(d["curve"]) == set(d["curve_interval"]) == {"1", "5", "10", "20", "30", "50"}
    assert d["reliable"] is True and d["warnings"] == []
    assert all(lo <= d["curve"][m] <= hi for m, (lo, hi) in d["curve_interval"].items())
    assert d["useful_that_are_informative"] >= 35  # the forest finds the planted features
    # Which features: at least 5 kept on 90 % of the copies at m = 20, every one a planted one (as the README says).
    import pandas as pd

    from ensstab_dask.real.datasets import make_microarray

    planted = {f"g{i:05d}" for i in make_microarray(seed=0).informative}
    frame = pd.read_csv(table)
    frequent = frame[frame["frequency_m20"] >= 0.9]["name"].tolist()
    assert len(frequent) >= 5 and all(n in planted for n in frequent), frequent
    assert d["stable_features"]["names"] == frequent
    assert [r["name"] for r in d["features"]] == frame["name"][:100].tolist()
    assert len(frame) == 2000 and frame["name"].str.fullmatch(r"g\d{5}").all()  # the data's own names


# -- every command of the README and of docs/ -------------------------------------------

#: Options that shrink a command to seconds, and the only ones SHRUNK may add: each
#: changes a size (copies, trees, replicates, repeats), never which code runs or which
#: labels (ensemble sizes, grid values) it computes.
SIZE_OPTIONS = {
    "--m-stability",
    "--n-estimators",
    "--n-boot",
    "--repeats",
    "--rows",
    "--literal-rows",
    "--features",
    "--cells",
    "--genes",
    "--n-feature",
    "--copies",
}

#: Commands that take minutes as written, with what makes them take seconds here.
COMPARE = "ensstab compare --selectors rf,extra-trees,l1-logistic,f-test"
COLON = 'ensstab estimate --data "$ENSSTAB_DATA_DIR/colon.mat" --n-target 20 --json colon.json'
STAGES = (
    "python benchmarks/bench_stages.py --features 2000,7129,20000 --repeats 3 "
    "--json benchmarks/results/stages-2-cores.json"
)
SINGLE_CELL = (
    "python benchmarks/bench_single_cell.py --cells 2000,10000 --n-estimators 15 "
    "--json benchmarks/results/single-cell-2-workers.json"
)
SHRUNK = {
    "ensstab validate --output validation.nc": ["--m-stability", "4", "--n-estimators", "10", "--n-boot", "20"],
    COLON: ["--n-estimators", "10", "--n-boot", "20"],
    "python benchmarks/bench_simulator.py": ["--repeats", "1", "--rows", "20", "--literal-rows", "1"],
    "python benchmarks/bench_features.py --json benchmarks/results/features-20000.json": [
        "--repeats",
        "1",
        "--n-feature",
        "2000",
    ],
    COMPARE: ["--n-estimators", "10", "--n-boot", "20", "--copies", "4"],
    COMPARE + " --json selectors.json --report selectors/": ["--n-estimators", "10", "--n-boot", "20", "--copies", "4"],
    STAGES: ["--features", "300", "--repeats", "1", "--n-estimators", "10"],
    SINGLE_CELL: ["--cells", "400,600", "--genes", "300", "--n-estimators", "3"],
}

#: Commands not run here, because another test or .ci/run runs them.
ELSEWHERE = {
    "ensstab estimate": "test_main_command_with_the_cli_defaults runs it as written",
    "ensstab estimate --features features.csv": "test_main_command_with_the_cli_defaults runs it, and reads the table",
    "python -m pip install .": ".ci/run installs the package before the suite",
    "python -m pip install '.[test]'": ".ci/run runs it verbatim",
    "python -m pytest": "it is this suite; .ci/run runs it verbatim",
}

#: Benchmarks at their documented sizes: minutes to hours each, too long for the default
#: suite. Parsed here always; run, as written, only with ENSSTAB_DOCS_BENCHMARKS=1.
BENCHMARKS = {
    "python benchmarks/bench_main_command.py --json benchmarks/results/main-command.json": "three main commands",
    "ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_validate.py --seeds 0,1 "
    "--models anchored,onda,random-effects,two-level --json validation.json": "32 estimates and 8 naive checks",
    "python benchmarks/bench_sweep.py --repeats 5": "five clusters, 5 repeats",
    "ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_scaling.py --workers 1,2": "every model on two clusters",
    "python benchmarks/bench_store_stress.py": "30 rounds of concurrent sweeps",
    "python benchmarks/bench_interval_honesty.py --seeds 12": "12 estimates",
}

#: Checks of what a command printed, beyond its exit status.
OUTPUT_CHECKS: dict = {}  # filled below, once the checks are defined


@dataclass
class Command:
    doc: str  # the page, relative to the repository
    block: int  # which fenced shell block of the page
    text: str  # as written, continuation lines joined and spaces collapsed, comment dropped
    argv: list[str]  # the program and its arguments, environment assignments taken out
    env: dict[str, str] = field(default_factory=dict)

    @property
    def needs_data(self) -> bool:
        return "ENSSTAB_DATA_DIR" in self.text

    @property
    def by_address(self) -> bool:
        """A cluster at an address: a running scheduler, which this test does not start."""
        return any("://" in a for a in self.argv)


SHELL_BLOCK = re.compile(r"^```(?:bash|sh|shell|console)\n(.*?)^```", flags=re.S | re.M)
ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=")


def _commands(doc: Path) -> list[Command]:
    """The ``ensstab`` and ``python`` commands of the page's fenced shell blocks."""
    found = []
    for block, body in enumerate(SHELL_BLOCK.findall(doc.read_text())):
        for line in body.replace("\\\n", " ").splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line.strip().removeprefix("$ "))
            for part in line.split("&&"):
                words = shlex.split(part)
                env = {}
                while words and ASSIGNMENT.match(words[0]):
                    name, _, value = words.pop(0).partition("=")
                    env[name] = value
                if words and words[0] in ("ensstab", "python"):
                    text = " ".join(part.split())
                    found.append(Command(str(doc.relative_to(ROOT)), block, text, words, env))
    return found


ALL_COMMANDS = [c for doc in DOCS for c in _commands(doc)]


def _how(c: Command) -> str:
    if c.text in ELSEWHERE:
        return "elsewhere"
    if c.text in BENCHMARKS:
        return "benchmark"
    if c.by_address:
        return "by address"
    return "shrunk" if c.text in SHRUNK else "as written"


def test_the_docs_have_commands_and_every_listed_command_is_in_them():
    texts = {c.text for c in ALL_COMMANDS}
    assert {"ensstab estimate", "python -m pytest"} <= texts
    assert sorted((set(SHRUNK) | set(ELSEWHERE) | set(BENCHMARKS)) - texts) == []
    assert all(set(FLAG.findall(" ".join(extra))) <= SIZE_OPTIONS for extra in SHRUNK.values())
    # A command left to another test names it, and that test is here.
    assert all(name in globals() for reason in ELSEWHERE.values() for name in re.findall(r"test_\w+", reason))


def _script_flags(path: Path) -> set[str]:
    return set(re.findall(r"add_argument\(\s*\"(--[\w-]+)\"", path.read_text()))


@pytest.mark.parametrize("c", ALL_COMMANDS, ids=lambda c: f"{c.doc}:{c.text[:60]}")
def test_every_docs_command_parses_with_the_real_parser(c):
    """`ensstab` commands with the CLI's own parser, every flag spelt out in full (argparse
    would take an abbreviation); a script's flags against the options it defines."""
    from ensstab_dask.cli._parser import attach_negative_values, build_parser

    args = [os.path.expandvars(a) for a in c.argv[1:]]
    if c.argv[0] == "ensstab":
        parser = build_parser()
        try:
            parsed = parser.parse_args(attach_negative_values(args))
        except SystemExit as exc:  # --help
            assert exc.code == 0 and "--help" in args
            parsed = None
        options = _options(parser)
        command = parsed.command if parsed is not None and parsed.command else ""
        flags = {a.partition("=")[0] for a in args if a.startswith("--")}
        assert flags <= options[command] | {"--help", "--version"}, c.text
    elif c.argv[1] != "-m":
        script = ROOT / c.argv[1]
        assert script.is_file(), c.text
        flags = {a.partition("=")[0] for a in args[1:] if a.startswith("--")}
        assert flags <= _script_flags(script) | {"--help"}, c.text


def _blocks():
    """One test per fenced block: its commands run in order in one folder (a sweep, then
    the verify and export of its store). Benchmarks get a test of their own."""
    grouped: dict[tuple[str, int], list[Command]] = {}
    for c in ALL_COMMANDS:
        grouped.setdefault((c.doc, c.block), []).append(c)
    seen = set()
    for (doc, block), commands in grouped.items():
        run = [c for c in commands if _how(c) in ("as written", "shrunk")]
        if run and tuple(c.text for c in run) in seen:  # the same commands on another page: run once
            run = []
        seen.add(tuple(c.text for c in run))
        bench = [c for c in commands if _how(c) == "benchmark"]
        if run:
            # Those that start a cluster take more than a few seconds.
            slow = any(
                c.argv[:2] in (["ensstab", cmd] for cmd in ("sweep", "estimate", "validate", "compare")) for c in run
            )
            yield pytest.param(run, marks=[pytest.mark.slow] if slow else [], id=f"{doc}:{block}")
        if bench:
            what = "; ".join(BENCHMARKS[c.text] for c in bench)
            skip = pytest.mark.skipif(
                not os.environ.get("ENSSTAB_DOCS_BENCHMARKS"),
                reason=f"a benchmark at its documented size ({what}) takes minutes to hours: "
                "set ENSSTAB_DOCS_BENCHMARKS=1 to run it",
            )
            yield pytest.param(bench, marks=[pytest.mark.slow, skip], id=f"{doc}:{block}:benchmark")


def _workdir(tmp_path: Path) -> Path:
    """A folder in which the docs' relative paths (benchmarks/..., docs/..., tests/...) hold:
    the benchmarks copied, so that what they write lands here, never in the repository."""
    (tmp_path / "benchmarks").mkdir()
    for script in (ROOT / "benchmarks").glob("*.py"):
        shutil.copy(script, tmp_path / "benchmarks")
    shutil.copytree(ROOT / "benchmarks" / "results", tmp_path / "benchmarks" / "results")
    for name in ("docs", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def _run(c: Command, cwd: Path, capsys) -> str:
    """What ``c`` printed on stdout, after checking that it exited with status 0."""
    if c.needs_data and not os.environ.get("ENSSTAB_DATA_DIR"):
        pytest.skip(f"{c.text!r} needs the reference datasets: set $ENSSTAB_DATA_DIR")
    args = [os.path.expandvars(a) for a in c.argv[1:]] + SHRUNK.get(c.text, [])
    if c.argv[0] == "ensstab":
        from ensstab_dask.cli import main

        capsys.readouterr()
        try:
            status = main(args)
        except SystemExit as exc:  # --help
            status = exc.code
        out, err = capsys.readouterr()
    else:
        env = {**os.environ, **c.env, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        if "ENSSTAB_DATA_DIR" in c.env:  # the folder the project keeps them in, not the path as written
            env["ENSSTAB_DATA_DIR"] = os.environ["ENSSTAB_DATA_DIR"]
        res = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=3600)
        status, out, err = res.returncode, res.stdout, res.stderr
    assert status == 0, f"{c.doc}: {c.text!r} exited with status {status}:\n{err[-3000:]}"
    return out


@pytest.mark.parametrize("commands", list(_blocks()))
def test_docs_commands_run(commands, tmp_path, monkeypatch, capsys):
    cwd = _workdir(tmp_path)
    monkeypatch.chdir(cwd)
    for c in commands:
        out = _run(c, cwd, capsys)
        OUTPUT_CHECKS.get(c.text, lambda out: None)(out)


def _tables(text: str) -> list[list[str]]:
    """The markdown tables of a page, each as its lines."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def _copied_tables(source: str, doc: Path) -> int:
    """How many of ``doc``'s tables are copied from ``source`` (their header is one of its
    lines); every row of those must be a line of ``source``, as printed."""
    lines = set(source.splitlines())
    copied = [t for t in _tables(doc.read_text()) if t[0] in lines]
    stale = [row for t in copied for row in t if row not in lines]
    assert stale == [], f"{doc.name}: rows that the source does not hold"
    return len(copied)


def _validation_tables_are_the_report(out: str) -> None:
    """The validation tables of the README and of docs/validation.md, row for row, are what
    the report of benchmarks/results/validation.json prints."""
    assert _copied_tables(out, README) == 1
    assert _copied_tables(out, ROOT / "docs" / "validation.md") == 2


OUTPUT_CHECKS["python benchmarks/bench_validate.py --report benchmarks/results/validation.json --models anchored"] = (
    _validation_tables_are_the_report
)


def equal_precision_at(data: str, m: int, copies: int = 20) -> list[float]:
    """The ratio at equal precision of a direct measurement of ``copies`` copies at size
    ``m`` over the default model's estimate, per seed, from benchmarks/results/validation.json:
    (copies x m x the naive check's SE^2) / (the estimate's real runs x its SE^2)
    (:func:`~ensstab_dask.plotting.cost.equal_precision_ratio`); the naive check there has
    ``copies`` copies (bench_validate.py's m_stability)."""
    from ensstab_dask.plotting.cost import equal_precision_ratio

    rows = [r for r in json.loads(VALIDATION.read_text()) if r["model"] == "anchored" and r["data"] == data]
    rows.sort(key=lambda r: r["seed"])
    return [
        float(
            equal_precision_ratio(
                copies * m, r["per_m"][str(m)]["real_se"], r["real_runs"], r["per_m"][str(m)]["predicted_se"]
            )
        )
        for r in rows
    ]


def test_the_readme_states_cost_at_equal_precision_from_the_validation_file():
    """The equal-precision ratios the README quotes for the validation runs at m = 50 are the
    results file's, seeds 0 and 1, from one copies count (20, the naive check's)."""
    text = " ".join(README.read_text().split())
    default = equal_precision_at("default", 50)
    assert len(default) == 2 and max(default) < 1.0  # no cheaper on the default, as the README says
    said = f"{default[0]:.2f} and {default[1]:.2f}"
    assert f"measurement at m = 50 on this data (ratio {said} on seeds 0 and 1," in text
    spans = []
    for data in ("colon", "lymphoma", "prostate"):
        values = equal_precision_at(data, 50)
        spans.append(f"{min(values):.1f}-{max(values):.1f} on {data.capitalize()}")
    assert (
        f"a direct measurement of 20 copies at m = 50 over the estimate, from the standard errors of these runs "
        f"(seeds 0 and 1), was {said} on the default (the estimate no cheaper), {spans[0]}, {spans[1]} and {spans[2]}."
    ) in text


def _times(v: float) -> str:
    """A speed-up as the pages write it: one decimal under 10, whole above."""
    return f"{v:.1f}" if v < 10 else f"{v:.0f}"


def test_the_cost_line_is_the_bound_files_figures():
    """The README's equal-precision speed-ups, achieved and bound, and the share of the
    bound reached are the harness's (seed 1), not numbers typed in; docs/method.md's too."""
    runs = json.loads((ROOT / "benchmarks" / "results" / "synthetic-truth-bound-seed1.json").read_text())
    at = {
        m: [next(a for a in r["bound"]["achieved"] if a["m"] == m) for r in runs["regimes"].values()] for m in (50, 200)
    }

    def span(m: int, key: str) -> str:
        values = [a[key] for a in at[m]]
        return f"{_times(min(values))}-{_times(max(values))}"

    shares = [a["spread_over_bound"] for m in at for a in at[m]]
    text = " ".join(README.read_text().split())
    assert (
        f"the estimate is {span(50, 'eps_spread')} times cheaper than a direct measurement of 20 copies at m = 50 "
        f"and {span(200, 'eps_spread')} times at m = 200"
    ) in text
    assert f"could beat {span(50, 'bound_eps')}x and {span(200, 'bound_eps')}x there" in text
    assert f"it reaches {min(shares):.0%}-{max(shares):.0%}".replace("%", "") + " %" in text
    method = " ".join((ROOT / "docs" / "method.md").read_text().split())
    bounds = {m: " / ".join(_times(a["bound_eps"]) for a in at[m]) for m in at}
    reached = {m: " / ".join(f"{a['spread_over_bound']:.2f}" for a in at[m]) for m in at}
    assert f"is {bounds[50]}x at m = 50 and {bounds[200]}x at m = 200" in method
    assert f"reaches {reached[50]} of it at m = 50 and {reached[200]} at m = 200" in method
    assert f"{span(50, 'eps_spread')}x and {span(200, 'eps_spread')}x with simulated naive checks" in method


def test_performance_figures_are_the_benchmarks_files():
    page = ROOT / "docs" / "performance.md"
    scaling = (ROOT / "benchmarks" / "results" / "scaling-2-cores.md").read_text()
    assert _copied_tables(scaling, page) == 3
    measured = json.loads(MAIN_COMMAND.read_text())
    seconds = ", ".join(map(str, measured["seconds"][:-1])) + f" and {measured['seconds'][-1]} s"
    assert f"{seconds}, median {measured['median_seconds']} s, {measured['real_runs']} real runs" in page.read_text()
    features = json.loads((ROOT / "benchmarks" / "results" / "features-20000.json").read_text())
    text = " ".join(page.read_text().split())
    m = features["median_seconds"]
    assert features["n_feature"] == 20000 and features["real_runs"] == 200 and features["within_5_s"]
    assert f"the frequencies {m['frequencies']} s, the table, JSON and answer {m['table_json_answer']} s" in text
    assert f"the CSV {m['csv']} s, **{m['total']} s in all** (median of {features['repeats']} repeats" in text
    assert f"Peak memory {features['peak_mb']} MB, beside the copies' own {features['copies_mb']} MB" in text
    assert f"took {features['surface_one_more_n_target_seconds']} s there" in text


def _snippets():
    for doc in DOCS:
        blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S)
        first = 1 if doc == README else 0  # the API tour: test_api_tour_runs_as_written
        for i, code in enumerate(blocks[first:], start=first):
            # A block inside a list item is indented as the item is.
            yield pytest.param(doc, textwrap.dedent(code), id=f"{doc.relative_to(ROOT)}:{i}")


@pytest.mark.parametrize("doc, code", list(_snippets()))
def test_docs_python_snippets_run(doc, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(doc.relative_to(ROOT)), "exec"), {"__name__": "docs"})


# -- names, paths and numbers the pages hold --------------------------------------------

ISSUE = re.compile(r"(?<![\w/(\[])#\d+\b|\bissues? \d+|\bthe issue's\b", flags=re.I)


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_no_page_names_an_issue(doc):
    """Pages say what holds, not which issue asked for it."""
    assert ISSUE.findall(doc.read_text()) == []


#: Top-level modules before the package was split into subpackages: a name that starts
#: with one of them is a stale path.
OLD_MODULES = {
    "algorithm",
    "_sweep",
    "_stability",
    "_validation",
    "estimation",
    "simulation",
    "uncertainty",
    "measured",
    "naive",
    "runs",
    "selectors",
    "datasets",
    "accuracy",
    "calibration",
    "fixed_point",
    "fitting",
    "trust",
    "validation",
    "result",
    "summary",
    "progress",
    "storage",
    "grid",
    "cost",
    "report",
    "random_effects",
}
FILE_SUFFIXES = {"json", "nc", "zarr", "png", "html", "md", "py", "mat", "npz", "csv", "h5ad", "yaml", "sh", "pem"}


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(["ensstab_dask", *parts[:k]]))
        except ImportError:
            continue
        try:
            for name in parts[k:]:
                obj = getattr(obj, name)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_module_path_a_page_names_exists(doc):
    """`ensstab_dask/x/y.py` files, and dotted names that start at one of the package's
    modules (`simulator.estimators.estimate_p`, `ensstab_dask.models.rank_effects`)."""
    import ensstab_dask

    text = doc.read_text()
    modules = {m.name for m in __import__("pkgutil").iter_modules(ensstab_dask.__path__)}
    wrong = [p for p in re.findall(r"ensstab_dask/[\w/]+\.py", text) if not (ROOT / p).is_file()]
    for dotted in re.findall(r"`((?:ensstab_dask\.)?[A-Za-z_]\w*(?:\.\w+)+)`", text):
        dotted = dotted.removeprefix("ensstab_dask.")
        first, last = dotted.split(".")[0], dotted.split(".")[-1]
        if last in FILE_SUFFIXES:
            continue
        if (first in modules and not _resolves(dotted)) or (first in OLD_MODULES and first not in modules):
            wrong.append(dotted)
    assert wrong == []


def test_the_single_cell_figures_are_the_benchmarks():
    """docs/performance.md's full-size single-cell row is benchmarks/results/single-cell-2-workers.json's."""
    measured = json.loads((ROOT / "benchmarks" / "results" / "single-cell-2-workers.json").read_text())
    row = next(r for r in measured["rows"] if r["cells"] == 10_000)
    text = (ROOT / "docs" / "performance.md").read_text()
    pattern = r"^\| 10,000 \| ([\d,]+) s \| (\d+) s \| ([\d,]+) s .*?\| ([\d.]+) s \| \*\*([\d.]+) %\*\*"
    line = re.search(pattern, text, re.M)
    assert line, "the 10,000-cell row is missing"
    wall, group, runs, stats, share = line.groups()
    s = row["summary"]
    assert _number(wall) == round(row["estimate_wall_s"]) and int(group) == round(s["wall_per_group_s"])
    assert _number(runs) == round(row["runs_wall_s"]) and float(stats) == round(s["statistics_s"], 1)
    assert float(share) == round(100 * s["statistics_over_runs"], 1) and float(share) <= 10.0
