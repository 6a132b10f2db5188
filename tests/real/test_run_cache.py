"""The real-run cache: what its key follows, a pool or a design of copies grown from the
cache equal to the one made at once, and a damaged entry recomputed and said."""

import logging

import numpy as np
import pytest
import xarray as xr
from sklearn.tree import DecisionTreeClassifier

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.outputs import CHECKSUM_ATTR
from ensstab_dask.real.datasets import make_microarray
from ensstab_dask.real.run_cache import RunCache, selector_key
from ensstab_dask.real.runs import Copies, Pool, check_plan_classes, real_run_plan
from ensstab_dask.real.selectors import default_selector, make_scorer
from ensstab_dask.seeding import Stage, Stream, derive

DATA = make_microarray(n_feature=60, n_samples=30, seed=0)
TREE = DecisionTreeClassifier(max_depth=3)


def _fresh(plan, selector=TREE):
    return real_run_plan(DATA.X, DATA.y, plan, selector=make_scorer(selector), client="synchronous", progress=False)


def _cached(cache, plan, selector=TREE):
    return cache.run(plan, DATA.X.shape[1], lambda items: _fresh(items, selector))


def test_the_key_follows_data_selector_seed_and_kind_not_the_size_asked(tmp_path):
    cache = RunCache.open(tmp_path, DATA.X, DATA.y, TREE)
    seed = derive(0, Stream.ESTIMATE, Stage.COPIES)
    key = cache.key(Copies(10, 20, seed))
    # Every size and block of one design, and n_target (not part of a run), share the entry.
    assert key == cache.key(Copies(3, 5, seed)) == cache.key(Copies(2, 4, seed, first_copy=10, first_member=3))
    assert key == RunCache.open(tmp_path, DATA.X.copy(order="F"), DATA.y, TREE).key(Copies(10, 20, seed))
    assert key != cache.key(Copies(10, 20, derive(1, Stream.ESTIMATE, Stage.COPIES)))  # another seed
    assert key != cache.key(Copies(10, 20, seed, layout="independent"))
    assert cache.key(Pool(5, "half", seed)) != cache.key(Pool(5, "bootstrap", seed)) != key
    X2 = DATA.X.copy()
    X2[0, 0] += 1e-9
    assert key != RunCache.open(tmp_path, X2, DATA.y, TREE).key(Copies(10, 20, seed))
    assert key != RunCache.open(tmp_path, DATA.X, DATA.y, DecisionTreeClassifier(max_depth=4)).key(Copies(10, 20, seed))
    # The random_state each run overrides does not split the cache; a scorer is keyed by its estimator.
    assert selector_key(DecisionTreeClassifier(max_depth=3, random_state=7)) == selector_key(TREE)
    assert selector_key(make_scorer(TREE)) == selector_key(TREE)
    assert selector_key(None) == selector_key(default_selector()) != selector_key(default_selector(10))


def test_a_plain_callable_is_not_cached_and_the_folder_is_checked(tmp_path):
    assert selector_key(lambda X, y, rng: np.zeros(X.shape[1])) is None
    assert RunCache.open(tmp_path, DATA.X, DATA.y, lambda X, y, rng: np.zeros(X.shape[1])) is None
    with pytest.raises(InvalidParameterError, match="cache_dir: directory .* does not exist"):
        RunCache.open(tmp_path / "nope", DATA.X, DATA.y, TREE)


def test_a_pool_and_copies_grown_from_the_cache_are_the_runs_made_at_once(tmp_path):
    seed = derive(3, Stream.ESTIMATE, Stage.REAL)
    cache = RunCache.open(tmp_path, DATA.X, DATA.y, TREE)
    assert cache is not None
    (five,) = _cached(cache, [Pool(5, "half", seed)])
    assert (cache.reused, cache.fresh) == (0, 5)
    (eight,) = _cached(cache, [Pool(8, "half", seed)])
    assert (cache.reused, cache.fresh) == (5, 8)  # only runs 5 .. 7 were made
    (want,) = _fresh([Pool(8, "half", seed)])
    assert eight.dtype == want.dtype and np.array_equal(eight, want) and np.array_equal(five, want[:5])
    # Copies: 3 of 4, then the blocks a precision round adds (new members, new copies) from the cache.
    cseed = derive(3, Stream.ESTIMATE, Stage.COPIES)
    _cached(cache, [Copies(3, 4, cseed)])
    blocks = [Copies(3, 2, cseed, first_member=4), Copies(2, 6, cseed, first_copy=3)]
    before = cache.fresh
    got = _cached(cache, blocks)
    assert cache.fresh - before == 3 * 2 + 2 * 6  # the two blocks once each, not once per item
    for g, w in zip(got, _fresh(blocks)):
        assert np.array_equal(g, w)
    (whole,) = _cached(cache, [Copies(5, 6, cseed)])
    assert np.array_equal(whole, _fresh([Copies(5, 6, cseed)])[0])
    assert len(list(tmp_path.glob("runs-*.nc"))) == 2  # one entry per pool, one per design


