"""The real runs of an estimate, cached: each run is paid for once per data, selector and seed.

A real run's ranks depend only on the data, the selector, what the run sees of the data
(a pool's ``resample``, the copies' ``layout``), its seed and the meaning of the streams
(:mod:`ensstab_dask.real.runs`): not on ``n_target``, the sizes asked or how the runs are
batched. So one cache entry per pool or per design of copies serves every estimate that
asks for some of its runs, and grows when one asks for more: a pool of k runs becomes a
pool of n by running runs ``k .. n`` alone (``Pool(first=k)``); a design of copies grows
by exactly the members each copy lacks (each copy's members made are a prefix, recorded
in ``members_made``), so that 10 copies of 20 asked after 20 copies of 10 (the adaptive
layout's first round after the fixed layout, or the other way round) make 100 runs, not
the 200 of a full 20 x 20. A run read back is the run computed, bit for bit.

An entry is one netCDF file, ``runs-<key>.nc``: the ranks as ``int32`` (every rank fits),
dims ``(run, feature)`` or ``(copy, member, feature)`` (0 where a copy's member is not
made), each run's digest (:func:`run_digests`), and in its ``attrs`` what it was made
from (:meth:`RunCache.provenance`) and the seconds a run took, checksummed
(:mod:`ensstab_dask.real.cache_files`). An entry is reused only when its record equals
this one's, every field it holds is of its type and range, and its runs are permutations
of the ranks that match their digests. The key hashes the data's digest, the selector
(its class, ``get_params(deep=True)`` and the scikit-learn version; a plain callable is
described by its name alone, so it is never cached, as the naive check does), the kind of
runs, the seed's entropy and spawn key, :data:`~ensstab_dask.seeding.STREAM_LAYOUT` and
a format number. A damaged entry is recomputed and replaced, with a warning on the
``ensstab_dask.cache`` logger; entries are never evicted (about 4 bytes per feature and
run: 200 runs of 20,000 features are 16 MB).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import xarray as xr

from ensstab_dask.outputs import attr_value
from ensstab_dask.real.cache_files import check_cache_dir, data_digest, read_checked, write_checked
from ensstab_dask.real.runs import Copies, Pool
from ensstab_dask.real.selectors import make_scorer
from ensstab_dask.seeding import STREAM_LAYOUT, as_seed_sequence

__all__ = ["RunCache", "selector_key", "grow_copies", "run_digests", "CacheEntry", "cache_entries"]

logger = logging.getLogger("ensstab_dask.cache")

#: What the cache folder holds: the real runs (``runs-<key>.nc``) and the naive curves of
#: ``validate`` (``naive-<key>.nc``, :mod:`ensstab_dask.estimates.validation.harness`).
_ENTRY_NAMES = ("runs-*.nc", "naive-*.nc")


@dataclass(frozen=True)
class CacheEntry:
    """One entry of a cache folder: its file, its size in bytes and when it was last written."""

    path: Path
    size: int
    modified: float


def cache_entries(cache_dir: str | os.PathLike) -> list[CacheEntry]:
    """The entries of a cache folder, oldest first: only files named as the cache names them,
    so that clearing it never touches anything else; none where the folder does not exist."""
    root = Path(cache_dir)
    if not root.is_dir():
        return []
    found = []
    for pattern in _ENTRY_NAMES:
        for path in root.glob(pattern):
            st = path.lstat()
            if path.is_file() and not path.is_symlink():
                found.append(CacheEntry(path, st.st_size, st.st_mtime))
    return sorted(found, key=lambda e: (e.modified, e.path.name))


# Bump when what a cached run holds, or how its runs are drawn, changes: old entries then miss.
_RUNS_FORMAT = 3


class _Uncacheable(Exception):
    """A selector's parameter that no key describes (a lambda, an object without parameters)."""


