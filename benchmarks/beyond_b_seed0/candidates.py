# ruff: noqa: E402, E501, E741, F841, B007, B008
"""Seed 0, issue 60: candidate forms of the moments prediction on the harness's copies.

    python benchmarks/beyond_b_seed0/candidates.py SEED REPLICATES REGIMES [WORKERS]

Environment: MODES (comma-separated centres: all, lpo, split, half), WINDOW and NU0 (the
pooling of the between-copy variance: features either side, prior degrees of freedom),
BC (model-world draws: with it, the raw, bias-corrected and SIMEX points). Per regime and
size: bias over the points' spread, SD / SE and coverage for the SEs tried, EPS. The
figures it printed are in benchmarks/results/beyond-b.md.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"

import json
import sys
import time

sys.path.insert(0, str(HERE.parent))
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy import stats
from synthetic_regimes import N_TARGET, REGIMES

TARGETS = (20, 50, 100, 200, 500)
import os

MODES = os.environ.get("MODES", "lpo,split").split(",")


def topk_sets(P, k, rng):
    # P (n, F) lower better -> 0/1 (n, F)
    jitter = rng.random(P.shape) * 1e-9
    idx = np.argpartition(P + jitter, k - 1, axis=1)[:, :k]
    z = np.zeros(P.shape)
    z[np.arange(len(P))[:, None], idx] = 1.0
    return z


def jac(za, zb, k):
    inter = (za * zb).sum(axis=1)
    return inter / (2 * k - inter)


def eiv_kernel(xbar, s2, B, m, rng, mode):
    """(G,G) kernel matrix of pseudo-copy Jaccards."""
    G, F = xbar.shape
    V = xbar.var(axis=0, ddof=1)
    W = int(os.environ.get("WINDOW", "0"))
    if W:  # V pooled over the W features either side in the order of the mean rank (partial: NU0)
        order = np.argsort(xbar.mean(axis=0), kind="stable")
        Vs = V[order]
        csum = np.concatenate([[0.0], np.cumsum(Vs)])
        i = np.arange(F)
        lo, hi = np.clip(i - W, 0, F), np.clip(i + W + 1, 0, F)
        local = np.empty(F)
        local[order] = (csum[hi] - csum[lo]) / (hi - lo)
        nu0 = float(os.environ.get("NU0", "inf"))
        V = local if not np.isfinite(nu0) else ((G - 1) * V + nu0 * local) / (G - 1 + nu0)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam2 = np.where(V > 0, 1.0 - s2 / (B * V) * (1.0 - B / m), 0.0)
    lam = np.sqrt(np.clip(lam2, 0.0, None))
    K = np.full((G, G), np.nan)
    ci, di = np.triu_indices(G, 1)
    if mode == "all":
        mu = xbar.mean(axis=0)
        z = topk_sets(mu + lam * (xbar - mu), N_TARGET, rng)
        J = jac(z[ci], z[di], N_TARGET)
    elif mode == "split":  # each of the pair centred on its own half of the other copies: independent
        V0 = V
        za_l, zb_l = [], []
        for c, d in zip(ci, di):
            rest = np.array([g for g in range(G) if g != c and g != d])
            A, Bs = rest[: len(rest) // 2], rest[len(rest) // 2 :]
            outs = []
            for own, half in ((c, A), (d, Bs)):
                n = len(half)
                t = np.clip(lam2, 0.0, None)
                # lambda^2 + (1 - lambda)^2 / n = t, the larger root; below its minimum, the minimum
                a, b, cc = 1 + 1 / n, -2 / n, 1 / n - t
                disc = b * b - 4 * a * cc
                l = np.where(disc >= 0, (-b + np.sqrt(np.clip(disc, 0, None))) / (2 * a), 1 / (n + 1))
                mu = xbar[half].mean(axis=0)
                outs.append(mu + l * (xbar[own] - mu))
            za_l.append(outs[0])
            zb_l.append(outs[1])
        za = topk_sets(np.array(za_l), N_TARGET, rng)
        zb = topk_sets(np.array(zb_l), N_TARGET, rng)
        J = jac(za, zb, N_TARGET)
    elif mode == "half":
        Ks = []
        for part in (0, 1):
            za_l, zb_l = [], []
            for c, d in zip(ci, di):
                rest = np.array([g for g in range(G) if g != c and g != d])
                half = rest[: len(rest) // 2] if part == 0 else rest[len(rest) // 2 :]
                mu = xbar[half].mean(axis=0)
                za_l.append(mu + lam * (xbar[c] - mu))
                zb_l.append(mu + lam * (xbar[d] - mu))
            Ks.append(jac(topk_sets(np.array(za_l), N_TARGET, rng), topk_sets(np.array(zb_l), N_TARGET, rng), N_TARGET))
        J = (Ks[0] + Ks[1]) / 2
    else:  # leave-pair-out centre
        tot = xbar.sum(axis=0)
        mu = (tot - xbar[ci] - xbar[di]) / (G - 2)
        za = topk_sets(mu + lam * (xbar[ci] - mu), N_TARGET, rng)
        zb = topk_sets(mu + lam * (xbar[di] - mu), N_TARGET, rng)
        J = jac(za, zb, N_TARGET)
    K[ci, di] = J
    K[di, ci] = J
    return K


def point_of(xbar, s2, B, m, rng):
    K = eiv_kernel(xbar, s2, B, m, rng, "lpo")
    return np.nanmean(K)


def model_bias(xbar, s2, B, ms, rng, R=int(os.environ.get("BC", "0")), truth_copies=60, zeta=0.0):
    """Parametric bootstrap of the estimator's bias under a Gaussian model fitted to the copies."""
    G, F = xbar.shape
    mu = xbar.mean(axis=0)
    if zeta:
        mu = mu + np.sqrt(zeta * xbar.var(axis=0, ddof=1) / G) * rng.standard_normal(F)
    V = xbar.var(axis=0, ddof=1)
    W = int(os.environ.get("WINDOW", "0")) or 5
    order = np.argsort(mu, kind="stable")
    Vs = V[order]
    csum = np.concatenate([[0.0], np.cumsum(Vs)])
    i = np.arange(F)
    lo, hi = np.clip(i - W, 0, F), np.clip(i + W + 1, 0, F)
    local = np.empty(F)
    local[order] = (csum[hi] - csum[lo]) / (hi - lo)
    VL = np.clip(local - s2 / B, 0.0, None)
    out = []
    for m in ms:
        sd = np.sqrt(VL + s2 / m)
        z = topk_sets(-(mu + sd * rng.standard_normal((truth_copies, F))) * -1, N_TARGET, rng)
        Kt = z @ z.T
        Jt = Kt / (2 * N_TARGET - Kt)
        truth = Jt[~np.eye(truth_copies, dtype=bool)].mean()
        est = []
        for r in range(R):
            xs = mu + np.sqrt(VL) * rng.standard_normal((G, F)) + np.sqrt(s2 / B) * rng.standard_normal((G, F))
            est.append(point_of(xs, s2, B, m, rng))
        out.append((np.mean(est) - truth, np.std(est, ddof=1)))
    return np.array(out)


