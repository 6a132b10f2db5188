"""Zarr stores of sweeps: a template first, finished blocks written as they come.

Layout of a store ``S.zarr``:

* the Dataset itself (zarr), created in full from a template before any work, every
  value NaN until its block is written;
* ``completed``, the completion record: an int8 variable over the same cells and with
  the same chunks, set to 1 for a block's cells only *after* the block's data are
  written. Zarr writes each chunk file atomically (temporary file, then rename), so a
  block that was being written when the run died is not marked and is recomputed.
* ``cell_digest``, a keyed BLAKE2b of each cell's values (every variable, every
  repeat) and its place in the grid, keyed by the settings record (the seed, the grid):
  written with the block's data, before its completion flag. A chunk moved within the
  store, or copied from another sweep's store, no longer matches its cells' digests, and
  those cells read as damaged (:meth:`SweepStore.misplaced`). A store without
  digests (or chunk checksums, or consolidated metadata) was made by an earlier
  development version and is refused, never read (:meth:`SweepStore.made_earlier`).
* the store's files and metadata, checked before zarr opens anything
  (:mod:`~ensstab_dask.sweeps.integrity`): no link, no special file, no folder where a
  chunk belongs, metadata unchanged since the store was made (its checksum, with the
  record that the store has digests and every chunk of ``completed``).

``verify``, ``export`` and ``report`` run one inspection (:meth:`SweepStore.inspect`)
and a resume the same checks before it writes (:meth:`SweepStore.check`).

One sweep writes a store at a time: it holds the store's lock
(:func:`~ensstab_dask.sweeps.lock.writer_lock`). The chunks' checksums and the cells'
digests are made in :mod:`~ensstab_dask.sweeps.digests`; a store is written to netCDF
through :func:`~ensstab_dask.outputs.write_netcdf`, like every other output.

A store is created under a temporary name and renamed into place (:func:`atomic_output`), so a store either
does not exist or has its full template and settings. Opening a store with different settings refuses, naming
them, and changes nothing.

The template is written with consolidated metadata (one read opens the store, and ``xr.open_zarr`` does not
warn); block writes change no metadata, so it stays current.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import itertools
import json
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import numpy as np
import xarray as xr

from ensstab_dask.exceptions import InvalidParameterError, StoreDamaged, StoreLocked, StoreMismatch
from ensstab_dask.outputs import atomic_output, refuse_to_replace, umask_mode, write_json, write_netcdf
from ensstab_dask.sweeps.digests import cell_digests
from ensstab_dask.sweeps.integrity import (
    EARLIER,
    EDITED,
    FRESH,
    INTEGRITY_ATTR,
    REMOVE,
    RERUN,
    Inspection,
    file_problems,
    layout_problems,
    lost_chunks,
    metadata_changed,
    restore_chunks,
    seal,
    structure_problems,
)
from ensstab_dask.sweeps.lock import check_store_path
from ensstab_dask.wording import param

# atomic_output, refuse_to_replace, umask_mode and write_json live in .outputs, re-exported here.

# zarr is imported where a store is opened: most callers never touch one.

__all__ = [
    "SweepStore",
    "export_netcdf",
    "write_json",
    "umask_mode",
    "StoreMismatch",
    "StoreLocked",
    "StoreDamaged",
    "atomic_output",
    "refuse_to_replace",
    "open_store",
    "Inspection",
]

COMPLETED = "completed"
DIGEST = "cell_digest"
#: How a store's misplaced cells (:meth:`SweepStore.misplaced`) are reported.
MISPLACED = (
    "{n} cells marked done hold values that are not theirs (a chunk moved within the store, copied from another "
    "sweep's store, or changed): each cell's digest binds its values to its place, the seed and the grid"
)
#: The store's bookkeeping variables, not part of the sweep it holds.
BOOKKEEPING = (COMPLETED, DIGEST)


#: What reading a damaged store raises: a codec's error on a corrupted chunk (numcodecs: RuntimeError or ValueError), a
#: decoder's on garbled metadata (ValueError, KeyError, TypeError; zarr's own errors are ValueErrors), an I/O error on a
#: truncated file (OSError, EOFError), an index error on a chunk of the wrong shape. Not a permission error (re-raised
#: as it is: the store may be fine) and not MemoryError.
_DAMAGE = (ValueError, RuntimeError, KeyError, TypeError, IndexError, EOFError, OSError)
SETTINGS_ATTR = "ensstab_settings"


def _agree(have, recorded) -> bool:
    """Whether a stored value agrees with its record (a scalar one with a coordinate holding it in every cell)."""
    have, recorded = np.asarray(have), np.asarray(recorded)
    if recorded.ndim == 0 and have.ndim > 0:
        return bool(have.size) and bool(np.all(have == recorded))
    return np.array_equal(have, recorded)


def _short(value) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= 60 else text[:57] + "..."


@contextlib.contextmanager
def _quiet_consolidation() -> Iterator[None]:
    """Silence zarr's note, on every write of consolidated metadata, that the zarr format 3
    specification does not include it yet.

    It is written on purpose (xarray and zarr read it, and without it ``xr.open_zarr``
    warns on every open), so the note tells our users nothing.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Consolidated metadata is currently not part", category=UserWarning)
        yield


