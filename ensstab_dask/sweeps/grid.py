"""A sweep's grid: its cells, what they cost, how they are grouped into Dask tasks
(:class:`Block`), what one task computes (:func:`compute_block`), and the validated
plan (:func:`make_plan`) that :func:`ensstab_dask.sweep` runs. The streams each cell
draws from are described in :mod:`ensstab_dask.sweeps.sweep`'s module docstring.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from ensstab_dask._version import __version__
from ensstab_dask.budget.cost import selector_seconds
from ensstab_dask.budget.memory import check_cell_memory
from ensstab_dask.checks import (
    AGGREGATES,
    check_choice,
    check_grid,
    check_int,
    check_model,
    check_problem,
    check_seed,
)
from ensstab_dask.indices import INDICES, check_index_defined
from ensstab_dask.seeding import STREAM_LAYOUT, SeedLike, Stream, derive
from ensstab_dask.simulator.estimators import simulated_n_useful
from ensstab_dask.simulator.kernel import simulated_stability
from ensstab_dask.sweeps.digests import chunk_codecs
from ensstab_dask.sweeps.storage import COMPLETED, DIGEST

__all__ = [
    "make_plan",
    "SweepRequest",
    "SweepPlan",
    "compute_block",
    "plan_blocks",
    "Block",
    "cell_seconds",
    "STREAM_LAYOUT",
    "block_dataset",
    "sweep_dataset",
]

TARGET_TASK_SECONDS = 0.5
MIN_TASKS = 64  # small sweeps are still cut into enough tasks to keep every worker busy
DIMS = ("n_useful", "p", "m_ensemble")


def cell_seconds(n_feature: int, m: int, m_stability: int, n_runs: int, repeats: int) -> float:
    """Rough cost of one cell, for batching only (it never affects results): its simulated
    selectors at :func:`selector_seconds`, plus a fixed cost per library call (seeding,
    aggregation, the stability index)."""
    return repeats * ((m_stability * m + n_runs) * selector_seconds(n_feature) + 1.5e-3)


@dataclass(frozen=True)
class Block:
    """A rectangle of cells at one m_ensemble: rows ``u0:u1`` and columns ``p0:p1``, and
    of their repeats ``r0:r1`` (None: to the last)."""

    im: int
    u0: int
    u1: int
    p0: int
    p1: int
    r0: int = 0
    r1: int | None = None

    def region(self) -> dict[str, slice]:
        # A store's chunks and completion flags are per cell: its blocks hold every repeat.
        assert self.r0 == 0 and self.r1 is None, "a block of a store holds all of its cells' repeats"
        return {
            "n_useful": slice(self.u0, self.u1),
            "p": slice(self.p0, self.p1),
            "m_ensemble": slice(self.im, self.im + 1),
        }

    def cells(self) -> list[Block]:
        """The block as one-cell blocks."""
        return [
            Block(self.im, iu, iu + 1, ip, ip + 1) for iu in range(self.u0, self.u1) for ip in range(self.p0, self.p1)
        ]

    @property
    def n_cells(self) -> int:
        return (self.u1 - self.u0) * (self.p1 - self.p0)


def plan_blocks(
    n_u: int, n_p: int, cell_cost: Sequence[float], *, batch_size: int | None = None, repeats: int | None = None
) -> list[Block]:
    """Group cells into blocks of about TARGET_TASK_SECONDS (or ``batch_size`` cells).

    A block is whole ``n_useful`` rows (all of ``p``) or a run of ``p`` in one row, at
    one m_ensemble. ``cell_cost[im]`` is the cost of one cell at ``m_ensemble[im]``.
    Small sweeps get shorter tasks, so that there are at least ``MIN_TASKS`` of them.
    With ``repeats`` (a sweep held in memory), a cell that costs more than a task is
    split into runs of its ``repeats``: the estimate's one-cell predictions would
    otherwise wait on their largest ensemble's cell, one worker busy and the rest idle.
    A repeat's draws do not depend on its block, so splitting changes no number.
    """
    target = min(TARGET_TASK_SECONDS, n_u * n_p * sum(cell_cost) / MIN_TASKS)
    blocks = []
    for im, cost in enumerate(cell_cost):
        cells = batch_size if batch_size is not None else max(1, int(target / max(cost, 1e-9)))
        if repeats is not None and batch_size is None and cost > 2 * target:
            step = -(-repeats // min(repeats, int(cost / target)))  # ceil: about `target` per block
            blocks += [
                Block(im, u, u + 1, p, p + 1, r, min(r + step, repeats))
                for u in range(n_u)
                for p in range(n_p)
                for r in range(0, repeats, step)
            ]
        elif cells >= n_p:
            rows = max(1, cells // n_p)
            blocks += [Block(im, u, min(u + rows, n_u), 0, n_p) for u in range(0, n_u, rows)]
        else:
            blocks += [Block(im, u, u + 1, p, min(p + cells, n_p)) for u in range(n_u) for p in range(0, n_p, cells)]
    return blocks


def compute_block(
    settings: dict,
    n_useful: Sequence[int],
    p: Sequence[float],
    m: int,
    n_runs: int,
    r0: int = 0,
    r1: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Raw draws of one block: two float arrays of shape (len(n_useful), len(p), repeats),
    the repeats ``r0:r1`` (default: all).

    Pure function of its arguments (see the module docstring for the streams); this is
    what each Dask task runs.
    """
    N, K, seed = settings["n_feature"], settings["n_target"], settings["seed"]
    R = range(r0, settings["repeats"] if r1 is None else r1)
    stab = np.empty((len(n_useful), len(p), len(R)))
    nuv = np.empty((len(n_useful), len(p), len(R)))
    for i, u in enumerate(n_useful):
        for j, pj in enumerate(p):
            for k, r in enumerate(R):
                stab[i, j, k] = simulated_stability(
                    N,
                    K,
                    int(u),
                    float(pj),
                    m_ensemble=m,
                    m_stability=settings["m_stability"],
                    aggregate=settings["aggregate"],
                    index=settings["index"],
                    seed=derive(seed, Stream.SWEEP_STABILITY, m, r),
                    # Recorded only for the two-level model: stores of the paper's model are unchanged.
                    variant=settings.get("model", "onda"),
                    h=settings.get("h"),
                )
                nuv[i, j, k] = simulated_n_useful(
                    N,
                    K,
                    int(u),
                    float(pj),
                    n_runs=n_runs,
                    seed=derive(seed, Stream.SWEEP_N_USEFUL_V, n_runs, r),
                )
    return stab, nuv


