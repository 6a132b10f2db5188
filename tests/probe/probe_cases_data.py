"""The probe's data-file cases of the round that says data hygiene out loud: what a data
file holds is never quoted in an error (103), its slips are refused or said in one line
(106), ``--label N`` prefers a column named N (107), ``--label`` is refused where a format
has no label columns (109), and a file that is not what its name says is called what it
is (115).

Each case writes its data file in the empty folder it is given and runs ``ensstab
estimate --data ...`` as a user would (a subprocess, small sizes); it returns ``error``
(one clear line, exit status 2), ``right`` (it ran, and said what it did with the file),
or what it was instead: ``silent`` (ran without a word, or quoted the file),
``hang``, ``traceback`` or ``noisy`` (a misleading refusal).

    python tests/probe/probe_replay.py --only 103,106,107,109,115
"""

from __future__ import annotations

import gzip
import pathlib

import numpy as np
from probe_cases_common import Case
from probe_cases_silent import SMALL, cli, failure, refused

#: estimate's options for every case: SMALL, and a target the small files allow.
ESTIMATE = [*SMALL, "--n-target", "3"]

#: A line of /etc/shadow, as the file's first line.
SECRET = "root:$6$Zk3vQ9SECRET7hashAbCdEf:19000:0:99999:7:::"


def _study(n: int = 30, p: int = 8):
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, p)), np.repeat([0, 1], n // 2)


def write_csv(path: pathlib.Path, header: list[str], columns: list[np.ndarray]) -> None:
    rows = zip(*[[repr(v.item()) if isinstance(v, np.floating) else str(v) for v in col] for col in columns])
    path.write_text(",".join(header) + "\n" + "\n".join(",".join(row) for row in rows) + "\n")


def said_once(tmp: pathlib.Path, name: str, needle: str, *args: str, table: str | None = None):
    """A run that should go through and say ``needle`` in one line: ``right``; ``silent``
    when it went through without the line (or the feature table holds ``table``)."""
    res = cli(tmp, "estimate", "--data", name, *args, *ESTIMATE, "--features", "f.csv")
    if bad := failure(res):
        return bad
    if res.rc != 0:
        return "noisy"
    lines = [line for line in res.err.splitlines() if needle in line]
    names = [row.split(",")[0] for row in (tmp / "f.csv").read_text().splitlines()[1:]]
    wrong = table is not None and table in names
    return "right" if len(lines) == 1 and not wrong else "silent"


# 103: an error quotes the file's name and what is wrong, never its contents ---------------------


def _quoted(write, name: str):
    def run(tmp: pathlib.Path) -> str:
        write(tmp / name)
        res = cli(tmp, "estimate", "--data", name, *ESTIMATE)
        if bad := failure(res):
            return bad
        leaked = "SECRET" in res.err or "$6$" in res.err
        return "silent" if leaked else refused(res)

    return run


def _shadow(path: pathlib.Path) -> None:
    path.write_text(SECRET + "\n" + "daemon:*:19000:0:99999:7:::\n" * 5)


def _text_x(path: pathlib.Path) -> None:
    np.savez(path, X=np.full((6, 3), SECRET), y=[0, 1] * 3)


# 106: data hygiene said out loud -----------------------------------------------------------------


def _repeated_csv_names(tmp: pathlib.Path) -> str:
    X, y = _study()
    header = ["f0", "f0", *(f"f{j}" for j in range(2, X.shape[1])), "label"]
    write_csv(tmp / "d.csv", header, [*X.T, y])
    return said_once(tmp, "d.csv", "('f0' x2): made unique")


def _repeated_npz_names(tmp: pathlib.Path) -> str:
    X, y = _study()
    np.savez(tmp / "d.npz", X=X, y=y, feature_names=np.array(["gene"] * X.shape[1]))
    return said_once(tmp, "d.npz", "('gene' x8): made unique")


def _repeated_var_names(tmp: pathlib.Path) -> str:
    import warnings

    import anndata
    import pandas as pd

    X, y = _study()
    names = [f"g{j}" for j in range(X.shape[1])]
    names[1] = "g0"
    obs = pd.DataFrame({"condition": pd.Categorical(np.where(y == 1, "stim", "ctrl"))})
    obs.index = obs.index.astype(str)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anndata's own "not unique": the file is meant so
        anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=names)).write_h5ad(tmp / "d.h5ad")
    return said_once(tmp, "d.h5ad", "('g0' x2): made unique", "--label", "condition")


def _label_twice(tmp: pathlib.Path) -> str:
    X, y = _study()
    header = ["label", *(f"f{j}" for j in range(X.shape[1])), "label"]
    write_csv(tmp / "d.csv", header, [y, *X.T, y])
    res = cli(tmp, "estimate", "--data", "d.csv", "--label", "label", *ESTIMATE)
    return refused(res) if "appears 2 times" in res.err or res.rc == 0 else "noisy"


