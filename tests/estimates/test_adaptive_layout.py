"""``layout="adaptive"``: a first round of 20 copies of 10, every copy grown to 20 where it
says the curve still climbs (estimates.stages.rounds.grow_layout, Anchored.grown_design)."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
import xarray as xr

import ensstab_dask as es
from ensstab_dask.estimates.records.spending import Next
from ensstab_dask.estimates.stages.real_runs import every_run_cached
from ensstab_dask.models import get_model
from ensstab_dask.models._base import SelfCheck
from ensstab_dask.models.anchored import GROW_BAND, GROW_SPLIT_Z
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.run_cache import RunCache
from ensstab_dask.real.selectors import default_selector, make_scorer
from ensstab_dask.settings import EstimateSettings
from tests.cli_runs import cli_estimate

# Two small problems on 3-tree forests: on the first the first round's member split is off
# by 1.8 SE at m_ensemble up to 1000, so every copy grows; on the second it is not, nor is
# the band wide, so the first round stands.
CLIMBS = dict(data=dict(n_feature=300, n_informative=10, effect=4.0, seed=3), trees=3)
SETTLED = dict(data=dict(n_feature=300, n_informative=20, effect=3.0, seed=1), trees=2)
RUN = dict(m_ensemble=(1, 5, 1000), n_boot=20, client="synchronous", progress=False)


def _estimate(problem: dict, **settings):
    data = make_microarray(**problem["data"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        return es.estimate(data.X, data.y, 10, selector=default_selector(problem["trees"]), **{**RUN, **settings})


def _same_curve(a, b) -> None:
    for name in ("stability", "stability_std", "stability_lower", "stability_upper"):
        np.testing.assert_array_equal(a.curve[name].values, b.curve[name].values, err_msg=name)


def test_a_grown_layout_is_the_fixed_layout_it_grew_to():
    est = _estimate(CLIMBS, layout="adaptive")
    first, last = est.spending.rounds
    assert (first.copies, first.members, first.real_runs, first.next) == (20, 10, 200, Next.CLIMBS)
    assert (last.copies, last.members, last.real_runs, last.next) == (20, 20, 400, Next.KEPT)
    assert est.real_runs == 400 and est.self_check.sizes == (20,) and est.spending.reached is None
    assert "member split is off by 1.8 SE (more than 1.5): the curve still climbs" in est.spending.because
    sentence = est.spending.sentence()
    assert sentence.startswith("Layout: a first round of 20 real ensemble copies of 10 weak selectors (200 runs);")
    assert sentence.endswith("so every copy grew to 20: 400 real runs in all.") and sentence in est.summary()
    # Every round's estimate is the one a single run of its design gives, bit for bit.
    _same_curve(est, _estimate(CLIMBS, copies=20, members=20))
    d = est.to_dict()["spending"]
    assert set(d) == {"because", "at", "rounds"} and d["at"] == 1000 and len(d["rounds"]) == 2
    assert est.to_dataset().attrs["spending"] == sentence and "spending_reached" not in est.to_dataset().attrs


def test_a_settled_first_round_is_kept():
    est = _estimate(SETTLED, layout="adaptive")
    (only,) = est.spending.rounds
    assert (only.copies, only.members, only.real_runs, only.next) == (20, 10, 200, Next.KEPT)
    assert est.spending.because == "" and "the curve had settled where measured" in est.spending.sentence()
    _same_curve(est, _estimate(SETTLED, copies=20, members=10))
    # The fixed layout, the default, has no layout rounds to tell.
    assert _estimate(SETTLED).spending is None


def test_sizes_the_first_round_measures_leave_nothing_to_decide():
    est = _estimate(CLIMBS, layout="adaptive", m_ensemble=(1, 5, 10))
    assert est.real_runs == 200 and est.spending is None


def test_a_grown_layout_asked_again_reads_every_run_from_the_cache(tmp_path, caplog):
    data = make_microarray(**CLIMBS["data"])
    settings = EstimateSettings(n_feature=300, n_target=10, m_ensemble=RUN["m_ensemble"], layout="adaptive")
    cache = RunCache.open(tmp_path, data.X, data.y, make_scorer(default_selector(CLIMBS["trees"])))

    def all_cached() -> bool:  # what the estimate asks before it starts a cluster (a client running aside)
        return every_run_cached(cache, settings, 300)

    assert not all_cached()
    _estimate(CLIMBS, layout="adaptive", m_ensemble=(1, 5, 10), cache_dir=tmp_path)  # the first round alone
    assert not all_cached()  # it may grow: a cluster would make the rest
    _estimate(CLIMBS, layout="adaptive", cache_dir=tmp_path)
    assert all_cached()  # grown: nothing left to run, no cluster
    with caplog.at_level(logging.INFO, logger="ensstab_dask.cache"):
        again = _estimate(CLIMBS, layout="adaptive", cache_dir=tmp_path)
    assert again.real_runs == 400 and again.cost.runs.made == 0 and again.cost.runs.reused == 400
    assert "reused 400 real runs" in caplog.text and "(ran 0)" in caplog.text


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(layout="adaptive", model="random-effects"), "layout: 'adaptive' grows the real ensemble copies of"),
        (dict(layout="grown"), "layout must be one of 'fixed', 'adaptive'"),
        (dict(members=3), "members must be >= 4; got 3"),
        (dict(members=8, model="onda"), "members: model='onda' measures no real ensemble copies"),
    ],
)
def test_layout_settings_are_refused_in_their_own_words(settings, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        es.estimate(np.zeros((20, 30)), np.repeat([0, 1], 10), 5, **settings)


def _curve(point: float, se: float, band: float, largest: int = 200) -> xr.Dataset:
    m = [1, 10, largest]
    return xr.Dataset(
        {
            "stability": ("m_ensemble", [0.1, 0.3, point]),
            "stability_std": ("m_ensemble", [0.01, 0.01, se]),
            "stability_band": ("m_ensemble", [0.0, 0.0, band]),
        },
        coords={"m_ensemble": m},
    )


def _check(z: float) -> SelfCheck:
    return SelfCheck(
        sizes=(10,),
        predicted=np.array([0.3 + z * 0.01]),
        measured=np.array([0.3]),
        se=np.array([0.01]),
        copies=20,
        members=10,
        held_out="",
    )


@pytest.mark.parametrize(
    "curve, z, grows",
    [
        (_curve(0.5, 0.02, 0.9 * GROW_BAND * 0.02), 0.9 * GROW_SPLIT_Z, False),
        (_curve(0.5, 0.02, 1.1 * GROW_BAND * 0.02), 0.0, True),  # the band: the measured sizes cannot tell
        (_curve(0.5, 0.02, 0.0), -1.1 * GROW_SPLIT_Z, True),  # the member split: the law's shape is wrong
        (_curve(np.nan, np.nan, np.nan), np.nan, True),  # no curve: more runs may tell it from chance
        (_curve(0.5, 0.02, 1.0, largest=10), 5.0, False),  # every size asked is measured
    ],
)
def test_the_rule_grows_on_the_split_or_the_band(curve, z, grows):
    grown = get_model("anchored").grown_design((20, 10), curve, _check(z))
    assert (grown is not None) == grows
    if grows:
        assert grown[0] == (20, 20) and grown[1]


def test_the_command_line_offers_the_adaptive_layout(tmp_path, capsys):
    data = make_microarray(**CLIMBS["data"])
    options = "--n-target 10 --m-ensemble 1,5,1000 --n-boot 20 --n-estimators 3 --layout adaptive --quiet"
    d = cli_estimate(tmp_path, capsys, data.X, data.y, *options.split())
    assert d["settings"]["layout"] == "adaptive" and d["real_runs"] == 400
    assert [(r["copies"], r["members"]) for r in d["spending"]["rounds"]] == [(20, 10), (20, 20)]
    assert "every copy grew to 20: 400 real runs in all" in capsys.readouterr().out
