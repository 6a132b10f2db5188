"""validate checks the data once and hashes it once: its nested estimate and naive check
take the arrays its first check returned as checked (``checked_once``, ``hashed_once``)."""

from __future__ import annotations

import numpy as np

import ensstab_dask as es
import ensstab_dask.real.cache_files as cache_files
import ensstab_dask.real.datasets as datasets
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.selectors import default_selector


class _Counted:
    """Calls through to ``module.name``, counting them."""

    def __init__(self, monkeypatch, module, name: str):
        self.calls = 0
        real = getattr(module, name)

        def counted(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


def test_validate_checks_and_hashes_x_once(tmp_path, monkeypatch):
    data = make_microarray(n_samples=30, n_feature=100, n_informative=10, effect=3.0, seed=1)
    checks = _Counted(monkeypatch, datasets, "check_target")  # once per check of (X, y)
    hashes = _Counted(monkeypatch, cache_files, "hash_data")
    kw = dict(selector=default_selector(5), m_ensemble=(1, 3), m_stability=5, n_boot=0, progress=False)
    val = es.validate(data.X, data.y, 3, client="synchronous", cache_dir=tmp_path, **kw)
    assert (checks.calls, hashes.calls) == (1, 1)
    # The same arrays outside validate: each entry checks and hashes them again.
    checks.calls = hashes.calls = 0
    est = es.estimate(data.X, data.y, 3, client="synchronous", cache_dir=tmp_path, **kw)
    assert checks.calls >= 1 and hashes.calls == 1
    assert est.predicted() == val.estimate.predicted()  # the same numbers either way


def test_inside_checked_once_only_those_very_arrays_pass_unchecked():
    X, y = datasets.check_data(np.ones((6, 3)), [0, 1] * 3)
    with datasets.checked_once(X, y):
        assert datasets.check_data(X, y)[0] is X
        try:
            datasets.check_data(X.copy(), np.array([1] * 6))  # other arrays are checked as ever
        except es.InvalidParameterError as exc:
            assert "at least 2 classes" in str(exc)
        else:
            raise AssertionError("other arrays passed unchecked")
