"""The stability over n_target: the curve at every n_target asked, from the same real runs.

A real run ranks every feature, whatever n_target: a model that measures its curve on
real ensemble copies (:attr:`~ensstab_dask.models.CurveModel.surface`) gives the curve at
any n_target from the same copies, at the cost of its own arithmetic and no real run.
The row at each n_target is the estimate at that n_target, run with the same seed on the
same copies: bit for bit what :func:`~ensstab_dask.estimate` gives when asked for that
n_target alone. A model whose curve comes from a simulator fitted at one n_target would
fit it again at each: it has no cheap surface, and a list is refused before any work.
With a ``precision``, the rounds are chosen at the first n_target, and the rows at the
others are the estimates on the copies those rounds reached.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Protocol

import numpy as np
import xarray as xr

from ensstab_dask.cluster.progress import StageClock
from ensstab_dask.estimates.stages.assemble import estimate_on_runs
from ensstab_dask.estimates.stages.real_runs import EnsembleCopies
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import check_n_target
from ensstab_dask.real.runs import runs_from_copies
from ensstab_dask.settings import EstimateSettings
from ensstab_dask.wording import param

__all__ = ["n_target_list", "check_surface", "surface_at", "surface_dataset"]


class Curved(Protocol):
    """What the surface reads of an estimate (an :class:`~ensstab_dask.estimates.records.estimate.Estimate`)."""

    n_feature: int
    n_target: int
    settings: dict

    @property
    def curve(self) -> xr.Dataset: ...
    @property
    def reliable(self) -> bool: ...
    @property
    def has_curve(self) -> bool: ...


def n_target_list(value, *, n_feature: int) -> list[int]:
    """``n_target`` as a list: one int, or several (the stability over n_target), the
    estimate's own first; each in ``[1, n_feature)``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return [check_n_target(value, n_feature)]
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise InvalidParameterError(
            param("n_target") + f" must be an int, or a list of ints for the stability over n_target; got {value!r}"
        )
    values = [check_n_target(v, n_feature) for v in value]
    if not values:
        raise InvalidParameterError(param("n_target") + " must hold at least one value; got an empty list")
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise InvalidParameterError(
            param("n_target") + f" must not repeat a value; got {values} ({repeated} more than once)"
        )
    return values


def check_surface(model, n_targets: list[int]) -> None:
    """Refuse several n_target for a model that cannot give them from the same runs cheaply."""
    if len(n_targets) > 1 and not model.surface:
        raise InvalidParameterError(
            param("n_target")
            + f": several values (the stability over n_target, {n_targets}) need a model that measures its "
            "curve on its real ensemble copies; "
            + param("model", model.name)
            + " would fit its simulator or its model again at every n_target: ask for one n_target, or use "
            + param("model", "anchored")
        )


def surface_at(
    est: Curved, settings: EstimateSettings, others: list[int], copies: EnsembleCopies, *, client, clock: StageClock
) -> xr.Dataset | None:
    """The curve at each of ``others`` n_target on the same ``copies``, with ``est``'s own
    (:func:`surface_dataset`): no real run, and each row what the estimate at that
    n_target alone gives (the same runs, settings and streams: every stage after the real
    runs, :func:`~ensstab_dask.estimates.stages.assemble.estimate_on_runs`). None without others."""
    if not others:
        return None
    assert copies.model is not None  # check_surface refused a model without copies
    with clock.stage("surface"):
        at = {
            k: estimate_on_runs(
                runs_from_copies(copies.model, k), dataclasses.replace(settings, n_target=k), copies, client=client
            )
            for k in others
        }
        return surface_dataset({est.n_target: est, **at}, own=est.n_target)


def surface_dataset(estimates: Mapping[int, Curved], *, own: int) -> xr.Dataset:
    """The curves of estimates at several n_target (by n_target; each an
    :class:`~ensstab_dask.estimates.records.estimate.Estimate` on the same copies) as one Dataset
    over (``n_target``, ``m_ensemble``): ``stability`` with ``stability_lower`` and
    ``stability_upper`` (NaN without a bootstrap), and per n_target ``reliable`` and
    ``has_curve``. ``own``: the estimate's own n_target."""
    ks = sorted(estimates)
    first = estimates[ks[0]]
    m_list = [int(m) for m in first.curve["m_ensemble"].values]
    nan = np.full(len(m_list), np.nan)

    def rows(name: str) -> np.ndarray:
        return np.array([estimates[k].curve[name].values if name in estimates[k].curve else nan for k in ks])

    index = first.settings["index"]
    one = {"long_name": f"stability ({index})"}
    dims = ("n_target", "m_ensemble")
    ds = xr.Dataset(
        {
            "stability": (dims, rows("stability"), dict(one, description="the estimate at each n_target")),
            "stability_lower": (dims, rows("stability_lower"), dict(one, long_name="lower")),
            "stability_upper": (dims, rows("stability_upper"), dict(one, long_name="upper")),
            "reliable": ("n_target", np.array([int(estimates[k].reliable) for k in ks], dtype=np.int8)),
            "has_curve": ("n_target", np.array([int(estimates[k].has_curve) for k in ks], dtype=np.int8)),
        },
        coords={"n_target": ks, "m_ensemble": m_list},
    )
    ds["n_target"].attrs = {"long_name": "features kept (n_target)", "units": "features"}
    ds.attrs = {"own_n_target": int(own), "index": index, "n_feature": int(first.n_feature)}
    return ds
