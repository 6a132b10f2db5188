"""The whole estimate (docs/method.md section 7, the paper's Algorithm 1), stage by stage.

:func:`estimate` runs the real base selector on a few resamples of the data and
simulates everything else. Its stages are functions of their own, so that each can be
tested alone and re-run on resampled inputs (:mod:`ensstab_dask.models.bootstrap`):

1. :func:`real_subsets` (one pool) or :func:`~ensstab_dask.real.runs.real_run_plan`
   (every pool in one submission): the real runs, as their top-``n_target`` subsets;
2. :func:`threshold_draws`: t_uniform, ``repeats`` draws of ``n_runs`` uniform selectors;
3. :func:`useful_draws`: A[f], one draw per threshold, each from ``n_runs`` runs of the
   pool (without replacement when the pool is larger), and :func:`round_n_useful`;
4. :func:`real_stability_of`: the single real selector's stability, with Nogueira's
   interval;
5. p from that stability (:func:`~ensstab_dask.simulator.estimators.estimate_p`, common random
   numbers, ``repeats x m_stability`` simulated copies so that its noise is small);
6. the fixed point u = A[f_{u,p}] and :func:`fixed_point_power`, whether the check could
   have failed at all;
7. :func:`predict_curve`: the simulated curve for each ``m_ensemble``;

then a bootstrap over the real runs gives every quantity an interval, and
:func:`guard_rails` says when the method has nothing to say. Stages 2 to 7 and what
follows them, on given runs, are :mod:`~ensstab_dask.estimates.stages`'
(:func:`estimate_from_runs`); this module makes the real runs, the rounds of a
``precision`` (:mod:`~ensstab_dask.estimates.rounds`) and the curve at several
``n_target`` (:mod:`~ensstab_dask.estimates.surface`).

Which runs calibrate the simulator (``calibration_layout``, docs/method.md section 8):

* ``"paper"``: every run on ``resample`` (random halves): the paper's method, one pool
  of ``max(m_stability, n_runs)`` runs;
* ``"ensemble"``: p from ``m_stability`` runs in the ensemble's own weak-selector layout
  (``member_resample``, default a bootstrap sample of a random half, as the naive check's
  bagging ensembles), n_useful from ``n_runs`` runs on ``resample``: two pools. The
  default (docs/validation.md compares the layouts);
* ``"ensemble-all"``: n_useful and p both from one pool in the weak-selector layout.

The naive check (:mod:`ensstab_dask.real.naive`), leave-one-out accuracy
(:mod:`ensstab_dask.real.accuracy`) and the validation harness (:mod:`ensstab_dask.estimates.validation`)
live in their own modules.
"""

from __future__ import annotations

import dataclasses
import warnings as _warnings
from collections.abc import Sequence

import numpy as np

from ensstab_dask.checks import CALIBRATION_LAYOUTS, DEFAULT_CALIBRATION_LAYOUT, DEFAULT_MODEL
from ensstab_dask.cluster import ClientLike, connect
from ensstab_dask.cluster.progress import StageClock, note_dashboard
from ensstab_dask.estimates.features import check_feature_memory, feature_names_of
from ensstab_dask.estimates.result import Estimate
from ensstab_dask.estimates.rounds import grow_copies, spend_in_rounds
from ensstab_dask.estimates.stages import estimate_from_runs, real_stability_of, round_n_useful
from ensstab_dask.estimates.surface import check_surface, n_target_list, surface_dataset
from ensstab_dask.exceptions import UnreliableEstimateWarning
from ensstab_dask.models.fitting import fixed_point_power
from ensstab_dask.models.onda import predict_curve
from ensstab_dask.real.datasets import check_data
from ensstab_dask.real.runs import (
    Copies,
    Pool,
    assemble_runs,
    pool_sizes,
    real_run_plan,
    real_subsets,
    runs_from_copies,
)
from ensstab_dask.real.selectors import make_scorer, real_run
from ensstab_dask.seeding import SeedLike, Stage, Stream, as_seed_sequence, derive
from ensstab_dask.settings import EstimateSettings
from ensstab_dask.simulator.estimators import threshold_draws, useful_draws
from ensstab_dask.sweeps.cost import check_cost, estimate_cost

