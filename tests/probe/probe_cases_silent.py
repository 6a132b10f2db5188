"""The probe's silent cases (1 to 11 of the nothing-lost round): each replays one case
through the ``ensstab`` command (a subprocess, as a user runs it) or, where the case is
the library's, through the library, and says what came of it: ``error`` (one clear line,
exit status 2), ``right``, or ``silent`` (a wrong answer or a lost file with exit 0).

Run them with ``python tests/probe/probe_replay.py``. Each case works in its own empty
folder; the stores and data files it needs are made there. Nothing outside that folder
is written: the protected data folder of case 10 is a folder of its own, named by
``ENSSTAB_DATA_DIR`` for that command alone, and the device of case 3 is reached through
a symbolic link, so that a command that replaces the link rather than refusing it never
touches ``/dev/null`` itself.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys

import numpy as np
from probe_cases_common import Case

ROOT = pathlib.Path(__file__).resolve().parents[2]  # the repository: tests/probe/..
TIMEOUT = 300

#: A tiny sweep store's grid, made by ``ensstab sweep`` (seconds).
SWEEP = [
    "--n-feature",
    "300",
    "--n-target",
    "10",
    "--n-useful",
    "20,40",
    "--p",
    "0.5,0.9",
    "--m-ensemble",
    "1,3",
    "--m-stability",
    "5",
    "--repeats",
    "2",
    "--scheduler",
    "synchronous",
    "--quiet",
]
#: A small estimate (seconds), for the cases whose point is its outputs, not its numbers.
SMALL = ["--n-estimators", "5", "--m-ensemble", "1,5", "--n-boot", "0", "--scheduler", "synchronous", "--quiet"]


class _Result:
    def __init__(self, rc: int | None, out: str, err: str):
        self.rc, self.out, self.err = rc, out, err

    @property
    def hung(self) -> bool:
        return self.rc is None

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.err

    @property
    def one_line_error(self) -> bool:
        lines = self.err.strip().splitlines()
        return self.rc == 2 and len(lines) == 1 and lines[0].startswith("ensstab: error:")


def cli(tmp: pathlib.Path, *args: str, env: dict | None = None, timeout: float = TIMEOUT) -> _Result:
    """``python -m ensstab_dask.cli ARGS`` in ``tmp``, this checkout's package first."""
    environ = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ensstab_dask.cli", *args],
            cwd=tmp,
            env=environ,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        return _Result(None, str(exc.stdout or ""), str(exc.stderr or ""))
    return _Result(done.returncode, done.stdout, done.stderr)


def failure(res: _Result) -> str | None:
    """The class of a run that hung or printed a traceback; None otherwise."""
    if res.hung:
        return "hang"
    if res.rc < 0:  # killed by a signal: a crash in C code
        return "signal"
    if res.traceback:
        return "traceback"
    return None


def refused(res: _Result, *, unless: bool = False) -> str:
    """A case whose right answer is a refusal: ``error`` for one clear line, ``silent`` for
    a run that went through (or ``unless``: what it did was wrong anyway)."""
    if bad := failure(res):
        return bad
    if res.one_line_error and not unless:
        return "error"
    return "silent" if res.rc == 0 or unless else "noisy"


def make_store(tmp: pathlib.Path, name: str = "S.zarr", seed: int = 3) -> pathlib.Path:
    res = cli(tmp, "sweep", *SWEEP, "--seed", str(seed), "--store", name)
    if res.rc != 0:
        raise RuntimeError(f"could not make the probe's store: {res.err}")
    return tmp / name


def chunk(store: pathlib.Path, var: str, key: str = "0/0/0") -> pathlib.Path:
    path = store / var / "c" / key
    if var in ("stability_draws", "n_useful_v_draws"):
        path = store / var / "c" / (key + "/0")
    if not path.exists():  # n_runs: one axis
        path = store / var / "c" / key.split("/")[0]
    return path


# -- 1: the self-check on a zero standard error ----------------------------------------------
def case_1_self_check(tmp: pathlib.Path) -> str:
    res = cli(tmp, "estimate", "--n-estimators", "20", "--quiet", "--json", "o.json", "--scheduler", "synchronous")
    if bad := failure(res):
        return bad
    check = json.loads((tmp / "o.json").read_text())["self_check"]
    se_zero = any(s is None or s == 0 for s in check["se"])
    z_missing = any(z is None for z in check["z"])
    return "silent" if check["passed"] and (se_zero or z_missing) else "right"


