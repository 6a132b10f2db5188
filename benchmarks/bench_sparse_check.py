"""What checking a sparse X's structure costs beside what reading it costs anyway.

    python benchmarks/bench_sparse_check.py [--n-samples 10000] [--n-feature 20000] [--density 0.05]

Medians of 3 on one matrix: ``check_sparse`` alone (canonical CSR, and with each row's
indices reversed, where repeated entries must be looked for by sorting), the whole
``check_data`` (which includes it, and makes the CSC float32 copy the selectors fit on),
and scipy's ``tocsc`` alone, side by side in one run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

from ensstab_dask.real.datasets import check_data
from ensstab_dask.real.sparse_structure import check_sparse


def median_seconds(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-samples", type=int, default=10_000)
    parser.add_argument("--n-feature", type=int, default=20_000)
    parser.add_argument("--density", type=float, default=0.05)
    args = parser.parse_args()
    X = sp.random(args.n_samples, args.n_feature, density=args.density, format="csr", random_state=0)
    y = np.random.default_rng(0).integers(0, 2, args.n_samples)
    unsorted = X.copy()
    for i in range(unsorted.shape[0]):  # each row's indices reversed: not canonical
        lo, hi = unsorted.indptr[i], unsorted.indptr[i + 1]
        unsorted.indices[lo:hi] = unsorted.indices[lo:hi][::-1].copy()
        unsorted.data[lo:hi] = unsorted.data[lo:hi][::-1].copy()
    unsorted.has_sorted_indices = False
    print(f"X {args.n_samples} x {args.n_feature}, {X.nnz:,} stored values")
    print(f"check_sparse, canonical:        {median_seconds(lambda: check_sparse(X)):.2f} s")
    print(f"check_sparse, unsorted indices: {median_seconds(lambda: check_sparse(unsorted)):.2f} s")
    print(f"check_data (includes the check): {median_seconds(lambda: check_data(X, y)):.2f} s")
    print(f"scipy tocsc alone:              {median_seconds(lambda: X.tocsc()):.2f} s")


if __name__ == "__main__":
    main()
