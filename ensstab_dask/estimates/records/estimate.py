"""The result of an estimate: :class:`Estimate`, its JSON (``to_dict``) and its Dataset
(``to_dataset``, what the report and the plots read). Its words are :mod:`ensstab_dask.estimates.words.summary`'s."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from ensstab_dask._version import __version__
from ensstab_dask.estimates.records.parts import (
    CurvePrediction,
    FittedSimulator,
    SingleSelector,
    Verdict,
    parts,
    with_coord_attrs,
)
from ensstab_dask.estimates.records.spending import Cost, Spending
from ensstab_dask.estimates.stages.features import feature_table
from ensstab_dask.estimates.validation.comparison import compare, comparison_dataset
from ensstab_dask.estimates.words.summary import (
    estimate_details,
    estimate_summary,
    plain_answer,
    single_selector_stability,
)
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.models import SelfCheck
from ensstab_dask.outputs import json_attrs, write_netcdf
from ensstab_dask.outputs.visible import visible
from ensstab_dask.wording import Spelling, param

__all__ = ["Estimate", "stack_estimates"]


@dataclass
class Estimate:
    """The result of :func:`estimate`. ``summary()`` for people, ``to_dataset()`` for xarray.

    Its fields are the records a reader names (:mod:`~ensstab_dask.estimates.records.parts`);
    a part the model did not compute is None, and absent from ``to_dict()``.

    Attributes
    ----------
    n_feature, n_target : int
        The problem.
    settings : dict
        The settings :func:`estimate` ran with (``n_runs``, ``m_stability``, ``seed`` ...).
    single : SingleSelector
        What the real runs measured of the single selector: ``t_uniform``, ``n_useful``
        (A[f], and the value a simulator runs at), ``real_stability`` with Nogueira's
        interval, their draws, and the selection counts (docs/method.md sections 4-5).
    fit : FittedSimulator or None
        The paper's simulator fitted to them (``p``, the fixed point, the calibration); None
        for a model whose curve is not the simulator's.
    prediction : CurvePrediction
        The model's curve (``curve``, the predicted ``stability`` over ``m_ensemble``), its
        ``intervals`` and bootstrap at level ``confidence``, what made it (``source``), and
        ``has_curve``, False when the method has nothing to say (the curve is then all NaN
        and is not presented).
    self_check : SelfCheck or None
        The model against real ensembles it did not use.
    verdict : Verdict
        ``reliable`` (False when any guard rail tripped), ``warnings`` saying which, in
        words, and ``notes``; and ``spelling``, how its words name a setting (Python's
        ``n_target=13`` by default; ``spelled()`` gives the estimate in other names).
    features : xarray.Dataset or None
        Each feature's selection frequency over the model's real ensemble copies, per
        measured ensemble size, with its interval and mean rank, named
        (:mod:`~ensstab_dask.estimates.stages.features`); ``feature_table()`` as a table. Made
        whatever the verdict; None for a model without copies.
    accuracy : xarray.Dataset or None
        With a ``predictor``: each copy's features at each measured size scored on the half
        of the samples the copy did not see, the mean over copies and its SE
        (:mod:`~ensstab_dask.estimates.stages.held_out`); None without one.
    surface : xarray.Dataset or None
        With several ``n_target``: the curve at each, over (``n_target``, ``m_ensemble``)
        (:mod:`~ensstab_dask.estimates.stages.surface`).
    spending : Spending or None
        With a ``precision``: the rounds of real runs it spent, and why
        (:mod:`~ensstab_dask.estimates.stages.rounds`).
    cost : Cost
        Runs of the real selector and of the simulated one, and the wall time of each stage.

    ``curve``, ``has_curve``, ``reliable``, ``warnings``, ``notes`` and ``real_runs`` read
    their records.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> from ensstab_dask.real.datasets import make_microarray
    >>> from ensstab_dask.real.selectors import default_selector
    >>> data = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    >>> est = es.estimate(data.X, data.y, 3, selector=default_selector(5), m_ensemble=(1, 3), m_stability=5,
    ...                   n_runs=10, repeats=2, n_boot=0, client="synchronous", progress=False)
    >>> est.n_feature, est.n_target, est.settings["n_runs"]
    (200, 3, 10)
    >>> est.curve_interval()  # empty: n_boot=0 turns the bootstrap off
    {}
    >>> est.fit is None  # the default model fits no simulator
    True
    >>> ds = est.to_dataset()
    >>> ds.attrs["kind"], "stability" in ds
    ('estimate', True)
    """

    n_feature: int
    n_target: int
    settings: dict
    single: SingleSelector
    prediction: CurvePrediction
    verdict: Verdict
    cost: Cost
    fit: FittedSimulator | None = None
    self_check: SelfCheck | None = None
    features: xr.Dataset | None = field(repr=False, default=None)
    accuracy: xr.Dataset | None = field(repr=False, default=None)
    surface: xr.Dataset | None = field(repr=False, default=None)
    spending: Spending | None = None

    def spelled(self, spelling: Spelling) -> Estimate:
        """The estimate whose words (its warnings, notes, summary, answer and the text of
        its Dataset and JSON) name the settings as ``spelling`` writes them: the command
        line's options, say, where the library writes ``n_target=13``
        (:mod:`ensstab_dask.wording`; the verdict keeps the spelling its words are in)."""
        return dataclasses.replace(self, verdict=self.verdict.spelled(spelling))

    @property
    def curve(self) -> xr.Dataset:
        """The predicted ``stability`` over ``m_ensemble`` (``predicted()`` as a dict)."""
        return self.prediction.curve

    @property
    def has_curve(self) -> bool:
        return self.prediction.has_curve

    @property
    def reliable(self) -> bool:
        return self.verdict.reliable

    @property
    def warnings(self) -> list[str]:
        return self.verdict.warnings

    @property
    def notes(self) -> list[str]:
        return self.verdict.notes

    @property
    def real_runs(self) -> int:
        return self.cost.real_runs

    def predicted(self) -> dict[int, float]:
        """Predicted stability for each m_ensemble (NaN when there is no curve)."""
        return self.prediction.predicted()

    def curve_interval(self) -> dict[int, tuple[float, float]]:
        """The ``confidence`` interval of each predicted stability (empty without a bootstrap)."""
        return self.prediction.curve_interval()

    def curve_se(self) -> dict[int, float]:
        """The standard error of each predicted stability: the standard deviation of its
        bootstrap replicates (every source of randomness the bootstrap covers), or without
        a bootstrap the point's own Monte-Carlo or sampling error."""
        return self.prediction.curve_se()

    def curve_band(self) -> dict[int, float]:
        """The model band of each predicted stability beyond the measured sizes (0 elsewhere)."""
        return self.prediction.curve_band()

    def feature_table(self):
        """The features as a pandas table, most often kept first: ``name``, ``feature`` (its
        column), ``frequency_m<size>`` per measured size, ``mean_rank`` and the intervals
        (:func:`~ensstab_dask.estimates.stages.features.feature_table`)."""
        if self.features is None:
            raise InvalidParameterError(
                param("model", self.prediction.model) + " ran no real ensemble copies: there is no feature table"
            )
        return feature_table(self.features)

    def to_dict(self) -> dict:
        """The JSON-able summary (the keys of ``ensstab estimate --json``), part by part
        (:func:`~ensstab_dask.estimates.records.parts.parts`); NaN becomes null."""
        out: dict = {"n_feature": self.n_feature, "n_target": self.n_target}
        for part in parts(self):
            out.update(part.to_dict())
            if part is self.single:
                out.update(single_selector_stability(self))
        return dict(out, settings=self.settings, version=__version__)

    def to_dataset(self, real: xr.Dataset | None = None) -> xr.Dataset:
        """Everything the estimate found, as one Dataset (what the report and plots read).

        Parameters
        ----------
        real : xarray.Dataset, optional
            The naive check from :func:`~ensstab_dask.real.naive.real_ensemble_stability` on the
            same data, stored beside the prediction as ``naive_*`` variables, with
            :func:`~ensstab_dask.estimates.validation.comparison.compare`'s verdict per size as ``compare_*``.

        Returns
        -------
        xarray.Dataset
            ``stability``, ``stability_std``, ``stability_draws`` over ``m_ensemble`` (the
            predicted curve) with ``stability_lower``/``stability_upper`` (its interval)
            and ``stability_boot`` (the bootstrap replicates, over ``boot``);
            ``n_useful_boot``, ``real_stability_boot`` and ``p_boot`` over ``boot``;
            ``selection_counts`` and ``uniform_counts`` over ``feature``;
            ``t_uniform_draws`` and ``n_useful_draws`` over ``repeat``; with
            ``calibrate=True``, ``calibration_*`` surfaces over (``n_useful``, ``p``);
            every scalar of the estimate in ``attrs`` (``warnings`` joined by newlines; a value
            not computed, or a setting left at None, is absent). The feature frequencies are
            ``feature_*`` over (``feature``, ``m_measured``), named by ``feature_name``, as in
            :attr:`features`. Every dimension is a coordinate, each with its ``long_name``
            and, where the values have them, ``units``
            (:data:`~ensstab_dask.estimates.records.parts.COORD_ATTRS`).
        """
        ds = self.prediction.dataset()
        for part in parts(self):
            ds = part.add_to(ds)
        ds.attrs.update(json_attrs(single_selector_stability(self)))
        if real is not None:
            ds = self._with_naive(ds, real)
        ds.attrs.update(n_feature=self.n_feature, n_target=self.n_target, version=__version__)
        # A setting left at None (no precision asked, no cap) is absent, as every value not computed is.
        ds.attrs.update({k: v for k, v in self.settings.items() if v is not None})
        ds.attrs["answer"] = "\n".join(plain_answer(self))
        ds.attrs["summary"] = self.summary()
        return with_coord_attrs(ds)

    def _with_naive(self, ds: xr.Dataset, real: xr.Dataset) -> xr.Dataset:
        """The naive check beside the prediction (``naive_*``), and the verdict per size as
        :func:`~ensstab_dask.estimates.validation.comparison.compare` gives it (``compare_*``), where the
        report reads it."""
        self._check_same_problem(real)
        for name in ("stability", "stability_se", "nogueira_lower", "nogueira_upper"):
            ds[f"naive_{name}"] = real[name].assign_attrs(real[name].attrs)
        ds = ds.merge(comparison_dataset(compare(self, real)))
        ds.attrs.update(
            naive_real_runs=int(real.attrs["real_runs"]),
            naive_seconds=float(real.attrs["seconds"]),
            naive_layout=real.attrs["layout"],
            naive_m_stability=int(real.attrs["m_stability"]),
        )
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
            raise InvalidParameterError("real: the naive check does not match the estimate; " + "; ".join(diffs))

    def to_netcdf(self, path, *, overwrite: bool = False):
        return write_netcdf(self.to_dataset(), path, overwrite=overwrite)

    def summary(self) -> str:
        """The estimate for people: the verdict first, then plain words with the symbols in
        brackets, one number per line (with its interval, saying what interval it is);
        see :mod:`ensstab_dask.estimates.words.summary`. Names from the data are shown with their
        control characters made visible (:func:`~ensstab_dask.outputs.visible.visible`)."""
        return visible(estimate_summary(self), keep="\n")

    def details(self) -> str:
        """Every measure of one selector's stability the estimate has (the summary says
        one), one per line (:func:`~ensstab_dask.estimates.words.summary.estimate_details`)."""
        return estimate_details(self)


def stack_estimates(estimates: dict[str, Estimate], dim: str, *, long_name: str) -> xr.Dataset:
    """Each estimate's :meth:`Estimate.to_dataset` along ``dim``, labelled by its name; the
    attributes are those every estimate has with one value (the others are each one's own)."""
    parts = [est.to_dataset() for est in estimates.values()]
    ds = xr.concat(parts, dim=dim, combine_attrs=_shared_attrs, join="outer")
    return ds.assign_coords({dim: (dim, list(estimates), {"long_name": long_name})})


def _shared_attrs(attrs: list[dict], context=None) -> dict:
    """The attributes every one of ``attrs`` has, with one value (xarray's ``combine_attrs``)."""
    first, *rest = attrs
    return {k: v for k, v in first.items() if all(k in a and np.array_equal(a[k], v) for a in rest)}
