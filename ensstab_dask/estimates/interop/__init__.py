"""The estimate in other libraries' shapes: a scikit-learn feature selector
(:mod:`~ensstab_dask.estimates.interop.stable_selector`) and an AnnData's ``var`` and
``uns`` where scanpy users look (:mod:`~ensstab_dask.estimates.interop.to_anndata`)."""
