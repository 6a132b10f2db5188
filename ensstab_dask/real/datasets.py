"""Data: files of the user's, the reference datasets, and an embedded default.

* :func:`load_dataset` reads each format of :data:`FORMATS`, chosen by the file's
  suffix: scikit-feature ``.mat`` files (``X``, ``Y``), ``.npz`` (``X`` and ``y`` or
  ``Y``, optional ``feature_names``), CSV (one row per sample, a header, the label
  column chosen by ``label=``) and AnnData ``.h5ad`` (one obs per sample, the label an
  ``obs`` column chosen by ``label=``; needs the optional ``anndata`` package). Adding
  a format is one entry there, with its tests: the suffixes that outputs never replace
  (``outputs.DATA_SUFFIXES``) and the suffixes error messages name are read from it.
  The readers, and the :class:`Data` they return, are in :mod:`~ensstab_dask.real.formats`.
* :func:`reference_dataset` reads Colon, Lymphoma or Prostate from
  ``$ENSSTAB_DATA_DIR`` (never shipped with the package).
* :func:`make_microarray` is the embedded default: a synthetic two-class problem shaped
  like a microarray study, generated from a seed, with known informative features.

Every loader ends in :func:`check_data`, which refuses what the method cannot use.
Then :func:`load_dataset` says in one warning each (the ``ensstab_dask`` logger) what it
made of a file's slips: repeated feature names are made unique as scanpy's
``var_names_make_unique`` does (``f0``, ``f0-1``), and samples that repeat an earlier one
(same values, same label) are counted. A CSV's first column without a name (the row
names ``DataFrame.to_csv()`` and R's ``write.csv`` write) is read as sample ids, not as a
feature, and said so; a label column that appears twice is refused. An error names the
file and what is wrong with it, never the file's contents (a file that is not what its
name says may be anything).
:func:`select_classes` keeps the samples of chosen classes (``classes=`` of
:func:`load_dataset`, the CLI's ``--classes``), and :func:`class_counts` says which
classes there are and how many samples each has. An estimate's selection frequencies go
back into an AnnData's ``var`` through :mod:`~ensstab_dask.estimates.interop.to_anndata`.

More than two classes are used as they are: the paper's datasets are mostly two-class,
but one of them (Lymphoma, 9 classes) is not, and the selectors rank features by how
they separate all the classes at once (a random forest's impurity decrease over every
class; for a linear model, its coefficients' L1 norm over the classes). Choose two
classes to ask the two-class question.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ensstab_dask.checks import check_int, check_real
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.file_formats import (
    FORMATS,
    LOADERS,
    Loader,
    data_formats,
    read_options,
    register_format,
    unregister_format,
)
from ensstab_dask.real.formats import Data, reason_of, shown_name
from ensstab_dask.real.repeats import say_repeated_samples
from ensstab_dask.real.sparse_structure import check_sparse
from ensstab_dask.real.targets import check_target, task_of
from ensstab_dask.seeding import SeedLike, make_rng
from ensstab_dask.wording import param

# scikit-learn is imported where it is used (import time).

logger = logging.getLogger(__name__)

__all__ = [
    "Data",
    "Loader",
    "LOADERS",
    "FORMATS",
    "register_format",
    "unregister_format",
    "data_formats",
    "discretize",
    "load_dataset",
    "check_data",
    "CheckedData",
    "check_n_target",
    "make_microarray",
    "make_names_unique",
    "reference_dataset",
    "select_classes",
    "class_counts",
    "REFERENCE_FILES",
]

REFERENCE_FILES = {"colon": "colon.mat", "lymphoma": "lymphoma.mat", "prostate": "Prostate_GE.mat"}
#: Where the reference files come from (scikit-feature's datasets page).
REFERENCE_SOURCE = "https://jundongl.github.io/scikit-feature/datasets.html"
DATA_DIR_ENV = "ENSSTAB_DATA_DIR"


@dataclass(frozen=True, eq=False)
class CheckedData:
    """``X`` and ``y`` as :func:`check_data` returned them, and the feature names given with
    them: what the steps after a public entry's check take, so that one call checks its
    data once and hashes them at most once (:attr:`digest`).

    Made by :meth:`of` (which checks), or directly from what a check returned (a group's
    rows and labels of checked data).
    """

    X: Any
    y: np.ndarray
    #: The names given with X (``feature_names``, or a DataFrame's columns), as given.
    names: Any = None

    @classmethod
    def of(cls, X, y, *, feature_names=None, **check) -> CheckedData:
        """``X`` and ``y`` checked by :func:`check_data` (``check``: its keywords); the names
        are ``feature_names``, or a DataFrame's columns."""
        names = feature_names if feature_names is not None else getattr(X, "columns", None)
        return cls(*check_data(X, y, **check), names)

    @property
    def n_feature(self) -> int:
        return int(self.X.shape[1])

    @functools.cached_property
    def digest(self) -> str:
        """:func:`~ensstab_dask.real.cache_files.data_digest` of X and y, made once."""
        # Here: the cache files' module imports xarray, which the command's parser never needs.
        from ensstab_dask.real.cache_files import data_digest

        return data_digest(self.X, self.y)


