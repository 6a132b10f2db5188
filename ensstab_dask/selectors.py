"""Real base selectors and their runs (SPEC section 8).

A *real run* fits the base selector on a resample of the data with its own seed, ranks
all features by score (ties broken uniformly at random: a random forest gives most
features importance 0) and keeps the top ``n_target``.

* base selector: ``None`` is the default random forest
  (``RandomForestClassifier(n_estimators=300, max_features="sqrt", criterion="gini",
  n_jobs=1)``, scored by ``feature_importances_``); any scikit-learn estimator with
  ``feature_importances_`` or ``coef_`` (absolute value; multi-class: the norm over
  classes); or a callable ``(X, y, rng) -> scores``.
* resample: ``"half"`` (default: a random half without replacement, the method's
  feature-selection half), ``"bootstrap"``, ``"bagging"`` (a bootstrap sample of a
  random half: what one weak selector of the naive check's bagging ensembles sees), or a
  fraction in (0, 1] without replacement.

Run ``i`` of a batch seeded ``seed`` uses ``derive(seed, Stream.REAL_RUNS, i)``: the result of a run does
not depend on how runs are batched or where they execute. :func:`real_runs` spreads runs
over a Dask cluster in small batches, sending the data to the workers once.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence

import numpy as np

from ._validation import RESAMPLES, check_int, check_real
from .aggregation import rank_scores
from .cluster import ClientLike, map_shared
from .datasets import check_data
from .seeding import SeedLike, Stream, as_seed_sequence, derive, make_rng

__all__ = ["default_selector", "make_scorer", "resample_indices", "real_run", "real_runs", "real_run_pools"]

Scorer = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


def default_selector(n_estimators: int = 300):
    """The method's base selector: a Gini random forest, one thread (parallelism is Dask's)."""
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=n_estimators, max_features="sqrt", criterion="gini", n_jobs=1)


def make_scorer(selector=None) -> Scorer:
    """Turn ``selector`` into a function ``(X, y, rng) -> scores`` (higher is better)."""
    if selector is None:
        selector = default_selector()
    if hasattr(selector, "fit") and hasattr(selector, "get_params"):
        return _EstimatorScorer(selector)
    if callable(selector):
        _check_arity(selector)
        return selector
    raise TypeError(
        "selector must be None, a scikit-learn estimator exposing feature_importances_ or coef_, "
        f"or a callable (X, y, rng) -> scores; got {type(selector).__name__}"
    )


def _check_arity(fn) -> None:
    """A callable selector must take (X, y, rng): say so here, not in a worker's traceback."""
    import inspect

    try:
        inspect.signature(fn).bind(None, None, None)
    except TypeError:
        raise TypeError(
            f"selector: a callable selector is called as selector(X, y, rng) -> scores; "
            f"{getattr(fn, '__name__', type(fn).__name__)}{inspect.signature(fn)} cannot take those three arguments"
        ) from None
    except ValueError:  # no signature (some builtins): leave it to the call
        pass


