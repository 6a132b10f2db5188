"""Outputs written whole or not at all, and never over what must be kept.

:func:`atomic_output` is the one implementation of write-to-temporary-then-rename
(files and directories: a report, a store's first template, and the JSON and netCDF
files of :func:`write_json` and :func:`write_netcdf`); :func:`refuse_to_replace` is the
one check of where an output may go: never onto or into a zarr store, a data file (a
feature table this package wrote is not one), the reference data folder, or a directory
that is not a report. A killed writer's temporary files are removed by the next write of
the same target (:func:`clean_leftovers`). Every netCDF file written carries its checksum
(:func:`content_checksum`), and :func:`read_netcdf` reads one back only when it is whole.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import math
import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ensstab_dask.exceptions import InvalidParameterError, OutputNotWritten
from ensstab_dask.wording import param, subject

if TYPE_CHECKING:
    import xarray as xr

__all__ = [
    "atomic_output",
    "special_kind",
    "refuse_to_replace",
    "write_json",
    "write_netcdf",
    "read_netcdf",
    "CHECKSUM_ATTR",
    "content_checksum",
    "checksum_holds",
    "attr_value",
    "json_number",
    "json_attrs",
    "umask_mode",
    "clean_leftovers",
    "temp_prefix",
    "DATA_SUFFIXES",
    "SHIPPED_DATA_SUFFIXES",
    "protect_suffix",
    "unprotect_suffix",
    "FEATURE_TABLE_HEADER",
    "check_writable",
]


#: What the OS says when a write does not fit: the disk, a quota, or a file size limit.
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _writer_tag() -> str:
    return f"{os.getpid()}@{socket.gethostname().replace('.', '_')}"


#: The longest output name a temporary name keeps whole; a longer one is cut and given a
#: digest of the whole (:func:`_temp_stem`), so that the temporary name fits the file system.
_STEM_MAX = 120


def _temp_stem(target: Path) -> str:
    """``target``'s name as its temporary names begin: whole, or cut with a digest."""
    name = target.name
    if len(os.fsencode(name)) <= _STEM_MAX:
        return name
    digest = hashlib.sha1(os.fsencode(name)).hexdigest()[:12]
    return os.fsdecode(os.fsencode(name)[:80]).rstrip("\ufffd") + "~" + digest


def temp_prefix(target: Path) -> str:
    """Prefix of a temporary file or folder for ``target``: hidden, beside it, and naming
    the writing process and host, so that :func:`clean_leftovers` can tell a dead
    writer's (only on its own host: another host's pids cannot be checked from here)."""
    return f".{_temp_stem(target)}.{_writer_tag()}."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def clean_leftovers(target: Path) -> list[Path]:
    """Remove what killed writers of ``target`` left beside it (``.NAME.PID.*.tmp``, PID dead).

    A kill between creating a temporary file and renaming it leaves the file behind;
    the next write of the same target removes it. Returns what was removed.
    """
    removed = []
    host = _writer_tag().split("@", 1)[1]
    stem = _temp_stem(target)
    for path in target.parent.glob(f".{glob.escape(stem)}.*.tmp"):
        pid, _, where = path.name[len(stem) + 2 :].split(".")[0].partition("@")
        if where != host or not pid.isdigit() or _alive(int(pid)):
            continue
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def umask_mode(*, directory: bool = False) -> int:
    """The mode a plain ``open`` (or ``mkdir``) would give a new file under this process's
    umask. Temporary files are created 0600 (directories 0700); outputs get this mode
    before they are renamed into place, so an output is as readable as any other file."""
    mask = os.umask(0o022)
    os.umask(mask)
    return (0o777 if directory else 0o666) & ~mask


