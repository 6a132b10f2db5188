"""The simulated weak selector (docs/method.md section 2) and simulated ensembles (section 3).

How the fast kernel draws exactly from the literal algorithm
------------------------------------------------------------
In the literal algorithm each step picks from ``S_m`` with probability ``p`` while both
pools are non-empty, and from the only non-empty pool otherwise; within a pool the pick
is uniform. So the *positions* at which ``S_m`` features are ranked and the *order* in
which the features of each pool come out are independent:

* positions: take an endless Bernoulli(p) sequence with success times
  ``s_1 < s_2 < ...`` (``s_i`` is a sum of ``i`` Geometric(p) gaps). The ``i``-th
  feature of ``S_m`` is ranked at ``q_i = min(s_i, n_feature - n_target + i)``: either
  the ``i``-th success comes first, or the other pool runs dry and every remaining
  ``S_m`` feature follows in a block at the end. The other features take the remaining
  positions ``o_1 < o_2 < ...``.
* order: the ``S_m`` features receive ``q_1..q_K`` in uniformly random order, and the
  other ``n_feature - n_target`` features receive ``o_1..`` in uniformly random order,
  where ``S_m`` itself is a uniformly random ``n_target``-subset of ``S'``.

The kernel draws ``K`` geometric gaps per selector (by inversion of one uniform each),
shuffles the ``o`` values (sorting random keys, ties re-drawn) and drops the ``q`` values into a
uniformly random ``K``-arrangement of the ``S'`` slots with ``K`` reverse Fisher-Yates
swaps; see ``tests/oracle.py`` for the literal algorithm it is tested against.

Common random numbers
---------------------
All draws are made in an order that does not depend on ``p``, and each ``q_i`` is a
non-increasing function of ``p`` for fixed draws (each ``o_j`` non-decreasing), while
the feature that receives ``q_i`` or ``o_j`` does not depend on ``p``. So, with one
seed, raising ``p`` moves every ``S_m`` feature up and every other feature down: the
simulated curves over ``p`` are smooth, which is what makes bisection on ``p`` work.

The two-level model
-------------------
``variant="two-level"`` (docs/two_level_model.md) gives each ensemble copy its own
preferred set ``H``, a uniformly random ``h``-subset of ``S'``, and draws every weak
selector's ``S_m`` of that copy from ``H``. Because the kernel treats every feature
outside ``S_m`` alike, this is exactly the paper's kernel run with ``n_useful = h``
(``S_m`` uniform in the first ``h`` slots) followed by one uniformly random
permutation of the first ``n_useful`` columns per copy: the copy's ``H`` is where the
first ``h`` slots land. ``h = n_useful`` gives the paper's model in distribution (not
draw for draw: ``variant="onda"`` draws the paper's model from its own streams).

Streams
-------
With parent seed ``s``, the kernel draws from five streams, one per kind of draw:
``derive(s, Stream.RANKINGS, k)`` for the geometric uniforms (k=0), the shuffle keys
(1), ties of two keys (2), longer ties (3) and the Fisher-Yates swaps (4). Each is
consumed row after row, so row ``r``'s draws do not depend on how many rows are made at
once (a memory setting, :func:`block_rows`) or on ``size``: ``simulate_rankings(size=5)``
is the start of ``size=6``. Ensemble tie-breaks come one ensemble after another from
``derive(s, Stream.ENSEMBLE_TIES)`` (one random permutation each), and the two-level
model's copy permutations one copy after another from ``derive(s, Stream.COPY_SETS)``.
What the stream layout fixes (``sweeps.grid.STREAM_LAYOUT``): these keys, the draw order
within a row, and the key width rule of :func:`key_dtype`; changing any of them changes
every seeded result.
"""

from __future__ import annotations

import numpy as np

from ensstab_dask.aggregation import aggregate_rankings
from ensstab_dask.checks import AGGREGATES, check_choice, check_int, check_model, check_simulator
from ensstab_dask.indices import check_index_defined, stability_of_subsets
from ensstab_dask.seeding import SeedLike, Stream, as_seed_sequence, make_rng

__all__ = ["simulate_rankings", "simulate_ensembles", "simulated_stability"]

# Working memory of one block of the kernel, in bytes (about three int64 arrays);
# small enough to stay in cache, large enough to amortise the per-block overhead.
_BLOCK_BYTES = 12 * 2**20
_BYTES_PER_CELL = 24


