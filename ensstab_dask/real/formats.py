"""The readers of each data format, and the ``Data`` they return, unchecked.

One reader per format, each declared beside it as a :class:`Format` (registered in
:data:`~ensstab_dask.real.datasets.FORMATS`), which
:func:`~ensstab_dask.real.datasets.load_dataset` chooses by the file's suffix and whose
result it checks: :func:`load_mat` (scikit-feature ``.mat``: ``X``, ``Y``),
:func:`load_npz` (``X`` and ``y`` or ``Y``, optional ``feature_names``),
:func:`~ensstab_dask.real.csv_files.load_csv` (its own module: one row per sample, a
header, the label column chosen by ``label=``; columns of sample ids found and said, a
label column named twice refused) and :func:`load_h5ad` (AnnData: one obs per sample,
the label an ``obs`` column; needs the optional ``anndata`` package).

A file that is not what its name says may be anything: an error names the file and what
is wrong with it, never the file's contents (:func:`reason_of` cuts out what a decoder
quotes, :func:`shown_name` cuts long names).
"""

from __future__ import annotations

import logging
import re
import warnings
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
import psutil

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.sparse_structure import check_sparse_parts
from ensstab_dask.wording import param, words

# scipy.io, pandas and anndata are imported where they are used (import time; anndata is
# also optional).

#: load_dataset's logger: what it made of a file's slips is said on one logger, whichever
#: module read the file.
logger = logging.getLogger("ensstab_dask.real.datasets")