__all__ = [
    "estimate",
    "Estimate",
    "CALIBRATION_LAYOUTS",
    "real_subsets",
    "threshold_draws",
    "useful_draws",
    "round_n_useful",
    "real_stability_of",
    "fixed_point_power",
    "predict_curve",
    "runs_from_copies",
    "estimate_from_runs",
]


def estimate(
    X,
    y,
    n_target: int | Sequence[int],
    *,
    selector=None,
    m_ensemble=(1, 5, 10, 20, 30, 50),
    m_stability: int = 50,
    n_runs: int | None = None,
    repeats: int = 20,
    p_method: str = "bisect",
    verify: bool = True,
    calibrate: bool = False,
    calibration_layout: str = DEFAULT_CALIBRATION_LAYOUT,
    member_resample="bagging",
    n_boot: int = 200,
    confidence: float = 0.95,
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    resample="half",
    seed: SeedLike = 0,
    client: ClientLike = None,
    model: str = DEFAULT_MODEL,
    progress: bool = True,
    allow_large: bool = False,
    precision: float | None = None,
    max_real_runs: int | None = None,
    feature_names=None,
) -> Estimate:
    """Predict the stability of ensembles of a base selector on ``(X, y)`` (Algorithm 1).

    Parameters
    ----------
    X, y : the data (n_samples, n_feature) and labels
    n_target : int or sequence of int
        Features each selector keeps. Several (``[20, 10, 40]``): the estimate is the
        first one's, and ``Estimate.surface`` holds the curve at each, from the same real
        runs; each row is bit for bit the estimate at that n_target alone with the same
        seed. Only a model that measures its curve on its copies (``'anchored'``) can.
    selector : None, scikit-learn estimator or callable
        See :mod:`ensstab_dask.real.selectors`; None is the default random forest.
    m_ensemble : sequence of int
        Ensemble sizes to predict.
    m_stability : int
        Copies behind each stability value (real single selector and simulations).
    n_runs : int, optional
        Runs behind t_uniform and n_useful; default ``max(m_ensemble)``: the method ties
        it to the ensemble size.
    repeats : int
        Draws of t_uniform, n_useful, A[f_{u,p}] and of each predicted stability.
    p_method : {'bisect', 'grid'}
    verify : bool
        Check the fixed point u = A[f_{u,p}], and whether that check has power.
    calibrate : bool
        Also intersect the two surfaces over a (u, p) grid (docs/method.md section 6) and predict
        with the calibrated (u, p) when the intersection is not empty. The interval then
        is the bootstrap spread of the A[f]/p path placed around the calibrated point
        (the intersection itself is not re-run per replicate).
    calibration_layout : {'paper', 'ensemble', 'ensemble-all'}
        Which real runs calibrate the simulator; see the module docstring.
    member_resample : str or float
        How the ensemble's weak selectors see the data, for ``calibration_layout``
        other than ``'paper'``: ``'bagging'`` (default, a bootstrap sample of a random
        half, the naive check's layout), or any ``resample``.
    n_boot : int
        Bootstrap replicates of the real runs behind every interval; 0 turns the
        bootstrap off (then only the simulation's spread is reported).
    confidence : float
        Level of the percentile intervals, in (0, 1).
    aggregate, index : str
        Ensemble algorithm and stability index.
    resample : str or float
        Resample of the runs behind n_useful (and, for ``'paper'``, p): ``'half'``
        (default), ``'bootstrap'``, ``'bagging'`` or a fraction.
    seed : int
    client : where the real runs and the simulations run (see :mod:`ensstab_dask.cluster`).
    model : {'anchored', 'onda', 'two-level', 'random-effects'}
        What makes the curve (:mod:`ensstab_dask.models`). ``'anchored'``: measured on
        10 real ensemble copies of 20 weak selectors in the naive check's layout (200
        real runs, whatever ``m_ensemble``), extrapolated beyond 20 by the law
        ``a - b sqrt(c + 1/m)`` with a model band (docs/anchored_model.md); it needs no
        other real runs and ``index`` must be a pairwise one. ``'onda'``: the paper's
        simulator, exactly as published, plus 40 real runs (10 copies of 4) for its
        self-check. ``'two-level'``: each ensemble
        copy has its own preferred set of ``h`` features (docs/two_level_model.md),
        ``h`` fitted to 20 more real runs (4 copies of 5). ``'random-effects'``: a model
        of the real weak selectors' ranks (docs/random_effects_model.md), fitted to 100
        more real runs (10 copies of 10); pairwise indices only. Every model is
        self-checked against real ensembles it did not use (``self_check``): a failed
        check makes the estimate unreliable and widens its interval by the error seen.
        docs/validation.md compares the four; docs/models.md says why the default is
        ``'anchored'``.
    progress : bool
        Progress bars on stderr, one per stage (real runs, simulations), and the Dask
        dashboard link; drawn on a terminal or in a notebook, never into a file or a
        pipe (see :mod:`ensstab_dask.cluster.progress`). False: nothing.
    allow_large : bool
        Run even above 10,000 real runs or 10^8 simulated selectors; without it such an
        estimate is refused before any work, saying what it would cost
        (:mod:`ensstab_dask.sweeps.cost`).
    precision : float, optional
        The half-width of the interval wanted at the largest ``m_ensemble``: the estimate
        spends real runs in rounds (more copies, or more members per copy, whichever
        part of the interval is larger) until its interval is that narrow or
        ``max_real_runs`` stops it, and records what it spent and why
        (:attr:`Estimate.spending`; :mod:`ensstab_dask.estimates.rounds`). Needs a model
        that measures real ensemble copies (the default).
    max_real_runs : int, optional
        The cap on real runs for ``precision`` (default 1,000), at least the first
        round's.
    feature_names : sequence of str, optional
        One name per feature, for ``Estimate.features`` (each feature's selection
        frequency over the model's real ensemble copies, :mod:`ensstab_dask.estimates.features`);
        default: the columns of a pandas ``X``, else ``x0, x1, ...``.

    Returns
    -------
    Estimate

    Examples
    --------
    A tiny run (5-tree forests, a few runs, no bootstrap), to show the calls; a real
    estimate uses the defaults:

    >>> import ensstab_dask as es
    >>> from ensstab_dask.real.datasets import make_microarray
    >>> from ensstab_dask.real.selectors import default_selector
    >>> data = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> est = es.estimate(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3), m_stability=5,
    ...                   n_runs=10, repeats=2, n_boot=0, client="synchronous", progress=False)
    >>> est.real_runs  # the default model: 10 real ensemble copies of 20 weak selectors, whatever m_ensemble
    200
    >>> est.self_check.sizes  # checked against m = 20, measured on those copies
    (20,)
    >>> paper = es.estimate(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3), m_stability=5,
    ...                     n_runs=10, repeats=2, n_boot=0, client="synchronous", progress=False, model="onda")
    >>> paper.real_runs  # n_runs=10 behind n_useful, m_stability=5 behind the real stability, 40 for its self-check
    55
    >>> sorted(est.predicted())  # the predicted stability for each m_ensemble
    [1, 3]
    >>> est.reliable == (not est.warnings)
    True
    """
    names = feature_names if feature_names is not None else getattr(X, "columns", None)
    X, y = check_data(X, y)
    n_targets = n_target_list(n_target, n_feature=X.shape[1])
    names = feature_names_of(names, X.shape[1])
    settings = EstimateSettings(
        n_feature=X.shape[1],
        n_target=n_targets[0],
        m_ensemble=m_ensemble,
        m_stability=m_stability,
        n_runs=n_runs,  # type: ignore[arg-type]  # None: max(m_ensemble), resolved by the settings
        repeats=repeats,
        p_method=p_method,
        verify=verify,
        calibrate=calibrate,
        calibration_layout=calibration_layout,
        member_resample=member_resample,
        n_boot=n_boot,
        confidence=confidence,
        aggregate=aggregate,
        index=index,
        resample=resample,
        seed=seed,
        selector=selector,
        model=model,
        precision=precision,
        max_real_runs=max_real_runs,
    )
    _check_cost(X, y, settings, allow_large=allow_large)
    check_surface(settings.curve_model, n_targets)
    check_feature_memory(settings)
    scorer = make_scorer(selector)

    with connect(client) as c:
        note_dashboard(c, progress)
        target = "synchronous" if c is None else c
        clock = StageClock()
        with clock.stage("real_runs"):
            runs, copy_ranks, check_ranks = _real_runs(X, y, settings, scorer=scorer, client=target, progress=progress)
        est = estimate_from_runs(runs, settings, client=target, copy_ranks=copy_ranks, check_ranks=check_ranks,
                                 progress=progress, clock=clock, feature_names=names)  # fmt: skip
        if settings.precision is not None:
            est, copy_ranks = _in_rounds(est, (X, y, scorer, names), settings, copies=(copy_ranks, check_ranks),
                                         client=target, progress=progress, clock=clock)  # fmt: skip
        _add_surface(est, settings, n_targets[1:], client=target, copies=(copy_ranks, check_ranks), clock=clock)
    for w in est.warnings:
        _warnings.warn(w, UnreliableEstimateWarning, stacklevel=2)
    return est


