"""Verifying n_useful: the fixed point u = A[f_{u,p}] (docs/method.md section 6).

The simulator fitted at (u, p) should count about u useful features itself:
:func:`check_fixed_point` checks it over repeats, :func:`iterate_fixed_point` iterates
u <- A[f_{u,p}] with p refitted at each step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ensstab_dask.checks import (
    check_int,
    check_real,
    check_simulator,
)
from ensstab_dask.seeding import SeedLike, Stream, as_seed_sequence, derive
from ensstab_dask.simulator.estimators import simulated_n_useful

__all__ = ["FixedPointCheck", "check_fixed_point", "FixedPointIteration", "iterate_fixed_point"]


@dataclass(frozen=True)
class FixedPointCheck:
    """Whether u = A[f_{u,p}] holds, from ``repeats`` independent values of A[f_{u,p}].

    The result of :func:`check_fixed_point`.

    Attributes
    ----------
    n_useful : int
        The u checked.
    p : float
    values : ndarray of int
        The ``repeats`` draws of A[f_{u,p}].
    mean, std : float
        Their mean and standard deviation.
    tolerance : float
    holds : bool
        Whether the mean is close enough to u.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> chk = es.check_fixed_point(200, 5, 7, 0.7, n_runs=30, repeats=5)
    >>> len(chk.values), chk.mean == float(chk.values.mean())
    (5, True)
    """

    n_useful: int
    p: float
    values: np.ndarray = field(repr=False)
    mean: float
    std: float
    tolerance: float
    holds: bool


def check_fixed_point(
    n_feature: int,
    n_target: int,
    n_useful: int,
    p: float,
    *,
    n_runs: int,
    repeats: int = 20,
    tolerance: float = 2.0,
    seed: SeedLike = 0,
) -> FixedPointCheck:
    """Compare u with the mean of ``repeats`` draws of A[f_{u,p}] (docs/method.md section 6).

    The fixed point holds when ``|mean - u| <= max(tolerance, 2 * std / sqrt(repeats))``:
    within the calibration tolerance (default +-2, as in docs/method.md section 6) or within two
    standard errors of the Monte-Carlo mean. Repeat ``r`` uses the stream
    ``derive(seed, Stream.FIXED_POINT_REPEAT, r)``.

    Parameters
    ----------
    n_feature, n_target, n_useful, p
        The simulated weak selector; ``n_useful`` is the u checked.
    n_runs : int
        Simulated runs behind each draw of A[f_{u,p}] (the real n_useful's ``n_runs``).
    repeats : int
        Independent draws of A[f_{u,p}].
    tolerance : float
        Allowed ``|mean - u|``, in features.
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)

    Returns
    -------
    FixedPointCheck

    Examples
    --------
    >>> import ensstab_dask as es
    >>> es.check_fixed_point(200, 5, 7, 0.7, n_runs=30, repeats=5).holds
    True
    >>> chk = es.check_fixed_point(200, 5, 40, 0.7, n_runs=30, repeats=5)  # u = 40 is far too many
    >>> chk.holds, chk.mean < 40
    (False, True)
    """
    n_feature, n_target, n_useful, p = check_simulator(n_feature, n_target, n_useful, p)
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    repeats = check_int(repeats, "repeats", minimum=1)
    tolerance = check_real(tolerance, "tolerance", minimum=0.0)
    values = _n_useful_v_repeats(n_feature, n_target, n_useful, p, n_runs, repeats, as_seed_sequence(seed))
    mean = float(values.mean())
    std = float(values.std(ddof=1)) if repeats > 1 else 0.0
    allowed = max(tolerance, 2.0 * std / np.sqrt(repeats))
    return FixedPointCheck(n_useful, p, values, mean, std, tolerance, bool(abs(mean - n_useful) <= allowed))


def _n_useful_v_repeats(N, K, u, p, n_runs, repeats, ss) -> np.ndarray:
    return np.array(
        [
            simulated_n_useful(N, K, u, p, n_runs=n_runs, seed=derive(ss, Stream.FIXED_POINT_REPEAT, r))
            for r in range(repeats)
        ]
    )


@dataclass(frozen=True)
class FixedPointIteration:
    """Result of :func:`iterate_fixed_point`: ``history[0]`` is the start.

    Attributes
    ----------
    n_useful : int
        The fixed point, or the last value tried when not ``converged``.
    converged : bool
    history : tuple of int
        Every u tried, in order.
    means : tuple of float
        The mean of A[f_{u,p}] at each step.
    reason : str
        ``'fixed point'``, ``'cycle'``, ``'max_iter reached'`` or ``'below n_target'``.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> it = es.iterate_fixed_point(200, 5, 40, 0.7, n_runs=30, repeats=5, max_iter=1)
    >>> it.history[0], len(it.means), it.converged, it.reason
    (40, 1, False, 'max_iter reached')
    """

    n_useful: int
    converged: bool
    history: tuple[int, ...]
    means: tuple[float, ...]
    reason: str


def iterate_fixed_point(
    n_feature: int,
    n_target: int,
    n_useful: int,
    p: float,
    *,
    n_runs: int,
    repeats: int = 20,
    max_iter: int = 50,
    seed: SeedLike = 0,
) -> FixedPointIteration:
    """Iterate u <- round(mean over repeats of A[f_{u,p}]) until it settles.

    The same seed is used at every step (common random numbers), so the map is a fixed
    function of u and the iteration either reaches a fixed point (``converged=True``)
    or enters a cycle, hits ``max_iter``, or falls below ``n_target`` where the simulator
    is undefined (``converged=False``; ``reason`` says which; ``n_useful`` is then the
    last value tried).

    Parameters
    ----------
    n_feature, n_target, n_useful, p
        The simulated weak selector; ``n_useful`` is the starting u.
    n_runs : int
        Simulated runs behind each draw of A[f_{u,p}].
    repeats : int
        Draws of A[f_{u,p}] averaged at each step.
    max_iter : int
        Steps before giving up.
    seed : int, SeedSequence or Generator, default 0 (see :mod:`ensstab_dask.seeding`)

    Returns
    -------
    FixedPointIteration

    Examples
    --------
    >>> import ensstab_dask as es
    >>> it = es.iterate_fixed_point(200, 5, 40, 0.7, n_runs=30, repeats=5)
    >>> it.converged, it.reason, it.n_useful
    (True, 'fixed point', 7)
    >>> it.history
    (40, 7)
    """
    n_feature, n_target, n_useful, p = check_simulator(n_feature, n_target, n_useful, p)
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    repeats = check_int(repeats, "repeats", minimum=1)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    ss = as_seed_sequence(seed)
    history, means = [n_useful], []
    u = n_useful
    for _ in range(max_iter):
        mean = float(_n_useful_v_repeats(n_feature, n_target, u, p, n_runs, repeats, ss).mean())
        means.append(mean)
        new = int(round(mean))
        if new < n_target:
            # The simulator is undefined below n_target: clamping would fake a fixed point.
            return FixedPointIteration(u, False, tuple(history), tuple(means), "below n_target")
        if new == u:
            return FixedPointIteration(u, True, tuple(history), tuple(means), "fixed point")
        if new in history:
            history.append(new)
            return FixedPointIteration(new, False, tuple(history), tuple(means), "cycle")
        history.append(new)
        u = new
    return FixedPointIteration(u, False, tuple(history), tuple(means), "max_iter reached")
