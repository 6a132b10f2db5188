"""Stability indices of a collection of feature subsets, and their standard errors.

* :mod:`~ensstab_dask.indices.registry`: one :class:`Index` record per stability index in
  one registry, :data:`INDICES`; every function takes an index by name and reads its
  record, never branches on its name.
* :mod:`~ensstab_dask.indices.measures`: :func:`stability` and
  :func:`pairwise_similarity`, with the unchecked fast paths the package's callers use.
* :mod:`~ensstab_dask.indices.standard_errors`: the U-statistic variance of a mean over
  pairs, the jackknife over runs otherwise.
* :mod:`~ensstab_dask.indices.nogueira`: Nogueira's variance, confidence interval and
  two-sample test.

The indices:

* ``jaccard`` (default, docs/method.md section 1): mean over pairs of |a & b| / |a | b|.
* ``dice``: mean over pairs of 2 |a & b| / (|a| + |b|).
* ``kuncheva``: mean over pairs of (r n - k^2) / (k (n - k)), subsets of equal size k.
* ``nogueira``: Nogueira, Sechidis & Brown (JMLR 2018, Definition 4),
  1 - mean_f s_f^2 / ((k/n)(1 - k/n)) with s_f^2 = M/(M-1) p_f (1 - p_f).

Adding an index is one :class:`Index` in :data:`INDICES`, with its tests: the library's
and the CLI's ``index`` choices, the models that need a pairwise form, the clipping of
intervals, the conversion to shared features and the summary's words all read it.
"""

from ensstab_dask.indices.measures import pairwise_similarity, similarity_matrix, stability, stability_of_subsets
from ensstab_dask.indices.nogueira import NogueiraStability, NogueiraTest, nogueira_stability, nogueira_test
from ensstab_dask.indices.registry import (
    INDICES,
    PAIRWISE_INDICES,
    Index,
    check_index_defined,
    clip_to_index,
    index_of_shared,
    index_range,
    shared_features,
)
from ensstab_dask.indices.standard_errors import (
    jackknife_std,
    pair_means_without_each,
    pairwise_stability_se,
    stability_se,
    subset_similarities,
    u_statistic_se,
    u_statistic_variance,
    u_statistic_zetas,
)

__all__ = [
    "Index",
    "INDICES",
    "PAIRWISE_INDICES",
    "index_range",
    "check_index_defined",
    "clip_to_index",
    "stability",
    "pairwise_similarity",
    "nogueira_stability",
    "nogueira_test",
    "NogueiraStability",
    "NogueiraTest",
    "jackknife_std",
    "pairwise_stability_se",
    "stability_se",
    "stability_of_subsets",
    "similarity_matrix",
    "u_statistic_se",
    "u_statistic_variance",
    "u_statistic_zetas",
    "subset_similarities",
    "pair_means_without_each",
    "shared_features",
    "index_of_shared",
]
