"""The real runs of an estimate, cached: each run is paid for once per data, selector and seed.

A real run's ranks depend only on the data, the selector, what the run sees of the data
(a pool's ``resample``, the copies' ``layout``), its seed and the meaning of the streams
(:mod:`ensstab_dask.real.runs`): not on ``n_target``, the sizes asked or how the runs are
batched. So one cache entry per pool or per design of copies serves every estimate that
asks for some of its runs, and grows when one asks for more: a pool of k runs becomes a
pool of n by running runs ``k .. n`` alone (``Pool(first=k)``), a design of G copies of B
members becomes G2 copies of B2 by running the old copies' new members and the new
copies (the blocks the rounds of a precision add). A run read back is the run computed,
bit for bit.

An entry is one netCDF file, ``runs-<key>.nc``: the ranks as ``int32`` (every rank fits),
dims ``(run, feature)`` or ``(copy, member, feature)``, each run's digest
(:func:`run_digests`), and in its ``attrs`` what it was made from
(:meth:`RunCache.provenance`), checksummed (:mod:`ensstab_dask.real.cache_files`). An
entry is reused only when its record equals this one's and its runs are permutations of
the ranks that match their digests. The key hashes the data's digest, the selector
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

from ensstab_dask.real.cache_files import attr_value, check_cache_dir, data_digest, read_checked, write_checked
from ensstab_dask.real.runs import Copies, Pool
from ensstab_dask.real.selectors import make_scorer
from ensstab_dask.seeding import STREAM_LAYOUT, as_seed_sequence

__all__ = ["RunCache", "selector_key", "grow_copies", "run_digests"]

logger = logging.getLogger("ensstab_dask.cache")

# Bump when what a cached run holds, or how its runs are drawn, changes: old entries then miss.
_RUNS_FORMAT = 2


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
    def open(cls, cache_dir: str | os.PathLike, X, y, selector) -> RunCache | None:
        """The cache in ``cache_dir`` (an existing folder, checked before any work) for these
        data and this selector (or its scorer); None when the selector cannot be keyed."""
        check_cache_dir(cache_dir)
        key = selector_key(selector)
        if key is None:
            logger.info("real runs not cached: the selector is a plain callable (or has a parameter no key describes)")
            return None
        return cls(Path(cache_dir), data_digest(X, y), key)

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

    def _read(self, item: Pool | Copies, n_feature: int) -> tuple[np.ndarray | None, float]:
        """The entry's runs, as the run functions return them, or None (none yet, damaged, or
        not what :func:`_not_these_runs` expects), and the wall seconds per run they took
        when made (NaN: not recorded)."""
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
        return np.asarray(ds["ranks"].values).astype(np.int64), float(ds.attrs.get("seconds_per_run", float("nan")))

    def _write(self, item: Pool | Copies, ranks: np.ndarray, seconds_per_run: float) -> None:
        dims, key = _dims(item), self.key(item)
        ds = xr.Dataset(
            {
                "ranks": (dims, ranks.astype(np.int32), {"long_name": "rank of each feature in a real run (1 best)"}),
                "run_digest": (dims[:-1], run_digests(key, ranks), {"long_name": "digest of each run's ranks"}),
            },
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

    def missing(self, plan: Sequence[Pool | Copies], n_feature: int) -> list[Pool | Copies]:
        """The blocks of runs :meth:`run` would make for ``plan``, in the order it asks for them."""
        return [block for blocks in self._entries(plan, n_feature)[2].values() for block in blocks]

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
        fresh = sum(_count(block) for block in blocks)
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
            reused = _count(item) - _overlap_fresh(item, stored[self.key(item)])
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
    its ranks have other dimensions or features; a run is not a permutation of the
    features' ranks; or its runs' digests (:func:`run_digests`) do not match them."""
    for name, value in expected.items():
        recorded = ds.attrs.get(name)
        if recorded is None:
            return f"it does not record its {name} (written by an older version)"
        if str(attr_value(recorded)) != str(value):
            return f"it records another {name} than this estimate's ({_WHAT.get(name, name)})"
    ranks, digests = ds.get("ranks"), ds.get("run_digest")
    if ranks is None or digests is None or ranks.dims != dims or ranks.shape[-1] != n_feature:
        return f"it holds other runs than its name says (not {n_feature} features' ranks along {dims})"
    for dim, n in zip(dims[:-1], ranks.shape[:-1]):
        if not np.array_equal(ds[dim].values, np.arange(n)):
            return f"its runs are out of order (the {dim} coordinate is not 0, 1, 2, ...)"
    values = np.asarray(ranks.values)
    flat = values.reshape(-1, n_feature)
    seen = np.zeros(flat.shape, dtype=bool)
    inside = (flat >= 1) & (flat <= n_feature)
    if inside.all():
        seen[np.arange(len(flat))[:, None], flat - 1] = True
    if not seen.all():
        return f"a run's ranks are not a permutation of 1 .. {n_feature}"
    if not np.array_equal(np.asarray(digests.values).astype(np.uint64), run_digests(str(ds.attrs["key"]), values)):
        return "its runs do not match their digests (a run was changed or moved)"
    return None


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