def _param(value):
    """A parameter's value as JSON for the key: an estimator by its class (its own
    parameters are among ``get_params(deep=True)``), a function of scikit-learn, NumPy or
    SciPy by its full name (a user's own function could change under its name); anything
    else a key cannot tell apart is uncacheable."""
    if hasattr(value, "get_params"):
        return f"{type(value).__module__}.{type(value).__qualname__}"
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    name = getattr(value, "__qualname__", None)
    module = getattr(value, "__module__", None) or ""
    if callable(value) and name and "<" not in name and module.split(".")[0] in _VERSIONED:
        return f"{module}.{name}"
    raise _Uncacheable(type(value).__name__)


#: Libraries whose functions a key may name: their versions are in the key.
_VERSIONED = ("sklearn", "numpy", "scipy")


def selector_key(selector) -> str | None:
    """What identifies a selector's runs: its class, every parameter
    (``get_params(deep=True)``, but the ``random_state`` each run overrides) and the
    scikit-learn version, and how the scorer reads the importances, as JSON: the selector
    as :func:`~ensstab_dask.real.selectors.make_scorer` makes it (None: the default forest),
    or a scorer it made. None for what cannot be keyed: a plain callable
    (its name alone does not identify it) or a parameter with no stable description."""
    import scipy
    import sklearn

    scorer = selector if hasattr(selector, "estimator") and not hasattr(selector, "get_params") else None
    scorer = scorer if scorer is not None else make_scorer(selector)
    selector = getattr(scorer, "estimator", None)
    if not hasattr(selector, "get_params"):  # a plain callable
        return None
    extra = {k: v for k, v in vars(scorer).items() if k != "estimator"}  # how importances are read, ...
    params = {
        k: v
        for k, v in selector.get_params(deep=True).items()
        if k != "random_state" and not k.endswith("__random_state")
    }
    kind = f"{type(selector).__module__}.{type(selector).__qualname__}"
    try:
        versions = [sklearn.__version__, np.__version__, scipy.__version__]
        return json.dumps([kind, params, extra, versions], sort_keys=True, default=_param)
    except (_Uncacheable, TypeError, ValueError):
        return None


def grow_copies(old: np.ndarray, extra_members: np.ndarray | None, extra_copies: np.ndarray | None) -> np.ndarray:
    """The copy ranks of the grown design: ``old`` (G, B, F), its copies' new members
    (G, B2 - B, F) and the new copies (G2 - G, B2, F)."""
    ranks = old if extra_members is None else np.concatenate([old, extra_members], axis=1)
    return ranks if extra_copies is None else np.concatenate([ranks, extra_copies], axis=0)


def _start(item: Pool | Copies) -> Pool | Copies:
    """The item as a block from the start: what one cache entry holds."""
    return replace(item, first=0) if isinstance(item, Pool) else replace(item, first_copy=0, first_member=0)


def _extent(item: Pool | Copies) -> tuple[int, ...]:
    """How far into its entry an item reaches: runs, or (copies, members)."""
    if isinstance(item, Pool):
        return (item.first + item.n_runs,)
    return (item.first_copy + item.copies, item.first_member + item.members)


@dataclass(frozen=True)
class _Grid:
    """A copies entry as stored: ranks ``(copy, member, feature)``, and how many members of
    each copy are made (a prefix; the rest of its row is 0)."""

    ranks: np.ndarray
    made: np.ndarray

    @property
    def runs(self) -> int:
        return int(self.made.sum())


#: What the cache holds of an entry: a pool's ranks, or a copies entry's grid.
Stored = np.ndarray | _Grid


