"""Real runs on the cluster: pools of single-selector runs and real ensemble copies.

What one run does is :mod:`ensstab_dask.real.selectors`' (it knows nothing of Dask); this
module sends many of them to where ``client`` says (:mod:`ensstab_dask.cluster`), the
data to each worker once. Run ``i`` of a pool seeded ``seed`` uses
``derive(seed, Stream.REAL_RUNS, i)``: its result does not depend on how runs are
batched or where they execute.
"""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import astuple, dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from ensstab_dask.budget.cost import runs_forecast
from ensstab_dask.checks import CALIBRATION_LAYOUTS, check_choice, check_int
from ensstab_dask.cluster import ClientLike, Display, run_tasks
from ensstab_dask.cluster.clients import task_slots
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import check_data
from ensstab_dask.real.resamples import check_resample, min_per_class
from ensstab_dask.real.selectors import (
    Scorer,
    convergence_counted,
    make_scorer,
    member_ranks,
    run_batch,
    say_selector_warnings,
    selector_for,
    task_for,
)
from ensstab_dask.real.targets import task_of
from ensstab_dask.seeding import SeedLike, Stream, as_seed_sequence, derive
from ensstab_dask.simulator.kernel import top_subsets
from ensstab_dask.wording import param, words

__all__ = [
    "real_runs",
    "real_run_plan",
    "Pool",
    "Copies",
    "RealRuns",
    "assemble_runs",
    "pool_sizes",
    "real_subsets",
    "runs_from_copies",
    "check_plan_classes",
    "Problem",
    "group_run_plan",
    "GroupRuns",
    "item_key",
    "say_the_price",
]


def real_runs(
    X,
    y,
    n_target: int,
    pool: Pool,
    *,
    selector=None,
    client: ClientLike = None,
    batch_size: int = 1,
    progress: bool = True,
) -> np.ndarray:
    """The ``pool.n_runs`` independent real runs of a :class:`Pool`, spread over Dask workers.

    Run ``i`` is seeded ``derive(pool.seed, Stream.REAL_RUNS, i)``, so the result is the
    same whatever ``batch_size`` or ``client``. ``X`` and ``y`` are scattered to the
    workers once. ``progress``: a bar of the runs on stderr (see
    :mod:`ensstab_dask.cluster.progress`). ``y`` is read as a regression target when it
    holds fractions or ``selector`` is a regressor (:func:`~ensstab_dask.real.selectors.task_for`).

    Returns
    -------
    ndarray of int64, shape (n_runs, n_feature): the ranks of each run.
    """
    X, y = check_data(X, y, n_target=n_target, task=task_for("auto", selector))
    return real_run_plan(X, y, [pool], selector=selector, client=client, batch_size=batch_size, progress=progress)[0]


@dataclass(frozen=True)
class Pool:
    """``n_runs`` independent real runs on ``resample``; run ``i`` seeded
    ``derive(seed, Stream.REAL_RUNS, i)``. ``first``: runs ``first ..`` of the pool, the
    same runs as in a larger pool (how a cached pool grows)."""

    n_runs: int
    resample: str | float = "half"
    seed: SeedLike = 0
    first: int = 0

    @property
    def runs(self) -> int:
        """The real runs it makes."""
        return self.n_runs


@dataclass(frozen=True)
class Copies:
    """``copies`` real ensemble copies of ``members`` weak selectors each, in ``layout``
    (see :func:`member_ranks`): copy ``c``'s half of the data from
    ``derive(seed, Stream.REAL_ENSEMBLE, c)``, its member ``j`` from ``(.., c, j + 1)``, so
    that a copy and its first members do not depend on how many are asked for.

    ``first_copy`` and ``first_member`` make a block of a larger design: copies
    ``first_copy ..`` and their members ``first_member ..``, the same runs as in the
    larger design (how an estimate adds copies or members in rounds)."""

    copies: int
    members: int
    seed: SeedLike = 0
    layout: str = "bagging"
    first_copy: int = 0
    first_member: int = 0

    @property
    def runs(self) -> int:
        """The real runs it makes."""
        return self.copies * self.members


