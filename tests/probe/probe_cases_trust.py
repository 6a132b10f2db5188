"""The probe's cases of the fifth round on what the package trusts: the run cache (a forged
entry, ranks that are no permutation, a link loop, a FIFO or a folder in an entry's place:
202, 204, 208, 211) and the scheduler at an address (a plain ``tcp://`` address of another
machine, a Scheduler's identity with no scheduler behind it, a remote cluster whose only
worker dies or stops once the store holds every block, or before an estimate's data reach
it: 203, 207, 210). Numbered 200 + the item.

Each case runs ``ensstab estimate`` (or ``sweep``) as a user would, in the empty folder it
is given, and returns its class (``probe_cases_common.CLASSES``): a cache case is
``right`` when the answer is the fresh one and a warning names the entry, ``silent`` when
the entry was reused without a word, ``noisy`` when the run failed because of its cache.

    python tests/probe/probe_replay.py --only 202,203,204,207,208,210,211
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]  # the repository: tests/probe/..
sys.path[:0] = [str(HERE), str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402
from faults import env, listener, run_cli, scheduler_identity_answer  # noqa: E402
from probe_cases_common import Case  # noqa: E402
from probe_cases_loud import classify  # noqa: E402
from probe_cases_schedulers import HEAVY  # noqa: E402
from process_cluster import ProcessCluster  # noqa: E402
from sweep_cases import wait_for_blocks  # noqa: E402

#: The issue's EST: a small estimate on a small two-class file, its runs cached in ./cache.
EST = [
    "estimate",
    "--data",
    "d.npz",
    "--n-target",
    "5",
    "--n-estimators",
    "5",
    "--m-ensemble",
    "1,5",
    "--n-boot",
    "0",
    "--scheduler",
    "synchronous",
]


def two_class_file(tmp: Path, name: str = "d.npz", seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], 15)
    X = rng.standard_normal((30, 40))
    X[:, :6] += 2.0 * y[:, None]
    np.savez(tmp / name, X=X, y=y)


def _estimate(tmp: Path, *extra: str, data: str = "d.npz"):
    (tmp / "cache").mkdir(exist_ok=True)
    args = [a if a != "d.npz" else data for a in EST]
    return run_cli(*args, "--cache-dir", "cache", "--json", "-", *extra, cwd=tmp, timeout=300)


def _answer(ran) -> list:
    return json.loads(ran.stdout)["curve"]


def _cache_case(damage):
    """The estimate made once, its entries changed by ``damage(entry, tmp)``, then made again:
    right when the second answer is the first and a warning names what was not reused or
    not written; silent when every run was reused without a word."""

    def run(tmp: Path) -> str:
        two_class_file(tmp)
        first = _estimate(tmp)
        if first.returncode != 0:
            return "traceback" if "Traceback" in first.stderr else "noisy"
        for entry in sorted((tmp / "cache").glob("runs-*.nc")):
            damage(entry, tmp)
        again = _estimate(tmp)
        if again.timed_out:
            return "hang"
        if "Traceback" in again.stderr:
            return "traceback"
        if again.returncode != 0:
            return "noisy"  # a cache is never a reason to fail
        warned = any(("not reused" in line or "not written" in line) and "cache entry" in line for line in again.lines)
        if _answer(again) != _answer(first):
            return "silent"
        return "right" if warned else "silent"

    return run


def _forge(change):
    """An entry rewritten by ``change(ds, tmp)`` and sealed again with the package's own
    checksum helper."""

    def damage(entry: Path, tmp: Path) -> None:
        import xarray as xr

        from ensstab_dask.outputs import CHECKSUM_ATTR, content_checksum

        with xr.open_dataset(entry) as ds:
            ds = ds.load()
        ds.attrs.pop(CHECKSUM_ATTR, None)
        ds = change(ds, tmp)
        ds.attrs[CHECKSUM_ATTR] = content_checksum(ds)
        entry.unlink()
        ds.to_netcdf(entry)

    return damage


def _swapped(ds, tmp):
    ranks = ds["ranks"].values.copy()
    ranks[[0, 1]] = ranks[[1, 0]]
    return ds.assign(ranks=(ds["ranks"].dims, ranks, ds["ranks"].attrs))


def _other_data(ds, tmp):
    """The runs of another data set of the same shape, under this entry's name and key."""
    import xarray as xr

    two_class_file(tmp, "other.npz", seed=1)
    folder = tmp / "other-cache"
    folder.mkdir(exist_ok=True)
    args = [a if a != "d.npz" else "other.npz" for a in EST]
    run_cli(*args, "--cache-dir", str(folder), "--quiet", cwd=tmp, timeout=300)
    for entry in folder.glob("runs-*.nc"):
        with xr.open_dataset(entry) as other:
            other = other.load()
        if other["ranks"].shape == ds["ranks"].shape:
            other.attrs = {k: v for k, v in other.attrs.items() if k != "ensstab_checksum"}
            return other.assign_attrs(key=ds.attrs.get("key"))
    raise RuntimeError("the other data's cache has no entry of this shape")


