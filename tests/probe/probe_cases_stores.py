"""The probe's store cases of the round where damaged stores are never exported: a resume
never writes through a link out of its store (103), a damaged store is refused by
``export`` and ``report`` as ``verify`` calls it damaged, and a store whose digests were
deleted is damaged, not old (104), a damaged cached naive curve is recomputed and said,
never reused (105), a store path that is no folder leaves no lock behind, and ``verify``'s
advice on edited metadata is what a rerun does (108), a FIFO in a store is refused, not
waited on (112), and a chunk replaced by a folder is one line on resume (114).

Each case makes a tiny store in the empty folder it is given with ``ensstab sweep`` (a
subprocess, as a user runs it), damages it and runs the commands; it returns ``error``
(one clear line, exit status 2), ``right`` (what was asked, with the damage named), or
what it was instead: ``silent`` (a damaged store used, a write outside the store),
``hang``, ``traceback`` or ``noisy``. Links point into a folder of the case's own, never
anywhere else.

    python tests/probe/probe_replay.py --only 103,104,105,108,112,114
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil

from probe_cases_common import Case
from probe_cases_silent import SWEEP, chunk, cli, failure, make_store, refused

#: How long a FIFO case waits before it calls the command hung.
FIFO_TIMEOUT = 60


def _tree(folder: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _flip(path: pathlib.Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x04
    path.write_bytes(bytes(data))


def _resume(tmp: pathlib.Path, store: pathlib.Path, timeout: float = 300):
    return cli(tmp, "sweep", *SWEEP, "--seed", "3", "--store", str(store), timeout=timeout)


# 103: a resume through a chunk folder linked out of the store ------------------------------------


def case_103_linked_chunk_folder(tmp: pathlib.Path) -> str:
    store = make_store(tmp)
    outside = tmp / "outside"
    outside.mkdir()
    shutil.rmtree(store / "stability" / "c")  # every cell of it to recompute, through the link
    (store / "stability" / "c").symlink_to(outside, target_is_directory=True)
    res = _resume(tmp, store)
    if bad := failure(res):
        return bad
    if any(outside.iterdir()):
        return "silent"
    return refused(res, unless="stability/c" not in res.err)


# 104: a damaged store is refused by export and report as verify calls it damaged ------------------


def _refused_everywhere(damage):
    def run(tmp: pathlib.Path) -> str:
        store = make_store(tmp)
        damage(store)
        verify = cli(tmp, "verify", str(store))
        export = cli(tmp, "export", str(store), "x.nc", "--allow-incomplete")
        report = cli(tmp, "report", str(store), "-o", "r")
        for res in (verify, export, report):
            if bad := failure(res):
                return bad
        if verify.rc == 0 or export.rc == 0 or report.rc == 0:
            return "silent"
        return "error" if export.one_line_error and report.one_line_error else "noisy"

    return run


def _flip_completion(store: pathlib.Path) -> None:
    _flip(chunk(store, "completed"))


def _truncate_completion(store: pathlib.Path) -> None:
    path = chunk(store, "completed")
    path.write_bytes(path.read_bytes()[:5])


def _digests_deleted_and_rows_swapped(store: pathlib.Path) -> None:
    shutil.rmtree(store / "cell_digest")
    meta = json.loads((store / "zarr.json").read_text())
    meta["consolidated_metadata"]["metadata"].pop("cell_digest")
    (store / "zarr.json").write_text(json.dumps(meta))
    a, b = store / "stability" / "c" / "0", store / "stability" / "c" / "1"
    a.rename(store / "aside")
    b.rename(a)
    (store / "aside").rename(b)


# 105: validate's cached naive curve with one flipped bit -------------------------------------------


def case_105_cached_curve_flipped(tmp: pathlib.Path) -> str:
    """Through the library (the naive check alone, in seconds): the same cache ``validate``
    keeps. ``right``: recomputed, the right numbers, and a warning naming the file."""
    import logging

    import numpy as np

    from ensstab_dask.estimates.validation.harness import naive_check
    from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
    from ensstab_dask.real.datasets import make_microarray

    data = make_microarray(n_feature=120, n_informative=10, effect=2.0, n_samples=40, seed=0)
    naive = NaiveSettings(m_ensemble=(1, 3), m_stability=3, seed=1)
    kw = dict(cache_dir=tmp, client="synchronous", progress=False)
    first = naive_check(data.X, data.y, 10, naive, **kw)
    (path,) = tmp.glob("naive-*.nc")
    raw = bytearray(path.read_bytes())
    at = raw.find(np.float64(first["stability"].values[0]).tobytes())
    if at < 0:
        return "noisy"  # the probe could not find the value to damage
    raw[at + 6] ^= 0x10
    path.write_bytes(bytes(raw))
    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            said.append(record.getMessage())

    logger = logging.getLogger("ensstab_dask")
    handler = Keep(logging.WARNING)
    logger.addHandler(handler)
    try:
        again = naive_check(data.X, data.y, 10, naive, **kw)
    finally:
        logger.removeHandler(handler)
    same = np.array_equal(again["stability"].values, first["stability"].values)
    if int(again.attrs["cached"]) or not same:
        return "silent"
    return "right" if any(str(path) in line for line in said) else "silent"


# 108: a store path that is no folder; verify's advice on edited metadata ---------------------------


def case_108_fifo_store_lock(tmp: pathlib.Path) -> str:
    os.mkfifo(tmp / "S.zarr")  # a special file where the store would be, as a device is
    res = cli(tmp, "sweep", *SWEEP, "--store", "S.zarr", timeout=FIFO_TIMEOUT)
    if bad := failure(res):
        return bad
    return refused(res, unless=(tmp / ".S.zarr.lock").exists())


def case_108_dtype_edit(tmp: pathlib.Path) -> str:
    """``right``: verify calls the store damaged and its advice is what the rerun does (the
    rerun refuses in one line, saying to start a fresh store, and changes nothing);
    ``silent``: the rerun says done and the store stays damaged (the advice loops)."""
    store = make_store(tmp)
    for meta in (store / "stability" / "zarr.json", store / "zarr.json"):
        meta.write_text(meta.read_text().replace('"data_type": "float64"', '"data_type": "float32"', 1))
    before = _tree(store)
    verify = cli(tmp, "verify", str(store))
    rerun = _resume(tmp, store)
    after = cli(tmp, "verify", str(store))
    for res in (verify, rerun, after):
        if bad := failure(res):
            return bad
    if verify.rc == 0 or rerun.rc == 0 and after.rc != 0:
        return "silent"
    if rerun.one_line_error and "fresh store" in rerun.err and "fresh store" in verify.out and _tree(store) == before:
        return "error"
    return "noisy"


# 112: a FIFO inside a store ------------------------------------------------------------------------


def _fifo_at(where: str, *command: str):
    def run(tmp: pathlib.Path) -> str:
        store = make_store(tmp)
        (store / where).unlink()
        os.mkfifo(store / where)
        args = [a.replace("STORE", str(store)) for a in command]
        res = cli(tmp, *args, timeout=FIFO_TIMEOUT)
        if bad := failure(res):
            return bad
        if res.rc == 0:
            return "silent"
        named = f"{where} is a FIFO" in res.out + res.err
        if args[0] == "verify":
            return "error" if res.rc == 1 and named else "noisy"
        return "error" if res.one_line_error and named else "noisy"

    return run


# 114: a chunk replaced by a folder, on resume ------------------------------------------------------


def case_114_chunk_is_a_folder(tmp: pathlib.Path) -> str:
    store = make_store(tmp)
    victim = chunk(store, "stability")
    victim.unlink()
    victim.mkdir()
    res = _resume(tmp, store)
    if bad := failure(res):
        return bad
    return refused(res, unless="is a folder" not in res.err)


CASES: list[Case] = [
    Case(103, "a resume through a chunk folder linked out of the store", case_103_linked_chunk_folder),
    Case(104, "a flipped bit in a completion chunk: export, report", _refused_everywhere(_flip_completion)),
    Case(104, "a truncated completion chunk: export, report", _refused_everywhere(_truncate_completion)),
    Case(
        104, "cell_digest deleted, two stability rows swapped", _refused_everywhere(_digests_deleted_and_rows_swapped)
    ),
    Case(105, "validate's cached naive curve with one flipped bit", case_105_cached_curve_flipped),
    Case(108, "--store a FIFO: no lock made beside it", case_108_fifo_store_lock),
    Case(108, "a dtype edit: verify's advice against the rerun", case_108_dtype_edit),
    Case(112, "a FIFO as the store's zarr.json: verify", _fifo_at("zarr.json", "verify", "STORE")),
    Case(112, "a FIFO as a chunk: export", _fifo_at("stability/c/0/0/0", "export", "STORE", "x.nc")),
    Case(114, "a chunk replaced by a folder, on resume", case_114_chunk_is_a_folder),
]
