"""The README's API tour runs as written (in a temporary folder: it writes sweep.zarr and a cache)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_api_tour_runs_as_written(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no python block"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme"}
    exec(compile(blocks[0], "README.md (API tour)", "exec"), namespace)
    est, val = namespace["est"], namespace["val"]
    assert set(est.predicted()) == {1, 5, 10} and set(val.per_m) == {1, 5, 10}
    assert (tmp_path / "sweep.zarr").is_dir() and list(tmp_path.glob("naive-*.nc"))
