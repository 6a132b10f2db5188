"""What proves a sweep store's values are its own: a checksum on every chunk and a keyed
digest on every cell.

* :func:`chunk_codecs`: every array's chunks are compressed, then checksummed (CRC-32C),
  and zarr checks the checksum on every read: a chunk changed on disk fails it;
* :func:`cell_digests`: a keyed BLAKE2b of each cell's values and its place in the grid,
  keyed by the sweep's settings record: a chunk moved within the store, or copied from
  another sweep's store, no longer matches its cells' digests.

:class:`~ensstab_dask.sweeps.storage.SweepStore` writes and checks both.
"""

from __future__ import annotations

import hashlib

import numpy as np
import xarray as xr

# zarr is imported where the codecs are made: most callers never touch a store.

__all__ = ["chunk_codecs", "cell_digests"]


def chunk_codecs() -> tuple:
    """The bytes codecs of every array of a store: zarr's default compressor, then a
    CRC-32C of the compressed chunk, which zarr checks on every read."""
    from zarr.codecs import Crc32cCodec, ZstdCodec

    return (ZstdCodec(), Crc32cCodec())


def cell_digests(values: xr.Dataset, dims: tuple[str, ...], start, key: bytes) -> np.ndarray:
    """A keyed BLAKE2b (8 bytes, as int64) of each cell of ``values`` over ``dims``: its
    values in every data variable (sorted by name; the caller leaves the store's
    bookkeeping out) and its place, ``start`` plus its index within ``values``. ``key``:
    :meth:`~ensstab_dask.sweeps.storage.SweepStore.digest_key`."""
    names = sorted(str(n) for n in values.data_vars)
    shape = tuple(values.sizes[d] for d in dims)
    rows = np.concatenate(
        [np.asarray(values[n].transpose(*dims, ...).values, dtype=np.float64).reshape(shape + (-1,)) for n in names],
        axis=-1,
    )
    out = np.empty(shape, dtype=np.int64)
    for idx in np.ndindex(shape):
        place = np.add(idx, start).astype(np.int64).tobytes()
        digest = hashlib.blake2b(place + rows[idx].tobytes(), key=key, digest_size=8).digest()
        out[idx] = int.from_bytes(digest, "little", signed=True)
    return out