#: Seconds the process waits at exit for zarr's IO thread to stop (:func:`_stop_zarrs_loop`): ample for a
#: thread starved of CPU on a loaded machine, and a bound on the exit of one whose loop is stuck in a call.
_ZARR_STOP_PATIENCE = 10.0


@functools.cache
def _zarr_exits_cleanly() -> None:
    """Import zarr, and have its IO loop stopped, patiently, before zarr's own exit handler
    closes it.

    zarr 3 runs its IO on an event loop in a thread of its own. Its exit handler
    (``zarr.core.sync.cleanup_resources``) asks that loop to stop, waits 0.2 s for the
    thread, then closes the loop whether or not it has stopped: on a loaded machine the
    thread has not run by then, and the process ends with "Thread did not finish cleanly"
    and a "Cannot close a running event loop" traceback. ``atexit`` runs its handlers last
    registered first, so this one, registered once zarr's import has registered zarr's,
    runs before it: zarr's then finds the loop stopped, and closes it quietly.
    """
    import zarr  # noqa: F401 - registers zarr's exit handler, which must come before this one's

    atexit.register(_stop_zarrs_loop)


def _stop_zarrs_loop() -> None:
    """Stop zarr 3's IO loop and wait for its thread, at most :data:`_ZARR_STOP_PATIENCE` s
    (zarr 2 has no loop of its own)."""
    sync = sys.modules.get("zarr.core.sync")
    loop = getattr(sync, "loop", [None])[0]
    thread = getattr(sync, "iothread", [None])[0]
    if loop is None or thread is None or not thread.is_alive():
        return
    with contextlib.suppress(RuntimeError):  # closed meanwhile: nothing left to stop
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_ZARR_STOP_PATIENCE)


def _has_consolidated_metadata(path: Path) -> bool:
    """Whether the store at ``path`` has consolidated metadata (reads the root metadata only)."""
    import zarr

    try:
        zarr.open_consolidated(str(path), mode="r")
    except (KeyError, ValueError):  # zarr 2 raises KeyError, zarr 3 ValueError
        return False
    return True


def open_store(path: str | os.PathLike, *, chunks: Literal["auto"] | None = "auto") -> xr.Dataset:
    """A sweep store opened lazily: metadata and index coordinates are read, values only
    when asked for.

    The store's consolidated metadata, which every store this version makes has, is read
    in one go. ``chunks``: as for ``xr.open_zarr``; None reads each variable through zarr
    alone, no dask graph, which is quicker for a store read whole at once.
    """
    _zarr_exits_cleanly()
    return xr.open_zarr(path, consolidated=True, chunks=chunks)


