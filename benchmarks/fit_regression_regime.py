"""The synthetic harness's ``regression`` regime, fitted to a real regression task's naive check.

    python benchmarks/fit_regression_regime.py [--naive benchmarks/results/validation-prostate-gene-seed0.json] \
        [--truth-copies 60]

Reads the naive check's curve at m = 1, 5, 10, 20, 50 from a ``bench_validate.py --json``
file (seed 0: the seed settings are chosen on), computes the harness's true curve for each
(signal features, tau, sigma) of a grid (``top`` 1: the scores' scale is free), and prints
the grid points by their root-mean-square distance to the naive curve, the best first.
``bench_synthetic_truth.REGIMES["regression"]`` is the best of them (signal 150, tau 0.1,
sigma 1.0 on the committed file).
"""

from __future__ import annotations

import argparse
import itertools
import json

import numpy as np
from synthetic_regimes import SIZES, Regime, true_curve

SIGNALS, TAUS, SIGMAS = (60, 150, 300), (0.1, 0.2, 0.3, 0.5), (0.5, 1.0, 1.5, 2.0)
AT = (1, 5, 10, 20, 50)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--naive", default="benchmarks/results/validation-prostate-gene-seed0.json")
    ap.add_argument("--truth-copies", type=int, default=60)
    args = ap.parse_args(argv)
    with open(args.naive) as fh:
        per_m = json.load(fh)[0]["per_m"]
    target = np.array([per_m[str(m)]["real"] for m in AT])
    at = [SIZES.index(m) for m in AT]
    rows = []
    for signal, tau, sigma in itertools.product(SIGNALS, TAUS, SIGMAS):
        curve, _ = true_curve(
            Regime("regression", tau, sigma, top=1.0, signal=signal), n_copies=args.truth_copies, seed=0
        )
        rows.append((float(np.sqrt(np.mean((curve[at] - target) ** 2))), signal, tau, sigma, np.round(curve[at], 3)))
    print(f"naive curve at m = {AT}: {np.round(target, 3).tolist()}")
    for rmse, signal, tau, sigma, curve in sorted(rows, key=lambda r: r[0])[:5]:
        print(f"rmse {rmse:.4f}: signal {signal}, tau {tau}, sigma {sigma}: {curve.tolist()}")


if __name__ == "__main__":
    main()
