"""Sweeps of the simulator over (n_useful, p, m_ensemble), run as Dask tasks, into xarray.

Each cell ``(u, p, m)`` holds ``repeats`` independent draws of

* the simulated stability of ``m_stability`` ensembles of ``m`` weak selectors, and
* n_useful_v = A[f_{u,p}] from ``n_runs`` simulated runs (``n_runs = m`` by default),

and their mean and standard deviation: the two surfaces of docs/method.md sections 6 and 9.

Determinism
-----------
Repeat ``r`` of a cell uses the streams ``derive(seed, Stream.SWEEP_STABILITY, m, r)``
(stability) and ``derive(seed, Stream.SWEEP_N_USEFUL_V, n_runs, r)`` (n_useful_v):
they depend on the cell's coordinates and the seed only, never on the batch, the
scheduler, the worker or the order in which tasks finish, so a sweep is bit-identical
however it is run or resumed. Neither ``p`` nor ``n_useful`` is in the key: all cells
of one ``m`` share common random numbers across ``p`` and ``n_useful`` (the same
uniforms, shuffle keys and t_uniform draws), which makes the surfaces smooth in both
directions (and every curve over ``p`` monotone up to the model's own shape), the
property bisection and the calibration contours rely on. The price is that neighbouring
cells are correlated, so do not treat them as independent replicates. The stream layout
(:data:`~ensstab_dask.sweeps.grid.STREAM_LAYOUT`: these keys and the kernel's draws,
:mod:`ensstab_dask.simulator.kernel`) is recorded in every store; a store of another
layout is refused.

Batching
--------
Cells are grouped into tasks of about half a second of work by a cost model (or
``batch_size`` cells per task): whole ``n_useful`` rows when cells are cheap, runs of
``p`` when they are not. The store is chunked by (``n_useful`` row, ``m_ensemble``)
whatever the batching, so the number of files stays small.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os

import numpy as np
import xarray as xr

from ensstab_dask.budget.cost import check_cost
from ensstab_dask.checks import check_int
from ensstab_dask.cluster import ClientLike, Display, connect, run_tasks
from ensstab_dask.cluster.clients import task_slots
from ensstab_dask.exceptions import InvalidParameterError, OutputNotWritten
from ensstab_dask.seeding import SeedLike
from ensstab_dask.sweeps.grid import (  # noqa: F401 - re-exported: benchmarks and tests import them from here
    DIMS,
    STREAM_LAYOUT,
    Block,
    SweepPlan,
    SweepRequest,
    block_dataset,
    compute_block,
    make_plan,
    plan_blocks,
    sweep_dataset,
)
from ensstab_dask.sweeps.lock import writer_lock
from ensstab_dask.sweeps.storage import COMPLETED, MISPLACED, SweepStore
from ensstab_dask.wording import param

__all__ = [
    "sweep",
    "make_plan",
    "SweepRequest",
    "SweepPlan",
    "compute_block",
    "plan_blocks",
    "Block",
]

logger = logging.getLogger("ensstab_dask.sweep")  # the public name, not the private module's


def sweep(
    n_feature: int,
    n_target: int,
    *,
    n_useful,
    p,
    m_ensemble,
    m_stability: int = 50,
    n_runs: int | None = None,
    repeats: int = 10,
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    seed: SeedLike = 0,
    store=None,
    client: ClientLike = None,
    batch_size: int | None = None,
    progress: bool = True,
    model: str = "onda",
    h: int | None = None,
    allow_large: bool = False,
) -> xr.Dataset:
    """Simulated stability and n_useful_v over a grid of (n_useful, p, m_ensemble).

    Parameters
    ----------
    n_feature, n_target : int
    n_useful, p, m_ensemble : sequences (or scalars)
        The grid. Sorted; duplicates are refused. ``n_useful`` in [n_target, n_feature],
        ``p`` in [0, 1], ``m_ensemble`` >= 1.
    m_stability : int
        Simulated ensembles per stability value.
    n_runs : int or None
        Runs behind each n_useful_v; None means ``n_runs = m_ensemble`` in each cell,
        as in the method.
    repeats : int
        Independent draws per cell (kept in ``*_draws``; mean and std summarise them).
    aggregate, index : str
        Ensemble algorithm and stability index.
    seed : int
        The cell streams derive from it (see the module docstring).
    store : path, optional
        A zarr store. Created from a template before any work, once the cluster is
        reachable (a sweep that cannot start leaves no store); every finished block is
        written as it completes. Rerunning the same call resumes: only missing blocks
        are computed. A store made with other settings is refused and left untouched.
    client : None, 'processes', 'threads', 'synchronous', address or distributed.Client
        Where to run; see :mod:`ensstab_dask.cluster`. An unreachable address fails
        within dask's connect timeout.
    batch_size : int, optional
        Cells per task; by default about 0.5 s of work per task.
    progress : bool
        A progress bar (terminal or notebook, on stderr); the dashboard link is logged
        (logger ``ensstab_dask.sweep``, level INFO).
    model : {'onda', 'two-level'}
        The simulator (see :func:`~ensstab_dask.simulator.kernel.simulate_rankings`).
    h : int, optional
        The two-level model's preferred-set size, one value for the grid:
        ``n_target <= h <= min(n_useful)``. Recorded in ``attrs`` (``model``, ``h``);
        n_useful_v is the same for both models (its runs are single selectors).
    allow_large : bool
        Run even above 10^8 simulated selectors; without it such a sweep is refused
        before any work, saying what it would cost (:mod:`ensstab_dask.budget.cost`).

    Returns
    -------
    xarray.Dataset
        Dims ``n_useful``, ``p``, ``m_ensemble`` (and ``repeat`` for the draws); variables
        ``stability``, ``stability_std``, ``n_useful_v``, ``n_useful_v_std``,
        ``stability_draws``, ``n_useful_v_draws``; the settings in ``attrs``.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> ds = es.sweep(200, 5, n_useful=[10, 40], p=[0.3, 0.9], m_ensemble=[1, 5], m_stability=10,
    ...               repeats=2, client="synchronous", progress=False)
    >>> ds.stability.dims, ds.stability_draws.shape
    (('n_useful', 'p', 'm_ensemble'), (2, 2, 2, 2))
    >>> ds.attrs["kind"], ds.attrs["n_feature"]
    ('sweep', 200)
    >>> single = ds.stability.sel(m_ensemble=1)  # the single-selector surface
    >>> bool(single.sel(n_useful=10, p=0.9) > single.sel(n_useful=10, p=0.3))  # it rises with p
    True
    """
    if batch_size is not None:
        batch_size = check_int(batch_size, "batch_size", minimum=1)
    if store is not None and not os.fspath(store).strip():  # Path("") would be the working folder
        raise InvalidParameterError(param("store") + " is an empty path; name the store's folder, like sweep.zarr")
    plan = make_plan(
        SweepRequest(
            n_feature,
            n_target,
            n_useful=n_useful,
            p=p,
            m_ensemble=m_ensemble,
            m_stability=m_stability,
            n_runs=n_runs,
            repeats=repeats,
            aggregate=aggregate,
            index=index,
            seed=seed,
            model=model,
            h=h,
        )
    )
    _refuse_too_large(plan, n_feature, repeats, allow_large=allow_large)
    with contextlib.ExitStack() as stack:
        if store is not None:
            # One writer per store: a second one would overwrite the first's chunks.
            stack.enter_context(writer_lock(store))
            if not SweepStore(store).path.exists():
                # Connect before the template is written: a sweep that cannot start (an
                # unreachable or malformed scheduler) must leave no empty store behind,
                # which would refuse the corrected rerun's other settings. An existing
                # store is only read until blocks finish, so it is connected to later.
                c = stack.enter_context(connect(client))
                client = "synchronous" if c is None else c  # what _run then uses as is
        sw = SweepStore.open_or_create(store, plan.template(), plan.store_settings()) if store is not None else None
        blocks = plan.blocks(batch_size, split_repeats=sw is None)
        if sw is not None:
            _refuse_read_only(sw)
            blocks = _still_to_do(sw, blocks)
        else:
            stab_all = np.full(plan.shape + (repeats,), np.nan)
            nuv_all = np.full(plan.shape + (repeats,), np.nan)

        def finish(b: Block, result) -> None:
            stab, nuv = result
            if sw is not None:
                try:
                    sw.write_block(block_dataset(stab, nuv, index), b.region())
                except OSError as exc:
                    raise _block_not_written(sw, exc) from exc
            else:
                stab_all[b.u0 : b.u1, b.p0 : b.p1, b.im, b.r0 : b.r1] = stab
                nuv_all[b.u0 : b.u1, b.p0 : b.p1, b.im, b.r0 : b.r1] = nuv

        _log_todo(plan, blocks, sw)
        if blocks:
            _run(blocks, plan.task_args, finish, client=client, progress=progress, repeats=repeats)
        if sw is not None:
            return sw.load()
        return sweep_dataset(plan.grid, plan.runs, plan.settings, stab_all, nuv_all)


def _refuse_too_large(plan: SweepPlan, n_feature: int, repeats: int, *, allow_large: bool) -> None:
    """Refuse, before any work, a sweep of more simulated selectors than :func:`check_cost`
    allows unless ``allow_large``: every cell's ensembles and runs, over its repeats."""
    n_u, n_p, _ = plan.shape
    per_row = sum(plan.settings["m_stability"] * int(m) + int(r) for m, r in zip(plan.grid["m_ensemble"], plan.runs))
    check_cost("the sweep", n_feature=n_feature, simulated=n_u * n_p * repeats * per_row, allow_large=allow_large)


