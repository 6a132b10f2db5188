"""What an estimate holds, as records a reader names: the
:class:`~ensstab_dask.estimates.records.estimate.Estimate` with its JSON and Dataset
(:mod:`~ensstab_dask.estimates.records.estimate`), its parts
(:mod:`~ensstab_dask.estimates.records.parts`) and what it spent
(:mod:`~ensstab_dask.estimates.records.spending`). Records compute nothing of the
estimate; their words are :mod:`~ensstab_dask.estimates.words`'."""
