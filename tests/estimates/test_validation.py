"""The validation harness: the estimate against the naive check, per m, with a cached naive curve."""

import json

import numpy as np
import pytest
import xarray as xr
from small_problem import DATA

from ensstab_dask.cli import main as cli_main
from ensstab_dask.estimates.validation.comparison import compare
from ensstab_dask.estimates.validation.harness import naive_cache_path, naive_check, validate
from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
from ensstab_dask.real.selectors import default_selector
from ensstab_dask.seeding import Stage, Stream, as_seed_sequence, derive

KW = dict(selector=default_selector(20), m_ensemble=(1, 3), m_stability=6, seed=1)
EST = dict(n_runs=24, repeats=4, n_boot=50, model="onda")


def test_compare_per_m():
    class Fake:
        has_curve = True

        def predicted(self):
            return {1: 0.10, 5: 0.30}

        def curve_interval(self):
            return {1: (0.05, 0.15), 5: (0.25, 0.35)}

        def curve_se(self):
            return {1: 0.0, 5: 0.015}

        def curve_band(self):
            return {1: 0.0, 5: 0.0}

    naive = xr.Dataset(
        {"stability": ("m_ensemble", [0.12, 0.20]), "stability_se": ("m_ensemble", [0.01, 0.02])},
        coords={"m_ensemble": [1, 5]},
    )
    rows = compare(Fake(), naive)
    assert rows[1] == pytest.approx(
        dict(
            predicted=0.10,
            lower=0.05,
            upper=0.15,
            predicted_se=0.0,
            real=0.12,
            real_se=0.01,
            band=0.0,
            z=-2.0,
            covered=True,
            within_2se=True,
        )
    )
    # The combined z: 0.10 off with SEs 0.015 and 0.02, 0.025 together.
    assert rows[5]["z"] == pytest.approx(4.0) and not rows[5]["covered"] and not rows[5]["within_2se"]
    # Beyond the measured sizes the model band, read as a two-SD range, joins them:
    # a band of 0.06 adds 0.03, so sqrt(0.015^2 + 0.03^2 + 0.02^2) = 0.039.
    Fake.curve_band = lambda self: {1: 0.0, 5: 0.06}
    assert compare(Fake(), naive)[5]["z"] == pytest.approx(0.10 / np.sqrt(0.015**2 + 0.03**2 + 0.02**2))
    Fake.has_curve = False
    assert not compare(Fake(), naive)[1]["covered"] and np.isnan(compare(Fake(), naive)[1]["z"])


@pytest.mark.slow
def test_validate_caches_the_naive_curve(tmp_path, two_process_client):
    first = validate(DATA.X, DATA.y, 10, cache_dir=tmp_path, client=two_process_client, **KW, **EST)
    assert first.naive.attrs["cached"] == 0 and len(list(tmp_path.glob("naive-*.nc"))) == 1
    assert first.to_dict()["naive_real_runs"] == 6 * 3 and first.estimate.real_runs == 24 + 6 + 40
    again = validate(DATA.X, DATA.y, 10, cache_dir=tmp_path, client="synchronous", **KW, **EST)
    assert again.naive.attrs["cached"] == 1
    assert again.per_m == first.per_m  # same numbers whatever the scheduler, cached or not
    for m, row in first.per_m.items():
        assert row["real"] == float(first.naive["stability"].sel(m_ensemble=m))
        assert row["covered"] == (row["lower"] <= row["real"] <= row["upper"])
    assert first.covered == sum(r["covered"] for r in first.per_m.values())
    assert "| m_ensemble |" in first.table() and "interval covers the real value at" in first.summary()
    ds = first.to_dataset()
    assert {"naive_stability", "stability_lower"} <= set(ds.data_vars)