class _EstimatorScorer:
    """Fits a fresh clone per run, seeded from the run's Generator."""

    def __init__(self, estimator):
        self.estimator = estimator

    def __call__(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from sklearn.base import clone

        est = clone(self.estimator)
        if "random_state" in est.get_params():
            est.set_params(random_state=int(rng.integers(0, 2**31 - 1)))
        est.fit(X, y)
        if hasattr(est, "feature_importances_"):
            return np.asarray(est.feature_importances_, dtype=np.float64)
        if hasattr(est, "coef_"):
            coef = np.atleast_2d(np.asarray(est.coef_, dtype=np.float64))
            return np.linalg.norm(coef, axis=0) if len(coef) > 1 else np.abs(coef[0])
        raise TypeError(f"{type(est).__name__} exposes neither feature_importances_ nor coef_ after fit")


def _check_resample(resample) -> str | float:
    if isinstance(resample, str):
        if resample not in RESAMPLES:
            raise ValueError(f"resample must be one of {RESAMPLES} or a fraction in (0, 1]; got {resample!r}")
        return resample
    if isinstance(resample, numbers.Real) and not isinstance(resample, bool):
        return check_real(resample, "resample", minimum=0.0, maximum=1.0, open_minimum=True)
    raise TypeError(f"resample must be one of {RESAMPLES} or a fraction in (0, 1]; got {resample!r}")


def resample_indices(n_samples: int, resample, rng: np.random.Generator) -> np.ndarray:
    """Sample indices of one run: a half or a fraction without replacement, a bootstrap,
    or ``"bagging"``: a bootstrap sample of a random half (one weak selector of a
    bagging ensemble, which sees a bootstrap sample of its copy's half)."""
    resample = _check_resample(resample)
    if resample == "bootstrap":
        return rng.integers(0, n_samples, size=n_samples)
    if resample == "bagging":
        half = resample_indices(n_samples, "half", rng)
        return half[rng.integers(0, len(half), size=len(half))]
    fraction = 0.5 if resample == "half" else float(resample)
    size = max(2, int(np.floor(fraction * n_samples)))
    return np.sort(rng.choice(n_samples, size=min(size, n_samples), replace=False))


def real_run(X, y, n_target: int, *, selector=None, resample="half", seed: SeedLike = 0) -> np.ndarray:
    """One real run: ranks 1..n_feature (1 = best) of every feature.

    The run uses ``seed`` itself; run ``i`` of :func:`real_runs` is this function with
    ``seed=derive(seed, Stream.REAL_RUNS, i)``. The top ``n_target`` of a run is
    ``np.flatnonzero(ranks <= n_target)``.
    """
    X, y = check_data(X, y, n_target=n_target)
    return _run_batch(make_scorer(selector), X, y, resample, [as_seed_sequence(seed)])[0]


def _run_batch(scorer: Scorer, X: np.ndarray, y: np.ndarray, resample, seeds: Sequence) -> np.ndarray:
    """Ranks of one run per seed: what each Dask task executes."""
    out = np.empty((len(seeds), X.shape[1]), dtype=np.int64)
    for i, ss in enumerate(seeds):
        rng = make_rng(ss)
        out[i] = _fit_and_rank(scorer, X, y, resample_indices(len(X), resample, rng), rng)
    return out


def _fit_and_rank(
    scorer: Scorer, X: np.ndarray, y: np.ndarray, idx: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    scores = np.asarray(scorer(X[idx], y[idx], rng), dtype=np.float64)
    if scores.shape != (X.shape[1],):
        raise ValueError(f"the selector returned scores of shape {scores.shape}; expected ({X.shape[1]},)")
    return rank_scores(scores, seed=rng)


def _member_batch(scorer: Scorer, X: np.ndarray, y: np.ndarray, layout: str, copy_seed, member_seeds) -> np.ndarray:
    """Ranks of weak selectors of one real ensemble copy: what each naive-check task runs.

    ``"bagging"``: the copy's random half of the data (from ``copy_seed``), and each
    member a bootstrap sample of that half. ``"independent"``: each member its own
    random half of all the data. ``"bagging-full"`` and ``"independent-full"`` use all
    of ``X`` as the copy's data (a bootstrap sample of it, or all of it, per member):
    for callers that already split the data.
    """
    out = np.empty((len(member_seeds), X.shape[1]), dtype=np.int64)
    everything = np.arange(len(X))
    half = resample_indices(len(X), "half", make_rng(copy_seed)) if layout == "bagging" else everything
    for i, ss in enumerate(member_seeds):
        rng = make_rng(ss)
        if layout in ("bagging", "bagging-full"):
            idx = half[resample_indices(len(half), "bootstrap", rng)]
        elif layout == "independent":
            idx = resample_indices(len(X), "half", rng)
        else:
            idx = everything
        out[i] = _fit_and_rank(scorer, X, y, idx, rng)
    return out


def real_runs(
    X,
    y,
    n_target: int,
    *,
    n_runs: int,
    selector=None,
    resample="half",
    seed: SeedLike = 0,
    client: ClientLike = None,
    batch_size: int = 1,
    timeout: float = 10.0,
    security=None,
) -> np.ndarray:
    """``n_runs`` independent real runs, spread over Dask workers.

    Run ``i`` is seeded ``derive(seed, Stream.REAL_RUNS, i)``, so the result is the same whatever
    ``batch_size`` or ``client``. ``X`` and ``y`` are scattered to the workers once.

    Returns
    -------
    ndarray of int64, shape (n_runs, n_feature): the ranks of each run.
    """
    return real_run_pools(
        X,
        y,
        n_target,
        [(n_runs, resample, seed)],
        selector=selector,
        client=client,
        batch_size=batch_size,
        timeout=timeout,
        security=security,
    )[0]


def real_run_pools(
    X,
    y,
    n_target: int,
    pools: Sequence[tuple[int, str | float, SeedLike]],
    *,
    selector=None,
    client: ClientLike = None,
    batch_size: int = 1,
    timeout: float = 10.0,
    security=None,
) -> list[np.ndarray]:
    """Several pools of real runs, ``(n_runs, resample, seed)`` each, in one submission.

    Pool ``k`` is exactly ``real_runs(n_runs=..., resample=..., seed=...)``; submitting
    all of them at once keeps every worker busy to the end instead of idling at the tail
    of each pool, and scatters the data once.
    """
    X, y = check_data(X, y, n_target=n_target)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    scorer = make_scorer(selector)
    batches, sizes = [], []
    for n_runs, resample, seed in pools:
        n_runs = check_int(n_runs, "n_runs", minimum=1)
        _check_resample(resample)
        ss = as_seed_sequence(seed)
        seeds = [derive(ss, Stream.REAL_RUNS, i) for i in range(n_runs)]
        chunk = [(resample, seeds[i : i + batch_size]) for i in range(0, n_runs, batch_size)]
        batches += chunk
        sizes.append(len(chunk))
    parts = map_shared(_run_batch, (scorer, X, y), batches, client=client, timeout=timeout, security=security)
    out, start = [], 0
    for size in sizes:
        out.append(np.concatenate(parts[start : start + size]))
        start += size
    return out


def describe_selector(selector) -> str:
    """A selector's description for results' provenance (``None`` is the default forest)."""
    if selector is None:
        return "RandomForestClassifier(n_estimators=300, max_features='sqrt', criterion='gini')"
    return repr(selector) if hasattr(selector, "get_params") else getattr(selector, "__name__", repr(selector))
