"""What a sweep store's files must be before anything in them is opened, and a checksum of
its metadata.

* :func:`file_problems`: every entry of a store is a folder or a regular file, never a
  symbolic link (a read or a write through it would leave the store), a FIFO (opened, it
  waits for a writer forever), a device or a socket, and no chunk's path is a folder;
  checked with ``lstat`` only, so nothing is opened or followed;
* :func:`read_metadata`: the store's metadata, every array's ``zarr.json`` against the
  copy consolidated in the root's;
* :func:`metadata_digest` and :func:`seal`: a BLAKE2b of the metadata written when the
  store is made (attribute :data:`INTEGRITY_ATTR`): the store's writes change chunks only,
  never metadata, so any later change of a ``zarr.json`` (an edited dtype, a flipped byte)
  fails it. The attribute also records that the store was made with chunk checksums and
  cell digests, so a store whose digests were deleted reads as damaged, not as old.

:class:`~ensstab_dask.sweeps.storage.SweepStore` runs these checks before it reads a store.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ensstab_dask.outputs import special_kind

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "Inspection",
    "structure_problems",
    "metadata_changed",
    "layout_problems",
    "lost_chunks",
    "restore_chunks",
    "INTEGRITY_ATTR",
    "StoreMetadata",
    "file_problems",
    "read_metadata",
    "metadata_digest",
    "seal",
    "integrity_record",
]

#: The root attribute that records how a store was made (see the module docstring).
INTEGRITY_ATTR = "ensstab_integrity"
#: What a store made by this version guarantees: every chunk checksummed, every cell
#: digested, every chunk of the completion record written, the metadata checksummed.
INTEGRITY_FORMAT = 1

#: What each kind of damage asks the user to do; a rerun does what the advice says.
RERUN = "rerun the sweep to recompute them"
FRESH = (
    "a rerun cannot repair a store's files or metadata: move the store aside (or delete it) and run the sweep "
    "into a fresh store"
)
EDITED = "a rerun refuses a store edited so: move the store aside (or delete it) and run the sweep into a fresh store"
#: A store made by an earlier development version (no checksums, digests or consolidated metadata).
EARLIER = (
    "it was made by an earlier development version of ensstab_dask, which this one does not read: move it aside "
    "(or delete it) and run the sweep into a fresh store"
)
REMOVE = (
    "remove what is named, then run verify again: it says whether a rerun recomputes what was there or the store "
    "must be started afresh"
)


@dataclass
class Inspection:
    """What :meth:`~ensstab_dask.sweeps.storage.SweepStore.inspect` found: ``problems``,
    each one line naming what is damaged, and ``advice``, what to do about them (the first
    kind found decides); ``done``, the completion mask (None when the store could not be read that
    far); ``state``, the store read once (as ``SweepStore.load(completion=True)``)."""

    problems: list[str] = field(default_factory=list)
    advice: str = ""
    done: np.ndarray | None = None
    state: xr.Dataset | None = None

    def add(self, problems: list[str], advice: str) -> None:
        self.problems += problems
        if problems and not self.advice:
            self.advice = advice


def _what(mode: int) -> str:
    return special_kind(mode) or "not a regular file"


def file_problems(root: Path) -> list[str]:
    """Every entry under the store folder ``root`` that a store never holds: a symbolic
    link (named with its target), a special file, or anything that is neither a folder nor
    a regular file. Nothing is opened and no link followed (``lstat`` only).

    ``root`` itself may be reached through a link (``alias.zarr -> S.zarr``); what it holds
    may not."""
    problems = []
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except NotADirectoryError:
            continue
        for entry in entries:
            rel = Path(entry.path).relative_to(root)
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                problems.append(
                    f"{rel} is a symbolic link (to {os.readlink(entry.path)!r}), which a sweep never makes: "
                    "nothing is read or written through it"
                )
            elif stat.S_ISDIR(st.st_mode):
                pending.append(Path(entry.path))
            elif not stat.S_ISREG(st.st_mode):
                problems.append(f"{rel} is {_what(st.st_mode)}, which a sweep never makes")
    return sorted(problems)


@dataclass
class StoreMetadata:
    """A store's metadata as read by :func:`read_metadata`.

    ``attrs``: the root's attributes; ``arrays``: each array's metadata (from its own
    ``zarr.json``, else from the consolidated copy); ``problems``: what disagrees."""

    attrs: dict = field(default_factory=dict)
    arrays: dict = field(default_factory=dict)
    consolidated: bool = False
    problems: list[str] = field(default_factory=list)

    def chunk_paths(self, root: Path, name: str) -> list[Path]:
        """The paths of every chunk of array ``name`` (zarr format 3, regular grid)."""
        meta = self.arrays[name]
        shape = meta.get("shape", [])
        chunks = meta.get("chunk_grid", {}).get("configuration", {}).get("chunk_shape", shape)
        encoding = meta.get("chunk_key_encoding", {})
        sep = encoding.get("configuration", {}).get("separator", "/")
        prefix = ["c"] if encoding.get("name", "default") == "default" else []
        keys = itertools.product(*(range(-(-int(n) // max(int(c), 1))) for n, c in zip(shape, chunks)))
        return [root / name / sep.join(prefix + [str(k) for k in key]) for key in keys]


def _load_json(path: Path) -> dict:
    with open(path, "rb") as f:
        value = json.loads(f.read().decode())
    if not isinstance(value, dict):
        raise ValueError(f"a JSON {type(value).__name__}, not an object")
    return value


def read_metadata(root: Path) -> StoreMetadata:
    """The store's metadata (zarr format 3) and what is wrong with it: a ``zarr.json`` that
    is missing or not JSON, or an array's that differs from the root's consolidated copy.
    Call after :func:`file_problems` found nothing: every file is then a regular one.
    A store of zarr format 2 (``.zgroup``) is returned with no arrays and no problems."""
    out = StoreMetadata()
    top = root / "zarr.json"
    if not top.is_file():
        if not (root / ".zgroup").is_file():
            out.problems.append("zarr.json is missing: the store's metadata is gone")
        return out
    try:
        meta = _load_json(top)
    except (ValueError, UnicodeDecodeError) as exc:
        out.problems.append(f"zarr.json is damaged (not valid JSON metadata: {exc})")
        return out
    out.attrs = meta.get("attributes") or {}
    found = (meta.get("consolidated_metadata") or {}).get("metadata")
    out.consolidated = isinstance(found, dict)
    consolidated: dict = found if isinstance(found, dict) else {}
    names = set(consolidated) if out.consolidated else set()
    names |= {p.parent.name for p in root.glob("*/zarr.json")}
    for name in sorted(names):
        path = root / name / "zarr.json"
        own = None
        if path.is_file():
            try:
                own = _load_json(path)
            except (ValueError, UnicodeDecodeError) as exc:
                out.problems.append(f"{name}/zarr.json is damaged (not valid JSON metadata: {exc})")
        elif out.consolidated:
            out.problems.append(f"{name}/zarr.json is missing (the array's metadata)")
        if out.consolidated and own is not None:
            if name not in consolidated:
                out.problems.append(f"{name}/zarr.json is not in the store's consolidated metadata (zarr.json)")
            elif own != consolidated[name]:
                out.problems.append(f"{name}/zarr.json differs from its copy in the store's zarr.json")
        chosen = own if own is not None else consolidated.get(name)
        if isinstance(chosen, dict) and chosen.get("node_type", "array") == "array":
            out.arrays[name] = chosen
    return out


def metadata_digest(attrs: dict, arrays: dict) -> str:
    """A BLAKE2b of the root's attributes (but :data:`INTEGRITY_ATTR`) and every array's
    metadata, each in canonical JSON."""
    record = {
        "attributes": {k: v for k, v in attrs.items() if k != INTEGRITY_ATTR},
        "arrays": arrays,
    }
    return hashlib.blake2b(json.dumps(record, sort_keys=True).encode(), digest_size=32).hexdigest()


def seal(root: Path, completion: str) -> None:
    """Finish a store just made at ``root`` (a temporary name, before its rename): write
    every chunk of the completion record ``completion`` (zeros: a chunk of it that goes
    missing later is then damage, not "not started"), then record
    :data:`INTEGRITY_ATTR` and consolidate the metadata again."""
    import zarr

    with zarr.config.set({"array.write_empty_chunks": True}):  # zarr skips chunks of fill values by default
        zarr.open_array(str(root / completion), mode="r+")[...] = 0
    meta = read_metadata(root)
    record = {"format": INTEGRITY_FORMAT, "metadata": metadata_digest(meta.attrs, meta.arrays)}
    group = zarr.open_group(str(root), mode="r+")
    group.attrs[INTEGRITY_ATTR] = json.dumps(record, sort_keys=True)
    zarr.consolidate_metadata(str(root))


def integrity_record(attrs: dict) -> dict | None:
    """The store's :data:`INTEGRITY_ATTR` record; None for a store made before it; ``{}``
    for one that cannot be read (damage)."""
    if INTEGRITY_ATTR not in attrs:
        return None
    try:
        record = json.loads(attrs[INTEGRITY_ATTR])
    except (TypeError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def structure_problems(root: Path, digest: str) -> tuple[list[str], str, StoreMetadata | None]:
    """What is wrong with the files and metadata of the store at ``root``, checked before
    zarr opens any of it, and what to do about it: an entry that is a link or a special
    file (:func:`file_problems`), a chunk's path that is a folder, a ``zarr.json`` missing
    or damaged or differing from its consolidated copy, the cell digests (array
    ``digest``) missing from a store made with them. Returns ``(problems, advice,
    metadata)``; ``metadata`` is None when the files alone are wrong (nothing was read)."""
    found = file_problems(root)
    if found:
        return found, REMOVE, None
    meta = read_metadata(root)
    folders = [
        f"chunk {path.relative_to(root)} is a folder, not a chunk file"
        for name in meta.arrays
        for path in meta.chunk_paths(root, name)
        if path.is_dir()
    ]
    if folders:
        return folders, REMOVE, meta
    problems = list(meta.problems)
    if integrity_record(meta.attrs) is not None:
        if digest not in meta.arrays:
            problems.append(f"{digest} is missing, yet the store was made with cell digests")
    elif meta.consolidated and digest not in meta.arrays and (root / digest).exists():
        problems.append(f"{digest} is not in the store's metadata, yet its folder is there")
    return problems, FRESH, meta


def metadata_changed(meta: StoreMetadata) -> list[str]:
    """The metadata's checksum, recorded when the store was made, against its metadata
    now: the store's writes never change it. Empty for a store made before it."""
    record = integrity_record(meta.attrs)
    if record is None or record.get("metadata") == metadata_digest(meta.attrs, meta.arrays):
        return []
    return ["its metadata (a zarr.json) was changed since the store was made: it fails its checksum"]