@dataclass
class RunCache:
    """Where real runs are cached (``root``) for one data set (``data``, its digest) and one
    selector (``selector``, :func:`selector_key`). ``reused`` and ``fresh`` count the runs
    asked for that came from the cache, and the runs made (:meth:`run`), since it was
    opened; ``fresh_seconds`` is the wall time of the runs made, ``reused_seconds`` what
    the reused ones took when they were made (each entry records its seconds per run; NaN
    once an entry that did not is reused)."""

    root: Path
    data: str
    selector: str
    reused: int = 0
    fresh: int = 0
    fresh_seconds: float = 0.0
    reused_seconds: float = 0.0

    @classmethod
    def open(cls, cache_dir: str | os.PathLike, X, y, selector, *, digest: str | None = None) -> RunCache | None:
        """The cache in ``cache_dir`` (an existing folder, checked before any work) for these
        data and this selector (or its scorer); None when the selector cannot be keyed.
        ``digest``: the data's :func:`~ensstab_dask.real.cache_files.data_digest` where the
        caller made it already (every group of one X, hashed once)."""
        check_cache_dir(cache_dir)
        key = selector_key(selector)
        if key is None:
            logger.info("real runs not cached: the selector is a plain callable (or has a parameter no key describes)")
            return None
        return cls(Path(cache_dir), data_digest(X, y) if digest is None else digest, key)

    def provenance(self, item: Pool | Copies) -> dict[str, str | int]:
        """What an item's entry is made from, as its ``attrs`` record it: the data's digest,
        the selector's key, the kind of runs and their resample or layout, the seed's entropy
        and spawn key, the streams' layout and the entry format."""
        ss = as_seed_sequence(item.seed)
        return {
            "data_digest": self.data,
            "selector": self.selector,
            "runs_of": "pool" if isinstance(item, Pool) else "copies",
            "layout": str(item.resample) if isinstance(item, Pool) else item.layout,
            "seed": json.dumps([str(ss.entropy), [int(k) for k in ss.spawn_key], int(ss.pool_size)]),
            "stream_layout": STREAM_LAYOUT,
            "format": _RUNS_FORMAT,
        }

    def key(self, item: Pool | Copies) -> str:
        """The entry an item's runs live in: the same for every block and size of one pool or
        design, another for other data, selector, resample or layout, seed, stream layout or
        format (:meth:`provenance`). A BLAKE2b hex digest."""
        text = json.dumps(self.provenance(item), sort_keys=True)
        return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()

    def path(self, item: Pool | Copies) -> Path:
        """The entry's file."""
        return self.root / f"runs-{self.key(item)}.nc"

    def _read(self, item: Pool | Copies, n_feature: int) -> tuple[Stored | None, float]:
        """The entry's runs (a pool's ranks, or a copies entry's :class:`_Grid`), or None (none
        yet, damaged, or not what :func:`_not_these_runs` expects), and the wall seconds per
        run they took when made (NaN: not recorded)."""
        path = self.path(item)
        if not path.exists():
            return None, float("nan")
        ds = read_checked(path, logger=logger, what="cache entry")
        if ds is None:
            return None, float("nan")
        why = _not_these_runs(ds, {"key": self.key(item), **self.provenance(item)}, _dims(item), n_feature)
        if why is not None:
            logger.warning("cache entry %s not reused: %s; recomputing it", path, why)
            return None, float("nan")
        ranks = np.asarray(ds["ranks"].values).astype(np.int64)
        stored = ranks if isinstance(item, Pool) else _Grid(ranks, np.asarray(ds["members_made"].values, dtype=int))
        return stored, float(attr_value(ds.attrs["seconds_per_run"]))

    def _write(self, item: Pool | Copies, stored: Stored, seconds_per_run: float) -> None:
        dims, key = _dims(item), self.key(item)
        ranks = stored if isinstance(stored, np.ndarray) else stored.ranks
        variables: dict[str, tuple] = {
            "ranks": (dims, ranks.astype(np.int32), {"long_name": "rank of each feature in a real run (1 best)"}),
            "run_digest": (dims[:-1], run_digests(key, ranks), {"long_name": "digest of each run's ranks"}),
        }
        if isinstance(stored, _Grid):
            made = {"long_name": "members made of each copy (the first ones; the others' ranks are 0)"}
            variables["members_made"] = ("copy", stored.made.astype(np.int32), made)
        ds = xr.Dataset(
            variables,
            coords={dim: np.arange(n) for dim, n in zip(dims[:-1], ranks.shape[:-1])},
            attrs={"key": key, **self.provenance(item), "seconds_per_run": seconds_per_run},
        )
        write_checked(ds, self.path(item), logger=logger, what="cache entry")

    def holds(self, plan: Sequence[Pool | Copies], n_feature: int) -> bool:
        """Whether every run of ``plan`` is in the cache already (:meth:`run` would make none)."""
        return not self.missing(plan, n_feature)

    def _entries(self, plan: Sequence[Pool | Copies], n_feature: int) -> tuple[dict, dict, dict]:
        """Each entry ``plan`` reaches into (from the start, as far as its items reach), what
        the cache holds of it (ranks and seconds per run), and the blocks it lacks."""
        entries: dict[str, tuple[Pool | Copies, tuple[int, ...]]] = {}
        for item in plan:
            key, reach = self.key(item), _extent(item)
            old = entries.get(key, (item, reach))[1]
            entries[key] = (_start(item), tuple(max(a, b) for a, b in zip(old, reach)))
        read = {key: self._read(item, n_feature) for key, (item, _) in entries.items()}
        missing = {key: _missing(item, reach, read[key][0]) for key, (item, reach) in entries.items()}
        return entries, read, missing

    def survey(self, plan: Sequence[Pool | Copies], n_feature: int) -> tuple[list[Pool | Copies], float]:
        """What :meth:`run` would make for ``plan`` (its blocks, in the order it asks for
        them) and the wall seconds per run its entries recorded when their runs were made
        (their mean; NaN where none holds a run or recorded its time): one read of the entries."""
        _, read, missing = self._entries(plan, n_feature)
        rates = [rate for stored, rate in read.values() if stored is not None and np.isfinite(rate) and rate > 0]
        blocks = [block for blocks in missing.values() for block in blocks]
        return blocks, float(np.mean(rates)) if rates else float("nan")

    def missing(self, plan: Sequence[Pool | Copies], n_feature: int) -> list[Pool | Copies]:
        """The blocks of runs :meth:`run` would make for ``plan``, in the order it asks for them."""
        return self.survey(plan, n_feature)[0]

    def run(
        self,
        plan: Sequence[Pool | Copies],
        n_feature: int,
        run_plan: Callable[[list], list[np.ndarray]],
        *,
        seconds_per_run: float | None = None,
    ) -> list[np.ndarray]:
        """Every item of ``plan``, as :func:`~ensstab_dask.real.runs.real_run_plan` returns
        them: what the cache holds read, only what it lacks run (``run_plan``, once, on
        every missing block of every entry), the entries grown and written back.
        ``seconds_per_run``: what a run made cost, when ``run_plan`` hands over runs made
        elsewhere (by default its own wall time over the runs)."""
        entries, read, missing = self._entries(plan, n_feature)
        stored = {key: ranks for key, (ranks, _) in read.items()}
        blocks = [block for key in entries for block in missing[key]]
        start = time.perf_counter()
        made = iter(run_plan(blocks) if blocks else [])
        # One submission for every block: its wall time is shared out by runs.
        fresh = sum(block.runs for block in blocks)
        rate = (time.perf_counter() - start) / fresh if fresh else float("nan")
        rate = rate if seconds_per_run is None or not fresh else seconds_per_run
        full = {}
        for key, (item, _) in entries.items():
            new = [next(made) for _ in missing[key]]
            full[key] = _joined(item, stored[key], missing[key], new)
            if new:
                self._write(item, full[key], _mean_rate(stored[key], read[key][1], full[key], rate))
        self.fresh += fresh
        self.fresh_seconds += rate * fresh if fresh else 0.0
        out = []
        for item in plan:
            out.append(_part(item, full[self.key(item)]))
            reused = item.runs - _not_held(item, stored[self.key(item)])
            self.reused += reused
            if reused:
                self.reused_seconds += reused * read[self.key(item)][1]
        return out


