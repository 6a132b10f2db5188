"""``import ensstab_dask.accessor`` registers the ``ds.ensstab`` accessor on xarray Datasets.

A plain import that users name, as ``import hvplot.xarray`` and ``import cf_xarray``
register theirs; ``import ensstab_dask`` alone registers nothing (and imports no xarray):

>>> import ensstab_dask.accessor  # noqa: F401
>>> import xarray as xr
>>> hasattr(xr.Dataset(), "ensstab")
True

``ds.ensstab.calibrate`` and ``ds.ensstab.best`` are
:class:`~ensstab_dask.simulator.calibration.EnsstabAccessor`'s.
"""

import xarray as xr

from ensstab_dask.simulator.calibration import EnsstabAccessor

__all__ = ["EnsstabAccessor"]

xr.register_dataset_accessor("ensstab")(EnsstabAccessor)
