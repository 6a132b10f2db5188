"""The model seam, the measured curve, the anchored model and the self-check behind `reliable`."""

import ast
import inspect
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from cli_runs import cli_estimate
from synthetic import real_like_copies

import ensstab_dask as es
from ensstab_dask.checks import MODELS
from ensstab_dask.estimates.stages import assemble, pipeline, prediction, real_runs
from ensstab_dask.indices import pairwise_similarity, pairwise_stability_se, stability_of_subsets
from ensstab_dask.models import REGISTRY, Context, Prediction, SelfCheck, get_model
from ensstab_dask.models.anchored import CHECK_LIMIT
from ensstab_dask.models.measured import (
    copy_similarities,
    extrapolate,
    extrapolation_weights,
    fit_sizes,
    pair_means,
    weighted,
)
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.runs import runs_from_copies
from ensstab_dask.real.selectors import default_selector
from ensstab_dask.settings import EstimateSettings

DATA = make_microarray(n_feature=300, n_informative=12, effect=2.0, seed=1)
PIN = dict(
    selector=default_selector(10),
    m_ensemble=(1, 3, 5),
    m_stability=8,
    n_runs=10,
    repeats=4,
    n_boot=20,
    client="synchronous",
    progress=False,
    seed=3,
)


# -- the seam ------------------------------------------------------------------------


def test_every_model_is_registered_and_the_pipeline_never_names_one():
    assert set(REGISTRY) == set(MODELS) and all(REGISTRY[m].name == m for m in MODELS)
    with pytest.raises(ValueError, match="model must be one of"):
        get_model("three-level")
    # The pipeline's code (docstrings aside) holds no model's name: a new model is a new module.
    stages = (real_runs.make_real_runs, assemble.estimate_on_runs, prediction.predict_with_model, assemble.assemble)
    for fn in (pipeline.estimate, pipeline.estimate_with, pipeline.estimate_from_runs, *stages):
        tree = ast.parse(inspect.getsource(fn).lstrip())
        body = tree.body[0].body
        if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        names = {n.value for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Constant)}
        assert not names & set(MODELS), (fn.__name__, names & set(MODELS))


# Values from the code before the model seam, same data, settings and seed.
BEFORE = {
    "onda": dict(
        stability=[0.0655824829931973, 0.2651998299319728, 0.32826672335600904],
        lower=[0.027185943762091505, 0.11415584322832865, 0.18325752410915386],
        upper=[0.1253662879524921, 1.0164047168942585, 1.110642398980644],
        p=0.34028320312500004,
        real_stability=0.049603174603174614,
    ),
    "two-level": dict(
        stability=[0.05293367346938775, 0.5706845238095238, 0.5527210884353742],
        lower=[0.009884619124256998, 0.0797948869327409, 0.37362115446646055],
        upper=[0.08605811639883569, 0.9634964260055662, 1.0175323675230579],
        p=0.34028320312500004,
        real_stability=0.049603174603174614,
    ),
}


@pytest.mark.parametrize("model", ["onda", "two-level"])
def test_the_simulators_are_bit_identical_to_before_the_seam(model):
    """Same streams, same code path: every number as before. The intervals are those of
    before, widened in quadrature by what the self-check saw beyond its noise when it
    failed, and clipped to the index's range."""
    e = es.estimate(DATA.X, DATA.y, 5, model=model, **PIN)
    before = BEFORE[model]
    point = np.array(before["stability"])
    assert e.curve["stability"].values.tolist() == before["stability"]
    assert (e.fit.p, e.single.real_stability, e.single.n_useful) == (before["p"], before["real_stability"], 7)
    excess = e.self_check.excess
    assert (excess > 0) == (not e.self_check.passed)
    lower, upper = np.array(before["lower"]), np.array(before["upper"])
    if excess > 0:  # a passing check leaves the interval alone, bit for bit
        lower, upper = point - np.hypot(point - lower, excess), point + np.hypot(upper - point, excess)
    np.testing.assert_array_equal(e.curve["stability_lower"].values, np.clip(lower, 0, 1))
    np.testing.assert_array_equal(e.curve["stability_upper"].values, np.clip(upper, 0, 1))


# Every model, every reported number and the bootstrap's replicates, as the JSON's commit
# computed them.
sys.path.insert(0, str(Path(__file__).parents[1] / "pins"))
from make_estimate_pins import LAYOUTS, fingerprint, pinned_estimate  # noqa: E402

