"""Do the naive check's and the estimate's standard errors hold on real data? Many real
ensemble copies drawn once, and what a check of G of them would report against how it
would spread.

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

The default model's measured points (m <= B) are the same kind of U-statistic over its
copies, with another kernel: the mean similarity of two copies' ensembles over the
member arcs (``models.measured.copy_similarities``), and the same SE; both kernels are
made here from the same runs, so both checks are judged on them.

    ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_naive_se.py --dataset colon \\
        --copies 100 --json benchmarks/results/naive-se-colon.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from ensstab_dask.indices import subset_similarities, u_statistic_se, u_statistic_zetas


def spread(h: np.ndarray, G: int) -> float:
    """The SD of a G-copy check's stability, from the zetas of all the copies."""
    z1, z2 = u_statistic_zetas(h)
    return float(np.sqrt(max(4.0 * (G - 2) * z1 + 2.0 * z2, 0.0) / (G * (G - 1))))


def reported(h: np.ndarray, units: np.ndarray, G: int, rng, draws: int) -> np.ndarray:
    """The SE a G-copy check of random ``units`` reports: the U-statistic SE of its kernel,
    as the naive check and the estimate's measured points compute it."""
    picks = (rng.choice(units, G, replace=False) for _ in range(draws))
    return np.array([u_statistic_se(h[np.ix_(p, p)]) for p in picks])


def measure(h: np.ndarray, G: int, rng, *, draws: int, boot: int) -> dict:
    """sd / SE of a G-copy check whose stability is the mean of kernel ``h`` over its pairs."""
    N = len(h)
    sd = spread(h, G)
    se = reported(h, np.arange(N), G, rng, draws)
    ratios = []
    for _ in range(boot):  # the copies resampled: how well N copies know the ratio
        # A copy drawn twice would pair with itself: each is kept once, so a replicate holds
        # about 63 % of the copies. Against random halves (which spread about the whole as a
        # statistic of N copies spreads about the truth) these intervals came out 1.0-1.1
        # times as wide on Colon, Lymphoma, Prostate and the default: if anything too wide.
        pick = np.unique(rng.choice(N, N, replace=True))
        ratios.append(spread(h[np.ix_(pick, pick)], G) / reported(h, pick, G, rng, 50).mean())
    disjoint = [np.arange(i, i + G) for i in range(0, N - G + 1, G)]
    points = np.array([h[np.ix_(d, d)][np.triu_indices(G, 1)].mean() for d in disjoint])
    ses = np.array([u_statistic_se(h[np.ix_(d, d)]) for d in disjoint])
    return dict(
        G=G,
        stability=float(h[np.triu_indices(N, 1)].mean()),
        sd=sd,
        mean_se=float(se.mean()),
        sd_over_se=float(sd / se.mean()),
        sd_over_se_interval=[float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))],
        sd_over_rms_se=float(sd / np.sqrt(np.mean(se**2))),
        se_cv=float(se.std(ddof=1) / se.mean()),
        disjoint_checks=len(disjoint),
        disjoint_sd_over_se=float(points.std(ddof=1) / ses.mean()),
    )


def kernels(ranks: np.ndarray, sizes, n_target: int, n_feature: int, seed: int) -> dict[str, np.ndarray]:
    """Per check and size, the kernel over every pair of copies: the naive check's (each
    copy's ensemble of its first m members, as ``real.naive`` makes it) and the estimate's
    measured points' (the member arcs' mean similarity, as the default model makes it)."""
    from ensstab_dask.models.anchored import MEMBER_ORDERS
    from ensstab_dask.models.measured import copy_similarities
    from ensstab_dask.real.naive import naive_ensembles
    from ensstab_dask.seeding import as_seed_sequence

    ss = as_seed_sequence(seed)
    naive = [subset_similarities(naive_ensembles(ranks, m, n_target, ss), n_feature, "jaccard") for m in sizes]
    arcs = copy_similarities(ranks, n_target, sizes, draws=MEMBER_ORDERS, seed=seed)
    return {"naive check": np.stack(naive), "estimate's measured points": arcs}


def by_member(ranks: np.ndarray, n_target: int, n_feature: int, seed: int) -> dict:
    """Is a copy's first weak selector like its others? At m = 1 the naive check pairs each
    copy's first member with the other copies' first members; the estimate's point pairs
    every member with every member of the other copies. Given exchangeable members the two
    have one expectation. Here, over all the copies: the mean similarity across copies of
    their first members, of members of one index, and of every pair. Each is a mean over
    pairs of copies of a kernel between two copies, so each difference is a U-statistic
    over the copies (the independent units) with the difference of the kernels, and its
    SE the U-statistic SE the checks report (``indices.u_statistic_se``)."""
    from ensstab_dask.real.naive import naive_ensembles
    from ensstab_dask.seeding import as_seed_sequence

    N, B, _ = ranks.shape
    ss = as_seed_sequence(seed)
    sets = np.concatenate([naive_ensembles(ranks[:, k : k + 1], 1, n_target, ss) for k in range(B)])
    S = subset_similarities(sets, n_feature, "jaccard").reshape(B, N, B, N)  # (member, copy, member, copy)
    first = S[0, :, 0, :]
    same = np.einsum("aiaj->ij", S) / B
    every = S.mean(axis=(0, 2))
    pairs = np.triu_indices(N, 1)
    return dict(
        first_members=float(first[pairs].mean()),
        same_index=float(same[pairs].mean()),
        every_pair=float(every[pairs].mean()),
        first_minus_every=float((first - every)[pairs].mean()),
        first_minus_every_se=u_statistic_se(first - every),
        same_minus_every=float((same - every)[pairs].mean()),
        same_minus_every_se=u_statistic_se(same - every),
        per_member=[float(S[k, :, k, :][pairs].mean()) for k in range(B)],
    )