def _row_names(tmp: pathlib.Path) -> str:
    import pandas as pd

    X, y = _study()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(label=y)
    frame.sort_values("label").to_csv(tmp / "d.csv")  # the index, sorted by class: the trap
    return said_once(tmp, "d.csv", "read as sample ids", table="Unnamed: 0")


def _every_sample_twice(tmp: pathlib.Path) -> str:
    X, y = _study()
    np.savez(tmp / "d.npz", X=np.vstack([X, X]), y=np.concatenate([y, y]))
    return said_once(tmp, "d.npz", "30 of 60 samples repeat an earlier one")


# 107: --label 0 where a column is named 0 ----------------------------------------------------------


def _label_named_0(tmp: pathlib.Path) -> str:
    """Column 0 is a batch (three classes), the column named 0 the condition (two)."""
    X, y = _study()
    batch = np.tile([1, 2, 3], len(y) // 3)
    write_csv(tmp / "d.csv", ["batch", *(f"f{j}" for j in range(X.shape[1])), "0"], [batch, *X.T, y])
    res = cli(tmp, "estimate", "--data", "d.csv", "--label", "0", *ESTIMATE)
    if bad := failure(res):
        return bad
    named = "2 classes: 0 (15), 1 (15)" in res.out
    said = any("the column named '0'" in line for line in res.err.splitlines())
    return "right" if res.rc == 0 and named and said else "silent"


# 109: --label where the format has no label columns ----------------------------------------------


def _label_on(suffix: str):
    def run(tmp: pathlib.Path) -> str:
        from scipy.io import savemat

        X, y = _study()
        path = tmp / f"d{suffix}"
        savemat(path, {"X": X, "Y": y[:, None]}) if suffix == ".mat" else np.savez(path, X=X, y=y)
        res = cli(tmp, "estimate", "--data", path.name, "--label", "y", *ESTIMATE)
        return refused(res) if res.rc == 0 or "--label is for .csv and .h5ad" in res.err else "noisy"

    return run


# 115: what a file is, said plainly ---------------------------------------------------------------


def _named(write, name: str, needle: str, *, never: str = "allow_pickle"):
    """A refusal that says ``needle`` (and never ``never``): error; another refusal: noisy."""

    def run(tmp: pathlib.Path) -> str:
        write(tmp / name)
        res = cli(tmp, "estimate", "--data", name, *ESTIMATE)
        if bad := failure(res):
            return bad
        if res.rc == 0:
            return "silent"
        return "error" if res.one_line_error and needle in res.err and never not in res.err else "noisy"

    return run


def _y_2d(path: pathlib.Path) -> None:
    X, y = _study()
    np.savez(path, X=X, y=np.column_stack([y, y]))


def _gzipped(path: pathlib.Path) -> None:
    X, y = _study()
    np.savez(path.with_suffix(".tmp.npz"), X=X, y=y)
    path.write_bytes(gzip.compress(path.with_suffix(".tmp.npz").read_bytes()))


def _lone_npy(path: pathlib.Path) -> None:
    np.save(path.with_suffix(".npy"), _study()[0])
    path.with_suffix(".npy").rename(path)


def _cell_x(path: pathlib.Path) -> None:
    from scipy.io import savemat

    X, y = _study()
    cells = np.empty((len(X), 1), dtype=object)
    for i, row in enumerate(X):
        cells[i, 0] = row
    savemat(path, {"X": cells, "Y": y[:, None]})


CASES: list[Case] = [
    Case(103, "/etc/shadow copied as x.csv", _quoted(_shadow, "x.csv")),
    Case(103, "/etc/shadow copied as x.mat", _quoted(_shadow, "x.mat")),
    Case(103, "a .npz whose X is text", _quoted(_text_x, "d.npz")),
    Case(106, "a CSV header with f0 twice", _repeated_csv_names),
    Case(106, "an .npz whose feature_names are all equal", _repeated_npz_names),
    Case(106, "an .h5ad whose var_names repeat", _repeated_var_names),
    Case(106, "the label column twice in a CSV", _label_twice),
    Case(106, "pandas' index column, sorted by class", _row_names),
    Case(106, "every sample twice", _every_sample_twice),
    Case(107, "--label 0 where a column is named 0", _label_named_0),
    Case(109, "--label on a .mat file", _label_on(".mat")),
    Case(109, "--label on a .npz file", _label_on(".npz")),
    Case(115, "a 2-D y in a .npz", _named(_y_2d, "d.npz", "y must be 1-D (one label per sample); got shape (30, 2)")),
    Case(115, "a gzip'd .npz", _named(_gzipped, "d.npz", "a gzip file, not a NumPy .npz archive")),
    Case(115, "a text file named .npz", _named(_shadow, "d.npz", "not a NumPy .npz archive")),
    Case(115, "a lone .npy named .npz", _named(_lone_npy, "d.npz", "a single NumPy array (.npy)")),
    Case(115, "a .mat whose X is a cell array", _named(_cell_x, "d.mat", "X must be a numeric matrix, not a cell")),
]