PINS = json.loads((Path(__file__).parents[1] / "pins" / "estimate_pins.json").read_text())
#: How far a pinned float may move: the processor's BLAS kernel (OpenBLAS picks one by CPU)
#: and its summation order move a least-squares fit's last digits, about 1e-12 relative and
#: up to 1e-10 where a fit is ill-conditioned; any change of results moves far more.
RTOL = 1e-9


def _same(got, pinned, where: str, *, rtol: float = RTOL) -> None:
    """Equal: floats to ``rtol`` (0: bit for bit), everything else exactly."""
    if isinstance(pinned, dict):
        assert isinstance(got, dict) and got.keys() == pinned.keys(), where
        for key in pinned:
            _same(got[key], pinned[key], f"{where}.{key}", rtol=rtol)
    elif isinstance(pinned, list):
        assert isinstance(got, list) and len(got) == len(pinned), where
        for i, (a, b) in enumerate(zip(got, pinned)):
            _same(a, b, f"{where}[{i}]", rtol=rtol)
    elif isinstance(pinned, float) and not isinstance(got, bool):
        assert got == pytest.approx(pinned, rel=rtol, abs=0, nan_ok=True), (where, got, pinned)
    else:
        assert got == pinned, (where, got, pinned)


def _same_as_pinned(got: dict, model: str) -> None:
    pinned = PINS["models"][model]
    for key in pinned:
        _same(got[key], pinned[key], f"{model}.{key}")


@pytest.mark.parametrize("model", MODELS)
def test_every_model_gives_the_pinned_numbers(model):
    _same_as_pinned(fingerprint(pinned_estimate(model)), model)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_pinned_layout_gives_its_pinned_numbers(layout):
    got = fingerprint(pinned_estimate(**LAYOUTS[layout]))
    pinned = PINS["layouts"][layout]
    for key in pinned:
        _same(got[key], pinned[key], f"{layout}.{key}")


