"""Client time and memory of the feature table: 20,000 features x 200 real runs.

    python benchmarks/bench_features.py [--repeats 5] [--n-feature 20000] [--json OUT.json]

What an estimate does on the client after its real runs to give ``Estimate.features``,
``--features OUT.csv`` and the JSON's ``features``, on the default model's copies (10
copies of 20 weak selectors, 200 runs) at the default sizes (1, 5, 10, 20 measured):

(a) ``selection_frequencies``: each copy's ensemble at each size, the counts, the
    Clopper-Pearson intervals, the mean rank over the 200 runs, the bound;
(b) the table (pandas, sorted), its first 100 rows as JSON, the stable features and the
    plain answer's line;
(c) the table written as CSV (``write_feature_table``);

and, for information, (d) one more n_target of the surface: the estimate after the real
runs (``estimate_from_runs``, 200 bootstrap replicates) on the same copies.

The copies are the simulated weak selector's rankings (n_useful=200, p=0.7), which have
the shape and ties of real ones; the time does not depend on where ranks come from. Each
part is timed in every repeat and the medians reported; the peak memory of (a)-(c)
(tracemalloc, which sees NumPy's arrays) beside the copies' own size. The goal: (a)-(c)
within 5 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import ensstab_dask as es  # noqa: E402
from ensstab_dask.estimates.stages.features import (  # noqa: E402
    feature_rows,
    feature_table,
    measured_sizes,
    selection_frequencies,
    stable_features,
    write_feature_table,
)
from ensstab_dask.estimates.stages.pipeline import estimate_from_runs, runs_from_copies  # noqa: E402
from ensstab_dask.estimates.words.features import kept_features  # noqa: E402
from ensstab_dask.settings import EstimateSettings  # noqa: E402

G, B, K = 10, 20, 20
M_ENSEMBLE = (1, 5, 10, 20, 30, 50)


def _parts(ranks, names, out: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    ds = selection_frequencies(ranks, K, measured_sizes(M_ENSEMBLE, B), seed=1, names=names)
    t1 = time.perf_counter()
    feature_table(ds)
    feature_rows(ds)
    stable_features(ds)
    kept_features(SimpleNamespace(features=ds))
    t2 = time.perf_counter()
    write_feature_table(ds, out, overwrite=True)
    t3 = time.perf_counter()
    return {"frequencies": t1 - t0, "table_json_answer": t2 - t1, "csv": t3 - t2, "total": t3 - t0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n-feature", type=int, default=20000)
    ap.add_argument("--json", metavar="OUT.json", help="write the medians as JSON")
    args = ap.parse_args(argv)

    n = args.n_feature
    ranks = es.simulate_rankings(n, K, 200, 0.7, size=G * B, seed=0).reshape(G, B, n)
    names = [f"gene{i:05d}" for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "features.csv"
        _parts(ranks, names, out)  # warm-up: imports (pandas, scipy.stats)
        times = [_parts(ranks, names, out) for _ in range(args.repeats)]
        tracemalloc.start()
        _parts(ranks, names, out)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        csv_mb = out.stat().st_size / 2**20
    settings = EstimateSettings(n_feature=n, n_target=10, m_ensemble=M_ENSEMBLE)
    t = time.perf_counter()
    estimate_from_runs(runs_from_copies(ranks, 10), settings, client="synchronous", copy_ranks=ranks)
    surface_row = time.perf_counter() - t

    medians = {k: round(statistics.median(r[k] for r in times), 3) for k in times[0]}
    result = {
        "command": "python benchmarks/bench_features.py" + ("" if n == 20000 else f" --n-feature {n}"),
        "n_feature": n,
        "real_runs": G * B,
        "copies": [G, B],
        "sizes": measured_sizes(M_ENSEMBLE, B),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "repeats": args.repeats,
        "median_seconds": medians,
        "seconds": [round(r["total"], 3) for r in times],
        "within_5_s": medians["total"] <= 5.0,
        "peak_mb": round(peak / 2**20, 1),
        "copies_mb": round(ranks.nbytes / 2**20, 1),
        "csv_mb": round(csv_mb, 2),
        "surface_one_more_n_target_seconds": round(surface_row, 2),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
