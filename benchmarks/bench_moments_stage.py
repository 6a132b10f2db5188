"""The cost of the prediction beyond B (the features' rank moments) at 2,000, 7,129 and 20,000 features.

    python benchmarks/bench_moments_stage.py [--features 2000,7129,20000] [--repeats 3] \\
        [--stages benchmarks/results/stages-2-cores.json] [--json OUT.json]

The default's statistics after the real runs, on 10 copies of 20 weak selectors of
real-like ranks of each size (``tests/synthetic.real_like_copies``' generator: graded
signal, copy and member noise, importances clipped at 0 so that null features tie), in
this process, m_ensemble 1, 5, 10, 20, 30, 50 (the CLI's default) and 1, ..., 200:
``estimate_from_runs``'s stages (``Estimate.cost.seconds``), medians over ``--repeats``.
Beside them, the real runs' seconds of a fresh estimate at the same size on 2 cores
(``--stages``: benchmarks/bench_stages.py's JSON, 300-tree forests), and the statistics'
share of them. Results: benchmarks/results/beyond-b.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--features", default="2000,7129,20000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--stages", default=str(Path(__file__).parent / "results" / "stages-2-cores.json"))
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    from synthetic import real_like_copies

    from ensstab_dask.estimates.stages.pipeline import estimate_from_runs
    from ensstab_dask.real.runs import runs_from_copies
    from ensstab_dask.settings import EstimateSettings

    runs_seconds = {
        k: v["fresh"]["stages"]["real_runs"] for k, v in json.loads(Path(args.stages).read_text())["sizes"].items()
    }
    rows = []
    print(
        "| features | m_ensemble | measured s | moments s | all statistics s | real runs s (fresh, 2 cores) "
        "| statistics / runs |"
    )
    print("|---|---|---|---|---|---|---|")
    for n in (int(v) for v in args.features.split(",")):
        ranks = real_like_copies(10, 20, 0, n_feature=n)
        for sizes, label in (((1, 5, 10, 20, 30, 50), "1-50"), ((1, 5, 10, 20, 50, 100, 200), "1-200")):
            settings = EstimateSettings(n_feature=n, n_target=20, m_ensemble=sizes, seed=0)
            seconds = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = estimate_from_runs(
                        runs_from_copies(ranks, 20), settings, client="synchronous", copy_ranks=ranks
                    )
                seconds.append((time.perf_counter() - t0, dict(est.cost.seconds)))
            total = statistics.median(s for s, _ in seconds)
            stage = {k: statistics.median(st.get(k, 0.0) for _, st in seconds) for k in seconds[0][1]}
            runs = runs_seconds.get(str(n), float("nan"))
            row = dict(features=n, m_ensemble=label, total=total, stages=stage, real_runs=runs, share=total / runs)
            rows.append(row)
            print(
                f"| {n:,} | {label} | {stage.get('measured', 0):.2f} | {stage.get('moments', 0):.2f} | {total:.2f} | "
                f"{runs:.1f} | {total / runs:.1%} |",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
