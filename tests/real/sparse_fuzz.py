"""Fuzz the sparse readers: each seed corrupts a valid sparse ``.npz`` at random, and a
child process of its own (forked from this one, which has imported everything once)
reads it and, where it is accepted, runs a forest on it.

    python tests/real/sparse_fuzz.py FIRST_SEED N_SEEDS FOLDER

prints one line per seed, ``seed outcome detail``, where ``outcome`` is ``refused`` (one
line, from the package), ``accepted`` (the matrix read equals the one its triplets
describe, to float32's precision, and a forest ran on it), ``wrong`` (accepted, yet not that matrix; or a refusal
that is not the package's one line) or ``signal N`` (the child was killed by signal N).
tests/real/test_sparse_fuzz.py runs it; run it by hand for more seeds.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # forked children: no BLAS threads to inherit

import numpy as np  # noqa: E402
import scipy.sparse  # noqa: E402

from ensstab_dask.exceptions import InvalidParameterError  # noqa: E402
from ensstab_dask.real.datasets import load_dataset  # noqa: E402
from ensstab_dask.real.selectors import default_selector, real_run  # noqa: E402

N_SAMPLES, N_FEATURE = 12, 9


def corrupted(seed: int) -> dict:
    """The arrays of a valid CSR or CSC matrix and its labels, with one to three corruptions."""
    rng = np.random.default_rng(seed)
    fmt = str(rng.choice(["csr", "csc"]))
    dense = np.where(rng.random((N_SAMPLES, N_FEATURE)) < 0.4, rng.standard_normal((N_SAMPLES, N_FEATURE)), 0.0)
    X = scipy.sparse.csr_matrix(dense) if fmt == "csr" else scipy.sparse.csc_matrix(dense)
    parts = dict(
        data=X.data.copy(),
        indices=X.indices.copy(),
        indptr=X.indptr.copy(),
        shape=np.array(X.shape),
        format=np.array(fmt),
        y=np.repeat([0, 1], N_SAMPLES // 2),
    )
    for _ in range(int(rng.integers(1, 4))):
        try:
            _corrupt(parts, rng)
        except (OverflowError, ValueError):  # a value the array's dtype, changed earlier, cannot hold
            pass
    return parts


def _corrupt(parts: dict, rng: np.random.Generator) -> None:
    key = str(rng.choice(["data", "indices", "indptr", "shape", "format"], p=[0.2, 0.3, 0.3, 0.15, 0.05]))
    a = parts[key]
    what = int(rng.integers(0, 6))
    if key == "format":
        parts[key] = np.array(str(rng.choice(["csc", "csr", "coo", "bsr", "", "CSR"])))
    elif key == "shape":
        a = np.array([N_SAMPLES, N_FEATURE])
        choices = [
            a + rng.integers(-3, 4, size=2),
            np.array([a[0], -1]),
            np.array([a[0], a[1], 1]),
            a.astype(np.float64) + 0.5,
            np.array([a[0], 2**31 + 5]),
            a[::-1].copy(),
        ]
        parts[key] = choices[what]
    elif key == "data":
        if len(a) == 0 or what == 0:
            parts[key] = np.append(a, 1.0) if rng.random() < 0.5 else a[:-1]
        elif what == 1:
            parts[key] = a = a.astype(np.float64) if a.dtype.kind in "fiub" else a
            a[rng.integers(len(a))] = rng.choice([np.nan, np.inf, -np.inf, 3e38, -3e38, 1e300])
        elif what == 2:
            parts[key] = a.astype(rng.choice([np.float32, np.int8, np.complex128, np.bool_]))
        elif what == 3:
            parts[key] = a.astype(str)
        else:
            parts[key] = np.full(len(a), 3e38)
    elif key == "indices":
        if len(a) == 0 or what == 0:
            parts[key] = np.append(a, 0) if rng.random() < 0.5 else a[:-1]
        elif what == 1:
            a[rng.integers(len(a))] = rng.choice([-1, -(2**31), N_FEATURE, N_SAMPLES, 1000, 2**31 - 1])
        elif what == 2:
            wide = a.astype(np.int64)
            wide[rng.integers(len(a))] = int(rng.choice([2**31, 2**33, -(2**40), 2**62]))
            parts[key] = wide
        elif what == 3:
            parts[key] = a.astype(rng.choice([np.float64, np.uint8, np.int16, np.uint64]))
        elif what == 4:  # a repeated entry: a neighbour's index
            i = int(rng.integers(1, len(a))) if len(a) > 1 else 0
            a[i] = a[i - 1]
        else:
            rng.shuffle(a)
    else:  # indptr
        i = int(rng.integers(len(a)))
        if what == 0:
            a[i] = rng.integers(-5, a[-1] + 6)
        elif what == 1 and len(a) > 2:
            j = int(rng.integers(1, len(a) - 1))
            a[j], a[j + 1] = a[j + 1], a[j]
        elif what == 2:
            parts[key] = a[:-1] if rng.random() < 0.5 else np.append(a, a[-1])
        elif what == 3:
            parts[key] = a.astype(rng.choice([np.float64, np.int8, np.uint32]))
        elif what == 4:
            a[-1] += int(rng.integers(1, 4))
        else:
            a[0] = -1


def expected(parts: dict) -> np.ndarray:
    """The dense matrix the (accepted) triplets describe, summed as scipy sums them, in
    Python, trusting nothing."""
    n_rows, n_cols = (int(v) for v in parts["shape"])
    out = np.zeros((n_rows, n_cols))
    indptr, indices, data = parts["indptr"], parts["indices"], parts["data"].astype(np.float64)
    for major in range(len(indptr) - 1):
        for k in range(int(indptr[major]), int(indptr[major + 1])):
            r, c = (major, int(indices[k])) if str(parts["format"]) == "csr" else (int(indices[k]), major)
            out[r, c] += data[k]
    return out


def child(seed: int, folder: Path) -> int:
    """What one forked child does: 0 refused, 1 accepted and right, 2 wrong; its line printed."""
    parts = corrupted(seed)
    path = folder / f"fuzz-{seed}.npz"
    np.savez(path, **parts)
    try:
        data = load_dataset(path)
    except InvalidParameterError as exc:
        one_line = "\n" not in str(exc)
        print(seed, "refused" if one_line else "wrong", str(exc).replace(f"{path}: ", "")[:90], flush=True)
        return 0 if one_line else 2
    except Exception:  # noqa: BLE001 - anything else is the finding
        print(seed, "wrong", traceback.format_exc().strip().splitlines()[-1][:120], flush=True)
        return 2
    # float32, as the package keeps a sparse X: repeated entries summed in it
    want = expected(parts)
    right = np.allclose(data.X.toarray(), want, rtol=1e-6, atol=1e-6 * np.abs(want).max(initial=0))
    real_run(data.X, data.y, 3, selector=default_selector(5), seed=seed)  # to CSC, and a forest on it
    print(seed, "accepted" if right else "wrong", "" if right else "not the matrix of its triplets", flush=True)
    return 1 if right else 2


def main(first: int, n: int, folder: Path) -> None:
    # What the children use, imported once here (the package imports lazily).
    valid = folder / "valid.npz"
    X = scipy.sparse.random(N_SAMPLES, N_FEATURE, density=0.5, format="csr", random_state=0)
    np.savez(valid, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, format="csr", y=[0, 1] * 6)
    data = load_dataset(valid)
    real_run(data.X, data.y, 3, selector=default_selector(5), seed=0)
    for seed in range(first, first + n):
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                code = child(seed, folder)
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            print(seed, "signal", os.WTERMSIG(status), flush=True)
        elif os.WEXITSTATUS(status) == 3:
            print(seed, "wrong", "the child failed before its line", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
