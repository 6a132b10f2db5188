"""The CSV reader: one row per sample, a header, the label column chosen by ``label=``,
or one column per sample (``transpose``); the columns of sample ids found wherever they are
(:func:`_index_columns`), a label column named twice refused.

What :func:`load_csv` returns is unchecked, as every reader of
:mod:`~ensstab_dask.real.formats` returns it; :func:`~ensstab_dask.real.datasets.load_dataset`
checks it.
"""

from __future__ import annotations

import io
import itertools
import re
from pathlib import Path

import numpy as np

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.formats import (
    UNREADABLE,
    Data,
    Format,
    ReadOptions,
    label_column,
    logger,
    reason_of,
    say_repeated_ids,
    shown_name,
)
from ensstab_dask.wording import Code, param, words

# pandas is imported where it is used (import time).

__all__ = ["load_csv", "CSV"]


#: The names pandas' ``DataFrame.to_csv()`` and R's ``write.csv`` give the row names'
#: column ('' ), and the name pandas reads such a column as (``Unnamed: 0``).
_INDEX_NAME = re.compile(r"(Unnamed: \d+)?")

#: Names of a column of sample ids or row numbers (``id``, ``index``, ``sample``,
#: ``sample_id``, ``cell_barcode``, ``patient``, ``subject``...), in any case; ``ids`` in
#: lower case only (``IDS`` is a gene); and a name that ends in ``ID`` or ``Id`` after a
#: lower-case letter (``SampleID``, ``PatientID``, ``sampleId``): such a first column of
#: whole numbers, one per row, is the index that ``to_csv()`` wrote, not a feature.
_ID_NAME = re.compile(
    r"(?i:id|index|idx|row|rownames?|obs|names?|samples?|cells?|barcodes?|patients?|subjects?|donors?|"
    r"individuals?|.*[_ .-](id|name|barcode))|ids|.*[a-z](ID|Id)"
)

#: The label column's names found without ``label=``.
_LABEL_NAMES = ("label", "y", "class", "target")


def _csv_header(path: Path, frame) -> list[str]:
    """The header as written: pandas renames a repeated ``f0`` to ``f0.1`` and an empty name
    to ``Unnamed: 0``, which would hide a repeated label or feature and the row names."""
    import pandas as pd

    try:
        row = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False)
    except UNREADABLE:  # read whole a moment ago: keep pandas' names
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
    except UNREADABLE as exc:  # pandas' parser errors are ValueErrors
        raise InvalidParameterError(f"{path}: not a readable CSV file ({reason_of(exc)})") from exc
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


def load_csv(path: Path, options: ReadOptions) -> Data:
    """One row per sample, a header, and the label column :func:`~ensstab_dask.real.formats.label_column` finds; or,
    with ``transpose``, one column per sample and a row of labels.

    The column of sample ids (``index_col``, or else detected by :func:`_index_columns`) is
    not a feature. Without ``transpose`` (None), a label that names a row and no column
    means one column per sample: the file is read so, and a warning says it; with
    ``transpose=False`` such a file is refused. A label column named twice is refused.
    """
    transposed = bool(options.transpose)
    frame, header = _read_csv(path, transposed=transposed)
    row = None if options.transpose else _label_row(frame, header, options.label)
    if row is not None:
        if options.transpose is False:
            raise InvalidParameterError(
                f"{path}: {shown_name(row)} is a row name, not a column: the file holds one column per sample; "
                "read it with " + param("transpose", True)
            )
        logger.warning(
            f"{path}: read as one column per sample (each row a feature), because the label {shown_name(row)} is a "
            "row name and no column; pass " + param("transpose", False) + " to refuse such a file"
        )
        transposed = True
        frame, header = _read_csv(path, transposed=True)
    return _csv_data(path, frame, header, options, transposed=transposed)


