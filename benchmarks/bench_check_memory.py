"""Peak resident memory that check_data adds above a 10,000 x 20,000 dense X, each case in a
fresh process (ru_maxrss after the check minus before it, X made in its own dtype so that
nothing larger came before), and its time.

    python benchmarks/bench_check_memory.py

Results in docs/performance.md ("The checks of X").
"""

import subprocess
import sys

CASE = r"""
import resource, sys, time
import numpy as np
from ensstab_dask.real.datasets import check_data
dtype = np.dtype(sys.argv[1])
rng = np.random.default_rng(0)
check_data(rng.standard_normal((10, 20_000)), np.repeat([0, 1], 5))  # imports
X = rng.standard_normal((10_000, 20_000), dtype=dtype)  # made in its dtype: no larger array before the check
y = np.repeat([0, 1], 5_000)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
Xc, yc = check_data(X, y)
dt = time.perf_counter() - t
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
grew = (after - before) / 2**10
print(f"{dtype.name}: X {X.nbytes / 2**20:,.0f} MiB; check_data adds {grew:,.0f} MiB of peak RSS, {dt:.2f} s; "
      f"returns X itself: {Xc is X}")
"""
for dtype in ("float64", "float32"):
    print(subprocess.run([sys.executable, "-c", CASE, dtype], capture_output=True, text=True).stdout.strip())