def case_1_weighted(tmp: pathlib.Path) -> str:
    """measured.weighted on a kernel of 4 copies whose unbiased variance is negative."""
    sys.path.insert(0, str(ROOT))
    from ensstab_dask.models.measured import weighted

    rng = np.random.default_rng(0)
    for _ in range(10):
        a = rng.random((4, 4))
    sim = ((a + a.T) / 2)[None].copy()
    np.fill_diagonal(sim[0], np.nan)
    _, se = weighted(sim, np.ones(1))
    return "right" if se > 0 else "silent"


# -- 2: point estimates outside the index's range ---------------------------------------------
def _strong_data(tmp: pathlib.Path) -> pathlib.Path:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 100))
    y = np.r_[np.zeros(15), np.ones(15)].astype(int)
    X[y == 1, :5] += 6.0  # five features shifted by 6 sd
    np.savez(tmp / "strong.npz", X=X, y=y)
    return tmp / "strong.npz"


def _points_in_range(index: str):
    low = -1.0 if index == "kuncheva" else 0.0

    def run(tmp: pathlib.Path) -> str:
        data = _strong_data(tmp)
        res = cli(
            tmp,
            "estimate",
            "--data",
            str(data),
            "--n-target",
            "5",
            "--n-estimators",
            "20",
            "--m-ensemble",
            "1,5,50,100,1000",
            "--n-boot",
            "50",
            "--index",
            index,
            "--scheduler",
            "synchronous",
            "--quiet",
            "--json",
            "o.json",
        )
        if bad := failure(res):
            return bad
        if res.rc != 0:
            return "noisy"
        d = json.loads((tmp / "o.json").read_text())
        points = [v for v in d["curve"].values() if v is not None]
        ends = [v for pair in d["curve_interval"].values() for v in pair if v is not None]
        inside = all(low <= v <= 1.0 for v in points + ends)
        return "right" if inside and len(points) == 5 else "silent"

    return run


# -- 3: outputs over special files -------------------------------------------------------------
def case_3_fifo_simulate(tmp: pathlib.Path) -> str:
    os.mkfifo(tmp / "pipe.json")
    res = cli(
        tmp,
        "simulate",
        "--n-feature",
        "200",
        "--n-target",
        "5",
        "--n-useful",
        "20",
        "--m-stability",
        "5",
        "--m-ensemble",
        "1",
        "--json",
        "pipe.json",
    )
    return refused(res, unless=not (tmp / "pipe.json").is_fifo())


def case_3_fifo_estimate(tmp: pathlib.Path) -> str:
    os.mkfifo(tmp / "pipe.json")
    res = cli(tmp, "estimate", *SMALL, "--json", "pipe.json", "--overwrite")
    return refused(res, unless=not (tmp / "pipe.json").is_fifo())


def case_3_fifo_export(tmp: pathlib.Path) -> str:
    store = make_store(tmp)
    os.mkfifo(tmp / "pipe.nc")
    res = cli(tmp, "export", str(store), "pipe.nc", "--overwrite")
    return refused(res, unless=not (tmp / "pipe.nc").is_fifo())


def case_3_socket_sweep(tmp: pathlib.Path) -> str:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp / "sock.nc"))
    try:
        res = cli(tmp, "sweep", *SWEEP, "--output", "sock.nc", "--overwrite")
        kept = (tmp / "sock.nc").is_socket()
    finally:
        sock.close()
    return refused(res, unless=not kept)


def case_3_device_link(tmp: pathlib.Path) -> str:
    """A link to /dev/null as --json: the device behind it is refused, and the link kept."""
    (tmp / "null.json").symlink_to("/dev/null")
    res = cli(tmp, "estimate", *SMALL, "--json", "null.json", "--overwrite")
    return refused(res, unless=not (tmp / "null.json").is_symlink())


# -- 4: simulate --json over an existing file; --json and --output one file --------------------
def case_4_simulate_existing(tmp: pathlib.Path) -> str:
    (tmp / "notes.txt").write_text("my notes\n")
    res = cli(
        tmp,
        "simulate",
        "--n-feature",
        "200",
        "--n-target",
        "5",
        "--n-useful",
        "20",
        "--m-stability",
        "5",
        "--m-ensemble",
        "1",
        "--json",
        "notes.txt",
    )
    return refused(res, unless=(tmp / "notes.txt").read_text() != "my notes\n")


