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

import io
import itertools
import logging
import re
import warnings
import zipfile
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import psutil

from ensstab_dask.exceptions import InvalidParameterError

# scipy.io, pandas and anndata are imported where they are used (import time; anndata is
# also optional).

#: load_dataset's logger: what it made of a file's slips is said on one logger, whichever
#: module read the file.
logger = logging.getLogger("ensstab_dask.real.datasets")

__all__ = ["Data", "ReadOptions"]


class Data(NamedTuple):
    """A dataset: ``X`` (n_samples, n_feature) float, ``y`` labels, optional names."""

    X: np.ndarray
    y: np.ndarray
    feature_names: np.ndarray | None = None
    informative: np.ndarray | None = None  # known only for synthetic data


class ReadOptions(NamedTuple):
    """How to read a data file, as :func:`~ensstab_dask.real.datasets.load_dataset` takes
    it: each format's reader takes the options that are its own and refuses the others
    (given, they would be dropped unread).

    ``label``: the label column (.csv, .h5ad); ``index_col``: the column of sample ids
    (.csv; False: none); ``transpose``: the file holds one column per sample (.csv; None:
    detected from the label); ``layer``, ``use_raw``: the matrix read instead of ``X``
    (.h5ad).
    """

    label: Any = None
    index_col: Any = None
    transpose: bool | None = None
    layer: str | None = None
    use_raw: bool = False


#: The options of :class:`ReadOptions` beyond the label, with the formats that take them.
_OPTION_FORMATS = {"index_col": ".csv", "transpose": ".csv", "layer": ".h5ad", "use_raw": ".h5ad"}


def _refuse_others(path: Path, options: ReadOptions, *, own: tuple[str, ...] = ()) -> None:
    """Refuse each option of ``options`` given (not its default) that is not among ``own``."""
    for name, formats in _OPTION_FORMATS.items():
        if name not in own and getattr(options, name) != ReadOptions._field_defaults[name]:
            raise InvalidParameterError(f"{name} is for {formats} files; {path} is not one: leave it out")


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


def _load_mat(path: Path, options: ReadOptions) -> Data:
    """A scikit-feature file: ``X`` and ``Y`` (``label`` is refused: the file names its labels)."""
    from scipy.io import loadmat
    from scipy.io.matlab import MatReadError

    _no_label(path, options.label, "Y")
    _refuse_others(path, options)
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


def _load_npz(path: Path, options: ReadOptions) -> Data:
    """``X``, ``y`` (or ``Y``) and optional ``feature_names`` (``label`` is refused: the file
    names its labels)."""
    _no_label(path, options.label, "its y array")
    _refuse_others(path, options)
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

#: Names of a column of sample ids or row numbers (``id``, ``index``, ``sample``,
#: ``sample_id``, ``cell_barcode``...): such a first column of whole numbers, one per row,
#: is the index that ``to_csv()`` wrote, not a feature.
_ID_NAME = re.compile(
    r"(?i)(id|ids|index|idx|row|rownames?|obs|names?|samples?|cells?|barcodes?|.*[_ .-](id|name|barcode))"
)

#: The label column's names found without ``label=``.
_LABEL_NAMES = ("label", "y", "class", "target")


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


def _read_csv(path: Path, *, transposed: bool):
    """The file's table (pandas' frame) and its header as written; ``transposed``: the file
    read with its rows as columns, each cell's text as written, so that pandas infers each
    column's type as it would have in a file of one row per sample."""
    import pandas as pd

    try:
        if transposed:
            raw = pd.read_csv(path, header=None, dtype=str, keep_default_na=False)
            frame = pd.read_csv(io.StringIO(raw.T.to_csv(header=False, index=False)))
        else:
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
    header = [str(v) for v in raw.iloc[:, 0]] if transposed else _csv_header(path, frame)
    return frame, header


def _label_row(frame, header: list[str], label) -> str | None:
    """The label's name where it names a row of the first column and no column: the file
    holds one column per sample, and its labels in that row."""
    lowered = [h.lower() for h in header]
    if label is None:
        if any(name in lowered for name in _LABEL_NAMES):
            return None
        wanted = set(_LABEL_NAMES)
    elif isinstance(label, str) and label not in header and label not in [str(c) for c in frame.columns]:
        wanted = {label}
    else:
        return None
    rows = {str(v) for v in frame.iloc[:, 0]}
    found = [v for v in rows if (v.lower() if label is None else v) in wanted]
    return found[0] if len(found) == 1 else None


