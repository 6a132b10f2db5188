import os
import sys

# The oracles live beside the tests; make them importable as `oracle`.
sys.path.insert(0, os.path.dirname(__file__))
# Pictures are drawn off-screen, in this process and in executed notebooks.
os.environ.setdefault("MPLBACKEND", "Agg")


import pytest  # noqa: E402


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per core and one more, at most 4. Many tests start clusters
    of 2 processes, so more would compete for the cores rather than use them; but many
    wait (for a timeout, a signal, a cluster's note), and one more worker fills those
    waits. On 2 cores the whole suite took 17 min 23 s and 19 min 35 s with 3 workers (CPU
    175 % and 181 %), and 20 min 24 s with 2 before its longest tests were cut: no clear
    gain, measured, and no loss."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores + 1, 4))


@pytest.fixture(autouse=True, scope="session")
def _home_left_alone(tmp_path_factory):
    """No test writes into the user's home: the default naive-check cache (and anything
    else under $XDG_CACHE_HOME) goes to a session folder; the CLI's subprocesses inherit it."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    yield cache
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


@pytest.fixture(scope="session")
def two_process_client():
    """A real 2-process Dask cluster over TCP on 127.0.0.1, shared by the tests."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


@pytest.fixture
def busy_machine():
    """CPU hogs, two per core, beside the test when the run asks for them (``ENSSTAB_TEST_HOGS=1``;
    tests/busy.py): the signal tests must hold on a busy machine too."""
    from busy import cpu_hogs, wanted

    if not wanted():
        yield None
        return
    with cpu_hogs() as hogs:
        yield hogs


@pytest.fixture(scope="session")
def default_study_runs(tmp_path_factory):
    """The embedded default's 200 real runs, cached once for the session (tests/shared_runs.py):
    copy them (``shared_runs.copy_runs``) where a full-size run's subject is not the runs."""
    from shared_runs import default_study_runs

    return default_study_runs(tmp_path_factory)
