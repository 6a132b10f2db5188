import os
import sys

# The oracles live beside the tests; make them importable as `oracle`.
sys.path.insert(0, os.path.dirname(__file__))
# Pictures are drawn off-screen, in this process and in executed notebooks.
os.environ.setdefault("MPLBACKEND", "Agg")


import pytest  # noqa: E402


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