def u_se(K):
    from ensstab_dask.indices import u_statistic_se

    return u_statistic_se(np.nan_to_num(K))


def one(name, rep, seed):
    rng = np.random.default_rng([seed, rep])
    regime = REGIMES[name]
    copies = regime.copies(10, 20, rng)
    G, B, F = copies.shape
    x = copies.astype(float)
    xbar, s2c = x.mean(axis=1), x.var(axis=1, ddof=1)
    s2 = s2c.mean(axis=0)
    r = np.random.default_rng([seed, rep, 7])
    out = {}
    off = ~np.eye(G, dtype=bool)
    if int(os.environ.get("BC", "0")):
        bias = model_bias(xbar, s2, B, TARGETS, r)
        bias1 = model_bias(xbar, s2, B, TARGETS, r, zeta=1.0)
        R = int(os.environ["BC"])
        for m, (b_, s0), (b1, s1) in zip(TARGETS, bias, bias1):
            pt = point_of(xbar, s2, B, m, r)
            out[f"simex_{m}"] = (float(pt - 2 * b_ + b1), float(np.sqrt(s0**2 + (4 * s0**2 + s1**2) / R)), 0.01, 0.0)
            out[f"bc_{m}"] = (float(pt - b_), float(s0 * np.sqrt(1 + 1 / R)), 0.01, 0.0)
            out[f"raw_{m}"] = (float(pt), s0, 0.01, 0.0)
        return out
    for mode in MODES:
        for m in TARGETS:
            K = eiv_kernel(xbar, s2, B, m, r, mode)
            pt = K[off].mean()
            jk = []
            for g in range(G):
                keep = np.arange(G) != g
                Kg = eiv_kernel(xbar[keep], s2c[keep].mean(axis=0), B, m, r, mode)
                jk.append(Kg[~np.eye(G - 1, dtype=bool)].mean())
            jk = np.array(jk)
            Kz = np.nan_to_num(K)
            rs = Kz.sum(axis=1)
            tot = Kz.sum()
            jkK = (tot - 2 * rs) / ((G - 1) * (G - 2))
            sjk = float(np.sqrt((G - 1) / G * ((jk - jk.mean()) ** 2).sum()))
            sjkK = float(np.sqrt((G - 1) / G * ((jkK - jkK.mean()) ** 2).sum()))
            out[f"{mode}_{m}"] = (float(pt), sjk, float(u_se(K)), sjkK, jk.tolist())
    return out