# What each weak selector of a copy sees, as a resample of all the data: "bagging" a
# bootstrap sample of the copy's random half, "independent" its own half, the "-full"
# layouts a bootstrap sample of the data or all of it.
_LAYOUT_RESAMPLE = {"bagging": "bagging", "independent": "half", "bagging-full": "bootstrap", "independent-full": None}
_COPY_WORDS = {
    "bagging": "each copy a random half of the samples, each weak selector a bootstrap sample of it",
    "independent": "each weak selector a random half of the samples",
    "bagging-full": "each weak selector a bootstrap sample of the samples",
}


def check_plan_classes(y, plan: Sequence[Pool | Copies]) -> None:
    """Refuse labels ``y`` with a class too small for some run of ``plan``: before any
    cluster starts, in one line naming the class, its count and what needs more.

    A resample without some class fits the selector on fewer classes than the data has
    (:func:`~ensstab_dask.real.resamples.check_resample_classes`); a regression target's
    quantile bins are made as large as the runs need."""
    if task_of(y) == "regression":
        return
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    small, count = labels.tolist()[counts.argmin()], int(counts.min())
    for item in plan:
        resample: str | float | None
        what: str
        if isinstance(item, Pool):
            resample, what = item.resample, param("resample", item.resample) + " needs"
        else:
            resample = _LAYOUT_RESAMPLE.get(item.layout, "half")
            what = f"the real ensemble copies (layout {item.layout!r}: {_COPY_WORDS.get(item.layout, '')}) need"
        if resample is None:
            continue
        need = min_per_class(check_resample(resample))
        if count < need:
            raise InvalidParameterError(
                what + f" at least {need} samples of every class, so that each resample holds all classes; class "
                f"{small!r} of y has {count}: drop or merge that class" + _quantity_hint(labels)
            )


#: Whole-number labels with more distinct values than this read as a quantity (counts,
#: scores) more likely than as classes.
_MANY_CLASSES = 10


def _quantity_hint(labels: np.ndarray) -> str:
    """A hint to treat ``y`` as a regression target when its labels are many whole numbers."""
    numeric = np.issubdtype(labels.dtype, np.number) and not np.issubdtype(labels.dtype, np.bool_)
    if not numeric or len(labels) <= _MANY_CLASSES or not np.all(np.mod(labels, 1) == 0):
        return ""
    return f"; or, if y is a quantity ({len(labels)} whole-number values, as counts or scores are), pass " + param(
        "task", "regression"
    )


def _plan_tasks(item: Pool | Copies, batch_size: int) -> list[tuple]:
    """The tasks of one plan item: ``(kind, ...)`` as :func:`_run_task` takes them."""
    ss = as_seed_sequence(item.seed)
    if isinstance(item, Pool):
        seeds = [derive(ss, Stream.REAL_RUNS, i) for i in range(item.first, item.first + item.n_runs)]
        return [("pool", item.resample, seeds[i : i + batch_size]) for i in range(0, item.n_runs, batch_size)]
    tasks = []
    for copy in range(item.first_copy, item.first_copy + item.copies):
        first = item.first_member
        members = [derive(ss, Stream.REAL_ENSEMBLE, copy, j + 1) for j in range(first, first + item.members)]
        copy_ss = derive(ss, Stream.REAL_ENSEMBLE, copy)
        tasks += [
            ("copy", item.layout, copy_ss, members[i : i + batch_size]) for i in range(0, item.members, batch_size)
        ]
    return tasks


