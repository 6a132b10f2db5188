"""Seeds and random streams.

Every random quantity in ensstab_dask comes from a :class:`numpy.random.Generator`
built from a :class:`numpy.random.SeedSequence`; the global NumPy RNG is never used.
Independent streams are *derived* from a parent seed and a tuple of non-negative
integer keys (``derive(seed, 0, 3)``), the same mechanism as ``SeedSequence.spawn`` but
addressed by key instead of by spawn order, so a stream depends only on the seed and
its key, never on what was drawn or spawned before.
"""

from __future__ import annotations

import enum
import numbers
from typing import Union

import numpy as np

__all__ = ["SeedLike", "Stream", "as_seed_sequence", "derive", "make_rng"]

SeedLike = Union[None, int, np.integer, np.random.SeedSequence, np.random.Generator]


class Stream(enum.IntEnum):
    """First key of every derived stream: one value per use, so that no two uses of one
    seed ever draw from the same stream, whichever functions a caller combines."""

    RANKINGS = 0  # simulated rankings; block b is (RANKINGS, b)
    ENSEMBLE_TIES = 1  # tie-breaks when simulated ensembles aggregate
    UNIFORM_THRESHOLD = 2  # the uniform selector's runs behind t_uniform in A[f_{u,p}]
    N_USEFUL_V_RUNS = 3  # the simulated runs behind A[f_{u,p}]
    FIXED_POINT_REPEAT = 4  # repeat r of the fixed-point check: (FIXED_POINT_REPEAT, r)
    SWEEP_STABILITY = 5  # sweep cell: (SWEEP_STABILITY, n_useful, m_ensemble, repeat)
    SWEEP_N_USEFUL_V = 6  # sweep cell: (SWEEP_N_USEFUL_V, n_useful, n_runs, repeat)
    REAL_RUNS = 7  # real run i: (REAL_RUNS, i)
    REAL_ENSEMBLE = 8  # naive check: copy c's half (.., c), member j (.., c, j + 1), ties (.., c, 0)
    ESTIMATE = 9  # stages of the whole estimate: (ESTIMATE, stage, ...)
    PREDICTION = 10  # leave-one-out fold i of prediction_accuracy: (PREDICTION, i)
    COPY_SETS = 11  # two-level model: each ensemble copy's preferred set H, copy after copy


def as_seed_sequence(seed: SeedLike, *, name: str = "seed") -> np.random.SeedSequence:
    """Turn a user seed into a :class:`~numpy.random.SeedSequence`.

    Parameters
    ----------
    seed : None, int, SeedSequence or Generator
        ``None`` draws fresh entropy from the operating system (not reproducible).
        An int must be non-negative. A Generator is consumed like scikit-learn's
        ``random_state``: a child sequence is spawned from it, so two calls with the
        same Generator give different (but reproducible) streams.
    name : str
        Parameter name used in error messages.
    """
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        try:
            return seed.spawn(1)[0].bit_generator.seed_seq
        except TypeError:
            # A bit generator built without a SeedSequence cannot spawn: draw entropy.
            return np.random.SeedSequence(seed.integers(0, 2**63, size=4).tolist())
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"{name} must be None, a non-negative int, a numpy SeedSequence or a "
            f"numpy Generator; got {type(seed).__name__}"
        )
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative int; got {seed}")
    return np.random.SeedSequence(int(seed))


def derive(seed: SeedLike, *key: int) -> np.random.SeedSequence:
    """The child stream of ``seed`` addressed by the integer ``key`` path.

    ``derive(s, 1, 2)`` is the same sequence whatever else was derived from ``s``.
    """
    ss = as_seed_sequence(seed)
    for k in key:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or k < 0:
            raise ValueError(f"stream keys must be non-negative ints; got {k!r}")
    return np.random.SeedSequence(
        ss.entropy,
        spawn_key=tuple(ss.spawn_key) + tuple(int(k) for k in key),
        pool_size=ss.pool_size,
    )


def make_rng(seed: SeedLike, *key: int) -> np.random.Generator:
    """A PCG64 Generator on the stream ``derive(seed, *key)``."""
    return np.random.Generator(np.random.PCG64(derive(seed, *key)))
