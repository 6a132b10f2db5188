"""A sparse matrix's structure checked whole, with NumPy alone, before anything uses it.

scipy builds a CSR or CSC matrix from its three arrays (``data``, ``indices``,
``indptr``) after a shallow check of their lengths; its conversions (to CSC, to dense,
summing duplicates) then run in C and trust every index. An index out of range, a
negative one or an ``indptr`` that goes back writes outside the arrays: the process dies
by a signal, or worse, reads and writes someone else's memory and goes on. A file from a
collaborator, or a matrix built with ``check=False``, may hold any of these, so every
sparse X is checked here first, by :func:`check_sparse_parts` (the arrays as a file holds
them, before scipy sees them) or :func:`check_sparse` (a scipy matrix or array already
made), and refused in one line saying what is wrong:

* the shape: two whole numbers, not negative, each below 2**31 (scikit-learn's limit);
* the arrays: one-dimensional, the indices and ``indptr`` of an integer type, the values
  real numbers;
* ``indptr``: one entry per row (CSR) or column (CSC) and one more, from 0, never going
  back, to the number of stored values, which ``indices`` and ``data`` hold exactly;
* each index in ``0 .. n - 1`` of its axis (a COO matrix: each row and column);
* the values finite, and within float32's range once repeated entries are summed
  (scikit-learn's trees compute in float32).
"""

from __future__ import annotations

import numpy as np

from ensstab_dask.exceptions import InvalidParameterError

__all__ = ["COMPRESSED", "check_sparse", "check_sparse_parts"]

#: The compressed formats, with the axis their ``indptr`` runs along (0: rows).
COMPRESSED = {"csr": 0, "csc": 1}

#: float32's largest value: scikit-learn's trees compute in float32.
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_sparse(X, *, where: str | None = None) -> None:
    """Refuse a scipy sparse matrix or array whose structure is not whole (see the module
    docstring); ``where``, a file's path, starts the message when the matrix came from one.

    CSR and CSC are checked through :func:`check_sparse_parts`, COO by its coordinates,
    BSR by its blocks; the other formats (LIL, DOK, DIA) hold Python or NumPy structures
    that scipy converts without C code that trusts an index, and only their values are
    checked.
    """
    fmt = X.format
    if fmt in COMPRESSED:
        check_sparse_parts(fmt, X.data, X.indices, X.indptr, X.shape, where=where)
    elif fmt == "coo":
        _check_coo(X, where)
    elif fmt == "bsr":
        _check_bsr(X, where)
    else:
        _check_values(np.asarray(X.tocoo().data), where)


def check_sparse_parts(fmt: str, data, indices, indptr, shape, *, where: str | None = None) -> tuple[int, int]:
    """Refuse the arrays of a ``"csr"`` or ``"csc"`` matrix unless they make one whole;
    return its shape as two ints.

    Every check is a NumPy operation over the arrays as they are, none of which trusts an
    index: it is safe on whatever a file holds.
    """
    if fmt not in COMPRESSED:
        raise _refused(where, f"a sparse X of format {fmt!r}; read are 'csr' and 'csc' (X.tocsr())")
    n_rows, n_cols = _check_shape(shape, where)
    data, indices, indptr = (np.asarray(a) for a in (data, indices, indptr))
    for name, a in (("data", data), ("indices", indices), ("indptr", indptr)):
        if a.ndim != 1:
            raise _refused(where, f"the sparse X's {name} must be 1-D; got shape {a.shape}")
    for name, a in (("indices", indices), ("indptr", indptr)):
        if a.dtype.kind not in "iu":
            raise _refused(where, f"the sparse X's {name} must be integers; got {a.dtype}")
    n_major, n_minor = (n_rows, n_cols) if COMPRESSED[fmt] == 0 else (n_cols, n_rows)
    major, minor = ("row", "column") if COMPRESSED[fmt] == 0 else ("column", "row")
    if len(indptr) != n_major + 1:
        raise _refused(
            where,
            f"the sparse X's indptr has {len(indptr)} entries; its shape {(n_rows, n_cols)} needs "
            f"{n_major + 1} (one per {major}, and one more)",
        )
    nnz = len(indices)
    if len(data) != nnz:
        raise _refused(where, f"the sparse X has {nnz} indices and {len(data)} values; they must be as many")
    if indptr[0] != 0 or indptr[-1] != nnz:
        raise _refused(
            where,
            f"the sparse X's indptr must run from 0 to the {nnz} stored values; it runs from "
            f"{int(indptr[0])} to {int(indptr[-1])}",
        )
    steps = np.diff(indptr.astype(np.int64))
    if (steps < 0).any():
        at = int(np.argmax(steps < 0))
        raise _refused(
            where,
            f"the sparse X's indptr goes back at {major} {at} ({int(indptr[at])} then {int(indptr[at + 1])}); "
            "it must never decrease",
        )

    def locate(at: int) -> tuple[int, int]:
        """The sample and feature of stored value ``at`` (its major index from ``indptr``, checked)."""
        m = int(np.searchsorted(indptr, at, side="right")) - 1
        return (m, int(indices[at])) if COMPRESSED[fmt] == 0 else (int(indices[at]), m)

    _check_indices(indices, n_minor, f"{minor} index", where, shape=(n_rows, n_cols))
    _check_values(data, where, locate)
    # The linear position of each stored value, in the order the arrays hold them.
    keys = np.repeat(np.arange(n_major, dtype=np.int64), steps) * n_minor + indices.astype(np.int64)
    _check_summed(data, keys, where)
    return n_rows, n_cols


