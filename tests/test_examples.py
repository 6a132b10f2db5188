"""The notebooks in examples/ run top to bottom (small settings) and match their .py twins.

The test suite runs them small (``ENSSTAB_EXAMPLE_SMALL=1``); users run them full size.
That is only the same test if the small setting changes sizes and nothing else, so each
notebook keeps every size in one cell tagged ``parameters``, and the labels it selects
from its sweeps are checked against the full-size grid as that cell computes it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is in the test extra")
nbclient = pytest.importorskip("nbclient", reason="nbclient is in the test extra")
jupytext = pytest.importorskip("jupytext", reason="jupytext is in the test extra")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))


def test_there_are_six_notebooks_with_twins():
    assert [p.stem for p in NOTEBOOKS] == [
        "01_quickstart",
        "02_sweep_and_xarray",
        "03_reference_datasets",
        "04_cluster_by_address",
        "05_groups_pbmc68k",
        "06_compare_selectors",
    ]
    for nb in NOTEBOOKS:
        assert nb.with_suffix(".py").exists(), nb


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_in_sync_and_carries_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    twin = jupytext.read(path.with_suffix(".py"))
    assert [(c.cell_type, c.source) for c in nb.cells] == [(c.cell_type, c.source) for c in twin.cells], (
        "notebook and .py twin differ: run `jupytext --sync examples/*.py`"
    )
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "committed notebooks carry no outputs"


@pytest.fixture(scope="module")
def scheduler_address(tmp_path_factory):
    """A real cluster from deploy/local for the notebook that submits by address."""
    from process_cluster import ProcessCluster

    cluster = ProcessCluster(tmp_path_factory.mktemp("nb-cluster"), n_workers=2)
    yield cluster.address
    cluster.stop()


#: The notebooks that need a package beyond the test extra (scanpy's dataset), by that package.
NEEDS = {"05_groups_pbmc68k": "scanpy"}

#: The quickstart runs through the command examples/README.md gives (the test after this one),
#: as a reader runs it; the others here, by nbclient.
BY_NBCLIENT = [p for p in NOTEBOOKS if p.stem != "01_quickstart"]


@pytest.mark.slow
@pytest.mark.parametrize("path", BY_NBCLIENT, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch, request):
    if path.stem in NEEDS:
        pytest.importorskip(NEEDS[path.stem], reason=f"{path.stem} needs {NEEDS[path.stem]}: pip install scanpy")
    monkeypatch.setenv("ENSSTAB_EXAMPLE_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    if "cluster_by_address" in path.stem:
        monkeypatch.setenv("ENSSTAB_SCHEDULER", request.getfixturevalue("scheduler_address"))
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp_path}})
    client.execute()  # raises CellExecutionError, with the failing cell, if any cell fails
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    if "cluster_by_address" in path.stem:
        assert "ENSSTAB_SCHEDULER not set" not in outputs  # it really used the cluster
    # Small sizes must not turn the selector into chance: with no curve, the estimate skips
    # its prediction and the notebook its pictures, so the full-size path would go untested.
    assert "no curve is predicted" not in outputs and "no prediction to draw" not in outputs
    # The cells that run for minutes at full size draw a progress bar: a widget in Jupyter
    # (ipywidgets is in the test extra; without it tqdm falls back to text).
    if path.stem in LONG_CELLS:
        cell = next(c for c in nb.cells if c.cell_type == "code" and LONG_CELLS[path.stem] in c.source)
        widgets = [o for o in cell.outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
        assert widgets, ("no widget: is ipywidgets (test extra) installed?", [o.get("text") for o in cell.outputs])


#: Per notebook, the first cell that runs for minutes at full size.
LONG_CELLS = {
    "02_sweep_and_xarray": "es.sweep(",
    "03_reference_datasets": "es.validate(",
    "06_compare_selectors": "es.compare(",
}


# -- The small setting changes sizes only -------------------------------------------------

SMALL_ENV = "ENSSTAB_EXAMPLE_SMALL"
DIMS = ("n_useful", "p", "m_ensemble")
#: Calls that select by label, and the plotting functions that take a grid label.
LABEL_CALLS = {"sel", "interp", "drop_sel", "plot_stability_curve", "plot_fixed_point"}


def _code_cells(nb) -> list[tuple[int, str]]:
    return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def _parameter_cell(nb) -> tuple[int, str]:
    tagged = [(i, c.source) for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "one code cell tagged 'parameters' holds every size"
    assert tagged[0] == _code_cells(nb)[0], "the parameter cell is the first code cell"
    return tagged[0]


def _run_parameters(source: str, monkeypatch, small: bool) -> dict:
    """The parameter cell's names, as the notebook gets them at that size."""
    if small:
        monkeypatch.setenv(SMALL_ENV, "1")
    else:
        monkeypatch.delenv(SMALL_ENV, raising=False)
    namespace: dict = {}
    exec(compile(source, "<parameters>", "exec"), namespace)
    return {k: v for k, v in namespace.items() if not k.startswith("__")}