def _add_surface(est: Estimate, settings: EstimateSettings, others: list[int], *, client, copies,
                 clock: StageClock) -> None:  # fmt: skip
    """The estimate at each other n_target on the same copies (``copies``: the model's and its
    self-check's ranks), as ``est.surface``: no real run, and each row what the estimate
    at that n_target alone gives (the same runs, settings and streams)."""
    if not others:
        return
    copy_ranks, check_ranks = copies
    with clock.stage("surface"):
        at = {k: estimate_from_runs(runs_from_copies(copy_ranks, k), dataclasses.replace(settings, n_target=k),
                                    client=client, copy_ranks=copy_ranks, check_ranks=check_ranks)
              for k in others}  # fmt: skip
        est.surface = surface_dataset({est.n_target: est, **at}, own=est.n_target)


def _in_rounds(first: Estimate, data: tuple, settings: EstimateSettings, *, copies: tuple, client, progress: bool,
               clock: StageClock) -> tuple[Estimate, np.ndarray]:  # fmt: skip
    """The estimate again on more real copies until ``settings.precision`` is reached or
    ``settings.max_real_runs`` stops it (:func:`~ensstab_dask.estimates.rounds.spend_in_rounds`);
    each round runs only the copies and members it adds, and every stage's seconds add up
    over the rounds. ``data`` is ``(X, y, scorer, feature_names)``; ``copies`` the first
    round's ``(copy_ranks, check_ranks)``. Returns the estimate and the copies it ended on."""
    X, y, scorer, names = data
    ranks, check_ranks = copies
    design = settings.curve_model.copy_design()
    assert design is not None and ranks is not None  # the settings refused precision otherwise
    seed = derive(as_seed_sequence(settings.seed), Stream.ESTIMATE, Stage.COPIES)

    def grow(old: tuple[int, int], new: tuple[int, int]) -> Estimate:
        nonlocal ranks
        (G, B), (G2, B2) = old, new
        plan = [Copies(G, B2 - B, seed, first_member=B)] * (B2 > B)  # new members of the old copies
        plan += [Copies(G2 - G, B2, seed, first_copy=G)] * (G2 > G)  # new copies
        spent = dict(clock)
        with clock.stage("real_runs"):
            made = real_run_plan(X, y, plan, selector=scorer, client=client, progress=progress)
        ranks = grow_copies(ranks, made.pop(0) if B2 > B else None, made.pop(0) if G2 > G else None)
        est = estimate_from_runs(runs_from_copies(ranks, settings.n_target), settings, client=client,
                                 copy_ranks=ranks, check_ranks=check_ranks, progress=progress, clock=clock,
                                 feature_names=names)  # fmt: skip
        for stage, seconds in spent.items():
            clock[stage] += seconds
        return est

    est, spent = spend_in_rounds(first, design, grow, precision=settings.precision,
                                 max_real_runs=settings.max_real_runs)  # fmt: skip
    est.spending = spent
    return est, ranks


