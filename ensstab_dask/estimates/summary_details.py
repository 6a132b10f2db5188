"""The estimate's details in words: what the summary leaves out to give one answer per question.

The summary (:func:`~ensstab_dask.estimates.summary.estimate_summary`) says one number for
one selector's stability; :func:`estimate_details` gives every measure of it the estimate
has, each with where it came from and its interval: that one number
(:func:`~ensstab_dask.estimates.summary.single_selector_stability`, the JSON's
``stability_one_selector``), the paper's measure over the stability runs alone
(``paper_stability``), and the same runs by Nogueira's index.
"""

from __future__ import annotations

from ensstab_dask.estimates.records import EstimateFields
from ensstab_dask.estimates.summary import interval_text, number_line, single_selector_stability
from ensstab_dask.models import get_model

__all__ = ["estimate_details"]


def estimate_details(self: EstimateFields) -> str:
    """Every measure of one selector's stability the estimate has, one per line: the one
    the summary says first, then the others, each named for what it is."""
    measures = single_selector_stability(self)
    one, paper, index = measures["stability_one_selector"], measures["paper_stability"], self.settings["index"]
    lines = [f"Details: one selector's stability, every measure of it ({index} index unless named)"]
    interval = "" if "interval" not in one else f"{one['interval']} [{one['lower']:.4f}, {one['upper']:.4f}]"
    lines.append(number_line("the estimate's (what every output says)", _number(one["value"]), one["from"], interval))
    if one["from"] != paper["from"]:
        lines.append(
            number_line(
                "the paper's measure (the index over the stability runs alone, what the simulator's p is fitted to)",
                _number(paper["value"]),
                paper["from"],
                interval_text(self, "real_stability", ".4f"),
            )
        )
    else:
        m_list = [int(v) for v in self.curve["m_ensemble"].values]
        if self.has_curve and 1 in m_list:
            at_one = float(self.curve["stability"].values[m_list.index(1)])
            model = get_model(self.settings.get("model", "onda"))
            lines.append(number_line("the curve's m_ensemble = 1", f"{at_one:.4f}", model.single_selector))
    nog = self.single.real_nogueira
    lines.append(
        number_line(
            "the same runs by Nogueira's index",
            _number(paper["nogueira"]),
            "",
            f"Nogueira's {1 - nog.alpha:.0%} confidence interval [{nog.lower:.4f}, {nog.upper:.4f}]",
        )
    )
    return "\n".join(lines)


def _number(value: float | None) -> str:
    return "not computed" if value is None else f"{value:.4f}"
