"""The whole estimate (SPEC section 7, the paper's Algorithm 1) and the naive real check.

:func:`estimate` runs the real base selector ``max(m_stability, n_runs)`` times (one
pool of runs on the default resample, random halves of the data), and everything else
by simulation:

1. t_uniform from ``n_runs`` uniform selectors, over ``repeats`` draws;
2. n_useful = A[f] over ``repeats`` draws, each from ``n_runs`` runs taken without
   replacement from the pool (so the spread reflects the choice of runs, not fully
   independent experiments; when ``n_runs >= m_stability`` every draw uses the same
   runs and the spread is the threshold's alone);
3. the stability of the single real selector from ``m_stability`` runs of the pool,
   with Nogueira's confidence interval;
4. p from that stability (bisection or grid, common random numbers, the simulated
   curve from ``repeats x m_stability`` copies so that its noise is small);
5. optionally the fixed point u = A[f_{u,p}] (``verify``) and the grid intersection
   (``calibrate``);
6. the predicted stability of ensembles for each ``m_ensemble``, ``repeats`` draws each.

:func:`real_ensemble_stability` is what the estimate replaces:
``m_stability x max(m_ensemble)`` real runs. Each copy has its own random half of the
data and a pool of ``max(m_ensemble)`` weak selectors fitted on bootstrap samples of it
(``layout="bagging"``, the method's layout, SPEC section 8); the ensemble of size m is
the first m of the pool. Each ensemble is then exactly an ensemble of m independent
weak selectors, so reusing the pool across m changes no ensemble's distribution (the
curve's points are correlated, not biased). ``layout="independent"`` gives every weak
selector its own half of all the data; the simulator does not model that layout.

Note the built-in gap at ``m_ensemble = 1``: p is calibrated (SPEC section 8) on single
runs fitted on random halves, while a one-member "bagging" ensemble is fitted on a
bootstrap sample of a half, which is less stable.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from ._validation import AGGREGATES, INDICES, check_choice, check_int
from ._version import __version__
from .aggregation import aggregate_rankings
from .cluster import ClientLike, connect, map_shared
from .datasets import check_data
from .estimation import (
    PEstimate,
    check_fixed_point,
    count_useful,
    estimate_p,
    selection_counts,
    uniform_subsets,
    uniform_threshold,
)
from .seeding import Stream, as_seed_sequence, derive, make_rng
from .selectors import _check_resample, _member_batch, make_scorer, real_runs
from .simulation import top_subsets
from .stability import NogueiraStability, _stability_of_array, jackknife_std, nogueira_stability

__all__ = ["estimate", "Estimate", "real_ensemble_stability", "prediction_accuracy", "PredictionAccuracy"]

# Stages of the estimate, second key of derive(seed, Stream.ESTIMATE, stage, ...).
_T_UNIFORM, _REAL, _POOL, _P, _VERIFY, _PREDICT, _CALIBRATE = range(7)


def _check_m_ensemble(m_ensemble) -> list[int]:
    """Ensemble sizes, validated like a sweep's grid (sorted, >= 1, no duplicates)."""
    from .sweep import _check_grid

    return _check_grid(m_ensemble, "m_ensemble", "m", 0, 0).tolist()


