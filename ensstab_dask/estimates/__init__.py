"""The estimate: what a user asks for, from real runs to words.

* :mod:`~ensstab_dask.estimates.pipeline`: :func:`ensstab_dask.estimate`, the shared stages
  then the curve model.
* :mod:`~ensstab_dask.estimates.trust`: the guard rails, the one place ``reliable`` is
  decided.
* :mod:`~ensstab_dask.estimates.result`: the :class:`~ensstab_dask.Estimate`, its Dataset
  and JSON.
* :mod:`~ensstab_dask.estimates.summary`: its words.
* :mod:`~ensstab_dask.estimates.validation`: the harness that compares estimates with
  naive checks.
"""
