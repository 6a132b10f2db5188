"""Several estimates on one data in one submission of real runs: a group's against the
rest, or each selector's of those compared. Each is :class:`Asked` (its question: labels,
rows and selector; its settings; its cache); X goes to the workers once, every estimate's
runs not already cached are sent together, and each estimate is then made on its own runs,
its share of the submission's seconds as its real runs' time."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ensstab_dask.cluster import connect
from ensstab_dask.cluster.progress import note_dashboard
from ensstab_dask.estimates.records.estimate import Estimate
from ensstab_dask.estimates.stages.pipeline import estimate_with
from ensstab_dask.estimates.stages.real_runs import RealRunner, real_run_items
from ensstab_dask.real.run_cache import RunCache
from ensstab_dask.real.runs import Problem, group_run_plan, item_key, say_the_price
from ensstab_dask.settings import EstimateSettings

__all__ = ["Asked", "estimate_together"]


@dataclass(frozen=True)
class Asked:
    """One estimate of several: its question (``problem.selector``: its scorer, as
    :func:`~ensstab_dask.real.selectors.make_scorer` made it), its settings, its cache of
    real runs (None: every run made)."""

    problem: Problem
    settings: EstimateSettings
    cache: RunCache | None = None


def estimate_together(
    X, asked: dict[str, Asked], *, names, client, progress: bool, what: str
) -> tuple[dict[str, Estimate], float]:
    """Every estimate of ``asked`` (by name), their runs in one submission; returns them and
    the submission's wall seconds. ``what`` names them in the price and the bar ("3 groups")."""
    plans = {k: list(real_run_items(a.settings).values()) for k, a in asked.items()}
    nothing_held = float("nan")
    surveyed = {
        k: (plans[k], nothing_held) if a.cache is None else a.cache.survey(plans[k], X.shape[1])
        for k, a in asked.items()
    }
    blocks = {k: surveyed[k][0] for k in asked}
    to_run = [k for k in asked if blocks[k]]
    with connect(client) as c:
        note_dashboard(c, progress)
        target = "synchronous" if c is None else c
        if progress and to_run:
            first = asked[to_run[0]].problem
            recorded = [rate for _, rate in surveyed.values()]
            say_the_price(
                f"the estimates of {what}",
                first.rows_of(X),
                first.y,
                first.selector,
                target,
                to_make=sum(b.runs for k in to_run for b in blocks[k]),
                total=sum(item.runs for plan in plans.values() for item in plan),
                seconds_per_run=float(np.nanmean(recorded)) if np.isfinite(recorded).any() else float("nan"),
            )
        start = time.perf_counter()
        made = (
            group_run_plan(
                X,
                [asked[k].problem for k in to_run],
                [blocks[k] for k in to_run],
                client=target,
                progress=progress,
                desc=f"real runs of {what}",
            )
            if to_run
            else None
        )
        seconds = time.perf_counter() - start
        handed, rates = {}, {}
        if made is not None:
            worked = sum(made.seconds) or 1.0
            for k, made_k, work in zip(to_run, made.ranks, made.seconds):
                handed[k] = {item_key(b): r for b, r in zip(blocks[k], made_k)}
                runs = sum(r.size // r.shape[-1] for r in made_k)
                # Its share of the wall time, by the work its runs took on the workers.
                rates[k] = seconds * work / worked / max(runs, 1)
        estimates = {}
        for k, a in asked.items():  # a question's rows taken for one estimate at a time
            p = a.problem
            X_k = p.rows_of(X)
            runner = RealRunner(
                X_k, p.y, p.selector, target, progress, a.cache, handed.get(k), rates.get(k, float("nan"))
            )
            estimates[k] = estimate_with(runner, a.settings, [], names)
    return estimates, seconds
