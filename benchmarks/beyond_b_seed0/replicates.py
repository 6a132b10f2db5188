# ruff: noqa: E402, E501, E741, F841, B007, B008
"""Seed 0, issue 60: per replicate, the moments prediction (raw, bias-corrected, its
model-world SE and jackknife pseudo-values) and the law's (point, jackknife SE, band).

    WINDOW=5 NU0=9 BC=30 python benchmarks/beyond_b_seed0/replicates.py 0 200 REGIMES

Writes dev2-seed0.json beside it, read by choose_limit.py and choose_se.py.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
import json
import os
import sys
import time

sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from concurrent.futures import ProcessPoolExecutor

import numpy as np

os.environ.setdefault("WINDOW", "5")
os.environ.setdefault("NU0", "9")
os.environ.setdefault("BC", "30")
import candidates as dev
from synthetic_regimes import REGIMES

T = (50, 100, 200)


def law(copies, seed):
    from ensstab_dask.indices import pair_means_without_each
    from ensstab_dask.models.anchored import Anchored
    from ensstab_dask.models.measured import copy_similarities, curve_covariance, pair_means

    A = Anchored()
    G, B, _ = copies.shape
    sim = copy_similarities(copies, 20, range(1, B + 1), draws=16, seed=seed)
    curve, cov = pair_means(sim), curve_covariance(sim)
    c = A._fit_c(curve, cov, B)
    W = A._weights(B, list(T), cov, c)
    pts = W @ curve
    loo = pair_means_without_each(sim).T
    cs = np.atleast_1d(A._fit_c(loo, cov, B))
    reps = np.array([A._weights(B, list(T), cov, float(cs[g])) @ loo[g] for g in range(G)])
    se = np.sqrt((G - 1) / G * ((reps - reps.mean(0)) ** 2).sum(0))
    band = A._band(B, list(T), cov, curve)
    return pts, se, reps, band, curve[B - 1]


def one(name, rep, seed):
    rng = np.random.default_rng([seed, rep])
    copies = REGIMES[name].copies(10, 20, rng)
    G, B, F = copies.shape
    x = copies.astype(float)
    xbar, s2c = x.mean(1), x.var(1, ddof=1)
    s2 = s2c.mean(0)
    r = np.random.default_rng([seed, rep, 7])
    bias = dev.model_bias(xbar, s2, B, T, r)
    raw = np.array([dev.point_of(xbar, s2, B, m, r) for m in T])
    jk = np.array(
        [[dev.point_of(xbar[np.arange(G) != g], s2c[np.arange(G) != g].mean(0), B, m, r) for m in T] for g in range(G)]
    )
    lp, lse, lreps, band, sB = law(copies, rep)
    return dict(
        raw=raw.tolist(),
        bc=(raw - bias[:, 0]).tolist(),
        pse=(bias[:, 1]).tolist(),
        jk=jk.tolist(),
        law=lp.tolist(),
        law_se=lse.tolist(),
        law_jk=lreps.tolist(),
        band=band.tolist(),
        sB=float(sB),
    )


if __name__ == "__main__":
    seed, reps, names = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
    out = {}
    with ProcessPoolExecutor(2) as pool:
        for name in names:
            t0 = time.perf_counter()
            out[name] = list(pool.map(one, [name] * reps, range(reps), [seed] * reps, chunksize=5))
            print(name, f"{time.perf_counter() - t0:.0f}s", flush=True)
            json.dump(out, open(HERE / f"dev2-seed{seed}.json", "w"))
