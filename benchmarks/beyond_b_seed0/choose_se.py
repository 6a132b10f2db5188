# ruff: noqa: E402, E501, E741, F841, B007, B008
"""Seed 0, issue 60: the moments' SE (the model world's, the jackknife's, and their mixes)
from replicates.py's file: SD / SE and coverage per regime and size.

    python benchmarks/beyond_b_seed0/choose_se.py
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
import json

import numpy as np
from scipy import stats

d = json.load(open(HERE / "dev2-seed0.json"))
truth = json.load(open(RESULTS / "beyond-b-truth-seed0.json"))["regimes"]
T = (50, 100, 200)
t9 = stats.t.ppf(0.975, 9)
R = 30
G = 10
combos = {
    "param": lambda p, j: p,
    "jk": lambda p, j: j,
    "max": lambda p, j: np.maximum(p, j),
    "mean": lambda p, j: (p + j) / 2,
    "geo": lambda p, j: np.sqrt(p * j),
    "rms": lambda p, j: np.sqrt((p**2 + j**2) / 2),
}
for cname, f in combos.items():
    out = []
    for name, reps in d.items():
        if name not in truth or name == "polygenic":
            continue
        tv = dict(zip(truth[name]["sizes"], truth[name]["value"]))
        bc = np.array([r["bc"] for r in reps])
        p = np.array([r["pse"] for r in reps]) * np.sqrt(1 + 1 / R)
        jk = np.array([r["jk"] for r in reps])  # (reps, G, T)
        j = np.sqrt((G - 1) / G * ((jk - jk.mean(axis=1, keepdims=True)) ** 2).sum(axis=1))
        se = f(p, j)
        cells = []
        for k, m in enumerate(T):
            sd = bc[:, k].std(ddof=1)
            cov = np.mean(np.abs(bc[:, k] - tv[m]) <= t9 * se[:, k])
            cells.append(f"{sd / se[:, k].mean():.2f}/{cov:.0%}")
        out.append(f"{name[:6]} " + " ".join(cells))
    print(f"{cname:6s}", " | ".join(out))
