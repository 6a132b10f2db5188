"""The docstrings: every module's examples run as doctests, and every public name has some.

Modules are found with ``pkgutil`` and imported by name, never reached as attributes of
the package: a name can be both a module and a function (``ensstab_dask.sweeps.sweep`` is
the module, ``ensstab_dask.sweep`` the function it defines), and modules may be renamed.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import io
import pkgutil
import re
import tokenize
from pathlib import Path

import pytest

import ensstab_dask

OPTIONFLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS

# Every module of every subpackage, so that a docstring's example deep in the package runs too.
MODULES = ["ensstab_dask"] + sorted(
    info.name
    for info in pkgutil.walk_packages(ensstab_dask.__path__, prefix="ensstab_dask.")
    if not info.name.endswith("__main__")
)


# A NumPy-style section: the title, a line of dashes, then (after any prose) a doctest.
EXAMPLES = re.compile(r"^Examples\n-{8,}\n(?:.*\n)*?\s*>>> ", re.MULTILINE)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    report: list[str] = []
    for test in sorted(doctest.DocTestFinder().find(module, name), key=lambda t: t.name):
        try:
            runner.run(test, out=report.append)
        finally:
            test.globs.clear()  # as doctest.DocTestSuite does: free what the examples made
    if runner.failures:
        pytest.fail(
            f"{runner.failures} of {runner.tries} doctest examples failed in {name}:\n" + "".join(report),
            pytrace=False,
        )


def _public_names():
    for name in ensstab_dask.__all__:
        obj = getattr(ensstab_dask, name)
        if name == "__version__" or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        yield pytest.param(name, id=name)


@pytest.mark.parametrize("name", list(_public_names()))
def test_public_docstring_has_examples(name):
    obj = getattr(ensstab_dask, name)
    doc = inspect.getdoc(obj) or ""
    assert EXAMPLES.search(doc + "\n"), (
        f"ensstab_dask.{name} (defined in {obj.__module__}) has no NumPy-style Examples section with a "
        "doctest: add 'Examples', a line of dashes and a '>>> ' example to its docstring"
    )


# -- what docstrings and comments may hold ---------------------------------------------

ROOT = Path(__file__).resolve().parents[1]

#: A commit: 7 to 40 hex digits, with a digit and a letter among them (not a plain number,
#: not a word), standing alone (not inside 0x7fff... or a longer digest).
COMMIT = re.compile(r"(?<![\w#])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?!\w)")
#: An issue of this project: a hash sign and its number, or the word issue and a number.
#: Another project's issue, named with its repository (dask/distributed#4612), is a
#: reference, not history.
ISSUE = re.compile(r"(?<![\w/.#-])#\d+\b|\bissues? \d+", flags=re.IGNORECASE)


def _docstrings_and_comments(path: Path):
    """(line, text) of every comment and every module, class and function docstring."""
    source = path.read_text()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                yield first.lineno, value.value


SOURCES = sorted([*(ROOT / "ensstab_dask").rglob("*.py"), *(ROOT / "tests").rglob("*.py")])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_commit_or_issue_in_docstrings_and_comments(path):
    """Docstrings and comments say what the code does; which commit or which issue it came
    from is history, kept in git and in docs/ (a pin file's data may record its commit)."""
    found = [
        f"{path.relative_to(ROOT)}:{line}: {m[0]!r}"
        for line, text in _docstrings_and_comments(path)
        for m in [*COMMIT.finditer(text), *ISSUE.finditer(text)]
    ]
    assert found == []


def test_the_history_patterns_find_history():
    assert COMMIT.findall("Written from commit 72e4204; values of 4b2ba63f") == ["72e4204", "4b2ba63f"]
    assert COMMIT.findall("1000000 runs, seed 20240101, 0x7fffffff, deadbeef, sha 3a" + "f" * 60) == []
    assert ISSUE.findall("see #21, issue 19 and Issues 18") == ["#21", "issue 19", "Issues 18"]
    assert ISSUE.findall("dask/distributed#4612, # 2 items, noqa: F401, issued 3 times") == []
