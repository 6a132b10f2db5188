"""Samples that repeat an earlier one: said once when a data file is read, since a
resample then draws copies of one sample and the selection looks more stable than it is.
Rows are compared by a hash first, so that a single-cell X is never made dense whole (a
sparse X is read as CSR, a copy of its stored values)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

logger = logging.getLogger("ensstab_dask.real.datasets")

__all__ = ["say_repeated_samples"]


def _dense_rows(X, rows) -> np.ndarray:
    """Rows of X (dense, or a sparse matrix made CSR by the caller) as a float64 array in
    which -0.0 and 0.0 are one value."""
    part = X[rows]
    part = part.toarray() if hasattr(part, "toarray") else part
    return np.ascontiguousarray(part.astype(np.float64) + 0.0)


def _row_hashes(X) -> np.ndarray:
    """A 64-bit hash of each row of X, equal for equal rows (-0.0 and 0.0 alike): integer
    arithmetic, so no summation order changes it, over about 64 MiB of rows at a time."""
    weights = np.random.default_rng(0).integers(1, 2**63, size=X.shape[1], dtype=np.uint64) | np.uint64(1)
    hashes = np.empty(X.shape[0], dtype=np.uint64)
    step = max(1, 2**23 // max(1, X.shape[1]))
    for start in range(0, X.shape[0], step):
        bits = _dense_rows(X, slice(start, start + step)).view(np.uint64)
        hashes[start : start + step] = (bits * weights).sum(axis=1, dtype=np.uint64)  # wraps around, as meant
    return hashes


def say_repeated_samples(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    """One warning when samples repeat an earlier one: a resample then draws copies of
    one sample, and the selection looks more stable than it is."""
    n = X.shape[0]
    X = X.tocsr() if hasattr(X, "tocsr") else X  # rows of a sparse X, a slice at a time
    # Rows whose hash is shared by another are the only ones that can repeat: they alone are
    # compared whole (a single-cell X may be most of the memory there is).
    keys = _row_hashes(X)
    _, key_id, key_count = np.unique(keys, return_inverse=True, return_counts=True)
    shared = np.flatnonzero(key_count[key_id.ravel()] > 1)
    if not len(shared):
        return
    rows = _dense_rows(X, shared)
    whole = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    _, row_id = np.unique(whole, return_inverse=True)
    _, label_id = np.unique(np.asarray(y)[shared], return_inverse=True)
    n_rows = len(np.unique(row_id))
    n_pairs = len(np.unique(np.column_stack([row_id.ravel(), label_id.ravel()]), axis=0))
    same, other = len(shared) - n_pairs, n_pairs - n_rows
    if not (same or other):
        return
    said = []
    if same:
        said.append(f"{same} of {n} samples repeat an earlier one (same values, same label)")
    if other:
        said.append(f"{other} repeat an earlier sample's values under another label")
    logger.warning(
        "%s: %s: a resample then holds copies of one sample, and the selection looks more stable than it is; "
        "drop the copies unless they are real replicates",
        path,
        "; ".join(said),
    )
