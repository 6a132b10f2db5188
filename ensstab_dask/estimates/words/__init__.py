"""The estimate in words, built from its records: the summary and the plain answer
(:mod:`~ensstab_dask.estimates.words.summary`), the stable features
(:mod:`~ensstab_dask.estimates.words.features`) and the guard rails' reasons, the one place
``reliable`` is decided (:mod:`~ensstab_dask.estimates.words.trust`). A setting they name
is a :func:`~ensstab_dask.wording.param`, spelled as the reader names it."""
