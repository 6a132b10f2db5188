"""Pictures of every result (:mod:`~ensstab_dask.plotting.figures`; which features and the
stability over n_target, :mod:`~ensstab_dask.plotting.features`) and the HTML report that
gathers them with their words (:mod:`~ensstab_dask.plotting.report`).

matplotlib is imported when a picture is drawn, not with this package.
"""

from ensstab_dask.plotting.features import plot_feature_frequencies, plot_stability_surface
from ensstab_dask.plotting.figures import (
    cost_table,
    plot_calibration,
    plot_cost,
    plot_fixed_point,
    plot_selection_counts,
    plot_stability_curve,
    plot_surface,
    result_kind,
    total_seconds,
)
from ensstab_dask.plotting.report import write_report

__all__ = [
    "cost_table",
    "plot_calibration",
    "plot_cost",
    "plot_feature_frequencies",
    "plot_fixed_point",
    "plot_selection_counts",
    "plot_stability_curve",
    "plot_stability_surface",
    "plot_surface",
    "result_kind",
    "total_seconds",
    "write_report",
]
