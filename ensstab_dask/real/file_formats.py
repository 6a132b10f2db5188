"""The table of data formats (:data:`FORMATS`): each format's
:class:`~ensstab_dask.real.formats.Format`, by file suffix, which
:func:`~ensstab_dask.real.datasets.load_dataset` dispatches on. Registering a format
hands its suffix to :mod:`ensstab_dask.outputs`, so that no output ever replaces a file
of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.outputs import protect_suffix, unprotect_suffix
from ensstab_dask.real.csv_files import CSV
from ensstab_dask.real.formats import H5AD, MAT, NPZ, Data, Format, ReadOptions
from ensstab_dask.wording import subject

__all__ = ["FORMATS", "LOADERS", "Loader", "register_format", "unregister_format", "data_formats", "read_options"]


#: Reads one data format: ``loader(path, options)``, ``options`` the
#: :class:`~ensstab_dask.real.formats.ReadOptions` that :func:`load_dataset` takes (the
#: label column, ...; a format refuses those that are not its own), returning the file's
#: ``Data`` unchecked (:func:`load_dataset` checks it).
Loader = Callable[[Path, ReadOptions], Data]

#: The data formats :func:`load_dataset` reads, by lower-case file suffix: the shipped
#: ones, all in this one table (their suffixes are the outputs' own protected ones,
#: :data:`~ensstab_dask.outputs.SHIPPED_DATA_SUFFIXES`); :func:`register_format` adds another.
FORMATS: dict[str, Format] = {fmt.suffix: fmt for fmt in (MAT, NPZ, CSV, H5AD)}


def register_format(fmt: Format) -> None:
    """Read files of ``fmt.suffix`` with ``fmt.read`` from now on: :func:`load_dataset`, the
    command line's ``--data`` and every message that lists the formats take it, and no
    output ever replaces such a file (:data:`~ensstab_dask.outputs.DATA_SUFFIXES`)."""
    if not (fmt.suffix.startswith(".") and fmt.suffix == fmt.suffix.lower() and len(fmt.suffix) > 1):
        raise InvalidParameterError(
            f"suffix must be a lower-case file suffix with its dot, like '.csv'; got {fmt.suffix!r}"
        )
    FORMATS[fmt.suffix] = fmt
    protect_suffix(fmt.suffix)


def unregister_format(suffix: str) -> None:
    """Forget the format of ``suffix`` (one :func:`register_format` added)."""
    del FORMATS[suffix]
    unprotect_suffix(suffix)


class _Readers(Mapping):
    """The reader of each registered format, by suffix: a live view of :data:`FORMATS`."""

    def __getitem__(self, suffix: str) -> Loader:
        return FORMATS[suffix].read

    def __iter__(self):
        return iter(FORMATS)

    def __len__(self) -> int:
        return len(FORMATS)


#: The reader of each format of :data:`FORMATS`, by suffix (a read-only live view).
LOADERS: Mapping[str, Loader] = _Readers()


def read_options(path: Path, fmt: Format, given: dict, *, label, task: str) -> ReadOptions:
    """The options ``fmt``'s reader gets; one given (not its default) that the format does
    not take is refused (it would be dropped unread), and one no format takes is refused
    as Python refuses an unknown keyword."""
    declared = {name: (f, default) for f in FORMATS.values() for name, default in f.options.items()}
    defaults = {**{n: d for n, (_, d) in declared.items()}, **ReadOptions._field_defaults}
    for name, value in given.items():
        if name not in defaults:
            raise TypeError(f"load_dataset() got an unexpected keyword argument {name!r}")
        if name not in fmt.options and value != defaults[name]:
            formats = " and ".join(f.suffix for f in FORMATS.values() if name in f.options)
            raise InvalidParameterError(subject(name) + f" is for {formats} files; {path} is not one: leave it out")
    built_in = {n: v for n, v in given.items() if n in ReadOptions._fields}
    more = {n: given.get(n, d) for n, d in fmt.options.items() if n not in ReadOptions._fields}
    return ReadOptions(label=label, task=task, **built_in, more=MappingProxyType(more))


def data_formats() -> str:
    """The suffixes of :data:`FORMATS` as a message lists them: ``.mat, .npz, .csv or .h5ad``."""
    suffixes = list(FORMATS)
    return suffixes[0] if len(suffixes) == 1 else f"{', '.join(suffixes[:-1])} or {suffixes[-1]}"
