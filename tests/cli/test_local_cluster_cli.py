"""A command on a local cluster of worker processes, as a user runs it: its stderr holds
no traceback (no "Batched Comm Closed" while the cluster closes) and nothing of the
workers' own logging."""

import subprocess
import sys

import pytest

TINY = ["--n-target", "3", "--n-estimators", "5", "--m-ensemble", "1,5", "--n-boot", "0", "--no-cache"]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["--workers", "2"]])
def test_a_local_cluster_run_ends_without_a_traceback(workers):
    for _ in range(2):  # the closing race is rare: two closes per case
        run = subprocess.run(
            [sys.executable, "-m", "ensstab_dask.cli", "estimate", "--scheduler", "processes", *workers, *TINY],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        assert "Traceback" not in run.stderr and "Batched Comm Closed" not in run.stderr, run.stderr[-3000:]
        assert "Answer:" in run.stdout
