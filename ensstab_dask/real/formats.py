"""The readers of each data format, and the ``Data`` they return, unchecked.

One reader per format of :data:`~ensstab_dask.real.datasets.LOADERS`, which
:func:`~ensstab_dask.real.datasets.load_dataset` chooses by the file's suffix and whose
result it checks: :func:`_load_mat` (scikit-feature ``.mat``: ``X``, ``Y``),
:func:`_load_npz` (``X`` and ``y`` or ``Y``, optional ``feature_names``), :func:`_load_csv`
(one row per sample, a header, the label column chosen by ``label=``; row names read as
sample ids, a label column named twice refused) and :func:`_load_h5ad` (AnnData: one obs
per sample, the label an ``obs`` column; needs the optional ``anndata`` package).

A file that is not what its name says may be anything: an error names the file and what
is wrong with it, never the file's contents (:func:`_reason` cuts out what a decoder
quotes, :func:`_shown` cuts long names).
"""

from __future__ import annotations

import itertools
import logging
import re
import warnings
import zipfile
from pathlib import Path
from typing import NamedTuple

import numpy as np
import psutil

from ensstab_dask.exceptions import InvalidParameterError

# scipy.io, pandas and anndata are imported where they are used (import time; anndata is
# also optional).

#: load_dataset's logger: what it made of a file's slips is said on one logger, whichever
#: module read the file.
logger = logging.getLogger("ensstab_dask.real.datasets")

__all__ = ["Data"]


class Data(NamedTuple):
    """A dataset: ``X`` (n_samples, n_feature) float, ``y`` labels, optional names."""

    X: np.ndarray
    y: np.ndarray
    feature_names: np.ndarray | None = None
    informative: np.ndarray | None = None  # known only for synthetic data


#: A quoted stretch of a message: where a decoder quotes what it read.
_QUOTED = re.compile(r"b?'[^']*'|b?\"[^\"]*\"")


def _reason(exc: BaseException) -> str:
    """What a reader or decoder said was wrong, without what it quotes of the file: the
    first line of its message, quoted stretches cut out, at most 120 characters.

    A file that is not what its name says may be anything (``/etc/shadow`` named ``x.csv``),
    and pandas, NumPy and scikit-learn quote the bytes they could not read.

    Examples
    --------
    >>> _reason(ValueError("could not convert string to float: 'root:$6$secret'"))
    'could not convert string to float: ...'
    """
    lines = str(exc).strip().splitlines()
    text = _QUOTED.sub("...", lines[0]) if lines else type(exc).__name__
    return text if len(text) <= 120 else text[:119] + "\u2026"


def _shown(name) -> str:
    """A column, key or feature name as a message shows it: quoted, and cut to 40 characters."""
    text = str(name)
    return repr(text if len(text) <= 40 else text[:39] + "\u2026")


#: What a reader raises on a file that is not what its name says (a decoder's errors, a
#: truncated file: scipy's .mat reader says IndexError to a short one); MemoryError is not among them.
_UNREADABLE = (ValueError, TypeError, KeyError, IndexError, EOFError, OSError, NotImplementedError)


def _no_label(path: Path, label, holds: str) -> None:
    """Refuse ``label`` for a format whose file holds its labels: it would be dropped unread."""
    if label is not None:
        raise InvalidParameterError(
            f"label is for .csv and .h5ad files, which have label columns; {path} holds its labels in {holds}: "
            "leave the label column out"
        )


def _matlab_kind(a: np.ndarray) -> str | None:
    """What a MATLAB variable is when it is not numbers (as scipy reads it), else None."""
    if a.dtype.names:
        return "a struct"
    if a.dtype.kind == "O":
        return "a cell array"
    if a.dtype.kind in "US":
        return "text (a char array)"
    return None


