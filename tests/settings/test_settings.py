"""The estimate's settings (ensstab_dask.settings): one record per setting (SETTINGS), with
which the settings object, the command line, estimate()'s signature and the models'
USED_WHEN agree; one frozen object, checked once against the table's constraints, recorded
as the Estimate's settings; and the stage keys."""

import argparse
import dataclasses
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import ensstab_dask as es
from ensstab_dask.checks import DEFAULT_M_ENSEMBLE, DEFAULT_N_RUNS
from ensstab_dask.cli import build_parser
from ensstab_dask.cli._common import estimate_options
from ensstab_dask.models import REGISTRY
from ensstab_dask.real.named_selectors import selectors_help
from ensstab_dask.real.selectors import default_selector
from ensstab_dask.seeding import Stage, Stream, derive
from ensstab_dask.settings import DEFAULTS, SETTINGS, USED_WHEN, EstimateSettings
from ensstab_dask.settings.constraints import Flag, Int, Options, Real, validate_params

PROBLEM = dict(n_feature=300, n_target=10)


def test_every_field_has_one_constraint_checked_in_the_estimates_order():
    names = [f.name for f in dataclasses.fields(EstimateSettings)]
    assert list(EstimateSettings._parameter_constraints) == names
    # The order of the checks (the first bad value is the one named) is the table's, and the record's.
    assert names[2:] == [
        "m_ensemble",
        "m_stability",
        "n_runs",
        "repeats",
        "p_method",
        "verify",
        "calibrate",
        "aggregate",
        "index",
        "resample",
        "calibration_layout",
        "member_resample",
        "n_boot",
        "confidence",
        "seed",
        "selector",
        "model",
        "copies",
        "members",
        "layout",
        "precision",
        "max_real_runs",
        "cutoff",
        "pfer",
        "predictor",
    ]


def test_values_are_normalised_once_and_frozen():
    s = EstimateSettings(**PROBLEM, m_ensemble=[5, 1], seed=np.random.SeedSequence(4), n_boot=np.int64(20))
    assert s.m_ensemble == (1, 5) and s.m_list == [1, 5] and s.n_runs == DEFAULT_N_RUNS  # n_runs=None
    assert s.seed == 4 and type(s.n_boot) is int
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.n_runs = 3
    assert EstimateSettings(**PROBLEM, m_ensemble=[1, 3], n_runs=7).n_runs == 7


def test_to_dict_is_what_an_estimate_records():
    s = EstimateSettings(**PROBLEM, resample=0.5, model="onda")
    paper = ["m_stability", "n_runs", "repeats", "p_method", "aggregate", "index", "resample", "calibration_layout"]
    assert list(s.to_dict()) == [
        *paper,
        *("member_resample", "n_boot", "confidence", "seed", "selector", "model", "cutoff", "pfer"),
    ]
    assert s.to_dict()["resample"] == "0.5" and s.to_dict()["calibration_layout"] == "ensemble"
    # A model without the paper's single-selector runs, nor a simulator, records neither their layout and
    # resamples nor p's fit: it used none of them.
    anchored = ["m_stability", "n_runs", "repeats", "aggregate", "index", "n_boot", "confidence", "seed", "selector"]
    assert list(EstimateSettings(**PROBLEM, model="anchored").to_dict()) == [
        *anchored,
        "model",
        "copies",
        "members",
        "layout",
        "precision",
        "max_real_runs",
        "cutoff",
        "pfer",
        "predictor",
    ]


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(m_stability=1), ValueError, "m_stability must be >= 2; got 1"),
        (dict(n_runs=0), ValueError, "n_runs must be >= 1; got 0"),
        (dict(verify="no"), TypeError, "verify must be True or False; got 'no'"),
        (dict(n_boot=5), ValueError, "n_boot must be 0 (no bootstrap) or in [20, 10000] for a percentile interval"),
        (dict(confidence=1.0), ValueError, "confidence must be in (0.0, 1.0); got 1.0"),
        (dict(model="three-level"), ValueError, "model must be one of "),
        (dict(n_target=300), ValueError, "n_target must be < n_feature=300; got 300"),
        (dict(calibrate=True, model="anchored"), ValueError, "calibrate=True calibrates the paper's simulator"),
        (dict(index="nogueira", model="anchored"), ValueError, "index 'nogueira' is not a mean over pairs of copies"),
    ],
)
def test_each_refusal_names_its_parameter(kwargs, error, message):
    with pytest.raises(error) as info:
        EstimateSettings(**dict(PROBLEM, **kwargs))
    assert str(info.value).startswith(message)


