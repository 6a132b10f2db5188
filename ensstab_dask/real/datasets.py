"""Data: files of the user's, the reference datasets, and an embedded default.

* :func:`load_dataset` reads each format of :data:`LOADERS`, chosen by the file's
  suffix: scikit-feature ``.mat`` files (``X``, ``Y``), ``.npz`` (``X`` and ``y`` or
  ``Y``, optional ``feature_names``), CSV (one row per sample, a header, the label
  column chosen by ``label=``) and AnnData ``.h5ad`` (one obs per sample, the label an
  ``obs`` column chosen by ``label=``; needs the optional ``anndata`` package). Adding
  a format is one entry there, with its tests: the suffixes that outputs never replace
  (``outputs.DATA_SUFFIXES``) and the suffixes error messages name are read from it.
* :func:`reference_dataset` reads Colon, Lymphoma or Prostate from
  ``$ENSSTAB_DATA_DIR`` (never shipped with the package).
* :func:`make_microarray` is the embedded default: a synthetic two-class problem shaped
  like a microarray study, generated from a seed, with known informative features.

Every loader ends in :func:`check_data`, which refuses what the method cannot use.
:func:`select_classes` keeps the samples of chosen classes (``classes=`` of
:func:`load_dataset`, the CLI's ``--classes``), and :func:`class_counts` says which
classes there are and how many samples each has.

More than two classes are used as they are: the paper's datasets are mostly two-class,
but one of them (Lymphoma, 9 classes) is not, and the selectors rank features by how
they separate all the classes at once (a random forest's impurity decrease over every
class; for a linear model, its coefficients' L1 norm over the classes). Choose two
classes to ask the two-class question.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import psutil

from ensstab_dask.checks import check_int, check_real
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.seeding import SeedLike, make_rng

# scikit-learn, scipy.io, pandas and anndata are imported where they are used (import time;
# anndata is also optional).

__all__ = [
    "Data",
    "Loader",
    "LOADERS",
    "data_formats",
    "load_dataset",
    "check_data",
    "check_n_target",
    "make_microarray",
    "reference_dataset",
    "select_classes",
    "class_counts",
    "REFERENCE_FILES",
]

REFERENCE_FILES = {"colon": "colon.mat", "lymphoma": "lymphoma.mat", "prostate": "Prostate_GE.mat"}
#: Where the reference files come from (scikit-feature's datasets page).
REFERENCE_SOURCE = "https://jundongl.github.io/scikit-feature/datasets.html"
DATA_DIR_ENV = "ENSSTAB_DATA_DIR"


class Data(NamedTuple):
    """A dataset: ``X`` (n_samples, n_feature) float, ``y`` labels, optional names."""

    X: np.ndarray
    y: np.ndarray
    feature_names: np.ndarray | None = None
    informative: np.ndarray | None = None  # known only for synthetic data


def check_data(X, y, *, n_target: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validate a feature matrix and labels for the method; return them as arrays.

    scikit-learn's ``check_X_y`` and ``check_classification_targets`` do the checking
    (X 2-D, real and finite, at least 4 samples, as many labels as samples; y class
    labels, no missing labels); their refusals are re-raised as one line naming X or y.
    Then a single class is refused, and (with ``n_target``) ``n_target >= n_feature``.
    """
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_X_y

    y = np.asarray(y)
    if y.ndim == 2 and 1 in y.shape:  # a .mat file's Y is a column (or a row)
        y = y.ravel()
    try:
        X, y = check_X_y(X, y, dtype=np.float64, ensure_min_samples=4)
        check_classification_targets(y)
    except (TypeError, ValueError) as exc:  # X is still the caller's when check_X_y refused it
        raise _data_error(exc, X, y) from exc
    _check_float32_range(X)
    if len(np.unique(y)) < 2:
        raise InvalidParameterError(f"y must hold at least 2 classes; got only {np.unique(y).tolist()}")
    if n_target is not None:
        check_n_target(n_target, X.shape[1])
    return X, y


