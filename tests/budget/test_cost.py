"""Cost before work: a call that would run for hours says so and stops, before any of it."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import ensstab_dask as es
from ensstab_dask.budget.cost import MAX_REAL_RUNS, MAX_SIMULATED, check_cost, estimate_cost

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ensstab_dask.cli", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


@pytest.mark.parametrize(
    "args, said",
    [
        # The paper's simulator at m = 100,000: 10^8 simulated selectors, each cell fitting in memory.
        (["estimate", "--m-ensemble", "1,100000", "--n-runs", "50", "--model", "onda"], "simulated selectors"),
        (["estimate", "--m-ensemble", "1,5", "--m-stability", "20000", "--validate"], "real runs of the selector"),
        (["validate", "--m-ensemble", "1,5", "--m-stability", "20000"], "real runs of the selector"),
        (
            [
                "sweep",
                "--n-feature",
                "2000",
                "--n-target",
                "20",
                "--n-useful",
                "20:200:1",
                "--p",
                "0.05:1:0.05",
                "--m-ensemble",
                "1,1000",
                "--repeats",
                "20",
            ],
            "simulated selectors",
        ),
        (
            [
                "simulate",
                "--n-feature",
                "2000",
                "--n-target",
                "20",
                "--n-useful",
                "40",
                "--p",
                "0.5",
                "--m-ensemble",
                "10000000",
            ],
            "simulated selectors",
        ),
    ],
)
def test_a_huge_run_is_refused_before_any_work_with_its_cost(args, said, tmp_path):
    extra = ["--store", str(tmp_path / "s.zarr")] if args[0] == "sweep" else []
    res = cli(*args, *extra)  # ran silently for minutes (or days) before
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr[-2000:]
    assert said in lines[0] and re.search(r"(about|at least) \d", lines[0]), lines[0]  # and how long
    assert lines[0].endswith("pass --yes to run it"), lines[0]
    assert not (tmp_path / "s.zarr").exists()  # nothing made


def test_the_real_runs_cost_is_timed_on_the_users_data():
    ran = []
    with pytest.raises(es.InvalidParameterError, match=r"20,000 real runs of the selector \(one took .* s here: about"):
        check_cost("it", n_feature=100, real_runs=20_000, time_one_run=lambda: ran.append(1))
    assert ran == [1]
    check_cost("it", n_feature=100, real_runs=MAX_REAL_RUNS, simulated=MAX_SIMULATED)  # at the threshold: runs
    check_cost("it", n_feature=100, real_runs=10**9, allow_large=True, time_one_run=lambda: ran.append(2))
    assert ran == [1]  # allowed: nothing timed, nothing refused


def test_the_estimate_counts_what_it_will_run():
    # The default model: its 10 copies of 20, and t_uniform's uniform selectors.
    assert estimate_cost(
        paper_runs=0, designs=[(10, 20), None], simulator=False, m_list=[1, 50], m_stability=50, n_runs=50, repeats=20
    ) == (200, 1000)
    real, simulated = estimate_cost(
        paper_runs=100, designs=[None, (10, 4)], simulator=True, m_list=[1, 5], m_stability=50, n_runs=5, repeats=20
    )
    assert real == 140 and simulated == 20 * 5 + 20 * (50 * 1 + 5 + 50 * 5 + 5) + 20 * 50


def test_a_million_ensemble_sizes_are_priced_before_the_data(tmp_path):
    """1:1000000:1 ran for minutes checking each size, then hours computing each: refused in
    one line, before the data are read (the file does not even exist)."""
    res = cli("estimate", "--data", str(tmp_path / "absent.npz"), "--m-ensemble", "1:1000000:1")
    assert res.returncode == 2, res.stderr[-2000:]
    assert res.stderr.strip() == (
        "ensstab: error: --m-ensemble: the estimate would compute 1,000,000 ensemble sizes, above the 1,000 computed "
        "without asking (each is a point of the curve and a line of its table); check the sizes, or pass --yes to "
        "run it"
    )


def test_a_long_grid_is_checked_as_one_array_with_the_one_value_message():
    from ensstab_dask.checks import check_grid

    sizes = list(range(1, 100_001))
    assert check_grid(sizes[::-1], "m_ensemble", "m").tolist() == sizes
    with pytest.raises(ValueError, match=r"^m_ensemble values must be >= 1; got 0$"):
        check_grid([*sizes, 0], "m_ensemble", "m")
    with pytest.raises(ValueError, match="m_ensemble has duplicate values"):
        check_grid([*sizes, 5], "m_ensemble", "m")
    with pytest.raises(ValueError, match=r"p values must be in \[0.0, 1.0\]"):
        check_grid([i / 1000 for i in range(999)] + [1.5], "p", "p")