def _refusals():
    """Every setting with each value its constraint refuses (scikit-learn's generate_invalid_param_val)."""
    return [pytest.param(s.name, bad, id=f"{s.name}={bad!r}") for s in SETTINGS for bad in s.constraint.invalid()]


@pytest.mark.parametrize("name, bad", _refusals())
def test_each_value_a_constraint_refuses_is_refused_in_its_words(name, bad):
    constraint = next(s.constraint for s in SETTINGS if s.name == name)
    for check in (lambda: EstimateSettings(**PROBLEM, **{name: bad}), lambda: EstimateSettings.check_each({name: bad})):
        with pytest.raises((TypeError, ValueError)) as info:
            check()
        message = str(info.value)
        assert message.startswith(name), message
        if isinstance(getattr(constraint, "constraint", constraint), (Int, Real, Options, Flag)):
            # The checks' words for what is allowed are the constraint's: "an int >= 2" says ">= 2".
            allowed = re.match(rf"{name} must be (?:a number )?(.*?)(?:; got|$)", message)[1]
            assert allowed in str(constraint), (message, str(constraint))


def test_every_setting_allows_its_default_and_the_estimate_documents_what_it_allows():
    same = [
        s.name for s in SETTINGS for bad in s.constraint.invalid() if type(bad) is type(s.default) and bad == s.default
    ]
    assert not same
    assert "**settings" not in es.estimate.__doc__
    for s in SETTINGS:
        assert f"    {s.name} : {s.constraint}, default {s.default!r}\n" in es.estimate.__doc__, s.name


def test_a_keyword_that_is_no_setting_is_refused_as_python_would():
    with pytest.raises(TypeError, match=r"^estimate\(\) got an unexpected keyword argument 'm_stabilty'$"):
        es.estimate(np.zeros((20, 30)), np.repeat([0, 1], 10), 3, m_stabilty=20)


def test_validate_params_checks_in_order_and_fills_derived_defaults():
    table = {"a": Int(minimum=1), "b": Int(minimum=1), "how": Options(("x", "y"))}
    got = validate_params(table, {"a": np.int32(2), "b": None, "how": "x"}, {"b": lambda done: 3 * done["a"]})
    assert got == {"a": 2, "b": 6, "how": "x"}
    with pytest.raises(ValueError, match="a must be >= 1"):
        validate_params(table, {"a": 0, "b": 0, "how": "z"})


def test_the_stage_keys_keep_their_values():
    names = (
        "T_UNIFORM REAL POOL P VERIFY PREDICT CALIBRATE MEMBER_RUNS BOOT BOOT_P BOOT_CURVE POWER T_BOOT COPIES H "
        "H_BOUNDS RANDOM_EFFECTS CHECK_COPIES CHECK MEASURED FEATURES MOMENTS ACCURACY"
    ).split()
    assert [(s.name, int(s)) for s in Stage] == [(name, i) for i, name in enumerate(names)]
    assert derive(3, Stream.ESTIMATE, Stage.CHECK, 1).spawn_key == (9, 18, 1)


def test_n_runs_beyond_the_copies_runs_is_refused_not_ignored():
    """The default model counts t_uniform and A[f] on its 200 copy runs: an n_runs above
    that is refused by name; left to its default, it is the 200 there are."""
    with pytest.raises(ValueError, match="n_runs must be at most 200 with model='anchored'.*got 1000000"):
        EstimateSettings(n_feature=500, n_target=10, n_runs=1_000_000)
    assert EstimateSettings(n_feature=500, n_target=10, n_runs=200).n_runs == 200


@pytest.mark.parametrize("model", ["anchored", "onda", "two-level", "random-effects"])
def test_n_runs_does_not_follow_the_sizes_asked(model):
    """n_useful counts DEFAULT_N_RUNS runs whatever the sizes (not the paper's max(m_ensemble))."""
    runs = {EstimateSettings(n_feature=500, n_target=10, m_ensemble=m, model=model).n_runs for m in SIZES}
    assert runs == {DEFAULT_N_RUNS} == {max(DEFAULT_M_ENSEMBLE)}


