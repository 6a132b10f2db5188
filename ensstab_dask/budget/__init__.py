"""What a call will cost, checked before any work: the real runs of the selector, the
simulated selectors and the memory of one cell. The estimate, the naive check,
validation, sweeps and the CLI price themselves here, so each rule is written once.

* :mod:`~ensstab_dask.budget.cost`: real runs and simulated selectors counted, timed at
  a measured rate, and refused above a threshold unless allowed.
* :mod:`~ensstab_dask.budget.memory`: the memory of one cell of simulated ensembles,
  refused above half this machine's.
"""