def _dims(item: Pool | Copies) -> tuple[str, ...]:
    return ("run", "feature") if isinstance(item, Pool) else ("copy", "member", "feature")


def run_digests(key: str, ranks: np.ndarray) -> np.ndarray:
    """A 64-bit BLAKE2b of each run's ranks (as ``int32``) with the entry's ``key`` and the
    run's place in it: a run moved to another place, or into another entry, fails it."""
    flat = np.ascontiguousarray(ranks.astype("<i4")).reshape(-1, ranks.shape[-1])
    out = np.empty(len(flat), dtype=np.uint64)
    for i, row in enumerate(flat):
        h = hashlib.blake2b(f"{key}/{i}".encode(), digest_size=8)
        h.update(row.tobytes())
        out[i] = int.from_bytes(h.digest(), "little")
    return out.reshape(ranks.shape[:-1])


def _not_these_runs(ds: xr.Dataset, expected: dict, dims: tuple[str, ...], n_feature: int) -> str | None:
    """Why a cache file that passed its checksum does not hold the runs its name says, or
    None: what it records it was made from (``expected``: the key and the provenance) differs;
    a field is not of its type or range (the ranks integers, ``members_made`` whole numbers
    up to the members, ``seconds_per_run`` a time: a number >= 0, or NaN where not recorded);
    its ranks have other dimensions or features; a made run is not a permutation of the
    features' ranks, or a run not made is not all 0; or its runs' digests
    (:func:`run_digests`) do not match them. A checksum can be recomputed by anyone who
    can write the folder: every field is checked as if it came from a stranger."""
    for name, value in expected.items():
        recorded = ds.attrs.get(name)
        if recorded is None:
            return f"it does not record its {name}"
        if str(attr_value(recorded)) != str(value):
            return f"it records another {name} than this estimate's ({_WHAT.get(name, name)})"
    if not _a_time(ds.attrs.get("seconds_per_run")):
        return "its seconds_per_run is not a time (a number of seconds >= 0)"
    ranks, digests = ds.get("ranks"), ds.get("run_digest")
    if ranks is None or digests is None or ranks.dims != dims or ranks.shape[-1] != n_feature:
        return f"it holds other runs than its name says (not {n_feature} features' ranks along {dims})"
    if ranks.dtype.kind not in "iu" or digests.dtype.kind not in "iu" or digests.shape != ranks.shape[:-1]:
        return "its ranks or digests are not integers, one digest per run"
    for dim, n in zip(dims[:-1], ranks.shape[:-1]):
        if not np.array_equal(ds[dim].values, np.arange(n)):
            return f"its runs are out of order (the {dim} coordinate is not 0, 1, 2, ...)"
    values = np.asarray(ranks.values)
    made = np.ones(values.shape[:-1], dtype=bool)
    if len(dims) == 3:
        recorded = ds.get("members_made")
        if recorded is None or recorded.dims != ("copy",) or recorded.dtype.kind not in "iu":
            return "it does not record the members made of each copy"
        counts = np.asarray(recorded.values)
        if (counts < 0).any() or (counts > values.shape[1]).any():
            return f"its members made are not from 0 to its {values.shape[1]} members"
        made = np.arange(values.shape[1])[None, :] < counts[:, None]
    flat = values[made].reshape(-1, n_feature)
    seen = np.zeros(flat.shape, dtype=bool)
    inside = (flat >= 1) & (flat <= n_feature)
    if inside.all():
        seen[np.arange(len(flat))[:, None], flat - 1] = True
    if not seen.all():
        return f"a run's ranks are not a permutation of 1 .. {n_feature}"
    if values[~made].any():
        return "a run not made holds ranks"
    if not np.array_equal(np.asarray(digests.values).astype(np.uint64), run_digests(str(ds.attrs["key"]), values)):
        return "its runs do not match their digests (a run was changed or moved)"
    return None