SIZES = ((1, 5, 10), (1, 5, 10, 100), (1, 500), DEFAULT_M_ENSEMBLE)


# One declaration per setting: SETTINGS; the settings object, the command line, the library's
# signature and the models' USED_WHEN agree with it ----------------------------------------------

#: estimate()'s parameters that are not settings: the data, the problem, where the work runs.
NOT_SETTINGS = {"X", "y", "n_target", "client", "progress", "allow_large", "feature_names", "cache_dir", "task"}
#: The options of `ensstab estimate` and `validate` that are not settings: the data, where the
#: work runs, the outputs, and the command line's own (a selector by its name, the naive check).
CLI_OWN = set(
    "help yes data label classes n_target n_estimators scheduler timeout tls_ca_file tls_cert tls_key quiet json "
    "output report overwrite cache_dir workers index_col no_index_col transpose no_transpose layer use_raw task "
    "groupby groups reference".split()
)
CLI_OWN_BY_COMMAND = {
    "estimate": CLI_OWN | {"validate", "details", "features", "no_cache", "write_h5ad"},
    "validate": CLI_OWN,
}


def test_each_setting_is_one_record_with_its_constraint_and_help():
    names = [s.name for s in SETTINGS]
    assert len(set(names)) == len(names) == len(DEFAULTS)
    assert all(setting.help for setting in SETTINGS)
    # Each default is what its constraint allows (n_runs's, None, is DEFAULT_N_RUNS).
    assert EstimateSettings.check_each(DEFAULTS)["n_runs"] == DEFAULT_N_RUNS


def test_the_settings_object_takes_its_fields_defaults_and_constraints_from_the_table():
    fields = dataclasses.fields(EstimateSettings)
    assert [f.name for f in fields] == ["n_feature", "n_target", *(s.name for s in SETTINGS)]
    for field, setting in zip(fields[2:], SETTINGS):
        assert field.default is setting.default, setting.name
        assert EstimateSettings._parameter_constraints[setting.name] is setting.constraint


def test_the_library_signature_agrees_with_the_table():
    """estimate()'s signature, made from the declarations, names every setting, no other,
    each keyword-only with the table's default."""
    parameters = inspect.signature(es.estimate).parameters
    assert set(parameters) - NOT_SETTINGS == set(DEFAULTS), set(parameters) ^ (NOT_SETTINGS | set(DEFAULTS))
    for name, default in DEFAULTS.items():
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert parameters[name].default == default and type(parameters[name].default) is type(default), name
    # validate() and estimate_groups() take every setting from the same declaration, validate() with its own
    # default where the naive check's cost asks for fewer copies (m_stability).
    for entry, own in ((es.validate, {"m_stability": 20}), (es.estimate_groups, {})):
        declared = {n: p.default for n, p in inspect.signature(entry).parameters.items() if n in DEFAULTS}
        assert set(declared) == set(DEFAULTS), entry.__name__
        assert {n: d for n, d in declared.items() if d != DEFAULTS[n]} == own, entry.__name__


def _options(command: str) -> dict:
    args = build_parser().parse_args([command])
    options = estimate_options(args)
    assert options.pop("allow_large") is False
    return options


@pytest.mark.parametrize("command, library", [("estimate", es.estimate), ("validate", es.validate)])
def test_the_cli_offers_every_setting_with_the_librarys_default_and_the_tables_help(command, library):
    options = _options(command)
    assert set(options) == set(DEFAULTS)  # what the command passes to the library: the settings, no other
    defaults = {n: p.default for n, p in inspect.signature(library).parameters.items() if n in DEFAULTS}
    for name, value in options.items():
        if name == "selector":  # rf, the library's default forest
            assert value.get_params() == default_selector().get_params()
        elif name == "m_ensemble":
            assert tuple(value) == defaults[name] == DEFAULT_M_ENSEMBLE
        else:
            assert value == defaults.get(name, DEFAULTS[name]), (command, name)
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    actions = {a.dest: a for a in sub.choices[command]._actions}
    by_option = {}
    for setting in SETTINGS:
        dest = ("no_" if setting.default is True else "") + setting.name
        by_option[dest] = setting
        help_text = re.sub(r" \(--model [^)]*only\)$", "", actions[dest].help)
        if setting.name == "selector":  # then each name the option takes, from the selectors' table
            help_text = help_text.removesuffix(f": {selectors_help()}")
        assert help_text == re.sub(r"`(\w+)`", lambda m: "--" + m[1].replace("_", "-"), setting.help), dest
    assert set(actions) - set(by_option) == CLI_OWN_BY_COMMAND[command]  # no option for a setting the table lacks


