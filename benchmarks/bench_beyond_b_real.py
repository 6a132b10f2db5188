"""Beyond the measured members on real data (issue 60): the default at seed 1 against pooled references.

    ENSSTAB_DATA_DIR=../shared/data python benchmarks/bench_beyond_b_real.py [--seed 1] \\
        [--datasets default,colon,lymphoma,prostate,prostate-3level,prostate-gene] [--json OUT.json]

The estimate (the default anchored model, 200 real runs, the default forest of 300 trees,
m_ensemble 1, 5, 10, 20, 30, 50, 100) of each dataset of benchmarks/bench_validate.py at
``--seed``, judged against the pooled independent naive checks that
benchmarks/bench_validate.py measured and kept (``--naive-seeds``: seeds 1 and 2 for the
five classification sets, to m = 100, in results/validation-pooled-seed1.json; seeds 0
and 1 for Prostate's regression target, to m = 50, in
results/validation-prostate-gene-seed1-pooled.json). Per size: the prediction and its
interval, the reference and its SE, the combined z, and whether the size is within 2
combined SE or flagged (the two predictions disagree there, or the estimate says it is
not reliable). Results and commands: benchmarks/results/beyond-b.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_validate import DATASETS, load  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
REFERENCES = {
    "validation-pooled-seed1.json": ("default", "colon", "lymphoma", "prostate", "prostate-3level"),
    "validation-prostate-gene-seed1-pooled.json": ("prostate-gene",),
}
M_LIST = (1, 5, 10, 20, 30, 50, 100)


def references() -> dict[str, dict[int, tuple[float, float]]]:
    """Per dataset, the pooled naive checks' stability and SE by size."""
    out = {}
    for name, sets in REFERENCES.items():
        for row in json.loads((RESULTS / name).read_text()):
            if row["data"] in sets:
                out[row["data"]] = {int(m): (c["real"], c["real_se"]) for m, c in row["per_m"].items()}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    from distributed import Client

    import ensstab_dask as es
    from ensstab_dask.cluster import local_cluster
    from ensstab_dask.real.datasets import check_data
    from ensstab_dask.real.selectors import default_selector
    from ensstab_dask.real.targets import task_of

    refs = references()
    rows = []
    with local_cluster() as cluster, Client(cluster) as client:
        for name in args.datasets.split(","):
            try:
                data = load(name)
            except ValueError as exc:
                print(f"## {name}: skipped ({exc})")
                continue
            selector = default_selector(300, task=task_of(check_data(data.X, data.y)[1]))
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = es.estimate(
                    data.X,
                    data.y,
                    DATASETS[name],
                    m_ensemble=M_LIST,
                    m_stability=20,
                    selector=selector,
                    seed=args.seed,
                    client=client,
                    progress=False,
                )
            seconds = time.perf_counter() - t0
            c = est.curve
            undecided = c["undecided"].values if "undecided" in c else np.zeros(len(M_LIST), bool)
            per_m = {}
            for i, m in enumerate(M_LIST):
                if m not in refs[name]:
                    continue
                real, real_se = refs[name][m]
                pred, se = float(c["stability"].values[i]), float(c["stability_std"].values[i])
                z = (pred - real) / np.hypot(se, real_se)
                flagged = bool(undecided[i]) or not est.reliable
                per_m[m] = dict(
                    predicted=pred,
                    lower=float(c["stability_lower"].values[i]),
                    upper=float(c["stability_upper"].values[i]),
                    se=se,
                    law=float(c["stability_law"].values[i]) if "stability_law" in c else None,
                    real=real,
                    real_se=real_se,
                    z=float(z),
                    within_2se=bool(abs(z) <= 2),
                    flagged=flagged,
                )
            rows.append(
                dict(
                    data=name,
                    seed=args.seed,
                    reliable=bool(est.reliable),
                    warnings=list(est.warnings),
                    per_m=per_m,
                    seconds=seconds,
                    stages=dict(est.cost.seconds),
                    answer=est.summary().split("\n\nThe method's quantities")[0],
                )
            )
            ok = sum(r["within_2se"] or r["flagged"] for r in per_m.values())
            print(
                f"\n## {name} (seed {args.seed}, {seconds:.0f} s; reliable: {est.reliable}): {ok} of {len(per_m)} "
                f"within 2 combined SE or flagged; stages {dict(est.cost.seconds)}"
            )
            for m, r in per_m.items():
                law = "" if r["law"] is None or not np.isfinite(r["law"]) else f" (law {r['law']:.3f})"
                print(
                    f"  m = {m}: {r['predicted']:.3f} [{r['lower']:.3f}, {r['upper']:.3f}]{law} / "
                    f"{r['real']:.3f} +- {r['real_se']:.3f} / z {r['z']:+.1f}" + (" flagged" if r["flagged"] else ""),
                    flush=True,
                )
            if args.json:
                Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