def _log_todo(plan: SweepPlan, blocks: list[Block], sw: SweepStore | None) -> None:
    """Log (INFO) how many cells are left to compute, and in how many tasks; of a resumed
    store, how many were done before."""
    n_u, n_p, n_m = plan.shape
    todo_cells = sum(b.n_cells for b in blocks)
    logger.info("sweep: computing %d of %d cells in %d tasks", todo_cells, n_u * n_p * n_m, len(blocks))
    if sw is not None and todo_cells < n_u * n_p * n_m:
        logger.info(
            "Resuming %s: %d cells already done, %d to compute", sw.path, n_u * n_p * n_m - todo_cells, todo_cells
        )


#: What the OS says when a write does not fit: the disk, a quota, or a file size limit.
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
#: What a resumable store's error says of the store and the way on.
_SAFE = "the blocks finished before are safe in it (a block half-written is not marked done, and is recomputed)"


def _refuse_read_only(sw: SweepStore) -> None:
    """Refuse, before any work, a store with a folder this process may not write in (a
    store made read-only, or another user's): every block's write would fail."""
    for folder, _, _ in os.walk(sw.path):
        if not os.access(folder, os.W_OK | os.X_OK):
            raise OutputNotWritten(
                param("store")
                + f" {str(sw.path)!r}: no permission to write in {folder!r}; nothing was computed and the store is "
                "unchanged: make it writable (chmod -R u+w) and rerun the same command to resume"
            )


