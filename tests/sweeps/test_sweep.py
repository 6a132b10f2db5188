"""Sweeps: schema, determinism across batching and schedulers, stores, resume, CLI."""

import logging
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import dask
import distributed  # noqa: F401 - its config defaults, before any dask.config.set
import numpy as np
import pytest
import xarray as xr
from pace import Pace
from sweep_cases import GRID, VARS, K, N, assert_same, wait_for_blocks

import ensstab_dask as es
import ensstab_dask.accessor  # noqa: F401 - registers ds.ensstab
from ensstab_dask.cli import main as cli_main
from ensstab_dask.sweeps.storage import SweepStore


@pytest.fixture(scope="module")
def reference():
    return es.sweep(N, K, client="synchronous", progress=False, **GRID)


def test_schema_and_every_draw_on_its_documented_stream(reference):
    ds = reference
    assert dict(ds.sizes) == {"n_useful": 3, "p": 3, "m_ensemble": 2, "repeat": 3}
    for v in VARS:
        # Dimensionless values carry no units (xarray's convention); counts carry theirs.
        assert v in ds and ds[v].attrs["long_name"] and ds[v].attrs.get("units") != "1"
    assert ds["stability"].dims == ("n_useful", "p", "m_ensemble")
    assert ds["stability_draws"].dims == ("n_useful", "p", "m_ensemble", "repeat")
    for c in ("n_useful", "p", "m_ensemble", "n_runs", "repeat"):
        assert ds[c].attrs["long_name"]
    # n_runs=None: n_runs equals m_ensemble in each cell.
    assert list(ds["n_runs"].values) == [1, 4]
    for key in ("n_feature", "n_target", "m_stability", "n_runs", "repeats", "aggregate", "index", "seed"):
        assert key in ds.attrs
    assert ds.attrs["n_runs"] == "m_ensemble" and ds.attrs["seed"] == 7
    for key in ("ensstab_dask_version", "numpy_version", "dask_version", "created"):
        assert ds.attrs[key]
    assert not ds["stability"].isnull().any()
    # Every draw of every cell is the library call on the stream the module docstring
    # documents (repeat r: derive(seed, SWEEP_STABILITY, m, r) and derive(seed,
    # SWEEP_N_USEFUL_V, n_runs, r)), stored at its own (n_useful, p, m_ensemble, repeat);
    # and the summaries of each cell are the mean and s.d. of those direct calls.
    from ensstab_dask.seeding import Stream, derive

    for m in GRID["m_ensemble"]:
        n_runs = m  # n_runs=None
        for u in GRID["n_useful"]:
            for p in GRID["p"]:
                stab = [
                    es.simulated_stability(
                        N,
                        K,
                        u,
                        p,
                        m_ensemble=m,
                        m_stability=GRID["m_stability"],
                        seed=derive(7, Stream.SWEEP_STABILITY, m, r),
                    )
                    for r in range(GRID["repeats"])
                ]
                nuv = [
                    es.simulated_n_useful(N, K, u, p, n_runs=n_runs, seed=derive(7, Stream.SWEEP_N_USEFUL_V, n_runs, r))
                    for r in range(GRID["repeats"])
                ]
                cell = ds.sel(n_useful=u, p=p, m_ensemble=m)
                where = f"u={u}, p={p}, m={m}"
                np.testing.assert_array_equal(cell["stability_draws"].values, stab, err_msg=where)
                np.testing.assert_array_equal(cell["n_useful_v_draws"].values, nuv, err_msg=where)
                assert cell["stability"].item() == pytest.approx(np.mean(stab), rel=1e-12, abs=1e-15), where
                assert cell["stability_std"].item() == pytest.approx(np.std(stab, ddof=1), rel=1e-9, abs=1e-15), where
                assert cell["n_useful_v"].item() == pytest.approx(np.mean(nuv), rel=1e-12), where
                assert cell["n_useful_v_std"].item() == pytest.approx(np.std(nuv, ddof=1), rel=1e-9, abs=1e-12), where
    # The repeats are distinct draws: a stream that ignored r would give an s.d. of 0 (as
    # only the cells where every ensemble picks all n_useful = n_target features have).
    assert ((ds["stability_std"] > 0) | (ds["stability"] == 1)).all()


