"""A feature-level random-effects model of bagging ensembles (``model="random-effects"``).

Beyond the paper: instead of a two-parameter simulated selector, model the ranks the
real weak selectors give. In the naive check's layout (docs/method.md section 8) weak selector
``j`` of ensemble copy ``c`` ranks feature ``f`` at

    r_cjf = mu_f + d_cf + e_cjf,   d_cf ~ N(0, sb2_f),   e_cjf ~ N(0, sw2_f)

``mu_f`` is the feature's mean rank, ``d_cf`` what the copy's half of the data does to it
and ``e_cjf`` what the weak selector's bootstrap sample does. ``mu`` and the variances
are fitted by the method of moments from ``G`` real copies of ``B`` weak selectors each
(one-way random effects per feature). An ensemble of ``m`` weak selectors aggregated by
mean rank ranks by ``mu_f + d_cf + (mean of m e's)``. The simulation draws ``d`` from
its normal law, feature by feature, and each ``e`` as a whole real residual vector
(``r_cj - mean_j r_cj``, rescaled to variance ``sw2``), drawn with replacement from the
``G x B`` real ones: a weak selector's ranks are skewed and correlated across features,
which a normal ``e`` would miss (docs/random_effects_model.md says what it did). A
single weak selector (``m = 1``) is not an aggregate; its stability is measured
directly on the copies' weak selectors (pairs from different copies).

See docs/random_effects_model.md for what it assumes and how it was validated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ensstab_dask.checks import check_choice, check_int
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices import INDICES, PAIRWISE_INDICES, similarity_matrix, stability_of_subsets
from ensstab_dask.seeding import SeedLike, make_rng

__all__ = ["RandomEffects", "fitted_curves", "single_stability_across_copies"]


@dataclass(frozen=True)
class RandomEffects:
    """The fitted model: per feature, the mean rank and the two variance components."""

    mu: np.ndarray = field(repr=False)
    between_var: np.ndarray = field(repr=False)  # sb2: copy to copy (the half of the data)
    within_var: np.ndarray = field(repr=False)  # sw2: weak selector to weak selector (the bootstrap)
    residuals: np.ndarray = field(repr=False)  # (G * B, n_feature): the e's the simulation draws from
    copy_means: np.ndarray = field(repr=False)  # (G, n_feature)
    copy_ids: np.ndarray = field(repr=False)  # which real copy each row is (repeats in a bootstrap replicate)
    copies: int
    members: int

    @classmethod
    def fit(cls, ranks, *, copy_ids=None) -> RandomEffects:
        """Moments of ``ranks``, shape (copies, weak selectors per copy, n_feature).

        ``sw2`` is the pooled within-copy variance; ``sb2`` the variance of the copies'
        means less the part their own ``B`` members put in it (``sw2 / B``), at least 0.
        ``copy_ids`` name the real copy of each row when copies are repeated (a
        bootstrap replicate), so that a repeated copy is never on both sides of a pair.
        """
        ranks = np.asarray(ranks, dtype=np.float64)
        if ranks.ndim != 3 or ranks.shape[0] < 2 or ranks.shape[1] < 2:
            raise InvalidParameterError(
                f"ranks must have shape (>= 2 copies, >= 2 weak selectors, n_feature); got {ranks.shape}"
            )
        G, B, n_feature = ranks.shape
        copy_means = ranks.mean(axis=1)
        within = ranks.var(axis=1, ddof=1).mean(axis=0)
        between = np.maximum(0.0, copy_means.var(axis=0, ddof=1) - within / B)
        # A residual about its own copy's mean has variance sw2 (B - 1) / B: rescale it.
        residuals = ((ranks - copy_means[:, None, :]) * np.sqrt(B / (B - 1))).reshape(G * B, n_feature)
        ids = np.arange(G) if copy_ids is None else np.asarray(copy_ids)
        if len(np.unique(ids)) < 2:
            raise InvalidParameterError("ranks must come from at least 2 distinct copies")
        return cls(copy_means.mean(axis=0), between, within, residuals, copy_means, ids, G, B)

    def stability(
        self,
        m_ensemble: int,
        n_target: int,
        *,
        m_stability: int = 200,
        index: str = "jaccard",
        seed: SeedLike = 0,
    ) -> float:
        """Simulated stability of ensembles of ``m_ensemble >= 2`` weak selectors: the mean
        similarity over ``m_stability // 2`` independent pairs of simulated copies.

        Why pairs: two copies agree through ``mu``, which is known only as the mean of
        the real copies, ``mu + noise``. Copies centred on that one mean would share its
        noise and agree too much. So each pair splits the real copies into two random
        halves; each copy of the pair is centred on the mean of its own half (whose
        noise is independent of the other's) and gets the rest of its copy effect,
        ``sb2 - Var(half mean)`` (at least 0), as normal noise.
        """
        m_ensemble = check_int(m_ensemble, "m_ensemble", minimum=2)
        m_stability = check_int(m_stability, "m_stability", minimum=2)
        check_choice(index, "index", PAIRWISE_INDICES)
        rng = make_rng(seed)
        n_feature = self.copy_means.shape[1]
        ids = np.unique(self.copy_ids)
        # The noise a centre carries: the variance of a mean of about half the copies' means.
        half_rows = len(self.copy_ids) // 2
        extra = np.sqrt(
            np.maximum(0.0, self.between_var - (self.between_var + self.within_var / self.members) / half_rows)
        )
        sims = []
        for _ in range(m_stability // 2):
            side = np.isin(self.copy_ids, rng.permutation(ids)[: len(ids) // 2])
            centres = np.stack([self.copy_means[side].mean(axis=0), self.copy_means[~side].mean(axis=0)])
            score = centres + rng.standard_normal((2, n_feature)) * extra
            score += self.residuals[rng.integers(len(self.residuals), size=(2, m_ensemble))].mean(axis=1)
            top = np.argpartition(score, n_target - 1, axis=1)[:, :n_target]  # smallest mean rank wins
            sims.append(stability_of_subsets(top, n_feature, index))
        return float(np.mean(sims))


def single_stability_across_copies(subsets: np.ndarray, n_feature: int, index: str = "jaccard", copy_ids=None) -> float:
    """Stability of single weak selectors that come from different copies.

    ``subsets`` has shape (copies, weak selectors per copy, n_target). Weak selector
    ``j`` of every copy forms one set of independent runs (each copy its own half); the
    result is the mean over ``j`` of their stability: the naive check's ``m = 1``.
    With ``copy_ids`` (a bootstrap replicate, copies repeated), the mean is over the
    pairs of rows from different copies, each as often as its rows appear: the
    bootstrap of a U-statistic. Dropping the repeats instead would make the replicates
    vary too little (a subsample of about 63 % of the copies).
    """
    check_choice(index, "index", INDICES)
    subsets = np.asarray(subsets)
    if copy_ids is None:
        return float(np.mean([stability_of_subsets(subsets[:, j], n_feature, index) for j in range(subsets.shape[1])]))
    check_choice(index, "index", PAIRWISE_INDICES)
    ids = np.asarray(copy_ids)
    other = ids[:, None] != ids[None, :]
    values = []
    for j in range(subsets.shape[1]):
        z = np.zeros((len(subsets), n_feature))  # float: a boolean product would not count
        z[np.arange(len(subsets))[:, None], subsets[:, j]] = 1.0
        values.append(similarity_matrix(z, n_feature, index)[other].mean())
    return float(np.mean(values))


def fitted_curves(ranks, subsets, n_target: int, m_ensemble: list[int], index: str, jobs) -> np.ndarray:
    """Curves of several fits, (len(jobs), len(m_ensemble)): what each Dask task runs.

    A job is ``(copy_ids, pairs, seed)``: the model fitted to the copies ``copy_ids``
    (None: all of them, in order) simulated with ``pairs`` pairs from ``seed``. A job's
    curve depends on the job alone, so the batching of jobs into tasks changes nothing.
    """
    n_feature = ranks.shape[2]
    out = np.empty((len(jobs), len(m_ensemble)))
    for k, (ids, pairs, s) in enumerate(jobs):
        model = RandomEffects.fit(ranks) if ids is None else RandomEffects.fit(ranks[ids], copy_ids=ids)
        subs = subsets if ids is None else subsets[ids]
        r = make_rng(int(s))
        out[k] = [
            single_stability_across_copies(subs, n_feature, index, ids)
            if m == 1
            else model.stability(m, n_target, m_stability=pairs, index=index, seed=r)
            for m in m_ensemble
        ]
    return out