@dataclass
class Estimate:
    """The result of :func:`estimate`. ``summary()`` for people, ``to_dataset()`` for xarray."""

    n_feature: int
    n_target: int
    settings: dict
    t_uniform: float
    t_uniform_std: float
    n_useful: int
    n_useful_mean: float
    n_useful_std: float
    n_useful_draws: np.ndarray = field(repr=False)
    real_stability: float
    real_nogueira: NogueiraStability
    p: float
    p_fit: PEstimate = field(repr=False)
    n_useful_v: float | None
    n_useful_v_std: float | None
    fixed_point_holds: bool | None
    calibrated: tuple[int, float] | None
    curve: xr.Dataset = field(repr=False)
    real_runs: int
    simulated_runs: int
    seconds: dict[str, float]
    selection_counts: np.ndarray = field(repr=False, default=None)
    t_uniform_draws: np.ndarray = field(repr=False, default=None)
    uniform_counts: np.ndarray = field(repr=False, default=None)
    calibration: xr.Dataset | None = field(repr=False, default=None)

    @property
    def threshold_saturated(self) -> int:
        """Draws in which t_uniform reached n_runs: no feature can be counted above it there,
        so those draws of A[f] are 0 whatever the selector (n_runs is too small)."""
        return int((self.t_uniform_draws >= self.settings["n_runs"]).sum())

    def _n_useful_note(self) -> str:
        if self.threshold_saturated:
            return (
                f"; in {self.threshold_saturated} of {len(self.t_uniform_draws)} draws t_uniform reached "
                f"n_runs={self.settings['n_runs']}, where A[f] cannot see useful features: increase n_runs"
            )
        if self.n_useful_mean < self.n_target - 0.5:
            return f"; below n_target, raised to {self.n_target}: the selector barely beats chance"
        return ""

    def predicted(self) -> dict[int, float]:
        """Predicted stability for each m_ensemble."""
        return {int(m): float(s) for m, s in zip(self.curve["m_ensemble"].values, self.curve["stability"].values)}

    def to_dict(self) -> dict:
        """The JSON-able summary (the keys of ``ensstab estimate --json``)."""
        return {
            "n_feature": self.n_feature,
            "n_target": self.n_target,
            "t_uniform": self.t_uniform,
            "t_uniform_std": self.t_uniform_std,
            "n_useful": self.n_useful,
            "n_useful_mean": self.n_useful_mean,
            "n_useful_std": self.n_useful_std,
            "real_stability": self.real_stability,
            "real_stability_nogueira": {
                "stability": self.real_nogueira.stability,
                "lower": self.real_nogueira.lower,
                "upper": self.real_nogueira.upper,
            },
            "p": self.p,
            "n_useful_v": self.n_useful_v,
            "n_useful_v_std": self.n_useful_v_std,
            "fixed_point_holds": self.fixed_point_holds,
            "calibrated": None
            if self.calibrated is None
            else {"n_useful": self.calibrated[0], "p": self.calibrated[1]},
            "curve": {str(m): s for m, s in self.predicted().items()},
            "curve_std": {
                str(int(m)): float(s)
                for m, s in zip(self.curve["m_ensemble"].values, self.curve["stability_std"].values)
            },
            "real_runs": self.real_runs,
            "simulated_runs": self.simulated_runs,
            "seconds": self.seconds,
            "settings": self.settings,
            "version": __version__,
        }

    def to_dataset(self, real: xr.Dataset | None = None) -> xr.Dataset:
        """Everything the estimate found, as one Dataset (what the report and plots read).

        Parameters
        ----------
        real : xarray.Dataset, optional
            The naive check from :func:`real_ensemble_stability` on the same data, stored
            beside the prediction as ``naive_*`` variables.

        Returns
        -------
        xarray.Dataset
            ``stability``, ``stability_std``, ``stability_draws`` over ``m_ensemble`` (the
            predicted curve); ``selection_counts`` and ``uniform_counts`` over ``feature``
            (real runs and one draw of the uniform selector, both ``n_runs`` runs);
            ``t_uniform_draws`` and ``n_useful_draws`` over ``repeat``; with
            ``calibrate=True``, ``calibration_*`` surfaces over (``n_useful``, ``p``);
            every scalar of the estimate in ``attrs``.
        """
        ds = self.curve.copy()
        runs = {"long_name": f"times in the top n_target of {self.settings['n_runs']} runs", "units": "runs"}
        ds["selection_counts"] = (
            "feature",
            self.selection_counts,
            dict(runs, long_name="real selector: " + runs["long_name"]),
        )
        if self.uniform_counts is not None:
            ds["uniform_counts"] = (
                "feature",
                self.uniform_counts,
                dict(runs, long_name="uniform selector: " + runs["long_name"]),
            )
        ds["t_uniform_draws"] = (
            "repeat",
            self.t_uniform_draws,
            {"long_name": "t_uniform, one value per repeat", "units": "runs"},
        )
        ds["n_useful_draws"] = (
            "repeat",
            self.n_useful_draws,
            {"long_name": "A[f], one value per repeat", "units": "features"},
        )
        if self.calibration is not None:
            cal = self.calibration
            for name in ("stability", "n_useful_v", "consistent"):
                var = cal[name].astype("int8") if cal[name].dtype == bool else cal[name]
                ds[f"calibration_{name}"] = var.assign_attrs(cal[name].attrs)
            ds.attrs.update({f"calibration_{k}": v for k, v in cal.attrs.items()})
        if real is not None:
            self._check_same_problem(real)
            for name in ("stability", "stability_se", "nogueira_lower", "nogueira_upper"):
                ds[f"naive_{name}"] = real[name].assign_attrs(real[name].attrs)
            ds.attrs.update(
                naive_real_runs=int(real.attrs["real_runs"]),
                naive_seconds=float(real.attrs["seconds"]),
                naive_layout=real.attrs["layout"],
                naive_m_stability=int(real.attrs["m_stability"]),
            )
        flat = {k: v for k, v in self.to_dict().items() if k not in ("curve", "curve_std", "settings", "seconds")}
        for k, v in flat.items():
            if isinstance(v, dict):
                for kk, vv in v.items():
                    ds.attrs[f"{k}_{kk}"] = vv
            elif v is None:
                ds.attrs[k] = "none"
            elif isinstance(v, bool):
                ds.attrs[k] = int(v)
            else:
                ds.attrs[k] = v
        for k, v in self.settings.items():
            ds.attrs[k] = "none" if v is None else v
        for k, v in self.seconds.items():
            ds.attrs[f"seconds_{k}"] = v
        ds.attrs["summary"] = self.summary()
        return ds

    def _check_same_problem(self, real: xr.Dataset) -> None:
        """The naive check must measure what was predicted, or the two must not share a picture."""
        mine = {
            "m_ensemble": [int(m) for m in self.curve["m_ensemble"].values],
            "n_feature": self.n_feature,
            "n_target": self.n_target,
            "index": self.settings["index"],
            "aggregate": self.settings["aggregate"],
        }
        theirs = {
            "m_ensemble": [int(m) for m in real["m_ensemble"].values],
            **{k: real.attrs.get(k) for k in ("n_feature", "n_target", "index", "aggregate")},
        }
        diffs = [
            f"{k}: {mine[k]} in the estimate, {theirs[k]} in the naive check" for k in mine if mine[k] != theirs[k]
        ]
        if diffs:
            raise ValueError("real: the naive check does not match the estimate; " + "; ".join(diffs))

    def to_netcdf(self, path, *, overwrite: bool = False):
        from .storage import write_netcdf

        return write_netcdf(self.to_dataset(), path, overwrite=overwrite)

    def to_json(self, path) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, indent=2)

    def summary(self) -> str:
        nog = self.real_nogueira
        lines = [
            f"Estimated stability of ensembles of the base selector ({self.settings['index']}, "
            f"n_feature={self.n_feature}, n_target={self.n_target})",
            f"  t_uniform            {self.t_uniform:.2f} +- {self.t_uniform_std:.2f}",
            f"  n_useful = A[f]      {self.n_useful} (mean {self.n_useful_mean:.1f} +- {self.n_useful_std:.1f})"
            + self._n_useful_note(),
            f"  real stability       {self.real_stability:.4f}  (Nogueira {nog.stability:.4f}, "
            f"95% CI [{nog.lower:.4f}, {nog.upper:.4f}])",
            f"  p                    {self.p:.4f}"
            + ("  (at the end of the search range)" if self.p_fit.at_boundary else ""),
        ]
        if self.n_useful_v is not None:
            verdict = "holds" if self.fixed_point_holds else "does NOT hold: the simulator may not model this selector"
            lines.append(
                f"  A[f_(u,p)]           {self.n_useful_v:.1f} +- {self.n_useful_v_std:.1f}; fixed point {verdict}"
            )
        if self.calibrated is not None:
            lines.append(f"  calibrated (u, p)    ({self.calibrated[0]}, {self.calibrated[1]:.3f})")
        lines.append(
            f"  predicted stability by ensemble size (simulator at n_useful={self.curve.attrs['simulator_n_useful']}, "
            f"p={self.curve.attrs['simulator_p']:.4f}):"
        )
        for m, s, sd in zip(
            self.curve["m_ensemble"].values, self.curve["stability"].values, self.curve["stability_std"].values
        ):
            lines.append(f"    m_ensemble={int(m):>4}  {s:.4f} +- {sd:.4f}")
        lines.append(
            f"  real runs {self.real_runs}, simulated runs {self.simulated_runs}, {sum(self.seconds.values()):.1f} s"
        )
        return "\n".join(lines)


