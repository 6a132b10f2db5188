"""The estimate's stages, each returning what it computed: the orchestration
(:mod:`~ensstab_dask.estimates.stages.pipeline`), the real runs
(:mod:`~ensstab_dask.estimates.stages.real_runs`), the single selector's statistics
(:mod:`~ensstab_dask.estimates.stages.single`), the model's curve and self-check
(:mod:`~ensstab_dask.estimates.stages.prediction`), every stage after the real runs in
order (:mod:`~ensstab_dask.estimates.stages.assemble`), the rounds of real runs
(:mod:`~ensstab_dask.estimates.stages.rounds`), the curve over n_target
(:mod:`~ensstab_dask.estimates.stages.surface`), which features real ensembles keep
(:mod:`~ensstab_dask.estimates.stages.features`) and an estimate per group
(:mod:`~ensstab_dask.estimates.stages.groups`)."""
