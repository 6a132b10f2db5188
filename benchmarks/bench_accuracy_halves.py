"""Accuracy from the halves against the paper's leave-one-out accuracy, side by side.

    ENSSTAB_DATA_DIR=/work/shared/data python benchmarks/bench_accuracy_halves.py [--data colon] \
        [--n-target 20] [--seed 1] [--halves-m 1,5,10,20] [--loo-m 1,5,20] \
        [--json benchmarks/results/accuracy-halves-colon-seed1.json]

On one reference dataset with the default selector (the 300-tree random forest), one
local Dask cluster for everything:

* the halves: ``es.estimate(X, y, n_target, predictor="rf", seed=SEED)``, its
  ``accuracy`` (balanced accuracy of each real ensemble copy's features, trained on the
  copy's half, tested on the other half; SE from the spread over the copies) at
  ``--halves-m``;
* leave-one-out: ``es.prediction_accuracy(X, y, n_target, m_ensemble=m, seed=SEED)`` at
  each of ``--loo-m`` (plain accuracy, binomial SE; its balanced accuracy, from the same
  predictions, is printed beside it, with the SE of a mean of per-class binomials);

and at each size both have, the difference halves - LOO and
``z = diff / sqrt(se_halves^2 + se_loo^2)``. Seconds of each call are recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np


def balanced(y, preds) -> tuple[float, float]:
    """Balanced accuracy of ``preds`` and its SE: the mean of the per-class recalls, each
    a binomial proportion over its class's samples, which are independent folds."""
    recalls, variances = [], []
    for label in np.unique(y):
        hit = preds[y == label] == label
        p = float(hit.mean())
        recalls.append(p)
        variances.append(p * (1 - p) / hit.size)
    k = len(recalls)
    return float(np.mean(recalls)), float(np.sqrt(np.sum(variances)) / k)


def save(result: dict, path: str) -> None:
    with open(path, "w") as f:
        json.dump(result, f, indent=1)


def finish(result: dict, out_path: str) -> None:
    """The side-by-side rows of ``result`` (at every size either side has), saved with it, and its table."""
    halves_m = [int(m) for m in result["halves"]["per_m"]]
    loo_m = [int(m) for m in result.get("loo", {})]
    rows = []
    for m in sorted(set(halves_m) | set(loo_m)):
        h, lo = result["halves"]["per_m"].get(str(m)), result.get("loo", {}).get(str(m))
        row = {"m": m, "halves": h, "loo": lo}
        if h and lo:
            for key, value, se in (
                ("vs_accuracy", lo["accuracy"], lo["se"]),
                ("vs_balanced", lo["balanced"], lo["balanced_se"]),
            ):
                diff = h["accuracy"] - value
                row[key] = {"diff": diff, "z": diff / float(np.hypot(h["se"], se))}
        rows.append(row)
    result["rows"] = rows
    save(result, out_path)

    hv = result["halves"]
    n, p = result["shape"]
    print(
        f"\n{result['data']} ({n} x {p}), n_target {result['n_target']}, seed {result['seed']}; halves: "
        f"{hv['real_runs']} real runs, {hv['copies']} copies, {hv['seconds']:.0f} s\n"
    )
    print(
        "| m | halves: balanced accuracy +- SE | LOO: accuracy +- SE (binomial) | halves - LOO | z | "
        "LOO: balanced accuracy +- SE | halves - LOO balanced | z | LOO seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|")

    def cell(d, a="accuracy", s="se"):
        return "-" if d is None else f"{d[a]:.3f} +- {d[s]:.3f}"

    for r in rows:
        va, vb, lo = r.get("vs_accuracy"), r.get("vs_balanced"), r["loo"]
        print(
            f"| {r['m']} | {cell(r['halves'])} | {cell(lo)} | "
            + (f"{va['diff']:+.3f} | {va['z']:+.1f}" if va else "- | -")
            + f" | {cell(lo, 'balanced', 'balanced_se')} | "
            + (f"{vb['diff']:+.3f} | {vb['z']:+.1f}" if vb else "- | -")
            + (f" | {lo['seconds']:.0f} s |" if lo else " | - |")
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="colon", help="a reference dataset: colon, lymphoma, prostate")
    ap.add_argument("--n-target", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--halves-m", default="1,5,10,20", help="comma-separated sizes read from est.accuracy")
    ap.add_argument("--loo-m", default="1,5,20", help="comma-separated sizes of leave-one-out runs")
    ap.add_argument("--json", help="default benchmarks/results/accuracy-halves-DATA-seedSEED.json")
    ap.add_argument(
        "--report", help="no runs: the table of this JSON (written by this script, perhaps cut short), rewritten"
    )
    args = ap.parse_args(argv)
    if args.report:
        with open(args.report) as f:
            finish(json.load(f), args.report)
        return 0
    halves_m = [int(v) for v in args.halves_m.split(",")]
    loo_m = [int(v) for v in args.loo_m.split(",")]
    out_path = args.json or str(Path(__file__).parent / "results" / f"accuracy-halves-{args.data}-seed{args.seed}.json")

    from distributed import Client

    import ensstab_dask as es
    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.real.datasets import reference_dataset

    data = reference_dataset(args.data)
    X, y = data.X, data.y
    result: dict = {"data": args.data, "shape": list(X.shape), "n_target": args.n_target, "seed": args.seed}
    result["load_average"] = [list(os.getloadavg())]
    with local_cluster() as cluster, Client(cluster) as client:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            est = es.estimate(
                X, y, args.n_target, predictor="rf", seed=args.seed, m_ensemble=halves_m, client=client, progress=False
            )
        acc = est.accuracy
        result["halves"] = {
            "seconds": time.perf_counter() - t0,
            "real_runs": int(est.real_runs),
            "copies": int(acc.attrs["copies"]),
            "metric": acc.attrs["metric"],
            "per_m": {
                str(int(m)): {"accuracy": float(a), "se": float(s)}
                for m, a, s in zip(acc["m_measured"].values, acc["accuracy"].values, acc["accuracy_se"].values)
                if int(m) in halves_m
            },
        }
        print(f"halves: {result['halves']['seconds']:.0f} s", flush=True)
        save(result, out_path)  # kept as it goes: leave-one-out at m = 20 is the long part
        result["loo"] = {}
        for m in loo_m:
            t0 = time.perf_counter()
            loo = es.prediction_accuracy(X, y, args.n_target, m_ensemble=m, seed=args.seed, client=client)
            b, b_se = balanced(np.asarray(y), np.asarray(loo.predictions))
            result["loo"][str(m)] = {
                "accuracy": loo.accuracy,
                "se": loo.std_error,
                "balanced": b,
                "balanced_se": b_se,
                "seconds": time.perf_counter() - t0,
            }
            print(f"LOO m = {m}: {result['loo'][str(m)]['seconds']:.0f} s", flush=True)
            save(result, out_path)

    result["load_average"].append(list(os.getloadavg()))
    finish(result, out_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