def test_cells_equal_direct_library_calls(reference):
    from ensstab_dask.seeding import Stream, derive

    u, p, m, r = 25, 0.6, 4, 2
    direct = es.simulated_stability(
        N, K, u, p, m_ensemble=m, m_stability=12, seed=derive(7, Stream.SWEEP_STABILITY, m, r)
    )
    assert reference["stability_draws"].sel(n_useful=u, p=p, m_ensemble=m, repeat=r).item() == direct


@pytest.mark.parametrize("batch_size", [1, 2, 5, 1000])
def test_identical_across_batch_sizes(reference, batch_size):
    assert_same(reference, es.sweep(N, K, client="synchronous", batch_size=batch_size, progress=False, **GRID))


def test_identical_on_a_two_process_cluster(reference, two_process_client):
    ds = es.sweep(N, K, client=two_process_client, batch_size=2, progress=False, **GRID)
    assert_same(reference, ds)


def test_identical_on_local_threads(reference):
    assert_same(reference, es.sweep(N, K, client="threads", progress=False, **GRID))


def test_cell_results_do_not_depend_on_the_rest_of_the_grid(reference):
    small = es.sweep(N, K, client="synchronous", progress=False, **dict(GRID, n_useful=[25], p=[0.9], m_ensemble=[4]))
    np.testing.assert_array_equal(
        small["stability_draws"].squeeze(["n_useful", "p", "m_ensemble"]).values,
        reference["stability_draws"].sel(n_useful=25, p=0.9, m_ensemble=4).values,
    )


def test_store_roundtrip_and_resume_without_recompute(reference, tmp_path, caplog, two_process_client):
    store = tmp_path / "s.zarr"
    ds = es.sweep(N, K, store=store, client=two_process_client, batch_size=1, progress=False, **GRID)
    assert_same(reference, ds)
    with caplog.at_level(logging.INFO, logger="ensstab_dask.sweep"):
        again = es.sweep(N, K, store=store, client="synchronous", progress=False, **GRID)
    assert "computing 0 of 18 cells" in caplog.text
    assert_same(reference, again)


class Interrupt(Exception):
    pass


def test_a_costly_cell_is_split_into_runs_of_its_repeats_and_no_number_moves():
    """A one-cell sweep (the estimate's prediction) spreads its largest cell's repeats over
    tasks when held in memory; a store's blocks keep whole cells (its flags are per cell)."""
    from ensstab_dask.sweeps.sweep import SweepRequest, make_plan

    grid = dict(n_useful=[25], p=[0.6], m_ensemble=[1, 9], m_stability=12, repeats=8, seed=7)
    plan = make_plan(SweepRequest(N, K, **grid))
    split = plan.blocks(split_repeats=True)
    assert {(b.r0, b.r1) for b in split if b.im == 1} != {(0, None)}
    for im in (0, 1):  # every repeat of every cell in exactly one block
        covered = [r for b in split if b.im == im for r in range(b.r0, 8 if b.r1 is None else b.r1)]
        assert sorted(covered) == list(range(8))
    assert all((b.r0, b.r1) == (0, None) for b in plan.blocks())
    assert_same(
        es.sweep(N, K, client="synchronous", progress=False, **grid),
        es.sweep(N, K, client="synchronous", progress=False, batch_size=1, **grid),
    )


def test_interrupted_sweep_resumes_with_only_missing_blocks(reference, tmp_path, caplog, monkeypatch):
    store = tmp_path / "s.zarr"
    writes = {"n": 0}
    original = SweepStore.write_block

    def dying_write(self, data, region):
        writes["n"] += 1
        if writes["n"] == 4:
            # Die in the middle of a block: data written, completion not recorded.
            data.to_zarr(self.path, region=region, consolidated=False)
            raise Interrupt
        original(self, data, region)

    monkeypatch.setattr(SweepStore, "write_block", dying_write)
    with pytest.raises(Interrupt):
        es.sweep(N, K, store=store, client="synchronous", batch_size=1, progress=False, **GRID)
    monkeypatch.setattr(SweepStore, "write_block", original)
    done = SweepStore(store).completed()
    assert done.sum() == 3  # three one-cell blocks recorded, the fourth not trusted
    with caplog.at_level(logging.INFO, logger="ensstab_dask.sweep"):
        ds = es.sweep(N, K, store=store, client="synchronous", batch_size=1, progress=False, **GRID)
    assert "computing 15 of 18 cells" in caplog.text
    assert_same(reference, ds)


