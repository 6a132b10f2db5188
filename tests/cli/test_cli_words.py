"""Every user-facing word true to the model that runs: the CLI's help (options, descriptions,
examples), the settings an estimate records, and the report's captions and table.

The default model (anchored) simulates nothing and makes none of the paper's runs; the
help said it fitted n_useful and p and simulated the ensembles, ``--m-stability``
"(default: 50)" with no word of which model reads it, the JSON recorded
``calibration_layout: copies`` (no choice of the CLI's), and the report's caption spoke
of "the simulation" above a table with "p: none". The words are checked here against
the parser and the models' own description (their flags in ``models.REGISTRY``).
"""

from __future__ import annotations

import argparse
import re
import shlex

import numpy as np
import pytest

from ensstab_dask.checks import DEFAULT_MODEL
from ensstab_dask.cli import build_parser
from ensstab_dask.cli._common import estimate_options, n_targets_of
from ensstab_dask.models import REGISTRY
from ensstab_dask.settings import USED_WHEN, EstimateSettings, models_using

#: Words that name a stage of the paper's simulator (p's fit, the fixed point, calibration, simulation).
SIMULATOR_WORDS = re.compile(r"simulat|fixed.point|calibrat|\bp\b|Algorithm 1", re.I)
SIMULATORS = [name for name, model in REGISTRY.items() if model.simulator]


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {"ensstab": parser, **sub.choices}


def _help(action) -> str:
    return re.sub(r" \(default: [^)]*\)$", "", action.help or "")


def test_the_default_model_is_neither_a_simulator_nor_makes_the_papers_runs():
    """What the rest of this file guards: the default model runs none of those stages (it
    measures its copies, which only a precision's settings are about)."""
    model = REGISTRY[DEFAULT_MODEL]
    assert not model.simulator and not model.paper_runs and model.measures_copies
    for setting in USED_WHEN:
        assert (DEFAULT_MODEL in models_using(setting)) == (USED_WHEN[setting] == "measures_copies")
        assert set(models_using(setting)) == {n for n, m in REGISTRY.items() if getattr(m, USED_WHEN[setting])}


@pytest.mark.parametrize("command", ["estimate", "validate"])
def test_an_option_only_some_models_use_names_exactly_them(command):
    actions = [a for a in _commands()[command]._actions if a.dest.removeprefix("no_") in USED_WHEN]
    assert {a.dest.removeprefix("no_") for a in actions} == set(USED_WHEN)
    for action in actions:
        models = models_using(action.dest.removeprefix("no_"))
        assert _help(action).endswith(f"(--model {', '.join(models)} only)"), (action.dest, action.help)


@pytest.mark.parametrize("command", ["ensstab", "estimate", "validate"])
def test_every_word_of_a_simulator_stage_names_the_models_that_run_it(command):
    """Each help text, description and example that names p, the fixed point, calibration,
    a simulation or the paper's Algorithm 1 says which models do that (a simulator's name)."""
    parser = _commands()[command]
    texts = {"description": parser.description or "", "epilog": parser.epilog or ""}
    texts.update({a.dest: _help(a) for a in parser._actions if a.help and a.help != argparse.SUPPRESS})
    if command == "ensstab":
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        texts.update({f"{c.dest} (command list)": c.help for c in sub._choices_actions})
    # --yes names the cost thresholds of simulated selectors, which a simulator model would spend.
    checked = {k: v for k, v in texts.items() if k != "yes"}
    for where, text in checked.items():
        for sentence in re.split(r"(?<=[.;:])\s", text):
            if SIMULATOR_WORDS.search(sentence) and where not in ("sweep (command list)", "simulate (command list)"):
                assert any(name in sentence or name in text for name in SIMULATORS), (where, sentence)
    if command != "ensstab":  # --m-stability's default is read by some models only: it says which, and why
        m_stability = texts["m_stability"]
        assert f"(--model {', '.join(models_using('calibration_layout'))})" in m_stability, m_stability
        assert f"--model {DEFAULT_MODEL} measures its own" in m_stability, m_stability


def _settings_of(argv: list[str]) -> EstimateSettings:
    args = build_parser().parse_args(argv)
    options = estimate_options(args)
    options.pop("allow_large")
    n_target = n_targets_of(args, several=True)  # a surface's settings are its first n_target's
    return EstimateSettings(n_feature=2000, n_target=n_target if isinstance(n_target, int) else n_target[0], **options)