__all__ = [
    "Data",
    "ReadOptions",
    "UNREADABLE",
    "label_column",
    "load_h5ad",
    "load_mat",
    "load_npz",
    "reason_of",
    "Format",
    "MAT",
    "NPZ",
    "H5AD",
    "say_repeated_ids",
    "shown_name",
]


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
    (.h5ad); ``task``: what the label is (every format; :mod:`~ensstab_dask.real.targets`).
    """

    label: Any = None
    index_col: Any = None
    transpose: bool | None = None
    layer: str | None = None
    use_raw: bool = False
    task: str = "auto"
    #: The options of a registered format beyond these, by name (:class:`Format`).
    more: Mapping[str, Any] = MappingProxyType({})


class Format(NamedTuple):
    """A data format, declared beside its reader: the file ``suffix`` (lower case, with its
    dot), ``read(path, options)`` returning the file's :class:`Data` unchecked, and the
    ``options`` its reader takes beyond ``label`` and ``task``, by name with their defaults
    (a :class:`ReadOptions` field, or else one it reads from ``options.more``).
    :func:`~ensstab_dask.real.datasets.load_dataset` refuses any other option given."""

    suffix: str
    read: Callable[[Path, ReadOptions], Data]
    options: Mapping[str, Any] = MappingProxyType({})


#: A quoted stretch of a message: where a decoder quotes what it read.
_QUOTED = re.compile(r"b?'[^']*'|b?\"[^\"]*\"")


def reason_of(exc: BaseException) -> str:
    """What a reader or decoder said was wrong, without what it quotes of the file: the
    first line of its message, quoted stretches cut out, at most 120 characters.

    A file that is not what its name says may be anything (``/etc/shadow`` named ``x.csv``),
    and pandas, NumPy and scikit-learn quote the bytes they could not read.

    Examples
    --------
    >>> reason_of(ValueError("could not convert string to float: 'root:$6$secret'"))
    'could not convert string to float: ...'
    """
    lines = str(exc).strip().splitlines()
    text = _QUOTED.sub("...", lines[0]) if lines else type(exc).__name__
    return text if len(text) <= 120 else text[:119] + "\u2026"


def shown_name(name) -> str:
    """A column, key or feature name as a message shows it: quoted, and cut to 40 characters."""
    text = str(name)
    return repr(text if len(text) <= 40 else text[:39] + "\u2026")


#: What a reader raises on a file that is not what its name says (a decoder's errors, a
#: truncated file: scipy's .mat reader says IndexError to a short one); MemoryError is not among them.
UNREADABLE = (ValueError, TypeError, KeyError, IndexError, EOFError, OSError, NotImplementedError)


def _no_label(path: Path, label, holds: str) -> None:
    """Refuse ``label`` for a format whose file holds its labels: it would be dropped unread."""
    if label is not None:
        raise InvalidParameterError(
            param("label")
            + f" is for .csv and .h5ad files, which have label columns; {path} holds its labels in {holds}: "
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


def load_mat(path: Path, options: ReadOptions) -> Data:
    """A scikit-feature file: ``X`` and ``Y`` (``label`` is refused: the file names its labels)."""
    from scipy.io import loadmat
    from scipy.io.matlab import MatReadError

    _no_label(path, options.label, "Y")
    try:
        mat = loadmat(path)
    except NotImplementedError as exc:  # scipy reads up to v7; v7.3 files are HDF5
        raise InvalidParameterError(
            f"{path}: a MATLAB v7.3 (HDF5) .mat file, which scipy cannot read: save it with -v7, or as .npz"
        ) from exc
    except (*UNREADABLE, MatReadError) as exc:
        # "Unknown mat file type, version 57, 57" would give two bytes of the file.
        why = "no MATLAB header" if "Unknown mat file type" in str(exc) else reason_of(exc)
        raise InvalidParameterError(f"{path}: not a readable MATLAB .mat file ({why})") from exc
    for key in ("X", "Y"):
        if key not in mat:
            found = [shown_name(k) for k in sorted(mat) if not k.startswith("__")][:10]
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
        raise InvalidParameterError(f"{path}: not a readable .npz file ({reason_of(exc)})") from exc
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
    except (*UNREADABLE, zipfile.BadZipFile) as exc:
        raise InvalidParameterError(f"{path}: not a readable NumPy .npz archive ({reason_of(exc)})") from exc


def _sparse_npz(path: Path, npz, found: str) -> Data:
    """A scipy sparse X in the layout ``scipy.sparse.save_npz`` writes (``data``,
    ``indices``, ``indptr``, ``shape``, ``format``) beside ``y`` and optional
    ``feature_names``; its arrays checked whole
    (:func:`~ensstab_dask.real.sparse_structure.check_sparse_parts`) before scipy sees them."""
    import scipy.sparse

    if "y" not in npz and "Y" not in npz:
        raise InvalidParameterError(f"{path}: key 'y' (or 'Y') is missing beside the sparse X; found [{found}]")
    parts = _npz_arrays(path, npz, ("format", "data", "indices", "indptr", "shape", "y", "Y", "feature_names"))
    y = parts["y" if "y" in parts else "Y"]
    names = parts["feature_names"].astype(str) if "feature_names" in parts else None
    stored = parts["format"]
    fmt = stored.item() if stored.shape == () and stored.dtype.kind in "US" else None
    fmt = fmt.decode("ascii", errors="replace") if isinstance(fmt, bytes) else fmt
    if not isinstance(fmt, str):
        raise InvalidParameterError(f"{path}: the sparse X's format must be a string, 'csr' or 'csc'")
    shape = check_sparse_parts(fmt, parts["data"], parts["indices"], parts["indptr"], parts["shape"], where=str(path))
    make = scipy.sparse.csr_matrix if fmt == "csr" else scipy.sparse.csc_matrix
    return Data(make((parts["data"], parts["indices"], parts["indptr"]), shape=shape), y, names)


def load_npz(path: Path, options: ReadOptions) -> Data:
    """``X``, ``y`` (or ``Y``) and optional ``feature_names`` (``label`` is refused: the file
    names its labels); or a scipy sparse X as ``scipy.sparse.save_npz`` lays it out
    (``data``, ``indices``, ``indptr``, ``shape``, ``format``) with ``y`` beside it:
    ``np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape,
    format=X.format, y=y)``."""
    _no_label(path, options.label, "its y array")
    with _npz_archive(path) as npz:
        return _npz_data(path, npz)


def _npz_data(path: Path, npz) -> Data:
    found = ", ".join(shown_name(k) for k in sorted(npz.files)[:10])
    if "X" not in npz and {"format", "data", "indices", "indptr", "shape"} <= set(npz.files):
        return _sparse_npz(path, npz, found)
    if "X" not in npz:
        raise InvalidParameterError(f"{path}: key 'X' is missing; found [{found}]")
    ykey = "y" if "y" in npz else "Y" if "Y" in npz else None
    if ykey is None:
        raise InvalidParameterError(f"{path}: key 'y' (or 'Y') is missing; found [{found}]")
    arrays = _npz_arrays(path, npz, ("X", ykey, "feature_names"))
    names = arrays["feature_names"].astype(str) if "feature_names" in arrays else None
    # y stays as it is: check_data takes a column or a row, and names any other shape.
    return Data(arrays["X"], arrays[ykey], names)


def _npz_arrays(path: Path, npz, keys) -> dict[str, np.ndarray]:
    """The arrays of an archive named ``keys`` (those it holds), each refused in one line when
    it holds Python objects (reading them would unpickle, running code from the file) or
    cannot be read."""
    arrays = {}
    for key in keys:
        if key not in npz:
            continue
        try:
            arrays[key] = np.asarray(npz[key])
        except ValueError as exc:  # an array of Python objects: reading it would run code from the file
            raise InvalidParameterError(
                f"{path}: X, y and feature_names must be numeric or string arrays; {key} holds Python objects, "
                "which are not read (unpickling would run code from the file)"
            ) from exc
        except (*UNREADABLE, zipfile.BadZipFile) as exc:
            raise InvalidParameterError(f"{path}: {key} could not be read ({reason_of(exc)})") from exc
    return arrays


def label_column(path: Path, columns, label, *, listing: str) -> int:
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
            raise InvalidParameterError(
                words(f"{path}: choose the label column with ", param("label", ...), f"; {listing}")
            )
        return candidates[0]
    if str(label) in names:
        at = names.index(str(label))
        if isinstance(label, (int, np.integer)) and -len(names) <= label < len(names) and label % len(names) != at:
            logger.warning(
                "%s: label %s names a column and is a position: the column named %s (column %d) is the label, "
                "not column %d (%s); to use that one, give its name",
                path,
                label,
                shown_name(label),
                at,
                label % len(names),
                shown_name(names[label]),
            )
        return at
    if isinstance(label, (int, np.integer)) and not isinstance(label, bool):
        if not -len(names) <= label < len(names):
            raise InvalidParameterError(f"{path}: label column index {label} is out of range for {len(names)} columns")
        return int(label) % len(names)
    raise InvalidParameterError(f"{path}: label column {label!r} is missing; {listing}")


def say_repeated_ids(where, ids) -> None:
    """One warning when sample ids repeat: the same sample read twice makes the selection
    look more stable than it is (samples are told apart by their place, not their ids)."""
    values, counts = np.unique(np.asarray(ids).astype(str), return_counts=True)
    if counts.max(initial=1) <= 1:
        return
    order = np.argsort(-counts, kind="stable")
    shown = ", ".join(f"{shown_name(values[k])} x{counts[k]}" for k in order[:3] if counts[k] > 1)
    logger.warning(
        "%s: %d of %d sample ids repeat an earlier one (%s%s): is a sample in the file twice? a resample then holds "
        "copies of one sample, and the selection looks more stable than it is",
        where,
        int((counts - 1).sum()),
        len(ids),
        shown,
        ", ..." if (counts > 1).sum() > 3 else "",
    )


def _available_bytes() -> int:
    """Memory this machine can hand out now without swapping."""
    return int(psutil.virtual_memory().available)


def _size(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:.1f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:.1f} MiB"


def _matrix(path: Path, X):
    """An AnnData ``X`` as the selectors take it: dense as float64; scipy sparse (as
    single-cell data mostly are) kept sparse, for :func:`~ensstab_dask.real.datasets.check_data`
    to make CSC float32. Refused up front when that would not fit in memory, priced as
    what it becomes (8 bytes a value dense; 8 a stored value, 4 an index, sparse)."""
    import scipy.sparse

    if X is None:
        raise InvalidParameterError(f"{path}: the AnnData object has no X matrix")
    n_obs, n_vars = X.shape
    sparse = scipy.sparse.issparse(X)
    need = 8 * X.nnz + 4 * (n_vars + 1) if sparse else 8 * n_obs * n_vars
    as_what = f"as a sparse CSC float32 matrix ({X.nnz:,} stored values)" if sparse else "as a dense float64 array"
    # A dense float64 X is in memory already (backed=None read it) and is used as it is.
    available = _available_bytes()
    if (sparse or np.asarray(X).dtype != np.float64) and need > available:
        raise InvalidParameterError(
            f"{path}: X ({n_obs} obs x {n_vars} vars) needs {_size(need)} {as_what}, more than the "
            f"{_size(available)} of memory available: keep fewer vars (highly variable genes, say) in the file"
        )
    if sparse:
        if not np.issubdtype(X.dtype, np.number):
            raise InvalidParameterError(f"{path}: X must be numeric; got a sparse matrix of {X.dtype}")
        return X
    try:
        return np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:  # strings or objects in X
        raise InvalidParameterError(f"{path}: X must be numeric ({reason_of(exc)})") from exc


def load_h5ad(path: Path, options: ReadOptions) -> Data:
    """AnnData: one obs per sample, the label an ``obs`` column, ``var_names`` the feature
    names; the matrix ``X``, or ``layers[layer]``, or (``use_raw``) ``raw.X`` with
    ``raw.var_names``, as scanpy reads them (``layer`` and ``use_raw`` together are refused)."""
    if options.layer is not None and options.use_raw:
        raise InvalidParameterError(
            words(
                param("layer"),
                " and ",
                param("use_raw", True),
                " are two matrices: choose one (scanpy refuses both too)",
            )
        )
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
            warnings.filterwarnings("ignore", message="Observation names are not unique")
            adata = anndata.read_h5ad(path)
    except UNREADABLE as exc:  # h5py says OSError to a file that is not HDF5
        raise InvalidParameterError(f"{path}: not a readable .h5ad file ({reason_of(exc)})") from exc
    return anndata_data(adata, options.label, layer=options.layer, use_raw=options.use_raw, where=str(path))


def anndata_data(adata, label=None, *, layer: str | None = None, use_raw: bool = False, where: str = "adata") -> Data:
    """The ``Data`` of an AnnData object (unchecked): the label a column of ``obs``; the
    matrix ``X``, ``layers[layer]`` or (``use_raw``) ``raw.X``, with the feature names that
    go with it; ``where`` names the object in messages."""
    if layer is not None and use_raw:
        raise InvalidParameterError(
            words(
                param("layer"),
                " and ",
                param("use_raw", True),
                " are two matrices: choose one (scanpy refuses both too)",
            )
        )
    obs = adata.obs
    listing = f"obs columns are [{', '.join(shown_name(c) for c in obs.columns[:20])}]"
    at = label_column(Path(where), obs.columns, label, listing=listing)
    # Categorical and string columns become their labels; check_data takes string labels as they are.
    y = np.asarray(obs.iloc[:, at].to_numpy())
    say_repeated_ids(where, adata.obs_names)
    X, var_names = adata.X, adata.var_names
    if layer is not None:
        if layer not in adata.layers:
            layers = ", ".join(shown_name(k) for k in list(adata.layers)[:20])
            raise InvalidParameterError(f"{where}: layer {layer!r} is missing; layers are [{layers}]")
        X = adata.layers[layer]
    elif use_raw:
        if adata.raw is None:
            raise InvalidParameterError(
                words(f"{where}: ", param("use_raw", True), ", but the AnnData object has no raw; leave it out")
            )
        X, var_names = adata.raw.X, adata.raw.var_names
    return Data(_matrix(Path(where), X), y, np.asarray(var_names, dtype=str))


MAT = Format(".mat", load_mat)
NPZ = Format(".npz", load_npz)
H5AD = Format(".h5ad", load_h5ad, {"layer": None, "use_raw": False})
