"""The estimate: what a user asks for, from real runs to words, in five rooms.

* :mod:`~ensstab_dask.estimates.stages`: the computation, stage by stage, and its
  orchestration (:func:`ensstab_dask.estimate` is
  :func:`~ensstab_dask.estimates.stages.pipeline.estimate`).
* :mod:`~ensstab_dask.estimates.records`: what it holds, the
  :class:`~ensstab_dask.Estimate` and its parts, with their JSON and Dataset.
* :mod:`~ensstab_dask.estimates.words`: what it says, built from the records.
* :mod:`~ensstab_dask.estimates.validation`: the estimate against a naive check.
* :mod:`~ensstab_dask.estimates.interop`: the estimate as a scikit-learn selector and in an AnnData.
"""