def _block_not_written(sw: SweepStore, exc: OSError) -> Exception:
    """A block's write that failed for want of space or permission, as one line saying what
    is safe and how to go on; any other OSError as it is."""
    where = f" ({exc.filename})" if exc.filename else ""
    if exc.errno in _DISK_FULL:
        return OutputNotWritten(
            param("store")
            + f" {str(sw.path)!r}: the disk is full ({exc.strerror}{where}); {_SAFE}: free some space, then rerun "
            "the same command to resume"
        )
    if isinstance(exc, PermissionError):
        return OutputNotWritten(
            param("store")
            + f" {str(sw.path)!r}: no permission to write ({exc.strerror}{where}); {_SAFE}: make it writable "
            "(chmod -R u+w), then rerun the same command to resume"
        )
    return exc


def _still_to_do(sw: SweepStore, blocks: list[Block]) -> list[Block]:
    """The blocks of a store's sweep not yet done (a block planned differently last time
    and done in part is redone per cell); cells marked done that hold no data are redone."""
    state = sw.load(completion=True)  # read once: what is done, and whether it holds data
    # A chunk failing its checksum is garbage: removed, its cells read as missing and are
    # redone (writing a block into it would fail reading it first).
    dropped = sw.drop_unreadable()
    if dropped:
        logger.warning("sweep: %d chunks of %s failed their checksum or could not be read: removed", dropped, sw.path)
    # The completion record's chunks all exist in a sound store: one deleted (or just
    # dropped) is written back as "not done", and its cells are recomputed below.
    try:
        restored = sw.restore_flags()
    except OSError as exc:
        raise _block_not_written(sw, exc) from exc
    if restored:
        logger.warning("sweep: %d chunks of the completion record of %s were missing: rewritten", restored, sw.path)
    damaged, misplaced = sw.damaged(state), sw.misplaced(state)
    if damaged.any():
        logger.warning(
            "sweep: %d cells of %s are marked done but hold no data: recomputing them", int(damaged.sum()), sw.path
        )
    if misplaced.any():
        logger.warning("sweep: %s: %s: recomputing them", sw.path, MISPLACED.format(n=int(misplaced.sum())))
    damaged |= misplaced
    done = state[COMPLETED].values.astype(bool) & ~damaged
    todo = []
    for b in blocks:
        cells = done[b.u0 : b.u1, b.p0 : b.p1, b.im]
        if cells.all():
            continue
        if cells.any():
            todo += [c for c in b.cells() if not done[c.u0, c.p0, c.im]]
        else:
            todo.append(b)
    return todo


def _run(blocks, args, finish, *, client, progress, repeats: int) -> None:
    """Run ``compute_block`` for every block, handing each result to ``finish`` as it lands."""
    # The bar counts cells: a cell split into runs of its repeats counts once, with its last run.
    sizes = [b.n_cells if b.r1 is None or b.r1 == repeats else 0 for b in blocks]
    # A window of 4 tasks per worker thread (at least 16) in flight: enough to keep every
    # worker busy, few enough that a 100,000-cell sweep is not 100,000 futures.
    with connect(client) as c:
        window = None if c is None else max(16, 4 * task_slots(c))
        display = Display("ensstab sweep", "cell", sizes, enabled=progress)
        run_tasks(
            compute_block,
            [args(b) for b in blocks],
            client=c or "synchronous",
            display=display,
            on_result=lambda i, out: finish(blocks[i], out),
            window=window,
            pure=True,
        )