def _check_float32_range(X: np.ndarray) -> None:
    """Refuse values beyond float32's range (about 3.4e38): scikit-learn's trees compute in
    float32 and refuse them only once the first real run has started."""
    big = np.abs(X) > np.finfo(np.float32).max
    if big.any():
        r, c = np.argwhere(big)[0]
        raise InvalidParameterError(
            f"X holds values beyond float32's range, +-{float(np.finfo(np.float32).max):.3g}, in which scikit-learn's "
            f"trees compute ({int(big.sum())} values; first at sample {r}, feature {c}: {X[r, c]:g}); rescale X"
        )


def check_n_target(n_target, n_feature: int) -> int:
    """``n_target`` as an int in ``[1, n_feature)``: a selector must leave some features out."""
    n_target = check_int(n_target, "n_target", minimum=1)
    if n_target >= n_feature:
        raise InvalidParameterError(f"n_target must be < n_feature={n_feature}; got {n_target}")
    return n_target


def _data_error(exc: Exception, X, y: np.ndarray) -> Exception:
    """scikit-learn's refusal of (X, y) as one line that names the parameter and what is allowed."""
    from sklearn.utils.multiclass import type_of_target

    msg = str(exc)
    if "Complex data" in msg:  # scikit-learn says ValueError; it is the wrong kind of number
        return InvalidParameterError(f"{'X' if np.iscomplexobj(X) else 'y'} must be real-valued; got complex numbers")
    if "convert" in msg or isinstance(exc, TypeError):
        return InvalidParameterError(f"X must be a dense numeric (n_samples, n_feature) array: {msg.splitlines()[0]}")
    if "inconsistent numbers of samples" in msg:
        return InvalidParameterError(f"X and y have different lengths: {len(X)} samples in X, {len(y)} labels in y")
    if "2D array" in msg or "dim <= 2" in msg:
        return InvalidParameterError(f"X must be 2-D (n_samples, n_feature); got shape {np.shape(X)}")
    if "y should be a 1d array" in msg:
        return InvalidParameterError(f"y must be 1-D (one label per sample); got shape {y.shape}")
    if "sample(s)" in msg:
        return InvalidParameterError(f"X must have at least 4 samples; got {len(X)}")
    if "feature(s)" in msg:
        return InvalidParameterError(f"X must have at least 1 feature; got shape {np.shape(X)}")
    if "Input X contains" in msg:
        bad = ~np.isfinite(np.asarray(X, dtype=np.float64))
        r, c = np.argwhere(bad)[0]
        where = f"first at sample {r}, feature {c}"
        return InvalidParameterError(f"X contains NaN or inf ({int(bad.sum())} values; {where})")
    if "Input y contains" in msg:
        return InvalidParameterError("y contains NaN or inf")
    if "Input contains NaN" in msg:  # check_X_y has passed X: this is type_of_target on y
        return InvalidParameterError("y contains missing labels (NaN)")
    if "Unknown label type" in msg:
        return InvalidParameterError(
            f"y must hold class labels (integers or strings), no missing labels; got a {type_of_target(y)!r} target"
        )
    return InvalidParameterError(f"X, y: {msg.splitlines()[0]}")


#: What a reader raises on a file that is not what its name says (a decoder's errors, a
#: truncated file); MemoryError is not among them.
_UNREADABLE = (ValueError, TypeError, KeyError, EOFError, OSError, NotImplementedError)


def _load_mat(path: Path, label=None) -> Data:
    """A scikit-feature file: ``X`` and ``Y`` (``label`` is not used: the file names its labels)."""
    from scipy.io import loadmat
    from scipy.io.matlab import MatReadError

    try:
        mat = loadmat(path)
    except (*_UNREADABLE, MatReadError) as exc:
        raise InvalidParameterError(f"{path}: not a readable MATLAB .mat file ({exc})") from exc
    for key in ("X", "Y"):
        if key not in mat:
            found = sorted(k for k in mat if not k.startswith("__"))
            raise InvalidParameterError(
                f"{path}: key {key!r} is missing (scikit-feature layout: X and Y); found {found}"
            )
    return Data(mat["X"], np.asarray(mat["Y"]).ravel())


