"""The package's shape: the layers of docs/architecture.md hold, no module imports
itself through others, and no module or function outgrows what a newcomer can read,
measured on the code as ``ruff format`` writes it (a ``# fmt: skip`` hides nothing)."""

import ast
import functools
import inspect
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ensstab_dask"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
#: A module holds one concept whatever its length (its size is a symptom, never a rule);
#: a function is read at once.
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 8  # of a function outside the public API
#: ``# fmt: skip`` (or a ``# fmt: off`` region) is kept only beside a table whose alignment
#: is its meaning, and a comment just above it says so.
MAX_FORMAT_MARKERS = 5
FORMAT_MARKER = re.compile(r"\s*#\s*fmt:\s*(?:skip|off|on)\b")


def modules() -> dict[str, Path]:
    """Every module by its name inside the package (``cli``, ``models._base``, ``__init__``)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)
        out[name] = path
    return out


def layers() -> dict[str, int]:
    """The table under ``## Layers`` in docs/architecture.md: module (or package) -> layer."""
    text = ARCHITECTURE.read_text().split("## Layers", 1)[1].split("\n## ", 1)[0]
    out = {}
    for row in re.findall(r"^\| (\d+)\. [^|]*\| ([^|]*)\|", text, flags=re.M):
        for name in re.findall(r"`([\w.]+)`", row[1]):
            assert name not in out, f"{name} is in two layers"
            out[name] = int(row[0])
    return out


def layer_of(name: str, table: dict[str, int]) -> int:
    top = name.split(".")[0]
    return table[name] if name in table else table[top]