def _run_task(
    scorer: Scorer, X: np.ndarray, y: np.ndarray, kind: str, *args
) -> tuple[np.ndarray, int, str, tuple, float]:
    """What each real-run task executes: a batch of a pool's runs, or of a copy's members.
    Returns their ranks, how many of them did not converge, with the first warning's
    first line, and the selector's other warnings, each once
    (:func:`~ensstab_dask.real.selectors.convergence_counted`): they are raised in the
    worker's process, where no one would see them; and the seconds the batch took there."""
    start = time.perf_counter()
    with convergence_counted(every=True) as tally:
        ranks = run_batch(scorer, X, y, *args) if kind == "pool" else member_ranks(scorer, X, y, *args)
    return ranks, tally.runs, tally.message, tuple(tally.others), time.perf_counter() - start


def _say_convergence(results: list, n_runs: int) -> None:
    """One warning for the runs whose fit did not converge, in place of one per run."""
    runs = sum(r[1] for r in results)
    if not runs:
        return
    from sklearn.exceptions import ConvergenceWarning

    first = next(r[2] for r in results if r[1])
    warnings.warn(
        f"the selector did not converge in {runs} of {n_runs} real runs (scikit-learn's ConvergenceWarning: "
        f"{first}); its scores, and what is estimated from them, may be poor: scale X, or give the selector more "
        "iterations",
        ConvergenceWarning,
        stacklevel=3,
    )


def say_the_price(
    what: str, X, y, scorer, client, *, to_make: int, total: int, seconds_per_run: float = float("nan")
) -> None:
    """Before the first of ``to_make`` real runs (of ``total``, the rest read from a cache):
    a line on stderr saying how many and about how long on ``client``'s cluster. The time
    is ``seconds_per_run`` (wall seconds a run, as runs made before took: this estimate's,
    or a cache's record of them) where known, else one run of ``scorer`` on ``(X, y)``
    timed here, shared among the cluster's task slots. Nothing when there is nothing to
    make."""
    if not to_make:
        return
    if np.isfinite(seconds_per_run) and seconds_per_run > 0:
        seconds, how = to_make * seconds_per_run, f"at the {seconds_per_run:.2g} s a run that runs made before took"
    else:
        slots, start = task_slots(client), time.perf_counter()
        run_batch(scorer, X, y, "half", [as_seed_sequence(0)])  # its ranks are not used
        one = time.perf_counter() - start
        seconds = to_make * one / slots
        how = f"one run took {one:.2g} s here; {slots} at a time on this cluster"
    print(runs_forecast(what, to_make=to_make, total=total, seconds=seconds, how=how), file=sys.stderr, flush=True)


def real_run_plan(
    X,
    y,
    plan: Sequence[Pool | Copies],
    *,
    selector=None,
    client: ClientLike = None,
    batch_size: int = 1,
    progress: bool = True,
    desc: str = "real runs",
) -> list[np.ndarray]:
    """Every real run of several pools and ensemble copies, in one submission.

    Returns, per item of ``plan``, the ranks of a :class:`Pool` (n_runs, n_feature) or of
    :class:`Copies` (copies, members, n_feature). One submission keeps every worker busy
    to the end instead of idling at the tail of each item, and scatters the data once. A
    run's ranks depend on its seed alone, so the result is the same whatever
    ``batch_size``, ``client`` or the plan's other items. ``progress``: one bar for all
    the runs, named ``desc``. ``X`` and ``y`` are taken as validated.
    """
    problem = Problem(y)
    return group_run_plan(
        X,
        [problem],
        [plan],
        selector=selector,
        client=client,
        batch_size=batch_size,
        progress=progress,
        desc=desc,
    ).ranks[0]


@dataclass(frozen=True)
class Problem:
    """One question asked of the data: the labels ``y`` of the samples ``rows`` of X (None:
    every sample), as one group against the rest (or against another group) asks it, and
    the ``selector`` that answers it (None: the plan's; several selectors compared on one
    data ask one question each)."""

    y: np.ndarray = field(repr=False)
    rows: np.ndarray | None = field(default=None, repr=False)
    selector: Any = None

    def rows_of(self, X):
        """The samples of X it asks of: all of X, or a copy of its rows (made when asked)."""
        return X if self.rows is None else X[self.rows]


