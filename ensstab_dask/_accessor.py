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
    """Register the accessor now if xarray is imported, else when it is; not at all where
    xarray's import is blocked (``sys.modules["xarray"] = None``, the standard way to make
    an import fail): the package imports without it, and what needs xarray says so."""
    if "xarray" in sys.modules:
        if sys.modules["xarray"] is not None:
            importlib.import_module(_ACCESSOR_MODULE)
    elif not any(isinstance(f, _AfterXarray) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterXarray())


class _AfterXarray(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for ``xarray``, the spec the other finders give, whose loader
    imports the accessor's module once xarray has run. It stays in ``sys.meta_path`` (a
    list other threads may be reading) and does nothing once xarray has loaded; an import
    of xarray that fails leaves it waiting for the next."""

    def __init__(self) -> None:
        self.done = False
        self._looking = False

    def find_spec(self, fullname, path, target=None):
        # Python holds xarray's module lock while it looks for it: one thread at a time here.
        if fullname != "xarray" or self.done or self._looking:
            return None
        self._looking = True  # the search below asks every finder, this one too
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._looking = False
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenRegister(spec.loader, self)
        return spec


class _ThenRegister(importlib.abc.Loader):
    """xarray's own loader, then the accessor; xarray's module keeps its own loader (its
    resources, its source), and whatever else that loader offers is offered here too."""

    def __init__(self, loader: importlib.abc.Loader, finder: _AfterXarray) -> None:
        self.loader, self.finder = loader, finder

    def __getattr__(self, name: str):
        return getattr(self.loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.finder.done = True
        importlib.import_module(_ACCESSOR_MODULE)
