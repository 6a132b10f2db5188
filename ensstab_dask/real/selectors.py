"""Real base selectors and their runs (docs/method.md section 8).

A *real run* fits the base selector on a resample of the data with its own seed, ranks
all features by score (ties broken uniformly at random: a random forest gives most
features importance 0) and keeps the top ``n_target``.

* base selector: ``None`` is the default random forest
  (``RandomForestClassifier(n_estimators=300, max_features="sqrt", criterion="gini",
  n_jobs=1)``, scored by ``feature_importances_``); any scikit-learn estimator or
  ``Pipeline`` scored as scikit-learn's ``importance_getter="auto"`` scores it
  (``coef_``, absolute, multi-class: L1 norm over classes; else
  ``feature_importances_``; a pipeline by its last step, its steps before keeping every
  feature in its place), and also by ``scores_``
  (a univariate selector such as ``SelectKBest``; NaN the worst); any other scores
  through :class:`ImportanceSelector` (an ``importance_getter`` as ``SelectFromModel``
  and ``RFE`` take it); or a callable ``(X, y, rng) -> scores``.
* resample: ``"half"`` (default: a random half without replacement, the method's
  feature-selection half), ``"bootstrap"``, ``"bagging"`` (a bootstrap sample of a
  random half: what one weak selector of the naive check's bagging ensembles sees), or a
  fraction in (0, 1] without replacement. Every resample is stratified by class, so
  that no run fits on a single class.

A run depends on its seed alone. This module knows nothing of Dask: :mod:`ensstab_dask.real.runs`
sends many runs to a cluster.
"""

from __future__ import annotations

import contextlib
import inspect
import operator
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from ensstab_dask.aggregation import rank_scores
from ensstab_dask.checks import check_choice
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import CheckedData, check_data
from ensstab_dask.real.resamples import check_resample_classes, resample_indices
from ensstab_dask.real.targets import standardized, task_of
from ensstab_dask.seeding import SeedLike, as_seed_sequence, make_rng
from ensstab_dask.wording import param, words

# scikit-learn is imported where it is used: it takes a tenth of a second to import.

__all__ = [
    "DEFAULT_TREES",
    "default_selector",
    "selector_for",
    "task_for",
    "ImportanceSelector",
    "make_scorer",
    "resample_indices",
    "check_resample_classes",
    "real_run",
    "checked_run",
    "seeded_clone",
    "convergence_counted",
    "ConvergenceTally",
    "library_of",
    "say_selector_warnings",
]

Scorer = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


#: The method's forest: its trees, the one default of the library, the command line's
#: ``--n-estimators`` and the cost check's count of trees.
DEFAULT_TREES = 300


def default_selector(n_estimators: int = DEFAULT_TREES, *, task: str = "classification"):
    """The method's base selector: a random forest of ``n_estimators`` trees, each split
    drawn from sqrt(n_feature) features, one thread (parallelism is Dask's). For
    ``task="classification"`` a Gini ``RandomForestClassifier``; for ``"regression"`` a
    ``RandomForestRegressor`` (squared error).

    Examples
    --------
    >>> from ensstab_dask import default_selector
    >>> default_selector(50).get_params()["n_estimators"]
    50
    >>> type(default_selector(50, task="regression")).__name__
    'RandomForestRegressor'
    """
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    check_choice(task, "task", ("classification", "regression"))
    if task == "regression":
        return RandomForestRegressor(n_estimators=n_estimators, max_features="sqrt", n_jobs=1)
    return RandomForestClassifier(n_estimators=n_estimators, max_features="sqrt", criterion="gini", n_jobs=1)


def task_for(task: str, selector) -> str:
    """``task`` as ``selector`` reads it: "auto" with a regressor (or an
    :class:`ImportanceSelector` of one) is "regression", so that a whole-number ``y``
    (counts, a score) given to a regressor is its target."""
    from sklearn.base import is_regressor

    estimator = selector.estimator if isinstance(selector, ImportanceSelector) else selector
    return "regression" if task == "auto" and hasattr(estimator, "get_params") and is_regressor(estimator) else task


