"""How the package shows progress: one place for every long stage.

The sweep, the real runs (the estimate's and the naive check's) and the estimate's
simulations all report through these helpers, so that they look and behave alike:

* a bar is a ``tqdm.auto`` bar: text on **stderr** in a terminal, a widget in a
  notebook (a text bar there without ``ipywidgets``); never on stdout, where the
  results go (a pipe must get them clean);
* it is drawn only where it can redraw itself in place, a terminal or a notebook
  (tqdm's ``disable=None``): in a file or a pipe (a log, a CI job, a batch job) hundreds
  of carriage-return lines would bury the output, so there each bar is one line as it
  starts, what it counts and the time (``real ensemble runs: 1,000 runs, started at
  10:45:12``), then, at most every :data:`LOG_EVERY` seconds, a line of what is done, of
  how many, and the time left at the pace so far (``real ensemble runs: 400/1,000 runs,
  about 6 min left``), and a last line when it ends, if it said any: a batch job's log
  shows what is running and when it will end;
* ``progress=False`` draws nothing at all (the CLI's ``--quiet``);
* the Dask dashboard link is written once per cluster, on a line of its own
  (:func:`note_dashboard`), never glued to a bar.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ensstab_dask.budget.cost import duration

__all__ = ["progress_bar", "note_dashboard", "StageBar", "StageClock", "LOG_EVERY"]

#: Seconds between two lines of a stage's progress in a log (a file or a pipe).
LOG_EVERY = 30.0

# Links already written: estimate, validate, the sweep and the real runs all meet the same
# cluster, and one link per cluster is enough.
_announced: set[str] = set()


def progress_bar(total: int, desc: str, *, unit: str = "task", enabled: bool = True):
    """A progress bar of ``total`` steps on stderr, or a silent one.

    Always a tqdm object (``update``, ``set_postfix_str`` and ``close`` work on a disabled
    one too), so callers need no ``if bar is not None``.
    """
    # disable=None is tqdm's own rule: draw on a terminal, not into a file. A Jupyter kernel's
    # stderr is not a terminal, yet it is someone watching: draw there too, a widget with
    # ipywidgets, else a text bar (tqdm.auto would warn "IProgress not found" every time).
    in_kernel = type(sys.stderr).__module__.startswith("ipykernel")  # a kernel's own stream, not an import
    if in_kernel and importlib.util.find_spec("ipywidgets") is None:
        from tqdm.std import tqdm
    else:
        from tqdm.auto import tqdm
    bar = tqdm(
        total=total, desc=desc, unit=unit, file=sys.stderr, disable=(False if in_kernel else None) if enabled else True
    )
    if enabled and bar.disable and total:  # not a terminal: lines in a log
        return _LogLines(bar, total, desc, unit)
    return bar


class _LogLines:
    """A stage's progress as lines in a log (module docstring): what :func:`progress_bar`
    returns where a bar cannot redraw itself. Counts as a bar does (``update``, ``n``)."""

    def __init__(self, bar, total: int, desc: str, unit: str) -> None:
        self._bar, self.total, self.n, self._desc, self._unit = bar, total, 0, desc, unit
        self._start = self._last = time.perf_counter()
        self._said = False
        self._line(f"{total:,} {self._units(total)}, started at {time.strftime('%H:%M:%S')}")

    def _units(self, count: int) -> str:
        return self._unit if count == 1 else f"{self._unit}s"

    def _line(self, text: str) -> None:
        print(f"{self._desc}: {text}", file=sys.stderr, flush=True)

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.perf_counter()
        if self.n < self.total and now - self._last >= LOG_EVERY:
            left = (now - self._start) / self.n * (self.total - self.n)
            self._line(f"{self.n:,}/{self.total:,} {self._units(self.total)}, about {duration(left)} left")
            self._last, self._said = now, True

    def set_postfix_str(self, text: str = "") -> None:
        pass  # a stage's name shows on a live bar; a log says the stages by their count

    def close(self) -> None:
        if self._said:  # a stage long enough to say its progress says its end too
            spent = duration(time.perf_counter() - self._start)
            self._line(f"{self.n:,}/{self.total:,} {self._units(self.total)}, done in {spent}")
            self._said = False
        self._bar.close()

    def __enter__(self) -> _LogLines:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class StageBar:
    """A bar over a known list of named stages, showing the name of the one running.

    For work made of a few unequal steps (the estimate's simulations: fitting p, the
    fixed point, the prediction, the bootstrap), where a count of tasks would mean
    nothing: ``done()`` after each stage. Draws nothing when there are no stages.
    """

    def __init__(self, stages: Sequence[str], desc: str, *, enabled: bool = True):
        self._stages = list(stages)
        self._bar = progress_bar(len(self._stages), desc, unit="stage", enabled=enabled and bool(self._stages))
        self._name_next()

    def _name_next(self) -> None:
        self._bar.set_postfix_str(self._stages[self._bar.n] if self._bar.n < len(self._stages) else "")

    def done(self) -> None:
        """The running stage is finished; name the next one."""
        self._bar.update()
        self._name_next()

    def close(self) -> None:
        # Ends the bar's line: without it, whatever is printed next lands on the bar's line.
        self._bar.close()


class StageClock(dict):
    """Seconds per stage (the dict itself: what ``Estimate.cost.seconds`` reports), and when
    each stage ran: ``spans[name] = (start, end)`` on ``time.time()``, the clock of
    distributed's task stream, so that a benchmark can line the stages up against the
    tasks and tell which stage kept the cluster waiting (``benchmarks/bench_scaling.py``).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.spans: dict[str, tuple[float, float]] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage ``name``."""
        start, t0 = time.time(), time.perf_counter()
        yield
        self[name] = time.perf_counter() - t0
        self.spans[name] = (start, time.time())


def note_dashboard(client, enabled: bool = True) -> None:
    """Write ``Dask dashboard: <link>`` on its own line on stderr, once per cluster.

    ``tqdm.write`` clears any live bar, writes the line and redraws the bar below it: a
    plain print while a bar is on screen would end up glued to the bar's line.
    """
    link = getattr(client, "dashboard_link", None)
    if not enabled or not link or link in _announced:
        return
    _announced.add(link)
    from tqdm.auto import tqdm

    tqdm.write(f"Dask dashboard: {link}", file=sys.stderr)
