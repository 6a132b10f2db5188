"""The estimate's details in words: what the summary leaves out to give one answer per question.

The summary (:func:`~ensstab_dask.estimates.summary.estimate_summary`) says one number for
one selector's stability; :func:`estimate_details` gives every measure of it the estimate
has, each with where it came from and its interval: the curve's value at ``m_ensemble = 1``,
the real runs' own stability of one selector, and the same runs by Nogueira's index. The
JSON and the Dataset hold them all whichever the words say.
"""

from __future__ import annotations

from ensstab_dask.estimates.summary import EstimateFields, _line, interval_text
from ensstab_dask.models import get_model

__all__ = ["estimate_details"]


def estimate_details(self: EstimateFields) -> str:
    """Every measure of one selector's stability the estimate has, one per line."""
    one, s, index = self.single, self.settings, self.settings["index"]
    nog = one.real_nogueira
    lines = [f"Details: one selector's stability, every measure of it ({index} index unless named)"]
    m_list = [int(v) for v in self.curve["m_ensemble"].values]
    if self.has_curve and 1 in m_list:
        at_one = float(self.curve["stability"].values[m_list.index(1)])
        lines.append(
            _line("the curve's m_ensemble = 1", f"{at_one:.4f}", get_model(s.get("model", "onda")).single_selector)
        )
    lines.append(
        _line(
            "stability of one real selector",
            f"{one.real_stability:.4f}",
            f"from {s.get('stability_runs', s['m_stability'])} real runs",
            interval_text(self, "real_stability", ".4f"),
        )
    )
    lines.append(
        _line(
            "the same runs by Nogueira's index",
            f"{nog.stability:.4f}",
            "",
            f"Nogueira's {1 - nog.alpha:.0%} confidence interval [{nog.lower:.4f}, {nog.upper:.4f}]",
        )
    )
    return "\n".join(lines)