def _called(node: ast.Call) -> str:
    """The name a call calls: ``sel`` for ``ds.sel(...)``, ``sweep`` for ``es.sweep(...)``."""
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def _label_uses(nb, parameter_index: int):
    """Every label a notebook selects from a grid, outside its parameter cell:
    ``(cell, kind, dim, expression)``; kind is "exact", "nearest" or "interp"."""
    for index, source in _code_cells(nb):
        if index == parameter_index:
            continue
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call):
                continue
            func = _called(node)
            if func not in LABEL_CALLS:
                continue
            method = next((k.value for k in node.keywords if k.arg == "method"), None)
            nearest = isinstance(method, ast.Constant) and method.value == "nearest"
            kind = "interp" if func == "interp" else "nearest" if nearest else "exact"
            pairs = [(k.arg, k.value) for k in node.keywords if k.arg in DIMS]
            for arg in node.args:  # .sel({"n_useful": 50})
                if isinstance(arg, ast.Dict):
                    pairs += [(k.value, v) for k, v in zip(arg.keys, arg.values) if isinstance(k, ast.Constant)]
            for dim, expr in pairs:
                yield index, kind, dim, expr


def check_labels(nb, small: dict, full: dict) -> list[str]:
    """What is wrong with the labels ``nb`` selects, given its parameters at both sizes.

    A label is evaluated from the parameter cell alone (the full-size one, and the small
    one): a label computed from anything else could differ between the sizes, or be
    checked against nothing. Exact labels must be on both grids; ``method="nearest"``
    must land on the same label on both; interpolation must stay inside both.
    """
    problems = []
    uses = list(_label_uses(nb, _parameter_cell(nb)[0]))
    if not uses:
        return problems
    if "GRID" not in full:
        return ["the notebook selects labels but its parameter cell defines no GRID"]
    for dim in DIMS:
        extra = sorted(set(map(float, small["GRID"][dim])) - set(map(float, full["GRID"][dim])))
        if extra:
            problems.append(f"the small grid's {dim} has {', '.join(f'{x:g}' for x in extra)}, not on the full grid")
    for cell, kind, dim, expr in uses:
        text = f"cell {cell}: {dim}={ast.unparse(expr)}"
        try:
            values = {
                size: eval(compile(ast.Expression(expr), "<label>", "eval"), dict(ns))
                for size, ns in (("full", full), ("small", small))
            }
        except NameError as exc:
            problems.append(f"{text}: not computable from the parameter cell ({exc})")
            continue
        if values["full"] != values["small"]:
            problems.append(f"{text}: {values['full']} at full size but {values['small']} small")
        for size, ns in (("full", full), ("small", small)):
            grid = np.asarray(ns["GRID"][dim], dtype=float)
            value = float(values[size])
            if kind == "exact" and value not in grid:
                problems.append(f"{text}: {value:g} is not on the {size} grid {grid.tolist()}")
            elif kind == "interp" and not grid.min() <= value <= grid.max():
                problems.append(f"{text}: {value:g} is outside the {size} grid")
        if kind == "nearest":
            picked = {}
            for size, ns in (("full", full), ("small", small)):
                grid = np.asarray(ns["GRID"][dim], dtype=float)
                picked[size] = float(grid[np.abs(grid - float(values[size])).argmin()])
            if picked["full"] != picked["small"]:
                problems.append(f"{text}: selects {picked['full']:g} at full size but {picked['small']:g} small")
    return problems


