"""The settings' keyword types for type checkers (ensstab_dask.settings.options) are written
from the one declaration, and a type checker sees every setting through them."""

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ensstab_dask.settings import MODEL_SETTINGS_MODULE, OPTIONS_MODULE, SETTINGS, model_settings_source, options_source
from ensstab_dask.settings.options import EstimateOptions

ROOT = Path(__file__).resolve().parents[2]


def test_the_options_module_is_the_declarations_as_generated():
    """Edited by hand or left behind by a new setting, either fails here: ``python -m ensstab_dask.settings``."""
    assert (ROOT / OPTIONS_MODULE).read_text() == options_source()
    assert list(EstimateOptions.__annotations__) == [s.name for s in SETTINGS]
    # The models' view of the settings, from the same declaration: every setting among its properties.
    assert (ROOT / MODEL_SETTINGS_MODULE).read_text() == model_settings_source()
    from ensstab_dask.models.model_settings import ModelSettings

    assert {s.name for s in SETTINGS} <= set(vars(ModelSettings))


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install '.[test]')")
def test_a_type_checker_sees_each_setting_of_each_entry(tmp_path):
    """estimate, validate and estimate_groups take the settings by name and type: a misspelt
    setting and a value of the wrong type are mypy errors, the right ones pass."""
    snippet = tmp_path / "use.py"
    snippet.write_text(
        textwrap.dedent(
            """
            import numpy as np
            import ensstab_dask as es

            X, y = np.zeros((4, 4)), np.zeros(4)
            es.estimate(X, y, 3, m_stability=5, cutoff=0.9, model="anchored")
            es.validate(X, y, 3, precision=0.02, feature_names=None)
            es.estimate_groups(X, y, 3, copies=10)
            es.estimate(X, y, 3, m_stabilty=5)
            es.validate(X, y, 3, precision="tight")
            es.estimate_groups(X, y, 3, copies=1.5)
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), str(snippet)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert [int(line.split(":")[1]) for line in errors] == [9, 10, 11], proc.stdout[-3000:]
    assert '"m_stabilty"' in errors[0] and '"precision"' in errors[1] and '"copies"' in errors[2]
