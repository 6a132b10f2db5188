"""Stage 1 of the estimate: every real run its model asks for, and what they will cost.

Which runs calibrate the simulator (``calibration_layout``, docs/method.md section 8):

* ``"paper"``: every run on ``resample`` (random halves): the paper's method, one pool
  of ``max(m_stability, n_runs)`` runs;
* ``"ensemble"``: p from ``m_stability`` runs in the ensemble's own weak-selector layout
  (``member_resample``, default a bootstrap sample of a random half, as the naive check's
  bagging ensembles), n_useful from ``n_runs`` runs on ``resample``: two pools. The
  default (docs/validation.md compares the layouts);
* ``"ensemble-all"``: n_useful and p both from one pool in the weak-selector layout.

A model may also ask for real ensemble copies in the naive check's layout
(:meth:`~ensstab_dask.models.CurveModel.copy_design`) and copies for its self-check alone
(:meth:`~ensstab_dask.models.CurveModel.check_design`): :class:`EnsembleCopies`. Every run
goes in one submission (:class:`RealRunner`): item by item, the workers would idle at
each item's tail.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ensstab_dask.budget.cost import check_cost, estimate_cost
from ensstab_dask.estimates.records.spending import RunsSpent
from ensstab_dask.real.datasets import CheckedData
from ensstab_dask.real.run_cache import RunCache
from ensstab_dask.real.runs import (
    Copies,
    Pool,
    RealRuns,
    assemble_runs,
    check_plan_classes,
    item_key,
    pool_sizes,
    real_run_plan,
    runs_from_copies,
    say_the_price,
)
from ensstab_dask.real.selectors import checked_run
from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive
from ensstab_dask.settings import EstimateSettings

__all__ = [
    "EnsembleCopies",
    "RealRunner",
    "make_real_runs",
    "real_run_items",
    "every_run_cached",
    "check_estimate_cost",
]


@dataclass(frozen=True)
class EnsembleCopies:
    """The real ensemble copies a model asked for, each (copies, weak selectors per copy,
    n_feature): the model's own (``model``) and those made for its self-check alone
    (``check``); None where it asked for none (see :mod:`ensstab_dask.models`). ``spent``:
    how every real run of the estimate so far was paid for (made here or reused from the
    cache; None: not known, as for runs handed to
    :func:`~ensstab_dask.estimates.stages.pipeline.estimate_from_runs`)."""

    model: np.ndarray | None = field(default=None, repr=False)
    check: np.ndarray | None = field(default=None, repr=False)
    spent: RunsSpent | None = None

    @property
    def runs(self) -> int:
        """Real runs behind the copies."""
        return sum(r.shape[0] * r.shape[1] for r in (self.model, self.check) if r is not None)

    def for_features(self) -> np.ndarray | None:
        """The copies the features' frequencies are counted on: the model's, else the self-check's."""
        return self.model if self.model is not None else self.check


