"""Zarr stores of sweeps: a template first, finished blocks written as they come.

Layout of a store ``S.zarr``:

* the Dataset itself (zarr), created in full from a template before any work, every
  value NaN until its block is written;
* ``completed``, the completion record: an int8 variable over the same cells and with
  the same chunks, set to 1 for a block's cells only *after* the block's data are
  written. Zarr writes each chunk file atomically (temporary file, then rename), so a
  block that was being written when the run died is not marked and is recomputed.

A store is created under a temporary name and renamed into place, so a store either
does not exist or has its full template and settings. Opening a store with different
settings refuses, naming them, and changes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import xarray as xr

__all__ = ["SweepStore", "export_netcdf", "write_netcdf", "StoreMismatch"]

COMPLETED = "completed"
SETTINGS_ATTR = "ensstab_settings"


class StoreMismatch(ValueError):
    """The store was made with other settings than those requested."""


class SweepStore:
    """A sweep's zarr store and its completion record."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    # -- creation and checks -------------------------------------------------
    @classmethod
    def open_or_create(cls, path, template: xr.Dataset, settings: dict) -> SweepStore:
        """Open the store at ``path`` if its settings match, else create it from ``template``."""
        store = cls(path)
        if store.path.exists():
            store.check(settings, template)
            return store
        parent = store.path.parent
        if not parent.is_dir():
            raise ValueError(f"store: directory {str(parent)!r} does not exist")
        tmp = Path(tempfile.mkdtemp(prefix=f".{store.path.name}.", suffix=".tmp", dir=parent))
        try:
            tmp.rmdir()
            template.attrs[SETTINGS_ATTR] = json.dumps(settings, sort_keys=True)
            template.to_zarr(tmp, compute=False, mode="w-", consolidated=False)
            os.rename(tmp, store.path)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return store

    def settings(self) -> dict:
        try:
            ds = xr.open_zarr(self.path, consolidated=False)
        except Exception as exc:  # noqa: BLE001 - any failure means: not our store
            raise ValueError(f"store: {str(self.path)!r} exists but is not a readable zarr store ({exc})") from None
        if SETTINGS_ATTR not in ds.attrs or COMPLETED not in ds:
            raise ValueError(f"store: {str(self.path)!r} exists but is not an ensstab sweep store")
        return json.loads(ds.attrs[SETTINGS_ATTR])

    def check(self, settings: dict, template: xr.Dataset) -> None:
        """Raise :class:`StoreMismatch` naming every setting or grid that differs."""
        stored = self.settings()
        diffs = [
            f"{k}: {stored.get(k)!r} in the store, {settings.get(k)!r} requested"
            for k in sorted(set(stored) | set(settings))
            if stored.get(k) != settings.get(k)
        ]
        if diffs:
            raise StoreMismatch(
                f"store {str(self.path)!r} was made with different settings; it was left untouched. " + "; ".join(diffs)
            )

    # -- progress ----------------------------------------------------------------
    def completed(self) -> np.ndarray:
        """Boolean mask of the cells whose block has been fully written."""
        return xr.open_zarr(self.path, consolidated=False)[COMPLETED].values.astype(bool)

    def write_block(self, data: xr.Dataset, region: dict[str, slice]) -> None:
        """Write ``data`` into ``region``, then mark those cells complete."""
        data.to_zarr(self.path, region=region, consolidated=False)
        shape = tuple(s.stop - s.start for s in region.values())
        flags = xr.Dataset({COMPLETED: (tuple(region), np.ones(shape, dtype=np.int8))})
        flags.to_zarr(self.path, region=region, consolidated=False)

    def load(self) -> xr.Dataset:
        ds = xr.open_zarr(self.path, consolidated=False).load()
        ds.attrs.pop(SETTINGS_ATTR, None)
        return ds.drop_vars(COMPLETED)


def export_netcdf(
    store: str | os.PathLike, out: str | os.PathLike, *, overwrite: bool = False, allow_incomplete: bool = False
) -> Path:
    """Write a finished sweep store to netCDF.

    Refuses an existing ``out`` unless ``overwrite``, and a store with blocks still
    missing unless ``allow_incomplete``. The file is written under a temporary name and
    renamed, so an error never leaves a half-written ``out`` or destroys an old one.
    """
    src = SweepStore(store)
    if not src.path.exists():
        raise ValueError(f"store: {str(src.path)!r} does not exist")
    src.settings()
    missing = int((~src.completed()).sum())
    ds = src.load()
    if missing and not allow_incomplete:
        raise ValueError(
            f"store {str(src.path)!r} is incomplete ({missing} cells not computed yet); rerun the sweep to finish it, "
            "or pass allow_incomplete=True (CLI: --allow-incomplete)"
        )
    return write_netcdf(ds, out, overwrite=overwrite)


def write_netcdf(ds: xr.Dataset, out: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write ``ds`` to ``out`` under a temporary name, then rename: never a half-written file."""
    out = Path(out)
    if out.exists() and not overwrite:
        raise ValueError(f"output {str(out)!r} exists; pass overwrite=True (CLI: --overwrite) to replace it")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"output directory {str(parent)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent)
    os.close(fd)
    try:
        ds.to_netcdf(tmp)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out
