"""Which selector: an estimate per selector on one data, every selector's real runs in one
submission, each cached as its own (a selector added later runs alone), each scored by a
fixed predictor on the halves its copies did not see (:mod:`~ensstab_dask.estimates.stages.held_out`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from ensstab_dask.budget.cost import check_cost
from ensstab_dask.checks import DEFAULT_PREDICTOR, check_int
from ensstab_dask.cluster import ClientLike
from ensstab_dask.estimates.records.selectors import SelectorComparison
from ensstab_dask.estimates.stages.features import feature_names_of
from ensstab_dask.estimates.stages.pipeline import refuse_before_the_work
from ensstab_dask.estimates.stages.real_runs import check_estimate_cost
from ensstab_dask.estimates.stages.together import Asked, estimate_together
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import CheckedData, check_n_target
from ensstab_dask.real.named_selectors import DEFAULT_SELECTORS, NAMED_SELECTORS, named_selector
from ensstab_dask.real.run_cache import RunCache
from ensstab_dask.real.runs import Problem
from ensstab_dask.real.selectors import DEFAULT_TREES, make_scorer, selector_for
from ensstab_dask.real.targets import task_of
from ensstab_dask.settings import NOT_TAKEN, EstimateSettings, check_given, takes_settings
from ensstab_dask.wording import param

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's own from Python 3.11

    from ensstab_dask.settings.options import EstimateOptions

__all__ = ["compare", "compare_checked", "named_selectors", "COMPARE_DEFAULTS"]

#: The settings whose default a comparison sets otherwise than an estimate: it scores accuracy.
COMPARE_DEFAULTS = {"predictor": DEFAULT_PREDICTOR}


@takes_settings(**COMPARE_DEFAULTS, selector=NOT_TAKEN)
def compare(
    X,
    y,
    n_target: int,
    *,
    selectors: Sequence[Any] | Mapping[str, Any] = DEFAULT_SELECTORS,
    n_estimators: int = DEFAULT_TREES,
    client: ClientLike = None,
    progress: bool = True,
    allow_large: bool = False,
    feature_names=None,
    cache_dir: str | os.PathLike | None = None,
    task: str = "auto",
    **settings: Unpack[EstimateOptions],
) -> SelectorComparison:
    """Estimate the stability of ensembles of each of several base selectors on ``(X, y)``,
    with the accuracy of their features from the same runs, to choose a selector and a size.

    One estimate per selector (every setting of :func:`~ensstab_dask.estimate`, the same
    for each, listed below), their real runs sent in one submission, each cached as its own
    in ``cache_dir`` (a selector added later makes only its own runs). With ``predictor``
    (default ``"rf"``, the paper's 300-tree forest), each estimate's ``accuracy`` scores
    every copy's features at each measured size on the half of the samples that copy did
    not see (:mod:`~ensstab_dask.estimates.stages.held_out`).

    Parameters
    ----------
    X, y : the data (n_samples, n_feature) and class labels or a regression target
    n_target : int
        Features each selector keeps.
    selectors : sequence or mapping, default ("rf", "extra-trees", "l1-logistic", "f-test")
        Names of :data:`~ensstab_dask.real.named_selectors.NAMED_SELECTORS`, scikit-learn
        selectors (named by their class), or a mapping of names to either.
    n_estimators : int, default 300
        The trees of the named selectors that grow them (``rf``, ``extra-trees``).
    client, progress, allow_large, feature_names, cache_dir, task
        As :func:`~ensstab_dask.estimate` takes them; one cluster for every selector.
    **settings

    Returns
    -------
    SelectorComparison

    Examples
    --------
    Two selectors, small sizes (5-tree forests, to keep it quick):

    >>> import ensstab_dask as es
    >>> data = es.make_microarray(n_feature=100, n_informative=10, effect=3.0, seed=1)
    >>> res = es.compare(data.X, data.y, 5, selectors={"forest": es.default_selector(5), "f": "f-test"},
    ...                  m_ensemble=(1, 3), n_boot=0, predictor=None, client="synchronous", progress=False)
    >>> res.selectors, res.to_dataset()["stability"].dims
    (['forest', 'f'], ('selector', 'm_ensemble'))
    """
    check_given(settings, "compare")
    if "selector" in settings:
        raise InvalidParameterError(param("selector") + " is one selector; compare takes several as selectors=")
    settings = cast("EstimateOptions", {**COMPARE_DEFAULTS, **settings})  # its own default: it scores accuracy
    data = CheckedData.of(X, y, feature_names=feature_names, task=task)
    named = named_selectors(selectors, task_of(data.y), n_estimators=n_estimators)
    run: dict[str, Any] = dict(client=client, progress=progress, cache_dir=cache_dir, allow_large=allow_large)
    return compare_checked(data, n_target, named, settings, **run)


def named_selectors(selectors, task: str, *, n_estimators: int = DEFAULT_TREES) -> dict[str, Any]:
    """``selectors`` by name: a name of the registry made for ``task`` (its trees
    ``n_estimators``), an estimator named by its class (numbered where two share one); at
    least two, each name once."""
    items = list(selectors.items()) if isinstance(selectors, Mapping) else [(None, s) for s in selectors]
    if isinstance(selectors, str) or len(items) < 2:
        given = [selectors] if isinstance(selectors, str) else [n or getattr(s, "__name__", s) for n, s in items]
        shown = ", ".join(s if isinstance(s, str) else type(s).__name__ for s in given)
        raise InvalidParameterError(
            param("selectors") + f" must name at least two selectors to compare; got {len(given)} ({shown})"
        )
    out: dict[str, Any] = {}
    for name, sel in items:
        if isinstance(sel, str):
            if sel not in NAMED_SELECTORS:
                raise InvalidParameterError(
                    param("selectors") + f": {sel!r} is not one of {', '.join(NAMED_SELECTORS)}"
                )
            name, sel = name or sel, named_selector(sel, check_int(n_estimators, "n_estimators", minimum=1), task)
        name = str(name or type(sel).__name__)
        base, i = name, 2
        while name in out:
            name, i = f"{base}-{i}", i + 1
        out[name] = sel
    return out


def compare_checked(
    data: CheckedData,
    n_target: int,
    selectors: dict[str, Any],
    given: Mapping[str, Any],
    *,
    client: ClientLike,
    progress: bool,
    cache_dir: str | os.PathLike | None,
    allow_large: bool,
) -> SelectorComparison:
    """:func:`compare` of data already checked and selectors by name, the settings as
    :func:`~ensstab_dask.settings.check_given` passed them."""
    n_target = check_n_target(n_target, data.n_feature)
    names = feature_names_of(data.names, data.n_feature)
    asked, real, simulated = {}, 0, 0
    for name, sel in selectors.items():
        sel = selector_for(sel, data.y)
        s = EstimateSettings(
            n_feature=data.n_feature, n_target=n_target, **{**cast("dict[str, Any]", given), "selector": sel}
        )
        refuse_before_the_work(data, s, [n_target], allow_large=True)
        r, m = check_estimate_cost(None, s, allow_large=True)
        real, simulated = real + r, simulated + m
        scorer = make_scorer(sel)
        cache = None if cache_dir is None else RunCache.open(cache_dir, data.X, data.y, scorer, digest=data.digest)
        asked[name] = Asked(Problem(data.y, None, scorer), s, cache)
    what = f"{len(selectors)} selectors"
    check_cost(
        f"the estimates of {what}",
        n_feature=data.n_feature,
        real_runs=real,
        simulated=simulated,
        allow_large=allow_large,
    )
    estimates, seconds = estimate_together(data.X, asked, names=names, client=client, progress=progress, what=what)
    return SelectorComparison(estimates, seconds)
