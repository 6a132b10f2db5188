"""The paper's simulated weak selector and what is estimated with it.

* :mod:`~ensstab_dask.simulator.kernel`: the exact simulator kernel (one weak selector's
  rankings, ensembles of them, their stability; the paper's model and the two-level one).
* :mod:`~ensstab_dask.simulator.estimators`: the paper's estimators on real runs
  (t_uniform, n_useful = A[f], p, h).
* :mod:`~ensstab_dask.simulator.fixed_point`: the fixed-point check and iteration.
* :mod:`~ensstab_dask.simulator.calibration`: calibration surfaces of a sweep
  (``ds.ensstab.calibrate``).
"""
