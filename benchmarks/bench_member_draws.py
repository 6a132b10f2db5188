"""How much of the estimate's variance the member draws make, and what they cost.

The measured curve averages, per size, random ensembles of each copy's members
(:func:`ensstab_dask.models.measured.copy_similarities`: ``draws`` random circular orders of
each copy's members, every arc of each size). Their noise is amplified beyond B by the
extrapolation. On the synthetic harness's generator (benchmarks/bench_synthetic_truth.py),
for each regime: ``--sets`` independent sets of 10 copies of 20 weak selectors, each
estimated with ``--seeds`` draw seeds. The draws' variance is the mean over sets of the
variance over seeds; the total is the variance over sets of one seed's point (copies and
draws together); the share is their ratio, with its standard error by the delta method.
``--reference`` also runs the design it replaced (256 independent random subsets per size,
one at a time) on the same copies.

    python benchmarks/bench_member_draws.py --regimes flat,between,steep --sets 60 --seeds 4 \
        --draws 4,8 --reference --json benchmarks/results/member-draws-seed1.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from synthetic_regimes import N_TARGET, REGIMES, SIZES

from ensstab_dask.aggregation import copy_ensembles
from ensstab_dask.indices.measures import similarity_of_intersections
from ensstab_dask.models.anchored import Anchored
from ensstab_dask.models.measured import copy_similarities, curve_covariance, pair_means
from ensstab_dask.seeding import make_rng

MODEL = Anchored()


def independent_subsets(ranks: np.ndarray, sizes, draws: int, seed: int) -> np.ndarray:
    """The replaced design: per size, ``draws`` independent random subsets of each copy's
    members, aggregated one draw at a time."""
    G, B, n = ranks.shape
    rng = make_rng(seed)
    out = np.empty((len(sizes), G, G))
    for i, m in enumerate(sizes):
        n_draws = 1 if m == B else draws
        acc = np.zeros((G, G))
        for _ in range(n_draws):
            top = copy_ensembles(ranks, N_TARGET, m, rng)
            z = np.zeros((G, n), dtype=bool)
            z[np.arange(G)[:, None], top] = True
            acc += similarity_of_intersections(z[:, top].sum(axis=2), n, "jaccard")
        out[i] = acc / n_draws
        np.fill_diagonal(out[i], np.nan)
    return out


def points(sim: np.ndarray) -> np.ndarray:
    """The anchored model's point at the harness's sizes from a similarity tensor."""
    B = sim.shape[0]
    curve, cov = pair_means(sim), curve_covariance(sim)
    c = MODEL._fit_c(curve, cov, B)
    return MODEL._weights(B, list(SIZES), cov, c) @ curve


def run(regime: str, design: str, sets: int, seeds: int, seed: int) -> dict:
    sizes = range(1, 21)
    per_set, seconds = [], 0.0
    for k in range(sets):
        copies = REGIMES[regime].copies(10, 20, make_rng(seed, k))
        row = []
        for s in range(seeds):
            t0 = time.perf_counter()
            if design == "reference":
                sim = independent_subsets(copies, sizes, 256, seed=1000 * k + s)
            else:
                sim = copy_similarities(copies, N_TARGET, sizes, draws=int(design), seed=1000 * k + s)
            seconds += time.perf_counter() - t0
            row.append(points(sim))
        per_set.append(row)
    p = np.array(per_set)  # (sets, seeds, sizes)
    within = p.var(axis=1, ddof=1)  # (sets, sizes)
    draws_var = within.mean(axis=0)
    total = p[:, 0].var(axis=0, ddof=1)
    share = draws_var / total
    # delta method: relative SEs of the two variances added in quadrature
    rel = np.sqrt(within.var(axis=0, ddof=1) / sets / draws_var**2 + 2.0 / (sets - 1))
    return {
        "regime": regime,
        "design": design,
        "sets": sets,
        "seeds": seeds,
        "sizes": list(SIZES),
        "draws_sd": np.sqrt(draws_var).tolist(),
        "total_sd": np.sqrt(total).tolist(),
        "share": share.tolist(),
        "share_se": (share * rel).tolist(),
        "seconds_per_estimate": seconds / (sets * seeds),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--regimes", default="flat,between,steep")
    ap.add_argument("--sets", type=int, default=60)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--draws", default="4,8")
    ap.add_argument("--reference", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    designs = args.draws.split(",") + (["reference"] if args.reference else [])
    out = []
    for regime in args.regimes.split(","):
        for design in designs:
            r = run(regime, design, args.sets, args.seeds, args.seed)
            out.append(r)
            at = r["sizes"].index(200)
            print(
                f"{regime:8s} {design:>9s}: draws' share of the variance at m = 200 {100 * r['share'][at]:.1f} % "
                f"(SE {100 * r['share_se'][at]:.1f}); draws' sd {r['draws_sd'][at]:.4f} of {r['total_sd'][at]:.4f}; "
                f"{r['seconds_per_estimate']:.3f} s per curve",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