def _load_csv(path: Path, options: ReadOptions) -> Data:
    """One row per sample, a header, and the label column :func:`_label_column` finds; or,
    with ``transpose``, one column per sample and a row of labels.

    The column of sample ids (``index_col``, or else detected by :func:`_index_columns`) is
    not a feature. Without ``transpose`` (None), a label that names a row and no column
    means one column per sample: the file is read so, and a warning says it; with
    ``transpose=False`` such a file is refused. A label column named twice is refused.
    """
    _refuse_others(path, options, own=("index_col", "transpose"))
    transposed = bool(options.transpose)
    frame, header = _read_csv(path, transposed=transposed)
    row = None if options.transpose else _label_row(frame, header, options.label)
    if row is not None:
        if options.transpose is False:
            raise InvalidParameterError(
                f"{path}: {_shown(row)} is a row name, not a column: the file holds one column per sample; "
                "read it with transpose=True"
            )
        logger.warning(
            "%s: read as one column per sample (each row a feature), because the label %s is a row name and no "
            "column; pass transpose=False to refuse such a file",
            path,
            _shown(row),
        )
        transposed = True
        frame, header = _read_csv(path, transposed=True)
    return _csv_data(path, frame, header, options, transposed=transposed)


def _csv_data(path: Path, frame, header: list[str], options: ReadOptions, *, transposed: bool) -> Data:
    """The ``Data`` of a CSV table read as one row per sample."""
    import pandas as pd

    listing = f"columns start [{', '.join(_shown(c) for c in header[:5])}]"
    if not transposed:
        listing += " (a file of one column per sample: name its label row, with transpose=True)"
    label = options.label
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
    index = _index_columns(path, frame, header, at, options.index_col, quiet=transposed)
    keep = [i for i in range(len(header)) if i != at and i not in index]
    if not keep:
        raise InvalidParameterError(f"{path}: no feature columns besides the label and the row names")
    y = frame.iloc[:, at].to_numpy()
    names = [header[i] or str(frame.columns[i]) for i in keep]  # an empty name: pandas' "Unnamed: N"
    non_numeric = [names[j] for j, c in enumerate(keep) if not pd.api.types.is_numeric_dtype(frame.iloc[:, c])]
    if non_numeric:
        shown = ", ".join(_shown(c) for c in non_numeric[:3])
        raise InvalidParameterError(
            f"{path}: feature columns must be numeric; {len(non_numeric)} of {len(keep)} are not, the first [{shown}]: "
            "leave them out of the file, or name a column of sample ids with index_col=NAME"
        )
    if not transposed:
        _refuse_a_feature_as_label(path, y, header[at], len(keep))
    return Data(frame.iloc[:, keep].to_numpy(dtype=np.float64), y, np.asarray(names, dtype=str))


def _column_position(path: Path, header: list[str], frame, column) -> int:
    """The ``index_col`` column, as pandas' ``read_csv(index_col=)`` takes it: an int by
    position, else by name (as written, or as pandas names it: ``Unnamed: 0``)."""
    if isinstance(column, (int, np.integer)) and not isinstance(column, bool):
        if not -len(header) <= column < len(header):
            raise InvalidParameterError(f"{path}: index_col {column} is out of range for {len(header)} columns")
        return int(column) % len(header)
    for names in (header, [str(c) for c in frame.columns]):
        if str(column) in names:
            return names.index(str(column))
    raise InvalidParameterError(
        f"{path}: index_col {column!r} is missing; columns start [{', '.join(_shown(c) for c in header[:5])}]"
    )


def _looks_like_ids(column, name: str) -> str | None:
    """Why a first column holds sample ids rather than a feature, or None: text, one value
    per row; or whole numbers, one per row, under an id's name (:data:`_ID_NAME`)."""
    import pandas as pd

    values = column.to_numpy()
    if column.isna().any() or len(set(values.tolist())) != len(values):
        return None
    if not pd.api.types.is_numeric_dtype(column):
        # A feature with a typo ("1.2", "n/a", "3.4") is text too: ids are mostly not numbers.
        numbers = pd.to_numeric(column, errors="coerce").notna().mean()
        return "its values are text, one per row" if numbers < 0.5 else None
    if _ID_NAME.fullmatch(name) and np.all(np.mod(values.astype(np.float64), 1) == 0):
        return "its values are whole numbers, one per row, under a name of sample ids"
    return None