def selector_for(selector, y):
    """``selector`` for the checked ``y``: None is :func:`default_selector` of ``y``'s task
    (:func:`~ensstab_dask.real.targets.task_of`; a regression target's None is the
    regressor, class labels' stays None, the default forest); a classifier for a
    regression target, or a regressor for class labels, is refused before any run."""
    from sklearn.base import is_classifier, is_regressor

    task = task_of(y)
    if selector is None:
        return default_selector(task=task) if task == "regression" else None
    estimator = selector.estimator if isinstance(selector, ImportanceSelector) else selector
    if not hasattr(estimator, "get_params"):  # a callable, or a scorer already made: its own business
        return selector
    wrong = is_classifier(estimator) if task == "regression" else is_regressor(estimator)
    if wrong:
        kind = "classifier" if task == "regression" else "regressor"
        other = "regressor" if task == "regression" else "classifier"
        raise InvalidParameterError(
            param("selector")
            + f" {type(estimator).__name__} is a {kind}, but y is a {task} target; give a {other} "
            + words(
                "(or ", param("task", "classification" if task == "regression" else "regression"), " if y was misread)"
            )
        )
    return selector


def make_scorer(selector=None, importance_getter="auto") -> Scorer:
    """Turn ``selector`` into a function ``(X, y, rng) -> scores`` (higher is better); an
    estimator is scored by ``importance_getter`` (see :class:`ImportanceSelector`)."""
    if selector is None:
        selector = default_selector()
    if hasattr(selector, "fit") and hasattr(selector, "get_params"):
        _check_getter(importance_getter)
        return _EstimatorScorer(selector, importance_getter)
    if callable(selector):
        _check_arity(selector)
        return selector
    raise InvalidParameterError(
        param("selector")
        + " must be None, a scikit-learn estimator (or Pipeline) exposing coef_, feature_importances_ or "
        "scores_ (or wrapped in ImportanceSelector), or a callable (X, y, rng) -> scores; got "
        f"{type(selector).__name__}"
    )


def _check_getter(importance_getter) -> None:
    if not (callable(importance_getter) or isinstance(importance_getter, str)):
        raise InvalidParameterError(
            "importance_getter must be 'auto', an attribute path such as 'named_steps.clf.coef_', or a callable of "
            f"the fitted estimator; got {type(importance_getter).__name__}"
        )


class ImportanceSelector:
    """A scikit-learn estimator as a base selector, scored by ``importance_getter`` as
    scikit-learn's ``SelectFromModel`` and ``RFE`` take it.

    Parameters
    ----------
    estimator : scikit-learn estimator or Pipeline
        Cloned and fitted on each real run's resample (every ``random_state`` in it seeded
        from the run's seed, as any selector's).
    importance_getter : "auto", str or callable, default "auto"
        ``"auto"``: ``coef_`` (absolute; the L1 norm over classes), else
        ``feature_importances_``, else ``scores_`` (a univariate selector such as
        ``SelectKBest``); a pipeline by its last step. A str: an attribute path of the
        fitted estimator (``"named_steps.clf.coef_"``, as :func:`operator.attrgetter`
        reads it). A callable: called with the fitted estimator. Whatever it returns is
        made one score per feature as scikit-learn does (the absolute value; the L1 norm
        over the first axis of a 2-D array); NaN scores rank last.

    Attributes
    ----------
    estimator_ : the fitted clone of ``estimator``
    feature_importances_ : ndarray of shape (n_features,)
        Its scores.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.feature_selection import SelectKBest, f_classif
    >>> from ensstab_dask import ImportanceSelector, make_microarray
    >>> data = make_microarray(n_feature=20, n_informative=2, effect=3.0, seed=0)
    >>> sel = ImportanceSelector(SelectKBest(f_classif), importance_getter="scores_")  # higher is better
    >>> sel.fit(data.X, data.y).feature_importances_.shape
    (20,)
    """

    def __init__(self, estimator, importance_getter="auto"):
        self.estimator = estimator
        self.importance_getter = importance_getter

    def get_params(self, deep: bool = True) -> dict:
        params = {"estimator": self.estimator, "importance_getter": self.importance_getter}
        if deep and hasattr(self.estimator, "get_params"):
            params.update({f"estimator__{k}": v for k, v in self.estimator.get_params(deep=True).items()})
        return params

    def set_params(self, **params) -> ImportanceSelector:
        nested = {k.partition("__")[2]: v for k, v in params.items() if k.startswith("estimator__")}
        for key, value in params.items():
            if key in ("estimator", "importance_getter"):
                setattr(self, key, value)
            elif not key.startswith("estimator__"):
                raise InvalidParameterError(f"ImportanceSelector has no parameter {key!r}")
        if nested:
            self.estimator.set_params(**nested)
        return self

    def fit(self, X, y) -> ImportanceSelector:
        from sklearn.base import clone

        _check_getter(self.importance_getter)
        self.estimator_ = clone(self.estimator).fit(X, y)
        self.feature_importances_ = _feature_importances(self.estimator_, self.importance_getter)
        return self

    def __repr__(self) -> str:
        getter = self.importance_getter
        shown = repr(getter) if isinstance(getter, str) else getattr(getter, "__qualname__", repr(getter))
        return f"ImportanceSelector({self.estimator!r}, importance_getter={shown})"