if __name__ == "__main__":
    seed = int(sys.argv[1])
    reps = int(sys.argv[2])
    names = sys.argv[3].split(",")
    truth = json.load(open(RESULTS / f"beyond-b-truth-seed{seed}.json"))
    res = {}
    with ProcessPoolExecutor(int(sys.argv[4]) if len(sys.argv) > 4 else 1) as pool:
        for name in names:
            t0 = time.perf_counter()
            outs = list(pool.map(one, [name] * reps, range(reps), [seed] * reps, chunksize=10))
            tv = dict(zip(truth["regimes"][name]["sizes"], truth["regimes"][name]["value"]))
            nv = dict(zip(truth["regimes"][name]["sizes"], truth["regimes"][name]["naive_var"]))
            print(f"## {name} ({time.perf_counter() - t0:.0f}s) truth", {m: round(tv[m], 4) for m in TARGETS})
            tq = stats.t.ppf(0.975, 9)
            for key in outs[0]:
                m = int(key.split("_")[1])
                a = np.array([o[key][:4] for o in outs])
                sd = a[:, 0].std(ddof=1)
                bias = a[:, 0].mean() - tv[m]
                cov_j = np.mean(np.abs(a[:, 0] - tv[m]) <= tq * a[:, 1])
                cov_u = np.mean(np.abs(a[:, 0] - tv[m]) <= tq * a[:, 2])
                comb = np.sqrt(a[:, 2] ** 2 + np.clip(a[:, 1] ** 2 - a[:, 3] ** 2, 0, None))
                cov_c = np.mean(np.abs(a[:, 0] - tv[m]) <= tq * comb)
                eps = 20 * m * nv[m] / (200 * sd**2)
                print(f"{key:9s} EPS {eps:5.1f} sd/comb {sd / comb.mean():.2f} cov_c {cov_c:.2f}", end=" ")
                print(
                    f" bias {bias:+.4f} bias/sd {bias / sd:+.2f} sd {sd:.4f} sd/jk {sd / a[:, 1].mean():.2f} sd/u {sd / a[:, 2].mean():.2f} cov_jk {cov_j:.2f} cov_u {cov_u:.2f}"
                )
            res[name] = outs
    json.dump(res, open(HERE / f"dev-seed{seed}.json", "w"))
