"""The embedded default study's real runs, made once for the whole test session.

Several tests run what users run at full size on the embedded default (the README's API
tour, ``ensstab estimate`` with its defaults, a ``StableFeatureSelector`` in a pipeline),
each making the same 200 real runs of the default forest. Where what a test checks is not
the runs themselves (the answer's words, the tour's calls, the selector's support), it
starts from a copy of one cache of those runs, made by the first test that asks (the
others wait for it, across xdist's workers), and says so.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path


def shared_folder(tmp_path_factory) -> Path:
    """A folder every xdist worker of this session sees (the base temp's parent under xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def default_study_runs(tmp_path_factory) -> Path:
    """The cache folder holding the embedded default's real runs as ``ensstab estimate``
    makes them (10 copies of 20 runs of the 300-tree forest, seed 0), made once."""
    import ensstab_dask as es

    cache = shared_folder(tmp_path_factory) / "default-study-runs"
    with open(cache.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first to come makes them; the others wait, then read
        if not (cache / "made").is_file():
            shutil.rmtree(cache, ignore_errors=True)
            cache.mkdir()
            data = es.make_microarray(seed=0)
            es.estimate(data.X, data.y, 20, cache_dir=str(cache), progress=False, n_boot=0)
            (cache / "made").write_text("")
    return cache


def copy_runs(cache: Path, into: Path) -> Path:
    """The runs' cache files copied into ``into`` (made if needed), the shared ones left untouched."""
    into.mkdir(parents=True, exist_ok=True)
    for entry in cache.iterdir():
        if entry.name != "made":
            (shutil.copytree if entry.is_dir() else shutil.copy2)(entry, into / entry.name)
    return into
