"""Stress a sweep store: concurrent writers, random kills, random chunk damage.

    python benchmarks/bench_store_stress.py [--rounds 30] [--seed 0]

Each round, on one store (new in some rounds, left from the previous round in others):
two or three ``ensstab sweep`` processes start at random offsets, one of them may be
SIGKILLed at a random moment, and between rounds the store may be damaged: a random chunk
file deleted, truncated or given one flipped bit, a chunk of the ``n_runs`` or ``repeat``
coordinate deleted, or a symbolic link planted at the lock file's path (pointing at a
file that must come out untouched). After every writer has ended:

* a writer that said "sweep done" must have left a store whose export equals the
  reference sweep (computed once without a store) bit for bit, every variable and
  coordinate;
* ``ensstab export`` must either write exactly the reference or refuse with one line
  (exit 2), never write anything else;
* ``ensstab verify`` must say "ok" exactly when the export equals the reference.

A violation of any of these is a silent error; the goal is zero. Finally the store is
repaired by one more sweep and must equal the reference.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GRID = [
    "--n-feature",
    "200",
    "--n-target",
    "10",
    "--n-useful",
    "10:13:1",
    "--p",
    "0.05:1.0:0.05",
    "--m-ensemble",
    "1,3",
    "--m-stability",
    "4",
    "--repeats",
    "2",
    "--batch-size",
    "1",
    "--seed",
    "7",
]
CLI = [sys.executable, "-m", "ensstab_dask.cli"]


def run(*args, timeout=300):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


VARS = ("stability", "stability_std", "n_useful_v", "n_useful_v_std", "stability_draws", "n_useful_v_draws")


def exported(store: Path, out: Path):
    """(exit code, every variable and coordinate as one flat array, or None; stderr) of ``ensstab export``."""
    import xarray as xr

    res = run("export", str(store), str(out), "--overwrite")
    if res.returncode != 0:
        return res.returncode, None, res.stderr
    with xr.open_dataset(out) as ds:
        return 0, _flat(ds), res.stderr


COORDS = ("n_useful", "p", "m_ensemble", "n_runs", "repeat")


def _flat(ds) -> np.ndarray:
    """Every variable and every coordinate, one flat array: a zeroed coordinate is a difference."""
    return np.concatenate([ds[v].values.ravel() for v in VARS] + [ds[c].values.ravel().astype(float) for c in COORDS])


def exported_file(path: Path) -> np.ndarray:
    import xarray as xr

    with xr.open_dataset(path) as ds:
        return _flat(ds)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="ensstab-stress-"))
    silent: list[str] = []
    counts = {
        "writers": 0,
        "killed": 0,
        "refused": 0,
        "done": 0,
        "damaged": 0,
        "export_refused": 0,
        "flipped": 0,
        "coordinate": 0,
        "link": 0,
        "link_refused": 0,
    }
    t0 = time.perf_counter()
    try:
        ref = work / "ref.nc"
        assert run("sweep", *GRID, "--scheduler", "synchronous", "--no-progress", "--output", str(ref)).returncode == 0

        reference = exported_file(ref)
        store = work / "S.zarr"
        for r in range(args.rounds):
            if rng.random() < 0.3 and store.exists():
                shutil.rmtree(store)  # some rounds start from nothing
            if store.exists() and rng.random() < 0.5:
                files = [p for p in store.rglob("*") if p.is_file() and p.name != "zarr.json"]
                coords = [
                    p
                    for c in ("n_runs", "repeat")
                    for p in (store / c).rglob("*")
                    if p.is_file() and p.name != "zarr.json"
                ]
                fault = rng.choice(["delete", "truncate", "flip", "coordinate"])
                if fault == "coordinate" and coords:
                    rng.choice(coords).unlink()
                    counts["coordinate"] += 1
                elif files:
                    victim = rng.choice(files)
                    if fault == "delete":
                        victim.unlink()
                    elif fault == "truncate":
                        victim.write_bytes(victim.read_bytes()[: rng.randrange(1, 8)])
                    else:
                        data = bytearray(victim.read_bytes())
                        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
                        victim.write_bytes(bytes(data))
                        counts["flipped"] += 1
                    counts["damaged"] += 1
            link, precious = work / ".S.zarr.lock", work / "precious.txt"
            planted = rng.random() < 0.15
            if planted:
                precious.write_text("the user's file\n")
                if link.exists() or link.is_symlink():
                    link.unlink()
                link.symlink_to(precious)
                counts["link"] += 1
            procs = []
            for _ in range(rng.choice([2, 3])):
                time.sleep(rng.uniform(0, 0.5))
                cmd = [*CLI, "sweep", *GRID, "--store", str(store), "--scheduler", "synchronous", "--no-progress"]
                procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT))
            counts["writers"] += len(procs)
            if rng.random() < 0.5:
                time.sleep(rng.uniform(0.5, 4.0))
                victim = rng.choice(procs)
                if victim.poll() is None:
                    victim.send_signal(signal.SIGKILL)
                    counts["killed"] += 1
            outcomes = [(p.wait(timeout=300), *p.communicate()) for p in procs]
            if planted:
                if precious.read_text() != "the user's file\n":
                    silent.append(f"round {r}: a writer wrote through the link planted at the lock's path")
                for code, _, err in outcomes:
                    if code == 2 and "is a symbolic link" in err and len(err.strip().splitlines()) == 1:
                        counts["link_refused"] += 1
                    elif code != -signal.SIGKILL:
                        silent.append(f"round {r}: a writer under a planted link ended {code}: {err[-200:]!r}")
                link.unlink()
            said_done = False
            for code, out, err in outcomes:
                if code == 0 and "sweep done" in out:
                    said_done = True
                    counts["done"] += 1
                elif code == 2 and "being written by another sweep" in err:
                    counts["refused"] += 1
            code, draws, err = exported(store, work / "x.nc")
            ok = draws is not None and np.array_equal(draws, reference, equal_nan=True)
            if draws is not None and not ok:
                silent.append(f"round {r}: export succeeded with data other than the reference")
            if draws is None:
                counts["export_refused"] += 1
                if len(err.strip().splitlines()) != 1:
                    silent.append(f"round {r}: export failed without a one-line error: {err[-300:]!r}")
            if said_done and not ok:
                # A damaged store refused by export after "sweep done" is only allowed when the
                # damage came later; here writers ran after the damage, so "done" must mean done.
                silent.append(f"round {r}: a writer said 'sweep done' but the store does not export the reference")
            verified = run("verify", str(store)) if store.exists() else None
            if verified is not None and (verified.returncode == 0) != ok and draws is not None:
                silent.append(f"round {r}: verify says {verified.stdout.strip()!r} but export ok={ok}")
            print(f"round {r}: exits {[o[0] for o in outcomes]}, export {'ok' if ok else 'refused'}", flush=True)
        final = run("sweep", *GRID, "--store", str(store), "--scheduler", "synchronous", "--no-progress")
        if final.returncode == 2 and "damaged" in final.stderr and len(final.stderr.strip().splitlines()) == 1:
            # A chunk that cannot be read is reported, not repaired: the user deletes the store and reruns.
            print(f"final: damage reported loudly ({final.stderr.strip()[:120]}...); store deleted and rerun")
            shutil.rmtree(store)
            final = run("sweep", *GRID, "--store", str(store), "--scheduler", "synchronous", "--no-progress")
        code, draws, err = exported(store, work / "x.nc")
        if final.returncode != 0 or draws is None or not np.array_equal(draws, reference, equal_nan=True):
            silent.append(
                f"final repair failed: sweep {final.returncode} {final.stderr[-200:]!r}, export {err[-200:]!r}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{args.rounds} rounds in {time.perf_counter() - t0:.0f} s: {counts}")
    print(f"silent errors: {len(silent)}")
    for s in silent:
        print("  " + s)
    return 1 if silent else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    raise SystemExit(main())