def _load_npz(path: Path, label=None) -> Data:
    """``X``, ``y`` (or ``Y``) and optional ``feature_names`` (``label`` is not used: the file
    names its labels)."""
    try:
        npz = np.load(path, allow_pickle=False)
    except (*_UNREADABLE, zipfile.BadZipFile) as exc:
        raise InvalidParameterError(f"{path}: not a readable .npz file ({exc})") from exc
    if "X" not in npz:
        raise InvalidParameterError(f"{path}: key 'X' is missing; found {sorted(npz.files)}")
    ykey = "y" if "y" in npz else "Y" if "Y" in npz else None
    if ykey is None:
        raise InvalidParameterError(f"{path}: key 'y' (or 'Y') is missing; found {sorted(npz.files)}")
    try:
        names = np.asarray(npz["feature_names"]).astype(str) if "feature_names" in npz else None
        return Data(npz["X"], np.asarray(npz[ykey]).ravel(), names)
    except ValueError as exc:  # an array of Python objects: reading it would run code from the file
        raise InvalidParameterError(f"{path}: X, y and feature_names must be numeric or string arrays ({exc})") from exc


def _label_column(path: Path, columns, label, *, listing: str):
    """The label column among ``columns``: ``label`` by name or position, or else the one
    column named label, y, class or target; ``listing`` shows the user what there is."""
    if label is None:
        candidates = [c for c in columns if str(c).lower() in ("label", "y", "class", "target")]
        if len(candidates) != 1:
            raise InvalidParameterError(f"{path}: choose the label column with label=...; {listing}")
        return candidates[0]
    if isinstance(label, (int, np.integer)) and not isinstance(label, bool):
        if not -len(columns) <= label < len(columns):
            raise InvalidParameterError(
                f"{path}: label column index {label} is out of range for {len(columns)} columns"
            )
        return columns[label]
    if label not in columns:
        raise InvalidParameterError(f"{path}: label column {label!r} is missing; {listing}")
    return label


def _load_csv(path: Path, label=None) -> Data:
    """One row per sample, a header, and the label column :func:`_label_column` finds."""
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except _UNREADABLE as exc:  # pandas' parser errors are ValueErrors
        raise InvalidParameterError(f"{path}: not a readable CSV file ({exc})") from exc
    if frame.empty and len(frame.columns):
        raise InvalidParameterError(f"{path}: a header and no rows; a CSV data file has one row per sample")
    label = _label_column(path, frame.columns, label, listing=f"columns start {list(frame.columns[:5])}")
    y = frame[label].to_numpy()
    features = frame.drop(columns=[label])
    non_numeric = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    if non_numeric:
        raise InvalidParameterError(f"{path}: feature columns must be numeric; {non_numeric[:3]} are not")
    return Data(features.to_numpy(dtype=np.float64), y, np.asarray(features.columns, dtype=str))


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
        raise InvalidParameterError(f"{path}: X must be numeric ({exc})") from exc


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
        adata = anndata.read_h5ad(path)
    except _UNREADABLE as exc:  # h5py says OSError to a file that is not HDF5
        raise InvalidParameterError(f"{path}: not a readable .h5ad file ({exc})") from exc
    obs = adata.obs
    label = _label_column(path, obs.columns, label, listing=f"obs columns are {[str(c) for c in obs.columns]}")
    # Categorical and string columns become their labels; check_data takes string labels as they are.
    y = np.asarray(obs[label].to_numpy())
    return Data(_dense_float64(path, adata.X), y, np.asarray(adata.var_names, dtype=str))


#: Reads one data format: ``loader(path, label)``, ``label`` the label column as
#: :func:`load_dataset` takes it (a format whose file names its labels does not use it),
#: returning the file's ``Data`` unchecked (:func:`load_dataset` checks it).
Loader = Callable[[Path, Any], Data]

#: The data formats :func:`load_dataset` reads, by lower-case file suffix.
LOADERS: dict[str, Loader] = {".mat": _load_mat, ".npz": _load_npz, ".csv": _load_csv, ".h5ad": _load_h5ad}


