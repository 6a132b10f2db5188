"""The registry of stability indices: each index is one record, and a new one registered
there is taken everywhere an index is (the checks, the measures, an estimate, its words)."""

import dataclasses
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ensstab_dask as es
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices import (
    INDICES,
    PAIRWISE_INDICES,
    Index,
    check_index_defined,
    index_of_shared,
    index_range,
    shared_features,
)
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.selectors import default_selector


def _sorensen(inter: np.ndarray, size: np.ndarray, n_feature: int) -> np.ndarray:
    """Sorensen's similarity 2 |a & b| / (|a| + |b|): Dice's, under another name."""
    return 2.0 * inter / (size[:, None] + size[None, :])


def _nonempty(sizes: np.ndarray, n_feature: int, name: str) -> None:
    if (sizes == 0).any():
        raise InvalidParameterError(f"subsets must not be empty for index {name!r}")


SORENSEN = Index(
    name="sorensen",
    range=(0.0, 1.0),
    similarity=_sorensen,
    of_membership=None,
    shared=lambda v, k, n: k * v,
    of_shared=lambda s, k, n: s / k,
    check_sizes=_nonempty,
    corrected_for_chance=False,
    of_k="a Sorensen index of k / {k}",
)


@pytest.fixture
def sorensen(monkeypatch):
    """The toy index, registered for one test only."""
    monkeypatch.setitem(INDICES, SORENSEN.name, SORENSEN)
    return SORENSEN.name


def test_every_index_is_one_record_under_its_own_name():
    assert all(isinstance(index, Index) and index.name == name for name, index in INDICES.items())
    assert list(PAIRWISE_INDICES) == [name for name, index in INDICES.items() if index.similarity is not None]
    assert "nogueira" in INDICES and "nogueira" not in PAIRWISE_INDICES
    assert index_range() == (-1.0, 1.0)


def test_a_record_has_either_a_pairwise_form_or_a_measure_of_the_membership():
    with pytest.raises(ValueError, match="exactly one"):
        dataclasses.replace(SORENSEN, of_membership=lambda z: 0.0)


def test_the_rule_of_all_features_holds_for_the_indices_corrected_for_chance():
    for name, index in INDICES.items():
        if index.corrected_for_chance:
            with pytest.raises(InvalidParameterError, match="undefined when n_target == n_feature"):
                check_index_defined(name, 10, 10)
        assert check_index_defined(name, 10, 5) == name
    with pytest.raises(InvalidParameterError, match="undefined when n_target == n_feature"):
        es.simulated_stability(10, 10, 10, 0.5, index="kuncheva")


def test_a_registered_index_is_measured_as_its_record_says(sorensen):
    subsets = [[0, 1, 2], [1, 2, 3], [0, 1, 4]]
    assert es.stability(subsets, 6, index=sorensen) == es.stability(subsets, 6, index="dice")
    np.testing.assert_array_equal(
        es.pairwise_similarity(subsets, 6, index=sorensen), es.pairwise_similarity(subsets, 6, index="dice")
    )
    assert sorensen in PAIRWISE_INDICES and index_range(sorensen) == (0.0, 1.0)
    assert float(shared_features(index_of_shared(7.0, sorensen, 200, 20), sorensen, 200, 20)) == 7.0
    with pytest.raises(InvalidParameterError, match="must not be empty for index 'sorensen'"):
        es.stability([[0], []], 6, index=sorensen)


@pytest.mark.filterwarnings("ignore::ensstab_dask.UnreliableEstimateWarning")  # tiny runs: a self-check may fail
def test_an_estimate_runs_with_a_registered_index(sorensen):
    """An estimate in the toy index is the estimate in Dice's, number for number: the same
    similarity under another name, read from its record at every step."""
    data = make_microarray(n_feature=200, n_informative=10, effect=3.0, seed=1)
    tiny = dict(selector=default_selector(5), m_ensemble=(1, 3), m_stability=5, n_runs=10, repeats=2, n_boot=0)
    toy = es.estimate(data.X, data.y, 3, index=sorensen, client="synchronous", progress=False, **tiny)
    dice = es.estimate(data.X, data.y, 3, index="dice", client="synchronous", progress=False, **tiny)
    assert toy.settings["index"] == sorensen
    assert toy.predicted() == dice.predicted() and toy.single.real_stability == dice.single.real_stability
    assert "a Sorensen index of k / 3" in toy.summary()


def test_an_unknown_index_is_refused_with_the_registered_ones(sorensen):
    with pytest.raises(InvalidParameterError, match="'jaccard', 'dice', 'kuncheva', 'nogueira', 'sorensen'"):
        es.stability([[0, 1], [1, 2]], 6, index="overlap")


def test_the_fifth_index_docs_architecture_shows_is_one_record_that_works(monkeypatch):
    """docs/architecture.md shows adding an index as one record: that record, as written
    there, registered, is an index the package measures with."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    shown = [code for code in re.findall(r"```python\n(.*?)```", doc, flags=re.S) if "SORENSEN = Index(" in code]
    assert len(shown) == 1, "docs/architecture.md no longer shows the Sorensen record"
    namespace: dict = {}
    exec(textwrap.dedent(shown[0]), namespace)
    monkeypatch.setitem(INDICES, "sorensen", namespace["SORENSEN"])
    subsets = [[0, 1, 2], [1, 2, 3], [0, 1, 4]]
    assert es.stability(subsets, 6, index="sorensen") == es.stability(subsets, 6, index="dice")
    assert "sorensen" in PAIRWISE_INDICES
