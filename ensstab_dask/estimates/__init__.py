"""The estimate: what a user asks for, from real runs to words.

* :mod:`~ensstab_dask.estimates.pipeline`: :func:`ensstab_dask.estimate`, the orchestration:
  the real runs, every stage after them, the rounds of a precision
  (:mod:`~ensstab_dask.estimates.rounds`) and the curve at several n_target
  (:mod:`~ensstab_dask.estimates.surface`).
* The stages, each returning what it computed: the real runs
  (:mod:`~ensstab_dask.estimates.real_runs`), the single selector's statistics
  (:mod:`~ensstab_dask.estimates.single`), the model's curve and self-check
  (:mod:`~ensstab_dask.estimates.prediction`) and the result
  (:mod:`~ensstab_dask.estimates.assemble`, which also runs the stages after the real
  runs, in order).
* :mod:`~ensstab_dask.estimates.features`: which features real ensembles keep, on the
  model's copies.
* :mod:`~ensstab_dask.estimates.trust`: the guard rails, the one place ``reliable`` is
  decided.
* :mod:`~ensstab_dask.estimates.result`: the :class:`~ensstab_dask.Estimate`, its Dataset
  and JSON, made of the records of :mod:`~ensstab_dask.estimates.records`.
* :mod:`~ensstab_dask.estimates.summary`: its words.
* :mod:`~ensstab_dask.estimates.validation`: the harness that compares estimates with
  naive checks.
"""