def _numeric_literals(expr) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) for n in ast.walk(expr))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_small_setting_changes_sizes_only(path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    index, source = _parameter_cell(nb)
    for cell, code in _code_cells(nb):
        if cell == index:
            continue
        names = {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
        assert "SMALL" not in names and SMALL_ENV not in code, f"cell {cell} branches on the size setting"
        # Grids written outside the parameter cell would escape the label check (labels
        # selected with .sel and the like are checked by the next test, literal or not).
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Call) and _called(node) not in LABEL_CALLS:
                for k in node.keywords:
                    assert not (k.arg in DIMS and _numeric_literals(k.value)), (
                        f"cell {cell}: {k.arg}={ast.unparse(k.value)} belongs in the parameter cell"
                    )
    small = _run_parameters(source, monkeypatch, small=True)
    full = _run_parameters(source, monkeypatch, small=False)
    assert small.keys() == full.keys(), "both sizes define the same parameters"
    assert small["SMALL"] is True and full["SMALL"] is False


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_selected_label_is_on_the_full_size_grid(path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    _, source = _parameter_cell(nb)
    small = _run_parameters(source, monkeypatch, small=True)
    full = _run_parameters(source, monkeypatch, small=False)
    assert check_labels(nb, small, full) == []


def test_the_label_check_catches_a_label_missing_from_the_full_grid(monkeypatch):
    """The user's report: n_useful=45 selected, on the small grid but not the full one
    (20..200 step 10). The notebook run small passes; the check must not."""
    path = EXAMPLES / "02_sweep_and_xarray.ipynb"
    nb = nbformat.read(path, as_version=4)
    index, source = _parameter_cell(nb)
    assert "U_OBS, P_OBS, M_LARGE = 50, 0.8, 20" in source
    broken = source.replace("U_OBS, P_OBS, M_LARGE = 50, 0.8, 20", "U_OBS, P_OBS, M_LARGE = 45, 0.8, 20")
    broken = broken.replace('"n_useful": FULL_GRID["n_useful"][::3]', '"n_useful": [20, 30, 45, 70, 100, 150]')
    assert broken.count("45") == 2
    nb.cells[index].source = broken
    small = _run_parameters(broken, monkeypatch, small=True)
    full = _run_parameters(broken, monkeypatch, small=False)
    problems = check_labels(nb, small, full)
    assert any("45 is not on the full grid" in p for p in problems), problems
    assert any("n_useful has 45, not on the full grid" in p for p in problems), problems
    # A label hard-coded outside the parameter cell is not computable from it, and is reported.
    for cell in nb.cells:
        if "single.sel(n_useful=U_OBS, p=P_OBS)" in cell.source:
            cell.source = cell.source.replace(
                "single.sel(n_useful=U_OBS, p=P_OBS)", "single.sel(n_useful=ds.n_useful[3])"
            )
    assert any("not computable from the parameter cell" in p for p in check_labels(nb, small, full))


def test_the_quickstart_runs_the_clis_defaults_at_full_size(monkeypatch):
    """Notebook 01 says it runs ``ensstab estimate``'s defaults: its full sizes are the parser's."""
    from ensstab_dask.cli._parser import build_parser

    nb = nbformat.read(EXAMPLES / "01_quickstart.ipynb", as_version=4)
    full = _run_parameters(_parameter_cell(nb)[1], monkeypatch, small=False)
    cli = build_parser().parse_args(["estimate"])
    assert full["N_TREES"] == cli.n_estimators and full["M_STABILITY"] == cli.m_stability
    assert full["REPEATS"] == cli.repeats and full["N_RUNS"] == cli.n_runs
    assert ",".join(map(str, full["M_ENSEMBLE"])) == cli.m_ensemble
    # The n_target (the estimate's own, first of the list whose surface it also draws) and the
    # seed are written in the estimate's cell, as the CLI's.
    code = "".join(source for _, source in _code_cells(nb))
    assert f"    [{cli.n_target}, " in code and f"seed={cli.seed}," in code


@pytest.mark.slow
def test_the_shell_command_of_examples_readme_writes_a_notebook_with_its_outputs(tmp_path):
    """`jupyter execute NOTEBOOK`, as examples/README.md said, showed nothing: the outputs
    went nowhere. The command it gives now, run as written (small sizes), writes them."""
    pytest.importorskip("ipykernel", reason="jupyter execute needs a kernel (ipykernel, in the test extra)")
    import os
    import re
    import shutil
    import subprocess

    (command,) = re.findall(r"```bash\n(.*?)\n```", (EXAMPLES / "README.md").read_text(), flags=re.S)
    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLES / "01_quickstart.ipynb", tmp_path / "examples")
    env = dict(
        os.environ,
        ENSSTAB_EXAMPLE_SMALL="1",
        MPLBACKEND="Agg",
        PYTHONPATH=os.pathsep.join([str(EXAMPLES.parent), os.environ.get("PYTHONPATH", "")]),
    )
    res = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    nb = nbformat.read(tmp_path / "runs" / "01_quickstart.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert any(o.get("text", "").startswith("Answer: two runs of the ensemble") for o in outputs)
    # To the last cell: the report it points to is there after it ran, where it said.
    (said,) = [line for o in outputs for line in o.get("text", "").splitlines() if line.startswith("report: ")]
    assert said.endswith("/quickstart-output/report/index.html") and Path(said.removeprefix("report: ")).is_file()
    # Small sizes must not turn the selector into chance (see test_notebook_runs).
    text = "".join(o.get("text", "") for o in outputs)
    assert "no curve is predicted" not in text and "no prediction to draw" not in text