def _floats(tree, path=()):
    """Every float leaf of a fingerprint, by its path."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _floats(value, (*path, key))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from _floats(value, (*path, i))
    elif isinstance(tree, float) and np.isfinite(tree) and tree != 0.0:
        yield path


def _perturbed(tree, path, factor):
    tree = json.loads(json.dumps(tree))
    *head, last = path
    node = tree
    for key in head:
        node = node[key]
    node[last] *= factor
    return tree


def test_the_pins_tolerate_what_a_processor_moves_and_nothing_more():
    """Every pinned float moved by 1e-10 relative (a BLAS kernel's summation order) still
    passes; moved by 1e-6 (a change of results), each one alone fails."""
    pinned = PINS["models"]["anchored"]
    paths = list(_floats(pinned))
    assert len(paths) >= 90  # the curve, the self-check and the bootstrap's replicates
    everything = pinned
    for path in paths:
        everything = _perturbed(everything, path, 1 + 1e-10)
    _same(everything, pinned, "anchored")
    for path in paths:
        with pytest.raises(AssertionError):
            _same(_perturbed(pinned, path, 1 + 1e-6), pinned, "anchored")


@pytest.mark.cluster
def test_the_pinned_numbers_hold_on_a_cluster_of_processes(two_process_client):
    """Where the stages run (two worker processes, tasks finishing in any order) changes
    no number: bit for bit the synchronous scheduler's on this machine, and the pins."""
    for model in MODELS:
        here = fingerprint(pinned_estimate(model))
        there = fingerprint(pinned_estimate(model, client=two_process_client))
        _same(there, here, model, rtol=0.0)
        _same_as_pinned(there, model)


# -- the measured curve --------------------------------------------------------------


def test_extrapolation_is_exact_on_a_line_in_one_over_sqrt_m():
    sizes = fit_sizes(20)
    assert sizes == list(range(10, 21)) and fit_sizes(5) == [3, 4, 5] and fit_sizes(2) == [1, 2]
    line = 0.4 - 0.3 / np.sqrt(sizes)
    np.testing.assert_allclose(extrapolate(sizes, line, [50, 100]), 0.4 - 0.3 / np.sqrt([50, 100]), rtol=1e-12)
    # Weights of a linear extrapolation sum to 1 (a constant curve stays constant).
    np.testing.assert_allclose(extrapolation_weights(sizes, [30, 50]).sum(axis=1), 1.0)


def test_weighted_gives_the_u_statistic_of_a_plain_stability():
    subsets = es.simulate_ensembles(200, 8, 30, 0.7, size=12, seed=2)
    sim = pairwise_similarity(subsets, 200)[None].copy()
    np.fill_diagonal(sim[0], np.nan)
    value, se = weighted(sim, np.ones(1))
    assert value == pytest.approx(stability_of_subsets(subsets, 200, "jaccard"))
    assert se == pytest.approx(pairwise_stability_se(subsets, 200))
    assert pair_means(sim)[0] == pytest.approx(value)
    # A bootstrap replicate that repeats a copy leaves out its pairs with itself.
    ids = np.array([[0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]])
    off = ids[0][:, None] != ids[0][None, :]
    assert pair_means(sim, ids)[0, 0] == pytest.approx(sim[0][np.ix_(ids[0], ids[0])][off].mean())


def test_the_measured_se_is_never_0_where_the_copies_differ():
    """The self-check's difference and the measured curve's SE come from ``weighted``: on 4
    copies whose unbiased variance is negative, it is the jackknife's, never 0."""
    from ensstab_dask.indices import u_statistic_variance

    rng = np.random.default_rng(0)
    for _ in range(10):  # the tenth symmetric kernel of this stream has a negative estimate
        a = rng.random((4, 4))
    sim = ((a + a.T) / 2)[None].copy()
    np.fill_diagonal(sim[0], np.nan)
    assert u_statistic_variance(np.nan_to_num(sim[0])) < 0
    value, se = weighted(sim, np.ones(1))
    loo = np.array([pair_means(np.delete(np.delete(sim, g, 1), g, 2))[0] for g in range(4)])
    assert se == pytest.approx(np.sqrt(3 / 4 * ((loo - loo.mean()) ** 2).sum())) and se > 0
    assert value == pytest.approx(pair_means(sim)[0])


@pytest.mark.slow
def test_measured_stability_is_unbiased_and_its_se_honest():
    """Copies of a two-level simulated selector (each copy its own preferred set, as each
    real copy has its own half): the stability at m <= B measured on G copies of B has the
    expectation of the stability of independent ensembles of m, and its U-statistic SE
    the spread of the measurement. Tolerances: 4 standard errors over R experiments."""
    N, K, u, p, h, G, B, R, m = 200, 5, 30, 0.8, 12, 8, 6, 60, 3
    truth = es.simulated_stability(N, K, u, p, m_ensemble=m, m_stability=4000, seed=99, variant="two-level", h=h)
    values, ses = [], []
    for r in range(R):
        ranks = es.simulate_rankings(N, K, u, p, size=G * B, seed=r, variant="two-level", h=h, copy_size=B)
        v, se = weighted(copy_similarities(ranks.reshape(G, B, N), K, [m], seed=r), np.ones(1))
        values.append(v)
        ses.append(se)
    values, ses = np.array(values), np.array(ses)
    sd = values.std(ddof=1)
    assert abs(values.mean() - truth) < 4 * sd / np.sqrt(R), (values.mean(), truth)
    assert abs(np.mean(ses**2) - sd**2) < 4 * np.sqrt(2 / (R - 1)) * sd**2 + 4 * np.std(ses**2) / np.sqrt(R)


# -- the anchored model and the self-check ---------------------------------------------


@pytest.fixture(scope="module")
def anchored():
    return es.estimate(DATA.X, DATA.y, 5, model="anchored", **dict(PIN, m_ensemble=(1, 3, 5, 20, 50)))


def test_anchored_measures_up_to_b_and_needs_no_other_runs(anchored):
    e = anchored
    assert e.real_runs == 10 * 20 and e.fit is None
    # Only what it used is recorded: no layout or resample of the paper's runs, no p's fit.
    assert not {"calibration_layout", "resample", "member_resample", "p_method"} & e.settings.keys()
    assert e.curve.attrs["measured_up_to"] == 20 and e.settings["stability_runs"] == 10
    # The self-check is the member split: each copy's first 10 weak selectors alone
    # measure m = 5..10, and the law fitted there predicts m = 20, which all 20 measure.
    chk = e.self_check
    assert chk.sizes == (20,) and chk.copies == 10 and chk.members == 20 and chk.limit == CHECK_LIMIT
    assert "extrapolated from ensembles of 5 to 10 of each copy's first 10 weak selectors to m = 20" in chk.held_out
    assert e.reliable == chk.passed and np.isfinite(chk.z[0])
    lo, hi = e.curve["stability_lower"].values, e.curve["stability_upper"].values
    assert ((0 <= lo) & (lo <= e.curve["stability"].values) & (e.curve["stability"].values <= hi) & (hi <= 1)).all()
    assert "measured on real ensemble copies up to m_ensemble = 20" in e.summary()
    d = e.to_dict()
    assert d["self_check"]["passed"] is chk.passed and d["self_check"]["sizes"] == [20]
    json.dumps(d)
    ds = e.to_dataset()
    assert ds.attrs["self_check_passed"] == int(chk.passed) and list(ds.attrs["self_check_sizes"]) == [20.0]


def test_the_fewest_copies_allowed_give_an_interval_at_every_size():
    """Four copies: each measured size's standard error is a mean over pairs' (it needs
    four), and a bootstrap replicate that drew one copy alone is drawn again (with 3 copies
    one in 9 did, and every interval came out NaN); three are refused, naming the option."""
    copies = real_like_copies(4, 20, seed=3)
    settings = EstimateSettings(n_feature=500, n_target=20, m_ensemble=(1, 5, 20, 50), n_boot=200, seed=2, copies=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no 0 / 0 on the way
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        est = pipeline.estimate_from_runs(
            runs_from_copies(copies, 20), settings, client="synchronous", copy_ranks=copies
        )
    for var in ("stability_std", "stability_lower", "stability_upper"):
        assert np.isfinite(est.curve[var].values).all(), var
    with pytest.raises(ValueError, match=r"copies must be >= 4; got 3"):
        EstimateSettings(n_feature=500, n_target=20, copies=3)


def _on_copies(copies: np.ndarray):
    """The default estimate on synthetic copies, as ``estimate`` runs it after its real runs."""
    settings = EstimateSettings(n_feature=500, n_target=20, m_ensemble=(1, 5, 50, 200), n_boot=50, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pipeline.estimate_from_runs(
            runs_from_copies(copies, 20), settings, client="synchronous", copy_ranks=copies
        )


def test_the_member_split_sees_a_law_that_is_wrong_and_passes_one_that_is_right():
    """Synthetic copies (tests/synthetic.py). With 5 weak selectors per copy and a curve
    that still climbs (tau 0.5, sigma 1.5), the law fitted to m = 1..3 of each copy's first
    3 members falls far short of the measured S(5), and the law from all 5 is off at m = 200
    by 3.5 SD: the split fails it (benchmarks/results/alarm.md: in 100 % of 200 replicates).
    Where the curve settles early (tau 1, sigma 1; 10 copies of 20) it passes (1-2 % false
    alarms there)."""
    wrong = _on_copies(real_like_copies(40, 5, seed=11, tau=0.5, sigma=1.5))
    chk = wrong.self_check
    assert not chk.passed and chk.z[0] < -CHECK_LIMIT and not wrong.reliable and chk.warning() in wrong.warnings
    assert "m = 5: predicted" in chk.warning() and "extrapolated from ensembles of 1 to 3" in chk.warning()
    curve = wrong.curve
    beyond = curve["m_ensemble"].values > 5
    assert (curve["stability_upper"].values - curve["stability_lower"].values)[beyond].min() > 2 * chk.excess
    right = _on_copies(real_like_copies(10, 20, seed=11))
    assert right.self_check.passed and right.reliable
    # A passing check's answer says what it cannot see.
    assert "it cannot see an unlucky draw of the copies" in right.summary()


def test_the_self_check_widens_only_what_it_extrapolates():
    import xarray as xr

    m = [1, 10, 20, 50, 100]
    point = np.array([0.1, 0.2, 0.3, 0.35, 0.4])
    curve = xr.Dataset(
        {
            "stability": ("m_ensemble", point),
            "stability_lower": ("m_ensemble", point - 0.01),
            "stability_upper": ("m_ensemble", point + 0.01),
        },
        coords={"m_ensemble": m},
    )
    pred = Prediction(curve=curve, attrs={"measured_up_to": 20})
    check = SelfCheck(
        sizes=(20,),
        predicted=np.array([0.25]),
        measured=np.array([0.3]),
        se=np.array([0.01]),
        copies=10,
        members=20,
        held_out="test",
    )
    assert not check.passed and check.excess == pytest.approx(0.05 - 0.02)
    wide = REGISTRY["anchored"].widened(pred, check)
    assert wide is not pred and pred.curve["stability_upper"].values[4] == curve["stability_upper"].values[4]
    half = (wide.curve["stability_upper"] - wide.curve["stability"]).values
    np.testing.assert_allclose(half[:3], 0.01)  # measured: not widened
    own = 1 / np.sqrt(10) - 1 / np.sqrt(20)
    for j in (3, 4):
        by = 0.03 * (1 / np.sqrt(20) - 1 / np.sqrt(m[j])) / own
        assert half[j] == pytest.approx(np.hypot(0.01, by))
    assert half[4] > half[3]  # the farther out, the wider
    passed = SelfCheck(
        sizes=(20,),
        predicted=np.array([0.29]),
        measured=np.array([0.3]),
        se=np.array([0.01]),
        copies=10,
        members=20,
        held_out="test",
    )
    assert passed.passed and passed.excess == 0.0


def test_anchored_refuses_an_index_that_is_not_pairwise():
    with pytest.raises(ValueError, match="model='anchored' supports 'jaccard', 'dice', 'kuncheva'"):
        es.estimate(DATA.X, DATA.y, 5, model="anchored", index="nogueira", **PIN)


def test_cli_estimate_with_the_anchored_model(tmp_path, capsys):
    options = "--n-target 5 --m-ensemble 1,5,30 --n-boot 20 --n-estimators 10 --model anchored --quiet"
    d = cli_estimate(tmp_path, capsys, DATA.X, DATA.y, *options.split())
    assert d["model"] == "anchored" and d["real_runs"] == 200 and d["self_check"]["sizes"] == [20]
    printed = capsys.readouterr().out
    assert ("Self-check passed" in printed) == d["self_check"]["passed"]
    assert ("Self-check FAILED" in printed) == (not d["self_check"]["passed"])


@pytest.mark.parametrize("se", [0.0, np.nan])
def test_a_self_check_that_cannot_see_an_error_does_not_pass(se):
    """A z that cannot be computed (an SE of 0, or none) fails the check and is said."""
    check = SelfCheck(
        sizes=(20,),
        predicted=np.array([0.013]),
        measured=np.array([0.027]),
        se=np.array([se]),
        copies=10,
        members=20,
        held_out="extrapolated",
    )
    assert not check.passed
    assert "no z: the difference's standard error is 0 or unknown" in check.warning()
    assert check.excess == pytest.approx(0.014)  # the whole difference: nothing is known of its noise
    ok = SelfCheck(
        sizes=(20,),
        predicted=np.array([0.013]),
        measured=np.array([0.027]),
        se=np.array([0.01]),
        copies=10,
        members=20,
        held_out="extrapolated",
    )
    assert ok.passed and ok.excess == 0.0


def test_the_law_is_exact_on_its_own_curves_and_its_covariance_is_the_jackknife():
    """a - b sqrt(c + 1/m) through m = 5..20 gives back the curve at m = 50..200 for c at
    both ends of the grid and between; the curve's covariance is the copies' jackknife."""
    from ensstab_dask.models.measured import ROOT_C, curve_covariance, fit_root_law, law_sizes, root_law_weights

    sizes = law_sizes(20)
    assert sizes == list(range(5, 21)) and law_sizes(10) == list(range(3, 11))
    cov = np.diag(np.linspace(1e-4, 2e-4, len(sizes)))
    for c in (ROOT_C[0], ROOT_C[30], ROOT_C[-1]):
        curve = 0.6 - 0.3 * np.sqrt(c + 1.0 / np.array(sizes))
        assert fit_root_law(sizes, curve, cov) == c
        want = 0.6 - 0.3 * np.sqrt(c + 1.0 / np.array([50, 100, 200]))
        np.testing.assert_allclose(root_law_weights(sizes, cov, [50, 100, 200], c) @ curve, want, rtol=1e-9)
    rng = np.random.default_rng(3)
    sim = rng.random((3, 8, 8))
    sim = (sim + sim.transpose(0, 2, 1)) / 2
    loo = np.array([[pair_means(np.delete(np.delete(s[None], g, 1), g, 2))[0] for g in range(8)] for s in sim])
    dev = loo - loo.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(curve_covariance(sim), 7 / 8 * dev @ dev.T, rtol=1e-12)


def test_the_simulators_fit_is_one_record_that_a_model_reads_from_its_context():
    from ensstab_dask.estimates.records.parts import FittedSimulator
    from ensstab_dask.models.simulator_fit import SimulatorFit

    assert FittedSimulator is SimulatorFit  # the Estimate's record is the one the fit is made as
    fit = SimulatorFit(u_pred=7, p_pred=0.3)
    ctx = Context(EstimateSettings(n_feature=100, n_target=5), None, n_runs=10, m_stability=5, fit=fit)
    assert ctx.fit is fit and np.isnan(fit.p_hat) and not fit.calibration_empty
    assert (ctx.fit.u_pred, ctx.fit.p_pred) == (7, 0.3)
    for gone in ("u_pred", "p_pred", "p_hat"):  # the fit's fields, never the Context's
        assert not hasattr(ctx, gone)
