"""Real data and real selectors.

* :mod:`~ensstab_dask.real.datasets`: loading and checking ``(X, y)``, the embedded default,
  the reference datasets.
* :mod:`~ensstab_dask.real.formats`: the reader of each data format, returning ``Data``
  unchecked.
* :mod:`~ensstab_dask.real.selectors`: one real run of a selector (resample, fit, rank).
* :mod:`~ensstab_dask.real.runs`: many real runs in one submission to the cluster.
* :mod:`~ensstab_dask.real.naive`: the naive check, the stability of real ensembles.
* :mod:`~ensstab_dask.real.accuracy`: leave-one-out prediction accuracy of an ensemble.
"""