def imports(name: str, path: Path, *, type_checking: bool = False) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in it (inside functions too):
    those it imports at run time, and with ``type_checking`` those under ``if
    TYPE_CHECKING:`` as well (imports for type checkers only, but a dependency all the same)."""
    tree = ast.parse(path.read_text())
    skip = set()
    for node in ast.walk(tree):
        if not type_checking and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    here = name.split(".")[:-1] if path.name != "__init__.py" else name.split(".") if name != "__init__" else []
    known = modules()
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):  # import ensstab_dask.models.measured
            for alias in node.names:
                if alias.name.startswith("ensstab_dask."):
                    target = alias.name.removeprefix("ensstab_dask.")
                    out.add(target if target in known else target.rsplit(".", 1)[0])
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = here[: len(here) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        elif (node.module or "").startswith("ensstab_dask"):
            target = node.module.removeprefix("ensstab_dask").lstrip(".")
        else:
            continue
        for alias in node.names:  # `from . import models` imports the module models
            sub = f"{target}.{alias.name}".strip(".")
            out.add(sub if sub in known else target or "__init__")
    out.discard(name)
    return out


def test_every_module_is_in_one_layer_of_the_table():
    table = layers()
    missing = [m for m in modules() if m not in table and m.split(".")[0] not in table]
    assert not missing, f"docs/architecture.md's layer table lacks {missing}"
    assert not [t for t in table if t not in modules()], "the table names a module that does not exist"


def test_no_module_imports_from_a_layer_above_its_own():
    table = layers()
    upward = [
        f"{m} (layer {layer_of(m, table)}) imports {t} (layer {layer_of(t, table)})"
        for m, path in modules().items()
        for t in imports(m, path)
        if layer_of(t, table) > layer_of(m, table)
    ]
    assert not upward, upward


def test_the_import_graph_has_no_cycle():
    """Not even through imports inside functions or under ``if TYPE_CHECKING:``: a module
    that names another only for its types still depends on it."""
    graph = {m: imports(m, p, type_checking=True) - {"__init__"} for m, p in modules().items() if m != "__init__"}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                pytest.fail("import cycle: " + " -> ".join(path[path.index(t) :] + [m, t]))
            if t not in state:
                visit(t, path + [m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])


#: A command-line flag in a message: "--overwrite", "--n-target 13".
CLI_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def _docstrings(tree: ast.AST) -> set[int]:
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def test_only_the_cli_speaks_in_flags():
    """The library's messages name its parameters (``pass overwrite=True``); the command
    line spells them as its options where it shows them (``cli._common.OptionSpelling``).
    A string outside ``cli/`` that names a flag would say ``--overwrite`` to a library
    user, or need the CLI to strip it again. Docstrings are left to the docs."""
    named = []
    for name, path in modules().items():
        if name.split(".")[0] == "cli":
            continue
        tree = ast.parse(path.read_text())
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                named += [f"{name}:{node.lineno}: {flag}" for flag in CLI_FLAG.findall(node.value)]
    assert not named, named


#: The regular expressions the command line may apply, each to what it reads: never to a
#: library message, which names its settings as parts the CLI spells (``ensstab_dask.wording``).
CLI_PATTERNS = {"_NEGATIVE_VALUES": "the command line's own words (a negative value after a list option)"}


def _rewrites(source: str, name: str = "<source>") -> list[str]:
    """Each use of ``re`` in ``source`` that is neither a pattern of :data:`CLI_PATTERNS`
    nor free of substitution."""
    tree = ast.parse(source)
    allowed = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and ast.unparse(node.targets[0]) in CLI_PATTERNS
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("sub", "subn"):
            found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and ast.unparse(node.func).startswith("re.") and id(node) not in allowed:
            found.append(f"{name}:{node.lineno}: {ast.unparse(node)[:60]}")
    return found


def test_the_cli_never_rewrites_a_message_with_a_regular_expression():
    """A message reworded by a pattern stops being translated, silently, the day its words
    change; the CLI spells a message from its parts instead (``ensstab_dask.wording``).
    Every use of ``re`` in ``cli/`` is a pattern of :data:`CLI_PATTERNS`, and none substitutes."""
    found = []
    for name, path in modules().items():
        if name.split(".")[0] == "cli":
            found += _rewrites(path.read_text(), name)
    assert not found, found


def test_the_pattern_check_sees_a_rewrite():
    """The check above fails on the rewrite it exists for, and on a pattern not declared."""
    assert _rewrites("import re\nmessage = re.sub(r'(\\w+)=True', r'--\\1', message)\n")
    assert _rewrites("import re\nP = re.compile('x')\nmessage = P.sub('y', message)\n")
    assert not _rewrites("import re\n_NEGATIVE_VALUES = re.compile('-[0-9]')\n_NEGATIVE_VALUES.fullmatch(w)\n")


def _code_lines(node: ast.AST, lines: list[str]) -> int:
    """Lines of code in a function: its docstring, blank lines and comments left out."""
    body = node.body
    doc = range(0)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        doc = range(body[0].lineno, body[0].end_lineno + 1)
    return sum(
        1
        for i in range(node.lineno, node.end_lineno + 1)
        if i not in doc and lines[i - 1].strip() and not lines[i - 1].strip().startswith("#")
    )


@functools.cache
def formatted() -> dict[str, str]:
    """Every module's source as ``ruff format`` writes it with every ``fmt`` marker taken
    out: the sizes a reader meets once the squeeze is undone."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "ensstab_dask"
        shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
        for path in copy.rglob("*.py"):
            path.write_text("\n".join(FORMAT_MARKER.sub("", line) for line in path.read_text().split("\n")))
        config = PACKAGE.parent / "pyproject.toml"
        subprocess.run(
            [sys.executable, "-m", "ruff", "format", "--quiet", "--config", str(config), str(copy)],
            check=True,
            capture_output=True,
        )
        return {name: (copy / path.relative_to(PACKAGE)).read_text() for name, path in modules().items()}


def test_no_function_outgrows_a_reading():
    too_long = []
    for name, source in formatted().items():
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _code_lines(node, lines)
                if n > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}.{node.name}: {n} lines of code as formatted")
    assert not too_long, too_long


def test_format_markers_only_keep_the_alignment_of_a_table():
    """A marker that keeps ``ruff format`` off a statement is allowed a few times, for a
    table whose columns line up on purpose, with a comment above saying so; never to meet
    a size limit (the sizes are measured without it, above)."""
    marked, unexplained = [], []
    for name, path in modules().items():
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if FORMAT_MARKER.search(line) and not line.lstrip().startswith("# fmt: on"):
                marked.append(f"{name}:{i + 1}")
                above = " ".join(lines[max(0, i - 4) : i]).lower()
                if "align" not in above:
                    unexplained.append(f"{name}:{i + 1}")
    assert len(marked) <= MAX_FORMAT_MARKERS, marked
    assert not unexplained, f"fmt markers without a comment above on the alignment they keep: {unexplained}"