def check_data(
    X, y, *, n_target: int | None = None, task: str = "auto", source: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a feature matrix and labels for the method; return them as arrays.

    scikit-learn's ``check_X_y`` does the checking (X 2-D, real and finite, at least 4
    samples, as many labels as samples, no missing labels); then ``y`` is read as the
    ``task`` it is (:func:`~ensstab_dask.real.targets.check_target`: class labels, at least
    two classes, or a regression target, float64). Refusals are one line naming X or y.
    With ``n_target``, ``n_target >= n_feature`` is refused.

    A sparse X's structure is checked whole first
    (:func:`~ensstab_dask.real.sparse_structure.check_sparse`), before scipy's C code
    trusts its indices; ``source``, the file it was read from, starts that refusal.

    A dense X becomes float64; a scipy sparse X stays sparse, as CSC float32 with sorted
    indices (what scikit-learn's trees fit on without a copy), a twentieth of a
    single-cell matrix's dense float64 size at 5 % density.
    """
    import scipy.sparse
    from sklearn.utils.validation import check_X_y

    y = np.asarray(y)
    if y.ndim == 2 and 1 in y.shape:  # a .mat file's Y is a column (or a row)
        y = y.ravel()
    sparse = scipy.sparse.issparse(X)
    if sparse:  # before scipy's C code trusts its indices, and float32 makes large sums inf
        check_sparse(X, where=source)
    try:
        X, y = check_X_y(X, y, accept_sparse="csc", dtype=np.float32 if sparse else np.float64, ensure_min_samples=4)
        y = check_target(y, task)
    except InvalidParameterError:
        raise
    except (TypeError, ValueError) as exc:  # X is still the caller's when check_X_y refused it
        raise _data_error(exc, X, y) from exc
    if sparse:
        X = _canonical(X)
    else:
        _check_float32_range(X)
    if n_target is not None:
        check_n_target(n_target, X.shape[1])
    return X, y


def _canonical(X):
    """A CSC matrix with sorted indices and no duplicates (its bytes then say its values),
    as a copy when the caller's is not so already."""
    if X.has_canonical_format:
        return X
    X = X.copy()
    X.sum_duplicates()
    return X


def _check_float32_range(X: np.ndarray) -> None:
    """Refuse values beyond float32's range (about 3.4e38) in a dense ``X``: scikit-learn's
    trees compute in float32 and refuse them only once the first real run has started (a
    sparse X's are checked with its structure, repeated entries summed)."""
    limit = np.finfo(np.float32).max
    # Two reductions, no temporary: a check of X must not hold a second X (a dense
    # 10,000 x 20,000 float64 X is 1.5 GiB). Only a refusal looks further, a block at a time.
    if X.size == 0 or (X.max() <= limit and X.min() >= -limit):
        return
    rows = max(1, 2**22 // max(1, X.shape[1]))
    count, first = 0, None
    for start in range(0, X.shape[0], rows):
        big = np.abs(X[start : start + rows]) > limit
        count += int(big.sum())
        if first is None and big.any():
            first = (start + int(np.argwhere(big)[0][0]), int(np.argwhere(big)[0][1]))
    assert first is not None  # the reductions above found one
    raise InvalidParameterError(
        f"X holds values beyond float32's range, +-{float(limit):.3g}, in which scikit-learn's trees compute "
        f"({count} values; first at sample {first[0]}, feature {first[1]}: {X[first]:g}); rescale X"
    )


def check_n_target(n_target, n_feature: int) -> int:
    """``n_target`` as an int in ``[1, n_feature)``: a selector must leave some features out."""
    n_target = check_int(n_target, "n_target", minimum=1)
    if n_target >= n_feature:
        raise InvalidParameterError(param("n_target") + f" must be < n_feature={n_feature}; got {n_target}")
    return n_target


def _holds_text(X) -> bool:
    """Whether X (not sparse) holds strings (or Python objects, or rows of different lengths)."""
    import scipy.sparse

    if scipy.sparse.issparse(X):
        return False
    try:
        return np.asarray(X).dtype.kind in "USO"
    except (TypeError, ValueError):  # ragged
        return True


def _data_error(exc: Exception, X, y: np.ndarray) -> Exception:
    """scikit-learn's refusal of (X, y) as one line that names the parameter and what is allowed."""
    from sklearn.utils.multiclass import type_of_target

    msg = str(exc)
    if "Complex data" in msg:  # scikit-learn says ValueError; it is the wrong kind of number
        return InvalidParameterError(f"{'X' if np.iscomplexobj(X) else 'y'} must be real-valued; got complex numbers")
    if "convert" in msg or isinstance(exc, TypeError):
        if _holds_text(X):  # scikit-learn's message would quote the first value it could not read
            return InvalidParameterError("X must be a dense numeric (n_samples, n_feature) array; it holds text")
        return InvalidParameterError(f"X must be a dense numeric (n_samples, n_feature) array: {reason_of(exc)}")
    if "inconsistent numbers of samples" in msg:
        return InvalidParameterError(
            f"X and y have different lengths: {np.shape(X)[0]} samples in X, {len(y)} labels in y"
        )
    if "2D array" in msg or "dim <= 2" in msg:
        return InvalidParameterError(f"X must be 2-D (n_samples, n_feature); got shape {np.shape(X)}")
    if "y should be a 1d array" in msg:
        return InvalidParameterError(f"y must be 1-D (one label per sample); got shape {y.shape}")
    if "sample(s)" in msg:
        return InvalidParameterError(f"X must have at least 4 samples; got {np.shape(X)[0]}")
    if "feature(s)" in msg:
        return InvalidParameterError(f"X must have at least 1 feature; got shape {np.shape(X)}")
    if "Input X contains" in msg:
        if hasattr(X, "tocoo"):  # sparse: its stored values
            coo = X.tocoo()
            bad = ~np.isfinite(coo.data.astype(np.float64))
            r, c = coo.row[bad][0], coo.col[bad][0]
        else:
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
    return InvalidParameterError(f"X, y: {reason_of(exc)}")


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
        As :func:`load_dataset` or :func:`make_microarray` return it (checked: the kept
        rows are not checked again).
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
    if task_of(data.y) == "regression":
        raise InvalidParameterError(param("classes") + " selects classes of class labels; y is a regression target")
    counts = class_counts(data.y)
    chosen = [c.strip() for c in classes.split(",")] if isinstance(classes, str) else [_label_text(c) for c in classes]
    if len(set(chosen)) < 2 or len(set(chosen)) != len(chosen):
        raise InvalidParameterError(
            param("classes")
            + f" must name at least 2 different classes; got {chosen}; the classes are {_listed(counts)}"
        )
    unknown = [c for c in chosen if c not in counts]
    if unknown:
        raise InvalidParameterError(
            param("classes") + f": {', '.join(map(repr, unknown))} not among the classes of the data: {_listed(counts)}"
        )
    keep = np.isin(np.array([_label_text(label) for label in data.y]), chosen)
    if keep.sum() < 4:  # as check_data asks of any data
        raise InvalidParameterError(
            param("classes") + f": {', '.join(map(repr, chosen))} hold {int(keep.sum())} samples; at least 4 are needed"
        )
    # The rows of checked data are checked data (a sparse X's kept canonical): X is not read again.
    X = data.X[keep]
    return data._replace(X=_canonical(X) if hasattr(X, "has_canonical_format") else X, y=data.y[keep])


def load_dataset(
    path: str | os.PathLike,
    *,
    label=None,
    classes=None,
    index_col=None,
    transpose: bool | None = None,
    layer: str | None = None,
    use_raw: bool = False,
    task: str = "auto",
    **options,
) -> Data:
    """Read a dataset from a file in one of the formats of :data:`FORMATS`: ``.mat``
    (scikit-feature), ``.npz``, ``.csv`` or ``.h5ad`` (AnnData), or one registered by
    :func:`register_format`.

    Parameters
    ----------
    path : path
        A data file; its suffix says its format. A ``.h5ad`` file's ``X`` is read into
        memory, a dense one as a float64 array, a sparse one kept sparse (CSC float32;
        refused when it would not fit), its ``var_names`` are the feature names; reading
        it needs the optional ``anndata`` package (``pip install 'ensstab_dask[anndata]'``).
    label : str or int, optional
        CSV and ``.h5ad`` only (refused for ``.mat`` and ``.npz``, whose files hold their
        labels): the label column (for ``.h5ad``, a column of ``obs``), by name or position
        (default: the one column named label, y, class or target). An int that is also a
        column's name is that column (a warning says so where the position is another).
        Categorical and string labels are taken as they are.
    classes : sequence or str, optional
        Keep only the samples of these classes (at least two; :func:`select_classes`),
        whatever the format; default: every class (more than two are used as they are:
        see the module docstring).
    index_col : str, int or False, optional
        CSV only: the column of sample ids (row names), by name or position as pandas'
        ``read_csv(index_col=)`` takes it; it is not a feature. Default: leading columns
        named '' or ``Unnamed: N`` (what ``DataFrame.to_csv()`` writes), or else a first
        column of text, one value per row, or of whole numbers, one per row, under an id's
        name (``id``, ``index``, ``sample_id``); a warning says so. False: no such column.
    transpose : bool, optional
        CSV only: True reads a file of one column per sample (genes as rows), its labels in
        the row that ``label`` names. Default (None): so read, with a warning, when the
        label names a row of the first column and no column; False refuses such a file.
    layer : str, optional
        ``.h5ad`` only: read ``adata.layers[layer]`` instead of ``X``.
    use_raw : bool, default False
        ``.h5ad`` only: read ``adata.raw.X`` and ``adata.raw.var_names`` (not with
        ``layer``, as scanpy).
    task : {'auto', 'classification', 'regression'}
        What the label is (:mod:`ensstab_dask.real.targets`): "auto" reads it from the
        values (a float label with fractions is a regression target, returned as float64);
        "regression" also takes whole numbers. ``classes`` needs class labels.
    **options
        The options of a format registered by :func:`register_format` (its
        :class:`~ensstab_dask.real.formats.Format`'s ``options``); refused for a file of
        another format.

    Returns
    -------
    Data
        ``X, y, feature_names, informative = load_dataset(...)``; names where the file
        has them, else None.

    Raises
    ------
    InvalidParameterError
        A file that is not what its suffix says, or holds what the method cannot use; the
        message names the file and what is wrong, never what the file holds.

    Notes
    -----
    What was made of a file's slips is said in one warning each on the ``ensstab_dask``
    logger: feature names repeated (made unique as scanpy's ``var_names_make_unique``
    does, :func:`make_names_unique`), a CSV's row names read as sample ids, samples that
    repeat an earlier one (counted), an int ``label`` taken as a column's name, a CSV
    read as one column per sample. Every shape problem (a label column of numbers that
    are not classes in a file of more rows than features, a text column among the
    features) is refused with what to pass instead.

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
        raise InvalidParameterError(param("data") + f" file {str(path)!r} is a directory; give a {data_formats()} file")
    if path.exists() and not path.is_file():  # read, a FIFO would wait for a writer forever
        raise InvalidParameterError(
            param("data") + f" file {str(path)!r} is not a regular file (a FIFO, a device or a socket); give a "
            f"{data_formats()} file"
        )
    if not path.is_file():
        raise InvalidParameterError(param("data") + f" file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InvalidParameterError(
            param("data") + f" file {str(path)!r}: unknown format {suffix!r}; use {data_formats()}"
        )
    given = dict(index_col=index_col, transpose=transpose, layer=layer, use_raw=bool(use_raw), **options)
    read = read_options(path, FORMATS[suffix], given, label=label, task=task)
    data = FORMATS[suffix].read(path, read)
    X, y = check_data(data.X, data.y, task=task, source=str(path))
    names = data.feature_names
    if names is not None and np.shape(names) != (X.shape[1],):  # else refused only once the work is done
        raise InvalidParameterError(
            f"{path}: feature_names must hold one name per feature of X ({X.shape[1]}); got shape {np.shape(names)}"
        )
    data = Data(X, y, _unique_names(path, names))
    say_repeated_samples(path, X, y)
    return data if classes is None else select_classes(data, classes)


def make_names_unique(names) -> np.ndarray:
    """``names`` with each repeat of a name made unique as scanpy's (anndata's)
    ``var_names_make_unique`` does: the first stays, the next are ``NAME-1``, ``NAME-2``, ...,
    skipping any that the names hold already.

    Examples
    --------
    >>> make_names_unique(["f0", "f0", "f1", "f0"]).tolist()
    ['f0', 'f0-1', 'f1', 'f0-2']
    """
    names = [str(n) for n in names]
    taken, seen, out = set(names), set(), []
    counter: dict[str, int] = {}
    for name in names:
        if name not in seen:
            seen.add(name)
            out.append(name)
            continue
        while True:
            counter[name] = counter.get(name, 0) + 1
            tentative = f"{name}-{counter[name]}"
            if tentative not in taken:
                break
        taken.add(tentative)
        out.append(tentative)
    return np.asarray(out, dtype=str)


def _unique_names(path: Path, names: np.ndarray | None) -> np.ndarray | None:
    """The feature names, repeats made unique (:func:`make_names_unique`) and said in one
    warning: a feature table would hold two rows of one name, and no one could tell which."""
    if names is None:
        return None
    values, counts = np.unique(np.asarray(names, dtype=str), return_counts=True)
    if counts.max(initial=1) <= 1:
        return names
    repeated = [(v, n) for v, n in zip(values, counts) if n > 1]
    repeated.sort(key=lambda vn: -vn[1])
    shown = ", ".join(f"{shown_name(v)} x{n}" for v, n in repeated[:3]) + (", ..." if len(repeated) > 3 else "")
    unique = make_names_unique(names)
    first = repeated[0][0]
    example = ", ".join(shown_name(u) for u, n in zip(unique, names) if n == first)
    logger.warning(
        "%s: %d feature name(s) repeat (%s): made unique as scanpy's var_names_make_unique does (%s)",
        path,
        len(repeated),
        shown,
        example if len(example) <= 80 else example[:79] + "\u2026",
    )
    return unique


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


def discretize(data: Data, *, width: float = 0.5) -> Data:
    """``data`` with each feature cut into three levels, as scikit-feature's discretized
    expression sets are made: -2 below ``-width`` standard deviations of the feature's mean,
    2 above ``+width``, 0 between (a constant feature is all 0).

    At the default 0.5 about 40 % of the values are 0, as in Colon and Lymphoma. Many
    features then share their values, and a selector's scores tie often.

    Examples
    --------
    >>> from ensstab_dask.real.datasets import discretize, make_microarray
    >>> levels = discretize(make_microarray(n_feature=50, seed=0)).X
    >>> sorted(set(levels.ravel().tolist()))
    [-2.0, 0.0, 2.0]
    """
    width = check_real(width, "width", minimum=0.0)
    X = np.asarray(data.X, dtype=np.float64)
    sd = X.std(axis=0)
    z = np.divide(X - X.mean(axis=0), sd, out=np.zeros_like(X), where=sd > 0)
    levels = np.where(z > width, 2.0, np.where(z < -width, -2.0, 0.0))
    return data._replace(X=levels)


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