def estimate(
    X,
    y,
    n_target: int,
    *,
    selector=None,
    m_ensemble=(1, 5, 10, 20, 30, 50),
    m_stability: int = 50,
    n_runs: int | None = None,
    repeats: int = 20,
    p_method: str = "bisect",
    verify: bool = True,
    calibrate: bool = False,
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    resample="half",
    seed: int = 0,
    client: ClientLike = None,
    timeout: float = 10.0,
    security=None,
) -> Estimate:
    """Predict the stability of ensembles of a base selector on ``(X, y)`` (Algorithm 1).

    Parameters
    ----------
    X, y : the data (n_samples, n_feature) and labels
    n_target : int
        Features each selector keeps.
    selector : None, scikit-learn estimator or callable
        See :mod:`ensstab_dask.selectors`; None is the default random forest.
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
        Check the fixed point u = A[f_{u,p}].
    calibrate : bool
        Also intersect the two surfaces over a (u, p) grid (SPEC section 6) and predict
        with the calibrated (u, p) when the intersection is not empty.
    seed : int
    client : where the real runs and the simulations run (see :mod:`ensstab_dask.cluster`).
    """
    X, y = check_data(X, y, n_target=n_target)
    n_feature = X.shape[1]
    m_list = _check_m_ensemble(m_ensemble)
    m_stability = check_int(m_stability, "m_stability", minimum=2)
    n_runs = max(m_list) if n_runs is None else check_int(n_runs, "n_runs", minimum=1)
    repeats = check_int(repeats, "repeats", minimum=2)
    check_choice(p_method, "p_method", ("bisect", "grid"))
    check_choice(aggregate, "aggregate", AGGREGATES)
    check_choice(index, "index", INDICES)
    _check_resample(resample)
    seed = check_int(seed, "seed", minimum=0)
    scorer = make_scorer(selector)
    ss = as_seed_sequence(seed)
    seconds: dict[str, float] = {}
    settings = dict(
        m_stability=m_stability,
        n_runs=n_runs,
        repeats=repeats,
        p_method=p_method,
        aggregate=aggregate,
        index=index,
        resample=str(resample),
        seed=seed,
        selector=_describe(selector),
    )

    with connect(client, timeout=timeout, security=security) as c:
        target = "synchronous" if c is None else c
        t0 = time.perf_counter()
        pool_size = max(m_stability, n_runs)
        ranks = real_runs(
            X,
            y,
            n_target,
            n_runs=pool_size,
            selector=scorer,
            resample=resample,
            seed=derive(ss, Stream.ESTIMATE, _REAL),
            client=target,
        )
        subsets = top_subsets(ranks, n_target)
        seconds["real_runs"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        t_draws = np.array(
            [
                uniform_threshold(n_feature, n_target, n_runs, seed=derive(ss, Stream.ESTIMATE, _T_UNIFORM, r))
                for r in range(repeats)
            ]
        )
        pool_rng = make_rng(ss, Stream.ESTIMATE, _POOL)
        u_draws = np.array(
            [
                count_useful(subsets[pool_rng.choice(pool_size, n_runs, replace=False)], n_feature, int(t))
                for t in t_draws
            ]
        )
        n_useful = int(min(max(round(float(u_draws.mean())), n_target), n_feature))
        if (t_draws >= n_runs).any():
            warnings.warn(
                f"t_uniform reached n_runs={n_runs} in {int((t_draws >= n_runs).sum())} of {repeats} draws: no feature "
                "can be counted above it there, so n_useful is underestimated; increase n_runs",
                RuntimeWarning,
                stacklevel=2,
            )
        real_stab = _stability_of_array(subsets[:m_stability], n_feature, index)
        real_nog = nogueira_stability(subsets[:m_stability], n_feature)
        seconds["n_useful_and_stability"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        # The simulated curve gets repeats x m_stability copies: the mean pairwise index
        # does not depend on the number of copies, its noise does, and the real side
        # already brings its own.
        p_copies = m_stability * repeats
        fit = estimate_p(
            real_stab,
            n_feature,
            n_target,
            n_useful,
            m_stability=p_copies,
            method=p_method,
            index=index,
            seed=derive(ss, Stream.ESTIMATE, _P),
        )
        seconds["p"] = time.perf_counter() - t0
        simulated = len(fit.evaluations) * p_copies

        nuv = nuv_std = holds = None
        if verify:
            t0 = time.perf_counter()
            chk = check_fixed_point(
                n_feature,
                n_target,
                n_useful,
                fit.p,
                n_runs=n_runs,
                repeats=repeats,
                seed=derive(ss, Stream.ESTIMATE, _VERIFY),
            )
            nuv, nuv_std, holds = chk.mean, chk.std, chk.holds
            simulated += repeats * n_runs
            seconds["verify"] = time.perf_counter() - t0

        u_pred, p_pred, calibrated, cal = n_useful, fit.p, None, None
        if calibrate:
            from .sweep import sweep

            t0 = time.perf_counter()
            grid_u = sorted(
                {int(v) for v in np.unique(np.geomspace(n_target, min(n_feature, 8 * n_useful), 16).round())}
            )
            grid_p = sorted({round(v, 3) for v in np.linspace(max(0.05, n_target / n_feature), 1.0, 20)})
            surf = sweep(
                n_feature,
                n_target,
                n_useful=grid_u,
                p=grid_p,
                m_ensemble=[1],
                n_runs=n_runs,
                m_stability=m_stability,
                repeats=max(3, repeats // 4),
                aggregate=aggregate,
                index=index,
                seed=int(derive(ss, Stream.ESTIMATE, _CALIBRATE).generate_state(1)[0] >> 1),
                client=target,
                progress=False,
            )
            cal = surf.ensstab.calibrate(max(real_stab, 1e-12), float(u_draws.mean()), n_runs=n_runs)
            cal.attrs.update(estimate_n_useful=n_useful, estimate_p=float(fit.p))
            if cal.attrs["any_consistent"]:
                calibrated = (cal.attrs["best_n_useful"], cal.attrs["best_p"])
                u_pred, p_pred = calibrated
            simulated += len(grid_u) * len(grid_p) * max(3, repeats // 4) * (m_stability + n_runs)
            seconds["calibrate"] = time.perf_counter() - t0

        from .sweep import sweep

        t0 = time.perf_counter()
        pred = sweep(
            n_feature,
            n_target,
            n_useful=[u_pred],
            p=[p_pred],
            m_ensemble=m_list,
            n_runs=n_runs,
            m_stability=m_stability,
            repeats=repeats,
            aggregate=aggregate,
            index=index,
            seed=int(derive(ss, Stream.ESTIMATE, _PREDICT).generate_state(1)[0] >> 1),
            client=target,
            progress=False,
        )
        simulated += repeats * m_stability * sum(m_list)
        seconds["predict"] = time.perf_counter() - t0

    curve = pred[["stability", "stability_std", "stability_draws"]].squeeze(["n_useful", "p"], drop=True)
    curve = curve.drop_vars("n_runs", errors="ignore")
    curve.attrs = {
        "title": "ensstab_dask predicted stability of ensembles",
        "simulator_n_useful": u_pred,  # calibrated when calibrate=True found a consistent cell
        "simulator_p": p_pred,
    }
    return Estimate(
        n_feature=n_feature,
        n_target=n_target,
        settings=settings,
        t_uniform=float(t_draws.mean()),
        t_uniform_std=float(t_draws.std(ddof=1)),
        n_useful=n_useful,
        n_useful_mean=float(u_draws.mean()),
        n_useful_std=float(u_draws.std(ddof=1)),
        n_useful_draws=u_draws,
        real_stability=float(real_stab),
        real_nogueira=real_nog,
        p=float(fit.p),
        p_fit=fit,
        n_useful_v=nuv,
        n_useful_v_std=nuv_std,
        fixed_point_holds=holds,
        calibrated=calibrated,
        curve=curve,
        real_runs=pool_size,
        simulated_runs=int(simulated),
        seconds=seconds,
        selection_counts=selection_counts(subsets[:n_runs], n_feature),
        t_uniform_draws=t_draws,
        # The first draw behind t_uniform, kept for the picture of counts; its max is t_draws[0].
        uniform_counts=selection_counts(
            uniform_subsets(n_feature, n_target, n_runs, seed=derive(ss, Stream.ESTIMATE, _T_UNIFORM, 0)), n_feature
        ),
        calibration=cal,
    )


def _describe(selector) -> str:
    if selector is None:
        return "RandomForestClassifier(n_estimators=300, max_features='sqrt', criterion='gini')"
    return repr(selector) if hasattr(selector, "get_params") else getattr(selector, "__name__", repr(selector))


def real_ensemble_stability(
    X,
    y,
    n_target: int,
    *,
    m_ensemble=(1, 5, 10, 20, 30, 50),
    m_stability: int = 50,
    selector=None,
    layout: str = "bagging",
    aggregate: str = "mean_rank",
    index: str = "jaccard",
    seed: int = 0,
    client: ClientLike = None,
    batch_size: int = 1,
    timeout: float = 10.0,
    security=None,
) -> xr.Dataset:
    """The naive check: measure ensemble stability with real runs (see the module docstring).

    Returns
    -------
    xarray.Dataset over ``m_ensemble``: ``stability`` (``index``), ``nogueira`` with its
    ``nogueira_lower``/``nogueira_upper`` 95 % interval, and ``attrs`` with the real-run
    count and wall time.
    """
    X, y = check_data(X, y, n_target=n_target)
    n_feature = X.shape[1]
    m_list = _check_m_ensemble(m_ensemble)
    m_stability = check_int(m_stability, "m_stability", minimum=2)
    check_choice(layout, "layout", ("bagging", "independent"))
    check_choice(aggregate, "aggregate", AGGREGATES)
    check_choice(index, "index", INDICES)
    seed = check_int(seed, "seed", minimum=0)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    scorer = make_scorer(selector)
    ss = as_seed_sequence(seed)
    pool = max(m_list)
    tasks = []
    for copy in range(m_stability):
        copy_ss = derive(ss, Stream.REAL_ENSEMBLE, copy)
        members = [derive(ss, Stream.REAL_ENSEMBLE, copy, j + 1) for j in range(pool)]
        for start in range(0, pool, batch_size):
            tasks.append((copy, copy_ss, members[start : start + batch_size]))
    with connect(client, timeout=timeout, security=security) as c:
        # Timed from a running cluster, as the estimate is, so that costs compare fairly.
        t0 = time.perf_counter()
        parts = map_shared(
            _member_batch, (scorer, X, y, layout), [(cs, ms) for _, cs, ms in tasks], client=c or "synchronous"
        )
    ranks = np.empty((m_stability, pool, n_feature), dtype=np.int64)
    filled = np.zeros(m_stability, dtype=int)
    for (copy, _, ms), part in zip(tasks, parts):
        ranks[copy, filled[copy] : filled[copy] + len(ms)] = part
        filled[copy] += len(ms)
    stab, stab_se, nog, lo, hi = [], [], [], [], []
    for m in m_list:
        chosen = np.stack(
            [
                aggregate_rankings(
                    ranks[copy, :m], n_target, aggregate=aggregate, seed=make_rng(ss, Stream.REAL_ENSEMBLE, copy, 0, m)
                )
                for copy in range(m_stability)
            ]
        )
        stab.append(_stability_of_array(chosen, n_feature, index))
        stab_se.append(jackknife_std(chosen, n_feature, index) if m_stability >= 3 else float("nan"))
        res = nogueira_stability(chosen, n_feature)
        nog.append(res.stability)
        lo.append(res.lower)
        hi.append(res.upper)
    seconds = time.perf_counter() - t0
    coords = {
        "m_ensemble": (
            "m_ensemble",
            m_list,
            {"long_name": "weak selectors per ensemble (m_ensemble)", "units": "selectors"},
        )
    }
    ds = xr.Dataset(
        {
            "stability": ("m_ensemble", stab, {"long_name": f"real ensemble stability ({index})", "units": "1"}),
            "stability_se": (
                "m_ensemble",
                stab_se,
                {"long_name": "jackknife standard error of the real stability (leave one copy out)", "units": "1"},
            ),
            "nogueira": ("m_ensemble", nog, {"long_name": "Nogueira stability of the real ensembles", "units": "1"}),
            "nogueira_lower": ("m_ensemble", lo, {"long_name": "lower end of Nogueira's 95 % interval", "units": "1"}),
            "nogueira_upper": ("m_ensemble", hi, {"long_name": "upper end of Nogueira's 95 % interval", "units": "1"}),
        },
        coords=coords,
    )
    ds.attrs.update(
        title="ensstab_dask naive real ensemble stability",
        n_feature=n_feature,
        n_target=n_target,
        m_stability=m_stability,
        layout=layout,
        modelled_by_simulator=int(layout == "bagging"),
        aggregate=aggregate,
        index=index,
        seed=seed,
        selector=_describe(selector),
        real_runs=m_stability * pool,
        seconds=seconds,
        ensstab_dask_version=__version__,
    )
    return ds


@dataclass(frozen=True)
class PredictionAccuracy:
    """Leave-one-out accuracy of a predictor trained on the selected features."""

    accuracy: float
    std_error: float
    n_samples: int
    predictions: np.ndarray = field(repr=False)
    n_target: int
    m_ensemble: int


def _loo_fold(scorer, predictor, X, y, n_target, m_ensemble, aggregate, fold, fold_seed):
    """One fold: leave sample ``fold`` out, select on one half of the rest, train on the other."""
    from sklearn.base import clone

    rng = make_rng(fold_seed)
    rest = np.delete(np.arange(len(X)), fold)
    order = rng.permutation(rest)
    select_half, train_half = order[: len(order) // 2], order[len(order) // 2 :]
    if m_ensemble == 1:
        ranks = _member_batch(scorer, X[select_half], y[select_half], "independent-full", None, [derive(fold_seed, 1)])
    else:
        members = [derive(fold_seed, 1 + j) for j in range(m_ensemble)]
        ranks = _member_batch(scorer, X[select_half], y[select_half], "bagging-full", None, members)
    chosen = aggregate_rankings(ranks, n_target, aggregate=aggregate, seed=derive(fold_seed, 0))
    model = clone(predictor)
    if "random_state" in model.get_params():
        model.set_params(random_state=int(rng.integers(0, 2**31 - 1)))
    model.fit(X[np.ix_(train_half, chosen)], y[train_half])
    return model.predict(X[np.ix_([fold], chosen)])[0]


def prediction_accuracy(
    X,
    y,
    n_target: int,
    *,
    selector=None,
    predictor=None,
    m_ensemble: int = 1,
    aggregate: str = "mean_rank",
    seed: int = 0,
    client: ClientLike = None,
    timeout: float = 10.0,
    security=None,
) -> PredictionAccuracy:
    """The paper's way of choosing n_target (SPEC section 8), leave-one-out.

    For each sample: leave it out, split the rest at random into a feature-selection
    half and a predictor half, select ``n_target`` features on the first (one run of the
    base selector, or an ensemble of ``m_ensemble`` runs on bootstrap samples of it),
    train ``predictor`` (default: a 300-tree random forest) on the second with those
    features, and predict the left-out sample. Fold ``i`` uses
    ``derive(seed, Stream.PREDICTION, i)``; folds run as Dask tasks.
    """
    X, y = check_data(X, y, n_target=n_target)
    m_ensemble = check_int(m_ensemble, "m_ensemble", minimum=1)
    check_choice(aggregate, "aggregate", AGGREGATES)
    seed = check_int(seed, "seed", minimum=0)
    scorer = make_scorer(selector)
    if predictor is None:
        from sklearn.ensemble import RandomForestClassifier

        predictor = RandomForestClassifier(n_estimators=300, n_jobs=1)
    ss = as_seed_sequence(seed)
    folds = [(fold, derive(ss, Stream.PREDICTION, fold)) for fold in range(len(X))]
    preds = map_shared(
        _loo_fold,
        (scorer, predictor, X, y, n_target, m_ensemble, aggregate),
        folds,
        client=client,
        timeout=timeout,
        security=security,
    )
    preds = np.asarray(preds)
    correct = preds == y
    acc = float(correct.mean())
    return PredictionAccuracy(acc, float(np.sqrt(acc * (1 - acc) / len(y))), len(y), preds, n_target, m_ensemble)
