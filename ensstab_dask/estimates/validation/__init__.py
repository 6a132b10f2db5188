"""The estimate against a naive check: the harness (:mod:`~ensstab_dask.estimates.validation.harness`),
the comparison per ensemble size (:mod:`~ensstab_dask.estimates.validation.comparison`)
and the naive check's settings (:mod:`~ensstab_dask.estimates.validation.naive_settings`)."""
