"""The README's API tour runs as written (in a temporary folder: it writes sweep.zarr and a cache)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow
def test_api_tour_runs_as_written(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no python block"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme"}
    exec(compile(blocks[0], "README.md (API tour)", "exec"), namespace)
    est, val = namespace["est"], namespace["val"]
    assert set(est.predicted()) == {1, 5, 10} and set(val.per_m) == {1, 5, 10}
    assert (tmp_path / "sweep.zarr").is_dir() and list(tmp_path.glob("naive-*.nc"))


@pytest.mark.slow
def test_main_command_with_the_cli_defaults(tmp_path):
    """`ensstab estimate`, the README's first command, as users run it (all defaults:
    embedded default, 300 trees, local cluster), with --json to read what it said."""
    import json
    import subprocess
    import sys

    out = tmp_path / "e.json"
    res = subprocess.run([sys.executable, "-m", "ensstab_dask.cli", "estimate", "--json", str(out)],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.index("reliable:") < res.stdout.index("m_ensemble = ")  # the verdict comes first
    d = json.loads(out.read_text())
    # The default model: 10 real ensemble copies of 20 weak selectors, and nothing else.
    assert d["real_runs"] == 200 and d["model"] == "anchored" and d["settings"]["calibration_layout"] == "copies"
    assert d["self_check"]["passed"] is True and d["self_check"]["sizes"] == [20]
    assert set(d["curve"]) == set(d["curve_interval"]) == {"1", "5", "10", "20", "30", "50"}
    assert d["reliable"] is True and d["warnings"] == []
    assert all(lo <= d["curve"][m] <= hi for m, (lo, hi) in d["curve_interval"].items())
    assert d["useful_that_are_informative"] >= 35  # the forest finds the planted features
