"""The ``ensstab`` command starts without its heavy libraries when it only talks.

Its help (``ensstab --help``, each command's ``--help``) and a command line it refuses
(``ensstab estimate --n-target x``, or ``--copies 1``, a mistake of meaning the options
show without the data: one line, ``ensstab: error: ...``, exit status 2) import neither
Dask, distributed, scikit-learn, xarray, scipy, pandas, matplotlib nor zarr: those took
5.5 s on a busy machine before the help was printed. The commands'
modules are imported when a command runs (``cli._parser._command``), ``import
ensstab_dask`` imports its public names on first use (PEP 562), and the modules the
parser reads (the settings, the models' registry, the data formats) import those
libraries inside the functions that need them. Each check runs the real command in a
fresh interpreter, ``python -X importtime -m ensstab_dask.cli ...``, and reads every
module it imported from that report. docs/performance.md ("Start-up") has the figures.

The lazy names are checked too: each of ``ensstab_dask.__all__`` resolves, ``dir()``
lists them, and the table of :data:`ensstab_dask._LAZY` names exactly what the imports
under ``TYPE_CHECKING`` (the type checkers' view of them) import.
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys

import pytest

import ensstab_dask

#: The libraries that take seconds to import, top-level names as in ``sys.modules``.
HEAVY = ("dask", "distributed", "sklearn", "xarray", "scipy", "pandas", "matplotlib", "zarr")

COMMANDS = ("simulate", "sweep", "estimate", "validate", "report", "verify", "export")


def _imported(*args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``python -X importtime -m ensstab_dask.cli ARGS``: the process, and the top-level
    names of every module it imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ensstab_dask.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \| *([\w.]+)$", proc.stderr, flags=re.M)
    assert "ensstab_dask.cli" in names, proc.stderr[-2000:]  # the report was read
    return proc, {name.split(".")[0] for name in names}


@pytest.mark.parametrize("args", [["--help"], *([command, "--help"] for command in COMMANDS)], ids=" ".join)
def test_the_help_imports_no_heavy_library(args):
    proc, imported = _imported(*args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("usage: ensstab"), proc.stdout
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))


@pytest.mark.parametrize(
    "args, said",
    [
        (["estimate", "--n-target", "x"], "--n-target: expected integers like 1,5,10 or start:stop:step; got 'x'"),
        (["sweep", "--n-useful", "20,,40", "--p", "0.5"], "--n-useful: empty item in '20,,40'"),
        (["estimate", "--n-estimators", "many"], "argument --n-estimators: invalid int value: 'many'"),
        # Mistakes of meaning the options show alone: refused before Dask and scikit-learn are imported.
        (["estimate", "--copies", "1"], "--copies must be >= 4; got 1"),
        (["validate", "--m-ensemble", "0,5"], "--m-ensemble values must be >= 1; got 0"),
        (
            ["estimate", "--groupby", "cell_type"],
            "--groupby reads the file of --data; without --data the estimate runs on the embedded default, which "
            "has its own labels: give --data PATH",
        ),
        (
            ["estimate", "--copies", "5", "--model", "onda"],
            "--copies: --model onda measures no real ensemble copies; use --model anchored (got copies=5)",
        ),
    ],
)
def test_a_refused_command_line_imports_no_heavy_library(args, said):
    proc, imported = _imported(*args)
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("import time:")]
    assert proc.returncode == 2 and errors == [f"ensstab: error: {said}"], proc.stderr[-2000:]
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))


def test_import_ensstab_dask_is_light_and_its_names_come_when_asked():
    code = (
        "import sys, ensstab_dask as es\n"
        f"before = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "es.estimate\n"
        "print(before, 'xarray' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["[]", "True"], out


def test_the_accessor_is_registered_by_its_import_alone():
    """``ds.ensstab`` is there after ``import ensstab_dask.accessor``, whichever of it and
    xarray comes first, and not after ``import ensstab_dask`` alone (which imports no xarray)."""
    code = (
        "import sys\nimport ensstab_dask\nassert 'xarray' not in sys.modules\nimport xarray as xr\n"
        "print(hasattr(xr.Dataset(), 'ensstab'))\n"
        "import ensstab_dask.accessor\nprint(hasattr(xr.Dataset(), 'ensstab'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr[-2000:]


def test_the_package_imports_where_xarrays_import_is_blocked():
    """``sys.modules["xarray"] = None``, the standard way to make an import fail (a test
    that checks the package works without it): the package imports, and a later import of
    xarray fails as it should."""
    code = (
        "import sys\nsys.modules['xarray'] = None\nimport ensstab_dask\n"
        "try:\n    import xarray\nexcept ImportError:\n    print('blocked')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.split() == ["blocked"], out.stderr[-2000:]


def test_every_public_name_resolves_and_dir_lists_it():
    for name in ensstab_dask.__all__:
        obj = getattr(ensstab_dask, name)
        assert name == "__version__" or getattr(obj, "__name__", None) == name, name
    assert set(ensstab_dask.__all__) <= set(dir(ensstab_dask))
    assert ensstab_dask.estimate is ensstab_dask.estimates.stages.pipeline.estimate  # a subpackage, as before
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        ensstab_dask.no_such_name  # noqa: B018


def test_the_lazy_names_are_those_the_type_checkers_see():
    """``_LAZY`` and the imports under ``TYPE_CHECKING`` name the same modules and names; with
    the names imported at once, they are ``__all__``."""
    tree = ast.parse(inspect.getsource(ensstab_dask))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    for_checkers = {
        node.module.removeprefix("ensstab_dask."): tuple(alias.name for alias in node.names)
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert for_checkers == ensstab_dask._LAZY
    eager = {
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ensstab_dask.")
        for alias in node.names
    }
    assert set(ensstab_dask.__all__) == eager | set(ensstab_dask._HOME)
    assert len(ensstab_dask.__all__) == len(set(ensstab_dask.__all__))


@pytest.mark.parametrize(("module", "installed"), [("ensstab_dask", False), ("ensstab_dask.cli", True)])
def test_only_the_command_takes_the_stop_signals_while_it_imports(module, installed):
    """A process named ensstab that imports the library keeps its own Ctrl-C; the command's
    module, imported first by the command, takes it at once."""
    code = (
        "import signal, sys; sys.argv[0] = '/usr/bin/ensstab'; "
        f"import {module}; print(signal.getsignal(signal.SIGINT) is not signal.default_int_handler)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(installed)
