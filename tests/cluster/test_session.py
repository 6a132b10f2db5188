"""One local cluster for several calls: ``session`` starts it with the first call that runs
work with ``client=None``, every later call uses it, and it is closed when the block ends;
the CLI's ``--workers``. Real clusters, no mocks: LocalCluster is only counted."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from sweep_cases import GRID, K, N, assert_same

import ensstab_dask as es
from ensstab_dask.cli import main
from ensstab_dask.cluster import current_client, session
from ensstab_dask.cluster.clients import _CLOSING_LOGGERS, quiet_when_closing
from ensstab_dask.exceptions import InvalidParameterError


@pytest.fixture
def started(monkeypatch) -> list[dict]:
    """The options of each LocalCluster started, in order (the real class does the work)."""
    import distributed

    made: list[dict] = []
    real = distributed.LocalCluster

    class Counted(real):
        def __init__(self, *args, **kwargs):
            made.append(kwargs)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(distributed, "LocalCluster", Counted)
    return made


def test_one_cluster_for_every_call_of_the_session_started_by_the_first_and_closed_at_the_end(started):
    reference = es.sweep(N, K, client="synchronous", progress=False, **GRID)
    with session("threads", n_workers=2) as s:
        assert s.client is None and started == []  # nothing runs work yet: no cluster
        es.sweep(N, K, client="synchronous", progress=False, **GRID)  # a client of its own
        assert started == []
        first = es.sweep(N, K, progress=False, **GRID)
        client = s.client
        assert client is not None and client.status == "running"
        second = es.sweep(N, K, progress=False, **GRID)
        assert s.client is client and len(started) == 1
        assert sum(client.nthreads().values()) == 2
        assert current_client() is not client  # not made the default: dask.compute elsewhere is untouched
    assert_same(reference, first)
    assert_same(reference, second)
    assert client.status == "closed" and s.client is None


def test_an_estimate_in_a_session_equals_the_synchronous_one(started):
    data = es.make_microarray(n_samples=30, n_feature=30, n_informative=4, effect=3.0, seed=1)
    kwargs = dict(selector=es.default_selector(20), m_ensemble=[1, 5], n_boot=0, progress=False)
    sync = es.estimate(data.X, data.y, 4, client="synchronous", **kwargs)
    with session("threads", n_workers=2):
        shared = es.estimate(data.X, data.y, 4, **kwargs)
    np.testing.assert_array_equal(shared.single.selection_counts, sync.single.selection_counts)
    assert len(started) == 1


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(kind="synchronous"), "kind must be 'processes' or 'threads'"),
        (dict(kind="tcp://127.0.0.1:8786"), "kind must be 'processes' or 'threads'"),
        (dict(n_workers=0), "n_workers"),
    ],
)
def test_a_session_that_cannot_be_local_is_refused(kwargs, words):
    with pytest.raises(InvalidParameterError, match=words):
        with session(**kwargs):
            pass


def test_a_session_that_has_ended_refuses_to_start_a_cluster(started):
    """Nothing would close a cluster started after the block: refused, and none started."""
    with session("threads", n_workers=1) as s:
        pass
    assert s.closed
    with pytest.raises(InvalidParameterError, match=r"this session has ended .* start\(\) would start a cluster"):
        s.start()
    assert started == [] and s.client is None


def test_a_closing_local_cluster_s_comm_loggers_are_quiet_and_restored():
    logging.getLogger("distributed.batched").setLevel(logging.INFO)
    before = {name: logging.getLogger(name).level for name in _CLOSING_LOGGERS}
    with quiet_when_closing() as closing:
        assert logging.getLogger("distributed.batched").isEnabledFor(logging.INFO)
        closing()
        for name in _CLOSING_LOGGERS:
            log = logging.getLogger(name)
            assert not log.isEnabledFor(logging.WARNING) and log.isEnabledFor(logging.ERROR)
    assert {name: logging.getLogger(name).level for name in _CLOSING_LOGGERS} == before


TINY = ["--n-target", "3", "--n-estimators", "5", "--m-ensemble", "1,5", "--n-boot", "0", "--quiet"]


def test_cli_workers_sizes_the_local_cluster(started, capsys):
    assert main(["estimate", "--scheduler", "threads", "--workers", "2", *TINY]) == 0
    assert len(started) == 1 and started[0]["threads_per_worker"] == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--scheduler", "synchronous", "--workers", "2"], "--workers is for a local cluster"),
        (["--workers", "0"], "--workers must be"),
    ],
)
def test_cli_workers_without_a_local_cluster_is_one_line_exit_2(started, capsys, flags, words):
    assert main(["estimate", *flags, *TINY]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ensstab: error: ") and err.count("\n") == 1 and words in err, err
    assert started == []