def test_copies_asked_in_another_shape_make_only_the_runs_they_lack(tmp_path):
    """10 copies of 20 (the fixed layout), then 20 copies of 10 (the adaptive layout's first
    round): the second makes the 100 runs of copies 10..19, not a full 20 x 20 (200), and
    made + reused is what it used; a forged members_made is refused."""
    seed = derive(4, Stream.ESTIMATE, Stage.COPIES)
    cache = RunCache.open(tmp_path, DATA.X, DATA.y, TREE)
    _cached(cache, [Copies(10, 20, seed)])
    (wide,) = _cached(cache, [Copies(20, 10, seed)])
    assert (cache.fresh, cache.reused) == (200 + 100, 100)
    assert np.array_equal(wide, _fresh([Copies(20, 10, seed)])[0])
    (back,) = _cached(cache, [Copies(10, 20, seed)])
    assert (cache.fresh, cache.reused) == (300, 300)  # nothing made: the first ten copies hold 20 members
    (grown,) = _cached(cache, [Copies(20, 20, seed)])
    assert (cache.fresh, cache.reused) == (400, 600)  # only the 100 members copies 10..19 lacked
    assert np.array_equal(grown, _fresh([Copies(20, 20, seed)])[0])
    path = cache.path(Copies(20, 20, seed))
    with xr.open_dataset(path) as ds:
        assert ds["members_made"].values.tolist() == [20] * 20


@pytest.mark.parametrize("made, why", [([25] * 3, "not from 0 to its"), ([2] * 3, "a run not made holds ranks")])
def test_a_forged_members_made_is_refused(tmp_path, caplog, made, why):
    seed = derive(5, Stream.ESTIMATE, Stage.COPIES)
    cache = RunCache.open(tmp_path, DATA.X, DATA.y, TREE)
    (want,) = _cached(cache, [Copies(3, 4, seed)])
    path = cache.path(Copies(3, 4, seed))
    _rewritten(path, lambda ds: ds.assign(members_made=("copy", np.array(made, dtype=np.int32))))
    with caplog.at_level(logging.WARNING, logger="ensstab_dask.cache"):
        (again,) = _cached(cache, [Copies(3, 4, seed)])
    assert np.array_equal(again, want) and cache.fresh == 24
    (said,) = [r.getMessage() for r in caplog.records if r.name == "ensstab_dask.cache"]
    assert why in said and said.endswith("; recomputing it")


def _flip_a_rank(path, ranks: np.ndarray) -> None:
    """Flip one byte of the stored ranks (int32), where the file holds them."""
    raw = bytearray(path.read_bytes())
    at = raw.find(np.ascontiguousarray(ranks[:4], dtype=np.int32).tobytes())
    assert at > 0
    raw[at] ^= 0x01
    path.write_bytes(bytes(raw))


def test_a_damaged_entry_is_recomputed_and_said(tmp_path, caplog):
    seed = derive(4, Stream.ESTIMATE, Stage.REAL)
    cache = RunCache.open(tmp_path, DATA.X, DATA.y, TREE)
    (want,) = _cached(cache, [Pool(6, "half", seed)])
    path = cache.path(Pool(6, "half", seed))
    _flip_a_rank(path, want.ravel())
    with caplog.at_level(logging.WARNING, logger="ensstab_dask.cache"):
        (again,) = _cached(cache, [Pool(6, "half", seed)])
    assert np.array_equal(again, want) and cache.fresh == 12
    (said,) = [r.getMessage() for r in caplog.records if r.name == "ensstab_dask.cache"]
    assert (
        said
        == f"cache entry {path} not reused: it fails its checksum (the file was changed or damaged); recomputing it"
    )
    # The entry was replaced by the recomputed runs: reused next time, unwarned.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ensstab_dask.cache"):
        _cached(cache, [Pool(6, "half", seed)])
    assert cache.fresh == 12 and not caplog.records