def case_4_same_output(tmp: pathlib.Path) -> str:
    res = cli(tmp, "estimate", *SMALL, "--json", "same.out", "--output", "same.out", "--overwrite")
    return refused(res)


# -- 5: report on a damaged store ----------------------------------------------------------------
def _report_damaged(damage):
    def run(tmp: pathlib.Path) -> str:
        store = make_store(tmp)
        damage(store)
        return refused(cli(tmp, "report", str(store), "-o", "r"))

    return run


def _edit_seed(store: pathlib.Path) -> None:
    import zarr

    zarr.open_group(str(store), mode="r+").attrs["seed"] = 4


def _flip_bits(store: pathlib.Path) -> None:
    path = chunk(store, "stability_std")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate(store: pathlib.Path) -> None:
    path = chunk(store, "stability_std")
    path.write_bytes(path.read_bytes()[:5])


# -- 6: a chunk moved, or copied from another seed's store ---------------------------------------
def _swap(store: pathlib.Path) -> None:
    a, b = chunk(store, "stability", "0/0/0"), chunk(store, "stability", "1/0/0")
    tmp = a.with_name("swap")
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)


def _copy_from_seed_1(store: pathlib.Path) -> None:
    other = make_store(store.parent, "other.zarr", seed=1)
    for var in ("stability", "stability_draws", "stability_std"):
        shutil.rmtree(store / var / "c")
        shutil.copytree(other / var / "c", store / var / "c")


def _moved_chunks(damage):
    """verify must call the store damaged and export refuse it; a resume must recompute."""

    def run(tmp: pathlib.Path) -> str:
        store = make_store(tmp)
        reference = cli(tmp, "export", str(store), "ref.nc")
        if reference.rc != 0:
            return failure(reference) or "noisy"
        damage(store)
        verify = cli(tmp, "verify", str(store))
        export = cli(tmp, "export", str(store), "x.nc")
        for res in (verify, export):
            if bad := failure(res):
                return bad
        if export.rc == 0 or verify.rc == 0:
            return "silent"
        resumed = cli(tmp, "sweep", *SWEEP, "--seed", "3", "--store", str(store))
        again = cli(tmp, "export", str(store), "again.nc")
        if bad := failure(resumed) or failure(again):
            return bad
        import xarray as xr

        with xr.open_dataset(tmp / "ref.nc") as a, xr.open_dataset(tmp / "again.nc") as b:
            same = all(np.array_equal(a[v].values, b[v].values, equal_nan=True) for v in a.data_vars)
        return "right" if same and verify.rc == 1 and export.one_line_error else "silent"

    return run


# -- 7: --data '' --------------------------------------------------------------------------------
def case_7_empty_data(tmp: pathlib.Path) -> str:
    return refused(cli(tmp, "estimate", "--data", "", *SMALL))


# -- 8: simulate --seed beyond 2**63 - 1 -----------------------------------------------------------
def _big_seed(seed: int):
    def run(tmp: pathlib.Path) -> str:
        return refused(
            cli(
                tmp,
                "simulate",
                "--n-feature",
                "200",
                "--n-target",
                "5",
                "--n-useful",
                "20",
                "--m-stability",
                "5",
                "--m-ensemble",
                "1",
                "--seed",
                str(seed),
            )
        )

    return run


# -- 9: options silently dropped -------------------------------------------------------------------
def case_9_n_runs(tmp: pathlib.Path) -> str:
    return refused(cli(tmp, "estimate", "--n-runs", "1000000", *SMALL))


def _report_observation(*options: str):
    def run(tmp: pathlib.Path) -> str:
        store = make_store(tmp)
        if (res := cli(tmp, "export", str(store), "s.nc")).rc != 0:
            return failure(res) or "noisy"
        return refused(cli(tmp, "report", "s.nc", "-o", "r", *options))

    return run


# -- 10: a folder made where it must not be; a lock left in the parent -------------------------------
def case_10_cache_dir(tmp: pathlib.Path) -> str:
    data = tmp / "data"
    data.mkdir()
    res = cli(
        tmp,
        "validate",
        *SMALL,
        "--m-stability",
        "5",
        "--n-runs",
        "20",
        "--cache-dir",
        str(data / "cache"),
        env={"ENSSTAB_DATA_DIR": str(data)},
    )
    made = (data / "cache").exists()
    return refused(res, unless=made or "--cache-dir" not in res.err)