def _mean_rate(stored: np.ndarray | None, stored_rate: float, full: np.ndarray, rate: float) -> float:
    """Seconds per run of an entry grown from ``stored`` (its runs at ``stored_rate``) to
    ``full`` by runs made at ``rate``: the mean over its runs (NaN if the stored runs'
    rate is not known)."""
    old = 0 if stored is None else int(np.prod(stored.shape[:-1]))
    new = int(np.prod(full.shape[:-1])) - old
    return rate if old == 0 else (old * stored_rate + new * rate) / (old + new)


def _count(item: Pool | Copies) -> int:
    return item.n_runs if isinstance(item, Pool) else item.copies * item.members


def _overlap_fresh(item: Pool | Copies, stored: np.ndarray | None) -> int:
    """Runs of ``item`` that were not in the stored entry."""
    if stored is None:
        return _count(item)
    if isinstance(item, Pool):
        held = max(0, min(item.first + item.n_runs, len(stored)) - item.first)
        return item.n_runs - held
    copies = max(0, min(item.first_copy + item.copies, stored.shape[0]) - item.first_copy)
    members = max(0, min(item.first_member + item.members, stored.shape[1]) - item.first_member)
    return _count(item) - copies * members


def _missing(item: Pool | Copies, reach: tuple[int, ...], stored: np.ndarray | None) -> list[Pool | Copies]:
    """The blocks that grow the stored entry of ``item`` (from the start) to ``reach``: the
    pool's next runs; or the stored copies' new members, then the new copies."""
    if isinstance(item, Pool):
        have = 0 if stored is None else len(stored)
        return [replace(item, n_runs=reach[0] - have, first=have)] if reach[0] > have else []
    G, B = (0, 0) if stored is None else stored.shape[:2]
    G2, B2 = max(G, reach[0]), max(B, reach[1])
    blocks: list[Pool | Copies] = []
    if G and B2 > B:
        blocks.append(replace(item, copies=G, members=B2 - B, first_member=B))
    if G2 > G:
        blocks.append(replace(item, copies=G2 - G, members=B2, first_copy=G))
    return blocks


def _joined(item: Pool | Copies, stored: np.ndarray | None, blocks: list, new: list[np.ndarray]) -> np.ndarray:
    """The stored entry grown by the ``new`` runs of its missing ``blocks``."""
    if isinstance(item, Pool):
        return np.concatenate(([] if stored is None else [stored]) + new)
    if stored is None:
        return new[0]  # one block: every copy from the start
    members = [r for b, r in zip(blocks, new) if b.first_member]
    copies = [r for b, r in zip(blocks, new) if b.first_copy]
    return grow_copies(stored, members[0] if members else None, copies[0] if copies else None)


def _part(item: Pool | Copies, ranks: np.ndarray) -> np.ndarray:
    """The runs of ``item`` out of its entry's."""
    if isinstance(item, Pool):
        return ranks[item.first : item.first + item.n_runs].copy()
    copies, members = (
        slice(item.first_copy, item.first_copy + item.copies),
        slice(item.first_member, item.first_member + item.members),
    )
    return ranks[copies, members].copy()