def _ranks(fill):
    """Every rank set by ``fill(ranks)``; each run's digest, where the entry has them, sealed
    again too: only the permutation check is left to catch it."""

    def change(ds, tmp):
        ranks = fill(ds["ranks"].values.copy())
        out = ds.assign(ranks=(ds["ranks"].dims, ranks))
        if "run_digest" in ds:
            from ensstab_dask.real.run_cache import run_digests

            out = out.assign(run_digest=(ds["run_digest"].dims, run_digests(str(ds.attrs["key"]), ranks)))
        return out

    return change


def _zeros(ranks):
    return np.zeros_like(ranks)


def _huge(ranks):
    ranks.reshape(-1)[0] = 10**6
    return ranks


def _link_loop(entry: Path, tmp: Path) -> None:
    entry.unlink()
    entry.symlink_to(entry.name)


def _fifo(entry: Path, tmp: Path) -> None:
    entry.unlink()
    os.mkfifo(entry)


def _folder(entry: Path, tmp: Path) -> None:
    entry.unlink()
    entry.mkdir()


# 203: a plain tcp:// address of another machine: one warning line ---------------------------------


def _remote_plain_tcp(tmp: Path) -> str:
    """192.0.2.1 (TEST-NET-1, never routed): the connection fails, after the warning."""
    two_class_file(tmp)
    ran = run_cli(*EST[:-2], "--scheduler", "tcp://192.0.2.1:8786", "--timeout", "1", "--no-cache", cwd=tmp)
    if ran.timed_out or "Traceback" in ran.stderr:
        return "hang" if ran.timed_out else "traceback"
    warned = [line for line in ran.lines if "plain tcp:// address of another machine" in line and "--tls-" in line]
    docs = (ROOT / "docs" / "clusters.md").read_text().splitlines()[:4]
    said_first = any("must be an address you trust" in line for line in docs)
    return "right" if len(warned) == 1 and said_first else "silent"


# 207: a Scheduler's identity with no scheduler behind it ----------------------------------------


def _fake_identity(tmp: Path) -> str:
    two_class_file(tmp)
    with listener(scheduler_identity_answer()) as address:
        ran = run_cli(*EST[:-2], "--scheduler", address, "--timeout", "5", "--no-cache", cwd=tmp, timeout=120)
    return classify(ran, needle=address)


# 210: a remote cluster's only worker killed or stopped once the store holds every block ------------


