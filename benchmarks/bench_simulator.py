"""Microseconds per simulated weak selector: the kernel vs the literal algorithm vs a floor.

    python benchmarks/bench_simulator.py [--repeats 21] [--rows 500] [--literal-rows 5]

At n_feature=2000, n_target=20, n_useful=60, p=0.7 (docs/performance.md), in one
process, with the three measurements interleaved in every repeat so that load on this
shared machine hits them alike:

(a) ``simulate_rankings`` (the fast kernel, everything included: allocation, seeding);
(b) the literal algorithm of docs/method.md section 2 (``tests/oracle.py``), plain Python;
(c) the floor: ``rng.permuted`` of an (M, n_feature) int64 array along its rows, i.e. one
    uniform shuffle per selector and nothing else (the array is made outside the timer).

Each repeat is short (about 0.1 s) so that the three timings of one repeat see the same
machine; the ratios literal/kernel and kernel/floor are computed per repeat and their
medians reported (this machine's speed drifts by 2x over minutes), with the medians of
the times themselves.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

from oracle import literal_rankings  # noqa: E402

import ensstab_dask as es  # noqa: E402

N, K, U, P = 2000, 20, 60, 0.7


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--rows", type=int, default=500, help="selectors per timing of (a) and (c)")
    ap.add_argument("--literal-rows", type=int, default=5, help="selectors per timing of (b)")
    args = ap.parse_args(argv)

    es.simulate_rankings(N, K, U, P, size=10, seed=0)  # warm-up
    kernel, literal, floor = [], [], []
    rng = np.random.default_rng(0)
    for rep in range(args.repeats):
        t = time.perf_counter()
        es.simulate_rankings(N, K, U, P, size=args.rows, seed=rep)
        kernel.append((time.perf_counter() - t) / args.rows * 1e6)

        t = time.perf_counter()
        literal_rankings(N, K, U, P, args.literal_rows, seed=rep)
        literal.append((time.perf_counter() - t) / args.literal_rows * 1e6)

        x = np.broadcast_to(np.arange(N, dtype=np.int64), (args.rows, N)).copy()
        t = time.perf_counter()
        rng.permuted(x, axis=1, out=x)
        floor.append((time.perf_counter() - t) / args.rows * 1e6)

    k, lit, fl = (statistics.median(v) for v in (kernel, literal, floor))
    speedup = statistics.median(b / a for a, b in zip(kernel, literal))
    vs_floor = statistics.median(a / c for a, c in zip(kernel, floor))
    print(f"n_feature={N} n_target={K} n_useful={U} p={P}; medians over {args.repeats} repeats")
    print("| method | us per weak selector |")
    print("|---|---|")
    print(f"| (a) ensstab_dask.simulate_rankings | {k:.1f} |")
    print(f"| (b) literal algorithm (docs/method.md section 2) | {lit:.0f} |")
    print(f"| (c) floor: rng.permuted per row | {fl:.1f} |")
    print(f"speed-up over literal: {speedup:.0f}x (median of per-repeat ratios; goal >= 200x)")
    print(f"kernel / floor: {vs_floor:.2f}x (median of per-repeat ratios; goal <= 2x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