@dataclass(frozen=True)
class RealRunner:
    """Where the real runs of an estimate run: the data, the selector (as
    :func:`~ensstab_dask.real.selectors.make_scorer` made it), the Dask client, whether
    to draw a progress bar, and the cache of real runs (:class:`~ensstab_dask.real.run_cache.RunCache`;
    None: every run is made). ``made``: runs made for it elsewhere (one submission for
    several estimates, :mod:`~ensstab_dask.estimates.stages.groups`), by
    :func:`~ensstab_dask.real.runs.item_key`, each handed over once, at ``made_rate``
    seconds a run."""

    X: Any = field(repr=False)
    y: Any = field(repr=False)
    scorer: Any
    client: Any
    progress: bool = False
    cache: RunCache | None = None
    made: dict | None = field(default=None, repr=False)
    made_rate: float = float("nan")
    _spent: list[RunsSpent] = field(default_factory=list, repr=False)

    def _made_here(self, items: Sequence[Pool | Copies]) -> bool:
        made = self.made or {}
        return bool(made) and all(item_key(item) in made for item in items)

    def _run_plan(self, items: list[Pool | Copies]) -> list[np.ndarray]:
        if self._made_here(items):
            assert self.made is not None
            return [self.made.pop(item_key(item)) for item in items]
        return real_run_plan(self.X, self.y, items, selector=self.scorer, client=self.client, progress=self.progress)

    def run(self, plan: Sequence[Pool | Copies]) -> list[np.ndarray]:
        """Every pool and copies of ``plan``, in one submission (:func:`~ensstab_dask.real.runs.real_run_plan`):
        with a cache, only the runs it lacks, the same runs bit for bit. What they cost is
        added to :meth:`spent`."""
        if self.progress and not self.made:  # handed runs were priced where they were made
            spent = self.spent()
            n_feature = self.X.shape[1]
            blocks, cached_rate = (plan, float("nan")) if self.cache is None else self.cache.survey(plan, n_feature)
            # This estimate's own pace where it made runs already, else the cache's record.
            recorded = spent.made_seconds / spent.made if spent.made else cached_rate
            total = sum(item.runs for item in plan)
            to_make = sum(b.runs for b in blocks)
            say_the_price(
                "the estimate",
                self.X,
                self.y,
                self.scorer,
                self.client,
                to_make=to_make,
                total=total,
                seconds_per_run=recorded,
            )
        if self.cache is None:
            handed = self._made_here(plan)
            start = time.perf_counter()
            out = self._run_plan(list(plan))
            runs = sum(r.size // r.shape[-1] for r in out)
            seconds = runs * self.made_rate if handed else time.perf_counter() - start
            self._spent.append(RunsSpent(made=runs, made_seconds=seconds))
            return out
        c = self.cache
        # Runs made elsewhere are handed over whole at the first call (a group's stage 1), and
        # cost what their submission did; a later call's runs are made here, and timed here.
        rate = self.made_rate if self.made else None
        before = np.array([c.fresh, c.reused, c.fresh_seconds, c.reused_seconds])
        out = c.run(list(plan), self.X.shape[1], self._run_plan, seconds_per_run=rate)
        made, reused, made_s, reused_s = np.array([c.fresh, c.reused, c.fresh_seconds, c.reused_seconds]) - before
        self._spent.append(RunsSpent(int(made), int(reused), float(made_s), float(reused_s)))
        return out

    def spent(self) -> RunsSpent:
        """How every run this runner gave was paid for: made here or reused from the cache."""
        return sum(self._spent, RunsSpent())


def real_run_items(settings: EstimateSettings, *, grown: bool = False) -> dict[str, Pool | Copies]:
    """The real runs the model asks for, by name: the paper's pools (``half``, ``member``,
    as ``calibration_layout`` says), its copies (``copies``; ``grown``: as many as an
    adaptive layout may grow them to) and its self-check's (``check``)."""
    s, curve_model, seed = settings, settings.curve_model, as_seed_sequence(settings.seed)
    plan: dict[str, Pool | Copies] = {}
    if curve_model.paper_runs:
        half_n, member_n = pool_sizes(s.calibration_layout, n_runs=s.n_runs, m_stability=s.m_stability)
        pools = (("half", half_n, s.resample, Stage.REAL), ("member", member_n, s.member_resample, Stage.MEMBER_RUNS))
        for name, size, how, stage in pools:
            if size:
                plan[name] = Pool(size, how, derive(seed, Stream.ESTIMATE, stage))
    designs = (
        ("copies", s.largest_design if grown else s.copy_design, Stage.COPIES),
        ("check", curve_model.check_design(), Stage.CHECK_COPIES),
    )
    for name, design, stage in designs:
        if design is not None:
            plan[name] = Copies(*design, derive(seed, Stream.ESTIMATE, stage))
    return plan


def every_run_cached(cache: RunCache, settings: EstimateSettings, n_feature: int) -> bool:
    """Whether ``cache`` holds every real run the estimate of ``settings`` may ask for: its
    :func:`real_run_items`, an adaptive layout's copies grown (a first round alone may still
    grow, and then a cluster makes the rest)."""
    return cache.holds(list(real_run_items(settings, grown=True).values()), n_feature)


def make_real_runs(runner: RealRunner, settings: EstimateSettings) -> tuple[RealRuns, EnsembleCopies]:
    """Stage 1, every real run the model asks for: the paper's pools (as ``calibration_layout``
    says), its real ensemble copies, and copies for its self-check.

    A model without runs of the paper's gets its single-selector statistics from its
    copies (:func:`~ensstab_dask.real.runs.runs_from_copies`).
    """
    s, plan = settings, real_run_items(settings)
    made = dict(zip(plan, runner.run(list(plan.values()))))
    copies = EnsembleCopies(made.pop("copies", None), made.pop("check", None), runner.spent())
    if made:
        runs = assemble_runs(s.calibration_layout, n_runs=s.n_runs, m_stability=s.m_stability, **made)
        return runs.top(s.n_target), copies
    assert copies.model is not None  # a model without the paper's runs fits copies
    return runs_from_copies(copies.model, s.n_target), copies


def check_estimate_cost(data: CheckedData | None, settings: EstimateSettings, *, allow_large: bool) -> tuple[int, int]:
    """The estimate's real runs and simulated selectors against the cost thresholds, before
    any work (:func:`~ensstab_dask.budget.cost.check_cost`), and ``y``'s classes against
    the runs (:func:`~ensstab_dask.real.runs.check_plan_classes`); a real run is timed on the
    checked ``data`` (None: the data are not read yet, and only the simulated selectors are priced, at
    least at the simulator's rate on ``settings``' problem). Returns the counts, (real runs,
    simulated selectors)."""
    s, curve_model = settings, settings.curve_model
    if data is not None:  # a class too small for the runs: said here, before any cluster starts
        check_plan_classes(data.y, list(real_run_items(settings).values()))
    paper = (
        sum(pool_sizes(s.calibration_layout, n_runs=s.n_runs, m_stability=s.m_stability))
        if curve_model.paper_runs
        else 0
    )
    real, simulated = estimate_cost(
        paper_runs=paper,
        designs=(s.largest_design, curve_model.check_design()),  # with its growth, said up front
        simulator=curve_model.simulator,
        m_list=s.m_list,
        m_stability=s.m_stability,
        n_runs=s.n_runs,
        repeats=s.repeats,
    )
    if s.max_real_runs is not None:  # what precision's rounds may spend
        real = max(real, s.max_real_runs)
    check_cost(
        "the estimate",
        n_feature=s.n_feature,
        at_least=data is None,
        real_runs=0 if data is None else real,
        simulated=simulated,
        sizes=len(s.m_list),
        allow_large=allow_large,
        time_one_run=None if data is None else lambda: checked_run(data, selector=s.selector, resample=s.resample),
    )
    return real, simulated
