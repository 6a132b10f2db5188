"""Memory before work: a cell that cannot fit is refused at once, naming what to lower."""

import psutil
import pytest

from ensstab_dask.budget.memory import cell_bytes, check_cell_memory
from ensstab_dask.exceptions import InvalidParameterError


def test_a_cell_grows_with_its_ensembles_and_copies():
    small = cell_bytes(2000, 20, 10, 50, 50)
    assert cell_bytes(2000, 20, 100, 50, 50) > small and cell_bytes(2000, 20, 10, 500, 50) > small
    assert cell_bytes(2000, 20, 10, 50, None) <= small  # no n_useful_v: no n_runs rankings


def test_a_cell_over_half_the_memory_is_refused_naming_what_to_lower():
    check_cell_memory(2000, 20, 10, 50, 50)  # the defaults fit
    m = psutil.virtual_memory().total // (3 * 8 * 2000) + 1  # one ensemble's rankings alone: more than all
    with pytest.raises(InvalidParameterError, match=r"more than half of this machine's .* lower m_ensemble"):
        check_cell_memory(2000, 20, m, 50, 50)
    with pytest.raises(InvalidParameterError, match="m_stability or n_feature"):
        check_cell_memory(2000, 20, m, 50, None)