def _check_arity(fn) -> None:
    """A callable selector must take (X, y, rng): say so here, not in a worker's traceback."""
    try:
        inspect.signature(fn).bind(None, None, None)
    except TypeError:
        raise InvalidParameterError(
            param("selector") + f": a callable selector is called as selector(X, y, rng) -> scores; "
            f"{getattr(fn, '__name__', type(fn).__name__)}{inspect.signature(fn)} cannot take those three arguments"
        ) from None
    except ValueError:  # no signature (some builtins): leave it to the call
        pass


class _EstimatorScorer:
    """Fits a fresh clone per run, seeded from the run's Generator."""

    def __init__(self, estimator, importance_getter="auto"):
        self.estimator = estimator
        self.importance_getter = importance_getter

    def __call__(self, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:

        est = seeded_clone(self.estimator, rng)
        est.fit(X, y)
        return _feature_importances(est, self.importance_getter)


def seeded_clone(estimator, rng: np.random.Generator):
    """A clone of ``estimator`` with every ``random_state`` drawn from ``rng``, a pipeline's
    steps' too (``step__random_state``): an unseeded step would make runs irreproducible."""
    from sklearn.base import clone

    est = clone(estimator)
    seeded = [k for k in est.get_params() if k == "random_state" or k.endswith("__random_state")]
    return est.set_params(**{k: int(rng.integers(0, 2**31 - 1)) for k in seeded})


def _feature_importances(est, importance_getter="auto") -> np.ndarray:
    """Scores of a fitted estimator, by scikit-learn's ``importance_getter`` rule, with
    ``scores_`` added to ``"auto"``.

    scikit-learn keeps that rule in a private helper
    (``sklearn.feature_selection._base._get_feature_importances``, used by
    ``SelectFromModel`` and ``RFE``), so it is replicated here: ``"auto"`` is ``coef_`` if
    there is one, else ``feature_importances_``, else (beyond scikit-learn's rule)
    ``scores_``, so that univariate selectors (``SelectKBest``) serve too; a str is an
    attribute path, a callable is called with ``est``. The values are made one per feature
    as ``SelectFromModel`` makes them (absolute; the L1 norm over classes when 2-D), and a
    NaN (a constant feature's F statistic) is the worst score. A ``Pipeline`` is scored by
    its last step under ``"auto"``, which is what ``SelectFromModel`` does when given
    ``importance_getter="named_steps.<last>.coef_"``: its steps before must keep the
    features one to one (a scaler, not a PCA), as :func:`_check_keeps_features` checks.
    """
    from sklearn.pipeline import Pipeline

    if isinstance(est, Pipeline) and len(est) > 1:
        _check_keeps_features(est)
    if importance_getter == "auto":
        model = est[-1] if isinstance(est, Pipeline) else est
        found = [a for a in ("coef_", "feature_importances_", "scores_") if hasattr(model, a)]
        if not found:
            raise InvalidParameterError(
                f"{type(model).__name__} exposes none of coef_, feature_importances_ or scores_ after fit: wrap it "
                "as ImportanceSelector(estimator, importance_getter=...) to say where its scores are"
            )
        values = getattr(model, found[0])
    else:
        try:
            getter = operator.attrgetter(importance_getter) if isinstance(importance_getter, str) else importance_getter
            values = getter(est)
        except AttributeError as exc:
            raise InvalidParameterError(
                f"importance_getter {importance_getter!r}: {type(est).__name__} after fit has no such attribute ({exc})"
            ) from None
    getter = "importance_getter" if importance_getter != "auto" else f"{type(est).__name__}'s scores"
    values = numeric_scores(values, f"{getter} {importance_getter!r}" if importance_getter != "auto" else getter)
    if values.ndim > 2:
        raise InvalidParameterError(
            f"{getter} {importance_getter!r} returned an array of shape {values.shape}; expected one score per "
            "feature (or one row of them per class)"
        )
    # NaN, or -inf (the worst score an ImportanceSelector already gave a NaN), stays the
    # worst: the absolute value would make -inf the best.
    worst = np.isnan(values) | np.isneginf(values)
    worst = worst if values.ndim == 1 else worst.any(axis=0)
    scores = np.abs(values) if values.ndim == 1 else np.linalg.norm(values, ord=1, axis=0)
    return np.where(worst | np.isnan(scores), -np.inf, scores)


def _check_keeps_features(pipeline) -> None:
    """Refuse a fitted ``Pipeline`` whose steps before the last do not keep every input
    feature in its place: its last step's scores would then not be the input features'
    (a PCA mixes them, a selection step drops some, a one-hot encoder adds some). Each step
    is asked what it outputs for input features named ``x0, x1, ...``
    (``get_feature_names_out``); a step that cannot say is refused too, naming the way to
    say it (``FunctionTransformer(feature_names_out="one-to-one")``)."""
    names = np.array([f"x{i}" for i in range(pipeline.n_features_in_)], dtype=object)
    for name, step in pipeline.steps[:-1]:
        if step is None or step == "passthrough":
            continue
        what = f"selector: the pipeline's step {name!r} ({type(step).__name__})"
        try:
            out = np.asarray(step.get_feature_names_out(names), dtype=object)
        except (AttributeError, ValueError, TypeError) as exc:
            raise InvalidParameterError(
                f"{what} cannot say which features it outputs ({type(exc).__name__}), so its scores cannot be "
                "mapped back to the input features; give it get_feature_names_out (for a FunctionTransformer, "
                "feature_names_out='one-to-one'), or score a pipeline of steps that keep every feature"
            ) from None
        if out.shape != names.shape or not np.array_equal(out, names):
            given, made = set(names), set(out)
            change = (
                f"drops {len(names) - len(out)} of the {len(names)} features"
                if made < given
                else f"adds {len(out) - len(names)} features to the {len(names)}"
                if made > given
                else f"outputs {len(out)} features other than the {len(names)} it is given (first {out[0]!r})"
                if made != given
                else "reorders the features"
            )
            raise InvalidParameterError(
                f"{what} {change}: the last step's scores would not be the input features'; keep only steps that "
                "keep every feature in its place (a scaler, an imputer) before the scored step"
            )
        names = out


def real_run(
    X, y, n_target: int, *, selector=None, resample="half", seed: SeedLike = 0, task: str = "auto"
) -> np.ndarray:
    """One real run: ranks 1..n_feature (1 = best) of every feature.

    The run uses ``seed`` itself; run ``i`` of :func:`~ensstab_dask.real.runs.real_runs` is this function with
    ``seed=derive(seed, Stream.REAL_RUNS, i)``. The top ``n_target`` of a run is
    ``np.flatnonzero(ranks <= n_target)``.
    """
    X, y = check_data(X, y, n_target=n_target, task=task_for(task, selector))
    return checked_run(CheckedData(X, y), selector=selector, resample=resample, seed=seed)


def checked_run(data: CheckedData, *, selector=None, resample="half", seed: SeedLike = 0) -> np.ndarray:
    """:func:`real_run` on data already checked (the run an estimate times for its price)."""
    check_resample_classes(data.y, resample)
    return run_batch(make_scorer(selector_for(selector, data.y)), data.X, data.y, resample, [as_seed_sequence(seed)])[0]


def run_batch(scorer: Scorer, X: np.ndarray, y: np.ndarray, resample, seeds: Sequence) -> np.ndarray:
    """Ranks of one run per seed: what each Dask task executes."""
    out = np.empty((len(seeds), X.shape[1]), dtype=np.int64)
    for i, ss in enumerate(seeds):
        rng = make_rng(ss)
        out[i] = _fit_and_rank(scorer, X, y, resample_indices(y, resample, rng), rng)
    return out


class ConvergenceTally:
    """The runs whose fit raised scikit-learn's ``ConvergenceWarning`` (see
    :func:`convergence_counted`), and the first such warning's first line; with
    ``every``, also each other warning the fits raised, once: ``(category, first line,
    library)`` in :attr:`others`, for :func:`say_selector_warnings`."""

    def __init__(self, every: bool = False) -> None:
        self.runs = 0
        self.message = ""
        self.every = every
        self.others: dict[tuple, None] = {}  # ordered, each once
        self._this_run = False

    def _note(self, message) -> None:
        self._this_run = True
        self.message = self.message or str(message).strip().splitlines()[0].rstrip(":")

    def _note_other(self, message, category, filename: str) -> None:
        lines = str(message).strip().splitlines()
        self.others.setdefault((category, lines[0] if lines else "", library_of(filename)), None)

    def _run_ended(self) -> None:
        self.runs += self._this_run
        self._this_run = False


def library_of(filename: str) -> str:
    """The package a warning came from, by the file that raised it (``anndata``, ``sklearn``)."""
    from pathlib import Path

    parts = Path(filename).parts
    for folder in ("site-packages", "dist-packages"):
        if folder in parts and parts.index(folder) + 1 < len(parts):
            return Path(parts[parts.index(folder) + 1]).stem
    return Path(filename).stem


def say_selector_warnings(others) -> None:
    """Each warning that the selector's fits raised (``others``: the keys of
    :attr:`ConvergenceTally.others`, gathered from every task, in worker processes too)
    as one warning here, once: a worker's would go to its own stderr, two lines a time,
    once per process."""
    for category, first, library in dict.fromkeys(others):
        warnings.warn(f"the selector's fits warned ({library}): {first}", category, stacklevel=3)


_tallies = threading.local()  # this thread's ConvergenceTally, while one counts
_hook_lock = threading.Lock()
_hook_state: dict = {"users": 0}


def _counting_showwarning(message, category, filename, lineno, file=None, line=None):
    """``warnings.showwarning`` while a tally counts: a ConvergenceWarning in a counting
    thread is noted, and any other warning there too where the tally takes ``every``;
    anything else is shown as before."""
    tally = getattr(_tallies, "tally", None)
    if tally is not None and issubclass(category, _hook_state["category"]):
        tally._note(message)
        return
    if tally is not None and tally.every:
        tally._note_other(message, category, filename)
        return
    previous = _hook_state.get("previous")
    if previous is None or previous is _counting_showwarning:
        previous = warnings._showwarning_orig  # type: ignore[attr-defined]
    previous(message, category, filename, lineno, file, line)


@contextlib.contextmanager
def convergence_counted(*, every: bool = False) -> Iterator[ConvergenceTally]:
    """Count, rather than show, the runs whose fit raises scikit-learn's ConvergenceWarning
    in this thread while the block runs; with ``every``, note each other warning too
    (once each, for :func:`say_selector_warnings`) rather than show it.

    A selector that does not converge (a logistic regression on badly scaled data) warns
    at every run, in every worker process: hundreds of lines of the same three. The
    caller says it once, with the count (:func:`~ensstab_dask.real.runs.real_run_plan`).
    Safe with tasks in several threads of one process (a worker with many threads):
    ``warnings.catch_warnings`` is not, so the hook (``showwarning``, and an ``always``
    filter for the category, so that every run is counted) is installed while any
    thread counts and removed when the last one is done; other threads' warnings pass
    through it unchanged.
    """
    from sklearn.exceptions import ConvergenceWarning

    tally = ConvergenceTally(every)
    entry = ("always", None, ConvergenceWarning, None, 0)
    with _hook_lock:
        if _hook_state["users"] == 0:
            # Another thread's catch_warnings may have put the hook back after the last
            # count ended: never keep the hook as what it passes warnings on to.
            shown = warnings.showwarning
            previous = _hook_state.get("previous") if shown is _counting_showwarning else shown
            _hook_state.update(category=ConvergenceWarning, previous=previous or warnings._showwarning_orig)  # type: ignore[attr-defined]
            warnings.showwarning = _counting_showwarning
            warnings.filterwarnings("always", category=ConvergenceWarning)
        _hook_state["users"] += 1
    _tallies.tally = tally
    try:
        yield tally
    finally:
        _tallies.tally = None
        with _hook_lock:
            _hook_state["users"] -= 1
            if _hook_state["users"] == 0:
                if warnings.showwarning is _counting_showwarning:
                    warnings.showwarning = _hook_state["previous"]
                with contextlib.suppress(ValueError):
                    warnings.filters.remove(entry)  # type: ignore[attr-defined]  # a list at run time


def numeric_scores(values, what: str) -> np.ndarray:
    """``values`` as float64 scores (an array of at least one dimension), or a refusal that
    says what ``what`` returned (its type, and its kind and shape where it has them), never
    its contents."""
    kind = type(values).__name__
    try:
        scores = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        try:
            arr = np.asarray(values)
            kind += f" of text with shape {arr.shape}" if arr.dtype.kind in "US" else " of objects"
        except (TypeError, ValueError):  # ragged
            kind += " of rows of different lengths"
        scores = None
    if scores is not None and scores.ndim == 0:
        kind, scores = ("None" if values is None else f"single {kind}"), None
    if scores is None:
        raise InvalidParameterError(
            f"{what} returned {'a ' if kind != 'None' else ''}{kind}, not one score per feature"
        )
    return scores


def _fit_and_rank(
    scorer: Scorer, X: np.ndarray, y: np.ndarray, idx: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    try:
        # A regression target in standard units: its units must not change the ranking (targets.standardized).
        scores = numeric_scores(scorer(X[idx], standardized(y[idx]), rng), "the selector")
    finally:
        tally = getattr(_tallies, "tally", None)
        if tally is not None:
            tally._run_ended()
    if scores.shape != (X.shape[1],):
        raise InvalidParameterError(f"the selector returned scores of shape {scores.shape}; expected ({X.shape[1]},)")
    return rank_scores(scores, seed=rng)


def member_ranks(scorer: Scorer, X: np.ndarray, y: np.ndarray, layout: str, copy_seed, member_seeds) -> np.ndarray:
    """Ranks of weak selectors of one real ensemble copy: what each naive-check task runs.

    ``"bagging"``: the copy's random half of the data (from ``copy_seed``), and each
    member a bootstrap sample of that half. ``"independent"``: each member its own
    random half of all the data. ``"bagging-full"`` and ``"independent-full"`` use all
    of ``X`` as the copy's data (a bootstrap sample of it, or all of it, per member):
    for callers that already split the data.
    """
    out = np.empty((len(member_seeds), X.shape[1]), dtype=np.int64)
    everything = np.arange(X.shape[0])
    half = resample_indices(y, "half", make_rng(copy_seed)) if layout == "bagging" else everything
    for i, ss in enumerate(member_seeds):
        rng = make_rng(ss)
        if layout in ("bagging", "bagging-full"):
            idx = half[resample_indices(y[half], "bootstrap", rng)]
        elif layout == "independent":
            idx = resample_indices(y, "half", rng)
        else:
            idx = everything
        out[i] = _fit_and_rank(scorer, X, y, idx, rng)
    return out


def describe_selector(selector) -> str:
    """A selector's description for results' provenance (``None`` is the default forest)."""
    if selector is None:
        return "RandomForestClassifier(n_estimators=300, max_features='sqrt', criterion='gini')"
    return repr(selector) if hasattr(selector, "get_params") else getattr(selector, "__name__", repr(selector))
