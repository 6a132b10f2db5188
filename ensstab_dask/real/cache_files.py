"""Cache files that check themselves: the one way a cached result is keyed, written and read back.

A cache file is a netCDF Dataset with its checksum inside it, as every netCDF file this
package writes (:data:`~ensstab_dask.outputs.CHECKSUM_ATTR`,
:func:`~ensstab_dask.outputs.content_checksum`), written atomically
(:func:`~ensstab_dask.outputs.write_netcdf`).
:func:`read_checked` gives it back only when the checksum holds; a file that cannot be
read, has no checksum or fails it is a cache miss, said by a warning on the caller's
logger, and the caller recomputes it. A cache is never a reason to fail, nor reused
unchecked. The naive check (:mod:`ensstab_dask.estimates.validation.harness`) and the estimate's
real runs (:mod:`ensstab_dask.real.run_cache`) cache through here.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
from pathlib import Path

import numpy as np
import xarray as xr

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.outputs import checksum_holds, refuse_to_replace, write_netcdf
from ensstab_dask.wording import param

__all__ = [
    "hash_data",
    "hash_x",
    "digest_with",
    "data_digest",
    "check_cache_dir",
    "read_checked",
    "write_checked",
    "in_the_way",
]


def hash_data(h, X, y):
    """``h`` (a :mod:`hashlib` object) updated with the dtype, shape and bytes of ``X`` then
    ``y``; returns ``h``. An object array (text labels as pandas reads them) by its values'
    types and text: its bytes are pointers, another in every process. A sparse X (as
    :func:`~ensstab_dask.real.datasets.check_data` leaves it: canonical CSC) by its format,
    shape and arrays. ``hash_data(h, X, y)`` is ``_update(hash_x(h, X), (y,))``: one hash of
    X serves every ``y`` asked of it (:func:`digest_with`)."""
    return _update(hash_x(h, X), (y,))


def hash_x(h, X):
    """``h`` updated with ``X`` alone, as :func:`hash_data` starts; returns ``h``."""
    if hasattr(X, "indptr"):
        h.update(f"{X.format}{X.shape}".encode())
        return _update(h, (X.data, X.indices, X.indptr))
    return _update(h, (X,))


def digest_with(x_hash, y) -> str:
    """The :func:`data_digest` of ``(X, y)`` from ``x_hash``, a :func:`hash_x` of X (left as
    it is): the same digest, with X's bytes read once for every ``y``."""
    return _update(x_hash.copy(), (y,)).hexdigest()


def _update(h, arrays):
    for arr in arrays:
        arr = np.ascontiguousarray(arr)
        h.update(f"{arr.dtype.str}{arr.shape}".encode())
        if arr.dtype.kind == "O":
            h.update(json.dumps([[type(v).__name__, str(v)] for v in arr.ravel().tolist()]).encode())
        else:
            h.update(memoryview(arr))  # its buffer as it is: no X-sized copy of tobytes()
    return h


def data_digest(X, y) -> str:
    """A SHA-256 of the data (:func:`hash_data`): the same for equal arrays, whatever their
    memory layout; another for a changed value, dtype or shape."""
    return hash_data(hashlib.sha256(), X, y).hexdigest()


def check_cache_dir(cache_dir) -> None:
    """A cache folder that exists and where a cache file may be written (not the reference
    data folder, nor inside a store): checked before any work."""
    refuse_to_replace(cache_dir, directory=True, overwrite=False, name="cache_dir")
    if not Path(cache_dir).is_dir():
        raise InvalidParameterError(param("cache_dir") + f": directory {str(cache_dir)!r} does not exist")


def in_the_way(path: Path) -> str | None:
    """What stands in a cache file's place that no cache file can be, or None: a symbolic
    link that leads back to itself, a folder, a FIFO, a device or a socket."""
    try:
        path.resolve(strict=path.is_symlink())
    except RuntimeError:  # Python 3.11's word for a link loop
        return "a symbolic link that leads back to itself is in its place"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link that leads back to itself is in its place"
    if path.is_dir():
        return "a folder is in its place"
    if path.exists() and not path.is_file():
        return "a FIFO, a device or a socket is in its place"
    return None


def write_checked(ds: xr.Dataset, path: str | os.PathLike, *, logger: logging.Logger, what: str) -> Path | None:
    """Write ``ds`` to ``path`` atomically, its checksum inside it (a copy damaged later
    fails it and is never reused); the path written, or None when it could not be (what
    is :func:`in_the_way`, a full disk, a folder made read-only), said by a warning on
    ``logger`` naming ``what``: a cache is never a reason to fail, and what was computed
    is returned all the same."""
    path = Path(path)
    why = in_the_way(path)
    if why is None:
        try:
            return write_netcdf(ds, path, overwrite=True)  # with its checksum, as every netCDF file written
        except (OSError, InvalidParameterError) as exc:
            why = str(exc)
    logger.warning("%s %s not written (%s); going on without it", what, path, why)
    return None


def read_checked(path: Path, *, logger: logging.Logger, what: str) -> xr.Dataset | None:
    """The cache file at ``path`` when its checksum holds (the checksum attribute taken
    off), else None: when the file cannot be read, has no checksum (nothing this package
    writes lacks one, so it is not trusted) or fails it. Then a warning on ``logger`` says ``what`` was not reused,
    which file and why, and that it is recomputed."""
    why = in_the_way(path) or (None if path.is_file() else "it is not a regular file")
    try:
        if why is None:  # opened, a FIFO would wait for a writer forever
            with xr.open_dataset(path) as cached:
                ds = cached.load()
    except Exception:  # noqa: BLE001 - a damaged cache file is a cache miss
        why = "it cannot be read"
    if why is None:
        holds = checksum_holds(ds)
        if holds is None:
            why = "it has no checksum, so it cannot be checked"
        elif not holds:
            why = "it fails its checksum (the file was changed or damaged)"
    if why is not None:
        logger.warning("%s %s not reused: %s; recomputing it", what, path, why)
        return None
    return ds