def _a_time(value) -> bool:
    """Whether a recorded ``seconds_per_run`` is a time: a real number >= 0, or NaN (not recorded)."""
    value = attr_value(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return value != value or 0 <= value < float("inf")


#: What each recorded field of a cache entry names, for the warning that it differs.
_WHAT = {
    "key": "the file was renamed or copied",
    "data_digest": "made from other data",
    "selector": "made by another selector or library version",
    "runs_of": "runs of another kind",
    "layout": "runs of another resample or layout",
    "seed": "made from another seed",
    "stream_layout": "random streams of another layout",
    "format": "another entry format",
}


def _mean_rate(stored: Stored | None, stored_rate: float, full: Stored, rate: float) -> float:
    """Seconds per run of an entry grown from ``stored`` (its runs at ``stored_rate``) to
    ``full`` by runs made at ``rate``: the mean over its runs (NaN if the stored runs'
    rate is not known)."""
    old = 0 if stored is None else _runs(stored)
    new = _runs(full) - old
    return rate if old == 0 else (old * stored_rate + new * rate) / (old + new)


def _runs(stored: Stored) -> int:
    """The runs an entry holds."""
    return len(stored) if isinstance(stored, np.ndarray) else stored.runs


def _made_members(stored: _Grid | None, copies: int) -> np.ndarray:
    """How many members of each of the first ``copies`` copies the entry holds (0 beyond it)."""
    made = np.zeros(copies, dtype=int)
    if stored is not None:
        n = min(copies, len(stored.made))
        made[:n] = stored.made[:n]
    return made


def _not_held(item: Pool | Copies, stored: Stored | None) -> int:
    """Runs of ``item`` that the stored entry does not hold."""
    if isinstance(item, Pool):
        have = 0 if stored is None else _runs(stored)
        held = max(0, min(item.first + item.n_runs, have) - item.first)
        return item.n_runs - held
    assert stored is None or isinstance(stored, _Grid)
    made = _made_members(stored, item.first_copy + item.copies)[item.first_copy :]
    held = np.clip(made - item.first_member, 0, item.members)
    return item.runs - int(held.sum())


def _missing(item: Pool | Copies, reach: tuple[int, ...], stored: Stored | None) -> list[Pool | Copies]:
    """The blocks that grow the stored entry of ``item`` (from the start) to ``reach``: the
    pool's next runs; or, for copies, the members each of the first ``reach[0]`` copies
    lacks up to ``reach[1]``, one block for each run of consecutive copies that lack the
    same members."""
    if isinstance(item, Pool):
        have = 0 if stored is None else _runs(stored)
        return [replace(item, n_runs=reach[0] - have, first=have)] if reach[0] > have else []
    assert stored is None or isinstance(stored, _Grid)
    made = _made_members(stored, reach[0])
    blocks: list[Pool | Copies] = []
    copy = 0
    while copy < reach[0]:
        end = copy
        while end < reach[0] and made[end] == made[copy]:
            end += 1
        if made[copy] < reach[1]:
            first = int(made[copy])
            blocks.append(
                replace(item, first_copy=copy, copies=end - copy, first_member=first, members=reach[1] - first)
            )
        copy = end
    return blocks


def _joined(item: Pool | Copies, stored: Stored | None, blocks: list, new: list[np.ndarray]) -> Stored:
    """The stored entry grown by the ``new`` runs of its missing ``blocks``."""
    if isinstance(item, Pool):
        assert stored is None or isinstance(stored, np.ndarray)
        return np.concatenate(([] if stored is None else [stored]) + new)
    assert stored is None or isinstance(stored, _Grid)
    n_feature = (new[0] if new else stored.ranks).shape[-1]  # type: ignore[union-attr]
    old = (0, 0) if stored is None else stored.ranks.shape[:2]
    G = max([old[0], *(b.first_copy + b.copies for b in blocks)])
    B = max([old[1], *(b.first_member + b.members for b in blocks)])
    ranks = np.zeros((G, B, n_feature), dtype=np.int64)
    made = _made_members(stored, G)
    if stored is not None:
        ranks[: old[0], : old[1]] = stored.ranks
    for block, runs in zip(blocks, new):
        copies = slice(block.first_copy, block.first_copy + block.copies)
        ranks[copies, block.first_member : block.first_member + block.members] = runs
        made[copies] = block.first_member + block.members
    return _Grid(ranks, made)


def _part(item: Pool | Copies, stored: Stored) -> np.ndarray:
    """The runs of ``item`` out of its entry's."""
    if isinstance(item, Pool):
        assert isinstance(stored, np.ndarray)
        return stored[item.first : item.first + item.n_runs].copy()
    assert isinstance(stored, _Grid)
    copies, members = (
        slice(item.first_copy, item.first_copy + item.copies),
        slice(item.first_member, item.first_member + item.members),
    )
    return stored.ranks[copies, members].copy()
