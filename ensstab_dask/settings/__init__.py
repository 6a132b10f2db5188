"""The estimate's settings: one frozen object, validated once (:class:`EstimateSettings`).

Each setting is declared once, as a field of :class:`EstimateSettings` made by
:func:`setting`: its type, default, constraint (:mod:`ensstab_dask.settings.constraints`), help
text and the models that use it. Everything else is derived from those declarations:
:data:`SETTINGS` (one :class:`Setting` record each), :data:`DEFAULTS`,
:data:`USED_WHEN`, :func:`~ensstab_dask.estimate`'s keywords, signature and the
settings part of its docstring, the ``ensstab estimate`` and ``validate`` options, and
the :class:`~ensstab_dask.estimates.records.estimate.Estimate`'s record
(:meth:`EstimateSettings.to_dict`). A new setting is one declaration here plus its use.

Validation follows scikit-learn's ``_parameter_constraints``: a table, parameter name
-> constraint, and one function (:func:`~ensstab_dask.settings.constraints.validate_params`) that
checks every value against it, in the table's order, with the messages of
:mod:`ensstab_dask.checks`. The checks that involve several parameters (the model
against ``calibrate`` and ``index``, the memory of the largest cells) run after the table.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, fields
from typing import Any, ClassVar, TypeVar, overload

from ensstab_dask.budget.memory import check_cell_memory
from ensstab_dask.checks import (
    AGGREGATES,
    CALIBRATION_LAYOUTS,
    COPY_LAYOUTS,
    DEFAULT_CALIBRATION_LAYOUT,
    DEFAULT_M_ENSEMBLE,
    DEFAULT_MODEL,
    DEFAULT_N_RUNS,
    MODELS,
    P_METHODS,
    PREDICTORS,
    SIMULATOR_MODELS,
)
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices import INDICES
from ensstab_dask.models import REGISTRY, CurveModel, get_model
from ensstab_dask.models.anchored import ADAPTIVE_DESIGN, COPY_DESIGN
from ensstab_dask.real.datasets import check_n_target
from ensstab_dask.real.selectors import describe_selector
from ensstab_dask.seeding import SeedLike
from ensstab_dask.settings.constraints import (
    MAX_BOOT,
    BootCount,
    Constraint,
    Flag,
    Int,
    Options,
    OrNone,
    Real,
    Resample,
    Seed,
    Sizes,
    Unchecked,
    validate_params,
)
from ensstab_dask.wording import Code, Text, param, subject, words

__all__ = [
    "EstimateSettings",
    "setting",
    "Setting",
    "SETTINGS",
    "DEFAULTS",
    "USED_WHEN",
    "models_using",
    "takes_settings",
    "check_given",
    "NOT_TAKEN",
    "mb_cutoff",
    "refuse_cutoff_with_pfer",
    "DEFAULT_MAX_REAL_RUNS",
    "MAX_BOOT",
]

#: The cap on real runs when a ``precision`` is asked for without ``max_real_runs``.
DEFAULT_MAX_REAL_RUNS = 1000


@dataclass(frozen=True)
class Setting:
    """One estimate setting as :func:`setting` declared it, with its field's name.

    ``help`` is the option's help text. A setting named in it between backquotes
    (`` `m_ensemble` ``) is written as the command line's option (``--m-ensemble``); a
    :class:`~ensstab_dask.settings.constraints.Flag` whose default is True is offered as
    ``--no-NAME``, and its help says what turning it off does. ``metavar`` names the
    option's value in the help. ``recorded``: how the Estimate's ``settings`` record the
    value; None where they do not (the sizes are the Estimate's own field; the fixed-point
    check and the calibration show among its results instead). ``used_when``: the
    :class:`~ensstab_dask.models.CurveModel` flag of the models that use it (``simulator``,
    ``paper_runs`` or ``measures_copies``); None: every model.
    """

    name: str
    default: Any
    constraint: Constraint
    help: str
    metavar: str | None = None
    recorded: Callable[[Any], Any] | None = lambda value: value
    used_when: str | None = None

    def described(self, name_of: Callable[[str], str]) -> str:
        """The help with each setting it names between backquotes written by ``name_of``
        (``--m-ensemble`` on the command line, ````m_ensemble```` in a docstring)."""
        pieces = self.help.split("`")
        return "".join(name_of(piece) if i % 2 else piece for i, piece in enumerate(pieces))


def setting(
    default: Any,
    constraint: Constraint,
    help: str,
    *,
    metavar: str | None = None,
    recorded: Callable[[Any], Any] | None = lambda value: value,
    used_when: str | None = None,
) -> Any:
    """Declare a field of :class:`EstimateSettings` as an estimate setting (see
    :class:`Setting` for the arguments). ``{models:NAME}`` in ``help`` becomes the models
    that use setting NAME (``onda, two-level``)."""
    declared = Setting("", default, constraint, help, metavar, recorded, used_when)
    return field(default=default, metadata={_SETTING: declared})


_SETTING = "ensstab_setting"


def mb_cutoff(n_target: int, n_feature: int, pfer: float) -> float:
    """The cutoff at which Meinshausen and Buhlmann's bound
    (:func:`~ensstab_dask.estimates.stages.features.mb_pfer`) equals ``pfer``:
    ``(q^2 / (pfer p) + 1) / 2``, as R's stabs gives it. A value above 1 means no cutoff
    bounds the PFER by ``pfer``, and 1/2 (in double precision) a ``pfer`` so large that no
    bound holds: :class:`EstimateSettings` refuses both.

    Examples
    --------
    >>> mb_cutoff(20, 2000, 1.0)
    0.6
    """
    return (n_target**2 / (pfer * n_feature) + 1.0) / 2.0


def refuse_cutoff_with_pfer(cutoff: float, pfer: float) -> None:
    """Refuse a ``cutoff`` given with a ``pfer``: the PFER sets the cutoff, so the one given
    would be dropped (the command line refuses one typed even at its default value)."""
    raise InvalidParameterError(
        words(param("cutoff"), ": give it or pfer, not both: with ", param("pfer", Code(f"{pfer:g}")))
        + f" the cutoff is Meinshausen and Buhlmann's for it, not {cutoff:g}"
    )


_COPY_RUNS = COPY_DESIGN[0] * COPY_DESIGN[1]


@dataclass(frozen=True)
class EstimateSettings:
    """Every setting of one estimate, checked on construction (see the module docstring).

    The fields are the problem (``n_feature``, ``n_target``) and the settings, each
    declared here by :func:`setting`, in the order they are checked (the first bad one is
    the one named) and recorded. The problem is the data's, not a setting; where the work
    runs (``client``, ``progress``, ``allow_large``) neither. ``n_runs=None`` becomes ``checks.DEFAULT_N_RUNS``;
    ``m_ensemble`` becomes a sorted tuple and ``seed`` the int recorded. ``selector`` is
    checked when the runs are made.

    Raises
    ------
    TypeError, ValueError
        A value its constraint refuses (the message names the parameter), or settings
        that do not go together.
    """

    n_feature: int
    n_target: int
    m_ensemble: Sequence[int] = setting(
        DEFAULT_M_ENSEMBLE,
        Sizes(),
        "ensemble sizes to predict: a list, or an inclusive range start:stop:step",
        recorded=None,
    )
    m_stability: int = setting(
        50,
        Int(minimum=2),
        f"ensemble copies behind each stability: with the paper's runs (`model` {{models:calibration_layout}}), "
        f"the real runs behind the single selector's stability, and with `model` {{models:p_method}} the "
        "simulated copies behind each simulated one; the naive check's copies where given to `validate` (whose own "
        f"default is 20, and the command line's where this is not given) (`model` {DEFAULT_MODEL} measures its own "
        f"{COPY_DESIGN[0]} real ensemble copies)",
    )
    n_runs: int = setting(
        None,  # DEFAULT_N_RUNS: EstimateSettings._derived_defaults
        Int(minimum=1),
        f"runs behind n_useful, whatever the sizes asked (default: {DEFAULT_N_RUNS}; at most the {_COPY_RUNS} copy "
        f"runs with `model` {DEFAULT_MODEL})",
    )
    repeats: int = setting(20, Int(minimum=2), "draws of each estimated quantity")
    p_method: str = setting(
        "bisect",
        Options(P_METHODS),
        "how p is fitted to the real selector's stability: bisect (bisection on the simulated stability, which "
        "rises with p) or grid (the closest of p = n_target/n_feature and the multiples of 0.01 above it)",
        used_when="simulator",
    )
    verify: bool = setting(
        True, Flag(), "skip the fixed-point check u = A[f_(u,p)]", recorded=None, used_when="simulator"
    )
    calibrate: bool = setting(
        False,
        Flag(),
        "also intersect the two surfaces over a (u, p) grid, and predict at the calibrated (u, p) where they meet",
        recorded=None,
        used_when="simulator",
    )
    aggregate: str = setting(
        "mean_rank",
        Options(AGGREGATES),
        "how an ensemble combines its weak selectors' rankings: by mean or median rank, by vote (how often each "
        "feature is in a member's top n_target) or by reciprocal rank; ties are broken at random",
    )
    index: str = setting("jaccard", Options(INDICES), "the stability index computed over the selected subsets")
    resample: str | float = setting(
        "half",
        Resample(),
        "resample of the paper's runs behind n_useful (and the single selector's stability with "
        "`calibration_layout` paper): half, bootstrap, bagging (a bootstrap sample of a random half), or a "
        "fraction like 0.7",
        recorded=str,
        used_when="paper_runs",
    )
    calibration_layout: str = setting(
        DEFAULT_CALIBRATION_LAYOUT,
        Options(CALIBRATION_LAYOUTS),
        "the layout of the paper's single-selector runs: paper (every run on `resample`, the paper's method), "
        "ensemble (the single selector's stability, and so p, on runs in the ensemble's weak-selector layout, "
        "n_useful on `resample` runs), ensemble-all (both in the weak-selector layout)",
        used_when="paper_runs",
    )
    member_resample: str | float = setting(
        "bagging",
        Resample(),
        "how the ensemble's weak selectors see the data, for the ensemble layouts: bagging (a bootstrap sample of a "
        "random half, as in the naive check), or any `resample` value",
        recorded=str,
        used_when="paper_runs",
    )
    n_boot: int = setting(
        200,
        BootCount(),
        "bootstrap replicates behind every interval (of the real runs, or of the real ensemble copies of `model` "
        f"{DEFAULT_MODEL}); 0 turns the bootstrap off",
    )
    confidence: float = setting(
        0.95,
        Real(minimum=0.0, maximum=1.0, open_minimum=True, open_maximum=True),
        "level of the percentile intervals",
    )
    seed: SeedLike = setting(
        0,
        Seed(),
        "seed of every random stream, 0 <= seed < 2**63: the same seed and settings give the same result",
    )
    selector: Any = setting(
        None,
        Unchecked("None, a scikit-learn estimator or a callable (ensstab_dask.real.selectors)"),
        "the base selector; by default rf, a random forest (of regression trees for a regression target)",
        recorded=describe_selector,
    )
    model: str = setting(
        DEFAULT_MODEL,
        Options(MODELS),
        "the model behind the curve: anchored (measured on 10 real ensemble copies of 20 weak selectors, 200 real "
        "runs, extrapolated beyond 20; docs/anchored_model.md); onda (the paper's simulator, 40 more real runs for "
        "its self-check); two-level (each ensemble copy draws its "
        "weak selectors' S_m from its own set of h features, h fitted to 20 more real runs; "
        "docs/two_level_model.md); random-effects (a model of the real ranks fitted to 100 more real runs, 10 "
        "ensemble copies of 10; docs/random_effects_model.md)",
    )
    copies: int | None = setting(
        None,
        # Four at least: the standard error of a mean over pairs of copies (Hoeffding's, of a
        # U-statistic) needs four; with three every measured size's interval was NaN.
        OrNone(Int(minimum=4)),
        f"real ensemble copies to measure (default: the `layout`'s, {COPY_DESIGN[0]} with `model` {DEFAULT_MODEL}): "
        "more narrow the interval and the stable features' noise bound; those an earlier estimate cached are reused "
        "and only the new ones run",
        metavar="N",
        used_when="measures_copies",
    )
    members: int | None = setting(
        None,
        # Four at least: with 2 or 3 members the law beyond them came out 0 at every size.
        OrNone(Int(minimum=4)),
        f"weak selectors per real ensemble copy in the first round (default: the `layout`'s, {COPY_DESIGN[1]} with "
        f"`model` {DEFAULT_MODEL}); those an earlier estimate cached are reused",
        metavar="B",
        used_when="measures_copies",
    )
    layout: str = setting(
        "fixed",
        Options(COPY_LAYOUTS),
        f"the real ensemble copies' layout: fixed (the model's own; `model` {DEFAULT_MODEL}: {COPY_DESIGN[0]} copies "
        f"of {COPY_DESIGN[1]} weak selectors, {_COPY_RUNS} real runs) or adaptive (`model` {DEFAULT_MODEL}: a first "
        f"round of {ADAPTIVE_DESIGN[0]} copies of {ADAPTIVE_DESIGN[1]}, {_COPY_RUNS} real runs, every copy grown to "
        f"twice its members, {2 * _COPY_RUNS} in all, where the first round says the curve still climbs: its member "
        "split, or its model band at the largest m_ensemble; with `precision` its rounds choose instead)",
        used_when="measures_copies",
    )
    precision: float | None = setting(
        None,
        OrNone(Real(minimum=0.0, maximum=1.0, open_minimum=True)),
        "the interval's half-width wanted at the largest `m_ensemble` (in the index's units, e.g. 0.03): real runs "
        "are spent in rounds, more copies or more members per copy, until it is reached or `max_real_runs` stops "
        "it; the answer says what was spent and why",
        metavar="HALF_WIDTH",
        used_when="measures_copies",
    )
    max_real_runs: int | None = setting(
        None,
        OrNone(Int(minimum=1)),
        f"the cap on real runs for `precision` (default: {DEFAULT_MAX_REAL_RUNS})",
        used_when="measures_copies",
    )
    cutoff: float = setting(
        0.9,
        Real(minimum=0.5, maximum=1.0, open_minimum=True),
        "the share of real ensemble copies a stable feature is kept on, in (0.5, 1]",
    )
    pfer: float | None = setting(
        None,
        OrNone(Real(minimum=0.0, open_minimum=True)),
        "the expected false stable features wanted, instead of `cutoff`: the cutoff becomes Meinshausen and "
        "Buhlmann's for it, (n_target^2/(pfer n_feature) + 1)/2, as R's stabs",
        metavar="PFER",
    )
    predictor: str | None = setting(
        None,
        OrNone(Options(tuple(PREDICTORS))),
        "a predictor that scores each real ensemble copy's features on the half of the samples it did not see, at "
        "every measured ensemble size: 'rf' (the paper's 300-tree forest) or 'logistic'; balanced accuracy for "
        "classes, R^2 for a regression target, no extra selector runs",
        metavar="NAME",
        used_when="measures_copies",
    )
    #: False for a stand-in problem before the data are read (the command line's checks):
    #: every check but a cell's memory, which grows with the data's size.
    data_known: InitVar[bool] = True

    #: What each field may be, checked in this order (scikit-learn's ``_parameter_constraints``):
    #: the problem's, then each setting's as declared (filled in below the class, from its fields).
    _parameter_constraints: ClassVar[dict[str, Constraint]]
    #: Defaults that depend on other settings, for a value given as None.
    _derived_defaults: ClassVar[dict[str, Callable[[dict], Any]]] = {
        # Not max(m_ensemble) as in the paper: A[f] and n_useful would then change with the sizes asked.
        "n_runs": lambda checked: DEFAULT_N_RUNS,
    }

    @classmethod
    def check_each(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """The settings in ``values``, each checked alone against its constraint (and a
        derived default filled in), before the problem is known: what the command line
        checks before it reads the data. Returns them as :class:`EstimateSettings` keeps them."""
        constraints = {name: c for name, c in cls._parameter_constraints.items() if name in values}
        return validate_params(constraints, values, cls._derived_defaults)

    def __post_init__(self, data_known: bool) -> None:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        given_n_runs = self.n_runs is not None
        for name, value in validate_params(self._parameter_constraints, values, self._derived_defaults).items():
            object.__setattr__(self, name, value)  # frozen: set once, here
        self._check_together(given_n_runs=given_n_runs, data_known=data_known)
        if data_known:
            self._check_memory()

    def _check_together(self, *, given_n_runs: bool, data_known: bool = True) -> None:
        """The checks that involve several settings, after each one alone."""
        check_n_target(self.n_target, self.n_feature)
        curve_model = self.curve_model
        if self.layout == "adaptive" and curve_model.adaptive_design() is None:
            raise InvalidParameterError(
                words(
                    param("layout"),
                    ": 'adaptive' grows the real ensemble copies of ",
                    param("model", DEFAULT_MODEL),
                    "; ",
                    param("model", self.model),
                )
                + words(" has no adaptive layout (got ", param("layout", "adaptive"), "); leave layout at 'fixed'")
            )
        for name in ("copies", "members", "predictor"):  # nothing to count for a model that measures no copies
            if getattr(self, name) is not None and curve_model.copy_design() is None:
                raise InvalidParameterError(
                    words(
                        subject(name),
                        ": ",
                        param("model", self.model),
                        " measures no real ensemble copies; use ",
                        param("model", DEFAULT_MODEL),
                    )
                    + f" (got {name}={getattr(self, name)})"
                )
        design = self.copy_design
        if not curve_model.paper_runs and design is not None and self.n_runs > design[0] * design[1]:
            # t_uniform and A[f] count the runs of the model's own copies: no more can be had.
            pool = design[0] * design[1]
            if given_n_runs:
                raise InvalidParameterError(
                    words(param("n_runs"), f" must be at most {pool} with ", param("model", self.model))
                    + f", whose t_uniform and A[f] count the {pool} runs of its real ensemble copies; got {self.n_runs}"
                )
            object.__setattr__(self, "n_runs", pool)
        self._check_precision(design)
        self._check_pfer(data_known)
        if self.calibrate and not curve_model.simulator:
            raise InvalidParameterError(
                words(param("calibrate", True), " calibrates the paper's simulator over a (u, p) grid and needs ")
                + Text(" or ").join(param("model", m) for m in SIMULATOR_MODELS)
                + words("; ", param("model", self.model), " is not a simulator")
            )
        if self.index not in curve_model.indices:
            raise InvalidParameterError(
                words(
                    param("index"),
                    f" {self.index!r} is not a mean over pairs of copies; ",
                    param("model", self.model),
                    " supports ",
                )
                + ", ".join(map(repr, curve_model.indices))
            )

    def _check_pfer(self, data_known: bool) -> None:
        """``pfer`` sets the cutoff, so it comes without one; a PFER below Meinshausen and
        Buhlmann's bound at a cutoff of 1, ``n_target^2 / n_feature``, no cutoff reaches
        (checked once the data's ``n_feature`` is known)."""
        if self.pfer is None:
            return
        if self.cutoff != DEFAULTS["cutoff"]:
            refuse_cutoff_with_pfer(self.cutoff, self.pfer)
        if mb_cutoff(self.n_target, self.n_feature, self.pfer) <= 0.5:  # before the data: at the fewest features
            raise InvalidParameterError(
                param("pfer")
                + f" is too large (got {self.pfer:g}): the cutoff it sets, (n_target^2/(pfer n_feature) + 1)/2, "
                f"is 1/2 in double precision, where no bound holds (and a PFER of 2 n_target = {2 * self.n_target} or "
                "more bounds nothing: fewer than 2 n_target features are kept on more than half the copies)"
            )
        least = self.n_target**2 / self.n_feature
        if data_known and self.pfer < least:
            raise InvalidParameterError(
                words(param("pfer"), f" must be at least n_target^2/n_feature = {least:.4g} with ")
                + param("n_target", self.n_target)
                + f" and n_feature={self.n_feature}, Meinshausen and Buhlmann's bound at a cutoff of 1; "
                f"got {self.pfer:g}"
            )

    def _check_memory(self) -> None:
        """Before any real run: the prediction's largest cell, and the p fit's many copies."""
        check_cell_memory(self.n_feature, self.n_target, max(self.m_list), self.m_stability, self.n_runs)
        check_cell_memory(self.n_feature, self.n_target, 1, self.m_stability, self.n_runs, repeats=self.repeats)

    def _check_precision(self, design: tuple[int, int] | None) -> None:
        """``precision`` needs a model that measures copies (it grows them in rounds);
        ``max_real_runs`` is its cap, at least the first round's runs."""
        if self.precision is None:
            if self.max_real_runs is not None:
                raise InvalidParameterError(
                    param("max_real_runs")
                    + f" caps the rounds of real runs that a precision asks for, and none was asked for "
                    f"(got {self.max_real_runs}): pass " + param("precision", Code("HALF_WIDTH")) + " too"
                )
            return
        if design is None:  # the model does not measure copies (CurveModel.measures_copies)
            raise InvalidParameterError(
                words(
                    param("precision"),
                    ": ",
                    param("model", self.model),
                    " does not measure real ensemble copies, so it cannot spend runs ",
                )
                + words("in rounds; use ", param("model", DEFAULT_MODEL))
            )
        first = design[0] * design[1]
        if self.max_real_runs is None:
            object.__setattr__(self, "max_real_runs", max(DEFAULT_MAX_REAL_RUNS, first))
        elif self.max_real_runs < first:
            raise InvalidParameterError(
                words(
                    param("max_real_runs"),
                    f" must be at least {first}, the first round's real runs with ",
                    param("model", self.model),
                )
                + f" ({design[0]} copies of {design[1]}); got {self.max_real_runs}"
            )

    @property
    def m_list(self) -> list[int]:
        """The ensemble sizes as a list (an xarray coordinate)."""
        return list(self.m_ensemble)

    @property
    def curve_model(self) -> CurveModel:
        """The model that makes the curve (:mod:`ensstab_dask.models`)."""
        return get_model(self.model)

    @property
    def copy_design(self) -> tuple[int, int] | None:
        """The first round's real ensemble copies, ``(copies, members)``: the ``layout``'s
        design (the model's own, or its adaptive first round) with ``copies`` and
        ``members`` where asked (None for a model that measures none)."""
        model = self.curve_model
        design = model.adaptive_design() if self.layout == "adaptive" else model.copy_design()
        if design is None:
            return None
        return (self.copies or design[0], self.members or design[1])

    @property
    def largest_design(self) -> tuple[int, int] | None:
        """The most real ensemble copies the estimate may measure without a ``precision``:
        the first round's, or with ``layout="adaptive"`` every copy grown to twice its
        members (:func:`~ensstab_dask.estimates.stages.rounds.grow_layout`)."""
        design = self.copy_design
        if design is None or self.layout != "adaptive" or self.precision is not None:
            return design
        return (design[0], 2 * design[1])

    def to_dict(self) -> dict[str, Any]:
        """The settings an :class:`~ensstab_dask.estimates.records.estimate.Estimate` records (its
        ``settings``: the JSON's and the Dataset's attributes): those the model used. The
        problem and the sizes are the Estimate's own fields; a setting only some models
        use (:data:`USED_WHEN`: p's fit, the paper's runs' layout and
        resamples) is recorded for those models alone; ``copies``: the first round's."""
        recorded = {s.name: s.recorded(getattr(self, s.name)) for s in SETTINGS if s.recorded is not None}
        if self.copy_design is not None:  # the first round's layout: the model's own where none was asked
            recorded["copies"], recorded["members"] = self.copy_design
        return {key: value for key, value in recorded.items() if self.model in models_using(key)}


def _declared() -> tuple[Setting, ...]:
    """Each field :func:`setting` declared, as a :class:`Setting` named after its field."""
    return tuple(
        dataclasses.replace(f.metadata[_SETTING], name=f.name)
        for f in fields(EstimateSettings)
        if _SETTING in f.metadata
    )


#: The estimate's settings that only some models use, each with the
#: :class:`~ensstab_dask.models.CurveModel` flag that says which (:class:`Setting`'s
#: ``used_when``). An estimate records them, and the command line's help offers them, for
#: those models alone.
USED_WHEN: dict[str, str] = {s.name: s.used_when for s in _declared() if s.used_when is not None}


def models_using(setting: str) -> tuple[str, ...]:
    """The models that use the estimate's ``setting``: every model but for :data:`USED_WHEN`'s."""
    flag = USED_WHEN.get(setting)
    return tuple(name for name, model in REGISTRY.items() if flag is None or getattr(model, flag))


def _with_models(text: str) -> str:
    """``text`` with each ``{models:NAME}`` replaced by the models that use setting NAME."""
    return re.sub(r"\{models:(\w+)\}", lambda m: ", ".join(models_using(m[1])), text)


#: Every setting of an estimate, in the order they are checked and recorded.
SETTINGS: tuple[Setting, ...] = tuple(dataclasses.replace(s, help=_with_models(s.help)) for s in _declared())

#: Each setting's default, by name.
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SETTINGS}