def block_rows(n_feature: int) -> int:
    """Rows of the kernel per block: bounds working memory whatever ``size`` is."""
    return max(1, _BLOCK_BYTES // (_BYTES_PER_CELL * n_feature))


def key_dtype(max_value: int) -> type:
    """Unsigned dtype of the shuffle keys: 32 bits while their random part (32 minus the
    bits of ``max_value``) keeps ties rare, i.e. for n_feature < 4096; else 64 bits."""
    return np.uint32 if int(max_value).bit_length() <= 12 else np.uint64


def _shuffle_rows(
    rng: np.random.Generator,
    values: np.ndarray,
    max_value: int,
    *,
    key_bits: int | None = None,
    tie_rngs: tuple[np.random.Generator, np.random.Generator] | None = None,
) -> np.ndarray:
    """Each row of ``values`` (distinct ints in ``[0, max_value]``) in uniformly random order.

    Returns an array of :func:`key_dtype` (``values`` in that dtype avoid a copy).

    Sorts random keys with the value packed into the low bits, which is faster here
    than NumPy's Fisher-Yates, then breaks the rare ties between random parts with
    fresh random draws, so the order is exactly uniform. The slot given to the ``j``-th
    value of a row depends only on the stream, not on the values: common random
    numbers survive. ``key_bits`` (tests only) keeps fewer random bits, to force ties.

    Every draw is consumed in row order (keys from ``rng``; ties of two from
    ``tie_rngs[0]``, longer ties from ``tie_rngs[1]``, both ``rng`` by default), so
    shuffling rows in several calls on the same generators gives what one call gives,
    provided each call but the last has an even number of rows (32-bit keys come two per
    64-bit draw).
    """
    pair_rng, group_rng = (rng, rng) if tie_rngs is None else tie_rngs
    M, L = values.shape
    b = int(max_value).bit_length()
    dtype = key_dtype(max_value)
    width = 32 if dtype is np.uint32 else 64
    raw = rng.bit_generator.random_raw((M * L * width + 63) // 64)
    keys = raw.view(dtype)[: M * L].reshape(M, L)
    random_mask = ((1 << width) - 1) >> b << b
    if key_bits is not None:
        random_mask &= ((1 << key_bits) - 1) << b
    keys &= dtype(random_mask)
    keys |= values if values.dtype == dtype else values.astype(dtype)
    keys.sort(axis=1)
    low = dtype((1 << b) - 1)
    tied = (keys[:, 1:] ^ keys[:, :-1]) <= low  # equal random parts
    keys &= low
    out = keys
    flat = np.flatnonzero(tied)  # sparse: much faster than a 2-D nonzero
    if flat.size:
        rows, cols = np.divmod(flat, L - 1)
        new_group = np.ones(len(rows), dtype=bool)
        new_group[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1] + 1)
        group = np.cumsum(new_group) - 1
        links = np.bincount(group)
        pairs = np.flatnonzero(new_group)[links == 1]
        swap = pair_rng.random(len(pairs)) < 0.5
        r, c = rows[pairs[swap]], cols[pairs[swap]]
        out[r, c], out[r, c + 1] = out[r, c + 1], out[r, c].copy()
        for g in np.flatnonzero(links > 1):
            first = np.flatnonzero(new_group)[g]
            r, c, n = rows[first], cols[first], links[g] + 1
            out[r, c : c + n] = group_rng.permutation(out[r, c : c + n])
    return out


class _KernelStreams:
    """The kernel's streams, one per kind of draw, each consumed in row order.

    With one stream for everything, a batch's swaps would come after its shuffle keys,
    so the draws of row r would depend on how rows are batched. With one stream per
    kind, batch after batch, row r's draws are the same however the rows are cut.
    """

    def __init__(self, ss: np.random.SeedSequence):
        self.uniforms, self.keys, self.pair_ties, self.group_ties, self.swaps = (
            make_rng(ss, Stream.RANKINGS, kind) for kind in range(5)
        )


def _ranking_block(
    streams: _KernelStreams, n_feature: int, n_target: int, n_useful: int, p: float, out: np.ndarray
) -> np.ndarray:
    """Fill ``out`` (shape (M, n_feature)) with the next M simulated rankings of ``streams``."""
    N, K, u, M = n_feature, n_target, n_useful, len(out)
    L = N - K
    # Draw order is fixed (uniforms, shuffle, swaps) whatever p is: common random numbers.
    uniforms = streams.uniforms.random((M, K))
    i = np.arange(1, K + 1, dtype=np.int64)
    if p == 0.0:
        q = np.broadcast_to(L + i, (M, K))
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            # Inversion: P(gap > x) = P(1 - U <= (1-p)^x) = (1-p)^x.
            gaps = np.floor(np.log1p(-uniforms) / np.log1p(-p)) + 1.0
        # p = 1 gives 0/-inf = -0 (gap 1); clip huge gaps, which cannot change q.
        gaps = np.clip(np.nan_to_num(gaps, nan=1.0, posinf=N + 1.0), 1.0, N + 1.0).astype(np.int64)
        q = np.minimum(np.cumsum(gaps, axis=1), L + i)
    out[:, :K] = q
    if L:
        # o: positions 1..N not in q, ascending in each row, then shuffled.
        free = np.ones((M, N), dtype=bool)
        free[np.arange(M)[:, None], q - 1] = False
        o: np.ndarray = np.broadcast_to(np.arange(1, N + 1, dtype=key_dtype(N)), (M, N))[free].reshape(M, L)
        out[:, K:] = _shuffle_rows(streams.keys, o, N, tie_rngs=(streams.pair_ties, streams.group_ties))
    # Reverse Fisher-Yates on the first u slots, K steps: slot i's value goes to a
    # uniformly random K-arrangement of the S' slots; S_m = where the q's land. Drawn
    # row-major (row after row), for the stream contract.
    # (Drawn (M, K), then laid out (K, M) so that each step reads a contiguous row.)
    swaps = np.ascontiguousarray(streams.swaps.integers(np.arange(K)[None, :], u, size=(M, K)).T)
    rows = np.arange(M)
    for t in range(K - 1, -1, -1):
        j = swaps[t]
        held = out[:, t].copy()
        out[:, t] = out[rows, j]
        out[rows, j] = held
    return out


class _RankingStream:
    """Rows of simulated rankings from one seed, produced block by block."""

    def __init__(self, seed: SeedLike, n_feature: int, n_target: int, n_useful: int, p: float):
        self._streams = _KernelStreams(as_seed_sequence(seed))
        self._args = (n_feature, n_target, n_useful, p)
        # Even batches: 32-bit shuffle keys come two per 64-bit draw (see _shuffle_rows).
        self._block = block_rows(n_feature) + block_rows(n_feature) % 2
        self._buffer = np.empty((0, n_feature), dtype=np.int64)

    def take(self, n: int) -> np.ndarray:
        parts = []
        need = n
        while need:
            if not len(self._buffer):
                rows = min(self._block, need + need % 2)  # at most one row more than asked for
                self._buffer = _ranking_block(
                    self._streams, *self._args, np.empty((rows, self._args[0]), dtype=np.int64)
                )
            got = self._buffer[:need]
            self._buffer = self._buffer[need:]
            parts.append(got)
            need -= len(got)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


class _CopySets:
    """The two-level model's per-copy permutations of ``S'``, one copy after another."""

    def __init__(self, ss: np.random.SeedSequence, n_useful: int):
        self._rng = make_rng(ss, Stream.COPY_SETS)
        self._u = n_useful

    def relabel(self, ranks: np.ndarray) -> np.ndarray:
        """Permute the first ``n_useful`` columns of each copy, in place.

        ``ranks`` has shape (copies, rows per copy, n_feature) and was drawn with
        ``n_useful = h``: column ``j < h`` moves to ``perm[j]``, so the copy's ``H`` is
        ``perm[:h]``, a uniformly random ``h``-subset of ``S'``.
        """
        g, m, _ = ranks.shape
        # Row by row from one generator: copy c's permutation does not depend on how many follow.
        perms = self._rng.permuted(np.tile(np.arange(self._u), (g, 1)), axis=1)
        head = np.empty_like(ranks[:, :, : self._u])
        np.put_along_axis(head, np.broadcast_to(perms[:, None, :], head.shape), ranks[:, :, : self._u], axis=2)
        ranks[:, :, : self._u] = head
        return ranks


def simulate_rankings(
    n_feature: int,
    n_target: int,
    n_useful: int,
    p: float,
    *,
    size: int = 1,
    seed: SeedLike = 0,
    variant: str = "onda",
    h: int | None = None,
    copy_size: int = 1,
) -> np.ndarray:
    """Rankings of ``size`` independent simulated weak selectors (docs/method.md section 2).

    Parameters
    ----------
    n_feature, n_target, n_useful : int
        ``1 <= n_target <= n_useful <= n_feature``. ``S' = range(n_useful)``.
    p : float
        Probability in [0, 1] of picking the next feature from ``S_m``.
    size : int
        Number of weak selectors, each with its own ``S_m``.
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)
    variant : {'onda', 'two-level'}
        ``'onda'``: the paper's model, every ``S_m`` drawn from ``S'``. ``'two-level'``:
        consecutive rows form ensemble copies of ``copy_size`` weak selectors, and each
        copy draws its ``S_m`` from its own ``H``, a random ``h``-subset of ``S'``
        (docs/two_level_model.md).
    h : int, optional
        ``n_target <= h <= n_useful``; with ``variant='two-level'`` only.
    copy_size : int
        Rows per copy (the last copy may be shorter); ``variant='two-level'`` only.

    Returns
    -------
    ranks : ndarray of int64, shape (size, n_feature)
        ``ranks[i, f]`` is the rank (1 = best) of feature ``f`` in selector ``i``.

    Examples
    --------
    >>> import numpy as np
    >>> import ensstab_dask as es
    >>> ranks = es.simulate_rankings(200, 5, 20, 0.7, size=3, seed=0)
    >>> ranks.shape
    (3, 200)
    >>> all(sorted(row) == list(range(1, 201)) for row in ranks.tolist())  # each row a permutation
    True
    >>> np.array_equal(es.simulate_rankings(200, 5, 20, 0.7, size=2, seed=0), ranks[:2])  # size=2 starts size=3
    True

    With ``p=1`` the top ``n_target`` of every selector is its ``S_m``, inside
    ``S' = range(n_useful)``:

    >>> top = es.simulate_rankings(200, 5, 20, 1.0, size=3, seed=0)
    >>> (top[:, :20] <= 5).sum(axis=1).tolist()
    [5, 5, 5]
    """
    n_feature, n_target, n_useful, p = check_simulator(n_feature, n_target, n_useful, p)
    h = check_model(variant, h, n_target, n_useful, name="variant")
    size = check_int(size, "size", minimum=0)
    copy_size = check_int(copy_size, "copy_size", minimum=1)
    ss = as_seed_sequence(seed)
    stream = _RankingStream(ss, n_feature, n_target, n_useful if h is None else h, p)
    out = stream.take(size) if size else np.empty((0, n_feature), dtype=np.int64)
    if h is not None and size:
        copies = _CopySets(ss, n_useful)
        full = size // copy_size * copy_size
        if full:
            copies.relabel(out[:full].reshape(-1, copy_size, n_feature))
        if full < size:
            copies.relabel(out[full:].reshape(1, -1, n_feature))
    return out


def top_subsets(ranks: np.ndarray, n_target: int) -> np.ndarray:
    """The top-``n_target`` features of each ranking (ranks are a permutation), sorted."""
    rows, cols = np.nonzero(ranks <= n_target)
    return cols.reshape(len(ranks), n_target)


def simulate_ensembles(
    n_feature: int,
    n_target: int,
    n_useful: int,
    p: float,
    *,
    m_ensemble: int = 1,
    size: int = 1,
    aggregate: str = "mean_rank",
    seed: SeedLike = 0,
    variant: str = "onda",
    h: int | None = None,
) -> np.ndarray:
    """Feature subsets chosen by ``size`` independent simulated ensembles (docs/method.md section 3).

    Each ensemble aggregates ``m_ensemble`` independent simulated weak selectors with
    ``aggregate`` (ties broken uniformly at random) and keeps ``n_target`` features.
    Ensemble ``e`` uses rows ``e*m_ensemble .. (e+1)*m_ensemble - 1`` of
    ``simulate_rankings(..., size=size * m_ensemble, seed=seed, variant=variant, h=h,
    copy_size=m_ensemble)``: with ``variant='two-level'`` each ensemble is one copy.

    Parameters
    ----------
    n_feature, n_target, n_useful, p
        The simulated weak selector, as in :func:`simulate_rankings`.
    m_ensemble : int
        Weak selectors per ensemble.
    size : int
        Number of ensembles.
    aggregate : {'mean_rank', 'median_rank', 'vote', 'reciprocal_rank'}
        How each ensemble combines its selectors' ranks
        (:func:`~ensstab_dask.aggregation.aggregate_rankings`).
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)
    variant : {'onda', 'two-level'}
    h : int, optional
        As in :func:`simulate_rankings`.

    Returns
    -------
    subsets : ndarray of int64, shape (size, n_target), each row sorted.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> subsets = es.simulate_ensembles(200, 5, 20, 0.7, m_ensemble=3, size=4, seed=0)
    >>> subsets.shape
    (4, 5)
    >>> bool((es.simulate_ensembles(200, 5, 20, 1.0, size=10, seed=0) < 20).all())  # p=1: only S' is picked
    True
    """
    n_feature, n_target, n_useful, p = check_simulator(n_feature, n_target, n_useful, p)
    h = check_model(variant, h, n_target, n_useful, name="variant")
    m_ensemble = check_int(m_ensemble, "m_ensemble", minimum=1)
    size = check_int(size, "size", minimum=1)
    check_choice(aggregate, "aggregate", AGGREGATES)
    ss = as_seed_sequence(seed)
    stream = _RankingStream(ss, n_feature, n_target, n_useful if h is None else h, p)
    copies = None if h is None else _CopySets(ss, n_useful)
    if m_ensemble == 1:
        # One ranking is a permutation: its top n_target has no ties for any aggregate.
        ranks = stream.take(size)
        if copies is not None:
            copies.relabel(ranks.reshape(size, 1, n_feature))
        return top_subsets(ranks, n_target)
    tie_rng = make_rng(ss, Stream.ENSEMBLE_TIES)
    group = max(1, block_rows(n_feature) // m_ensemble)
    out = np.empty((size, n_target), dtype=np.int64)
    for start in range(0, size, group):
        g = min(group, size - start)
        ranks = stream.take(g * m_ensemble).reshape(g, m_ensemble, n_feature)
        if copies is not None:
            copies.relabel(ranks)
        out[start : start + g] = aggregate_rankings(ranks, n_target, aggregate=aggregate, seed=tie_rng)
    return out


def simulated_stability(
    n_feature: int,
    n_target: int,
    n_useful: int,
    p: float,
    *,
    m_ensemble: int = 1,
    m_stability: int = 50,
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    seed: SeedLike = 0,
    variant: str = "onda",
    h: int | None = None,
) -> float:
    """Stability of ``m_stability`` independent simulated ensembles (docs/method.md section 3).

    With ``m_ensemble=1`` this is the stability of a single simulated selector, the
    curve that calibrates ``p`` (the same for both models: a copy of one weak selector
    draws ``S_m`` uniformly from ``S'`` either way). See :func:`simulate_ensembles` for
    the streams and ``variant``.

    Parameters
    ----------
    n_feature, n_target, n_useful, p
        The simulated weak selector, as in :func:`simulate_rankings`.
    m_ensemble : int
        Weak selectors per ensemble.
    m_stability : int
        Ensembles whose subsets the stability is measured on (at least 2).
    aggregate : {'mean_rank', 'median_rank', 'vote', 'reciprocal_rank'}
    index : str
        The stability index, one of :data:`~ensstab_dask.indices.INDICES`
        (:func:`~ensstab_dask.stability`); one corrected for chance needs
        ``n_target < n_feature``.
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)
    variant : {'onda', 'two-level'}
    h : int, optional
        As in :func:`simulate_rankings`.

    Returns
    -------
    float

    Examples
    --------
    >>> import ensstab_dask as es
    >>> single = es.simulated_stability(200, 5, 20, 0.7, m_stability=20, seed=0)
    >>> ensemble = es.simulated_stability(200, 5, 20, 0.7, m_ensemble=9, m_stability=20, seed=0)
    >>> round(single, 3), round(ensemble, 3)
    (0.066, 0.104)
    >>> single < ensemble  # ensembles of weak selectors are more stable
    True
    """
    m_stability = check_int(m_stability, "m_stability", minimum=2)
    check_index_defined(index, n_feature, n_target)
    subsets = simulate_ensembles(
        n_feature,
        n_target,
        n_useful,
        p,
        m_ensemble=m_ensemble,
        size=m_stability,
        aggregate=aggregate,
        seed=seed,
        variant=variant,
        h=h,
    )
    return stability_of_subsets(subsets, n_feature, index)
