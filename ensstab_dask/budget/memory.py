"""Memory before work: what one cell of simulated ensembles needs, refused above half
this machine's memory.

A cell is the unit every simulated curve is computed in: an estimate's predicted
sizes, the p fit's copies, a sweep's grid point and ``ensstab simulate``'s stability.
:func:`check_cell_memory` refuses the largest one before any work, so that a size that
cannot fit fails at once with the option to lower, not hours later on a worker.
"""

from __future__ import annotations

from ensstab_dask.exceptions import InvalidParameterError

__all__ = ["CellTooLarge", "cell_bytes", "check_cell_memory"]


def cell_bytes(n_feature: int, n_target: int, m: int, m_stability: int, n_runs: int | None) -> int:
    """Rough peak memory of one cell: one ensemble's rankings and the aggregation's
    temporaries (or the n_runs rankings behind n_useful_v; None: no n_useful_v, as for a
    stability alone), plus the stability index's membership and pairwise-intersection
    arrays over the m_stability copies."""
    rankings = 3 * 8 * n_feature * max(m, n_runs or 0)
    stability = m_stability * n_feature + m_stability * m_stability * n_target + 8 * m_stability * n_target
    return rankings + stability + 12 * 2**20


class CellTooLarge(InvalidParameterError):
    """A cell that would need more than half this machine's memory."""


def check_cell_memory(
    n_feature: int, n_target: int, m: int, m_stability: int, n_runs: int | None, *, repeats: int | None = None
) -> None:
    """Refuse, before any work, a cell that would need more than half this machine's memory
    (``n_runs`` None: a stability alone, as ``simulate`` computes). ``repeats``: the cell
    holds the p fit's ``repeats`` x ``m_stability`` copies, and the message names both."""
    import psutil

    copies = m_stability if repeats is None else repeats * m_stability
    need = cell_bytes(n_feature, n_target, m, copies, n_runs)
    total = psutil.virtual_memory().total
    if need > total // 2:
        runs = "" if n_runs is None else f", n_runs={n_runs}"
        sizes = (
            f"m_ensemble={m}, m_stability={m_stability}"
            if repeats is None
            else (f"the p fit's repeats={repeats} x m_stability={m_stability} copies")
        )
        lower = "m_ensemble, m_stability" if repeats is None else "repeats, m_stability"
        raise CellTooLarge(
            f"one cell ({sizes}{runs}, n_feature={n_feature}) would need about {need / 2**30:.1f} GiB of memory, "
            f"more than half of this machine's {total / 2**30:.1f} GiB: lower {lower} or "
            f"{'n_runs' if runs else 'n_feature'}"
        )