def first_member_line(m1: dict, copies: int) -> str:
    """:func:`by_member`'s figures, in one line."""
    return (
        f"m = 1 by member, over the {copies} copies: first members {m1['first_members']:.4f}, members of one "
        f"index {m1['same_index']:.4f}, every pair {m1['every_pair']:.4f}; first - every "
        f"{m1['first_minus_every']:+.4f} (SE {m1['first_minus_every_se']:.4f}), one index - every "
        f"{m1['same_minus_every']:+.4f} (SE {m1['same_minus_every_se']:.4f}); each index alone: "
        f"{min(m1['per_member']):.4f} to {max(m1['per_member']):.4f}"
    )


def load_ranks(path: str) -> np.ndarray:
    """Copies' ranks (copies, members, n_feature) saved by ``--save-ranks`` (.npz) or held in
    an estimate's run cache (.nc, ``real.run_cache``)."""
    if path.endswith(".npz"):
        return np.load(path)["ranks"]
    import xarray as xr

    with xr.open_dataset(path) as ds:
        return ds["ranks"].values


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="colon", help="a name bench_validate.py's load() takes")
    ap.add_argument("--copies", type=int, default=100, help="real ensemble copies drawn once")
    ap.add_argument("--m-ensemble", default="1,5,10,20")
    ap.add_argument("--checks", default="10,20", help="copies of the checks judged (G); empty: the m = 1 line only")
    ap.add_argument("--draws", type=int, default=2000, help="random G-subsets whose SE is averaged")
    ap.add_argument("--boot", type=int, default=200, help="bootstrap replicates of the copies")
    ap.add_argument("--n-estimators", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", default=None)
    ap.add_argument("--save-ranks", default=None, help="write the copies' ranks here (.npz)")
    ap.add_argument(
        "--ranks-from",
        default=None,
        help="no runs: the copies' ranks from here (.npz of --save-ranks; a run cache's .nc)",
    )
    args = ap.parse_args(argv)

    from bench_validate import DATASETS, load
    from distributed import Client

    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.real.datasets import check_data
    from ensstab_dask.real.naive import real_ensemble_runs
    from ensstab_dask.real.runs import Copies
    from ensstab_dask.real.selectors import default_selector
    from ensstab_dask.real.targets import task_of
    from ensstab_dask.seeding import as_seed_sequence

    data = load(args.dataset)
    n_target = DATASETS[args.dataset]
    sizes = [int(v) for v in args.m_ensemble.split(",")]
    X, y = check_data(data.X, data.y)
    if args.ranks_from:
        ranks, runs_seconds = load_ranks(args.ranks_from), None
        args.copies = len(ranks)
    else:
        selector = default_selector(args.n_estimators, task=task_of(y))
        t0 = time.perf_counter()
        with local_cluster() as cluster, Client(cluster) as client:
            copies = Copies(args.copies, max(sizes), as_seed_sequence(args.seed), "bagging")
            ranks = real_ensemble_runs(X, y, copies, selector=selector, client=client, progress=False)
        runs_seconds = time.perf_counter() - t0
    rng = np.random.default_rng(args.seed)
    rows = []
    for check, h in kernels(ranks, sizes, n_target, X.shape[1], args.seed).items():
        for m, h_m in zip(sizes, h):
            for G in (int(v) for v in args.checks.split(",") if v):
                rows.append(dict(check=check, m=m, **measure(h_m, G, rng, draws=args.draws, boot=args.boot)))
    print(
        f"## {args.dataset}: {args.copies} copies to m = {max(sizes)} ({args.copies * max(sizes)} real runs, "
        + (f"{runs_seconds:.0f} s)" if runs_seconds is not None else f"read from {args.ranks_from})")
        + f", seed {args.seed}\n"
    )
    print(
        "| check | m | G | stability | sd of a G-copy check | mean SE reported | sd / SE (95 % interval) "
        "| sd / rms SE | SE's CV | disjoint checks: sd / SE |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lo, hi = r["sd_over_se_interval"]
        print(
            f"| {r['check']} | {r['m']} | {r['G']} | {r['stability']:.3f} | {r['sd']:.4f} | {r['mean_se']:.4f} | "
            f"{r['sd_over_se']:.2f} ({lo:.2f}-{hi:.2f}) | {r['sd_over_rms_se']:.2f} | {r['se_cv']:.2f} | "
            f"{r['disjoint_sd_over_se']:.2f} (of {r['disjoint_checks']}) |"
        )
    m1 = by_member(ranks, n_target, X.shape[1], args.seed)
    print("\n" + first_member_line(m1, args.copies))
    if args.save_ranks:
        np.savez_compressed(args.save_ranks, ranks=ranks)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                dict(dataset=args.dataset, copies=args.copies, seed=args.seed, seconds=runs_seconds, rows=rows, m1=m1),
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
