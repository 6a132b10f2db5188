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
    "USED_WHEN",
    "models_using",
]

REGISTRY: dict[str, CurveModel] = {m.name: m for m in (Onda(), TwoLevel(), RandomEffectsModel(), Anchored())}

#: The estimate's settings that only some models use, each with the :class:`CurveModel`
#: flag that says which: ``simulator`` (the paper's simulator is fitted: p, the fixed point,
#: calibration), ``paper_runs`` (the paper's single-selector runs are made, in the layout
#: these settings choose) or ``measures_copies`` (the curve is measured on real ensemble
#: copies, which a precision grows in rounds). An estimate records them, and the CLI's help offers them, for
#: those models alone. Each is a setting of ``settings.SETTINGS`` (tests/test_settings.py checks it).
USED_WHEN = {
    "p_method": "simulator",
    "verify": "simulator",
    "calibrate": "simulator",
    "calibration_layout": "paper_runs",
    "resample": "paper_runs",
    "member_resample": "paper_runs",
    "copies": "measures_copies",
    "precision": "measures_copies",
    "max_real_runs": "measures_copies",
}


def models_using(setting: str) -> tuple[str, ...]:
    """The models that use the estimate's ``setting``: every model but for :data:`USED_WHEN`'s."""
    flag = USED_WHEN.get(setting)
    return tuple(name for name, model in REGISTRY.items() if flag is None or getattr(model, flag))


def get_model(name: str) -> CurveModel:
    """The model called ``name`` (one of ``checks.MODELS``)."""
    check_choice(name, "model", MODELS)
    return REGISTRY[name]
