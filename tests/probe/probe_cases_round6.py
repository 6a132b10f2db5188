"""The probe's cases of the sixth round: malformed sparse files (301), ids that leak the
label (302), a regression target's units (303), names that reach the terminal raw (304),
a pipe that closes (305), the run cache's folder and entries (306), a sweep whose worker
dies (307) and the rest (308). Numbered 300 + the item.

Each case runs ``ensstab`` as a user would, in the empty folder it is given (or the
library, where the case is the library's), and returns its class
(``probe_cases_common.CLASSES``).

    python tests/probe/probe_replay.py --only 301,302,303,304,305,306,307,308
"""

from __future__ import annotations

import contextlib
import signal
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]  # the repository: tests/probe/..
sys.path[:0] = [str(HERE), str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402
from probe_cases_common import Case  # noqa: E402
from probe_cases_data import ESTIMATE, said_once, write_csv  # noqa: E402
from probe_cases_silent import cli, failure, refused  # noqa: E402

# 301: a malformed sparse matrix in a data file -------------------------------------------------


def _csr_parts() -> dict:
    import scipy.sparse

    X = scipy.sparse.random(30, 40, density=0.3, format="csr", random_state=0)
    return dict(data=X.data.copy(), indices=X.indices.astype(np.int64), indptr=X.indptr.copy(), shape=np.array(X.shape))


def _sparse_npz(change, needle: str):
    def run(tmp: Path) -> str:
        parts = _csr_parts()
        change(parts)
        np.savez(tmp / "d.npz", format="csr", y=np.repeat([0, 1], 15), **parts)
        res = cli(tmp, "estimate", "--data", "d.npz", *ESTIMATE)
        return refused(res, unless=needle not in res.err or "d.npz" not in res.err)

    return run


def _sparse_h5ad(change, needle: str):
    def run(tmp: Path) -> str:
        import anndata
        import h5py
        import pandas as pd
        import scipy.sparse

        X = scipy.sparse.random(30, 40, density=0.3, format="csr", random_state=0, dtype=np.float32)
        obs = pd.DataFrame({"label": np.repeat(["a", "b"], 15)}, index=[f"c{i}" for i in range(30)])
        anndata.AnnData(X=X, obs=obs).write_h5ad(tmp / "d.h5ad")
        with h5py.File(tmp / "d.h5ad", "r+") as f:
            change(f["X"])
        res = cli(tmp, "estimate", "--data", "d.h5ad", *ESTIMATE)
        return refused(res, unless=needle not in res.err or "d.h5ad" not in res.err)

    return run


def _set(key: str, at: int, value):
    def change(parts) -> None:
        parts[key][at] = value

    return change


def _indptr_back(parts) -> None:
    indptr = parts["indptr"][:]  # a copy, also of an h5py dataset
    indptr[[3, 4]] = indptr[[4, 3]]
    parts["indptr"][...] = indptr


def _narrow(parts) -> None:
    parts["shape"] = np.array([30, 20])


def _sum_beyond_float32(parts) -> None:
    parts["data"][:2] = 3e38
    parts["indices"][1] = parts["indices"][0]


# 303: a regression target's units ------------------------------------------------------------------


def _target_in_units(scale: float):
    """A target made of the first 5 of 40 features, times ``scale``: the answer must find them."""

    def run(tmp: Path) -> str:
        rng = np.random.default_rng(0)
        X = rng.standard_normal((60, 40))
        y = (X[:, :5].sum(axis=1) + 0.5 * rng.standard_normal(60)) * scale
        write_csv(tmp / "d.csv", [*(f"f{j}" for j in range(40)), "target"], [*X.T, y])
        more = ["--n-estimators", "50", "--n-target", "5"]  # after ESTIMATE's: enough trees to find the signal
        res = cli(tmp, "estimate", "--data", "d.csv", "--task", "regression", *ESTIMATE, *more, "--features", "f.csv")
        if bad := failure(res):
            return bad
        if res.rc != 0:
            return "noisy"
        top = [row.split(",")[0] for row in (tmp / "f.csv").read_text().splitlines()[1:6]]
        found = len(set(top) & {f"f{j}" for j in range(5)})
        return "right" if found >= 3 and "distinguishable from chance" not in res.out else "silent"

    return run


# 305: a pipe that closes ---------------------------------------------------------------------------


def _json_into_a_closed_pipe(tmp: Path) -> str:
    """``--json - | head -c 20`` with the reader gone before the JSON comes (for certain: the
    pipe's reading end closed from the start): 128 + SIGPIPE, no traceback."""
    import os
    import subprocess

    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ensstab_dask.cli", "estimate", *ESTIMATE, "--no-cache", "--json", "-"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        return "hang"
    finally:
        os.close(write)
    if "Traceback" in done.stderr or "Exception ignored" in done.stderr:
        return "traceback"
    return "right" if done.returncode == 141 else "noisy"


# 304: names that reach the terminal raw ----------------------------------------------------------

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31mRED"


def _hostile_names(*extra: str):
    """A class and a feature named HOSTILE: nothing printed may carry its escapes raw."""

    def run(tmp: Path) -> str:
        rng = np.random.default_rng(0)
        X = rng.standard_normal((45, 10))
        y = np.repeat(["a" + HOSTILE, "b", "c"], 15)
        X[y == "b", :2] += 2
        write_csv(tmp / "d.csv", ["g" + HOSTILE, *(f"f{j}" for j in range(1, 10)), "label"], [*X.T, y])
        res = cli(tmp, "estimate", "--data", "d.csv", *ESTIMATE, "--n-target", "2", "--no-cache", *extra)
        if bad := failure(res):
            return bad
        raw = "\x1b" in res.out + res.err or "\x07" in res.out + res.err
        return "silent" if raw or res.rc != 0 else "right"

    return run


# 302: ids that leak the label ----------------------------------------------------------------------


def _last_column(name: str, values, needle: str, *, table: str | None = None):
    """30 samples sorted by class, 8 features, and a last column ``name``: run, and say ``needle`` once."""

    def run(tmp: Path) -> str:
        rng = np.random.default_rng(0)
        X, y = rng.standard_normal((30, 8)), np.repeat([0, 1], 15)
        write_csv(tmp / "d.csv", [*(f"f{j}" for j in range(8)), "label", name], [*X.T, y, np.asarray(values)])
        return said_once(tmp, "d.csv", needle, table=table)

    return run


def _ids_gene(tmp: Path) -> str:
    """A count matrix with a gene named IDS: read whole, the gene a feature."""
    rng = np.random.default_rng(0)
    counts = rng.poisson(3, (30, 9))
    write_csv(tmp / "d.csv", [*(f"g{j}" for j in range(8)), "IDS", "label"], [*counts.T, np.repeat([0, 1], 15)])
    res = cli(tmp, "estimate", "--data", "d.csv", *ESTIMATE, "--features", "f.csv")
    if bad := failure(res):
        return bad
    names = [row.split(",")[0] for row in (tmp / "f.csv").read_text().splitlines()[1:]] if res.rc == 0 else []
    return "right" if "IDS" in names else "noisy"


_CODES = np.sort(np.random.default_rng(1).choice(10_000, 30, replace=False))

# 306: the run cache's folder and entries -----------------------------------------------------------


def _default_cache_open_to_all(tmp: Path) -> str:
    import os
    import stat

    folder = tmp / "xdg" / "ensstab_dask" / "real-runs"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    res = cli(tmp, "estimate", *ESTIMATE, env={"XDG_CACHE_HOME": str(tmp / "xdg")})
    if bad := failure(res):
        return bad
    private = stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    return "right" if res.rc == 0 and private and "made private" in res.err else "silent"


def _default_cache_is_a_file(tmp: Path) -> str:
    (tmp / "xdg" / "ensstab_dask").mkdir(parents=True)
    (tmp / "xdg" / "ensstab_dask" / "real-runs").write_text("mine")
    res = cli(tmp, "estimate", *ESTIMATE, env={"XDG_CACHE_HOME": str(tmp / "xdg")})
    return refused(res, unless="--cache-dir DIR or --no-cache" not in res.err or "default cache folder" not in res.err)


def _forged_entry(change, needle: str):
    """An estimate's cache entry changed and its checksum recomputed: a warning, the runs remade."""

    def run(tmp: Path) -> str:
        from faults import forge

        (tmp / "c").mkdir()
        first = cli(tmp, "estimate", *ESTIMATE, "--cache-dir", "c")
        if first.rc != 0:
            return failure(first) or "noisy"
        for path in (tmp / "c").glob("runs-*.nc"):
            forge(path, change)
        res = cli(tmp, "estimate", *ESTIMATE, "--cache-dir", "c")
        if bad := failure(res):
            return bad
        said = needle in res.err and "recomputing it" in res.err
        return "right" if res.rc == 0 and said and "-1000000000" not in res.out + res.err else "silent"

    return run


def _adaptive_after_fixed(tmp: Path) -> str:
    """The adaptive layout's first round (20 copies of 10) after the fixed layout (10 of 20) on
    one cache: made + reused is the runs it used, and no run is made that it does not use."""
    import json

    (tmp / "c").mkdir()
    fixed = cli(tmp, "estimate", *ESTIMATE, "--cache-dir", "c", "--m-ensemble", "1,5,20")
    layout = ["--m-ensemble", "1,5,10", "--layout", "adaptive", "--json", "a.json"]
    adaptive = cli(tmp, "estimate", *ESTIMATE, "--cache-dir", "c", *layout)
    for res in (fixed, adaptive):
        if bad := failure(res):
            return bad
        if res.rc != 0:
            return "noisy"
    record = json.loads((tmp / "a.json").read_text())
    # The first round lacks copies 10..19 of 10 members: 100 runs (100 more where it grows to 20 members).
    said = record["runs_made"] + record["runs_reused"] == record["real_runs"]
    return "right" if said and record["runs_made"] in (100, 200) else "silent"


# 307: a sweep whose only worker, without a nanny, dies or freezes mid-run ---------------------------


def _bare_worker_fault(signum: int, said: str):
    """The issue's command: a scheduler, one ``dask worker --no-nanny``, a sweep of one-cell
    blocks on it; the worker signalled once two blocks are done. The sweep must say ``said``
    within 40 s, then end by itself in one line that says the store resumes (the wait for a
    worker set to 30 s), and a rerun on a fresh worker finish the store."""

    def run(tmp: Path) -> str:
        import os
        import signal as signals
        import subprocess
        import threading
        import time

        from probe_cases_schedulers import HEAVY
        from process_cluster import ProcessCluster
        from sweep_cases import wait_for_blocks

        cluster = ProcessCluster(tmp / "cluster", n_workers=1)
        os.killpg(cluster.pid("worker-1"), signals.SIGKILL)  # its worker with a nanny, replaced by a bare one
        worker_args = ["dask", "worker", cluster.address, "--nthreads", "1", "--no-nanny", "--memory-limit", "0"]
        bare = subprocess.Popen(
            [*worker_args, "--local-directory", str(tmp / "bare")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        environ = dict(os.environ, PYTHONPATH=str(ROOT), DASK_ENSSTAB__WORKERLESS_ENDS_AFTER="30")
        command = [sys.executable, "-m", "ensstab_dask.cli", *HEAVY, "--store", str(tmp / "s.zarr")]
        proc = subprocess.Popen(
            [*command, "--scheduler", cluster.address],
            cwd=tmp,
            env=environ,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
        reader.start()
        try:
            wait_for_blocks(tmp / "s.zarr", 2, lambda: proc.poll() is None)
            os.killpg(bare.pid, signum)
            start = time.monotonic()
            while not any(said in line for line in lines):
                if time.monotonic() - start > 40 or proc.poll() is not None:
                    return "hang" if proc.poll() is None else "noisy"
                time.sleep(0.1)
            try:
                code = proc.wait(120)
            except subprocess.TimeoutExpired:
                return "hang"
            reader.join(10)
            err = "".join(lines)
            if "Traceback" in err:
                return "traceback"
            last = err.strip().splitlines()[-1]
            if code != 1 or "rerun the same command to resume from the store" not in last:
                return "noisy"
            os.killpg(bare.pid, signals.SIGKILL)
            fresh = ProcessCluster(tmp / "fresh", n_workers=1)
            try:
                again = subprocess.run(
                    [*command, "--scheduler", fresh.address], cwd=tmp, env=environ, capture_output=True, timeout=300
                )
            finally:
                fresh.stop()
            return "error" if again.returncode == 0 else "noisy"
        finally:
            for p in (proc, bare):
                if p.poll() is None:
                    p.kill()
                    p.wait()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(bare.pid, signals.SIGCONT)
            cluster.stop()

    return run


# 308: the rest -------------------------------------------------------------------------------------


def _zeros_in_a_result(share: float):
    """64 zero bytes at ``share`` of an estimate's netCDF file, then ``ensstab report``: one
    line, or a report of the very same numbers (where the bytes fell where nothing is kept)."""

    def run(tmp: Path) -> str:
        made = cli(tmp, "estimate", *ESTIMATE, "--no-cache", "--output", "e.nc")
        if made.rc != 0:
            return failure(made) or "noisy"
        raw = (tmp / "e.nc").read_bytes()
        at = int(len(raw) * share)
        (tmp / "z.nc").write_bytes(raw[:at] + bytes(64) + raw[at + 64 :])
        res = cli(tmp, "report", "z.nc", "--output", "r", timeout=300)
        if bad := failure(res):
            return bad
        if res.one_line_error:
            return "error"
        import xarray as xr

        with xr.open_dataset(tmp / "e.nc") as a, xr.open_dataset(tmp / "z.nc") as b:
            same = a.load().identical(b.load())
        return "right" if res.rc == 0 and same else "silent"

    return run


def _report_and_cache_in_one_folder(inside: bool):
    def run(tmp: Path) -> str:
        (tmp / "R").mkdir()
        res = cli(tmp, "estimate", *ESTIMATE, "--report", "R", "--cache-dir", "R/c" if inside else "R")
        right = "--report R" in res.err and "--cache-dir" in res.err and not res.out.strip()
        return refused(res, unless=not right)

    return run


def _a_group_named_rest(tmp: Path) -> str:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((45, 10))
    y = np.repeat(["rest", "b", "c"], 15)
    X[y == "rest", :2] += 2
    write_csv(tmp / "d.csv", [*(f"f{j}" for j in range(10)), "label"], [*X.T, y])
    res = cli(tmp, "estimate", "--data", "d.csv", *ESTIMATE, "--groupby", "label", "--no-cache")
    if bad := failure(res):
        return bad
    said = "a group is named 'rest'" in res.err and "== 'rest' against the rest ==" in res.out
    return "right" if res.rc == 0 and said else "silent"


def _in_a_child(code: str, expected: str):
    """Python code run in a child of its own (the package's import is the case): ``right``
    when it prints ``expected``."""

    def run(tmp: Path) -> str:
        import os
        import subprocess

        env = dict(os.environ, PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        if "Traceback" in done.stderr:
            return "traceback"
        return "right" if done.stdout.split() == expected.split() else "silent"

    return run


_BLOCKED_XARRAY = "import sys\nsys.modules['xarray'] = None\nimport ensstab_dask\nprint('imported')\n"
_UNREGISTERED_CSV = (
    "import pathlib, tempfile\n"
    "from ensstab_dask.real.file_formats import unregister_format\n"
    "from ensstab_dask.outputs import refuse_to_replace\n"
    "from ensstab_dask.exceptions import InvalidParameterError\n"
    "p = pathlib.Path(tempfile.mkdtemp()) / 'study.csv'\np.write_text('f0,label\\n1,0\\n')\n"
    "unregister_format('.csv')\n"
    "try:\n    refuse_to_replace(p, overwrite=True, name='--json')\nexcept InvalidParameterError:\n"
    "    print('protected')\n"
)


def _many_integer_classes(tmp: Path) -> str:
    rng = np.random.default_rng(0)
    np.savez(tmp / "d.npz", X=rng.standard_normal((30, 8)), y=np.arange(30))
    res = cli(tmp, "estimate", "--data", "d.npz", *ESTIMATE, "--no-cache")
    return refused(res, unless="--task regression" not in res.err)


def _a_listener_saying_it_is_a_scheduler(tmp: Path) -> str:
    from faults import listener, scheduler_identity_answer

    with listener(scheduler_identity_answer(whole=False)) as address:
        res = cli(tmp, "estimate", *ESTIMATE, "--no-cache", "--scheduler", address, "--timeout", "3")
    return refused(res, unless="without the identity every scheduler gives" not in res.err)


CASES: list[Case] = [
    Case(301, "npz: a column index of 1000 in 40 columns", _sparse_npz(_set("indices", 5, 1000), "1000 at stored")),
    Case(301, "npz: a column index one past the end (40)", _sparse_npz(_set("indices", 5, 40), "40 at stored")),
    Case(301, "npz: a negative column index", _sparse_npz(_set("indices", 5, -3), "-3 at stored")),
    Case(301, "npz: indptr not monotone", _sparse_npz(_indptr_back, "indptr goes back")),
    Case(301, "npz: a shape narrower than the indices", _sparse_npz(_narrow, "of its shape (30, 20)")),
    Case(301, "npz: an int64 index beyond 2**31", _sparse_npz(_set("indices", 5, 2**33), "8589934592 at stored")),
    Case(301, "npz: duplicates summing beyond float32", _sparse_npz(_sum_beyond_float32, "repeated entries summed")),
    Case(301, "h5ad: a negative column index", _sparse_h5ad(_set("indices", 5, -3), "-3 at stored")),
    Case(301, "h5ad: indptr not monotone", _sparse_h5ad(_indptr_back, "indptr goes back")),
    Case(301, "h5ad: a column index out of range", _sparse_h5ad(_set("indices", 5, 45), "45 at stored")),
    Case(303, "a target in mol/L (y x 1e-9)", _target_in_units(1e-9)),
    Case(303, "a target times 1e-300", _target_in_units(1e-300)),
    Case(303, "a target times 1e-310 (subnormal)", _target_in_units(1e-310)),
    Case(303, "a target times 1e300", _target_in_units(1e300)),
    Case(305, "--json - into a pipe whose reader left", _json_into_a_closed_pipe),
    Case(304, "a class and a feature named with escapes, --groupby", _hostile_names("--groupby", "label")),
    Case(304, "a class and a feature named with escapes, two classes", _hostile_names("--classes", f"a{HOSTILE},b")),
    Case(
        302,
        "a last column SampleID sorted by class",
        _last_column("SampleID", range(100, 130), "sample ids", table="SampleID"),
    ),
    Case(302, "a last column PatientID", _last_column("PatientID", range(100, 130), "sample ids", table="PatientID")),
    Case(302, "a last column 'patient'", _last_column("patient", range(1, 31), "sample ids", table="patient")),
    Case(302, "a last column 'subject'", _last_column("subject", range(1, 31), "sample ids", table="subject")),
    Case(302, "a numbering in steps of 2", _last_column("n", range(1, 61, 2), "in steps of 2", table="n")),
    Case(302, "sorted codes that separate the classes", _last_column("record", _CODES, "alone separates the classes")),
    Case(302, "a gene named IDS in a count matrix", _ids_gene),
    Case(
        302,
        "an age 30..59: said, with the way out",
        _last_column("age", range(30, 60), "pass --no-index-col to read it as a feature"),
    ),
    Case(306, "a default cache folder of mode 0777", _default_cache_open_to_all),
    Case(306, "the default cache folder's name taken by a file", _default_cache_is_a_file),
    Case(
        306,
        "a forged entry: ranks as float64",
        _forged_entry(lambda ds: ds.assign(ranks=ds["ranks"].astype("float64")), "not integers"),
    ),
    Case(
        306,
        "a forged entry: seconds_per_run 'abc'",
        _forged_entry(lambda ds: ds.assign_attrs(seconds_per_run="abc"), "not a time"),
    ),
    Case(
        306,
        "a forged entry: seconds_per_run -1e9",
        _forged_entry(lambda ds: ds.assign_attrs(seconds_per_run=-1e9), "not a time"),
    ),
    Case(306, "the adaptive layout after the fixed one on one cache", _adaptive_after_fixed),
    *(Case(308, f"report on a result with 64 zero bytes at {s:.0%}", _zeros_in_a_result(s)) for s in (0.1, 0.5, 0.9)),
    Case(308, "--report and --cache-dir one folder", _report_and_cache_in_one_folder(inside=False)),
    Case(308, "--cache-dir inside --report", _report_and_cache_in_one_folder(inside=True)),
    Case(308, "a group named 'rest'", _a_group_named_rest),
    Case(308, "import ensstab_dask with xarray blocked", _in_a_child(_BLOCKED_XARRAY, "imported")),
    Case(308, "unregister_format('.csv') keeps CSV data files safe", _in_a_child(_UNREGISTERED_CSV, "protected")),
    Case(308, "y = 0..29 as integers: one line", _many_integer_classes),
    Case(308, "a listener answering only {'type': 'Scheduler'}", _a_listener_saying_it_is_a_scheduler),
    Case(
        307,
        "a sweep's only worker (no nanny) SIGKILLed mid-run: said, ends, resumes",
        _bare_worker_fault(signal.SIGKILL, "no worker has been connected"),
    ),
    Case(
        307,
        "a sweep's only worker (no nanny) SIGSTOPped mid-run: said, ends, resumes",
        _bare_worker_fault(signal.SIGSTOP, "has answered for"),
    ),
]
