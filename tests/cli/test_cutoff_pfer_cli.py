"""``ensstab estimate --cutoff C`` and ``--pfer V``: the stable features kept at the cutoff, with
Meinshausen and Buhlmann's PFER at it (as R's stabs) beside the finite-copies bound, or at stabs'
cutoff for the PFER, with the copies that PFER needs; the printed numbers are the functions'."""

import json
import math

import numpy as np
import pytest

from ensstab_dask.cli import main
from ensstab_dask.estimates.stages.features import (
    copies_for_pfer,
    copies_needed,
    false_stable_bound,
    mb_cutoff,
    mb_pfer,
)

N_SAMPLES, N_TARGET, N_FEATURE = 40, 5, 60
SMALL = f"--n-target {N_TARGET} --m-ensemble 1,5 --n-estimators 5 --n-boot 0 --scheduler synchronous --quiet".split()


def _study(tmp_path):
    """40 samples x 60 features, the first 6 shifted in class 1."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], N_SAMPLES // 2)
    X = rng.standard_normal((N_SAMPLES, N_FEATURE))
    X[y == 1, :6] += 2.5
    path = tmp_path / "study.npz"
    np.savez(path, X=X, y=y)
    return path


def _run(tmp_path, capsys, *options):
    out = tmp_path / "e.json"
    assert main(["estimate", "--data", str(_study(tmp_path)), *SMALL, *options, "--json", str(out)]) == 0
    return capsys.readouterr().out, json.loads(out.read_text())["stable_features"]


@pytest.mark.slow
def test_cutoff_prints_mbs_pfer_and_the_bound_at_these_copies(tmp_path, capsys):
    printed, st = _run(tmp_path, capsys, "--cutoff", "0.8")
    assert st["threshold"] == 0.8 and st["mb_pfer"] == pytest.approx(N_TARGET**2 / (0.6 * N_FEATURE))
    assert st["expected_false_at_most"] == pytest.approx(false_stable_bound(N_TARGET, N_FEATURE, 10, 0.8))
    line = next(x for x in printed.splitlines() if x.startswith("  Kept on at least 80% of reruns (8 or more of 10"))
    bound, listed = st["expected_false_at_most"], len(st["names"])
    if listed and bound < listed:
        assert f"at most {bound:.1f} of them are expected to be noise with these 10 real ensembles" in line
        assert f", {mb_pfer(N_TARGET, N_FEATURE, 0.8):.2g} with infinitely many (R's stabs' PFER" in line
    elif listed:  # a bound not below the list's length says nothing, and is said to
        assert f"the bound on how many of them are noise, {bound:.1f}, is not below {listed}: it says nothing" in line
    # Without a PFER, the copies that bound the noise by 1 at this cutoff, as an option.
    assert st["bound_target"] == 1.0 and st["copies_needed_cutoff"] == 0.8
    assert st["copies_needed"] == copies_needed(N_TARGET, N_FEATURE, 0.8, 1.0)
    if listed:
        advice = next(x for x in printed.splitlines() if x.startswith("  To bound the noise"))
        assert f"pass --copies {st['copies_needed']}:" in advice


@pytest.mark.slow
def test_pfer_uses_stabs_cutoff_and_prints_the_copies_it_needs(tmp_path, capsys):
    printed, st = _run(tmp_path, capsys, "--pfer", "1")
    cutoff = mb_cutoff(N_TARGET, N_FEATURE, 1.0)
    assert st["threshold"] == pytest.approx((N_TARGET**2 / N_FEATURE + 1) / 2) == pytest.approx(cutoff)
    assert st["mb_pfer"] == pytest.approx(1.0) and st["pfer"] == 1.0
    need_cutoff, need = copies_for_pfer(N_TARGET, N_FEATURE, 1.0)
    assert (st["copies_needed_cutoff"], st["copies_needed"]) == (need_cutoff, need)
    least = math.ceil(cutoff * 10 - 1e-9)
    assert f"  Kept on at least {cutoff:.0%} of reruns ({least} or more of 10" in printed
    (said,) = [x for x in printed.splitlines() if x.startswith("  The cutoff ")]
    bound = false_stable_bound(N_TARGET, N_FEATURE, 10, cutoff)
    assert said == (
        f"  The cutoff {cutoff:.4g} is that of Meinshausen and Buhlmann's bound for a PFER of 1, as R's stabs sets "
        "it: it holds only with infinitely many real ensembles."
    )
    kept = next(x for x in printed.splitlines() if x.startswith("  Kept on at least"))
    assert f"{bound:.1f}" in kept or not st["names"]
    if st["names"]:
        (advice,) = [x for x in printed.splitlines() if x.startswith("  To bound the noise")]
        assert f"pass --copies {need} with --cutoff {need_cutoff:g} (in place of the PFER)" in advice


def test_cutoff_and_pfer_are_refused_together_and_out_of_range(capsys):
    assert main(["estimate", *SMALL, "--cutoff", "0.8", "--pfer", "1"]) == 2
    assert "cutoff: give it or pfer, not both" in capsys.readouterr().err
    # Typed at its default, the cutoff would be dropped all the same: refused alike.
    assert main(["estimate", *SMALL, "--cutoff", "0.9", "--pfer", "1"]) == 2
    assert capsys.readouterr().err.strip() == (
        "ensstab: error: --cutoff: give it or pfer, not both: with --pfer 1 the cutoff is Meinshausen and "
        "Buhlmann's for it, not 0.9"
    )
    assert main(["estimate", *SMALL, "--no-cache", "--pfer", "1e308"]) == 2
    assert capsys.readouterr().err.startswith("ensstab: error: --pfer is too large (got 1e+308)")
    assert main(["estimate", *SMALL, "--cutoff", "0.5"]) == 2
    assert "cutoff must be in (0.5, 1.0]; got 0.5" in capsys.readouterr().err


def test_details_prints_every_measure_of_one_selectors_stability(tmp_path, capsys):
    """The summary says one number for one selector's stability; --details adds the others."""
    printed, _ = _run(tmp_path, capsys, "--details")
    assert len([x for x in printed.splitlines() if "stability of one" in x and "Details" not in x]) == 1
    assert "the estimate's (what every output says)" in printed and "the paper's measure" in printed
    assert "by Nogueira's index" in printed