class SweepStore:
    """A sweep's zarr store and its completion record.

    Every chunk carries a checksum (:func:`~ensstab_dask.sweeps.digests.chunk_codecs`): a chunk that fails it, or
    cannot be read at all, reads as missing (NaN, not done), so that ``verify`` and
    ``export`` report its cells damaged and a rerun recomputes them
    (:meth:`drop_unreadable`). A store without them was made by an earlier development
    version: refused (:meth:`made_earlier`)."""

    def __init__(self, path: str | os.PathLike):
        _zarr_exits_cleanly()  # every use of a store goes through zarr
        self.path = Path(path)
        # The chunk files the last load found unreadable (None before a load): a resume
        # removes them without reading the store a second time.
        self._seen_unreadable: list[Path] | None = None
        self._key: bytes | None = None
        self._record: dict | None = None  # the settings record, read once: it never changes

    # -- creation and checks -------------------------------------------------
    @classmethod
    def open_or_create(cls, path, template: xr.Dataset, settings: dict) -> SweepStore:
        """Open the store at ``path`` if its settings match, else create it from ``template``."""
        store = cls(path)
        check_store_path(store.path)
        if store.path.exists():
            store.check(settings, template)
            return store
        parent = store.path.parent
        if not parent.is_dir():
            raise InvalidParameterError(param("store") + f": directory {str(parent)!r} does not exist")
        template.attrs[SETTINGS_ATTR] = json.dumps(settings, sort_keys=True)
        with atomic_output(store.path, overwrite=False, directory=True) as tmp, _quiet_consolidation():
            template.to_zarr(tmp, compute=False, mode="w-", consolidated=True)
            seal(Path(tmp), COMPLETED)
        return store

    def settings(self) -> dict:
        """The settings record, written with the template (read once). A store holding a
        link or a special file is :class:`StoreDamaged` before anything in it is opened."""
        if self._record is not None:
            return dict(self._record)
        if self.path.is_dir() and (found := file_problems(self.path)):  # before zarr opens any of it
            raise StoreDamaged(f"store {str(self.path)!r} is damaged: " + "; ".join(found) + f"; {REMOVE}")
        try:
            ds = open_store(self.path)
        except PermissionError:
            raise
        except _DAMAGE as exc:
            raise InvalidParameterError(
                param("store") + f": {str(self.path)!r} exists but is not a readable zarr store ({exc})"
            ) from exc
        if SETTINGS_ATTR not in ds.attrs or COMPLETED not in ds:
            raise InvalidParameterError(
                param("store") + f": {str(self.path)!r} exists but is not an ensstab sweep store"
            )
        try:
            record = json.loads(ds.attrs[SETTINGS_ATTR])
            if not isinstance(record, dict):  # valid JSON, but not the object of settings a sweep writes
                raise ValueError(f"a JSON {type(record).__name__}, not an object of settings")
        except ValueError as exc:
            why = f"not valid JSON: {exc}" if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise StoreDamaged(
                param("store") + f" {str(self.path)!r}: its settings record is damaged ({why}); it cannot be trusted"
            ) from exc
        self._record = record
        return dict(record)

    def provenance_problems(self) -> list[str]:
        """What the store's attributes and coordinates say that its settings record does not.

        The settings record (written once, with the template) is the reference: an edited
        ``seed`` attribute or ``p`` coordinate would otherwise be exported as if true.
        """
        stored = self.settings()
        # lazily: only the coordinates named in the record are read
        ds = open_store(self.path, chunks=None)
        problems = []
        for key, value in stored.items():
            if value is None:  # "derived" (n_runs=None is n_runs = m_ensemble): nothing to compare
                continue
            if key in ds.coords:
                have = self._values(ds, key)
            elif key in ds.attrs:
                have = ds.attrs[key]
            else:
                continue
            if not _agree(have, value):
                problems.append(f"{key} is {_short(have)} in the store but {_short(value)} in its settings record")
        # The coordinates the record implies rather than lists (as grid.make_plan makes them).
        implied = {"repeat": np.arange(stored.get("repeats", 0))}
        if stored.get("n_runs") is None and "m_ensemble" in stored:
            implied["n_runs"] = np.asarray(stored["m_ensemble"])  # n_runs = m_ensemble, cell by cell
        for key, value in implied.items():
            if key in ds.coords and not _agree(have := self._values(ds, key), value):
                problems.append(f"{key} is {_short(have)} in the store but {_short(value)} by its settings record")
        if ds.attrs.get("kind", "sweep") != "sweep":  # what a result is read as (stores before it had none)
            problems.append(f"kind is {_short(ds.attrs['kind'])} in the store, but a sweep store holds a sweep")
        return problems

    def damaged(self, state: xr.Dataset | None = None) -> np.ndarray:
        """Cells marked complete with a value missing (NaN) in any variable: a chunk deleted.

        Every variable over the cells is checked, the summaries as well as the draws
        (a standard deviation over a single repeat is NaN by definition and is skipped).
        ``state`` is the store as :meth:`load` ``(completion=True)`` gives it, when the
        caller has it already (otherwise it is read here, once). A chunk that cannot be
        read at all raises :class:`StoreDamaged` naming the variable and the store.
        """
        state = self.load(completion=True) if state is None else state
        done = state[COMPLETED].values.astype(bool)
        bad = np.zeros_like(done)
        single = state.sizes.get("repeat", 2) < 2
        for name, var in state.data_vars.items():
            if name in BOOKKEEPING or var.ndim < done.ndim or (single and str(name).endswith("_std")):
                continue
            values = var.values
            bad |= done & np.isnan(values).any(axis=tuple(range(done.ndim, values.ndim)))
        return bad

    def digest_key(self) -> bytes:
        """The key of the cells' digests: a hash of the settings record (the seed, the grid,
        every setting), so that a digest holds only in the sweep it was written for."""
        if self._key is None:
            record = json.dumps(self.settings(), sort_keys=True)
            self._key = hashlib.blake2b(record.encode(), digest_size=32).digest()
        return self._key

    def misplaced(self, state: xr.Dataset) -> np.ndarray:
        """Cells marked done whose values do not match their digest: a chunk moved within
        the store, copied from another sweep's store (another seed or grid), or changed.
        ``state`` as for :meth:`damaged`."""
        done = state[COMPLETED].values.astype(bool)
        dims = tuple(str(d) for d in state[COMPLETED].dims)
        want = cell_digests(state.drop_vars(list(BOOKKEEPING)), dims, [0] * len(dims), self.digest_key())
        return done & (want != state[DIGEST].values) & ~self.damaged(state)  # a cell with no data is damaged

    def checked(self) -> xr.Dataset:
        """The store read once and checked as ``verify`` checks it (:meth:`inspect`), for a
        reader that trusts what it gets (``export``, ``report``): a store with any problem
        raises :class:`StoreDamaged`, one line naming what is damaged and what to do.
        Cells not marked done are NaN in every variable, even where a running sweep has
        written their data and not yet its flag. ``completed`` is kept."""
        found = self.inspect()
        if found.problems:
            raise StoreDamaged(
                f"store {str(self.path)!r} is damaged: " + "; ".join(found.problems) + f"; {found.advice} "
                f"(ensstab verify {str(self.path)!r} lists it all)"
            )
        state = found.state
        assert state is not None  # read whole whenever no problem was found
        done = state[COMPLETED].astype(bool)
        for name in [n for n in state.data_vars if n not in BOOKKEEPING]:
            state[name] = state[name].where(done)
        return state.drop_vars(DIGEST, errors="ignore")

    def inspect(self, *, template: xr.Dataset | None = None) -> Inspection:
        """Every check ``verify`` makes, in order, each only once the ones before it pass:
        the store's files and metadata (:func:`~ensstab_dask.sweeps.integrity.structure_problems`;
        nothing is opened before), the settings record, the arrays' dtypes and shapes
        against ``template`` (the sweep's, when the caller has it), the attributes and
        coordinates against the record (:meth:`provenance_problems`), the metadata's
        checksum, every chunk's checksum, the completion record's chunks, data behind
        every cell marked done (:meth:`damaged`) and the cells' digests
        (:meth:`misplaced`). A damaged settings record raises :class:`StoreDamaged`, its
        cause chained."""
        out = Inspection()
        problems, advice, meta = structure_problems(self.path, DIGEST)
        if meta is not None and not (meta.attrs or meta.arrays or (self.path / "zarr.json").exists()):
            self.settings()  # a folder that is no store: the error it always was
        if meta is None or (problems and not meta.attrs):  # nothing more can be read safely
            out.add(problems, advice)
            return out
        # A store made earlier is refused before zarr reads it (damage found above is named first).
        if not problems and (lacks := self.made_earlier()):
            out.add([f"it has no {' and no '.join(lacks)}"], EARLIER)
            return out
        self.settings()  # a damaged record is the error it always was
        if problems:
            out.add(problems, advice)
            return out
        if template is not None:
            out.add(layout_problems(template, meta, optional=(DIGEST,)), FRESH)
            if out.problems:
                return out
        out.add([f"edited or damaged since it was made: {p}" for p in self.provenance_problems()], EDITED)
        # The checksum says only that the metadata changed: named when nothing above said what.
        out.add(metadata_changed(meta) if not out.problems else [], FRESH)
        if out.problems:
            return out
        state = self.load(completion=True)
        out.state, out.done = state, state[COMPLETED].values.astype(bool)
        unreadable = [c.relative_to(self.path) for c in self._seen_unreadable or []]  # what load found
        out.add([f"chunk {c} fails its checksum or cannot be read" for c in unreadable], RERUN)
        lost = lost_chunks(self.path, COMPLETED)
        out.add([f"chunk {c.relative_to(self.path)} of the completion record is missing" for c in lost], RERUN)
        damaged, misplaced = int(self.damaged(state).sum()), int(self.misplaced(state).sum())
        if damaged:
            out.add([f"{damaged} cells are marked done but hold no data"], RERUN)
        if misplaced:
            out.add([MISPLACED.format(n=misplaced)], RERUN)
        return out

    def check(self, settings: dict, template: xr.Dataset) -> None:
        """Raise :class:`StoreMismatch` naming every setting or grid that differs, and
        :class:`StoreDamaged` when the store's own metadata contradicts its record."""
        problems, advice, meta = structure_problems(self.path, DIGEST)
        if meta is not None and not (meta.attrs or meta.arrays or (self.path / "zarr.json").exists()):
            self.settings()  # a folder that is no store: the error it always was
        if problems:
            if meta is not None and meta.attrs:
                self.settings()  # a damaged record is the error it always was
            raise StoreDamaged(f"store {str(self.path)!r} is damaged: " + "; ".join(problems) + f"; {advice}")
        if lacks := self.made_earlier():
            raise StoreMismatch(f"store {str(self.path)!r} has no {' and no '.join(lacks)}: {EARLIER}")
        stored = self.settings()
        problems = self.provenance_problems()
        if problems:
            raise StoreDamaged(
                f"store {str(self.path)!r} was edited or damaged since it was made: "
                + "; ".join(problems)
                + f"; {EDITED}"
            )
        diffs = [
            f"{k}: {stored.get(k)!r} in the store, {settings.get(k)!r} requested"
            for k in sorted(set(stored) | set(settings))
            if stored.get(k) != settings.get(k)
        ]
        if diffs:
            raise StoreMismatch(
                f"store {str(self.path)!r} was made with different settings; it was left untouched. " + "; ".join(diffs)
            )
        # The same settings: the request's template is the store's own.
        assert meta is not None  # structure_problems reads it whenever it finds no problem
        problems = layout_problems(template, meta, optional=(DIGEST,)) or metadata_changed(meta)
        if problems:
            raise StoreDamaged(f"store {str(self.path)!r} is damaged: " + "; ".join(problems) + f"; {FRESH}")

    # -- progress ----------------------------------------------------------------
    def completed(self) -> np.ndarray:
        """Boolean mask of the cells whose block has been fully written."""
        return self._read(COMPLETED).astype(bool)

    def _read(self, name: str) -> np.ndarray:
        """A variable's values; a chunk that cannot be read is :class:`StoreDamaged`, named."""
        return self._values(open_store(self.path), name)

    def made_earlier(self) -> list[str]:
        """What this store lacks of what every store this version makes has (consolidated
        metadata, chunk checksums, cell digests): empty for one it made."""
        kept = {
            "consolidated metadata": _has_consolidated_metadata(self.path),
            "chunk checksums": self.has_checksums(),
            "cell digests": self.has_digests(),
        }
        return [what for what, has in kept.items() if not has]

    def has_checksums(self) -> bool:
        """Whether the store's chunks carry a checksum."""
        import zarr

        meta = zarr.open_array(str(self.path / COMPLETED), mode="r").metadata
        return any(type(c).__name__ == "Crc32cCodec" for c in getattr(meta, "codecs", ()))  # none in zarr format 2

    def has_digests(self) -> bool:
        """Whether the store's cells carry a digest (:func:`~ensstab_dask.sweeps.digests.cell_digests`)."""
        return (self.path / DIGEST / "zarr.json").is_file()

    def unreadable_chunks(self) -> list[Path]:
        """The chunk files of the cell variables that fail their checksum or cannot be read."""
        import zarr

        found = []
        for name, arr in zarr.open_group(str(self.path), mode="r").arrays():
            if arr.ndim < 3:  # coordinates: checked in full against the record instead
                continue
            for key in itertools.product(*(range(-(-n // c)) for n, c in zip(arr.shape, arr.chunks))):
                region = tuple(slice(k * c, (k + 1) * c) for k, c in zip(key, arr.chunks))
                try:
                    arr[region]
                except _DAMAGE:
                    found.append(self.path / name / arr.metadata.encode_chunk_key(key))
        return found

    def restore_flags(self) -> int:
        """Write the completion record's missing chunks as zeros, "not done" (a store made
        with all of them: :func:`~ensstab_dask.sweeps.integrity.restore_chunks`), so that
        a resume leaves none missing. The caller holds the writer lock."""
        return restore_chunks(self.path, COMPLETED)

    def drop_unreadable(self) -> int:
        """Remove the chunk files that failed their checksum when :meth:`load` read the
        store last (a full scan when it has not): their cells read as not done and are
        recomputed (a write into a damaged chunk would fail reading it). The caller holds
        the writer lock. Returns how many were removed."""
        bad = self.unreadable_chunks() if self._seen_unreadable is None else self._seen_unreadable
        for path in bad:
            path.unlink(missing_ok=True)
        return len(bad)

    def _values(self, ds: xr.Dataset, name: str) -> np.ndarray:
        try:
            return ds[name].values
        except PermissionError:
            raise
        except _DAMAGE as exc:
            if ds[name].ndim >= 3:  # a cell variable: its readable chunks, the others missing
                return self._values_by_chunk(name, ds[name].dtype)
            raise StoreDamaged(
                param("store")
                + f" {str(self.path)!r}: variable {name!r} cannot be read ({type(exc).__name__}: {exc}); "
                "the store is damaged: delete it (or the damaged chunk file) and rerun the sweep"
            ) from exc

    def _values_by_chunk(self, name: str, dtype) -> np.ndarray:
        """A cell variable read chunk by chunk: a chunk that fails reads as missing (NaN;
        0, not done, for the completion record)."""
        import zarr

        arr = zarr.open_array(str(self.path / name), mode="r")
        out = np.full(arr.shape, 0 if name in BOOKKEEPING else np.nan, dtype=dtype)
        for key in itertools.product(*(range(-(-n // c)) for n, c in zip(arr.shape, arr.chunks))):
            region = tuple(slice(k * c, (k + 1) * c) for k, c in zip(key, arr.chunks))
            try:
                out[region] = arr[region]
            except _DAMAGE:
                self._seen_unreadable = (self._seen_unreadable or []) + [
                    self.path / name / arr.metadata.encode_chunk_key(key)
                ]
        return out

    def write_block(self, data: xr.Dataset, region: dict[str, slice]) -> None:
        """Write ``data`` into ``region``, then mark those cells complete.

        A region write changes chunks only, never metadata, so the consolidated metadata
        is not rewritten (``consolidated=False``): rewriting it per block would cost a
        metadata write each time and gain nothing."""
        dims = tuple(region)
        start = [region[d].start for d in dims]
        data = data.assign({DIGEST: (dims, cell_digests(data, dims, start, self.digest_key()))})
        data.to_zarr(self.path, region=region, consolidated=False)
        shape = tuple(s.stop - s.start for s in region.values())
        flags = xr.Dataset({COMPLETED: (tuple(region), np.ones(shape, dtype=np.int8))})
        flags.to_zarr(self.path, region=region, consolidated=False)

    def load(self, *, completion: bool = False) -> xr.Dataset:
        """The store in memory, each variable read once (``completion``: keep the record).

        A chunk of a cell variable that cannot be read reads as missing (see the class
        docstring); one of a coordinate is :class:`StoreDamaged`, naming it."""
        self._seen_unreadable = []
        try:
            ds = open_store(self.path, chunks=None)  # read whole: no dask graph per variable
        except PermissionError:
            raise
        except _DAMAGE as exc:
            raise StoreDamaged(
                param("store")
                + f" {str(self.path)!r} cannot be read ({type(exc).__name__}: {exc}); the store is damaged: "
                "delete it and rerun the sweep"
            ) from exc
        # The completion record first: a cell it marks done has all its data written by
        # then (flags follow data), so a sweep writing meanwhile cannot make a cell read as
        # done with data missing.
        for name in sorted(ds.variables, key=lambda n: n != COMPLETED):
            if name not in ds.dims:  # index coordinates are already in memory
                ds[name] = xr.Variable(ds[name].dims, self._values(ds, str(name)), ds[name].attrs, ds[name].encoding)
        ds.attrs.pop(SETTINGS_ATTR, None)
        ds.attrs.pop(INTEGRITY_ATTR, None)
        return ds if completion else ds.drop_vars(list(BOOKKEEPING), errors="ignore")


def export_netcdf(
    store: str | os.PathLike, out: str | os.PathLike, *, overwrite: bool = False, allow_incomplete: bool = False
) -> Path:
    """Write a finished sweep store to netCDF.

    Refuses an existing ``out`` unless ``overwrite``, and a store with blocks still
    missing unless ``allow_incomplete``. The file is written under a temporary name and
    renamed, so an error never leaves a half-written ``out`` or destroys an old one.

    Parameters
    ----------
    store : path
        A zarr store written by :func:`~ensstab_dask.sweep` (``store=``).
    out : path
        The netCDF file to write.
    overwrite : bool
        Replace an existing ``out``.
    allow_incomplete : bool
        Export a store whose sweep has not finished (missing cells are NaN).

    Returns
    -------
    pathlib.Path
        ``out``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import xarray as xr
    >>> import ensstab_dask as es
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = Path(tmp.name) / "sweep.zarr"
    >>> _ = es.sweep(200, 5, n_useful=[10, 20], p=[0.5, 0.9], m_ensemble=[1], m_stability=5, repeats=2,
    ...              store=store, client="synchronous", progress=False)
    >>> out = es.export_netcdf(store, Path(tmp.name) / "sweep.nc")
    >>> out.name
    'sweep.nc'
    >>> with xr.open_dataset(out) as nc:
    ...     print(dict(nc.sizes), nc.attrs["kind"])
    {'n_useful': 2, 'p': 2, 'm_ensemble': 1, 'repeat': 2} sweep
    >>> tmp.cleanup()
    """
    src = SweepStore(store)
    if not src.path.exists():
        raise InvalidParameterError(param("store") + f": {str(src.path)!r} does not exist")
    target = Path(out).resolve()
    if target == src.path.resolve() or src.path.resolve() in target.parents:
        raise InvalidParameterError(
            param("out") + f": {str(out)!r} is inside the store {str(src.path)!r}; writing it would damage the store"
        )
    refuse_to_replace(out, overwrite=overwrite, name="out")  # before the store is read
    if os.path.lexists(out) and not overwrite:
        raise InvalidParameterError(
            param("out") + f" {str(out)!r} exists; pass " + param("overwrite", True) + " to replace it"
        )
    state = src.checked()  # every chunk read once, for the checks and the export
    missing = int((state[COMPLETED] == 0).sum())
    ds = state.drop_vars(COMPLETED)
    if missing and not allow_incomplete:
        raise InvalidParameterError(
            param("store")
            + f" {str(src.path)!r} is incomplete ({missing} cells not computed yet); rerun the sweep to finish it, "
            "or pass " + param("allow_incomplete", True)
        )
    return write_netcdf(ds, out, overwrite=overwrite)