EstimateSettings._parameter_constraints = {
    "n_feature": Int(minimum=1),
    "n_target": Int(minimum=1),
    **{s.name: s.constraint for s in SETTINGS},
}


#: The line of a docstring that :func:`takes_settings` replaces with one entry per setting.
SETTINGS_DOC = "**settings"


def setting_types() -> dict[str, str]:
    """Each setting's type as given (its field's, with ``| None`` where None stands for a
    default derived later: ``n_runs``)."""
    types = {f.name: str(f.type) for f in fields(EstimateSettings)}
    return {
        s.name: types[s.name] + (" | None" if s.default is None and "None" not in types[s.name] else "")
        for s in SETTINGS
    }


#: Where the settings' keyword types are written for type checkers (:func:`options_source`).
OPTIONS_MODULE = "ensstab_dask/settings/options.py"


def options_source() -> str:
    """The source of :mod:`ensstab_dask.settings.options`: every setting as a key of the
    ``TypedDict`` that types ``**settings`` of :func:`~ensstab_dask.estimate` and the other
    entries, so that a type checker sees each setting with its type. Generated from the
    declaration (``python -m ensstab_dask.settings`` writes it; a test fails while it is
    out of date)."""
    keys = "\n".join(f"    {name}: {kind}" for name, kind in setting_types().items())
    return (
        '"""The estimate\'s settings as keyword arguments, for type checkers: generated from\n'
        ":class:`~ensstab_dask.settings.EstimateSettings` by ``python -m ensstab_dask.settings``\n"
        '(never edited by hand; tests/settings/test_options.py fails while it is out of date)."""\n\n'
        "from __future__ import annotations\n\n"
        "from collections.abc import Sequence\n"
        "from typing import Any, TypedDict\n\n"
        "from ensstab_dask.seeding import SeedLike\n\n"
        '__all__ = ["EstimateOptions"]\n\n\n'
        "class EstimateOptions(TypedDict, total=False):\n"
        '    """Every estimate setting, by name, with its type (what ``**settings`` takes)."""\n\n'
        f"{keys}\n"
    )