def test_the_formatted_measure_sees_what_a_marker_hides():
    long_call = "dict(" + ", ".join(f"k{i}={i}" for i in range(30)) + ")"
    squeezed = f"def f():\n    return {long_call}  # fmt: skip\n"
    stripped = FORMAT_MARKER.sub("", squeezed.splitlines()[1])
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--line-length", "120", "-"],
        input="def f():\n" + stripped + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert len(out.splitlines()) > len(squeezed.splitlines())


def _functions(tree: ast.AST, prefix: str = "", in_class: bool = False):
    """Every function of a module: (qualified name, its parameters), ``self``/``cls`` left out."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.", in_class=True)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None]
            static = any(ast.unparse(d) == "staticmethod" for d in node.decorator_list)
            if in_class and not static and params[:1] in (["self"], ["cls"]):
                params = params[1:]
            yield f"{prefix}{node.name}", params
            yield from _functions(node, f"{prefix}{node.name}.<locals>.")
        else:
            yield from _functions(node, prefix, in_class)


def test_no_function_outside_the_public_api_takes_more_than_8_parameters():
    """More settings than fit in a reading travel as the objects they belong to (the
    estimate's settings, the models' Context); only the public functions (the names in
    ``ensstab_dask.__all__``) keep their many keywords, and so do the public classes'
    constructors (a scikit-learn estimator's parameters are its constructor's)."""
    import ensstab_dask

    names = [getattr(ensstab_dask, name) for name in ensstab_dask.__all__]
    public = {(obj.__module__, obj.__qualname__) for obj in names if inspect.isfunction(obj)} | {
        (obj.__module__, f"{obj.__qualname__}.__init__") for obj in names if inspect.isclass(obj)
    }
    assert ("ensstab_dask.estimates.stages.pipeline", "estimate") in public
    crowded = [
        f"{module}.{name}: {len(params)} parameters"
        for name_in_package, path in modules().items()
        for module in ["ensstab_dask" + ("" if name_in_package == "__init__" else f".{name_in_package}")]
        for name, params in _functions(ast.parse(path.read_text()))
        if len(params) > MAX_PARAMETERS and (module, name) not in public
    ]
    assert not crowded, crowded


def test_the_package_never_cites_a_spec_outside_the_repository():
    cited = {int(n) for p in modules().values() for n in re.findall(r"docs/method\.md sections? (\d+)", p.read_text())}
    method = (PACKAGE.parent / "docs" / "method.md").read_text()
    assert cited and all(re.search(rf"^## {n}\. ", method, flags=re.M) for n in cited), cited
    assert not [m for m, p in modules().items() if "SPEC" in p.read_text()]


def test_the_package_is_organised_in_subpackages_that_tests_mirror():
    """A few loose modules at the top (the contracts and plumbing), the rest in
    subpackages by concept, each with its own folder of tests."""
    top = [p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "_version")]
    assert len(top) <= 8, f"{len(top)} modules loose at the package's top: {sorted(top)}"
    subpackages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    assert len(subpackages) >= 4, subpackages
    tests = Path(__file__).resolve().parent
    missing = [s for s in subpackages if not list((tests / s).glob("test_*.py"))]
    assert not missing, f"subpackages without a tests/<name>/ folder of tests: {missing}"


def test_no_module_imports_another_modules_private_name():
    """A helper another module uses has a public name: ``from ensstab_dask.x import _helper``
    across modules is refused (a private submodule of the importer's own package is fine)."""
    known = modules()
    found = []
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("ensstab_dask"):
                continue
            source = node.module.removeprefix("ensstab_dask").lstrip(".")
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                submodule = f"{source}.{alias.name}".lstrip(".") in known
                if private and not submodule and source != name:
                    found.append(f"{name} imports {alias.name} from {source or 'ensstab_dask'}")
    assert not found, found
