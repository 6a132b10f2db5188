"""Seeds and random streams: the one seeding contract of ensstab_dask.

Every random quantity comes from a :class:`numpy.random.Generator` built from a
:class:`numpy.random.SeedSequence`; the global NumPy RNG is never used.

**What a ``seed`` argument accepts, everywhere** (default ``0`` everywhere):

* an int ``>= 0``: the result is a function of it (and of the other arguments) only;
* a ``SeedSequence``: used as is (``SeedSequence(5)`` gives what ``5`` gives);
* a ``Generator``: drawn from, like scikit-learn's ``random_state``: the call advances
  it, so two calls with one Generator give different, reproducible results;
* ``None``: fresh entropy from the operating system (not reproducible).

Functions that record their seed in the result (``sweep``, ``estimate``, the naive
check, ``validate``, ``prediction_accuracy``) reduce it to an int first
(:func:`seed_to_int`) and record that int: rerunning with the recorded int reproduces
the result, whatever was passed.

Independent streams are *derived* from a parent seed and a tuple of non-negative
integer keys (``derive(seed, 0, 3)``), the same mechanism as ``SeedSequence.spawn`` but
addressed by key instead of by spawn order, so a stream depends only on the seed and
its key, never on what was drawn or spawned before. :class:`Stream` lists the keys.
"""

from __future__ import annotations

import enum
import numbers
from typing import Union

import numpy as np

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.wording import subject

__all__ = [
    "SeedLike",
    "Stream",
    "Stage",
    "STREAM_LAYOUT",
    "as_seed_sequence",
    "derive",
    "make_rng",
    "seed_to_int",
    "int_from",
]

SeedLike = Union[None, int, np.integer, np.random.SeedSequence, np.random.Generator]

# Bump when the meaning of a stream changes: a sweep's store of another layout is then
# refused, and a cached real run (:mod:`ensstab_dask.real.run_cache`) is not reused.
# 2: common random numbers along n_useful; the kernel's draws independent of its batching.
STREAM_LAYOUT = 2


class Stream(enum.IntEnum):
    """First key of every derived stream: one value per use, so that no two uses of one
    seed ever draw from the same stream, whichever functions a caller combines."""

    RANKINGS = 0  # simulated rankings: (RANKINGS, kind), one stream per kind of draw of the kernel
    ENSEMBLE_TIES = 1  # tie-breaks when simulated ensembles aggregate
    UNIFORM_THRESHOLD = 2  # the uniform selector's runs behind t_uniform in A[f_{u,p}]
    N_USEFUL_V_RUNS = 3  # the simulated runs behind A[f_{u,p}]
    FIXED_POINT_REPEAT = 4  # repeat r of the fixed-point check: (FIXED_POINT_REPEAT, r)
    SWEEP_STABILITY = 5  # sweep cell: (SWEEP_STABILITY, m_ensemble, repeat), shared along n_useful and p
    SWEEP_N_USEFUL_V = 6  # sweep cell: (SWEEP_N_USEFUL_V, n_runs, repeat), shared along n_useful and p
    REAL_RUNS = 7  # real run i: (REAL_RUNS, i)
    REAL_ENSEMBLE = 8  # naive check: copy c's half (.., c), member j (.., c, j + 1), ties at size m (.., 0, 0, m)
    ESTIMATE = 9  # stages of the whole estimate: (ESTIMATE, stage, ...)
    PREDICTION = 10  # leave-one-out fold i of prediction_accuracy: (PREDICTION, i)
    COPY_SETS = 11  # two-level model: each ensemble copy's preferred set H, copy after copy


class Stage(enum.IntEnum):
    """Second key of the estimate's streams, ``derive(seed, Stream.ESTIMATE, stage, ...)``:
    one value per stage. A value never changes: every seeded draw of an estimate is
    addressed by it."""

    T_UNIFORM = 0  # t_uniform's uniform runs; (.., T_UNIFORM, 0) also gives the uniform counts shown
    REAL = 1  # the real runs on ``resample``
    POOL = 2  # which runs of the pool each A[f] draw takes
    P = 3  # fitting p
    VERIFY = 4  # the fixed-point check
    PREDICT = 5  # the predicted curve
    CALIBRATE = 6  # the (u, p) calibration grid
    MEMBER_RUNS = 7  # the real runs in the weak selectors' layout
    BOOT = 8  # the bootstrap of the real runs
    BOOT_P = 9  # the bootstrap's p surface
    BOOT_CURVE = 10  # the bootstrap's curve design
    POWER = 11  # the fixed-point check at a wrong u (its power)
    T_BOOT = 12  # the bootstrap's fresh t_uniform draws
    COPIES = 13  # the model's real ensemble copies
    H = 14  # the two-level model's h
    H_BOUNDS = 15  # the curve at the ends of h's interval
    RANDOM_EFFECTS = 16  # the random-effects model's curve and its bootstrap
    CHECK_COPIES = 17  # the real ensemble copies made for the self-check
    CHECK = 18  # the self-check
    MEASURED = 19  # the anchored model's measured curve and its bootstrap
    FEATURES = 20  # the features' selection frequencies on the copies
    MOMENTS = 21  # the anchored model's prediction beyond B from the features' rank moments
    ACCURACY = 22  # the predictor's seeds as it scores each copy's features on the unseen half


