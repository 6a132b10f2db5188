import matplotlib.pyplot as plt
import pytest


@pytest.fixture(autouse=True)
def _close_figures():
    """Every figure a test opened is closed after it (pyplot keeps them otherwise)."""
    yield
    plt.close("all")