def group_run_plan(
    X,
    problems: Sequence[Problem],
    plans: Sequence[Sequence[Pool | Copies]],
    *,
    selector=None,
    client: ClientLike = None,
    batch_size: int = 1,
    progress: bool = True,
    desc: str = "real runs",
) -> GroupRuns:
    """The runs of each problem's plan, every problem's in one submission: X goes to the
    workers once, each problem's labels and selector beside it, and each task runs a batch
    of one problem's runs (on ``X[rows]`` where it has rows). Returns, per problem, what
    :func:`real_run_plan` would for it alone, bit for bit, with the work each took
    (:class:`GroupRuns`)."""
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    for problem, plan in zip(problems, plans):
        for item in plan:
            if isinstance(item, Pool):
                check_int(item.n_runs, "n_runs", minimum=1)
            else:
                check_int(item.copies, "copies", minimum=1)
                check_int(item.members, "members", minimum=1)
        check_plan_classes(problem.y, plan)  # here, not in a worker's traceback
    scorers = tuple(make_scorer(selector_for(selector if p.selector is None else p.selector, p.y)) for p in problems)
    per_item = [[_plan_tasks(item, batch_size) for item in plan] for plan in plans]
    tasks = [(g, *task) for g, items in enumerate(per_item) for item_tasks in items for task in item_tasks]
    display = Display(desc, "run", [len(t[-1]) for t in tasks], enabled=progress)
    shared = (scorers, X, tuple(p.y for p in problems), tuple(p.rows for p in problems))
    results = run_tasks(_group_task, tasks, shared=shared, client=client, display=display)
    assert results is not None  # without on_result, run_tasks returns the results
    _say_convergence(results, sum(len(t[-1]) for t in tasks))
    say_selector_warnings(key for r in results for key in r[3])
    parts = (ranks for ranks, *_ in results)
    out = []
    for plan, items in zip(plans, per_item):
        made = []
        for item, item_tasks in zip(plan, items):
            ranks = np.concatenate([next(parts) for _ in item_tasks])
            made.append(ranks if isinstance(item, Pool) else ranks.reshape(item.copies, item.members, -1))
        out.append(made)
    worked = np.zeros(len(plans))
    for task, result in zip(tasks, results):
        worked[task[0]] += result[-1]
    return GroupRuns(out, worked.tolist())


@dataclass(frozen=True)
class GroupRuns:
    """What :func:`group_run_plan` made: per problem, the ranks of each plan item (as
    :func:`real_run_plan` returns them), and the seconds its runs took on the workers, their
    tasks' durations summed (each problem's share of one submission's work)."""

    ranks: list[list[np.ndarray]]
    seconds: list[float]


def _group_task(scorers: tuple, X, ys: tuple, rows: tuple, g: int, kind: str, *args) -> tuple:
    """A task of :func:`group_run_plan`: problem ``g``'s batch (:func:`_run_task`)."""
    return _run_task(scorers[g], X if rows[g] is None else X[rows[g]], ys[g], kind, *args)


def item_key(item: Pool | Copies) -> tuple:
    """What identifies the runs of an item, its seed by value (two ``derive`` calls give
    two SeedSequence objects of one seed)."""
    ss = as_seed_sequence(item.seed)
    return (type(item).__name__, str(ss.entropy), tuple(ss.spawn_key), ss.pool_size, *astuple(replace(item, seed=0)))


def real_subsets(
    X,
    y,
    n_target: int,
    *,
    n_runs: int,
    selector=None,
    resample="half",
    seed: SeedLike = 0,
    client: ClientLike = None,
) -> np.ndarray:
    """Stage 1: the top-``n_target`` subsets of ``n_runs`` real runs, shape (n_runs, n_target).

    Run ``i`` is :func:`~ensstab_dask.real.runs.real_runs`'s run ``i`` with this seed, so
    the first k runs of a larger pool are exactly the runs of a pool of k.
    """
    ranks = real_runs(X, y, n_target, Pool(n_runs, resample, seed), selector=selector, client=client)
    return top_subsets(ranks, n_target)


