"""Peak memory that check_data allocates above a 10,000 x 20,000 dense X (tracemalloc, which
NumPy reports its arrays to) and what it keeps, each case in a fresh process after a first
call at the same width (the imports), with its time.

    python benchmarks/bench_check_memory.py

Results in docs/performance.md ("The checks of X").
"""

import subprocess
import sys

CASE = r"""
import sys, time, tracemalloc
import numpy as np
from ensstab_dask.real.datasets import check_data
dtype = np.dtype(sys.argv[1])
rng = np.random.default_rng(0)
check_data(rng.standard_normal((10, 20_000)), np.repeat([0, 1], 5))  # imports, a first call at this width
X = rng.standard_normal((10_000, 20_000), dtype=dtype)  # made in its dtype: no larger array before the check
y = np.repeat([0, 1], 5_000)
tracemalloc.start()
t = time.perf_counter()
Xc, yc = check_data(X, y)
dt = time.perf_counter() - t
kept, peak = (m / 2**20 for m in tracemalloc.get_traced_memory())
print(f"{dtype.name}: X {X.nbytes / 2**20:,.0f} MiB; check_data peak {peak:,.0f} MiB above X, keeps {kept:,.0f} MiB, "
      f"{dt:.2f} s; returns X itself: {Xc is X}")
"""
for dtype in ("float64", "float32"):
    print(subprocess.run([sys.executable, "-c", CASE, dtype], capture_output=True, text=True).stdout.strip())