def test_cache_key_follows_data_and_settings(tmp_path):
    a = naive_cache_path(DATA.X, DATA.y, 10, cache_dir=tmp_path, m_stability=6, seed=1)
    assert a == naive_cache_path(DATA.X.copy(), DATA.y, 10, cache_dir=tmp_path, m_stability=6, seed=1)
    X2 = DATA.X.copy()
    X2[0, 0] += 1e-9
    assert a != naive_cache_path(X2, DATA.y, 10, cache_dir=tmp_path, m_stability=6, seed=1)
    assert a != naive_cache_path(DATA.X, DATA.y, 10, cache_dir=tmp_path, m_stability=6, seed=2)
    assert a != naive_cache_path(DATA.X, DATA.y, 11, cache_dir=tmp_path, m_stability=6, seed=1)
    with pytest.raises(ValueError, match="cache_dir: directory .* does not exist"):
        naive_check(DATA.X, DATA.y, 10, NaiveSettings(**KW), cache_dir=tmp_path / "nope")


@pytest.mark.slow
def test_cli_validate_json_and_rerun(tmp_path, capsys):
    np.savez(tmp_path / "d.npz", X=DATA.X, y=DATA.y)
    out = tmp_path / "v.json"
    cache = tmp_path / "cache" / "naive"  # not there yet: made, as the default one is
    args = ["validate", "--data", str(tmp_path / "d.npz"), "--n-target", "10", "--m-stability", "6"]
    args += ["--m-ensemble", "1,3", "--repeats", "4", "--n-estimators", "20", "--n-runs", "24", "--n-boot", "50"]
    args += ["--seed", "1", "--scheduler", "synchronous", "--cache-dir", str(cache), "--json", str(out)]
    args += ["--model", "onda"]
    assert cli_main(args) == 0
    first = capsys.readouterr().out
    header = "| m_ensemble | predicted [95% bootstrap interval] | SE of prediction | real (naive check) | SE of real |"
    assert header in first
    d = json.loads(out.read_text())
    assert set(d["per_m"]) == {"1", "3"}
    row = d["per_m"]["1"]
    assert set(row) == {
        "predicted",
        "lower",
        "upper",
        "predicted_se",
        "band",
        "real",
        "real_se",
        "z",
        "covered",
        "within_2se",
    }
    assert d["estimate_real_runs"] == 24 + 6 + 40 and d["naive_real_runs"] == 18 and d["naive_cached"] is False
    assert list(cache.glob("naive-*.nc"))
    assert d["covered"] == sum(r["covered"] for r in d["per_m"].values()) and d["sizes"] == 2
    for r in d["per_m"].values():
        assert r["covered"] == (r["lower"] <= r["real"] <= r["upper"])
    # A rerun reuses the naive curve, and refuses to clobber the JSON without --overwrite.
    assert cli_main(args) == 2
    assert cli_main(args + ["--overwrite"]) == 0
    assert "cached" in capsys.readouterr().out
    again = json.loads(out.read_text())
    assert again["naive_cached"] is True and again["per_m"] == d["per_m"]


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--cache-dir", __file__], f"--cache-dir {__file__}: exists and is not a directory"),
        (["--n-boot", "5"], "--n-boot must be 0 (no bootstrap) or in [20, 10000]"),
        (["--confidence", "95"], "--confidence must be in (0.0, 1.0); got 95.0"),
        (["--member-resample", "thirds"], "--member-resample must be one of half, bootstrap, bagging"),
        (["--calibration-layout", "halves"], "invalid choice"),
    ],
)
def test_cli_validate_bad_input(extra, needle, capsys):
    assert cli_main(["validate", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_callable_selectors_are_not_cached(tmp_path):
    def score(X, y, rng):
        return np.abs(X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)) + 1e-9 * rng.random(X.shape[1])

    kw = dict(KW, selector=score)
    ds = naive_check(DATA.X, DATA.y, 10, NaiveSettings(**kw), cache_dir=tmp_path, client="synchronous")
    assert ds.attrs["cached"] == 0
    assert not list(tmp_path.glob("naive-*.nc"))


def test_cli_refuses_an_output_in_a_missing_folder_before_any_work(tmp_path, capsys):
    assert cli_main(["validate", "--json", str(tmp_path / "nope" / "v.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--json" in err[0] and "does not exist" in err[0]


def test_a_damaged_cache_file_is_recomputed(tmp_path):
    first = naive_check(DATA.X, DATA.y, 10, NaiveSettings(**KW), cache_dir=tmp_path, client="synchronous")
    (path,) = tmp_path.glob("naive-*.nc")
    path.write_bytes(b"not netCDF")
    again = naive_check(DATA.X, DATA.y, 10, NaiveSettings(**KW), cache_dir=tmp_path, client="synchronous")
    assert again.attrs["cached"] == 0
    np.testing.assert_array_equal(again["stability"].values, first["stability"].values)
    third = naive_check(DATA.X, DATA.y, 10, NaiveSettings(**KW), cache_dir=tmp_path, client="synchronous")
    assert third.attrs["cached"] == 1


def _flip_a_bit_of(path, value: float) -> None:
    """Flip one bit of ``value`` where the file stores it (little-endian float64)."""
    data = bytearray(path.read_bytes())
    at = data.find(np.float64(value).tobytes())
    assert at >= 0, "the value is not stored as plain bytes"
    data[at + 6] ^= 0x10  # an exponent bit: 0.28 becomes another plausible number
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["value", "no-checksum"])
def test_a_cached_curve_that_fails_its_checksum_is_recomputed_and_said(tmp_path, caplog, damage):
    first = naive_check(DATA.X, DATA.y, 10, NaiveSettings(**KW), cache_dir=tmp_path, client="synchronous")
    (path,) = tmp_path.glob("naive-*.nc")
    if damage == "value":
        _flip_a_bit_of(path, float(first["stability"].values[0]))
        with xr.open_dataset(path) as damaged:  # still a readable file, with a wrong number in it
            assert float(damaged["stability"].values[0]) != float(first["stability"].values[0])
        said = "fails its checksum"
    else:  # a file without a checksum (none this package writes): not trusted
        with xr.open_dataset(path) as old:
            ds = old.load()
        del ds.attrs["ensstab_checksum"]
        ds.to_netcdf(path)
        said = "has no checksum"
    with caplog.at_level("WARNING", logger="ensstab_dask.validate"):
        again = naive_check(DATA.X, DATA.y, 10, NaiveSettings(**KW), cache_dir=tmp_path, client="synchronous")
    assert again.attrs["cached"] == 0
    np.testing.assert_array_equal(again["stability"].values, first["stability"].values)
    lines = [r.getMessage() for r in caplog.records if r.name == "ensstab_dask.validate"]
    assert len(lines) == 1 and str(path) in lines[0] and said in lines[0] and "recomputing" in lines[0], lines
    third = naive_check(DATA.X, DATA.y, 10, NaiveSettings(**KW), cache_dir=tmp_path, client="synchronous")
    assert third.attrs["cached"] == 1  # the file was replaced by the recomputed curve, checksum and all
    np.testing.assert_array_equal(third["stability"].values, first["stability"].values)


def test_a_cache_dir_in_the_data_folder_is_refused_before_it_is_made(tmp_path, monkeypatch, capsys):
    """Refused by its own name, before any work and before the folder is made (it was made,
    and the refusal, after the whole estimate and naive check, named --output)."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("ENSSTAB_DATA_DIR", str(data))
    assert cli_main(["validate", "--cache-dir", str(data / "cache")]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ensstab: error: --cache-dir ") and "$ENSSTAB_DATA_DIR" in lines[0]
    assert out == "" and not (data / "cache").exists()
    with pytest.raises(ValueError, match="cache_dir .* lies in the reference data folder"):
        validate(DATA.X, DATA.y, 10, cache_dir=data, client="synchronous", progress=False, **KW, **EST)
    with pytest.raises(ValueError, match="cache_dir .* lies in the reference data folder"):
        naive_check(DATA.X, DATA.y, 10, NaiveSettings(**KW), cache_dir=data, client="synchronous")
    assert list(data.iterdir()) == []


def test_the_estimates_copies_are_a_naive_check_in_the_same_layout():
    """The default estimate's real ensemble copies and the naive check are one layout (a
    stratified random half per copy, bootstrap samples of it as weak selectors): seeded
    alike, the naive check of 10 copies of 20 makes exactly the estimate's runs, and its
    measurement at m = 20 (every member, no choice to make) gives what the estimate does."""
    from ensstab_dask import estimate
    from ensstab_dask.estimates.stages.real_runs import RealRunner, make_real_runs
    from ensstab_dask.real.naive import _measure, real_ensemble_runs
    from ensstab_dask.real.runs import Copies
    from ensstab_dask.settings import EstimateSettings

    kw = dict(selector=default_selector(10), progress=False)
    est = estimate(DATA.X, DATA.y, 10, m_ensemble=(5, 20), seed=4, client="synchronous", n_boot=0, **kw)
    copies = derive(as_seed_sequence(4), Stream.ESTIMATE, Stage.COPIES)
    naive_runs = real_ensemble_runs(DATA.X, DATA.y, Copies(10, 20, copies), client="synchronous", **kw)
    settings = EstimateSettings(n_feature=DATA.X.shape[1], n_target=10, m_ensemble=(5, 20), seed=4)
    runner = RealRunner(DATA.X, DATA.y, default_selector(10), "synchronous")
    _, made = make_real_runs(runner, settings)
    np.testing.assert_array_equal(made.model, naive_runs)
    measured = _measure(naive_runs, [20], 10, DATA.X.shape[1], aggregate="mean_rank", index="jaccard", ss=copies)
    assert measured.stability[0] == pytest.approx(float(est.curve["stability"].sel(m_ensemble=20)), rel=1e-12)
    # The same ensembles, feature by feature: how many copies keep each one.
    kept = np.bincount(measured.selected[0].ravel(), minlength=DATA.X.shape[1]) / 10
    np.testing.assert_allclose(est.features["frequency"].sel(m_measured=20).values, kept, atol=1e-12)


@pytest.mark.parametrize("tied", [False, True], ids=["continuous", "tied"])
def test_first_members_and_random_members_give_one_stability(tied):
    """Below B the naive check and the measured curve differ only in which members make an
    ensemble of m: the naive check takes each copy's first m, the measured curve averages
    over random choices of m of the copy's B. A copy's members are exchangeable, so the two
    have one expectation, also where scores tie everywhere (scores cut to whole numbers and
    20 signal features repeated as columns, as on discretized data). On 400 real-like copies
    in 20 blocks of 20, paired per block: the mean difference is within 4 SE of 0."""
    from synthetic import real_like_copies

    from ensstab_dask.models.measured import copy_similarities, pair_means
    from ensstab_dask.real.naive import _measure

    shape = dict(tau=0.5, sigma=1.5, step=1.0, duplicated=20) if tied else {}
    ranks = real_like_copies(400, 10, 11, **shape)
    sizes = [2, 5]
    diffs = []
    for b, block in enumerate(np.split(ranks, 20)):
        naive = _measure(block, sizes, 20, 500, aggregate="mean_rank", index="jaccard", ss=as_seed_sequence(b))
        diffs.append(pair_means(copy_similarities(block, 20, sizes, seed=b)) - np.array(naive.stability))
    diffs = np.array(diffs)
    se = diffs.std(axis=0, ddof=1) / np.sqrt(len(diffs))
    assert np.all(se > 0)
    assert np.all(np.abs(diffs.mean(axis=0)) < 4 * se), (diffs.mean(axis=0), se)


@pytest.mark.slow
def test_the_validation_harness_judges_against_pooled_naive_checks_and_says_their_copies(tmp_path):
    """benchmarks/bench_validate.py --naive-seeds: two naive checks pooled, the second up to --pool-up-to."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).parents[2] / "benchmarks" / "bench_validate.py"
    out = tmp_path / "v.json"
    args = "--datasets default --models anchored --n-estimators 5 --m-ensemble 1,3,5 --m-stability 4"
    args += f" --naive-seeds 1,2 --pool-up-to 3 --cache-dir {tmp_path / 'cache'} --json {out}"
    done = subprocess.run([sys.executable, str(script), *args.split()], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = json.loads(out.read_text())
    assert row["naive_copies"] == {"1": 8, "3": 8, "5": 4} and row["naive_seeds"] == [1, 2]
    assert "naive copies per size: m = 1: 8, m = 3: 8, m = 5: 4" in done.stdout