def data_formats() -> str:
    """The suffixes of :data:`LOADERS` as a message lists them: ``.mat, .npz, .csv or .h5ad``."""
    suffixes = list(LOADERS)
    return suffixes[0] if len(suffixes) == 1 else f"{', '.join(suffixes[:-1])} or {suffixes[-1]}"


def _label_text(label) -> str:
    """A class label as the data line prints it and ``classes=`` names it: ``1`` for the
    1.0 of a .mat file's numeric column, strings as they are."""
    if isinstance(label, (float, np.floating)) and float(label).is_integer():
        return str(int(label))
    if isinstance(label, (bytes, np.bytes_)):
        return label.decode(errors="replace")
    return str(label)


def class_counts(y) -> dict[str, int]:
    """Each class of ``y`` (as :func:`select_classes` names it) with its number of samples,
    in the order of ``np.unique``.

    Examples
    --------
    >>> from ensstab_dask.real.datasets import class_counts
    >>> class_counts([2.0, 1.0, 2.0])
    {'1': 1, '2': 2}
    """
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    return {_label_text(label): int(n) for label, n in zip(labels, counts)}


def _listed(counts: dict[str, int]) -> str:
    return ", ".join(f"{label!r} ({n})" for label, n in counts.items())


def select_classes(data: Data, classes) -> Data:
    """``data`` with only the samples whose label is one of ``classes``.

    Parameters
    ----------
    data : Data
        As :func:`load_dataset` or :func:`make_microarray` return it.
    classes : sequence or str
        At least two of ``y``'s classes, by their labels as :func:`class_counts` prints
        them (``1`` for a .mat file's 1.0), or one string of them separated by commas
        (``"CD14+ Monocyte,Dendritic"``).

    Examples
    --------
    >>> from ensstab_dask.real.datasets import class_counts, make_microarray, select_classes
    >>> class_counts(select_classes(make_microarray(seed=0), "0,1").y)
    {'0': 40, '1': 22}
    """
    counts = class_counts(data.y)
    chosen = [c.strip() for c in classes.split(",")] if isinstance(classes, str) else [_label_text(c) for c in classes]
    if len(set(chosen)) < 2 or len(set(chosen)) != len(chosen):
        raise InvalidParameterError(
            f"classes must name at least 2 different classes; got {chosen}; the classes are {_listed(counts)}"
        )
    unknown = [c for c in chosen if c not in counts]
    if unknown:
        raise InvalidParameterError(
            f"classes: {', '.join(map(repr, unknown))} not among the classes of the data: {_listed(counts)}"
        )
    keep = np.isin(np.array([_label_text(label) for label in data.y]), chosen)
    X, y = check_data(data.X[keep], data.y[keep])
    return data._replace(X=X, y=y)