def as_seed_sequence(seed: SeedLike, *, name: str = "seed") -> np.random.SeedSequence:
    """Turn a user seed into a :class:`~numpy.random.SeedSequence`.

    Parameters
    ----------
    seed : int, SeedSequence, Generator or None
        See the module docstring: a Generator is drawn from (four 63-bit words).
    name : str
        Parameter name used in error messages.
    """
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(seed.integers(0, 2**63, size=4).tolist())
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise InvalidParameterError(
            subject(name) + f" must be None, a non-negative int, a numpy SeedSequence or a "
            f"numpy Generator; got {type(seed).__name__}"
        )
    if seed < 0:
        raise InvalidParameterError(subject(name) + f" must be a non-negative int; got {seed}")
    return np.random.SeedSequence(int(seed))


def derive(seed: SeedLike, *key: int) -> np.random.SeedSequence:
    """The child stream of ``seed`` addressed by the integer ``key`` path.

    ``derive(s, 1, 2)`` is the same sequence whatever else was derived from ``s``.

    Parameters
    ----------
    seed : int, SeedSequence, Generator or None
        The parent (see the module docstring).
    *key : int
        Non-negative ints: the path from the parent to the child, appended to its
        ``spawn_key``.

    Returns
    -------
    numpy.random.SeedSequence

    Examples
    --------
    >>> import ensstab_dask as es
    >>> child = es.derive(0, 1, 2)
    >>> child.entropy, child.spawn_key
    (0, (1, 2))
    >>> child.generate_state(2).tolist() == es.derive(0, 1, 2).generate_state(2).tolist()
    True
    >>> child.generate_state(2).tolist() == es.derive(0, 1, 3).generate_state(2).tolist()
    False
    """
    ss = as_seed_sequence(seed)
    for k in key:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or k < 0:
            raise InvalidParameterError(f"stream keys must be non-negative ints; got {k!r}")
    return np.random.SeedSequence(
        ss.entropy,
        spawn_key=tuple(ss.spawn_key) + tuple(int(k) for k in key),
        pool_size=ss.pool_size,
    )


def make_rng(seed: SeedLike, *key: int) -> np.random.Generator:
    """A PCG64 Generator on the stream ``derive(seed, *key)``.

    Parameters
    ----------
    seed : int, SeedSequence, Generator or None
        The parent (see the module docstring).
    *key : int
        The stream's key path (see :func:`derive`).

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> import ensstab_dask as es
    >>> rng = es.make_rng(0, 5)
    >>> type(rng.bit_generator).__name__
    'PCG64'
    >>> es.make_rng(0, 5).random() == es.make_rng(0, 5).random()  # same seed and key, same draws
    True
    >>> es.make_rng(0, 5).random() == es.make_rng(0, 6).random()  # another key, another stream
    False
    """
    return np.random.Generator(np.random.PCG64(derive(seed, *key)))


#: The largest seed the results can record (a signed 64-bit attribute in netCDF and zarr).
MAX_SEED = 2**63 - 1


def seed_to_int(seed: SeedLike, *, name: str = "seed") -> int:
    """The int a recording function runs on and records (see the module docstring).

    An int in ``[0, MAX_SEED]`` is itself (a larger one is refused: it could not be
    recorded); so is a ``SeedSequence`` made from such an int alone. Anything else (a
    Generator, a spawned SeedSequence, None) is reduced to an int drawn from it.
    """
    if isinstance(seed, (bool, np.bool_)) or not (
        seed is None or isinstance(seed, (numbers.Integral, np.random.SeedSequence, np.random.Generator))
    ):
        raise InvalidParameterError(
            subject(name) + f" must be a non-negative int, a numpy SeedSequence, a numpy Generator or None; "
            f"got {type(seed).__name__}"
        )
    if isinstance(seed, numbers.Integral):
        if not 0 <= seed <= MAX_SEED:
            raise InvalidParameterError(
                subject(name) + f" must be in [0, {MAX_SEED}] so that the results can record it; got {seed}"
            )
        return int(seed)
    ss = as_seed_sequence(seed, name=name)
    if not ss.spawn_key and isinstance(ss.entropy, numbers.Integral) and 0 <= ss.entropy <= MAX_SEED:
        return int(ss.entropy)
    return int_from(ss)


def int_from(ss: np.random.SeedSequence, *, bits: int = 64) -> int:
    """A non-negative int drawn from ``ss``: its first state word of ``bits`` bits, less
    its top bit (so that it fits a signed int of that width). The estimate's sweeps are
    seeded with ``bits=32``: another width would change every seeded estimate."""
    if bits == 32:
        return int(ss.generate_state(1, np.uint32)[0] >> np.uint32(1))
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))
