"""How the anchored model's design (B weak selectors per copy, G = 10 copies) was chosen, on seed 0.

    ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_anchored_design.py [--b 10,14,20] [--splits 6]

Remakes the seed-0 naive check's real ensemble copies of each dataset (the same streams
as ``bench_validate.py --seeds 0``: 20 copies of 50 weak selectors, RF-300, 1,000 real
runs per dataset, about 4 to 7 minutes each on 2 cores), then, for each ``B`` and each
of ``--splits`` random splits of the 20 copies into two tens: the anchored model on ``B``
random weak selectors of 10 copies, scored against the naive stability of the other 10
copies (all 50 weak selectors) with the combined z, and its self-check. Prints, per
dataset and ``B``: the mean z per m_ensemble (1, 5, 10, 20, 30, 50) over the splits, and
how many self-checks failed. Only seed 0 is used: seed 1 stays out of sample.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_validate import DATASETS, M_LIST, load

K_SPLIT = 10


def score(ranks: np.ndarray, n_target: int, B: int, splits: int) -> tuple[np.ndarray, int]:
    from ensstab_dask.models import REGISTRY
    from ensstab_dask.models.measured import copy_similarities, extrapolation_weights, fit_sizes, weighted

    model = REGISTRY["anchored"]
    zs, fails = [], 0
    for rep in range(splits):
        rng = np.random.default_rng(rep)
        perm = rng.permutation(len(ranks))
        mine, other = ranks[perm[:K_SPLIT]][:, rng.permutation(ranks.shape[1])[:B]], ranks[perm[K_SPLIT:]]
        sim = copy_similarities(mine, n_target, range(1, B + 1), seed=rep)
        pred = np.array([weighted(sim, w) for w in model._weights(B, M_LIST)])
        truth_sim = copy_similarities(other, n_target, M_LIST, draws=1, seed=rep)
        truth = np.array([weighted(truth_sim, np.eye(len(M_LIST))[i]) for i in range(len(M_LIST))])
        zs.append((pred[:, 0] - truth[:, 0]) / np.hypot(pred[:, 1], truth[:, 1]))
        w = np.zeros(B)
        fit = fit_sizes(B // 2)
        w[np.array(fit) - 1] = extrapolation_weights(fit, [B])[0]
        w[B - 1] -= 1.0
        d, se = weighted(sim, w)
        fails += abs(d / se) > 2
    return np.mean(zs, axis=0), fails


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--b", default="10,14,20", help="weak selectors per copy to compare")
    ap.add_argument("--splits", type=int, default=6)
    args = ap.parse_args(argv)

    from distributed import Client

    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.real.naive import real_ensemble_runs
    from ensstab_dask.real.runs import Copies
    from ensstab_dask.real.selectors import default_selector

    with local_cluster() as cluster, Client(cluster) as client:
        print("| dataset | B | mean z at m = " + ", ".join(map(str, M_LIST)) + " | self-check fails |")
        print("|---|---|---|---|")
        for name in args.datasets.split(","):
            data = load(name)
            copies = Copies(20, max(M_LIST), seed=0)
            ranks = real_ensemble_runs(
                data.X, data.y, copies, selector=default_selector(300), client=client, progress=False
            )
            for B in (int(b) for b in args.b.split(",")):
                z, fails = score(ranks, DATASETS[name], B, args.splits)
                print(f"| {name} | {B} | " + ", ".join(f"{v:+.2f}" for v in z) + f" | {fails} of {args.splits} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