def _check_cost(X, y, settings: EstimateSettings, *, allow_large: bool) -> None:
    """The estimate's real runs and simulated selectors against the cost thresholds, before
    any work (:func:`~ensstab_dask.sweeps.cost.check_cost`)."""
    s, curve_model = settings, settings.curve_model
    paper = (
        sum(pool_sizes(s.calibration_layout, n_runs=s.n_runs, m_stability=s.m_stability))
        if curve_model.paper_runs
        else 0
    )
    real, simulated = estimate_cost(
        paper_runs=paper,
        designs=(curve_model.copy_design(), curve_model.check_design()),
        simulator=curve_model.simulator,
        m_list=s.m_list,
        m_stability=s.m_stability,
        n_runs=s.n_runs,
        repeats=s.repeats,
    )
    if s.max_real_runs is not None:  # what precision's rounds may spend
        real = max(real, s.max_real_runs)
    check_cost("the estimate", n_feature=s.n_feature, real_runs=real, simulated=simulated, allow_large=allow_large,
               time_one_run=lambda: real_run(X, y, s.n_target, selector=s.selector, resample=s.resample))  # fmt: skip


def _real_runs(X, y, settings: EstimateSettings, *, scorer, client, progress: bool):
    """Stage 1, every real run a model asks for: the paper's pools (as ``calibration_layout``
    says), its real ensemble copies, and copies for its self-check.

    Returns ``(runs, copy_ranks, check_ranks)``. A model without runs of the paper's
    gets its single-selector statistics from its copies (:func:`runs_from_copies`).
    """
    s, curve_model, seed = settings, settings.curve_model, as_seed_sequence(settings.seed)
    # One submission for every run: item by item, the workers idle at each item's tail.
    plan: dict[str, Pool | Copies] = {}
    if curve_model.paper_runs:
        half_n, member_n = pool_sizes(s.calibration_layout, n_runs=s.n_runs, m_stability=s.m_stability)
        pools = (("half", half_n, s.resample, Stage.REAL), ("member", member_n, s.member_resample, Stage.MEMBER_RUNS))
        for name, size, how, stage in pools:
            if size:
                plan[name] = Pool(size, how, derive(seed, Stream.ESTIMATE, stage))
    designs = (
        ("copies", curve_model.copy_design(), Stage.COPIES),
        ("check", curve_model.check_design(), Stage.CHECK_COPIES),
    )
    for name, design, stage in designs:
        if design is not None:
            plan[name] = Copies(*design, derive(seed, Stream.ESTIMATE, stage))
    made = dict(zip(plan, real_run_plan(X, y, list(plan.values()), selector=scorer, client=client, progress=progress)))
    copy_ranks, check_ranks = made.pop("copies", None), made.pop("check", None)
    runs = None
    if made:
        runs = assemble_runs(s.calibration_layout, n_runs=s.n_runs, m_stability=s.m_stability, **made).top(s.n_target)
    if runs is None:
        assert copy_ranks is not None  # a model without the paper's runs fits copies
        runs = runs_from_copies(copy_ranks, s.n_target)
    return runs, copy_ranks, check_ranks