def _refused(where: str | None, message: str) -> InvalidParameterError:
    """The refusal, naming the file where the matrix came from one."""
    return InvalidParameterError(f"{where}: {message}" if where else message)


def _check_shape(shape, where: str | None) -> tuple[int, int]:
    a = np.asarray(shape)
    if a.shape != (2,) or a.dtype.kind not in "iu" or (a < 0).any() or (a >= 2**31).any():
        shown = a.tolist() if a.size <= 4 else f"an array of shape {a.shape}"
        raise _refused(where, f"the sparse X's shape must be two whole numbers from 0 to 2**31 - 1; got {shown}")
    return int(a[0]), int(a[1])


def _check_indices(indices: np.ndarray, n: int, what: str, where: str | None, *, shape: tuple[int, int]) -> None:
    if len(indices) == 0:
        return
    low, high = indices.min(), indices.max()
    if low < 0 or high >= n:
        bad = (indices < 0) | (indices >= n)
        at = int(np.argmax(bad))
        raise _refused(
            where,
            f"the sparse X holds a {what} outside 0..{n - 1} of its shape {shape}: {int(indices[at])} at "
            f"stored value {at} ({int(bad.sum())} such)",
        )


def _check_values(data: np.ndarray, where: str | None, locate=None) -> None:
    """Refuse values that are not real numbers, or not finite; ``locate(at)`` gives the
    sample and feature of stored value ``at``, where the structure says them."""
    if data.dtype.kind not in "biuf":
        raise _refused(where, f"the sparse X's values must be real numbers; got {data.dtype}")
    if data.dtype.kind == "f":
        bad = ~np.isfinite(data)
        if bad.any():
            at = int(np.argmax(bad))
            first = "first at sample {}, feature {}".format(*locate(at)) if locate else f"first at stored value {at}"
            raise _refused(where, f"X contains NaN or inf ({int(bad.sum())} values; {first})")


def _check_summed(data: np.ndarray, keys: np.ndarray, where: str | None) -> None:
    """Refuse values beyond float32's range, each repeated entry summed as scipy will."""
    values: np.ndarray = data.astype(np.float64)
    if len(keys) > 1 and not (np.diff(keys) > 0).all():  # repeats or unsorted: sum them as scipy will
        unique, inverse = np.unique(keys, return_inverse=True)
        values = np.bincount(inverse, weights=values, minlength=len(unique))
    big = np.abs(values) > _FLOAT32_MAX
    if big.any():
        raise _refused(
            where,
            f"X holds values beyond float32's range, +-{_FLOAT32_MAX:.3g}, in which scikit-learn's trees "
            f"compute ({int(big.sum())} values, repeated entries summed; the first {values[np.argmax(big)]:g}); "
            "rescale X",
        )


def _check_coo(X, where: str | None) -> None:
    n_rows, n_cols = _check_shape(X.shape, where)
    coords = [np.asarray(c) for c in X.coords] if hasattr(X, "coords") else [np.asarray(X.row), np.asarray(X.col)]
    data = np.asarray(X.data)
    for what, c, n in (("row index", coords[0], n_rows), ("column index", coords[1], n_cols)):
        if c.ndim != 1 or len(c) != len(data) or c.dtype.kind not in "iu":
            raise _refused(where, f"the sparse X's {what}es must be one integer per stored value")
        _check_indices(c, n, what, where, shape=(n_rows, n_cols))
    _check_values(data, where, lambda at: (int(coords[0][at]), int(coords[1][at])))
    keys = coords[0].astype(np.int64) * n_cols + coords[1].astype(np.int64)
    _check_summed(data, keys, where)


def _check_bsr(X, where: str | None) -> None:
    n_rows, n_cols = _check_shape(X.shape, where)
    R, C = X.blocksize
    data, indices, indptr = np.asarray(X.data), np.asarray(X.indices), np.asarray(X.indptr)
    whole = data.ndim == 3 and data.shape[1:] == (R, C) and len(data) == len(indices)
    if not whole or n_rows % R or n_cols % C or len(indptr) != n_rows // R + 1:
        raise _refused(where, f"the sparse X's blocks do not fit its shape {(n_rows, n_cols)}")
    # Its blocks are a CSR matrix's stored values; their own values are checked apart.
    check_sparse_parts("csr", np.zeros(len(indices)), indices, indptr, (n_rows // R, n_cols // C), where=where)
    _check_values(data.ravel(), where)
    _check_summed(data.ravel(), np.arange(data.size, dtype=np.int64), where)
