"""Does the naive check's standard error hold on real data? Many real ensemble copies
drawn once, and what a check of G of them would report against how it would spread.

A naive check's stability is a U-statistic of degree 2 over its G copies (the mean
pairwise similarity), and its SE the square root of the unbiased U-statistic variance
(``indices.u_statistic_variance``). Given the data, copies are independent and alike
(each draws its own half and its own weak selectors), so the spread of a G-copy check
over seeds is exactly

    Var(U_G) = [4 (G - 2) zeta_1 + 2 zeta_2] / (G (G - 1)),

and zeta_1, zeta_2 are estimated without bias from all N copies drawn here (N >> G).
Against that spread this script sets what a G-copy check reports: the mean of its SE
over many random G-subsets of the N copies. Their ratio, sd / SE, is what twenty seeds
of naive checks would show, without twenty seeds of runs; its interval is a bootstrap
over the N copies. As a direct check beside it, the N copies split into disjoint
G-copy checks give an sd / SE from independent checks (few, so loose).

    ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_naive_se.py --dataset colon \\
        --copies 100 --json benchmarks/results/naive-se-colon.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from ensstab_dask.indices import stability_se
from ensstab_dask.indices.measures import similarity_of_intersections


def kernel(chosen: np.ndarray, n_feature: int, index: str) -> np.ndarray:
    """The pairwise similarity of every two copies' selected features (N x N)."""
    z = np.zeros((len(chosen), n_feature), dtype=bool)
    z[np.arange(len(chosen))[:, None], chosen] = True
    return similarity_of_intersections(z[:, chosen].sum(axis=2), n_feature, index)


def zetas(h: np.ndarray) -> tuple[float, float]:
    """zeta_1 and zeta_2 of the kernel ``h``, unbiased (as ``indices.u_statistic_variance``)."""
    h = np.array(h, dtype=float)
    U = len(h)
    np.fill_diagonal(h, 0.0)
    row, sq_row = h.sum(axis=1), (h * h).sum(axis=1)
    total, sq = row.sum(), sq_row.sum()
    triples = (row * row - sq_row).sum()
    quads = total * total - 2.0 * sq - 4.0 * triples
    mean_quad = quads / (U * (U - 1) * (U - 2) * (U - 3))
    return triples / (U * (U - 1) * (U - 2)) - mean_quad, sq / (U * (U - 1)) - mean_quad


def spread(h: np.ndarray, G: int) -> float:
    """The SD of a G-copy check's stability, from the zetas of all the copies."""
    z1, z2 = zetas(h)
    return float(np.sqrt(max(4.0 * (G - 2) * z1 + 2.0 * z2, 0.0) / (G * (G - 1))))


def measure(chosen: np.ndarray, n_feature: int, index: str, G: int, rng, *, draws: int, boot: int) -> dict:
    """sd / SE of a G-copy check of these copies (N x n_target features each)."""
    N = len(chosen)
    h = kernel(chosen, n_feature, index)
    sd = spread(h, G)
    reported = np.array([stability_se(chosen[rng.choice(N, G, replace=False)], n_feature, index) for _ in range(draws)])
    ratios = []
    for _ in range(boot):  # the copies resampled: how well N copies know the ratio
        # A copy drawn twice would pair with itself: each is kept once, so a replicate holds
        # about 63 % of the copies and the interval is, if anything, too wide.
        pick = np.unique(rng.choice(N, N, replace=True))
        sub = h[np.ix_(pick, pick)]
        sub_se = [stability_se(chosen[rng.choice(pick, G, replace=False)], n_feature, index) for _ in range(50)]
        ratios.append(spread(sub, G) / np.mean(sub_se))
    disjoint = [chosen[i : i + G] for i in range(0, N - G + 1, G)]
    points = np.array([np.mean(kernel(c, n_feature, index)[np.triu_indices(G, 1)]) for c in disjoint])
    ses = np.array([stability_se(c, n_feature, index) for c in disjoint])
    return dict(
        G=G,
        sd=sd,
        mean_se=float(reported.mean()),
        sd_over_se=float(sd / reported.mean()),
        sd_over_se_interval=[float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))],
        sd_over_rms_se=float(sd / np.sqrt(np.mean(reported**2))),
        se_cv=float(reported.std(ddof=1) / reported.mean()),
        disjoint_checks=len(disjoint),
        disjoint_sd_over_se=float(points.std(ddof=1) / ses.mean()),
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="colon", help="a name bench_validate.py's load() takes")
    ap.add_argument("--copies", type=int, default=100, help="real ensemble copies drawn once")
    ap.add_argument("--m-ensemble", default="1,5,10,20")
    ap.add_argument("--checks", default="10,20", help="copies of the checks judged (G)")
    ap.add_argument("--draws", type=int, default=2000, help="random G-subsets whose SE is averaged")
    ap.add_argument("--boot", type=int, default=200, help="bootstrap replicates of the copies")
    ap.add_argument("--n-estimators", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    from bench_validate import DATASETS, load
    from distributed import Client

    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.real.datasets import check_data
    from ensstab_dask.real.naive import real_ensemble_stability
    from ensstab_dask.real.selectors import default_selector
    from ensstab_dask.real.targets import task_of

    data = load(args.dataset)
    n_target = DATASETS[args.dataset]
    sizes = [int(v) for v in args.m_ensemble.split(",")]
    selector = default_selector(args.n_estimators, task=task_of(check_data(data.X, data.y)[1]))
    t0 = time.perf_counter()
    with local_cluster() as cluster, Client(cluster) as client:
        ds = real_ensemble_stability(
            data.X,
            data.y,
            n_target,
            m_ensemble=sizes,
            m_stability=args.copies,
            selector=selector,
            seed=args.seed,
            client=client,
            progress=False,
        )
    runs_seconds = time.perf_counter() - t0
    rng = np.random.default_rng(args.seed)
    rows = []
    for m in sizes:
        chosen = ds["selected"].sel(m_ensemble=m).values
        for G in (int(v) for v in args.checks.split(",")):
            r = measure(chosen, data.X.shape[1], "jaccard", G, rng, draws=args.draws, boot=args.boot)
            rows.append(dict(m=m, stability=float(ds["stability"].sel(m_ensemble=m)), **r))
    print(
        f"## {args.dataset}: {args.copies} copies to m = {max(sizes)} ({int(ds.attrs['real_runs'])} real runs, "
        f"{runs_seconds:.0f} s), seed {args.seed}\n"
    )
    print(
        "| m | G | stability | sd of a G-copy check | mean SE reported | sd / SE (95 % interval) | sd / rms SE "
        "| SE's CV | disjoint checks: sd / SE |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lo, hi = r["sd_over_se_interval"]
        print(
            f"| {r['m']} | {r['G']} | {r['stability']:.3f} | {r['sd']:.4f} | {r['mean_se']:.4f} | "
            f"{r['sd_over_se']:.2f} ({lo:.2f}-{hi:.2f}) | {r['sd_over_rms_se']:.2f} | {r['se_cv']:.2f} | "
            f"{r['disjoint_sd_over_se']:.2f} (of {r['disjoint_checks']}) |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                dict(dataset=args.dataset, copies=args.copies, seed=args.seed, seconds=runs_seconds, rows=rows),
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