def case_10_empty_store(tmp: pathlib.Path) -> str:
    work = tmp / "work"
    work.mkdir()
    res = cli(work, "sweep", *SWEEP, "--store", "")
    return refused(res, unless=any(p.name.endswith(".lock") for p in tmp.iterdir()))


# -- 11: export --allow-incomplete of cells written but not yet marked done ------------------------
def case_11_half_written(tmp: pathlib.Path) -> str:
    """The moment between a block's data and its completion flag, as a writer leaves it:
    the cells are not done, so the export must not show them as if they were."""
    import xarray as xr
    import zarr

    store = make_store(tmp)
    with zarr.config.set({"array.write_empty_chunks": True}):  # a writer's flags: zeros kept, as from the template
        completed = zarr.open_array(str(store / "completed"), mode="r+")
        completed[0] = 0  # the first n_useful row: written, not yet marked
    res = cli(tmp, "export", str(store), "x.nc", "--allow-incomplete")
    if bad := failure(res):
        return bad
    if res.rc != 0:
        return "noisy"
    with xr.open_dataset(tmp / "x.nc") as ds:
        row = ds["stability"].isel(n_useful=0).values
    return "right" if np.isnan(row).all() else "silent"


CASES: list[Case] = [
    Case(1, "estimate: the self-check never passes on a zero SE or a missing z", case_1_self_check),
    Case(1, "measured.weighted: the SE of a negative-variance kernel is the jackknife, not 0", case_1_weighted),
    Case(2, "estimate --index jaccard on strong data: every point in [0, 1]", _points_in_range("jaccard")),
    Case(2, "estimate --index dice on strong data: every point in [0, 1]", _points_in_range("dice")),
    Case(2, "estimate --index kuncheva on strong data: every point in [-1, 1]", _points_in_range("kuncheva")),
    Case(3, "simulate --json FIFO", case_3_fifo_simulate),
    Case(3, "estimate --json FIFO --overwrite", case_3_fifo_estimate),
    Case(3, "export STORE FIFO --overwrite", case_3_fifo_export),
    Case(3, "sweep --output SOCKET --overwrite", case_3_socket_sweep),
    Case(3, "estimate --json LINK-TO-/dev/null --overwrite", case_3_device_link),
    Case(4, "simulate --json over an existing file without --overwrite", case_4_simulate_existing),
    Case(4, "estimate --json X --output X --overwrite", case_4_same_output),
    Case(5, "report on a store with its n_runs chunk deleted", _report_damaged(lambda s: chunk(s, "n_runs").unlink())),
    Case(5, "report on a store with an edited seed attribute", _report_damaged(_edit_seed)),
    Case(5, "report on a store with flipped bits in a stability_std chunk", _report_damaged(_flip_bits)),
    Case(5, "report on a store with a truncated stability_std chunk", _report_damaged(_truncate)),
    Case(
        5,
        "report on a store with a deleted stability_std chunk",
        _report_damaged(lambda s: chunk(s, "stability_std").unlink()),
    ),
    Case(6, "stability chunks c/0/0/0 and c/1/0/0 swapped: verify, export, resume", _moved_chunks(_swap)),
    Case(
        6,
        "chunks copied from a seed-1 store of the same grid: verify, export, resume",
        _moved_chunks(_copy_from_seed_1),
    ),
    Case(7, "estimate --data ''", case_7_empty_data),
    Case(8, "simulate --seed 9223372036854775808", _big_seed(2**63)),
    Case(8, "simulate --seed 10**30", _big_seed(10**30)),
    Case(9, "estimate --n-runs 1000000 with the default model", case_9_n_runs),
    Case(9, "report SWEEP --real-stability nan", _report_observation("--real-stability", "nan")),
    Case(
        9,
        "report SWEEP --real-stability nan --n-useful 30",
        _report_observation("--real-stability", "nan", "--n-useful", "30"),
    ),
    Case(9, "report SWEEP --real-stability 0.3 without --n-useful", _report_observation("--real-stability", "0.3")),
    Case(10, "validate --cache-dir inside $ENSSTAB_DATA_DIR", case_10_cache_dir),
    Case(10, "sweep --store ''", case_10_empty_store),
    Case(11, "export --allow-incomplete of cells written but not marked done", case_11_half_written),
]
