"""Curve models behind one seam (:class:`CurveModel`): what turns real runs into a curve.

========================  ==========================================================
``"onda"``                the paper's simulated weak selector at a fitted (n_useful, p)
``"two-level"``           the paper's, with a preferred set of ``h`` features per copy
``"random-effects"``      a per-feature copy + bootstrap model of the real ranks
``"anchored"``            measured on real ensemble copies up to ``B``, extrapolated beyond
========================  ==========================================================

A new model is a new module here with a :class:`CurveModel` subclass, and a line in
:data:`REGISTRY` (the names in ``checks.MODELS``, which a test keeps equal).
"""

from __future__ import annotations

from ensstab_dask.checks import MODELS, check_choice
from ensstab_dask.indices import clip_to_index
from ensstab_dask.models._base import CHECK_Z, Context, CurveModel, Prediction, SelfCheck
from ensstab_dask.models.anchored import Anchored
from ensstab_dask.models.onda import Onda, TwoLevel
from ensstab_dask.models.random_effects import RandomEffectsModel

__all__ = [
    "CurveModel",
    "Context",
    "Prediction",
    "SelfCheck",
    "CHECK_Z",
    "REGISTRY",
    "get_model",
    "clip_to_index",
]

REGISTRY: dict[str, CurveModel] = {m.name: m for m in (Onda(), TwoLevel(), RandomEffectsModel(), Anchored())}


def get_model(name: str) -> CurveModel:
    """The model called ``name`` (one of ``checks.MODELS``)."""
    check_choice(name, "model", MODELS)
    return REGISTRY[name]
