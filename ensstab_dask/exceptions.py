"""The package's warnings and errors, as scikit-learn has ``ConvergenceWarning``.

Warnings subclass :class:`EnsstabWarning`, so that code (and the CLI) can filter the
package's own warnings without hiding NumPy's or anyone else's:

>>> import warnings
>>> from ensstab_dask.exceptions import UnreliableEstimateWarning
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", UnreliableEstimateWarning)  # not RuntimeWarning

Errors that are the user's to fix (a bad parameter, bad data, an unreachable scheduler,
a damaged or foreign store) subclass :class:`EnsstabError` and the built-in class a
caller would expect (``ValueError``, ``ConnectionError``, ...). The CLI prints exactly
these as one line and exits with status 2; anything else is a bug, and keeps its
traceback.
"""

from __future__ import annotations

__all__ = [
    "EnsstabWarning",
    "UnreliableEstimateWarning",
    "EnsstabError",
    "InvalidParameterError",
    "SchedulerUnreachable",
    "SchedulerLost",
    "StoreMismatch",
    "StoreDamaged",
    "StoreLocked",
    "OutputNotWritten",
]


class EnsstabWarning(UserWarning):
    """Base class of the package's warnings.

    Examples
    --------
    >>> issubclass(UnreliableEstimateWarning, EnsstabWarning), issubclass(EnsstabWarning, RuntimeWarning)
    (True, False)
    """


class UnreliableEstimateWarning(EnsstabWarning):
    """An estimate's guard rail or self-check fired: ``Estimate.reliable`` is False and
    ``Estimate.warnings`` says why (one warning per reason).

    Examples
    --------
    Pure noise: the method has nothing to say, and says so.

    >>> import warnings
    >>> import numpy as np
    >>> import ensstab_dask as es
    >>> from ensstab_dask.real.selectors import default_selector
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.standard_normal((40, 100)), np.repeat([0, 1], 20)
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always", UnreliableEstimateWarning)
    ...     est = es.estimate(X, y, 5, selector=default_selector(5), m_ensemble=(1, 3), m_stability=4, n_runs=8,
    ...                       repeats=2, n_boot=0, client="synchronous", progress=False, model="onda")
    >>> est.reliable, all(issubclass(w.category, UnreliableEstimateWarning) for w in seen), len(seen) > 0
    (False, True, True)
    """


class EnsstabError(Exception):
    """Base class of the errors that are the user's to fix (see the module docstring).

    Examples
    --------
    >>> import ensstab_dask as es
    >>> try:
    ...     es.simulated_stability(100, 5, 20, 1.5)
    ... except EnsstabError as exc:
    ...     print(type(exc).__name__, "-", exc)
    InvalidParameterError - p must be in [0.0, 1.0]; got 1.5
    """


class InvalidParameterError(EnsstabError, ValueError, TypeError):
    """A parameter or the data is not what the function accepts; the message names the
    parameter and what is allowed. A ``ValueError`` and a ``TypeError`` (as
    scikit-learn's ``InvalidParameterError``), so that either ``except`` catches it.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> try:
    ...     es.simulated_stability(100, 5, 20, 0.5, m_stability=1)
    ... except ValueError as exc:
    ...     print(exc)
    m_stability must be >= 2; got 1
    """


class SchedulerUnreachable(EnsstabError, ConnectionError):
    """The Dask scheduler at the given address could not be reached in time.

    Examples
    --------
    >>> from ensstab_dask.cluster import connect
    >>> try:
    ...     with connect("tcp://127.0.0.1:9", timeout=1):
    ...         pass
    ... except SchedulerUnreachable:
    ...     print("unreachable")
    unreachable
    """


class SchedulerLost(EnsstabError, ConnectionError):
    """The connection to the Dask scheduler broke while work was running.

    Examples
    --------
    A ``ConnectionError``, so code that handles lost connections handles it too:

    >>> issubclass(SchedulerLost, ConnectionError)
    True
    """


class WorkersLost(SchedulerLost):
    """Every worker of the Dask cluster left, or stopped answering, while work was running,
    and none joined or answered again in time (``cluster.tasks.WORKERLESS_ENDS_AFTER``).
    A ``SchedulerLost``: the work ends the same way, and a sweep's store resumes.

    Examples
    --------
    >>> issubclass(WorkersLost, SchedulerLost)
    True
    """


class StoreMismatch(EnsstabError, ValueError):
    """The store was made with other settings than those requested.

    Raised by :func:`~ensstab_dask.sweep` (a ``ValueError``) when ``store`` holds a sweep
    with other settings; the store is left untouched.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import ensstab_dask as es
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = Path(tmp.name) / "sweep.zarr"
    >>> grid = dict(n_useful=[10], p=[0.5], m_ensemble=[1], repeats=2, store=store, client="synchronous",
    ...             progress=False)
    >>> _ = es.sweep(200, 5, m_stability=5, **grid)
    >>> try:
    ...     es.sweep(200, 5, m_stability=6, **grid)
    ... except es.StoreMismatch as exc:
    ...     print("refused:", "m_stability" in str(exc))
    refused: True
    >>> tmp.cleanup()
    """


class StoreDamaged(EnsstabError, ValueError):
    """The store's data or metadata cannot be trusted; the cause, when there is one, is
    chained (``__cause__``).

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> import ensstab_dask as es
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = Path(tmp.name) / "s.zarr"
    >>> _ = es.sweep(200, 5, n_useful=[10], p=[0.5], m_ensemble=[1], m_stability=5, repeats=2, store=store,
    ...              client="synchronous", progress=False)
    >>> meta = store / "zarr.json"
    >>> record = json.loads(meta.read_text())
    >>> record["attributes"]["ensstab_settings"] = "{not json"
    >>> _ = meta.write_text(json.dumps(record))
    >>> try:
    ...     es.export_netcdf(store, Path(tmp.name) / "s.nc")
    ... except StoreDamaged as exc:
    ...     print("damaged:", isinstance(exc.__cause__, ValueError))
    damaged: True
    >>> tmp.cleanup()
    """


class StoreLocked(EnsstabError, OSError):
    """Another process is writing the store."""


class OutputNotWritten(EnsstabError, OSError):
    """An output file could not be written (a full disk, say); nothing was left half-written."""
