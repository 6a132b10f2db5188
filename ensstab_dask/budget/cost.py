"""Cost before work: what a call will run, said and refused above a threshold.

A typo (``--m-ensemble 1000000``) must not start a job that runs for days without a
word: the checks pass, each piece fits in memory, and nothing says what it costs. So
the estimate, the naive check, validation and sweeps count the real runs of the
selector, the simulated selectors and the ensemble sizes they will make before any of
them, and :func:`check_cost` refuses above :data:`MAX_REAL_RUNS`, :data:`MAX_SIMULATED`
or :data:`MAX_SIZES`, with
the count, the time it would take at a measured rate and the option that allows it
(``allow_large=True``, CLI ``--yes``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.wording import param

__all__ = [
    "MAX_REAL_RUNS",
    "MAX_SIMULATED",
    "MAX_SIZES",
    "check_cost",
    "duration",
    "estimate_cost",
    "runs_forecast",
    "selector_seconds",
]

#: Above this many real runs of the selector, a call needs ``allow_large=True``.
MAX_REAL_RUNS = 10_000
#: Above this many simulated selectors, a call needs ``allow_large=True``.
MAX_SIMULATED = 10**8
#: Above this many ensemble sizes (``m_ensemble``), an estimate needs ``allow_large=True``:
#: each size is a point of the curve, its statistics and a line of its table.
MAX_SIZES = 1_000


def selector_seconds(n_feature: int) -> float:
    """Seconds per simulated selector on one core of this project's 2-core machine, as
    benchmarks/bench_simulator.py measures it: about 2e-8 s per feature, plus overhead."""
    return 2.0e-8 * n_feature + 1e-5


def duration(seconds: float) -> str:
    """Seconds in the unit a person reads them in: ``40 s`` (at least ``1 s``), ``12 min``,
    ``3.5 h``, ``4 days``."""
    if seconds < 120:
        return f"{max(seconds, 1.0):.0f} s"  # "0 s" would read as nothing
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


def runs_forecast(what: str, *, to_make: int, total: int, seconds: float, how: str) -> str:
    """The line said before the first real run of ``what``: how many runs it makes (of
    ``total``, the rest read from the cache) and about how long they take (``seconds``,
    with ``how`` that was priced)."""
    held = f" ({total - to_make:,} of {total:,} read from the cache)" if to_make < total else ""
    return f"{what}: {to_make:,} real runs to make{held}, about {duration(seconds)} ({how})"


def estimate_cost(
    *, paper_runs: int, designs, simulator: bool, m_list, m_stability: int, n_runs: int, repeats: int
) -> tuple[int, int]:
    """(real runs, simulated selectors, at least) of an estimate: the paper's pools and the
    model's copies; the uniform selectors behind t_uniform and, for a simulator, its
    curve and the p fit's copies (the bootstrap's surfaces come on top)."""
    real = paper_runs + sum(math.prod(d) for d in designs if d is not None)
    simulated = repeats * n_runs
    if simulator:
        simulated += repeats * sum(m_stability * m + n_runs for m in m_list) + repeats * m_stability
    return real, simulated


def check_cost(
    what: str,
    *,
    n_feature: int,
    at_least: bool = False,
    real_runs: int = 0,
    simulated: int = 0,
    sizes: int = 0,
    allow_large: bool = False,
    time_one_run: Callable[[], object] | None = None,
) -> None:
    """Refuse ``what`` above the thresholds unless ``allow_large``; ``time_one_run`` makes
    one real run (only when refusing), to say how long the real runs would take here.
    ``at_least``: ``n_feature`` is a stand-in smaller than the data's (not read yet), and
    the simulated selectors' time is said as a lower bound."""
    if allow_large or (real_runs <= MAX_REAL_RUNS and simulated <= MAX_SIMULATED and sizes <= MAX_SIZES):
        return
    if sizes > MAX_SIZES:
        raise InvalidParameterError(
            param("m_ensemble")
            + f": {what} would compute {sizes:,} ensemble sizes, above the {MAX_SIZES:,} computed without "
            "asking (each is a point of the curve and a line of its table); check the sizes, or pass "
            + param("allow_large", True)
            + " to run it"
        )
    parts = []
    if real_runs > MAX_REAL_RUNS:
        text = f"{real_runs:,} real runs of the selector"
        if time_one_run is not None:
            start = time.perf_counter()
            time_one_run()
            one = time.perf_counter() - start
            text += f" (one took {one:.2f} s here: about {duration(real_runs * one)} on one core)"
        parts.append(text)
    if simulated > MAX_SIMULATED:
        seconds = f"{'at least' if at_least else 'about'} {duration(simulated * selector_seconds(n_feature))}"
        parts.append(f"{simulated:,} simulated selectors ({seconds} on one core at the simulator's measured rate)")
    raise InvalidParameterError(
        f"{what} would make {' and '.join(parts)}, above the {MAX_REAL_RUNS:,} real runs or {MAX_SIMULATED:.0e} "
        "simulated selectors run without asking; check the sizes, or pass " + param("allow_large", True) + " to run it"
    )
