"""The command line's estimate on given data, as the model tests run it."""

from __future__ import annotations

import json

import numpy as np

from ensstab_dask.cli import main as cli_main


def cli_estimate(tmp_path, capsys, X, y, *options: str) -> dict:
    """``ensstab estimate`` on ``(X, y)`` written to an .npz file, with ``options``, on the
    synchronous scheduler; asserts it succeeded and returns its JSON."""
    path, out = tmp_path / "d.npz", tmp_path / "e.json"
    np.savez(path, X=X, y=y)
    code = cli_main(["estimate", "--data", str(path), *options, "--scheduler", "synchronous", "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    return json.loads(out.read_text())
