"""Sweeps of the simulator over a grid, as Dask tasks into xarray and zarr.

* :mod:`~ensstab_dask.sweeps.sweep`: :func:`ensstab_dask.sweep`, the entry point.
* :mod:`~ensstab_dask.sweeps.grid`: the grid, its blocks of cells and their cost.
* :mod:`~ensstab_dask.sweeps.storage`: zarr stores with one writer and checksummed chunks.
* :mod:`~ensstab_dask.sweeps.lock`: a store's single-writer lock.
* :mod:`~ensstab_dask.sweeps.digests`: the chunks' checksums and the cells' keyed digests.

What a sweep will cost is checked in :mod:`ensstab_dask.budget`, as for every call.
"""
