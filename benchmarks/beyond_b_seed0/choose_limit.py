# ruff: noqa: E402, E501, E741, F841, B007, B008
"""Seed 0, issue 60: the disagreement limit (DISAGREE_Z) from replicates.py's file.

python benchmarks/beyond_b_seed0/choose_limit.py 1,1.5,2,2.5
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
import json
import sys

import numpy as np
from scipy import stats

d = json.load(open(HERE / "dev2-seed0.json"))
truth = json.load(open(RESULTS / "beyond-b-truth-seed0.json"))["regimes"]
T = (50, 100, 200)
t9 = stats.t.ppf(0.975, 9)
zq = 1.959964
R = 30
for Z in [float(z) for z in sys.argv[1].split(",")]:
    print(f"### Z = {Z}")
    allright, allwrong = [], []
    for name, reps in d.items():
        if name not in truth:
            continue
        tv = dict(zip(truth[name]["sizes"], truth[name]["value"]))
        bc = np.array([r["bc"] for r in reps])
        se = np.array([r["pse"] for r in reps]) * np.sqrt(1 + 1 / R)
        law = np.array([r["law"] for r in reps])
        lse = np.array([r["law_se"] for r in reps])
        band = np.array([r["band"] for r in reps])
        lspread = np.hypot(lse, band / 2)
        lhalf = np.hypot(t9 * lse, zq * band / 2)
        und = np.abs(bc - law) > Z * np.hypot(se, lspread)
        lo = np.where(und, np.minimum(bc - t9 * se, law - lhalf), bc - t9 * se)
        hi = np.where(und, np.maximum(bc + t9 * se, law + lhalf), bc + t9 * se)
        line = []
        for j, m in enumerate(T):
            t = tv[m]
            sd = bc[:, j].std(ddof=1)
            lsd = law[:, j].std(ddof=1)
            cov = np.mean((lo[:, j] <= t) & (t <= hi[:, j]))
            off = np.abs(bc[:, j] - t) > 2 * sd
            both = ~off & (np.abs(law[:, j] - t) <= 2 * lsd)
            allright.append(und[both, j])
            allwrong.append(und[off, j])
            line.append(
                f"m={m}: bias/sd {(bc[:, j].mean() - t) / sd:+.2f} law {(law[:, j].mean() - t) / lsd:+.2f} und {und[:, j].mean():.0%} cov {cov:.1%} sd/se {sd / se[:, j].mean():.2f}"
            )
        print(f"{name:13s}", " | ".join(line))
    r, w = np.concatenate(allright), np.concatenate(allwrong)
    print(
        f"flag where both right {r.mean():.1%} of {r.size}; where moments off > 2 SD {w.mean() if w.size else float('nan'):.1%} of {w.size}"
    )