def _load_mat(path: Path, label=None) -> Data:
    """A scikit-feature file: ``X`` and ``Y`` (``label`` is refused: the file names its labels)."""
    from scipy.io import loadmat
    from scipy.io.matlab import MatReadError

    _no_label(path, label, "Y")
    try:
        mat = loadmat(path)
    except NotImplementedError as exc:  # scipy reads up to v7; v7.3 files are HDF5
        raise InvalidParameterError(
            f"{path}: a MATLAB v7.3 (HDF5) .mat file, which scipy cannot read: save it with -v7, or as .npz"
        ) from exc
    except (*_UNREADABLE, MatReadError) as exc:
        # "Unknown mat file type, version 57, 57" would give two bytes of the file.
        why = "no MATLAB header" if "Unknown mat file type" in str(exc) else _reason(exc)
        raise InvalidParameterError(f"{path}: not a readable MATLAB .mat file ({why})") from exc
    for key in ("X", "Y"):
        if key not in mat:
            found = [_shown(k) for k in sorted(mat) if not k.startswith("__")][:10]
            raise InvalidParameterError(
                f"{path}: key {key!r} is missing (scikit-feature layout: X and Y); found [{', '.join(found)}]"
            )
    X, Y = np.asarray(mat["X"]), np.asarray(mat["Y"])
    for key, value, what in (("X", X, "a numeric matrix"), ("Y", Y, "a numeric vector of labels")):
        kind = _matlab_kind(value)
        if kind is not None:
            raise InvalidParameterError(f"{path}: {key} must be {what}, not {kind}")
    # Y stays as it is: check_data takes a column or a row, and names any other shape.
    return Data(X, Y)


#: The first bytes of a zip file (a .npz is one), of a lone .npy array and of a gzip file.
_ZIP_MAGIC, _NPY_MAGIC, _GZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06"), b"\x93NUMPY", b"\x1f\x8b"


def _npz_archive(path: Path):
    """The archive of a ``.npz`` file, refused by what it starts with when it is not one:
    NumPy would try a file that is not a zip as a pickle, and advise loading it unsafely."""
    try:
        with open(path, "rb") as f:
            head = f.read(6)
    except OSError as exc:
        raise InvalidParameterError(f"{path}: not a readable .npz file ({_reason(exc)})") from exc
    save = "numpy.savez(path, X=X, y=y)"
    if head.startswith(_NPY_MAGIC):
        raise InvalidParameterError(
            f"{path}: a single NumPy array (.npy), not a NumPy .npz archive of X and y: save with {save}"
        )
    if head.startswith(_GZIP_MAGIC):
        raise InvalidParameterError(f"{path}: a gzip file, not a NumPy .npz archive: gunzip it, or save with {save}")
    if not head.startswith(_ZIP_MAGIC):
        raise InvalidParameterError(f"{path}: not a NumPy .npz archive (the zip of arrays that {save} writes)")
    try:
        return np.load(path, allow_pickle=False)
    except (*_UNREADABLE, zipfile.BadZipFile) as exc:
        raise InvalidParameterError(f"{path}: not a readable NumPy .npz archive ({_reason(exc)})") from exc


def _load_npz(path: Path, label=None) -> Data:
    """``X``, ``y`` (or ``Y``) and optional ``feature_names`` (``label`` is refused: the file
    names its labels)."""
    _no_label(path, label, "its y array")
    npz = _npz_archive(path)
    found = ", ".join(_shown(k) for k in sorted(npz.files)[:10])
    if "X" not in npz:
        raise InvalidParameterError(f"{path}: key 'X' is missing; found [{found}]")
    ykey = "y" if "y" in npz else "Y" if "Y" in npz else None
    if ykey is None:
        raise InvalidParameterError(f"{path}: key 'y' (or 'Y') is missing; found [{found}]")
    arrays = {}
    for key in ("X", ykey, "feature_names"):
        if key not in npz:
            continue
        try:
            arrays[key] = np.asarray(npz[key])
        except ValueError as exc:  # an array of Python objects: reading it would run code from the file
            raise InvalidParameterError(
                f"{path}: X, y and feature_names must be numeric or string arrays; {key} holds Python objects, "
                "which are not read (unpickling would run code from the file)"
            ) from exc
        except (*_UNREADABLE, zipfile.BadZipFile) as exc:
            raise InvalidParameterError(f"{path}: {key} could not be read ({_reason(exc)})") from exc
    names = arrays["feature_names"].astype(str) if "feature_names" in arrays else None
    # y stays as it is: check_data takes a column or a row, and names any other shape.
    return Data(arrays["X"], arrays[ykey], names)


