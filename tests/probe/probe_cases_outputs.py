"""The probe's cases of outputs, options and stops, round 4 (numbered 100 + the item).

Each case runs the CLI as a user would (``python -m ensstab_dask.cli``, its own process)
in the empty folder it is given and returns its class (``probe_cases_common.CLASSES``):
feature names a spreadsheet would run (101), an output that is a link to a stream
(103), options of another model (109), ``--json`` to standard output (110), sizes whose
cost must be priced before any work (111), names too long for the file system and a
stop signal during the imports (114), misleading messages (115) and options refused
only after the data were read (116), and how fast precision rounds stop (108).

    python tests/probe/probe_replay.py --only 101,103,108,109,110,111,114,115,116
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]  # the repository: tests/probe/..
sys.path[:0] = [str(HERE), str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402
from faults import env, run_cli, tmpfs_unavailable  # noqa: E402
from probe_cases_common import Case  # noqa: E402
from probe_cases_loud import _refused, _stopped  # noqa: E402

SIMULATE = ["simulate", "--n-feature", "200", "--n-target", "5", "--n-useful", "20", "--m-ensemble", "1,3"]
SMALL = ["--n-estimators", "5", "--m-ensemble", "1,5", "--n-boot", "0", "--scheduler", "synchronous", "--quiet"]
#: The formulas of issue's item 1 and OWASP's list of a cell's dangerous first characters.
HOSTILE = ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tTAB", "'=quoted"]


def _formula_names(tmp: Path) -> str:
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 30)), np.repeat([0, 1], 20)
    X[y == 1, :6] += 2.5
    names = HOSTILE + [f"g{j}" for j in range(len(HOSTILE), 30)]
    np.savez(tmp / "d.npz", X=X, y=y, feature_names=np.array(names))
    ran = run_cli("estimate", "--data", "d.npz", "--n-target", "5", *SMALL, "--features", "f.csv", cwd=tmp)
    if ran.timed_out or "Traceback" in ran.stderr:
        return "hang" if ran.timed_out else "traceback"
    cells = [line.split(",")[0] for line in (tmp / "f.csv").read_text().splitlines()[1:]]
    unsafe = [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    return "silent" if unsafe else "right"


def _link_to_stdout(tmp: Path) -> str:
    link = tmp / "out.json"
    link.symlink_to("/proc/self/fd/1")
    ran = run_cli(*SIMULATE, "--json", "out.json", "--overwrite", cwd=tmp)
    if not link.is_symlink():
        return "silent"  # replaced by a file
    return "error" if ran.one_line_error() and not ran.stdout else "noisy"


def _dev_stdout_as_root(tmp: Path) -> str:
    """``--json /dev/stdout --overwrite`` into a pipe, as root, with /dev a private tmpfs."""
    if tmpfs_unavailable():
        return "error"  # cannot be provoked here: counted as refused, and the case says why on --list
    script = (
        "mount -t tmpfs -o size=1m tmpfs /dev && ln -s /proc/self/fd/1 /dev/stdout && "
        f"{sys.executable} -m ensstab_dask.cli {' '.join(SIMULATE)} --json /dev/stdout --overwrite | cat; "
        "[ -L /dev/stdout ] && echo STILL-A-LINK"
    )
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, cwd=tmp, env=env())
    if "Traceback" in done.stderr:
        return "traceback"
    return "error" if "STILL-A-LINK" in done.stdout and "ensstab: error:" in done.stderr else "silent"


def _unused_option_said(*options: str):
    def run(tmp: Path) -> str:
        ran = run_cli("estimate", *options, "--data", "absent.csv", cwd=tmp, timeout=120)
        if ran.timed_out or "Traceback" in ran.stderr:
            return "hang" if ran.timed_out else "traceback"
        said = any(f"{options[0]} is not used by --model" in line for line in ran.lines)
        return "error" if said else "silent"

    return run


def _json_dash(tmp: Path) -> str:
    ran = run_cli(*SIMULATE, "--json", "-", cwd=tmp)
    if ran.timed_out or "Traceback" in ran.stderr:
        return "hang" if ran.timed_out else "traceback"
    try:
        curve = json.loads(ran.stdout)["curve"]
    except (ValueError, KeyError):
        return "silent"
    return "right" if set(curve) == {"1", "3"} and not list(tmp.iterdir()) else "silent"


def _long_name(tmp: Path) -> str:
    """A 260-byte --json name: refused before the work, not an OSError after it."""
    ran = run_cli(*SIMULATE, "--json", "b" * 255 + ".json", cwd=tmp)
    if ran.timed_out or "Traceback" in ran.stderr:
        return "hang" if ran.timed_out else "traceback"
    return "error" if ran.one_line_error() and not ran.stdout else "noisy"


def _ctrl_c_during_imports(tmp: Path) -> str:
    for delay in (0.2, 0.4, 0.7):
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "ensstab_dask.cli", "estimate", "--quiet"],
            cwd=tmp,
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        if "ensstab_dask.cli._early_stop" not in err:
            continue  # before the package began to import: Python's own handling
        if "Traceback" in err:
            return "traceback"
        lines = [ln for ln in err.splitlines() if not ln.startswith("import time:")]
        return "right" if proc.returncode == 130 and lines == ["ensstab: interrupted"] else "noisy"
    return "right"


def _repeats_blamed(tmp: Path) -> str:
    ran = run_cli("estimate", "--model", "onda", "--repeats", "1000000000", "--quiet", cwd=tmp)
    if ran.timed_out or "Traceback" in ran.stderr:
        return "hang" if ran.timed_out else "traceback"
    ok = ran.one_line_error() and "simulated selectors" in ran.lines[0]
    return "error" if ok and "50000000000" not in ran.lines[0] else "noisy"


def _convergence_in_one_line(tmp: Path) -> str:
    rng = np.random.default_rng(0)
    X = np.minimum(np.exp(rng.normal(size=(62, 200)) * 20), 1e37)  # lbfgs gives up on such scales
    np.savez(tmp / "wild.npz", X=X, y=np.repeat([0, 1], 31))
    # --no-cache: runs read back from an earlier replay's cache warn of nothing.
    args = ["--data", "wild.npz", "--selector", "logistic", "--n-target", "10", "--no-cache", *SMALL]
    ran = run_cli("estimate", *args, cwd=tmp)
    if ran.timed_out or "Traceback" in ran.stderr:
        return "hang" if ran.timed_out else "traceback"
    clean = ran.returncode == 0 and ran.lines and all(line.startswith("ensstab: ") for line in ran.lines)
    return "right" if clean else "noisy"


def _before_the_data(*options: str, needle: str):
    """Refused in one line before the data are read: --data names a file that is absent, so
    a refusal that came after the data would name the file instead."""
    return _refused("estimate", *options, "--data", "absent.csv", needle=needle, before_work=True)


CASES = [
    Case(101, "feature names that a spreadsheet runs are escaped in --features", _formula_names),
    Case(103, "--json LINK-TO-/proc/self/fd/1 --overwrite: refused, the link kept", _link_to_stdout),
    Case(103, "--json /dev/stdout --overwrite into a pipe as root (private /dev)", _dev_stdout_as_root),
    Case(
        108,
        "Ctrl-C during --precision rounds stops within seconds",
        _stopped(
            ["estimate", "--precision", "0.003", "--max-real-runs", "3000", "--n-estimators", "30"],
            signal.SIGINT,
            wait_for=60.0,
            status=130,
        ),
    ),
    Case(109, "--model anchored --p-method grid: said not used", _unused_option_said("--p-method", "grid")),
    Case(109, "--model anchored --resample 0.5: said not used", _unused_option_said("--resample", "0.5")),
    Case(
        109,
        "--model anchored --calibration-layout ensemble: said not used",
        _unused_option_said("--calibration-layout", "ensemble"),
    ),
    Case(109, "--model anchored --no-verify: said not used", _unused_option_said("--no-verify")),
    Case(
        109,
        "--model onda --features: refused before the work",
        _before_the_data("--model", "onda", "--features", "f.csv", needle="--features"),
    ),
    Case(110, "simulate --json - writes the JSON alone on stdout", _json_dash),
    Case(
        110,
        "simulate --json /dev/stdout: refused, - is the way",
        _refused(*SIMULATE, "--json", "/dev/stdout", needle="standard output is -"),
    ),
    Case(
        111,
        "--m-ensemble 1:1000000:1 --model onda priced before any work",
        _before_the_data("--model", "onda", "--m-ensemble", "1:1000000:1", needle="1,000,000 ensemble sizes"),
    ),
    Case(
        111,
        "--m-ensemble 1:1000000:1 with the default model: refused before any run",
        _refused("estimate", "--m-ensemble", "1:1000000:1", needle="1,000,000 ensemble sizes", timeout=60),
    ),
    Case(
        111,
        "--m-ensemble 1,1000000 --model onda: its simulated selectors priced before any work",
        _before_the_data("--model", "onda", "--m-ensemble", "1,1000000", needle="simulated selectors"),
    ),
    Case(
        111,
        "--n-estimators 1000000000 priced before any work",
        _before_the_data("--n-estimators", "1000000000", needle="trees"),
    ),
    Case(114, "--json with a 260-byte name: refused before the work", _long_name),
    Case(114, "Ctrl-C while the libraries are imported: one line", _ctrl_c_during_imports),
    Case(115, "--repeats 1e9 refused by its cost, not blamed on m_stability", _repeats_blamed),
    Case(115, "the ConvergenceWarning summary in one ensstab line", _convergence_in_one_line),
    Case(116, "--n-target 0 before the data", _before_the_data("--n-target", "0", needle="--n-target")),
    Case(116, "--n-target 20,0 before the data", _before_the_data("--n-target", "20,0", needle="--n-target")),
    Case(
        116,
        "--max-real-runs without --precision before the data",
        _before_the_data("--max-real-runs", "300", needle="--precision"),
    ),
    Case(
        116,
        "--precision with --model onda before the data",
        _before_the_data("--model", "onda", "--precision", "0.05", needle="--precision"),
    ),
    Case(
        116,
        "--n-runs 1000 with --model anchored before the data",
        _before_the_data("--n-runs", "1000", needle="--n-runs"),
    ),
    Case(116, "--precision 0 before the data", _before_the_data("--precision", "0", needle="--precision")),
    Case(116, "--m-ensemble 0 before the data", _before_the_data("--m-ensemble", "0", needle="--m-ensemble")),
    Case(116, "--repeats 0 before the data", _before_the_data("--repeats", "0", needle="--repeats")),
    Case(116, "--seed -1 before the data", _before_the_data("--seed", "-1", needle="--seed")),
]
