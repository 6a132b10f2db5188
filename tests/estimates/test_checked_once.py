"""Every entry checks its data once and hashes them at most once, the command line too: the
steps after a public entry's check take the data it returned (``CheckedData``), and a
group's rows are taken one group at a time."""

from __future__ import annotations

import numpy as np
import pytest

import ensstab_dask as es
import ensstab_dask.real.cache_files as cache_files
import ensstab_dask.real.datasets as datasets
from ensstab_dask.cli import main
from ensstab_dask.real.datasets import CheckedData, make_microarray
from ensstab_dask.real.selectors import default_selector

KW = dict(selector=default_selector(5), m_ensemble=(1, 3), m_stability=5, n_boot=0, progress=False)
CLI = ["--n-estimators", "5", "--m-ensemble", "1,3", "--m-stability", "5", "--n-boot", "0"]
CLI += ["--scheduler", "synchronous"]


class _Counted:
    """Calls through to ``module.name``, counting them (and the arrays of X they were given)."""

    def __init__(self, monkeypatch, module, name: str):
        self.calls = 0
        self.shapes: list[tuple] = []
        real = getattr(module, name)

        def counted(*args, **kwargs):
            self.calls += 1
            self.shapes.append(next((a.shape for a in args if hasattr(a, "shape")), None))
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


class _Hashed:
    """The arrays of X's width that a hash reads (``cache_files._update``, which every hash
    of the data goes through, looked up in its own module)."""

    def __init__(self, monkeypatch, n_feature: int):
        self.shapes: list[tuple] = []
        real = cache_files._update

        def counting(h, arrays):
            self.shapes += [a.shape for a in arrays if np.ndim(a) == 2 and a.shape[1] == n_feature]
            return real(h, arrays)

        monkeypatch.setattr(cache_files, "_update", counting)

    @property
    def calls(self) -> int:
        return len(self.shapes)


def _counters(monkeypatch, n_feature: int):
    # check_X_y is imported inside check_data: count the X-sized work through check_data's own
    # step, looked up in its module whoever imported check_data.
    return _Counted(monkeypatch, datasets, "_check_float32_range"), _Hashed(monkeypatch, n_feature)


def test_validate_checks_and_hashes_x_once(tmp_path, monkeypatch):
    data = make_microarray(n_samples=30, n_feature=100, n_informative=10, effect=3.0, seed=1)
    checks, hashes = _counters(monkeypatch, 100)
    val = es.validate(data.X, data.y, 3, client="synchronous", cache_dir=tmp_path, **KW)
    assert (checks.calls, hashes.calls) == (1, 1)
    # The same arrays given to another entry: it checks and hashes them again, once.
    checks.calls, hashes.shapes = 0, []
    est = es.estimate(data.X, data.y, 3, client="synchronous", cache_dir=tmp_path, **KW)
    assert (checks.calls, hashes.calls) == (1, 1)
    assert est.predicted() == val.estimate.predicted()  # the same numbers either way


def test_checked_data_hash_their_bytes_once_whoever_asks():
    data = CheckedData.of(np.ones((6, 3)), [0, 1] * 3)
    assert data.digest is data.digest and data.digest == cache_files.data_digest(data.X, data.y)
    with pytest.raises(es.InvalidParameterError, match="at least 2 classes"):
        CheckedData.of(np.ones((6, 3)), [1] * 6)  # made by of(): checked


def _csv(tmp_path, groups: int) -> str:
    rng = np.random.default_rng(3)
    labels = np.repeat([f"g{i}" for i in range(groups)], 8)
    X = rng.normal(size=(labels.size, 40)) + 3.0 * (np.arange(40) < 3) * (labels == "g1")[:, None]
    path = tmp_path / "cells.csv"
    header = ",".join([f"f{j}" for j in range(40)] + ["cell_type"])
    rows = [",".join([*map(str, x), lab]) for x, lab in zip(X, labels)]
    path.write_text("\n".join([header, *rows]) + "\n")
    return str(path)


@pytest.mark.parametrize(
    "command",
    [
        ["estimate", "--n-target", "3"],
        ["estimate", "--n-target", "3", "--validate"],
        ["estimate", "--n-target", "3", "--groupby", "cell_type"],
        ["estimate", "--n-target", "3", "--groupby", "cell_type", "--reference", "g0"],
        ["validate", "--n-target", "3"],
    ],
    ids=["estimate", "estimate-validate", "groupby-10-groups", "groupby-named-reference", "validate"],
)
def test_the_command_line_checks_x_once_and_hashes_it_once_per_data(tmp_path, monkeypatch, command):
    """A file's X is read, checked once (by load_dataset) and hashed once per data: once for
    every group against the rest; each group's rows alone against a named reference."""
    data = _csv(tmp_path, 10)
    label = [] if "--groupby" in command else ["--label", "cell_type"]
    checks, hashes = _counters(monkeypatch, 40)
    out = tmp_path / "out.json"
    argv = [*command, "--data", data, *label, *CLI, "--cache-dir", str(tmp_path), "--json", str(out), "--quiet"]
    assert main(argv) == 0, argv
    assert checks.calls == 1, checks.shapes
    if "--reference" in command:
        assert hashes.calls == 9 and all(s[0] == 16 for s in hashes.shapes)  # g0's and each group's rows
    else:
        assert hashes.calls == 1 and hashes.shapes == [(80, 40)]