def layout_problems(template, meta: StoreMetadata, *, optional: tuple[str, ...] = ()) -> list[str]:
    """Arrays whose dtype or shape is not what the sweep's ``template`` (an xarray
    Dataset) makes, or that are missing (but the ``optional`` ones, absent from older
    stores): an edited ``zarr.json``, through which data would be read as garbage and a
    rerun would write."""
    problems = []
    for name, var in template.variables.items():
        have = meta.arrays.get(str(name))
        if have is None:
            if meta.arrays and name not in optional:
                problems.append(f"array {name} is missing from the store's metadata")
            continue
        try:
            dtype = np.dtype(have.get("data_type"))
        except TypeError:
            dtype = None
        if dtype != var.dtype:
            problems.append(f"array {name} has dtype {have.get('data_type')!r} in the store, not {str(var.dtype)!r}")
        if list(have.get("shape", [])) != list(var.shape):
            problems.append(f"array {name} has shape {have.get('shape')} in the store, not {list(var.shape)}")
    return problems


def lost_chunks(root: Path, name: str) -> list[Path]:
    """The chunk files of array ``name`` missing from a store made with all of them
    (:func:`seal`; the completion record): a chunk deleted. None for a store made before
    (a missing one there means "not started")."""
    meta = read_metadata(root)
    if integrity_record(meta.attrs) is None or name not in meta.arrays:
        return []
    return [p for p in meta.chunk_paths(root, name) if not os.path.lexists(p)]


def restore_chunks(root: Path, name: str) -> int:
    """Write the missing chunks of array ``name`` (:func:`lost_chunks`) as zeros ("not
    done", for the completion record). The caller holds the writer lock. Returns how many."""
    import zarr

    lost = lost_chunks(root, name)
    if lost:
        with zarr.config.set({"array.write_empty_chunks": True}):  # zarr skips chunks of fill values
            arr = zarr.open_array(str(root / name), mode="r+")
            for path in lost:
                key = tuple(int(k) for k in path.relative_to(root / name).parts[1:])
                arr[tuple(slice(k * c, (k + 1) * c) for k, c in zip(key, arr.chunks))] = 0
    return len(lost)