def runs_from_copies(copy_ranks: np.ndarray, n_target: int) -> RealRuns:
    """The single-selector statistics' runs, taken from real ensemble copies (G, B, n_feature).

    The stability's runs are the first weak selector of each copy (independent halves,
    the weak selectors' layout); A[f] draws from all of the copies' runs, first weak
    selectors first (runs of one copy share its half, so A[f] counts a little more
    agreement than on independent halves). Every run is counted once.
    """
    G, B, n_feature = copy_ranks.shape
    pool = np.asarray(copy_ranks).transpose(1, 0, 2).reshape(-1, n_feature)
    return RealRuns(pool, pool[:G], True).top(n_target)


def pool_sizes(calibration_layout: str, *, n_runs: int, m_stability: int) -> tuple[int, int]:
    """Real runs needed on ``resample`` (halves) and in the weak-selector layout, for a layout."""
    check_choice(calibration_layout, "calibration_layout", CALIBRATION_LAYOUTS)
    pool = max(m_stability, n_runs)
    return {"paper": (pool, 0), "ensemble": (n_runs, m_stability), "ensemble-all": (0, pool)}[calibration_layout]


@dataclass(frozen=True)
class RealRuns:
    """The real runs behind an estimate, as top-``n_target`` subsets.

    ``useful`` are the runs behind A[f] (a pool of at least ``n_runs``); ``stability``
    those behind the single-selector stability. ``shared``: ``stability`` is the start of
    ``useful`` (one pool, counted once). The bootstrap draws the two statistics'
    replicates independently either way (see :func:`~ensstab_dask.models.bootstrap.bootstrap_runs`).
    ``useful_ranks``: the full rankings behind ``useful``, when kept (:meth:`top`), so that
    A[f] can be counted at a smaller n_target on the same runs.
    """

    useful: np.ndarray = field(repr=False)
    stability: np.ndarray = field(repr=False)
    shared: bool
    useful_ranks: np.ndarray | None = field(default=None, repr=False)

    def top(self, n_target: int) -> RealRuns:
        """These runs, given as rankings, as their top-``n_target`` subsets (rankings kept)."""
        useful = top_subsets(self.useful, n_target)
        stability = useful[: len(self.stability)] if self.shared else top_subsets(self.stability, n_target)
        return RealRuns(useful, stability, self.shared, useful_ranks=self.useful)

    @property
    def count(self) -> int:
        """Real runs made (a shared pool counts once)."""
        return len(self.useful) + (0 if self.shared else len(self.stability))


def assemble_runs(
    calibration_layout: str, *, n_runs: int, m_stability: int, half: np.ndarray | None = None, member=None
) -> RealRuns:
    """The runs a layout uses, from pools of runs on halves (``half``) and in the weak-selector
    layout (``member``), as subsets or as rankings (then see :meth:`RealRuns.top`). Run ``i``
    of a pool does not depend on the pool's size, so taking the first runs of larger pools
    gives exactly the runs :func:`estimate` would make."""
    half_n, member_n = pool_sizes(calibration_layout, n_runs=n_runs, m_stability=m_stability)
    for name, pool, need in (("half", half, half_n), ("member", member, member_n)):
        if need and (pool is None or len(pool) < need):
            raise InvalidParameterError(
                words(f"{name}: ", param("calibration_layout", calibration_layout), f" needs {need} runs; got ")
                + f"{0 if pool is None else len(pool)}"
            )
    # The check above guarantees the pools the layout needs.
    if calibration_layout == "paper":
        assert half is not None
        pool = half[:half_n]
        return RealRuns(pool, pool[:m_stability], True)
    assert member is not None
    if calibration_layout == "ensemble":
        assert half is not None
        return RealRuns(half[:n_runs], member[:m_stability], False)
    pool = member[:member_n]
    return RealRuns(pool, pool[:m_stability], True)