def load_dataset(path: str | os.PathLike, *, label=None, classes=None) -> Data:
    """Read a dataset from a file in one of the formats of :data:`LOADERS`: ``.mat``
    (scikit-feature), ``.npz``, ``.csv`` or ``.h5ad`` (AnnData).

    Parameters
    ----------
    path : path
        A data file; its suffix says its format. A ``.h5ad`` file's ``X`` (dense or
        sparse) is read into memory as a dense float64 array (refused when it would not
        fit), its ``var_names`` are the feature names; reading it needs the optional
        ``anndata`` package (``pip install 'ensstab_dask[anndata]'``).
    label : str or int, optional
        CSV and ``.h5ad`` only: the label column (for ``.h5ad``, a column of ``obs``), by
        name or position (default: the one column named label, y, class or target).
        Categorical and string labels are taken as they are.
    classes : sequence or str, optional
        Keep only the samples of these classes (at least two; :func:`select_classes`),
        whatever the format; default: every class (more than two are used as they are:
        see the module docstring).

    Returns
    -------
    Data
        ``X, y, feature_names, informative = load_dataset(...)``; names where the file
        has them, else None.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from ensstab_dask import load_dataset
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.npz")
    >>> np.savez(path, X=np.random.default_rng(0).normal(size=(6, 4)), y=[0, 1] * 3)
    >>> load_dataset(path).X.shape
    (6, 4)
    """
    path = Path(path)
    if path.is_dir():
        raise InvalidParameterError(f"data file {str(path)!r} is a directory; give a {data_formats()} file")
    if path.exists() and not path.is_file():  # read, a FIFO would wait for a writer forever
        raise InvalidParameterError(
            f"data file {str(path)!r} is not a regular file (a FIFO, a device or a socket); give a "
            f"{data_formats()} file"
        )
    if not path.is_file():
        raise InvalidParameterError(f"data file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix not in LOADERS:
        raise InvalidParameterError(f"data file {str(path)!r}: unknown format {suffix!r}; use {data_formats()}")
    data = LOADERS[suffix](path, label)
    X, y = check_data(data.X, data.y)
    data = Data(X, y, data.feature_names)
    return data if classes is None else select_classes(data, classes)


def reference_dataset(name: str, *, data_dir: str | os.PathLike | None = None) -> Data:
    """Colon, Lymphoma or Prostate from ``data_dir`` or ``$ENSSTAB_DATA_DIR``: the files of
    :data:`REFERENCE_FILES`, as scikit-feature's datasets page (:data:`REFERENCE_SOURCE`)
    serves them (docs/method.md, section 10, has their checksums)."""
    key = str(name).lower()
    if key not in REFERENCE_FILES:
        raise InvalidParameterError(f"name must be one of {sorted(REFERENCE_FILES)}; got {name!r}")
    folder = data_dir if data_dir is not None else os.environ.get(DATA_DIR_ENV)
    if not folder:
        raise InvalidParameterError(
            f"set {DATA_DIR_ENV} (or pass data_dir) to the folder holding {REFERENCE_FILES[key]} "
            f"(scikit-feature's datasets page: {REFERENCE_SOURCE})"
        )
    return load_dataset(Path(folder) / REFERENCE_FILES[key])


def make_microarray(
    *,
    n_samples: int = 62,
    n_feature: int = 2000,
    n_informative: int = 40,
    effect: float = 1.5,
    class_ratio: float = 22 / 62,
    seed: SeedLike = 0,
) -> Data:
    """The embedded default: a synthetic two-class microarray-like study.

    ``n_samples`` samples (by default 62, 22 of class 1, like Colon) of ``n_feature``
    log-expression-like features: correlated background (a few latent factors plus
    noise, as genes co-vary), and ``n_informative`` features whose mean in class 1 is
    shifted by ``effect`` standard deviations, half up, half down. The informative
    features are scattered at random positions, returned in ``informative``, so the
    estimated n_useful can be compared with the truth.

    Examples
    --------
    >>> from ensstab_dask import make_microarray
    >>> data = make_microarray(n_feature=200, n_informative=10, seed=1)
    >>> data.X.shape, len(data.informative)
    ((62, 200), 10)
    """
    n_samples = check_int(n_samples, "n_samples", minimum=4)
    n_feature = check_int(n_feature, "n_feature", minimum=2)
    n_informative = check_int(n_informative, "n_informative", minimum=0, maximum=n_feature)
    effect = check_real(effect, "effect", minimum=0.0)
    class_ratio = check_real(class_ratio, "class_ratio", minimum=0.0, maximum=1.0, open_minimum=True, open_maximum=True)
    rng = make_rng(seed)
    n1 = min(max(1, round(class_ratio * n_samples)), n_samples - 1)
    y = np.zeros(n_samples, dtype=np.int64)
    y[rng.permutation(n_samples)[:n1]] = 1
    factors = rng.standard_normal((n_samples, 5))
    loadings = rng.standard_normal((5, n_feature)) * 0.5
    # Not a BLAS product: its rounding may depend on the thread count, the data must not.
    X = (factors[:, :, None] * loadings[None, :, :]).sum(axis=1) + rng.standard_normal((n_samples, n_feature))
    X /= X.std(axis=0, keepdims=True)
    informative = np.sort(rng.choice(n_feature, size=n_informative, replace=False))
    signs = np.where(np.arange(n_informative) % 2 == 0, 1.0, -1.0)
    X[np.ix_(y == 1, informative)] += effect * signs
    names = np.array([f"g{i:05d}" for i in range(n_feature)])
    return Data(X, y, names, informative)
