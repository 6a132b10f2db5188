"""Pictures of every result, by what they show, and the HTML report that gathers them
with their words (:mod:`~ensstab_dask.plotting.report`):

* :mod:`~ensstab_dask.plotting.curve`: the answer, stability against the ensemble's size;
* :mod:`~ensstab_dask.plotting.fit`: how the simulator is fitted to the real selector
  (selection counts, calibration and sweep surfaces over (n_useful, p), the fixed point);
* :mod:`~ensstab_dask.plotting.features`: which features real ensembles keep, their
  stability path, and the stability over n_target;
* :mod:`~ensstab_dask.plotting.cost`: the estimate's wall time against the naive check's;
* :mod:`~ensstab_dask.plotting.common`: what they share (the results they accept, colours, ticks).

matplotlib is imported when a picture is drawn, not with this package.
"""

from ensstab_dask.plotting.common import result_kind
from ensstab_dask.plotting.cost import cost_table, plot_cost, total_seconds
from ensstab_dask.plotting.curve import plot_stability_curve
from ensstab_dask.plotting.features import plot_feature_frequencies, plot_stability_path, plot_stability_surface
from ensstab_dask.plotting.fit import plot_calibration, plot_fixed_point, plot_selection_counts, plot_surface
from ensstab_dask.plotting.report import write_report

__all__ = [
    "cost_table",
    "plot_calibration",
    "plot_cost",
    "plot_feature_frequencies",
    "plot_fixed_point",
    "plot_selection_counts",
    "plot_stability_curve",
    "plot_stability_path",
    "plot_stability_surface",
    "plot_surface",
    "result_kind",
    "total_seconds",
    "write_report",
]