#: Where the models' read-only view of the settings is written (:func:`model_settings_source`).
MODEL_SETTINGS_MODULE = "ensstab_dask/models/model_settings.py"


def model_settings_source() -> str:
    """The source of :mod:`ensstab_dask.models.model_settings`: the ``Protocol`` by which a
    curve model reads the settings it is given (this module reads the models' registry, so
    the models cannot import it), one read-only property per field of
    :class:`EstimateSettings` and its ``m_list``. Generated from the declaration with
    :func:`options_source`, so that a model and a type checker see a new setting at once."""
    types = {f.name: str(f.type) for f in fields(EstimateSettings)}
    types["m_list"] = "list[int]"
    props = "\n".join(f"    @property\n    def {name}(self) -> {kind}: ..." for name, kind in types.items())
    return (
        '"""What a curve model reads of the estimate\'s settings, read-only: generated from\n'
        ":class:`~ensstab_dask.settings.EstimateSettings` by ``python -m ensstab_dask.settings``\n"
        "(never edited by hand; tests/settings/test_options.py fails while it is out of date).\n"
        'The settings module reads the models\' registry, so the models name the fields here."""\n\n'
        "from __future__ import annotations\n\n"
        "from collections.abc import Sequence\n"
        "from typing import Any, Protocol\n\n"
        "from ensstab_dask.seeding import SeedLike\n\n"
        '__all__ = ["ModelSettings"]\n\n\n'
        "class ModelSettings(Protocol):\n"
        '    """The estimate\'s settings as a model reads them (an\n'
        '    :class:`~ensstab_dask.settings.EstimateSettings`)."""\n\n'
        f"{props}\n"
    )


