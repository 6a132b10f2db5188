"""Progress bars on stderr (on a terminal only, never on stdout, none with progress=False),
the dashboard link on its own line, and summaries in words with the symbols in brackets.

A bar is drawn only where it can redraw itself (a terminal or a notebook), so the tests
that look for one run the work in a fresh Python whose stderr is a real pseudo-terminal
and whose stdout is a pipe: exactly what a user at a terminal running
``ensstab estimate > result.txt`` has.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading

import pytest
import xarray as xr
from small_problem import DATA, SMALL

from ensstab_dask.cluster import Display, run_tasks
from ensstab_dask.estimates.stages.pipeline import estimate
from ensstab_dask.estimates.validation.comparison import compare
from ensstab_dask.estimates.validation.harness import Validation
from ensstab_dask.estimates.words.summary import estimate_details

SMALL = dict(SMALL, m_stability=6)
BAR = "%|"  # what every tqdm text bar draws, and nothing else here does

needs_pty = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


def run_with_terminal_stderr(code: str, timeout: float = 300) -> tuple[str, str]:
    """Run ``code`` in a fresh Python with stderr on a pseudo-terminal and stdout on a pipe.

    Returns (stdout, what the terminal received). The terminal turns "\\n" into "\\r\\n".
    """
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    # A terminal of known width: tqdm sizes its bar from it.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 150, 0, 0))
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
        cwd=os.path.dirname(os.path.dirname(__file__)),
    )
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:  # read as it comes: a full terminal buffer would block the child
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO once the child has closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        proc.kill()
        reader.join(timeout=30)
        os.close(master)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")[-3000:]
    return out.decode(), b"".join(chunks).decode(errors="replace")


PRELUDE = """
    from ensstab_dask.real.datasets import make_microarray
    from ensstab_dask.real.selectors import default_selector
    DATA = make_microarray(n_feature=300, n_informative=15, effect=2.0, seed=3)
    SMALL = dict(selector=default_selector(20), m_ensemble=(1, 3), m_stability=6, n_runs=24, repeats=4, seed=1,
                 n_boot=50, model="onda")