@pytest.mark.parametrize("command", ["estimate", "validate"])
def test_every_example_in_the_help_is_settings_the_library_accepts(command):
    """`ensstab validate --calibrate` was an example while the default model refuses --calibrate."""
    epilog = _commands()[command].epilog
    lines = [ln.split("#")[0].strip() for ln in epilog.splitlines()[1:]]
    for line in lines:
        for part in line.split("&&"):
            argv = shlex.split(part)[1:]
            if argv and argv[0] == command:
                _settings_of(argv)  # raises if the settings do not go together


@pytest.mark.parametrize("model", sorted(REGISTRY))
def test_an_estimate_records_only_the_settings_its_model_uses_and_each_is_a_choice_of_the_cli(model):
    """Under the default model the JSON said calibration_layout: copies, no choice of --calibration-layout."""
    recorded = _settings_of(["estimate", "--model", model]).to_dict()
    for setting in USED_WHEN:
        if model not in models_using(setting):
            assert setting not in recorded, (model, setting)
    options = {a.dest: a for a in _commands()["estimate"]._actions}
    for key, value in recorded.items():
        # The selector is recorded as the estimator it was (its parameters), not by the CLI's name.
        if key in options and options[key].choices is not None and key != "selector":
            typed = "none" if value is None else value  # a choice that may be None is typed as none
            assert typed in options[key].choices, (model, key, value)


def test_the_report_speaks_of_a_simulation_only_for_a_simulator():
    """The caption said "and with the simulation", the table "p: none", under the default model."""
    import numpy as np
    import xarray as xr

    from ensstab_dask.plotting.pictures import PICTURES
    from ensstab_dask.plotting.report import _caption_words, _estimate_rows

    attrs = dict(
        kind="estimate",
        n_feature=300,
        n_target=5,
        index="jaccard",
        t_uniform=2.0,
        t_uniform_std=0.5,
        n_useful=7,
        n_useful_mean=7.2,
        n_useful_std=1.9,
        stability_one_selector_value=0.08,
        stability_one_selector_from="every pair of weak selectors",
        paper_stability_value=0.09,
        paper_stability_from="10 real runs",
        paper_stability_runs=10,
        paper_stability_nogueira=0.1,
        paper_stability_nogueira_lower=0.05,
        paper_stability_nogueira_upper=0.2,
        real_runs=200,
        simulated_runs=0,
        seconds_total=5.0,
    )
    curve = xr.Dataset({"stability": ("m_ensemble", np.array([0.1, 0.2]))}, coords={"m_ensemble": [1, 5]})
    for model in sorted(REGISTRY):
        simulator = REGISTRY[model].simulator
        ds = curve.assign_attrs(
            attrs,
            model=model,
            simulator=int(simulator),
            p=0.7 if simulator else "none",
            interval_of=REGISTRY[model].interval_of,
            curve_source="its source",
        )
        caption = PICTURES["estimate"]["stability_curve"].caption.format_map(_caption_words(ds, "estimate", {}))
        assert ("simulation" in caption) == simulator, (model, caption)
        assert f"with the {REGISTRY[model].interval_of} it was fitted on" in caption
        rows = dict(_estimate_rows(ds))
        assert ("p" in rows) == simulator and rows["model behind the curve"] == f"{model}: its source"


def test_a_warning_is_one_line_in_the_commands_words(tmp_path):
    """The selector's convergence summary (a scikit-learn ConvergenceWarning) is printed as
    one ``ensstab: warning:`` line, not in Python's format with the source line under it."""
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    X = np.minimum(np.exp(rng.normal(size=(62, 200)) * 20), 1e37)  # lbfgs gives up on such scales
    np.savez(tmp_path / "wild.npz", X=X, y=np.repeat([0, 1], 31))
    args = "--selector logistic --n-target 10 --m-ensemble 1,5 --n-boot 0 --scheduler synchronous --quiet".split()
    proc = subprocess.run(
        [sys.executable, "-m", "ensstab_dask.cli", "estimate", "--data", "wild.npz", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 0 and lines, proc.stderr
    assert all(line.startswith("ensstab: ") for line in lines), lines
    assert any("did not converge in" in line and line.endswith("(ConvergenceWarning)") for line in lines), lines