#: A default for :func:`takes_settings` that leaves the setting out of the function's signature.
NOT_TAKEN: Any = type("NotTaken", (), {"__repr__": lambda self: "NOT_TAKEN"})()

_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def takes_settings(function: _F, /) -> _F: ...
@overload
def takes_settings(function: None = None, /, **defaults: Any) -> Callable[[_F], _F]: ...
def takes_settings(function: Callable | None = None, /, **defaults: Any) -> Any:
    """Give ``function``, which takes the estimate's settings as ``**settings``, each one as a
    keyword-only parameter of its signature (its declared default and type, for ``help()``,
    IDEs and notebooks) and as an entry of its docstring's Parameters, where the line
    ``**settings`` stands: what it allows (its constraint) and its help.

    ``@takes_settings(m_stability=20)`` gives a setting another default for this function
    (one it applies itself: the harness's naive check has fewer copies than an estimate);
    ``selector=NOT_TAKEN`` leaves a setting out of its signature and docstring (one it takes
    otherwise: :func:`~ensstab_dask.compare`'s ``selectors``)."""
    if function is None:
        return lambda f: _taking_settings(f, defaults)
    return _taking_settings(function, defaults)


def _taking_settings(function: Callable, defaults: dict[str, Any]) -> Callable:
    check_given(defaults, "takes_settings")
    signature = inspect.signature(function)
    kinds = inspect.Parameter
    params = list(signature.parameters.values())
    types = setting_types()
    default = {**DEFAULTS, **defaults}
    declared = [
        kinds(s.name, kinds.KEYWORD_ONLY, default=default[s.name], annotation=types[s.name])
        for s in SETTINGS
        if default[s.name] is not NOT_TAKEN
    ]
    positional = [p for p in params if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    own = [p for p in params if p.kind is kinds.KEYWORD_ONLY]
    function.__signature__ = signature.replace(parameters=[*positional, *declared, *own])  # type: ignore[attr-defined]
    marker = re.search(rf"^( *){re.escape(SETTINGS_DOC)}$", function.__doc__ or "", re.MULTILINE)
    if marker is not None:
        indent = marker[1]
        function.__doc__ = marker.string.replace(f"{indent}{SETTINGS_DOC}", _settings_doc(indent, default), 1)
    return function


def _settings_doc(indent: str, default: dict[str, Any]) -> str:
    """Each setting as a NumPy-style parameter entry: name, what it allows, default, help."""
    entries = []
    for s in SETTINGS:
        if default[s.name] is NOT_TAKEN:
            continue
        text = s.described(lambda name: f"``{name}``")
        if isinstance(s.constraint, Flag):  # the help says what the value other than the default does
            text = f"{not s.default}: {text}"
        if s.used_when is not None:  # as the command line's help says it
            text += f" (model {', '.join(models_using(s.name))} only)"
        body = textwrap.fill(text, 88, initial_indent=indent + "    ", subsequent_indent=indent + "    ")
        entries.append(f"{indent}{s.name} : {s.constraint}, default {default[s.name]!r}\n{body}")
    return "\n".join(entries)


def check_given(settings: Mapping[str, Any], function: str) -> None:
    """Refuse a keyword of ``function`` that is no estimate setting, as Python would."""
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