@pytest.mark.slow
def test_killed_process_resumes(reference, tmp_path, caplog):
    # A real process SIGKILLed in the middle of a sweep with a store.
    store = tmp_path / "k.zarr"
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import time
            import ensstab_dask as es
            from ensstab_dask.sweeps.storage import SweepStore

            # Slow storage, so that the test reliably kills the run half way, however
            # fast the machine: the results do not depend on it.
            write = SweepStore.write_block
            def slow_write(self, data, region):
                write(self, data, region)
                time.sleep(0.25)
            SweepStore.write_block = slow_write

            if __name__ == "__main__":
                es.sweep({N}, {K}, store={str(store)!r}, client="synchronous", batch_size=1, progress=False,
                         **dict({GRID!r}, m_stability=40))
            """
        )
    )
    proc = subprocess.Popen([sys.executable, str(script)])
    try:
        wait_for_blocks(store, 3, lambda: proc.poll() is None)
        assert proc.poll() is None, "the sweep finished before it could be killed: make it longer"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    done = int(SweepStore(store).completed().sum())
    assert 3 <= done < 18
    with caplog.at_level(logging.INFO, logger="ensstab_dask.sweep"):
        ds = es.sweep(N, K, store=store, client="synchronous", progress=False, **dict(GRID, m_stability=40))
    assert f"computing {18 - done} of 18 cells" in caplog.text
    full = es.sweep(N, K, client="synchronous", progress=False, **dict(GRID, m_stability=40))
    assert_same(full, ds)


def test_mismatched_store_is_refused_and_untouched(tmp_path):
    store = tmp_path / "m.zarr"
    es.sweep(N, K, store=store, client="synchronous", progress=False, **dict(GRID, m_ensemble=[1]))

    def snapshot():
        return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}

    before = snapshot()
    with pytest.raises(
        es.StoreMismatch, match=r"m_stability: 12 in the store, 20 requested; .*seed: 7 in the store, 8"
    ):
        es.sweep(
            N,
            K,
            store=store,
            client="synchronous",
            progress=False,
            **dict(GRID, m_ensemble=[1], m_stability=20, seed=8),
        )
    with pytest.raises(es.StoreMismatch, match=r"p: \[0.3, 0.6, 0.9\] in the store, \[0.3, 0.6\] requested"):
        es.sweep(N, K, store=store, client="synchronous", progress=False, **dict(GRID, m_ensemble=[1], p=[0.3, 0.6]))
    assert snapshot() == before


def test_not_a_store_is_refused(tmp_path):
    (tmp_path / "x.zarr").mkdir()
    (tmp_path / "x.zarr" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a readable zarr store|not an ensstab sweep store"):
        es.sweep(N, K, store=tmp_path / "x.zarr", client="synchronous", progress=False, **GRID)
    assert (tmp_path / "x.zarr" / "notes.txt").read_text() == "mine"


def test_calibration_finds_the_cell_that_generated_the_observations():
    # Observations drawn independently (other seed, more runs) at a known (u, p).
    n_feature, n_target, u_true, p_true, n_runs = 1000, 10, 40, 0.7, 20
    real_stab = es.simulated_stability(n_feature, n_target, u_true, p_true, m_stability=400, seed=123)
    nuv = [es.simulated_n_useful(n_feature, n_target, u_true, p_true, n_runs=n_runs, seed=s) for s in range(100)]
    ds = es.sweep(
        n_feature,
        n_target,
        n_useful=[20, 40, 80, 160],
        p=[0.3, 0.5, 0.7, 0.9],
        m_ensemble=[1],
        n_runs=n_runs,
        m_stability=100,
        repeats=30,
        client="synchronous",
        progress=False,
    )
    # n_useful_v has sd ~5 here: 4 standard errors of the difference of the two means
    # (30 and 100 draws) is about 4.5 features.
    atol = 4 * float(np.std(nuv, ddof=1)) * np.sqrt(1 / 30 + 1 / 100)
    cal = ds.ensstab.calibrate(real_stab, float(np.mean(nuv)), stability_rtol=0.15, n_useful_atol=atol)
    assert bool(cal["consistent"].sel(n_useful=u_true, p=p_true))
    assert (cal.attrs["best_n_useful"], cal.attrs["best_p"]) == (u_true, p_true)
    assert ds.ensstab.best(real_stab, float(np.mean(nuv)), stability_rtol=0.15, n_useful_atol=atol) == (u_true, p_true)
    assert cal["consistent"].sum() < cal["consistent"].size  # the observations do discriminate


def test_best_warns_when_no_cell_is_consistent():
    """best returns the closest cell either way, and says so when it matches neither
    observation (calibrate reports none consistent); a consistent cell comes back silently."""
    import warnings

    from ensstab_dask.simulator.calibration import NoConsistentCellWarning

    ds = es.sweep(200, 5, n_useful=[10, 20, 40], p=[0.3, 0.6, 0.9], m_ensemble=[1], n_runs=10,
                  m_stability=10, repeats=2, client="synchronous", progress=False)  # fmt: skip
    cell = ds.sel(n_useful=20, p=0.6, m_ensemble=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoConsistentCellWarning)
        assert ds.ensstab.best(float(cell.stability), float(cell.n_useful_v)) == (20, 0.6)
    far = (float(cell.stability), float(cell.n_useful_v) + 100)  # no cell counts 100 more useful features
    cal = ds.ensstab.calibrate(*far)
    assert cal.attrs["any_consistent"] == 0
    with pytest.warns(NoConsistentCellWarning, match=r"no cell of the sweep is consistent .* returning the closest"):
        best = ds.ensstab.best(*far)
    assert best == (cal.attrs["best_n_useful"], cal.attrs["best_p"])
    assert issubclass(NoConsistentCellWarning, es.EnsstabWarning)


def test_calibration_needs_the_right_slices(reference):
    with pytest.raises(ValueError, match="n_runs must be given"):
        reference.ensstab.calibrate(0.1, 12)
    with pytest.raises(ValueError, match="n_runs=7 is not in this sweep"):
        reference.ensstab.calibrate(0.1, 12, n_runs=7)
    with pytest.raises(ValueError, match="m_ensemble=1"):
        reference.sel(m_ensemble=[4]).ensstab.calibrate(0.1, 12, n_runs=4)
    cal = reference.ensstab.calibrate(0.1, 12, n_runs=4)
    assert set(cal.dims) == {"n_useful", "p"}


def test_cli_sweep_and_export_round_trip(reference, tmp_path, capsys):
    store, out = tmp_path / "c.zarr", tmp_path / "c.nc"
    args = ["sweep", "--n-feature", str(N), "--n-target", str(K), "--n-useful", "10:40:15", "--p", "0.3:0.9:0.3"]
    args += ["--m-ensemble", "1,4", "--m-stability", "12", "--repeats", "3", "--seed", "7", "--store", str(store)]
    assert cli_main(args + ["--scheduler", "synchronous", "--quiet"]) == 0
    assert cli_main(["export", str(store), str(out)]) == 0
    assert_same(reference, xr.open_dataset(out).load())
    # An existing output is never overwritten by accident.
    assert cli_main(["export", str(store), str(out)]) == 2
    assert "exists" in capsys.readouterr().err


def test_export_refuses_an_incomplete_store(tmp_path, monkeypatch):
    store = tmp_path / "i.zarr"

    def stop(self, data, region):
        raise Interrupt

    monkeypatch.setattr(SweepStore, "write_block", stop)
    with pytest.raises(Interrupt):
        es.sweep(N, K, store=store, client="synchronous", progress=False, **GRID)
    with pytest.raises(ValueError, match="incomplete"):
        es.export_netcdf(store, tmp_path / "i.nc")
    assert not (tmp_path / "i.nc").exists()


def test_unreachable_scheduler_fails_fast(busy_machine):
    pace = Pace()
    start = time.monotonic()
    with pytest.raises(es.SchedulerUnreachable, match="could not reach the Dask scheduler at tcp://127.0.0.1:9"):
        with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):  # as for distributed.Client
            es.sweep(N, K, client="tcp://127.0.0.1:9", progress=False, **GRID)
    # Connections refused and tried again until the timeout, and no longer.
    pace.assert_within(time.monotonic() - start, 2, what="a sweep on an address where nothing listens")


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:notaport", "bogus://x", "tcp://127.0.0.1", "tcp://:8786"])
def test_malformed_address_fails_at_once(address, busy_machine):
    pace = Pace()
    start = time.monotonic()
    with pytest.raises(ValueError, match="malformed scheduler address"):
        es.sweep(N, K, client=address, progress=False, **GRID)
    # Refused before any connection is tried: no wait at all.
    pace.assert_within(time.monotonic() - start, 0, what=f"a sweep on {address!r}")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_useful=[5]), re.escape("n_useful values must be in [10, 300]")),
        (dict(n_useful=[10, 10]), "n_useful has duplicate values"),
        (dict(p=[1.2]), re.escape("p values must be in [0.0, 1.0]")),
        (dict(m_ensemble=[0]), "m_ensemble values must be >= 1"),
        (dict(m_ensemble=[]), "m_ensemble must hold at least one value"),
        (dict(repeats=0), "repeats must be >= 1"),
        (dict(seed=-1), "seed must be in .0, 9223372036854775807."),
        (dict(batch_size=0), "batch_size must be >= 1"),
        (dict(aggregate="max"), "aggregate must be one of"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        es.sweep(N, K, client="synchronous", progress=False, **dict(GRID, **kwargs))


def test_local_default_workers_keep_glibc_malloc_defaults(monkeypatch):
    # Dask's MALLOC_TRIM_THRESHOLD_=65536 made the simulator 15-25 % slower.
    from distributed import Client

    from ensstab_dask.cluster import local_cluster

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # as an earlier default Dask cluster leaves it
    with local_cluster("processes", 1) as cluster, Client(cluster) as client:
        env = client.run(lambda: (os.environ.get("MALLOC_TRIM_THRESHOLD_"), os.environ.get("OMP_NUM_THREADS")))
    assert list(env.values()) == [(None, "1")]
    assert os.environ["MALLOC_TRIM_THRESHOLD_"] == "65536"  # restored for this process


def _drop_a_row(store) -> None:
    """Delete one chunk file of the draws (one n_useful row at one m_ensemble): its three
    cells are then recomputed, the other fifteen resumed."""
    chunk = sorted(p for p in (store / "stability_draws").rglob("*") if p.is_file() and p.name != "zarr.json")[0]
    chunk.unlink()


def test_the_resume_note_is_logged_not_printed(reference, tmp_path, capsys, caplog):
    store = tmp_path / "r.zarr"
    es.sweep(N, K, store=store, client="synchronous", progress=False, **GRID)
    _drop_a_row(store)
    capsys.readouterr()
    with caplog.at_level(logging.INFO, logger="ensstab_dask"):
        ds = es.sweep(N, K, store=store, client="synchronous", progress=True, **GRID)
    assert_same(reference, ds)
    assert capsys.readouterr().out == ""  # library code does not print
    notes = [r for r in caplog.records if r.getMessage().startswith("Resuming ")]
    assert len(notes) == 1 and notes[0].levelno == logging.INFO and notes[0].name == "ensstab_dask.sweep"
    assert notes[0].getMessage() == f"Resuming {store}: 15 cells already done, 3 to compute"


@pytest.mark.parametrize("busy", [0.0, 1.0])
def test_a_process_that_wrote_a_store_exits_without_a_word(tmp_path, busy):
    """zarr 3's exit handler waits 0.2 s for its IO thread to stop, then closes the loop
    anyway: on a loaded machine that thread had not run yet, and the run ended with
    "Thread did not finish cleanly" and a "Cannot close a running event loop" traceback.
    Here the load is zarr's loop kept busy for ``busy`` s as the process exits."""
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            import time
            import ensstab_dask as es

            es.sweep(200, 2, n_useful=[20], p=[0.5], m_ensemble=[1], m_stability=4, repeats=1, seed=1,
                     client="synchronous", progress=False, store={str(tmp_path / "s.zarr")!r})
            sync = sys.modules.get("zarr.core.sync")  # zarr 3's IO loop; zarr 2 has none
            if sync is not None and sync.loop[0] is not None:
                sync.loop[0].call_soon_threadsafe(time.sleep, {busy})
            """
        )
    )
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert (tmp_path / "s.zarr" / "zarr.json").is_file() or (tmp_path / "s.zarr" / ".zgroup").is_file()
