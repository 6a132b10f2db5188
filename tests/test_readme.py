"""The README's API tour runs as written (in a temporary folder: it writes sweep.zarr and a
cache), and what it says of the program is true: the main command's real runs and
measured time, and every flag it names."""

import argparse
import json
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAIN_COMMAND = ROOT / "benchmarks" / "results" / "main-command.json"
# "from 200 real runs instead of the 2,500 a direct measurement would need"
RUNS_CLAIM = re.compile(r"from (\d[\d,]*) real runs instead of the (\d[\d,]*) a direct")
# "On 2 cores, about 50 s (median of 3 runs of `python benchmarks/bench_main_command.py`"
TIME_CLAIM = re.compile(
    r"On (\d+) cores, about (\d+) s \(median\s+of (\d+) runs of\s+`python\s+benchmarks/bench_main_command.py`"
)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_readme_states_the_default_real_runs_and_the_measured_time():
    from ensstab_dask.checks import DEFAULT_MODEL
    from ensstab_dask.cli._parser import build_parser
    from ensstab_dask.models import get_model

    text = README.read_text()
    runs, naive = RUNS_CLAIM.search(text).groups()
    model = get_model(DEFAULT_MODEL)
    # The default model makes its copies and nothing else (the slow test below counts them).
    assert not model.paper_runs and model.check_design() is None
    assert _number(runs) == math.prod(model.copy_design())
    cli = build_parser().parse_args(["estimate"])
    assert _number(naive) == cli.m_stability * max(int(m) for m in cli.m_ensemble.split(","))
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


@pytest.mark.parametrize("doc", ["README.md", "examples/README.md", "deploy/README.md"])
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
    others = set().union(*(FLAG.findall(f.read_text()) for f in (ROOT / "deploy").rglob("*") if f.suffix in
                           (".yaml", ".yml", ".sh", ".py", "")  and f.is_file()))  # fmt: skip
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
    wrong = [f"{flag} in {line.strip()!r}" for line, flags, allowed in checks for flag in flags
             if flag not in allowed | {"--help"}]  # fmt: skip
    assert wrong == []


@pytest.mark.slow
def test_api_tour_runs_as_written(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no python block"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme"}
    exec(compile(blocks[0], "README.md (API tour)", "exec"), namespace)
    est, val = namespace["est"], namespace["val"]
    assert set(est.predicted()) == {1, 5, 10} and set(val.per_m) == {1, 5, 10}
    assert (tmp_path / "sweep.zarr").is_dir() and list(tmp_path.glob("naive-*.nc"))


@pytest.mark.slow
def test_main_command_with_the_cli_defaults(tmp_path):
    """`ensstab estimate`, the README's first command, as users run it (all defaults:
    embedded default, 300 trees, local cluster), with --json to read what it said."""
    import json
    import subprocess
    import sys

    out = tmp_path / "e.json"
    res = subprocess.run([sys.executable, "-m", "ensstab_dask.cli", "estimate", "--json", str(out)],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
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
    claimed = _number(RUNS_CLAIM.search(README.read_text())[1])  # the README's figure, counted here
    assert d["real_runs"] == claimed and d["model"] == "anchored" and d["settings"]["calibration_layout"] == "copies"
    assert d["self_check"]["passed"] is True and d["self_check"]["sizes"] == [20]
    assert set(d["curve"]) == set(d["curve_interval"]) == {"1", "5", "10", "20", "30", "50"}
    assert d["reliable"] is True and d["warnings"] == []
    assert all(lo <= d["curve"][m] <= hi for m, (lo, hi) in d["curve_interval"].items())
    assert d["useful_that_are_informative"] >= 35  # the forest finds the planted features