"""


def final_bar(err: str, desc: str) -> str:
    """The last state drawn of the bar named ``desc`` (its closing redraw)."""
    states = re.findall(rf"{re.escape(desc)}:[^\r\n]*", err)
    assert states, f"no {desc!r} bar on the terminal: {err[-2000:]!r}"
    return states[-1]


@pytest.mark.slow
@needs_pty
def test_validate_draws_a_bar_per_stage_on_stderr_and_keeps_stdout_clean(tmp_path):
    out, err = run_with_terminal_stderr(
        PRELUDE
        + f"""
    from ensstab_dask.estimates.validation.harness import validate
    res = validate(DATA.X, DATA.y, 10, client="synchronous", cache_dir={str(tmp_path)!r}, **SMALL)
    print(res.summary())
    """
    )
    # One bar per stage, each run to its end: the estimate's 24 + 6 real runs and its 10 x 4
    # self-check copies in one submission, its simulation stages (p, fixed point, prediction,
    # bootstrap, self-check), the naive check's 6 x 3.
    assert "100%" in final_bar(err, "real runs") and "70/70" in final_bar(err, "real runs")
    assert "5/5" in final_bar(err, "simulations")
    assert "18/18" in final_bar(err, "naive check")
    # stdout holds the results alone: no bar, no carriage return.
    assert BAR not in out and "\r" not in out
    assert out.splitlines()[0].startswith("Answer: ")  # the answer in plain words, first


@pytest.mark.slow
@needs_pty
def test_progress_false_draws_nothing_even_on_a_terminal(tmp_path):
    out, err = run_with_terminal_stderr(
        PRELUDE
        + f"""
    from ensstab_dask.estimates.validation.harness import validate
    res = validate(DATA.X, DATA.y, 10, client="synchronous", cache_dir={str(tmp_path)!r}, progress=False, **SMALL)
    print(res.summary())
    """
    )
    assert err == "" and "reliable: " in out


@pytest.mark.slow
@needs_pty
def test_on_a_cluster_the_dashboard_link_has_its_own_line_before_the_bars():
    out, err = run_with_terminal_stderr(
        PRELUDE
        + """
    from distributed import Client, LocalCluster
    import ensstab_dask as es
    from ensstab_dask.estimates.stages.pipeline import estimate
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster, \\
            Client(cluster) as client:
        es.sweep(300, 10, n_useful=[20, 40], p=[0.5, 0.7], m_ensemble=[1], m_stability=5, repeats=2, client=client)
        print(estimate(DATA.X, DATA.y, 10, client=client, **SMALL).summary())
        print("LINK", client.dashboard_link)
    """
    )
    link = re.search(r"LINK (\S+)", out).group(1)
    lines = [line.strip("\r") for line in err.split("\n")]
    notes = [line for line in lines if "Dask dashboard" in line]
    # Once for the one cluster (the sweep and the estimate share it), alone on its line,
    # not glued to a bar, and not on stdout.
    assert notes == [f"Dask dashboard: {link}"]
    assert err.index("Dask dashboard") < err.index("ensstab sweep:") < err.index("real runs:")
    # The estimate's 24 + 6 runs and 40 for its self-check, in one submission.
    assert "4/4" in final_bar(err, "ensstab sweep") and "70/70" in final_bar(err, "real runs")
    assert "Dask dashboard" not in out.replace(f"LINK {link}", "") and BAR not in out


@pytest.mark.slow
def test_no_bar_into_a_file_or_with_progress_false(capfd):
    # Under capfd stderr is a file, not a terminal: a bar there would be hundreds of
    # carriage-return lines in a log, so none is drawn: one line per stage as it starts (a
    # batch job's log shows what runs), and progress=False is silent anyway.
    est = estimate(DATA.X, DATA.y, 10, client="synchronous", progress=True, **SMALL)
    captured = capfd.readouterr()
    assert BAR not in captured.err and "\r" not in captured.err and captured.out == ""
    lines = captured.err.splitlines()
    # The price first (one run timed here, run by run on no cluster), then each stage as it starts.
    assert re.fullmatch(
        r"the estimate: 70 real runs to make, about \d+ s \(one run took [\d.e-]+ s here; 1 at a time on this "
        r"cluster\)",
        lines[0],
    ), lines
    assert [re.sub(r"\d\d:\d\d:\d\d$", "T", line) for line in lines[1:]] == [
        "real runs: 70 runs, started at T",
        "simulations: 5 stages, started at T",
    ], lines
    estimate(DATA.X, DATA.y, 10, client="synchronous", progress=False, **SMALL)
    assert capfd.readouterr() == ("", "")
    assert est.real_runs == 30 + 40


def failing(x: int) -> int:
    if x == 3:
        raise ArithmeticError("task 3 failed")
    return 10 * x


def test_run_tasks_keeps_order_and_raises_the_task_error():
    from distributed import Client, LocalCluster

    tasks = [(i,) for i in range(6)]
    ok = [(i,) for i in (0, 1, 2, 4, 5)]
    assert run_tasks(failing, ok, display=Display("t"), client="synchronous") == [0, 10, 20, 40, 50]
    with pytest.raises(ArithmeticError, match="task 3 failed"):
        run_tasks(failing, tasks, display=Display("t"), client="synchronous")
    with (
        LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        assert run_tasks(failing, ok, display=Display("t", sizes=[2] * 5), client=client) == [0, 10, 20, 40, 50]
        with pytest.raises(ArithmeticError, match="task 3 failed"):
            run_tasks(failing, tasks, display=Display("t"), client=client)
        # Streamed as they land, two in flight at a time (a sweep's window): every task once.
        landed: dict = {}
        assert run_tasks(failing, ok, client=client, on_result=landed.__setitem__, window=2) is None
        assert landed == {0: 0, 1: 10, 2: 20, 3: 40, 4: 50}
        with pytest.raises(ArithmeticError, match="task 3 failed"):
            run_tasks(failing, tasks, client=client, on_result=landed.__setitem__, window=2)


# -- summaries in words --------------------------------------------------------------


@pytest.fixture(scope="module")
def est():
    return estimate(DATA.X, DATA.y, 10, client="synchronous", progress=False, **SMALL)


def lines_with(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


def test_summary_speaks_in_words_one_number_per_line(est):
    text = est.summary()
    method = text.splitlines().index(next(line for line in text.splitlines() if line.startswith("The method's")))
    assert text.splitlines()[method + 1].startswith("  reliable: ")  # the verdict before any of its numbers
    assert "+-" not in text  # every spread says what it is
    # The count as measured, never the value the simulator ran at.
    (useful,) = lines_with(text, "useful features counted (A[f]")
    assert f": {est.single.n_useful_mean:.1f}, from 24 real runs" in useful
    assert f"(standard deviation {est.single.n_useful_std:.1f})" in useful
    lo, hi = est.prediction.intervals["n_useful"]
    assert useful.endswith(f"; 95% bootstrap interval over the real runs [{lo:.1f}, {hi:.1f}]")
    (simulated,) = lines_with(text, "useful features simulated (n_useful)")
    assert simulated.strip() == f"useful features simulated (n_useful): {est.single.n_useful}, A[f] rounded"
    # Each symbol is named once: the summary does not explain A[f] on two lines.
    assert len(lines_with(text, "(A[f],")) == 1 and len(lines_with(text, "(t_uniform,")) == 1
    # One selector's stability is one number in the summary (the simulator's fit target, the real runs'
    # own); its other measures, Nogueira's among them, are in the details, each interval named.
    assert len(lines_with(text, "stability of one")) == 1 and not lines_with(text, "Nogueira")
    (real,) = lines_with(text, "stability of one real selector (jaccard index)")
    assert f"{est.single.real_stability:.4f}" in real and "bootstrap interval over the real runs" in real
    details = estimate_details(est)
    assert est.details() == details
    (again,) = lines_with(details, "the estimate's (what every output says)")
    (nog,) = lines_with(details, "by Nogueira's index")
    assert real.split(":", 1)[1].split(",")[0] == again.split(":", 1)[1].split(",")[0]
    assert f"{est.single.real_nogueira.stability:.4f}" in nog and "Nogueira's 95% confidence interval" in nog
    (at_one,) = lines_with(details, "the curve's m_ensemble = 1")
    assert f"{est.predicted()[1]:.4f}" in at_one
    (p_line,) = lines_with(text, "(p, ")
    assert f"{est.fit.p:.4f}" in p_line and "bootstrap interval over the real runs" in p_line
    assert lines_with(text, "(A[f_(u,p)]): ") and lines_with(text, "fixed point (n_useful = A[f_(u,p)]): holds")
    # Every per-size line holds one prediction and its interval; the interval says what widened it.
    widened = "" if est.self_check.passed else ", widened by the self-check's error"
    assert f"bootstrap interval over the real runs (50 replicates{widened})" in text
    (check,) = lines_with(text, "Self-check ")
    assert "measured on 10 real ensemble copies of 4; |z| <= 2 passes): m = 2: predicted" in check
    for m, (lo, hi) in est.curve_interval().items():
        (row,) = lines_with(text, f"m_ensemble = {m}:")
        assert row.strip() == f"m_ensemble = {m}: {est.predicted()[m]:.4f}; 95% interval [{lo:.4f}, {hi:.4f}]"


def test_summary_without_a_bootstrap_names_the_spread():
    e = estimate(DATA.X, DATA.y, 10, client="synchronous", progress=False, **dict(SMALL, n_boot=0))
    text = e.summary()
    assert "+-" not in text and "bootstrap interval" not in text and "no bootstrap (n_boot=0)" in text
    sd = float(e.curve["stability_std"].sel(m_ensemble=1))
    (row,) = lines_with(text, "m_ensemble = 1:")
    assert row.endswith(f"; standard deviation of one simulated measurement {sd:.4f}")


def test_validation_gives_the_real_value_its_se_and_a_verdict_per_size(est):
    pred = est.predicted()
    # A naive value close to the prediction at m = 1 (within 2 SE), far from it at m = 3.
    naive = xr.Dataset(
        {
            "stability": ("m_ensemble", [pred[1] + 0.01, pred[3] + 0.3]),
            "stability_se": ("m_ensemble", [0.02, 0.02]),
        },
        coords={"m_ensemble": [1, 3]},
        attrs={"real_runs": 18, "m_stability": 6, "cached": 0},
    )
    val = Validation(est, naive, compare(est, naive), {"estimate": 1.0, "naive": 2.0})
    table = val.table()
    row1 = lines_with(table, "| 1 |")[0].split(" | ")
    row3 = lines_with(table, "| 3 |")[0].split(" | ")
    # The prediction's SE, the real value and its SE in cells of their own, then the verdict in words.
    se = est.curve_se()
    assert row1[2:5] == [f"{se[1]:.3f}", f"{pred[1] + 0.01:.3f}", "0.020"] and row1[-1] == "within 2 SE |"
    assert row3[2:5] == [f"{se[3]:.3f}", f"{pred[3] + 0.3:.3f}", "0.020"] and row3[-1] == "outside 2 SE |"
    assert "SE of real" in table and "+-" not in table
    text = val.summary()
    assert text == est.summary() + "\n\n" + val.comparison()  # the estimate's verdict stays first
    assert "the prediction is within 2 SE of it at 1 of 2" in text and "+-" not in text


def test_a_log_says_the_price_first_then_how_many_are_done_and_the_time_left(tmp_path, capsys, monkeypatch):
    """``--groupby`` into a log: every group's runs priced before the first (how many, about
    how long on this cluster), then the stage's lines carry done / total and the time left
    (every update here: ``LOG_EVERY`` set to 0), and its end."""
    import numpy as np

    from ensstab_dask.cli import main
    from ensstab_dask.cluster import progress

    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    rng = np.random.default_rng(0)
    labels = np.repeat(["A", "B", "C"], [24, 20, 16])
    X = rng.standard_normal((60, 40)) + 2.0 * (np.arange(40) < 3) * (labels == "B")[:, None]
    table = tmp_path / "cells.csv"
    table.write_text(
        "cell_type,"
        + ",".join(f"g{j}" for j in range(40))
        + "\n"
        + "".join(f"{g}," + ",".join(f"{v:.4f}" for v in row) + "\n" for g, row in zip(labels, X))
    )
    args = ["estimate", "--data", str(table), "--groupby", "cell_type", "--n-target", "3", "--n-estimators", "5"]
    assert main([*args, "--copies", "4", "--m-ensemble", "1,5,20", "--scheduler", "synchronous", "--no-cache"]) == 0
    err = capsys.readouterr().err.splitlines()
    price = [i for i, line in enumerate(err) if line.startswith("the estimates of 3 groups: 240 real runs to make")]
    started = [i for i, line in enumerate(err) if line.startswith("real runs of 3 groups: 240 runs, started at")]
    assert len(price) == len(started) == 1 and price[0] < started[0], err
    assert re.fullmatch(r".*, about \d+ s \(one run took [\d.e-]+ s here; 1 at a time on this cluster\)", err[price[0]])
    done = [re.fullmatch(r"real runs of 3 groups: (\d+)/240 runs, about \d+ s left", line) for line in err]
    counts = [int(m[1]) for m in done if m]
    assert counts and counts == sorted(counts) and counts[-1] < 240, err
    assert any(re.fullmatch(r"real runs of 3 groups: 240/240 runs, done in \d+ s", line) for line in err), err
