"""The estimate: what a user asks for, from real runs to words.

* :mod:`~ensstab_dask.estimates.pipeline`: :func:`ensstab_dask.estimate`, the shared stages
  then the curve model; the rounds of a precision (:mod:`~ensstab_dask.estimates.rounds`)
  and the curve at several n_target (:mod:`~ensstab_dask.estimates.surface`).
* :mod:`~ensstab_dask.estimates.features`: which features real ensembles keep, on the
  model's copies.
* :mod:`~ensstab_dask.estimates.trust`: the guard rails, the one place ``reliable`` is
  decided.
* :mod:`~ensstab_dask.estimates.result`: the :class:`~ensstab_dask.Estimate`, its Dataset
  and JSON.
* :mod:`~ensstab_dask.estimates.summary`: its words.
* :mod:`~ensstab_dask.estimates.validation`: the harness that compares estimates with
  naive checks.
"""