def _after_every_block(signum: int):
    """The heavy sweep on a one-worker cluster, the worker signalled once every block is in
    the store: right when the sweep ends by itself (status 0) or says what it waits for
    within 40 s; a hang when it waits without a word."""

    def run(tmp: Path) -> str:
        cluster = ProcessCluster(Path(tempfile.mkdtemp(dir=tmp, prefix="cluster-")), n_workers=1)
        store = tmp / "s.zarr"
        args = [sys.executable, "-m", "ensstab_dask.cli", *HEAVY, "--store", str(store), "--scheduler", cluster.address]
        proc = subprocess.Popen(args, cwd=tmp, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_for_blocks(store, 12, lambda: proc.poll() is None)
            os.killpg(cluster.pid("worker-1"), signum)
            try:
                _, err = proc.communicate(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
                return "hang" if not err.strip() else "right"
            if "Traceback" in err:
                return "traceback"
            # And once more on the finished store: nothing to run, so no worker is needed.
            again = subprocess.run(args, cwd=tmp, env=env(), capture_output=True, text=True, timeout=60)
            if "Traceback" in again.stderr:
                return "traceback"
            return "right" if proc.returncode == 0 and again.returncode == 0 else "noisy"
        except subprocess.TimeoutExpired:
            return "hang"
        finally:
            if proc.poll() is None:
                proc.kill()
            try:
                os.killpg(cluster.pid("worker-1"), signal.SIGCONT)
            except (OSError, ValueError):
                pass
            cluster.stop()
            time.sleep(0.1)

    return run


def _estimate_on_a_stopped_worker(tmp: Path) -> str:
    """An estimate on a remote one-worker cluster whose worker is SIGSTOPped: its data never
    reach the worker. Right when the wait is said within 40 s (then the worker is continued
    and the estimate must finish); a hang when nothing is said."""
    two_class_file(tmp)
    cluster = ProcessCluster(Path(tempfile.mkdtemp(dir=tmp, prefix="cluster-")), n_workers=1)
    args = [sys.executable, "-m", "ensstab_dask.cli", *EST[:-2], "--no-cache", "--scheduler", cluster.address]
    os.killpg(cluster.pid("worker-1"), signal.SIGSTOP)
    proc = subprocess.Popen(args, cwd=tmp, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        start = time.monotonic()
        while not any("has answered for" in line for line in lines):
            if time.monotonic() - start > 40 or proc.poll() is not None:
                return "hang" if proc.poll() is None else "noisy"
            time.sleep(0.2)
        os.killpg(cluster.pid("worker-1"), signal.SIGCONT)
        code = proc.wait(120)
        reader.join(10)
        return "traceback" if "Traceback" in "".join(lines) else "right" if code == 0 else "noisy"
    finally:
        if proc.poll() is None:
            proc.kill()
        os.killpg(cluster.pid("worker-1"), signal.SIGCONT)
        cluster.stop()


CASES: list[Case] = [
    Case(202, "a cache entry with two runs swapped, its checksum rewritten", _cache_case(_forge(_swapped))),
    Case(202, "another data set's runs under this key, checksum rewritten", _cache_case(_forge(_other_data))),
    Case(203, "a plain tcp:// address of another machine: warned, and the docs say it first", _remote_plain_tcp),
    Case(204, "a cache entry that is a symbolic link to itself", _cache_case(_link_loop)),
    Case(207, "a Scheduler identity with no scheduler behind it", _fake_identity),
    Case(208, "a cache entry whose ranks are all 0, digests resealed", _cache_case(_forge(_ranks(_zeros)))),
    Case(208, "a cache entry with one rank of 10**6, digests resealed", _cache_case(_forge(_ranks(_huge)))),
    Case(210, "the only worker SIGKILLed once the store holds every block", _after_every_block(signal.SIGKILL)),
    Case(210, "the only worker SIGSTOPped once the store holds every block", _after_every_block(signal.SIGSTOP)),
    Case(210, "an estimate on a remote cluster whose only worker is SIGSTOPped", _estimate_on_a_stopped_worker),
    Case(211, "a FIFO in a cache entry's place", _cache_case(_fifo)),
    Case(211, "a folder in a cache entry's place", _cache_case(_folder)),
]
