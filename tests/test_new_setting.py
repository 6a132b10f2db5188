"""A new estimate setting is one declaration: a copy of the package with one field added
to ``EstimateSettings`` (and nothing else but the generated keyword types,
``python -m ensstab_dask.settings``) offers it in the signature and docstring of
estimate(), validate() and estimate_groups(), takes it through each, offers and checks it
on the command line, records it in the JSON, and a type checker sees it with its type."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ensstab_dask as es

TOY = '    toy: int = setting(3, Int(minimum=1), "a toy setting that nothing reads")\n'

SCRIPT = textwrap.dedent(
    """
    import inspect, json, sys
    import numpy as np
    import ensstab_dask as es
    from ensstab_dask.real.datasets import make_microarray
    from ensstab_dask.real.selectors import default_selector

    assert es.__file__.startswith(sys.argv[1]), es.__file__
    data = make_microarray(n_feature=60, n_informative=5, effect=3.0, seed=1)
    np.savetxt(sys.argv[2], np.column_stack([data.X, data.y]), delimiter=",", fmt="%.6g",
               header=",".join([f"g{i}" for i in range(60)] + ["label"]), comments="")
    small = dict(selector=default_selector(5), m_ensemble=(1, 3), n_boot=0, copies=4, client="synchronous",
                 progress=False)
    est = es.estimate(data.X, data.y, 3, toy=5, **small)
    val = es.validate(data.X, data.y, 3, toy=6, m_stability=2, **small)
    groups = es.estimate_groups(data.X, np.where(data.y == 1, "a", "b"), 3, groups="a", toy=7, **small)
    try:
        es.estimate(data.X, data.y, 3, toy=0, **small)
        refused = None
    except ValueError as error:
        refused = str(error)
    print(json.dumps(dict(
        default=inspect.signature(es.estimate).parameters["toy"].default,
        documented="toy : an int >= 1, default 3" in es.estimate.__doc__,
        estimate=est.to_dict()["settings"]["toy"],
        validate=val.estimate.settings["toy"],
        groups=groups.estimates["a"].settings["toy"],
        groups_offered=inspect.signature(es.estimate_groups).parameters["toy"].default,
        groups_documented="toy : an int >= 1, default 3" in es.estimate_groups.__doc__,
        validate_offered=inspect.signature(es.validate).parameters["toy"].default,
        validate_documented="toy : an int >= 1, default 3" in es.validate.__doc__,
        refused=refused,
    )))
    """
)


def _run(args, env, **kw):
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=300, **kw)


@pytest.mark.slow
def test_one_declaration_makes_a_setting_everywhere(tmp_path):
    package = Path(es.__file__).parent
    copy = tmp_path / "ensstab_dask"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    settings = copy / "settings" / "__init__.py"
    source = settings.read_text()
    anchor = "    #: False for a stand-in problem before the data are read"
    assert source.count(anchor) == 1  # the declaration goes after the last setting's
    settings.write_text(source.replace(anchor, TOY + anchor))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    data = tmp_path / "d.csv"

    done = _run(["-c", SCRIPT, str(copy), str(data)], env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["default"] == 3 and seen["documented"]
    assert seen["estimate"] == 5 and seen["validate"] == 6
    # estimate_groups takes it too, from the same declaration: in its signature, docstring and estimates.
    assert seen["groups"] == 7 and seen["groups_offered"] == 3 and seen["groups_documented"]
    assert seen["validate_offered"] == 3 and seen["validate_documented"]
    assert seen["refused"].startswith("toy must be >= 1; got 0")

    cli = ["-m", "ensstab_dask.cli", "estimate", "--data", str(data), "--label", "label", "--n-target", "3"]
    cli += [
        "--n-estimators",
        "5",
        "--m-ensemble",
        "1,3",
        "--n-boot",
        "0",
        "--copies",
        "4",
        "--scheduler",
        "synchronous",
    ]
    shown = _run(["-m", "ensstab_dask.cli", "estimate", "--help"], env, cwd=tmp_path)
    assert "--toy TOY" in shown.stdout and "a toy setting that nothing reads (default: 3)" in shown.stdout
    bad = _run(cli + ["--toy", "0"], env, cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == ["ensstab: error: --toy must be >= 1; got 0"]
    out = tmp_path / "out.json"
    good = _run(cli + ["--toy", "4", "--quiet", "--json", str(out)], env, cwd=tmp_path)
    assert good.returncode == 0, good.stderr[-3000:]
    assert json.loads(out.read_text())["settings"]["toy"] == 4

    # A type checker sees it, once the keyword types are written from the declaration again.
    if importlib.util.find_spec("mypy") is None:
        return  # mypy is not installed (pip install '.[test]'): the rest of the setting is checked above
    written = _run(["-m", "ensstab_dask.settings"], env, cwd=tmp_path)
    assert written.returncode == 0, written.stderr[-2000:]
    use = tmp_path / "use.py"
    use.write_text(
        "import ensstab_dask as es\nes.estimate([[0.0]], [0], 1, toy=4)\nes.estimate([[0.0]], [0], 1, toy='x')\n"
        "from ensstab_dask.models.model_settings import ModelSettings\n"
        "def read(settings: ModelSettings) -> int:\n    return settings.toy  # a model sees it\n"
    )
    checked = _run(
        ["-m", "mypy", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), str(use)], env, cwd=tmp_path
    )
    errors = [line for line in checked.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and errors[0].startswith("use.py:3:") and '"toy"' in errors[0], checked.stdout[-3000:]
