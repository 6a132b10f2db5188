"""One group against the rest, for every group: an estimate per group, as scanpy's
``rank_genes_groups`` finds markers of each group.

:func:`estimate_groups` asks, for each group of a label column, how stable an ensemble's
selection of the features that tell that group from the reference is (``"rest"``: every
other sample; or another group, the samples of the two alone): one curve, interval,
verdict and list of stable features per group. The real runs of every group go to the
cluster in one submission (the data scattered once, each task a batch of one group's
runs), so that a small group's runs do not wait for a large one's to finish; each group's
estimate then takes its runs as :func:`~ensstab_dask.estimate` would have made them, bit
for bit. With a cache, each group's runs are cached under their own labels, and only those
it lacks are run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import xarray as xr

from ensstab_dask.budget.cost import check_cost
from ensstab_dask.cluster import ClientLike
from ensstab_dask.estimates.records.estimate import Estimate, stack_estimates
from ensstab_dask.estimates.stages.features import feature_names_of, stable_features
from ensstab_dask.estimates.stages.pipeline import refuse_before_the_work
from ensstab_dask.estimates.stages.real_runs import check_estimate_cost
from ensstab_dask.estimates.stages.together import Asked, estimate_together
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.cache_files import digest_with, hash_x
from ensstab_dask.real.datasets import CheckedData, check_n_target, class_counts
from ensstab_dask.real.run_cache import RunCache
from ensstab_dask.real.runs import Problem
from ensstab_dask.real.selectors import make_scorer, selector_for
from ensstab_dask.settings import EstimateSettings, check_given, takes_settings
from ensstab_dask.wording import Spelling, param

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's own from Python 3.11

    from ensstab_dask.settings.options import EstimateOptions

__all__ = ["estimate_groups", "estimate_groups_checked", "GroupEstimates", "GroupQuestion", "group_problems"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GroupEstimates:
    """An estimate per group (:func:`estimate_groups`), in the order asked.

    Attributes
    ----------
    estimates : dict of str to Estimate
        Each group's estimate against ``reference``.
    reference : str
        ``"rest"`` or the group each is compared with.
    groupby : str
        What the groups are (the label column's name, where known).
    seconds : float
        The wall time of the one submission of every group's real runs.

    Examples
    --------
    >>> import numpy as np
    >>> import ensstab_dask as es
    >>> labels = np.repeat(["A", "B", "C"], [24, 20, 16])
    >>> X = np.random.default_rng(0).normal(size=(60, 30)) + 2.0 * (np.arange(30) == 0) * (labels == "B")[:, None]
    >>> res = es.estimate_groups(X, labels, 3, groups="B,C", selector=es.default_selector(5), m_ensemble=(1, 3),
    ...                          n_boot=0, client="synchronous", progress=False)
    >>> res.groups, res.to_dataset()["stability"].dims
    (['B', 'C'], ('group', 'm_ensemble'))
    """

    estimates: dict[str, Estimate]
    reference: str = "rest"
    groupby: str = ""
    seconds: float = float("nan")

    @property
    def groups(self) -> list[str]:
        return list(self.estimates)

    def markers(self) -> dict[str, list[str]]:
        """Each group's stable features: those its largest measured ensemble keeps on at
        least ``cutoff`` of the real ensembles (:mod:`~ensstab_dask.estimates.stages.features`)."""
        return {
            g: [] if est.features is None else [str(n) for n in stable_features(est.features)["names"]]
            for g, est in self.estimates.items()
        }

    def spelled(self, spelling: Spelling) -> GroupEstimates:
        """Every group's estimate with its words in ``spelling`` (:meth:`Estimate.spelled`)."""
        return dataclasses.replace(self, estimates={g: e.spelled(spelling) for g, e in self.estimates.items()})

    def summary(self) -> str:
        """Each group's summary under a line naming the group and what it is compared with."""
        against = "the rest" if self.reference == "rest" else repr(self.reference)
        parts = [f"== {g!r} against {against} ==\n{est.summary()}" for g, est in self.estimates.items()]
        return "\n\n".join(parts)

    def to_dict(self) -> dict:
        """One record per group (each an :meth:`Estimate.to_dict`), with what was compared."""
        return {
            "groupby": self.groupby,
            "reference": self.reference,
            "seconds": self.seconds,
            "groups": {g: est.to_dict() for g, est in self.estimates.items()},
            "markers": self.markers(),
        }

    def to_dataset(self) -> xr.Dataset:
        """Every group's :meth:`Estimate.to_dataset` along a ``group`` dimension; its
        attributes are those every group has with one value (the others are each group's
        own: :meth:`to_dict`)."""
        ds = stack_estimates(self.estimates, "group", long_name=self.groupby or "group")
        ds.attrs.update(kind="group_estimates", reference=self.reference, groupby=self.groupby)
        return ds


def _group_data(X, problem: Problem) -> CheckedData:
    """A group's data: all of X against the rest, or the rows of the group and a named
    reference (a copy of them, made when that group's step needs it and let go after)."""
    return CheckedData(problem.rows_of(X), problem.y)


def _caches(cache_dir, data: CheckedData, problems: dict[str, Problem], scorer) -> dict[str, RunCache | None]:
    """Each group's cache of real runs (None without ``cache_dir``), keyed by its own data:
    X read once for every group that asks of all of X (``reference="rest"``), a group's
    rows (a named reference) hashed alone, one group's rows at a time."""
    if cache_dir is None:
        return dict.fromkeys(problems)
    # Only where some group asks of all of X (against the rest): a named reference's rows are their own data.
    x_hash = hash_x(hashlib.sha256(), data.X) if any(p.rows is None for p in problems.values()) else None
    caches = {}
    for g, p in problems.items():
        d = _group_data(data.X, p)
        caches[g] = RunCache.open(
            cache_dir, d.X, d.y, scorer, digest=digest_with(x_hash, p.y) if p.rows is None else None
        )
    return caches


def _groups(count: int) -> str:
    return f"{count} group" if count == 1 else f"{count} groups"


def group_problems(labels: np.ndarray, groups=None, reference: str = "rest") -> dict[str, Problem]:
    """Each group's question as labels: 1 for the group's samples, 0 for the reference's
    (``"rest"``: every other sample; a group: its samples alone, the others left out).
    ``groups``: a sequence or a comma-separated string of the labels as
    :func:`~ensstab_dask.real.datasets.class_counts` prints them; default every group
    (but the reference)."""
    counts = class_counts(labels)
    text = np.array([str(v) for v in counts])[np.unique(labels, return_inverse=True)[1].ravel()]
    if not isinstance(reference, str) or (reference != "rest" and reference not in counts):
        raise InvalidParameterError(
            param("reference") + f" must be 'rest' or one of the groups {list(counts)}; got {reference!r}"
        )
    if reference == "rest" and "rest" in counts:
        # The keyword, not the group: every group, the one named "rest" too, against every other sample.
        logger.warning(
            "a group is named 'rest', as the reference that means every other sample: each group, 'rest' among "
            "them, is compared with every other sample; to compare each with the group 'rest', rename it"
        )
    if groups is None:
        chosen = [g for g in counts if g != reference or reference == "rest"]
    else:
        chosen = [g.strip() for g in groups.split(",")] if isinstance(groups, str) else [str(g) for g in groups]
    unknown = [g for g in chosen if g not in counts]
    if not chosen or unknown or len(set(chosen)) != len(chosen) or (reference in chosen and reference != "rest"):
        why = f"{unknown[0]!r} is not one" if unknown else "each once, not the reference" if chosen else "none given"
        raise InvalidParameterError(param("groups") + f" must name groups of {list(counts)} ({why})")
    problems = {}
    for g in chosen:
        rows = None if reference == "rest" else np.flatnonzero(np.isin(text, [g, reference]))
        y = (text == g).astype(np.int64) if rows is None else (text[rows] == g).astype(np.int64)
        problems[g] = Problem(y, rows)
    return problems


@takes_settings
def estimate_groups(
    X,
    labels,
    n_target: int,
    *,
    groups=None,
    reference: str = "rest",
    groupby: str = "",
    client: ClientLike = None,
    progress: bool = True,
    cache_dir: str | os.PathLike | None = None,
    feature_names=None,
    allow_large: bool = False,
    **settings: Unpack[EstimateOptions],
) -> GroupEstimates:
    """Estimate, for each group of ``labels``, the stability of ensembles selecting the
    features that tell it from ``reference``. Every setting of
    :func:`~ensstab_dask.estimate` is taken, the same for every group (listed below).

    Parameters
    ----------
    X : array-like or scipy sparse, (n_samples, n_feature)
    labels : array-like of group labels, one per sample
    n_target : int
        Features each selector keeps.
    groups : sequence of str or comma-separated str, optional
        The groups to estimate, by their labels as printed; default every group.
    reference : str, default "rest"
        ``"rest"`` (each group against every other sample) or a group (each against it,
        on the two groups' samples alone), as ``rank_genes_groups``' ``reference``.
    groupby : str
        The label column's name, recorded in the result.
    client, progress, cache_dir, feature_names, allow_large
        As :func:`~ensstab_dask.estimate` takes them; one cluster for every group.
    **settings

    Returns
    -------
    GroupEstimates

    Examples
    --------
    Each of three groups against the rest (5-tree forests, to keep it quick); group B's
    marker is feature 0:

    >>> import numpy as np
    >>> import ensstab_dask as es
    >>> labels = np.repeat(["A", "B", "C"], [24, 20, 16])
    >>> X = np.random.default_rng(0).normal(size=(60, 30)) + 3.0 * (np.arange(30) == 0) * (labels == "B")[:, None]
    >>> res = es.estimate_groups(X, labels, 3, selector=es.default_selector(5), m_ensemble=(1, 3), n_boot=0,
    ...                          client="synchronous", progress=False)
    >>> "x0" in res.markers()["B"]
    True
    """
    check_given(settings, "estimate_groups")
    data = CheckedData.of(X, labels, feature_names=feature_names, task="classification")
    question = GroupQuestion(group_problems(data.y, groups, reference), reference, groupby)
    return estimate_groups_checked(
        data,
        n_target,
        question,
        settings,
        client=client,
        progress=progress,
        cache_dir=cache_dir,
        allow_large=allow_large,
    )


@dataclass(frozen=True)
class GroupQuestion:
    """What :func:`estimate_groups` asks of each group: its problem (:func:`group_problems`),
    the reference each is told from, and the label column's name."""

    problems: dict[str, Problem]
    reference: str = "rest"
    groupby: str = ""


def estimate_groups_checked(
    data: CheckedData,
    n_target: int,
    question: GroupQuestion,
    given: Mapping[str, Any],
    *,
    client: ClientLike,
    progress: bool,
    cache_dir: str | os.PathLike | None,
    allow_large: bool,
) -> GroupEstimates:
    """:func:`estimate_groups` of data already checked (``data.y``: the group labels, read as
    classes), the settings ``given`` as :func:`~ensstab_dask.settings.check_given` passed them."""
    X, problems = data.X, question.problems
    n_target = check_n_target(n_target, data.n_feature)
    names = feature_names_of(data.names, data.n_feature)
    # n_runs=None as given becomes its derived default inside: checked there, typed int after.
    setting = EstimateSettings(n_feature=data.n_feature, n_target=n_target, **cast("dict[str, Any]", given))
    scorer = make_scorer(selector_for(setting.selector, problems[next(iter(problems))].y))  # a regressor refused
    # Before any cluster starts: what each group's estimate refuses alone, and every group's runs priced together.
    for g in problems:
        refuse_before_the_work(_group_data(X, problems[g]), setting, [n_target], allow_large=True)
    real, simulated = check_estimate_cost(None, setting, allow_large=True)  # one group's counts
    check_cost(
        f"the estimates of {_groups(len(problems))}",
        n_feature=data.n_feature,
        real_runs=real * len(problems),
        simulated=simulated * len(problems),
        allow_large=allow_large,
    )
    caches = _caches(cache_dir, data, problems, scorer)
    asked = {g: Asked(replace(p, selector=scorer), setting, caches[g]) for g, p in problems.items()}
    estimates, seconds = estimate_together(
        X, asked, names=names, client=client, progress=progress, what=_groups(len(problems))
    )
    return GroupEstimates(estimates, question.reference, question.groupby, seconds)