def _label_column(path: Path, columns, label, *, listing: str) -> int:
    """The position of the label column among ``columns``: ``label`` by name, or else (an
    int) by position, or else the one column named label, y, class or target; ``listing``
    shows the user what there is.

    An int that is also a column's name (``0``, where a column is named ``"0"``) is taken
    as the name, and a warning says so when position and name are different columns.
    """
    names = [str(c) for c in columns]
    if label is None:
        candidates = [i for i, c in enumerate(names) if c.lower() in ("label", "y", "class", "target")]
        # One name twice is the label given twice: the caller refuses it, by name.
        if len({names[i] for i in candidates}) != 1:
            raise InvalidParameterError(f"{path}: choose the label column with label=...; {listing}")
        return candidates[0]
    if str(label) in names:
        at = names.index(str(label))
        if isinstance(label, (int, np.integer)) and -len(names) <= label < len(names) and label % len(names) != at:
            logger.warning(
                "%s: label %s names a column and is a position: the column named %s (column %d) is the label, "
                "not column %d (%s); to use that one, give its name",
                path,
                label,
                _shown(label),
                at,
                label % len(names),
                _shown(names[label]),
            )
        return at
    if isinstance(label, (int, np.integer)) and not isinstance(label, bool):
        if not -len(names) <= label < len(names):
            raise InvalidParameterError(f"{path}: label column index {label} is out of range for {len(names)} columns")
        return int(label) % len(names)
    raise InvalidParameterError(f"{path}: label column {label!r} is missing; {listing}")


#: The names pandas' ``DataFrame.to_csv()`` and R's ``write.csv`` give the row names'
#: column ('' ), and the name pandas reads such a column as (``Unnamed: 0``).
_INDEX_NAME = re.compile(r"(Unnamed: \d+)?")


def _csv_header(path: Path, frame) -> list[str]:
    """The header as written: pandas renames a repeated ``f0`` to ``f0.1`` and an empty name
    to ``Unnamed: 0``, which would hide a repeated label or feature and the row names."""
    import pandas as pd

    try:
        row = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False)
    except _UNREADABLE:  # read whole a moment ago: keep pandas' names
        return [str(c) for c in frame.columns]
    header = [str(v) for v in row.iloc[0]] if len(row) else []
    return header if len(header) == len(frame.columns) else [str(c) for c in frame.columns]


def _load_csv(path: Path, label=None) -> Data:
    """One row per sample, a header, and the label column :func:`_label_column` finds.

    Leading columns named '' or ``Unnamed: N`` hold row names (sample ids) and are not
    features, unless one of them is the label; a label column named twice is refused.
    """
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except UnicodeDecodeError as exc:  # its message would quote the byte
        raise InvalidParameterError(f"{path}: not a readable CSV file (not UTF-8 text, from byte {exc.start})") from exc
    except _UNREADABLE as exc:  # pandas' parser errors are ValueErrors
        raise InvalidParameterError(f"{path}: not a readable CSV file ({_reason(exc)})") from exc
    if len(frame.columns) < 2:  # not a data file; its one "column name" is its first line
        raise InvalidParameterError(
            f"{path}: the header has {len(frame.columns)} column(s); a CSV data file has a label column and "
            "feature columns, separated by commas (a tab- or semicolon-separated file is not read as CSV)"
        )
    if frame.empty:
        raise InvalidParameterError(f"{path}: a header and no rows; a CSV data file has one row per sample")
    header = _csv_header(path, frame)
    listing = f"columns start [{', '.join(_shown(c) for c in header[:5])}]"
    pandas_names = [str(c) for c in frame.columns]
    if isinstance(label, str) and label not in header and label in pandas_names:
        at = pandas_names.index(label)  # the name pandas gives it: "Unnamed: 0", "f0.1"
    else:
        at = _label_column(path, header, label, listing=listing)
    twice = [i for i, name in enumerate(header) if name == header[at]]
    if len(twice) > 1:
        raise InvalidParameterError(
            f"{path}: the label column {_shown(header[at])} appears {len(twice)} times in the header (columns "
            f"{', '.join(map(str, twice[:-1]))} and {twice[-1]}): all but one would be read as features; remove or "
            "rename the others"
        )
    index = list(itertools.takewhile(lambda i: _INDEX_NAME.fullmatch(header[i]) and i != at, range(len(header))))
    if index:
        logger.warning(
            "%s: the first column%s, named %s, %s read as sample ids (row names, as DataFrame.to_csv() and R's "
            "write.csv write them), not as features; write the file with index=False to leave them out",
            path,
            "s" if len(index) > 1 else "",
            " and ".join(_shown(header[i]) for i in index),
            "are" if len(index) > 1 else "is",
        )
    keep = [i for i in range(len(header)) if i != at and i not in index]
    if not keep:
        raise InvalidParameterError(f"{path}: no feature columns besides the label and the row names")
    y = frame.iloc[:, at].to_numpy()
    features = frame.iloc[:, keep]
    names = [header[i] or str(frame.columns[i]) for i in keep]  # an empty name: pandas' "Unnamed: N"
    non_numeric = [names[j] for j, c in enumerate(keep) if not pd.api.types.is_numeric_dtype(frame.iloc[:, c])]
    if non_numeric:
        shown = ", ".join(_shown(c) for c in non_numeric[:3])
        raise InvalidParameterError(
            f"{path}: feature columns must be numeric; {len(non_numeric)} of {len(keep)} are not, the first [{shown}]"
        )
    return Data(features.to_numpy(dtype=np.float64), y, np.asarray(names, dtype=str))