def _summary(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = draws.mean(axis=-1)
    std = draws.std(axis=-1, ddof=1) if draws.shape[-1] > 1 else np.full(draws.shape[:-1], np.nan)
    return mean, std


def _var_attrs(index: str) -> dict[str, dict]:
    # Short long_names (xarray's .plot wraps labels at 30 characters, units included) and
    # no units on dimensionless values (xarray would print "[1]"); the rest is in description.
    return {
        "stability": {
            "long_name": f"stability ({index})",
            "description": f"simulated ensemble stability ({index} index), mean over repeats",
        },
        "stability_std": {
            "long_name": "stability s.d.",
            "description": f"standard deviation of the simulated stability ({index}) over repeats",
        },
        "n_useful_v": {
            "long_name": "n_useful_v (A[f])",
            "units": "features",
            "description": "n_useful recomputed on the simulator, A[f_{u,p}], mean over repeats",
        },
        "n_useful_v_std": {
            "long_name": "n_useful_v s.d.",
            "units": "features",
            "description": "standard deviation of n_useful_v over repeats",
        },
        "stability_draws": {
            "long_name": f"stability ({index})",
            "description": f"simulated ensemble stability ({index} index), one value per repeat",
        },
        "n_useful_v_draws": {
            "long_name": "n_useful_v (A[f])",
            "units": "features",
            "description": "A[f_{u,p}], one value per repeat",
        },
    }


def _coords(grid: dict[str, np.ndarray], n_runs: np.ndarray, repeats: int) -> dict:
    # Short long_names and no units on p (a probability): see _var_attrs.
    return {
        "n_useful": (
            "n_useful",
            grid["n_useful"],
            {"long_name": "n_useful", "units": "features", "description": "size of S', the simulated useful features"},
        ),
        "p": (
            "p",
            grid["p"],
            {"long_name": "p", "description": "probability of picking the next feature from S_m"},
        ),
        "m_ensemble": (
            "m_ensemble",
            grid["m_ensemble"],
            {"long_name": "m_ensemble", "units": "selectors", "description": "weak selectors per ensemble"},
        ),
        "n_runs": (
            "m_ensemble",
            n_runs,
            {"long_name": "n_runs", "units": "runs", "description": "runs behind each n_useful_v"},
        ),
        "repeat": ("repeat", np.arange(repeats), {"long_name": "repeat", "description": "independent repeat"}),
    }


def sweep_dataset(grid, n_runs, settings: dict, stab_draws, nuv_draws) -> xr.Dataset:
    """The sweep Dataset from raw draws (NumPy, or lazy NaN for a store's template)."""
    attrs = _var_attrs(settings["index"])
    if isinstance(stab_draws, np.ndarray):
        stab, stab_std = _summary(stab_draws)
        nuv, nuv_std = _summary(nuv_draws)
    else:  # template: lazy all-NaN arrays with the draws' chunking, minus repeat
        stab = stab_std = nuv = nuv_std = stab_draws[..., 0]
    data = {
        "stability": (DIMS, stab),
        "stability_std": (DIMS, stab_std),
        "n_useful_v": (DIMS, nuv),
        "n_useful_v_std": (DIMS, nuv_std),
        "stability_draws": (DIMS + ("repeat",), stab_draws),
        "n_useful_v_draws": (DIMS + ("repeat",), nuv_draws),
    }
    ds = xr.Dataset(
        {k: (d, v, attrs[k]) for k, (d, v) in data.items()}, coords=_coords(grid, n_runs, settings["repeats"])
    )
    import dask

    ds.attrs.update(
        title="ensstab_dask sweep of the simulated weak selector",
        kind="sweep",
        **{k: ("m_ensemble" if v is None else v) for k, v in settings.items()},
        common_random_numbers="shared across p within each (n_useful, m_ensemble, repeat)",
        ensstab_dask_version=__version__,
        numpy_version=np.__version__,
        dask_version=dask.__version__,
        xarray_version=xr.__version__,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
    return ds


def block_dataset(stab: np.ndarray, nuv: np.ndarray, index: str) -> xr.Dataset:
    """A block's variables, shaped for a region write (adds the m_ensemble axis)."""
    stab, nuv = stab[:, :, None, :], nuv[:, :, None, :]
    s_mean, s_std = _summary(stab)
    v_mean, v_std = _summary(nuv)
    attrs = _var_attrs(index)
    data = {
        "stability": (DIMS, s_mean),
        "stability_std": (DIMS, s_std),
        "n_useful_v": (DIMS, v_mean),
        "n_useful_v_std": (DIMS, v_std),
        "stability_draws": (DIMS + ("repeat",), stab),
        "n_useful_v_draws": (DIMS + ("repeat",), nuv),
    }
    return xr.Dataset({k: (d, v, attrs[k]) for k, (d, v) in data.items()})


@dataclass(frozen=True)
class SweepPlan:
    """A validated sweep: its grid and settings; makes the blocks and their task arguments."""

    settings: dict
    grid: dict
    runs: np.ndarray  # n_runs for each m_ensemble
    costs: tuple  # estimated seconds per cell for each m_ensemble

    @property
    def shape(self) -> tuple[int, int, int]:
        n_u, n_p, n_m = (len(self.grid[d]) for d in DIMS)
        return n_u, n_p, n_m

    def blocks(self, batch_size: int | None = None, *, split_repeats: bool = False) -> list[Block]:
        """The tasks' blocks; ``split_repeats`` (no store) may split a costly cell's repeats."""
        n_u, n_p, _ = self.shape
        repeats = self.settings["repeats"] if split_repeats else None
        return plan_blocks(n_u, n_p, self.costs, batch_size=batch_size, repeats=repeats)

    def task_args(self, b: Block) -> tuple:
        """Arguments of ``compute_block`` for ``b``: small, so a task is cheap to ship."""
        return (
            self.settings,
            self.grid["n_useful"][b.u0 : b.u1].tolist(),
            self.grid["p"][b.p0 : b.p1].tolist(),
            int(self.grid["m_ensemble"][b.im]),
            int(self.runs[b.im]),
            b.r0,
            b.r1,
        )

    def store_settings(self) -> dict:
        """What a store must agree on to be resumed: the settings and the grid."""
        return dict(self.settings, **{k: self.grid[k].tolist() for k in DIMS})

    def template(self) -> xr.Dataset:
        """The store's template: every variable NaN (lazily), ``completed`` all 0."""
        import dask.array as da

        n_u, n_p, n_m = self.shape
        repeats = self.settings["repeats"]
        # One zarr chunk per (n_useful row, m_ensemble): few files, whatever the batching.
        # Blocks need not align with chunks: only the client writes, one block at a time,
        # and zarr replaces each chunk file atomically. The lazy arrays are one dask chunk
        # each (a tiny graph, never computed); the zarr chunks come from the encoding.
        lazy = da.full((n_u, n_p, n_m, repeats), np.nan, chunks=-1)
        template = sweep_dataset(self.grid, self.runs, self.settings, lazy, lazy)
        template[COMPLETED] = (
            DIMS,
            da.zeros((n_u, n_p, n_m), dtype=np.int8, chunks=-1),
            {"long_name": "1 once the cell's block has been written (completion record)"},
        )
        template[DIGEST] = (
            DIMS,
            da.zeros((n_u, n_p, n_m), dtype=np.int64, chunks=-1),
            {"long_name": "keyed digest of the cell's values and place (storage.cell_digests)"},
        )
        for var in template.data_vars.values():
            var.encoding["chunks"] = (1, n_p, 1, repeats)[: var.ndim]
        for variable in template.variables.values():
            # A CRC-32C of every chunk, coordinates included: a flipped bit is read as an
            # error (a damaged chunk, recomputed by a rerun), never as a changed value.
            variable.encoding["compressors"] = chunk_codecs()
        return template


@dataclass(frozen=True)
class SweepRequest:
    """A sweep's grid and settings as :func:`~ensstab_dask.sweep` takes them (see there),
    before :func:`make_plan` validates them."""

    n_feature: int
    n_target: int
    n_useful: Any
    p: Any
    m_ensemble: Any
    m_stability: int = 50
    n_runs: int | None = None
    repeats: int = 10
    aggregate: str = "mean_rank"
    index: str = "jaccard"
    seed: SeedLike = 0
    model: str = "onda"
    h: int | None = None


def make_plan(request: SweepRequest) -> SweepPlan:
    """Validate a sweep's arguments into a :class:`SweepPlan`."""
    req = request
    n_feature, n_target, _ = check_problem(req.n_feature, req.n_target)
    grid = {
        "n_useful": check_grid(req.n_useful, "n_useful", "n_useful", n_feature, n_target),
        "p": check_grid(req.p, "p", "p", n_feature, n_target),
        "m_ensemble": check_grid(req.m_ensemble, "m_ensemble", "m", n_feature, n_target),
    }
    # h is one value for the whole grid, so it must fit under its smallest n_useful.
    h = check_model(req.model, req.h, n_target, int(grid["n_useful"].min()))
    m_stability = check_int(req.m_stability, "m_stability", minimum=2)
    n_runs = None if req.n_runs is None else check_int(req.n_runs, "n_runs", minimum=1)
    repeats = check_int(req.repeats, "repeats", minimum=1)
    aggregate = check_choice(req.aggregate, "aggregate", AGGREGATES)
    index = check_choice(req.index, "index", INDICES)
    runs = np.asarray(grid["m_ensemble"]) if n_runs is None else np.full(len(grid["m_ensemble"]), n_runs)
    check_cell_memory(n_feature, n_target, int(grid["m_ensemble"].max()), m_stability, int(runs.max()))
    check_index_defined(index, n_feature, n_target)
    seed = check_seed(req.seed)
    settings = dict(
        n_feature=n_feature,
        n_target=n_target,
        m_stability=m_stability,
        n_runs=n_runs,
        repeats=repeats,
        aggregate=aggregate,
        index=index,
        seed=seed,
        stream_layout=STREAM_LAYOUT,
    )
    if h is not None:
        settings.update(model=req.model, h=h)
    runs = grid["m_ensemble"] if n_runs is None else np.full(len(grid["m_ensemble"]), n_runs, dtype=np.int64)
    costs = tuple(
        cell_seconds(n_feature, int(m), m_stability, int(r), repeats) for m, r in zip(grid["m_ensemble"], runs)
    )
    return SweepPlan(settings, grid, runs, costs)