def _csv_data(path: Path, frame, header: list[str], options: ReadOptions, *, transposed: bool) -> Data:
    """The ``Data`` of a CSV table read as one row per sample."""
    import pandas as pd

    listing = f"columns start [{', '.join(shown_name(c) for c in header[:5])}]"
    if not transposed:
        listing += words(" (a file of one column per sample: name its label row, with ", param("transpose", True), ")")
    label = options.label
    pandas_names = [str(c) for c in frame.columns]
    if isinstance(label, str) and label not in header and label in pandas_names:
        at = pandas_names.index(label)  # the name pandas gives it: "Unnamed: 0", "f0.1"
    else:
        at = label_column(path, header, label, listing=listing)
    twice = [i for i, name in enumerate(header) if name == header[at]]
    if len(twice) > 1:
        raise InvalidParameterError(
            f"{path}: the label column {shown_name(header[at])} appears {len(twice)} times in the header (columns "
            f"{', '.join(map(str, twice[:-1]))} and {twice[-1]}): all but one would be read as features; remove or "
            "rename the others"
        )
    y = frame.iloc[:, at].to_numpy()
    classes = _treats_as_classes(y, options.task)
    index = _index_columns(path, frame, header, at, options.index_col, quiet=transposed, y=y, classes=classes)
    keep = [i for i in range(len(header)) if i != at and i not in index]
    if not keep:
        raise InvalidParameterError(f"{path}: no feature columns besides the label and the row names")
    names = [header[i] or str(frame.columns[i]) for i in keep]  # an empty name: pandas' "Unnamed: N"
    non_numeric = [names[j] for j, c in enumerate(keep) if not pd.api.types.is_numeric_dtype(frame.iloc[:, c])]
    if non_numeric:
        shown = ", ".join(shown_name(c) for c in non_numeric[:3])
        raise InvalidParameterError(
            f"{path}: feature columns must be numeric; {len(non_numeric)} of {len(keep)} are not, the first [{shown}]: "
            "leave them out of the file, or name a column of sample ids with " + param("index_col", Code("NAME"))
        )
    if not transposed and options.task != "regression":
        _refuse_a_feature_as_label(path, y, header[at], len(keep))
    X = frame.iloc[:, keep].to_numpy(dtype=np.float64)
    if not transposed and options.index_col is not False:
        _say_label_leaks(path, X, y, [_where(i, header) for i in keep], classes=classes)
    return Data(X, y, np.asarray(names, dtype=str))


def _say_label_leaks(path: Path, X: np.ndarray, y: np.ndarray, where: list[str], *, classes: bool) -> None:
    """One warning per feature column that looks like sample ids or the file's row order and
    alone gives the label away (:func:`_gives_the_label_away`): whole numbers, one per row,
    or values monotone in row order. A measurement that is either rarely separates the
    classes alone; a numbering of rows sorted by class always does, and would be among the
    most stable features. A continuous measurement that separates the classes (a strong
    marker) is neither, and is not named."""
    if len(X) < 4 or (y.dtype.kind == "f" and not np.isfinite(y).all()):
        return  # check_data refuses a label with NaN, naming it
    finite = np.isfinite(X).all(axis=0)
    whole = finite & (np.mod(np.where(np.isfinite(X), X, 0), 1) == 0).all(axis=0)
    unique = (np.diff(np.sort(X, axis=0), axis=0) != 0).all(axis=0)
    steps = np.diff(X, axis=0)
    monotone = finite & ((steps >= 0).all(axis=0) | (steps <= 0).all(axis=0)) & (steps != 0).any(axis=0)
    for j in np.flatnonzero((whole & unique) | monotone):
        leak = _gives_the_label_away(X[:, j], y, classes)
        if leak is None:
            continue
        kind = "values monotone in row order" if monotone[j] else "whole numbers, one per row"
        logger.warning(
            words(
                f"{path}: {where[j]} is read as a feature, and holds {kind}; {leak}: sample ids, or a row order that "
                "follows the label? name it with ",
                param("index_col", Code("NAME")),
                " to leave it out, or pass ",
                param("index_col", False),
                " to read every column as a feature",
            )
        )


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
        f"{path}: index_col {column!r} is missing; columns start [{', '.join(shown_name(c) for c in header[:5])}]"
    )


def _named_like_ids(name: str) -> bool:
    """Whether a column's name reads as sample ids or row names (:data:`_ID_NAME`, :data:`_INDEX_NAME`)."""
    return bool(_ID_NAME.fullmatch(name) or _INDEX_NAME.fullmatch(name))


def _looks_like_ids(column, name: str, *, first: bool) -> str | None:
    """Why a column holds sample ids rather than a feature, or None. Its values must be one
    per row; then text in the ``first`` column or under an id's name (:func:`_named_like_ids`),
    whole numbers under an id's name, or whole numbers that make a run (``k, k+1, ...`` in
    any order, from 10 rows: what a numbering is, and no measurement of 10 samples is)."""
    import pandas as pd

    values = column.to_numpy()
    if column.isna().any() or len(set(values.tolist())) != len(values):
        return None
    named = _named_like_ids(name)
    if not pd.api.types.is_numeric_dtype(column):
        if not (first or named):
            return None
        # A feature with a typo ("1.2", "n/a", "3.4") is text too: ids are mostly not numbers.
        numbers = pd.to_numeric(column, errors="coerce").notna().mean()
        return "its values are text, one per row" if numbers < 0.5 else None
    numbers = values.astype(np.float64)
    if not np.all(np.mod(numbers, 1) == 0):
        return None
    if named:
        return "its values are whole numbers, one per row, under a name of sample ids"
    steps = np.unique(np.diff(np.sort(numbers)))
    if len(numbers) >= 10 and len(steps) == 1:
        step = "" if steps[0] == 1 else f" in steps of {steps[0]:g}"
        return (
            f"its values are the whole numbers {numbers.min():.0f} to {numbers.max():.0f}{step}, one per row: "
            "a numbering"
        )
    return None


def _treats_as_classes(y: np.ndarray, task: str) -> bool:
    """Whether the label is read as classes (as :func:`~ensstab_dask.real.targets.check_target`
    will read it): a float label with fractions is a target unless told otherwise."""
    if task != "auto":
        return task == "classification"
    return not (y.dtype.kind == "f" and np.any(np.mod(y[np.isfinite(y)], 1) != 0))