def _index_columns(path: Path, frame, header: list[str], at: int, index_col, *, quiet: bool) -> list[int]:
    """The columns of sample ids: ``index_col`` (False: none), or else leading columns
    named '' or ``Unnamed: N`` (what ``to_csv()`` and R's ``write.csv`` write), or else a
    first column that :func:`_looks_like_ids`; a warning says what was found, unless
    ``quiet`` (a transposed file: its header row is the sample ids, as expected)."""
    if index_col is False:
        return []
    if index_col is not None:
        i = _column_position(path, header, frame, index_col)
        if i == at:
            raise InvalidParameterError(f"{path}: index_col {index_col!r} is the label column; name another column")
        return [i]
    index = list(itertools.takewhile(lambda i: _INDEX_NAME.fullmatch(header[i]) and i != at, range(len(header))))
    if index and quiet:
        return index
    if index:
        logger.warning(
            "%s: the first column%s, named %s, %s read as sample ids (row names, as DataFrame.to_csv() and R's "
            "write.csv write them), not as features; write the file with index=False to leave them out",
            path,
            "s" if len(index) > 1 else "",
            " and ".join(_shown(header[i]) for i in index),
            "are" if len(index) > 1 else "is",
        )
        return index
    why = _looks_like_ids(frame.iloc[:, 0], header[0]) if at != 0 else None
    if why is None or quiet:
        return [] if why is None else [0]
    logger.warning(
        "%s: the first column, named %s, is read as sample ids, not as a feature (%s); pass index_col=False to "
        "read it as a feature",
        path,
        _shown(header[0]),
        why,
    )
    return [0]


def _refuse_a_feature_as_label(path: Path, y: np.ndarray, name: str, n_features: int) -> None:
    """Refuse a numeric label column that looks like one sample of a file of one column per
    sample: more rows than features, and numbers that are not classes (fractions, or a class
    of one sample)."""
    if len(y) <= n_features or y.dtype.kind not in "fiu":
        return
    values = y.astype(np.float64)
    finite = values[np.isfinite(values)]
    _, counts = np.unique(finite, return_counts=True)
    if np.all(np.mod(finite, 1) == 0) and counts.min(initial=2) > 1:
        return
    what = (
        "fractions" if np.any(np.mod(finite, 1) != 0) else f"{len(counts)} numbers, {(counts == 1).sum()} of them once"
    )
    raise InvalidParameterError(
        f"{path}: the label column {_shown(name)} holds {what}, not class labels, in more rows ({len(y)}) than "
        f"features ({n_features}): is the file one column per sample? name its label row, with transpose=True"
    )


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


def _load_h5ad(path: Path, options: ReadOptions) -> Data:
    """AnnData: one obs per sample, the label an ``obs`` column, ``var_names`` the feature
    names; the matrix ``X``, or ``layers[layer]``, or (``use_raw``) ``raw.X`` with
    ``raw.var_names``, as scanpy reads them (``layer`` and ``use_raw`` together are refused)."""
    _refuse_others(path, options, own=("layer", "use_raw"))
    if options.layer is not None and options.use_raw:
        raise InvalidParameterError("layer and use_raw=True are two matrices: choose one (scanpy refuses both too)")
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
    return anndata_data(adata, options.label, layer=options.layer, use_raw=options.use_raw, where=str(path))


def anndata_data(adata, label=None, *, layer: str | None = None, use_raw: bool = False, where: str = "adata") -> Data:
    """The ``Data`` of an AnnData object (unchecked): the label a column of ``obs``; the
    matrix ``X``, ``layers[layer]`` or (``use_raw``) ``raw.X``, with the feature names that
    go with it; ``where`` names the object in messages."""
    if layer is not None and use_raw:
        raise InvalidParameterError("layer and use_raw=True are two matrices: choose one (scanpy refuses both too)")
    obs = adata.obs
    listing = f"obs columns are [{', '.join(_shown(c) for c in obs.columns[:20])}]"
    at = _label_column(Path(where), obs.columns, label, listing=listing)
    # Categorical and string columns become their labels; check_data takes string labels as they are.
    y = np.asarray(obs.iloc[:, at].to_numpy())
    X, var_names = adata.X, adata.var_names
    if layer is not None:
        if layer not in adata.layers:
            layers = ", ".join(_shown(k) for k in list(adata.layers)[:20])
            raise InvalidParameterError(f"{where}: layer {layer!r} is missing; layers are [{layers}]")
        X = adata.layers[layer]
    elif use_raw:
        if adata.raw is None:
            raise InvalidParameterError(f"{where}: use_raw=True, but the AnnData object has no raw; leave it out")
        X, var_names = adata.raw.X, adata.raw.var_names
    return Data(_dense_float64(Path(where), X), y, np.asarray(var_names, dtype=str))