def test_an_entry_without_a_checksum_or_unreadable_is_recomputed(tmp_path, caplog):
    import xarray as xr

    seed = derive(5, Stream.ESTIMATE, Stage.REAL)
    cache = RunCache.open(tmp_path, DATA.X, DATA.y, TREE)
    (want,) = _cached(cache, [Pool(3, "half", seed)])
    path = cache.path(Pool(3, "half", seed))
    with xr.open_dataset(path) as ds:
        bare = ds.load()
    del bare.attrs[CHECKSUM_ATTR]
    bare.to_netcdf(path)
    with caplog.at_level(logging.WARNING, logger="ensstab_dask.cache"):
        assert np.array_equal(_cached(cache, [Pool(3, "half", seed)])[0], want)
    path.write_bytes(b"not a netCDF file")
    with caplog.at_level(logging.WARNING, logger="ensstab_dask.cache"):
        assert np.array_equal(_cached(cache, [Pool(3, "half", seed)])[0], want)
    said = [r.getMessage() for r in caplog.records if r.name == "ensstab_dask.cache"]
    assert "it has no checksum" in said[0] and "it cannot be read" in said[1] and len(said) == 2


def test_a_class_too_small_for_the_copies_is_named_with_its_count():
    y = np.array([0] * 5 + [1] * 5 + [2])
    with pytest.raises(InvalidParameterError) as err:
        check_plan_classes(y, [Copies(10, 20)])
    said = str(err.value)
    assert "class 2 of y has 1" in said and "the real ensemble copies (layout 'bagging'" in said
    assert "needs" not in said and "resample=" not in said  # the default's copies do not blame a --resample
    with pytest.raises(InvalidParameterError, match=r"resample=0\.25 needs at least 4 samples of every class"):
        check_plan_classes(np.repeat([0, 1], [8, 3]), [Copies(2, 2), Pool(3, 0.25)])
    check_plan_classes(y, [Copies(2, 2, layout="independent-full")])  # all the data: every class kept
    assert "task='regression'" not in said  # three classes read as classes


def test_many_whole_number_labels_are_refused_with_the_regression_hint():
    # A count as y (scanpy's n_genes): many whole-number values, some seen once.
    y = np.arange(40) % 13 * 100 + 900
    y[-1] = 1018
    with pytest.raises(InvalidParameterError) as err:
        check_plan_classes(y, [Copies(10, 20)])
    said = str(err.value)
    assert "class 1018 of y has 1: drop or merge that class; or, if y is a quantity (14 whole-number values" in said
    assert said.endswith("pass task='regression'")


def test_text_labels_have_one_digest_in_every_process():
    """Labels as pandas reads them (an object array): their digest is their values', not their
    pointers', so equal labels built apart key one entry."""
    from ensstab_dask.real.cache_files import data_digest

    X = np.zeros((4, 3))
    a = np.array(["tumour", "normal", "tumour", "normal"], dtype=object)
    b = np.array(["".join(["tum", "our"]), "normal", "tumour", "normal"], dtype=object)
    assert data_digest(X, a) == data_digest(X, b)
    assert data_digest(X, a) != data_digest(X, a[::-1].copy())


def _rewritten(path, change) -> None:
    """The entry at ``path`` changed by ``change(ds)`` and sealed again (tests/faults.py's forge)."""
    from faults import forge

    forge(path, change)


def _swap_two_runs(ds):
    ranks = ds["ranks"].values.copy()
    ranks[[0, 1]] = ranks[[1, 0]]
    return ds.assign(ranks=(ds["ranks"].dims, ranks, ds["ranks"].attrs))


def _ranks(values):
    """A change that sets every rank to ``values`` and seals the runs' digests again too."""

    def change(ds):
        from ensstab_dask.real.run_cache import run_digests

        ranks = np.broadcast_to(np.asarray(values, dtype=np.int32), ds["ranks"].shape).copy()
        digests = run_digests(str(ds.attrs["key"]), ranks)
        return ds.assign(ranks=(ds["ranks"].dims, ranks), run_digest=(ds["run_digest"].dims, digests))

    return change


def _ranks_as_floats(ds):
    return ds.assign(ranks=ds["ranks"].astype(np.float64))


def _one_rank_huge(ds):
    ranks = ds["ranks"].values.copy()
    ranks[0, 0] = 10**6
    return _ranks(ranks)(ds)