def _available_bytes() -> int:
    """Memory this machine can hand out now without swapping."""
    return int(psutil.virtual_memory().available)


def _size(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:.1f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:.1f} MiB"


def _dense_float64(path: Path, X) -> np.ndarray:
    """An AnnData ``X`` (dense, or scipy sparse as single-cell data mostly are) as the dense
    float64 array the selectors need, refused up front when that would not fit in memory."""
    import scipy.sparse

    if X is None:
        raise InvalidParameterError(f"{path}: the AnnData object has no X matrix")
    n_obs, n_vars = X.shape
    need = 8 * n_obs * n_vars
    sparse = scipy.sparse.issparse(X)
    # A dense float64 X is in memory already (backed=None read it) and is used as it is.
    available = _available_bytes()
    if (sparse or np.asarray(X).dtype != np.float64) and need > available:
        raise InvalidParameterError(
            f"{path}: X ({n_obs} obs x {n_vars} vars) needs {_size(need)} as a dense float64 array, more than the "
            f"{_size(available)} of memory available: keep fewer vars (highly variable genes, say) in the file"
        )
    try:
        # Sparse: convert the stored values only, then allocate the dense array once.
        return X.astype(np.float64).toarray() if sparse else np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:  # strings or objects in X
        raise InvalidParameterError(f"{path}: X must be numeric ({_reason(exc)})") from exc


def _load_h5ad(path: Path, label=None) -> Data:
    """AnnData: one obs per sample, the label an ``obs`` column, ``var_names`` the feature names."""
    try:
        # anndata is an optional dependency (the extra ``anndata``): only .h5ad files need it.
        import anndata
    except ImportError as exc:
        raise InvalidParameterError(
            "reading .h5ad needs the anndata package: pip install 'ensstab_dask[anndata]'"
        ) from exc
    try:
        with warnings.catch_warnings():
            # load_dataset says it itself, with what it made of them.
            warnings.filterwarnings("ignore", message="Variable names are not unique")
            adata = anndata.read_h5ad(path)
    except _UNREADABLE as exc:  # h5py says OSError to a file that is not HDF5
        raise InvalidParameterError(f"{path}: not a readable .h5ad file ({_reason(exc)})") from exc
    obs = adata.obs
    listing = f"obs columns are [{', '.join(_shown(c) for c in obs.columns[:20])}]"
    at = _label_column(path, obs.columns, label, listing=listing)
    # Categorical and string columns become their labels; check_data takes string labels as they are.
    y = np.asarray(obs.iloc[:, at].to_numpy())
    return Data(_dense_float64(path, adata.X), y, np.asarray(adata.var_names, dtype=str))
