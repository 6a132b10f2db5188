"""An estimate with a cache folder pays for its real runs once: another n_target, or the
same precision again, fits no selector and gives the numbers a fresh estimate gives."""

import logging
import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

import ensstab_dask as es
from ensstab_dask.estimates.records.spending import Cost
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.datasets import make_microarray

DATA = make_microarray(n_feature=200, seed=0)


class CountingForest(RandomForestClassifier):
    """The default forest, counting its fits (in this process: the runs are synchronous)."""

    fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        return super().fit(X, y, sample_weight=sample_weight)


KW = dict(
    selector=CountingForest(n_estimators=10, n_jobs=1), m_ensemble=(1, 5, 20), repeats=2, n_boot=20, progress=False
)


def _estimate(n_target, **kw):
    CountingForest.fits = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        est = es.estimate(DATA.X, DATA.y, n_target, client="synchronous", **KW, **kw)
    return est, CountingForest.fits


def _numbers(est) -> dict:
    """The estimate as JSON without the wall times and how its runs were paid for."""
    out = est.to_dict()
    for key in Cost.HOW_IT_RAN:
        out.pop(key, None)
    out.get("cost", {}).pop("seconds", None)
    return out


@pytest.mark.slow
def test_a_second_estimate_at_another_n_target_fits_nothing_and_equals_a_fresh_one(tmp_path, caplog):
    first, fits = _estimate(10, cache_dir=tmp_path)
    assert fits == first.real_runs == 200
    with caplog.at_level(logging.INFO, logger="ensstab_dask.cache"):
        again, fits = _estimate(5, cache_dir=tmp_path)
    assert fits == 0
    assert f"reused 200 real runs from {tmp_path} (ran 0)" in [r.getMessage() for r in caplog.records]
    fresh, fits = _estimate(5)
    assert fits == 200 and _numbers(again) == _numbers(fresh)
    assert np.array_equal(again.features["frequency"].values, fresh.features["frequency"].values)


@pytest.mark.slow
def test_precision_rounds_reuse_the_runs_and_grow_the_entry(tmp_path):
    precise = dict(precision=0.01, max_real_runs=400)
    _estimate(10, cache_dir=tmp_path)  # the first round's 200 runs
    first, fits = _estimate(10, cache_dir=tmp_path, **precise)
    assert first.real_runs == 400 and fits == 200  # only what the rounds added
    again, fits = _estimate(10, cache_dir=tmp_path, **precise)
    assert fits == 0
    fresh, fits = _estimate(10, **precise)
    assert fits == 400 and _numbers(again) == _numbers(fresh) == _numbers(first)
    assert len(list(tmp_path.glob("runs-*.nc"))) == 1


@pytest.mark.slow
def test_a_damaged_entry_is_recomputed_said_and_gives_the_same_numbers(tmp_path, caplog):
    first, _ = _estimate(10, cache_dir=tmp_path)
    (entry,) = tmp_path.glob("runs-*.nc")
    raw = bytearray(entry.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    entry.write_bytes(bytes(raw))
    with caplog.at_level(logging.WARNING, logger="ensstab_dask.cache"):
        again, fits = _estimate(10, cache_dir=tmp_path)
    assert fits == 200 and _numbers(again) == _numbers(first)
    (said,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert said.startswith(f"cache entry {entry} not reused: it ") and said.endswith("; recomputing it")


@pytest.mark.slow
def test_another_seed_or_selector_does_not_reuse(tmp_path):
    _estimate(10, cache_dir=tmp_path)
    _, fits = _estimate(10, cache_dir=tmp_path, seed=1)
    assert fits == 200
    CountingForest.fits = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        es.estimate(
            DATA.X,
            DATA.y,
            10,
            client="synchronous",
            cache_dir=tmp_path,
            **dict(KW, selector=CountingForest(n_estimators=11, n_jobs=1)),
        )
    assert CountingForest.fits == 200 and len(list(tmp_path.glob("runs-*.nc"))) == 3


def test_a_class_of_one_sample_is_refused_before_any_cluster_starts():
    y = DATA.y.copy()
    y[0] = 7  # a third class, of one sample
    # An address nothing listens on: reaching it would fail otherwise.
    with pytest.raises(InvalidParameterError) as err:
        es.estimate(DATA.X, y, 10, client="tcp://127.0.0.1:9", **KW)
    said = str(err.value)
    assert "class 7 of y has 1" in said and "real ensemble copies" in said and "resample=" not in said
    # validate: the naive check's copies too, before its cluster starts.
    with pytest.raises(InvalidParameterError, match="class 7 of y has 1"):
        es.validate(DATA.X, y, 10, client="tcp://127.0.0.1:9", **KW)


@pytest.mark.slow
def test_validate_caches_the_estimates_runs_too(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        val = es.validate(DATA.X, DATA.y, 10, m_stability=5, client="synchronous", cache_dir=tmp_path, **KW)
    assert len(list(tmp_path.glob("naive-*.nc"))) == 1 and len(list(tmp_path.glob("runs-*.nc"))) == 1
    again, fits = _estimate(10, cache_dir=tmp_path, m_stability=5)
    assert fits == 0 and _numbers(again) == _numbers(val.estimate)


@pytest.mark.slow
def test_a_rerun_from_the_cache_prices_its_runs_as_they_were_made(tmp_path):
    """After a rerun that made no run, every cost figure (the cost line, the JSON, the cost
    table the picture and the report draw) prices the runs at the seconds they took when
    made, never at the seconds of reading the cache; and no cluster is started for it."""
    from distributed.deploy.spec import SpecCluster

    from ensstab_dask.estimates.words.summary import cost_line
    from ensstab_dask.plotting.cost import cost_table, cost_words

    fresh, fits = _estimate(10, cache_dir=tmp_path)
    clusters = len(SpecCluster._instances)
    CountingForest.fits = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        again = es.estimate(DATA.X, DATA.y, 10, client=None, cache_dir=tmp_path, **KW)
    assert CountingForest.fits == 0 and len(SpecCluster._instances) == clusters  # no cluster for reading runs
    made, reused = fresh.cost.runs, again.cost.runs
    assert (made.made, made.reused, reused.made, reused.reused) == (200, 0, 0, 200)
    rate = fresh.cost.seconds_per_run
    assert rate == pytest.approx(made.made_seconds / 200) and rate > 0
    assert again.cost.seconds_per_run == pytest.approx(rate, rel=1e-12)  # the entry's record, not the reading
    assert f"all reused from the cache ({rate:.2f} s each when made)" in cost_line(again.cost)
    assert f"({rate:.2f} s each)" in cost_line(fresh.cost)
    for key, value in (("runs_made", 0), ("runs_reused", 200), ("seconds_per_real_run", rate)):
        assert again.to_dict()[key] == pytest.approx(value)
    t_fresh, t_again = cost_table(fresh.to_dataset()), cost_table(again.to_dataset())
    assert t_again.attrs["seconds_per_real_run"] == pytest.approx(rate)
    np.testing.assert_allclose(t_again["naive_seconds"], t_fresh["naive_seconds"], rtol=1e-12)
    # The estimate as made: its runs at their rate plus this call's own stages after them.
    after = sum(v for k, v in again.cost.seconds.items() if k != "real_runs")
    np.testing.assert_allclose(t_again["estimate_seconds"], 200 * rate + after, rtol=1e-9)
    assert again.cost.seconds_as_made() == pytest.approx(200 * rate + after)
    assert float(t_again["speedup"][-1]) < float(t_again["naive_seconds"][-1]) / (200 * rate)
    assert cost_words(t_again).startswith(f"{float(t_again['speedup'][-1]):.2g}x in time")