@pytest.mark.parametrize(
    "change, why",
    [
        (_swap_two_runs, "its runs do not match their digests (a run was changed or moved)"),
        (_ranks(0), "a run's ranks are not a permutation of 1 .. 60"),
        (_one_rank_huge, "a run's ranks are not a permutation of 1 .. 60"),
        (lambda ds: ds.assign_attrs(seed="[1, [], 4]"), "it records another seed than this estimate's"),
        (lambda ds: ds.drop_vars("run_digest"), "it holds other runs than its name says"),
        (_ranks_as_floats, "its ranks or digests are not integers"),
        (lambda ds: ds.assign_attrs(seconds_per_run="abc"), "its seconds_per_run is not a time"),
        (lambda ds: ds.assign_attrs(seconds_per_run=-1e9), "its seconds_per_run is not a time"),
        (lambda ds: ds.assign_attrs(seconds_per_run=np.inf), "its seconds_per_run is not a time"),
    ],
    ids=[
        "two runs swapped",
        "every rank 0",
        "a rank of 10**6",
        "another seed",
        "no digests",
        "ranks as float64",
        "seconds 'abc'",
        "seconds -1e9",
        "seconds inf",
    ],
)
def test_a_forged_entry_with_a_valid_checksum_is_recomputed_and_said(tmp_path, caplog, change, why):
    seed = derive(6, Stream.ESTIMATE, Stage.REAL)
    cache = RunCache.open(tmp_path, DATA.X, DATA.y, TREE)
    (want,) = _cached(cache, [Pool(4, "half", seed)])
    path = cache.path(Pool(4, "half", seed))
    _rewritten(path, change)
    with caplog.at_level(logging.WARNING, logger="ensstab_dask.cache"):
        (again,) = _cached(cache, [Pool(4, "half", seed)])
    assert np.array_equal(again, want) and cache.fresh == 8
    (said,) = [r.getMessage() for r in caplog.records if r.name == "ensstab_dask.cache"]
    assert said.startswith(f"cache entry {path} not reused: {why}") and said.endswith("; recomputing it")


def test_another_data_sets_runs_under_this_key_are_not_reused(tmp_path, caplog):
    """An entry of other data copied under this data's name, its key and checksum rewritten:
    its record of the data it was made from gives it away."""
    seed = derive(7, Stream.ESTIMATE, Stage.REAL)
    other = make_microarray(n_feature=60, n_samples=30, seed=1)
    mine, theirs = RunCache.open(tmp_path, DATA.X, DATA.y, TREE), RunCache.open(tmp_path, other.X, other.y, TREE)
    theirs.run([Pool(4, "half", seed)], 60, lambda items: [np.tile(np.arange(1, 61), (4, 1))])
    path = mine.path(Pool(4, "half", seed))
    theirs.path(Pool(4, "half", seed)).rename(path)
    _rewritten(path, lambda ds: ds.assign_attrs(key=mine.key(Pool(4, "half", seed))))
    with caplog.at_level(logging.WARNING, logger="ensstab_dask.cache"):
        (runs,) = _cached(mine, [Pool(4, "half", seed)])
    assert np.array_equal(runs, _fresh([Pool(4, "half", seed)])[0]) and mine.fresh == 4
    (said,) = [r.getMessage() for r in caplog.records if r.name == "ensstab_dask.cache"]
    assert "it records another data_digest than this estimate's (made from other data)" in said


@pytest.mark.parametrize("thing", ["link loop", "folder", "fifo"])
def test_something_in_an_entrys_place_is_said_and_the_runs_are_returned(tmp_path, caplog, thing):
    """A cache is never a reason to fail: the runs are made, returned, and the entry's place
    left as it was, with a warning."""
    import os

    seed = derive(8, Stream.ESTIMATE, Stage.REAL)
    cache = RunCache.open(tmp_path, DATA.X, DATA.y, TREE)
    path = cache.path(Pool(3, "half", seed))
    {"link loop": lambda: path.symlink_to(path.name), "folder": path.mkdir, "fifo": lambda: os.mkfifo(path)}[thing]()
    with caplog.at_level(logging.WARNING, logger="ensstab_dask.cache"):
        (runs,) = _cached(cache, [Pool(3, "half", seed)])
    assert np.array_equal(runs, _fresh([Pool(3, "half", seed)])[0]) and cache.fresh == 3
    said = [r.getMessage() for r in caplog.records if r.name == "ensstab_dask.cache"]
    place = {"link loop": "a symbolic link that leads back to itself", "folder": "a folder", "fifo": "a FIFO"}[thing]
    assert said[-1].startswith(f"cache entry {path} not written ({place}") and said[-1].endswith("going on without it")
    assert os.path.lexists(path)  # left as it was