def _gives_the_label_away(x: np.ndarray, y: np.ndarray, classes: bool) -> str | None:
    """How a numeric column alone gives the label away, or None: it separates the classes
    perfectly (each class's values in an interval of its own), or orders a target almost
    exactly (Spearman's |rho| of at least 0.99)."""
    from scipy.stats import spearmanr

    ok = np.isfinite(x)
    if ok.sum() < 4:
        return None
    if classes:
        labels = y[ok].astype(str)
        kinds = np.unique(labels)
        if len(kinds) < 2:
            return None
        spans = sorted((x[ok][labels == k].min(), x[ok][labels == k].max()) for k in kinds)
        apart = all(high < low for (_, high), (low, _) in zip(spans, spans[1:]))
        return "it alone separates the classes perfectly" if apart else None
    target = y[ok].astype(np.float64)
    rho = spearmanr(x[ok], target).statistic
    return f"it alone orders the target almost exactly (Spearman's rho {rho:+.3f})" if abs(rho) >= 0.99 else None


def _where(i: int, header: list[str]) -> str:
    """A column's place and name, as the messages say it."""
    place = "the first column" if i == 0 else "the last column" if i == len(header) - 1 else f"column {i + 1}"
    return f"{place}, named {shown_name(header[i])},"


def _index_columns(
    path: Path, frame, header: list[str], at: int, index_col, *, quiet: bool, y: np.ndarray, classes: bool
) -> list[int]:
    """The columns of sample ids: ``index_col`` (False: none), or else leading columns
    named '' or ``Unnamed: N`` (what ``to_csv()`` and R's ``write.csv`` write) and every
    column that :func:`_looks_like_ids`, wherever it is; a warning says what was found,
    unless ``quiet`` (a transposed file: its header row is the sample ids, as expected, and
    only its first column may be row names). A column named like ids whose values repeat is
    neither ids nor a feature: refused. Repeated sample ids are said (:func:`say_repeated_ids`),
    and so is a column read as ids that alone gives the label ``y`` away
    (:func:`_gives_the_label_away`): a measurement that looked like a numbering."""
    import pandas as pd

    if index_col is False:
        return []
    if index_col is not None:
        i = _column_position(path, header, frame, index_col)
        if i == at:
            raise InvalidParameterError(f"{path}: index_col {index_col!r} is the label column; name another column")
        say_repeated_ids(path, frame.iloc[:, i].to_numpy())
        return [i]
    index = list(itertools.takewhile(lambda i: _INDEX_NAME.fullmatch(header[i]) and i != at, range(len(header))))
    if quiet:
        first = at != 0 and _looks_like_ids(frame.iloc[:, 0], header[0], first=True)
        return index or ([0] if first else [])
    if index:
        logger.warning(
            "%s: the first column%s, named %s, %s read as sample ids (row names, as DataFrame.to_csv() and R's "
            "write.csv write them), not as features; write the file with index=False to leave them out",
            path,
            "s" if len(index) > 1 else "",
            " and ".join(shown_name(header[i]) for i in index),
            "are" if len(index) > 1 else "is",
        )
        for i in index:
            say_repeated_ids(path, frame.iloc[:, i].to_numpy())
    found = {}
    for i in range(len(index), len(header)):
        column = frame.iloc[:, i]
        if i == at:
            continue
        if why := _looks_like_ids(column, header[i], first=i == 0):
            numeric = pd.api.types.is_numeric_dtype(column)
            leak = _gives_the_label_away(column.to_numpy(dtype=np.float64), y, classes) if numeric else None
            found[i] = why if leak is None else f"{why}; {leak}"
        elif _named_like_ids(header[i]) and not column.isna().all():
            raise InvalidParameterError(
                f"{path}: {_where(i, header)} reads as sample ids, but its values are not one per row: read as a "
                "feature it could carry the samples' grouping into the answer; leave it out of the file, name it with "
                + words(
                    param("index_col", Code("NAME")), " to read it as sample ids, or pass ", param("index_col", False)
                )
                + " to read it as a feature"
            )
    if found:
        which = " and ".join(_where(i, header) for i in found) + (" is" if len(found) == 1 else " are")
        one = len(found) == 1
        logger.warning(
            f"{path}: {which} read as sample ids, not as {'a feature' if one else 'features'} "
            f"({'; '.join(found.values())}); pass "
            + param("index_col", False)
            + f" to read {'it' if one else 'them'} as {'a feature' if one else 'features'}"
        )
    return index + list(found)


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
        f"{path}: the label column {shown_name(name)} holds {what}, not class labels, in more rows ({len(y)}) than "
        f"features ({n_features}): is the file one column per sample? name its label row, with "
        + words(param("transpose", True), " (or, for a continuous target, ", param("task", "regression"), ")")
    )


CSV = Format(".csv", load_csv, {"index_col": None, "transpose": None})