def check_writable(out: str | os.PathLike, *, inside: bool = False) -> None:
    """Refuse, before any work, an output this process may not write: one whose folder (or,
    for a path to be made with its folders, the nearest existing one) it has no permission
    to write in (a read-only folder or file system). ``inside``: ``out`` is a folder to
    write files into (made if missing). Raises :class:`OutputNotWritten` naming both."""
    out = Path(out)
    folder = out if inside else (out.parent if str(out.parent) else Path("."))
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        what = f"in {str(out)!r}" if inside else repr(str(out))
        raise OutputNotWritten(f"cannot write {what}: no permission to write in the folder {str(folder)!r}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _replace_into_place(tmp: Path, out: Path, *, directory: bool, overwrite: bool) -> None:
    """Rename ``tmp`` to ``out`` with the umask's mode (not mkstemp's 0600 or mkdtemp's 0700)."""
    os.chmod(tmp, umask_mode(directory=directory))
    if kind := _special(out.resolve()):  # one that appeared while tmp was written
        raise InvalidParameterError(
            param("output") + f" {str(out)!r} is {kind}, not a regular file: an output never replaces one"
        )
    if not os.path.lexists(out):
        os.rename(tmp, out)
        return
    if not overwrite:  # it appeared while tmp was written
        raise InvalidParameterError(
            param("output") + f" {str(out)!r} exists; pass " + param("overwrite", True) + " to replace it"
        )
    if not (directory and out.is_dir()):
        os.replace(tmp, out)  # one atomic step: readers see the old file or the new one
        return
    # A directory cannot replace a non-empty one in one step: move the old one aside, under
    # a name the next write's clean_leftovers removes should this process be killed here.
    aside = Path(tempfile.mkdtemp(prefix=temp_prefix(out), suffix=".tmp", dir=out.parent))
    try:
        os.replace(out, aside / out.name)
        try:
            os.replace(tmp, out)
        except BaseException:
            os.replace(aside / out.name, out)
            raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def special_kind(mode: int) -> str:
    """What a file of ``mode`` (``st_mode``) is when it is a special file (``"a FIFO"``,
    ``"a character device"``, ...); ``""`` for a regular file, a directory or a link."""
    for test, kind in (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return ""


def _special(path: Path) -> str:
    """What ``path`` is when it is a special file (:func:`special_kind`, links followed);
    ``""`` for a regular file, a directory or nothing there."""
    try:
        return special_kind(os.stat(path).st_mode)
    except OSError:
        return ""


#: The system's folders of devices, processes and kernel state: no output is written there.
_SYSTEM_FOLDERS = (Path("/dev"), Path("/proc"), Path("/sys"))


def _check_name_length(out: Path, name: str) -> None:
    """Refuse a path the file system cannot hold (a name longer than its limit, 255 bytes
    on most), before the work rather than at the write after it."""
    folder = out.parent if str(out.parent) else Path(".")
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX") if folder.is_dir() else 255
    except (OSError, ValueError):
        limit = 255
    if len(os.fsencode(out.name)) > limit:
        raise InvalidParameterError(
            subject(name)
            + f": the file name {out.name[:40]!r}... is {len(os.fsencode(out.name))} bytes long, more than the "
            f"{limit} this file system allows; choose a shorter name"
        )


def _link_chain(path: Path) -> list[Path]:
    """``path`` and each path its links lead to, hop by hop, unresolved (a link to
    ``/proc/self/fd/1`` is seen as that, whatever the descriptor is now)."""
    chain = [path]
    while chain[-1].is_symlink() and len(chain) < 40:  # the kernel's own limit on hops
        chain.append(Path(os.path.normpath(chain[-1].parent / os.readlink(chain[-1]))))
    return chain


def _stream(out: Path, target: Path) -> str:
    """What ``out`` is when it stands for a stream or lies in a system folder (``/dev/stdout``,
    a link to ``/proc/self/fd/1``, a file in ``/proc``); ``""`` otherwise.

    A link to a process's pipe or socket resolves to a path that does not exist
    (``/proc/N/fd/pipe:[M]``), so :func:`_special` sees nothing there; a temporary file
    renamed onto the link would replace it (``/dev/stdout`` itself, as root).
    """
    for path in (*_link_chain(Path(os.path.abspath(out))), target):
        if any(path == folder or folder in path.parents for folder in _SYSTEM_FOLDERS):
            return f"in the system folder {'/' + path.parts[1]} (a device or a stream; standard output is -)"
    return ""


#: The suffixes of data files: the formats the package ships (written here too, so that
#: no write ever depends on the formats' module being imported first; a test keeps the
#: two equal), and each one :func:`protect_suffix` adds (``real.file_formats.register_format``).
#: The suffixes of the data formats the package reads (``real.file_formats.FORMATS``' own).
SHIPPED_DATA_SUFFIXES = (".mat", ".npz", ".csv", ".h5ad")
_PROTECTED: dict[str, None] = dict.fromkeys(SHIPPED_DATA_SUFFIXES)
#: The suffixes of data files (a live view): an output never replaces one.
DATA_SUFFIXES = _PROTECTED.keys()


def protect_suffix(suffix: str) -> None:
    """Never let an output replace a file of ``suffix`` (a data format's)."""
    _PROTECTED[suffix.lower()] = None


def unprotect_suffix(suffix: str) -> None:
    """Undo :func:`protect_suffix`, for a suffix protected by it: the shipped data suffixes
    (``.mat``, ``.npz``, ``.csv``, ``.h5ad``) stay protected whatever is unregistered, since
    data files of theirs exist whether or not their reader is registered."""
    if suffix.lower() not in SHIPPED_DATA_SUFFIXES:
        _PROTECTED.pop(suffix.lower(), None)


#: How a feature table (``ensstab_dask.estimates.stages.features``) begins: a CSV file that does is
#: an output of this package, not a data file, and ``overwrite=True`` may replace it.
FEATURE_TABLE_HEADER = "name,feature,frequency_m"


def _feature_table(path: Path) -> bool:
    """Whether ``path`` is a feature table this package wrote (its first line says so)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.readline(len(FEATURE_TABLE_HEADER)) == FEATURE_TABLE_HEADER
    except (OSError, UnicodeDecodeError):
        return False


def refuse_to_replace(
    out: str | os.PathLike, *, directory: bool = False, overwrite: bool = True, name: str = "output"
) -> None:
    """Refuse an output that would replace or land inside what it must not: a zarr store,
    a data file, the reference data folder (``$ENSSTAB_DATA_DIR``), a special file (a
    device, a FIFO or a socket: an output goes only to a regular file, a directory or a
    new path), or a non-empty directory that is not a report. Paths are compared resolved
    (links followed). ``name``: the parameter the messages name."""
    if not os.fspath(out).strip():  # Path("") would be the working folder
        raise InvalidParameterError(subject(name) + " is an empty path; give a file name")
    out = Path(out)
    _check_name_length(out, name)
    try:
        target = out.resolve()
    except (RuntimeError, OSError) as exc:  # a link loop: Python 3.11 says RuntimeError, 3.13 OSError
        raise InvalidParameterError(
            subject(name)
            + f" {str(out)!r} is a symbolic link that leads back to itself (a link loop); remove the link or "
            "choose another path"
        ) from exc
    kind = _special(target) or _stream(out, target)
    if kind:
        raise InvalidParameterError(
            subject(name)
            + f" {str(out)!r} is {kind}, not a regular file: an output never replaces one; choose another path"
        )
    for folder in (target, *target.parents):
        if folder.is_dir() and any((folder / marker).exists() for marker in ("zarr.json", ".zgroup", ".zarray")):
            where = "is" if folder == target else "lies inside"
            raise InvalidParameterError(
                subject(name)
                + f" {str(out)!r} {where} the zarr store {str(folder)!r}: an output never replaces or enters a "
                "store; choose another path"
            )
    data_dir = os.environ.get("ENSSTAB_DATA_DIR")
    if data_dir and (target == Path(data_dir).resolve() or Path(data_dir).resolve() in target.parents):
        raise InvalidParameterError(
            subject(name) + f" {str(out)!r} lies in the reference data folder $ENSSTAB_DATA_DIR"
        )
    if target.is_file() and target.suffix.lower() in DATA_SUFFIXES and not _feature_table(target):
        raise InvalidParameterError(
            subject(name) + f" {str(out)!r} is a data file ({target.suffix}); choose another path"
        )
    # A report (what ``ensstab report`` writes) is its index.html and pictures, nothing else.
    names = [p.name for p in target.iterdir()] if target.is_dir() else []
    report = "index.html" in names and all(n == "index.html" or n.endswith(".png") for n in names)
    if not directory and target.is_dir():  # a file renamed onto a directory fails, after the work
        raise InvalidParameterError(subject(name) + f" {str(out)!r} is a directory; give a file name")
    if overwrite and names and not (directory and report):  # without overwrite nothing is replaced anyway
        raise InvalidParameterError(
            subject(name)
            + f" {str(out)!r} is a directory that is not a report; "
            + param("overwrite", True)
            + " replaces only a report (an index.html and its pictures)"
        )


@contextlib.contextmanager
def atomic_output(out: str | os.PathLike, *, overwrite: bool, directory: bool = False) -> Iterator[Path]:
    """Write ``out`` all at once: the one implementation of write-to-temporary-then-rename.

    Yields a temporary path beside ``out`` (an empty file, or with ``directory`` an empty
    directory) to write; when the block ends without error it is renamed to ``out`` with
    the umask's mode. Any failure (or kill) leaves the previous ``out`` intact and no
    temporary file (a killed writer's is removed by the next write of ``out``).

    Parameters
    ----------
    out : path
        The file or directory to write; its directory must exist. Never a store, a data
        file or a non-report directory, nor inside a store (:func:`refuse_to_replace`).
    overwrite : bool
        Replace an existing ``out``; without it an existing ``out`` is refused
        (ValueError) before anything is written.
    directory : bool
        Write a directory. An existing one is replaced as a whole: moved aside, the new
        one renamed in, the old one deleted (the old one is put back if the rename fails).

    Yields
    ------
    pathlib.Path
        The temporary file or directory.
    """
    out = Path(out)
    refuse_to_replace(out, directory=directory, overwrite=overwrite)
    if out.exists() and not overwrite:
        raise InvalidParameterError(
            param("output") + f" {str(out)!r} exists; pass " + param("overwrite", True) + " to replace it"
        )
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise InvalidParameterError(param("output") + f" directory {str(parent)!r} does not exist")
    check_writable(out)
    clean_leftovers(out)
    if directory:
        tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(out), suffix=".tmp", dir=parent))
    else:
        fd, name = tempfile.mkstemp(prefix=temp_prefix(out), suffix=".tmp", dir=parent)
        os.close(fd)
        tmp = Path(name)
    try:
        try:
            yield tmp
            _replace_into_place(tmp, out, directory=directory, overwrite=overwrite)
        except OSError as exc:
            if exc.errno not in _DISK_FULL:
                raise
            raise OutputNotWritten(f"could not write {str(out)!r}: {exc.strerror} (is the disk full?)") from exc
    finally:
        if os.path.lexists(tmp):
            _remove(tmp)


def write_json(payload: dict, out: str | os.PathLike, *, overwrite: bool = True) -> Path:
    """Write ``payload`` as JSON atomically (:func:`atomic_output`): a kill or an error
    leaves the previous file intact, never an empty or half-written one."""
    with atomic_output(out, overwrite=overwrite) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=2)
    return Path(out)


#: The attribute of every netCDF file this package writes holding its checksum (:func:`content_checksum`).
CHECKSUM_ATTR = "ensstab_checksum"
# What a reader adds to a cached Dataset: not part of what was computed, so not checksummed.
_NOT_CHECKSUMMED = (CHECKSUM_ATTR, "cached", "cache_file")


def attr_value(value):
    """An attribute's value as JSON: NumPy scalars and arrays (as a netCDF file gives them
    back) the same as the Python values they were written from."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def content_checksum(ds: xr.Dataset) -> str:
    """A BLAKE2b of everything a Dataset holds: every variable's name, dimensions, dtype,
    shape and values (NaN in one canonical form; text by its characters, whether NumPy
    holds it as fixed-width strings or, read back, as objects), and its attributes (but
    what a reader adds: the checksum itself, ``cached``, ``cache_file``; an attribute of one
    value in a sequence, as that value, as netCDF reads it back). The same for the
    Dataset written and for the one read back from its netCDF file; a flipped bit in a
    value (or a name, or an attribute) changes it."""
    h = hashlib.blake2b(digest_size=32)
    for name in sorted(str(n) for n in ds.variables):
        values = np.asarray(ds[name].values)
        text = values.dtype.kind in "USO"
        if values.dtype.kind == "f":
            values = np.where(np.isnan(values), np.nan, values)  # one NaN, whatever its bits on disk
        head = [name, [str(d) for d in ds[name].dims], "text" if text else values.dtype.str, list(values.shape)]
        h.update(json.dumps(head).encode())
        h.update(json.dumps([str(v) for v in values.ravel().tolist()]).encode() if text else values.tobytes())
    attrs = {str(k): _one_attr(v) for k, v in ds.attrs.items() if k not in _NOT_CHECKSUMMED}
    h.update(json.dumps(attrs, sort_keys=True, default=attr_value).encode())
    return h.hexdigest()


def _one_attr(value):
    """An attribute as netCDF gives it back: a sequence of one value is that value."""
    if isinstance(value, (list, tuple, np.ndarray)) and np.size(value) == 1:
        return attr_value(np.asarray(value).ravel()[0])
    return attr_value(value) if isinstance(value, (np.ndarray, np.generic)) else value


def write_netcdf(ds: xr.Dataset, out: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write ``ds`` to ``out`` atomically (:func:`atomic_output`): never a half-written file;
    with its checksum (:data:`CHECKSUM_ATTR`), by which :func:`read_netcdf` knows a damaged one."""
    ds = ds.assign_attrs({CHECKSUM_ATTR: content_checksum(ds)})
    with atomic_output(out, overwrite=overwrite) as tmp:
        try:
            ds.to_netcdf(tmp)
        except RuntimeError as exc:  # netCDF4 reports a full disk only as "NetCDF: HDF error"
            raise OutputNotWritten(f"could not write {str(out)!r} (is the disk full?): {exc}") from exc
    return Path(out)


def checksum_holds(ds: xr.Dataset) -> bool | None:
    """Whether a Dataset read back matches the checksum it carries (:data:`CHECKSUM_ATTR`,
    taken off it); None when it carries none."""
    recorded = ds.attrs.pop(CHECKSUM_ATTR, None)
    return None if recorded is None else recorded == content_checksum(ds)


#: Seconds a netCDF file may take to read in :func:`read_netcdf`'s child, once the child has
#: imported what it reads with, and more per MiB; and the seconds those imports may take.
READ_SECONDS, READ_SECONDS_PER_MIB, IMPORT_SECONDS = 30.0, 2.0, 300.0

#: What :func:`read_netcdf`'s child runs: a line once it is ready to read, then the read.
_PROBE = "import sys, xarray\nprint('ready', flush=True)\nxarray.open_dataset(sys.argv[1]).load()\n"


def read_netcdf(path: str | os.PathLike, *, what: str = "result") -> xr.Dataset:
    """A netCDF file read whole, refused in one line when it is damaged.

    The HDF5 library under netCDF trusts the bytes of a file: a file damaged in the wrong
    place (64 zero bytes in its middle) makes it read for ever, die, or read garbage
    without a word. So the file is first read in a child process of its own, its read
    bounded in time (:data:`READ_SECONDS`, and :data:`READ_SECONDS_PER_MIB` more per MiB,
    counted from when the child has imported xarray, so that a busy machine's slow imports
    are not taken for a damaged file), and only a file it read is read here; then a file
    this package wrote must match its checksum (:func:`checksum_holds`); a file without one
    (another program's) is read as it is. ``what`` names the file in the refusal.
    """
    import subprocess
    import sys

    import xarray as xr

    path = Path(path)
    limit = READ_SECONDS + READ_SECONDS_PER_MIB * path.stat().st_size / 2**20
    child = subprocess.Popen(
        [sys.executable, "-c", _PROBE, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        ready = _within(lambda: child.stdout.readline() if child.stdout else "", IMPORT_SECONDS)
        if ready != "ready\n" and child.poll() is None:  # its imports never finished: not the file's doing
            raise InvalidParameterError(f"{what} {path}: could not start reading it (xarray would not import)")
        code = child.wait(limit) if ready == "ready\n" else child.wait(10)
    except subprocess.TimeoutExpired:
        raise InvalidParameterError(
            f"{what} {path}: reading it did not finish in {limit:.0f} s: the file is damaged"
        ) from None
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    if code != 0:
        how = f"reading it was killed by signal {-code}" if code < 0 else "it cannot be read"
        raise InvalidParameterError(f"{what} {path}: {how} as netCDF: the file is damaged, or not a netCDF file")
    with xr.open_dataset(path) as opened:
        ds = opened.load()
    if checksum_holds(ds) is False:
        raise InvalidParameterError(f"{what} {path}: fails its checksum: the file was changed or damaged")
    return ds


def _within(read, seconds: float) -> str:
    """``read()`` (a line from a child), or "" when it has not returned within ``seconds``."""
    import threading

    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(read()), daemon=True)
    reader.start()
    reader.join(seconds)
    return got[0] if got else ""


def json_number(value) -> float | None:
    """A number as JSON holds it: a float, or None (JSON's null) for None, NaN and the
    infinities, which JSON has no words for."""
    return None if value is None or not math.isfinite(value) else float(value)


def json_attrs(part: dict[str, Any]) -> dict[str, Any]:
    """A part of the JSON as netCDF attributes: a dict's items as ``key_item``, a list as a
    float array (null as NaN), a bool as 0 or 1; a None is left out (an absent attribute
    is a value not computed), in a dict's items too."""
    out: dict[str, Any] = {}
    for k, v in part.items():
        if isinstance(v, dict):
            out.update({f"{k}_{kk}": vv for kk, vv in v.items() if vv is not None})
        elif isinstance(v, list):
            out[k] = np.array([np.nan if x is None else x for x in v], dtype=float)
        elif v is None:
            continue
        elif isinstance(v, bool):
            out[k] = int(v)
        else:
            out[k] = v
    return out
