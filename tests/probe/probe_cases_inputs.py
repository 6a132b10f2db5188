"""The probe's cases of the fifth round on what a user gives: an id column that is not the
first (201), a PFER so large its cutoff is 1/2 (205), an output that is a link to itself
(206), a million ensemble sizes (209), a cutoff typed at its default beside a PFER (212),
repeated sample ids (213), what a selector returns that is not scores (214), a session's
start after its block (215) and validate's stages in a log (216). Numbered 200 + the item.

Each case runs ``ensstab estimate`` (or ``validate``) as a user would, in the empty folder
it is given, or the library where the case is the library's, and returns its class
(``probe_cases_common.CLASSES``).

    python tests/probe/probe_replay.py --only 201,205,206,209,212,213,214,215,216
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]  # the repository: tests/probe/..
sys.path[:0] = [str(HERE), str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402
from faults import run_cli  # noqa: E402
from probe_cases_common import Case  # noqa: E402
from probe_cases_data import said_once, write_csv  # noqa: E402
from probe_cases_loud import classify  # noqa: E402
from probe_cases_trust import EST, two_class_file  # noqa: E402


def _sorted_csv(tmp: Path, name: str, values) -> None:
    """30 samples sorted by class, 8 features, and a last column ``name`` of ``values``."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 8)), np.repeat([0, 1], 15)
    header = [*(f"f{j}" for j in range(8)), "label", name]
    write_csv(tmp / "d.csv", header, [*X.T, y, np.asarray(values)])


def _id_column(name: str, values):
    def run(tmp: Path) -> str:
        _sorted_csv(tmp, name, values)
        return said_once(tmp, "d.csv", "read as sample ids", table=name)

    return run


def _refused(*extra: str, needle: str, before_work: bool = True, timeout: float = 120):
    def run(tmp: Path) -> str:
        two_class_file(tmp)
        ran = run_cli(*EST, "--no-cache", *extra, cwd=tmp, timeout=timeout)
        return classify(ran, needle=needle, before_work=before_work)

    return run


def _output_loop(option: str):
    def run(tmp: Path) -> str:
        two_class_file(tmp)
        (tmp / "out").symlink_to("out")
        ran = run_cli(*EST, "--no-cache", option, "out", cwd=tmp, timeout=120)
        return classify(ran, needle="leads back to itself", before_work=True)

    return run


def _repeated_ids(tmp: Path) -> str:
    _sorted_csv(tmp, "sample", [f"s{i % 27}" for i in range(30)])
    return said_once(tmp, "d.csv", "3 of 30 sample ids repeat an earlier one", "--index-col", "sample")


def _library_refusal(selector, needle: str):
    """The library's estimate with ``selector``: an error in the package's words naming what
    the selector returned; numpy's own words are noisy."""

    def run(tmp: Path) -> str:
        import ensstab_dask as es
        from ensstab_dask.exceptions import InvalidParameterError

        data = es.make_microarray(n_samples=30, n_feature=20, n_informative=3, seed=0)
        try:
            es.estimate(data.X, data.y, 3, selector=selector, m_ensemble=(1, 3), n_boot=0, client="synchronous")
        except InvalidParameterError as exc:
            return "error" if needle in str(exc) and "\n" not in str(exc) else "noisy"
        except Exception:  # noqa: BLE001 - numpy's words (ValueError, AxisError): not said by the package
            return "noisy"
        return "silent"

    return run


def _strings(X, y, rng):
    return ["up"] * X.shape[1]


def _getter_none():
    from sklearn.tree import DecisionTreeClassifier

    from ensstab_dask.real.selectors import ImportanceSelector

    return ImportanceSelector(DecisionTreeClassifier(max_depth=2), importance_getter=lambda est: None)


def _session_after_block(tmp: Path) -> str:
    import ensstab_dask as es
    from ensstab_dask.exceptions import InvalidParameterError

    with es.session("threads", n_workers=1) as s:
        pass
    try:
        client = s.start()
    except InvalidParameterError as exc:
        return "error" if "session has ended" in str(exc) else "noisy"
    client.close()
    return "silent"


def _validate_in_a_log(tmp: Path) -> str:
    """stderr a file, as a batch job's: one line per stage (the estimate's runs and
    simulations, the naive check's runs), none a bar's carriage return."""
    two_class_file(tmp)
    args = [a for a in EST if a != "estimate"]
    ran = run_cli("validate", *args, "--m-stability", "6", "--cache-dir", ".", cwd=tmp, timeout=300)
    if ran.timed_out or "Traceback" in ran.stderr:
        return "hang" if ran.timed_out else "traceback"
    started = [line for line in ran.lines if re.search(r": [\d,]+ \w+, started at \d\d:\d\d:\d\d$", line)]
    stages = {line.split(":")[0] for line in started}
    right = ran.returncode == 0 and "\r" not in ran.stderr and {"real runs", "naive check"} <= stages
    return "right" if right else "silent"


CASES: list[Case] = [
    Case(201, "a last column sample_id of 100..129, rows sorted by class", _id_column("sample_id", range(100, 130))),
    Case(201, "a last column 'cell' of text ids", _id_column("cell", [f"AAC{i:03d}" for i in range(30)])),
    Case(201, "a numbering under another name, 1..30", _id_column("order", range(1, 31))),
    Case(205, "--pfer 1e308", _refused("--pfer", "1e308", needle="--pfer is too large")),
    Case(206, "--json that is a link to itself", _output_loop("--json")),
    Case(206, "--features that is a link to itself", _output_loop("--features")),
    Case(209, "--m-ensemble 1:1000000:1", _refused("--m-ensemble", "1:1000000:1", needle="1,000,000 ensemble sizes")),
    Case(
        212, "--cutoff 0.9 (its default) with --pfer 5", _refused("--cutoff", "0.9", "--pfer", "5", needle="--cutoff")
    ),
    Case(213, "repeated sample ids in --index-col", _repeated_ids),
    Case(214, "a callable selector returning strings", _library_refusal(_strings, "returned a list of text")),
    Case(214, "an importance_getter returning None", _library_refusal(_getter_none(), "returned None")),
    Case(215, "Session.start() after its with block", _session_after_block),
    Case(216, "validate into a file: one line per stage", _validate_in_a_log),
]