def test_the_models_used_when_names_only_settings_of_the_table():
    assert set(USED_WHEN) <= set(DEFAULTS)
    # Each says which models use it by a flag every model has.
    assert all(isinstance(getattr(model, flag), bool) for model in REGISTRY.values() for flag in USED_WHEN.values())


def _package_source() -> dict[str, str]:
    """Each module's source with the pieces of an implicitly joined string joined (``"a "\n "b"``)."""
    package = Path(es.__file__).parent
    joined = re.compile(r"""(["'])\s*\n\s*f?(["'])""")
    return {str(p.relative_to(package)): joined.sub("", p.read_text()) for p in package.rglob("*.py")}


def test_each_help_text_and_the_default_sizes_are_written_once_in_the_package():
    """A setting's words live in its record alone: the command line and the settings object read them."""
    source = _package_source()
    for setting in SETTINGS:
        # The longest piece of the help written as it reads (not a setting's name, a number or a model's name).
        pieces = re.split(r"`\w+`|\d+|onda|two-level|random-effects|anchored|\n", setting.help)
        piece = max(pieces, key=len)
        assert len(piece) >= 15, (setting.name, piece)
        found = {name: text.count(piece) for name, text in source.items() if piece in text}
        assert found == {"settings/__init__.py": 1}, (setting.name, piece, found)
    for sizes in ("(1, 5, 10, 20, 30, 50)", "1,5,10,20,30,50", "[1, 5, 10, 20, 30, 50]"):
        found = {name: text.count(sizes) for name, text in source.items() if sizes in text}
        assert found == ({"checks.py": 1} if sizes.startswith("(") else {}), (sizes, found)


#: What each setting defaults to and allows, written out: results depend on these, and
#: the declarations are their one source, so a slip there must fail here.
SNAPSHOT = {
    "m_ensemble": ((1, 5, 10, 20, 30, 50), "distinct ints >= 1"),
    "m_stability": (50, "an int >= 2"),
    "predictor": (None, "None or one of 'rf', 'logistic'"),
    "n_runs": (None, "an int >= 1"),
    "repeats": (20, "an int >= 2"),
    "p_method": ("bisect", "one of 'bisect', 'grid'"),
    "verify": (True, "True or False"),
    "calibrate": (False, "True or False"),
    "aggregate": ("mean_rank", "one of 'mean_rank', 'median_rank', 'vote', 'reciprocal_rank'"),
    "index": ("jaccard", "one of 'jaccard', 'dice', 'kuncheva', 'nogueira'"),
    "resample": ("half", "one of half, bootstrap, bagging or a fraction in (0, 1]"),
    "calibration_layout": ("ensemble", "one of 'paper', 'ensemble', 'ensemble-all'"),
    "member_resample": ("bagging", "one of half, bootstrap, bagging or a fraction in (0, 1]"),
    "n_boot": (200, "0 (no bootstrap) or an int in [20, 10000]"),
    "confidence": (0.95, "a real number in (0.0, 1.0)"),
    "seed": (0, "an int in [0, 9223372036854775807] or a SeedSequence"),
    "selector": (None, "None, a scikit-learn estimator or a callable (ensstab_dask.real.selectors)"),
    "model": ("anchored", "one of 'onda', 'two-level', 'random-effects', 'anchored'"),
    "copies": (None, "None or an int >= 4"),
    "members": (None, "None or an int >= 4"),
    "layout": ("fixed", "one of 'fixed', 'adaptive'"),
    "precision": (None, "None or a real number in (0.0, 1.0]"),
    "max_real_runs": (None, "None or an int >= 1"),
    "cutoff": (0.9, "a real number in (0.5, 1.0]"),
    "pfer": (None, "None or a real number in (0.0, inf)"),
}


def test_the_declared_defaults_and_constraints_are_the_ones_written_out():
    assert {s.name: (s.default, str(s.constraint)) for s in SETTINGS} == SNAPSHOT
