"""Write ``estimate_pins.json``: one small estimate per model, every number bit for bit.

    python tests/pins/make_estimate_pins.py   # at the commit the pins are to hold

``tests/models/test_models.py`` compares the estimate of the code under test with these values,
on the synchronous scheduler and on a cluster of processes: a change that moves any of
them (a reordered random draw, a reassociated sum) is a change of results, not of speed.
Floats are compared to a relative 1e-9 (``RTOL`` there): what the processor's BLAS kernel
and its summation order can move; everything else exactly. The JSON records the commit the
pins were written from.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import ensstab_dask as es
from ensstab_dask.checks import MODELS
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.selectors import default_selector

DATA = dict(n_feature=300, n_informative=12, effect=2.0, seed=1)
SETTINGS = dict(
    m_ensemble=(1, 3, 5, 30), m_stability=8, n_runs=10, repeats=4, n_boot=20, seed=3, n_target=5, n_estimators=10
)


def fingerprint(est) -> dict:
    """The numbers an estimate reports and its bootstrap replicates (JSON floats round-trip)."""
    curve = est.curve
    out = {
        name: curve[name].values.tolist()
        for name in ("stability", "stability_std", "stability_lower", "stability_upper")
        if name in curve
    }
    p = float("nan") if est.fit is None else est.fit.p  # a model without the simulator has no p
    out.update(
        p=p,
        real_stability=est.single.real_stability,
        n_useful=est.single.n_useful,
        real_runs=est.real_runs,
        reliable=est.reliable,
    )
    check = est.self_check
    out["self_check"] = None if check is None else {k: check.to_dict()[k] for k in ("predicted", "measured", "se")}
    boot = est.prediction.bootstrap
    out["bootstrap"] = None if boot is None else boot["stability_boot"].values.tolist()
    return json.loads(json.dumps(out, allow_nan=True))


#: Layouts of the default model other than its own, pinned too: the adaptive one on the
#: pins' sizes (up to 30, beyond its first round's 10 members, so that its rule decides).
LAYOUTS = {"anchored-adaptive": dict(model="anchored", layout="adaptive")}


def pinned_estimate(model: str, client="synchronous", **more):
    s = dict(SETTINGS, **more)
    data = make_microarray(**DATA)
    n_target, n_estimators = s.pop("n_target"), s.pop("n_estimators")
    return es.estimate(
        data.X,
        data.y,
        n_target,
        selector=default_selector(n_estimators),
        model=model,
        client=client,
        progress=False,
        **s,
    )


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    pins = {
        "commit": commit,
        "data": DATA,
        "settings": SETTINGS,
        "models": {m: fingerprint(pinned_estimate(m)) for m in MODELS},
        "layouts": {name: fingerprint(pinned_estimate(**given)) for name, given in LAYOUTS.items()},
    }
    path = Path(__file__).with_name("estimate_pins.json")
    path.write_text(json.dumps(pins, indent=1) + "\n")
    print(f"wrote {path}")
