"""The ``ds.ensstab`` accessor, registered as soon as xarray is imported.

The accessor is an xarray class (:class:`~ensstab_dask.simulator.calibration.EnsstabAccessor`),
so registering it imports xarray; ``import ensstab_dask`` must not (``ensstab --help``
answers before any heavy import). :func:`register_when_xarray_loads` registers it at once
where xarray is already imported, else right after xarray's own import completes, by a
one-shot import hook that removes itself: ``import ensstab_dask`` then
``xr.open_dataset(...).ensstab`` works as it did when the package imported everything.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

__all__ = ["register_when_xarray_loads"]

_ACCESSOR_MODULE = "ensstab_dask.simulator.calibration"


def register_when_xarray_loads() -> None:
    """Register the accessor now if xarray is imported, else when it is."""
    if "xarray" in sys.modules:
        importlib.import_module(_ACCESSOR_MODULE)
    elif not any(isinstance(f, _AfterXarray) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterXarray())


class _AfterXarray(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for ``xarray``, the spec the other finders give, whose loader
    imports the accessor's module once xarray has run; then it leaves ``sys.meta_path``."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "xarray":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _ThenRegister(spec.loader)
        return spec


class _ThenRegister(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        importlib.import_module(_ACCESSOR_MODULE)
