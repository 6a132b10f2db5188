"""What the CLI and the library write: whole files or none, readable modes, limits checked first."""

import contextlib
import json
import os
import stat
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
from faults import tmpfs_unavailable
from sweep_cases import tiny_sweep

import ensstab_dask as es
from ensstab_dask.cli import main as cli_main
from ensstab_dask.outputs import write_json, write_netcdf
from ensstab_dask.sweeps.storage import export_netcdf


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_outputs_get_the_umask_mode_also_when_overwritten(tmp_path, umask_022):
    ds = xr.Dataset({"a": ("x", [1.0, 2.0])})
    nc = write_netcdf(ds, tmp_path / "a.nc")
    js = write_json({"a": 1}, tmp_path / "a.json")
    assert mode(nc) == mode(js) == 0o644
    os.chmod(nc, 0o644)
    write_netcdf(ds, nc, overwrite=True)
    assert mode(nc) == 0o644  # not the temporary file's 0600


def test_store_and_report_folders_get_the_umask_mode(tmp_path, umask_022):
    from ensstab_dask.plotting.report import write_report

    ds = tiny_sweep([20, 40], [0.5, 0.9], [1, 3], store=tmp_path / "s.zarr")
    assert mode(tmp_path / "s.zarr") == 0o755
    write_netcdf(ds, tmp_path / "s.nc")
    index = write_report(tmp_path / "s.nc", tmp_path / "rep")
    assert mode(index.parent) == 0o755 and mode(index) == 0o644


def test_a_failed_json_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "e.json"
    path.write_text('{"old": true}')
    with pytest.raises(TypeError):
        write_json({"bad": object()}, path)
    assert json.loads(path.read_text()) == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.json"]  # no temporary file left


def test_export_refuses_to_write_into_its_own_store(tmp_path, capsys):
    store = tmp_path / "s.zarr"
    tiny_sweep([20], [0.5], [1], store=store)
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match="inside the store"):
        export_netcdf(store, store / "zarr.json", overwrite=True)
    assert cli_main(["export", str(store), str(store / "zarr.json"), "--overwrite"]) == 2
    assert "inside the store" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in store.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    "args",
    [
        ["sweep", "--n-feature", "300", "--n-target", "10", "--n-useful", "20", "--p", "0.5", "--seed", str(2**70)],
        ["estimate", "--seed", str(2**70)],
        ["simulate", "--seed", "-1"],
    ],
)
def test_seeds_that_cannot_be_stored_are_refused_at_once(args, capsys):
    assert cli_main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "seed" in err[0], err


def test_library_refuses_big_seeds_before_any_work():
    with pytest.raises(ValueError, match=r"seed must be in \[0, 9223372036854775807\]"):
        es.sweep(300, 10, n_useful=[20], p=[0.5], m_ensemble=[1], seed=2**70, client="synchronous", progress=False)
    with pytest.raises(ValueError, match="seed must be in"):
        es.estimate(np.zeros((10, 30)), np.arange(10) % 2, 5, seed=2**64, client="synchronous")


def _dead_pid():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_leftovers_of_killed_writers_are_cleaned_on_the_next_write(tmp_path):
    import socket
    import subprocess
    import sys

    host = socket.gethostname().replace(".", "_")
    dead = f"{_dead_pid()}@{host}"
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale_file = tmp_path / f".a.nc.{dead}.k3j.tmp"
        stale_file.write_bytes(b"half a file")
        busy_file = tmp_path / f".a.nc.{live.pid}@{host}.q9z.tmp"
        elsewhere = tmp_path / f".a.nc.{_dead_pid()}@another_host.q9z.tmp"
        elsewhere.write_bytes(b"written on another host")
        busy_file.write_bytes(b"being written")
        stale_store = tmp_path / f".S.zarr.{dead}.x1.tmp"
        (stale_store / "sub").mkdir(parents=True)
        write_netcdf(xr.Dataset({"a": ("x", [1.0])}), tmp_path / "a.nc")
        assert not stale_file.exists() and busy_file.exists()  # a live writer's file is left alone
        assert elsewhere.exists()  # another host's pid cannot be checked from here
        tiny_sweep([20], [0.5], [1], store=tmp_path / "S.zarr")
        assert not stale_store.exists()
    finally:
        live.kill()
        live.wait()


@pytest.mark.parametrize(
    "args, needle",
    [
        (["sweep", "--n-useful", "60", "--p", "0.5", "--m-ensemble", "1000000"], "m_ensemble=1000000"),
        (["sweep", "--n-useful", "60", "--p", "0.5", "--m-stability", str(10**9)], "m_stability=1000000000"),
        (["estimate", "--m-ensemble", "1,1000000"], "m_ensemble=1000000"),
    ],
)
def test_cells_too_big_for_memory_are_refused_at_once(args, needle, capsys):
    # Refused by the argument checks, before a cluster starts or a real run is made.
    assert cli_main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "GiB of memory" in err[0], err


@pytest.mark.parametrize("when", ["first child", "first worker"])
def test_ctrl_c_while_the_local_cluster_starts_exits_130_without_the_exit_hook_traceback(busy_machine, when):
    """Interrupted while its workers started, the CLI printed its line and then
    distributed's exit hook's traceback (AssertionError: Status.init). Run from a
    background job, it saw exit 0: the CLI inherited an ignored SIGINT (as_a_foreground_job).
    The signal lands as the first child appears (multiprocessing's resource tracker) or
    the first worker process: nothing but the one line either way."""
    import signal
    import subprocess
    import sys
    import time

    import psutil
    from busy import as_a_foreground_job

    def started() -> bool:
        children = psutil.Process(proc.pid).children()
        if when == "first child":
            return bool(children)
        with contextlib.suppress(psutil.Error):
            return any("spawn_main" in " ".join(child.cmdline()) for child in children)
        return False

    args = ["sweep", "--n-feature", "200", "--n-target", "10", "--n-useful", "10:13:1", "--p", "0.1:1.0:0.1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ensstab_dask.cli", *args, "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_a_foreground_job,
    )
    try:
        deadline = time.monotonic() + 120
        while not started() and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130 and err.strip() == "ensstab: interrupted", (proc.returncode, err[-2000:])


def _sweep_store(path, *, seed=0):
    es.sweep(
        300,
        10,
        n_useful=[20, 30],
        p=[0.3, 0.6, 0.9],
        m_ensemble=[1, 3, 5],
        m_stability=5,
        repeats=3,
        seed=seed,
        client="synchronous",
        progress=False,
        store=path,
    )
    return path


def _export_cmd(store, out):
    import sys

    return [sys.executable, "-m", "ensstab_dask.cli", "export", str(store), str(out), "--overwrite"]


@pytest.mark.slow
def test_a_full_disk_on_export_is_one_line_and_keeps_the_old_file(tmp_path):
    """The file-size limit (RLIMIT_FSIZE, with SIGXFSZ ignored) makes every write past
    it fail as a full disk does, in a real process: the export must fail in one line,
    leave the old file byte-identical and no temporary file behind."""
    import resource
    import signal
    import subprocess

    store = _sweep_store(tmp_path / "S.zarr")
    out = tmp_path / "out.nc"
    out.write_bytes(b"the previous export")
    limit = 2048  # far below the export's size, above anything Python writes on start-up

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        _export_cmd(store, out), preexec_fn=small_disk, env=env, capture_output=True, text=True, timeout=300
    )
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1 and err[0].startswith("ensstab: error:"), (proc.returncode, err)
    assert str(out) in err[0] and "disk full" in err[0], err[0]
    assert out.read_bytes() == b"the previous export"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary file left


@pytest.mark.slow
def test_an_export_killed_at_any_moment_leaves_the_old_file_or_the_new_one(tmp_path):
    """SIGKILL at spread-out moments of a real export: the target is always either the
    previous file, byte for byte, or the complete new one; the next run cleans up."""
    import signal
    import subprocess
    import time

    store = _sweep_store(tmp_path / "S.zarr")
    out = tmp_path / "out.nc"
    old = write_netcdf(
        tiny_sweep([20], [0.5], [1]),
        out,
    ).read_bytes()
    start = time.monotonic()
    subprocess.run(_export_cmd(store, tmp_path / "timing.nc"), check=True, capture_output=True, timeout=300)
    duration = time.monotonic() - start
    expected = xr.load_dataset(tmp_path / "timing.nc")
    outcomes = set()
    for fraction in np.linspace(0.3, 1.1, 7):
        out.write_bytes(old)
        proc = subprocess.Popen(_export_cmd(store, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(fraction * duration)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if out.read_bytes() == old:
            outcomes.add("old")
        else:
            xr.testing.assert_identical(xr.load_dataset(out), expected)
            outcomes.add("new")
    assert outcomes  # every kill left one of the two; which ones depends on timing
    subprocess.run(_export_cmd(store, out), check=True, capture_output=True, timeout=300)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # leftovers cleaned


def _without_warnings(fn):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    assert not caught, [f"{w.category.__name__}: {w.message}" for w in caught]
    return result


SMALL_SWEEP = dict(
    n_useful=[20, 30],
    p=[0.3, 0.9],
    m_ensemble=[1, 3],
    m_stability=5,
    repeats=2,
    seed=1,
    client="synchronous",
    progress=False,
)


def test_a_sweep_store_opens_lazily_without_warnings_and_verifies(tmp_path, capsys):
    store = tmp_path / "s.zarr"
    _without_warnings(lambda: es.sweep(300, 10, store=store, **SMALL_SWEEP))
    ds = _without_warnings(lambda: xr.open_zarr(store))
    assert ds["stability_draws"].chunks is not None  # lazy: nothing read until asked
    assert not np.isnan(ds["stability"].values).any()
    assert _without_warnings(lambda: cli_main(["verify", str(store)])) == 0
    assert capsys.readouterr().out.strip().endswith("ok; 8 of 8 cells done")


def test_a_store_without_consolidated_metadata_is_refused_as_made_by_an_earlier_version(tmp_path, capsys):
    store = tmp_path / "s.zarr"
    es.sweep(300, 10, store=store, **SMALL_SWEEP)
    # Every store this version makes has it (zarr format 3 keeps it in the root zarr.json, format 2 in .zmetadata).
    if (store / ".zmetadata").exists():
        (store / ".zmetadata").unlink()
    else:
        meta = json.loads((store / "zarr.json").read_text())
        meta.pop("consolidated_metadata")
        (store / "zarr.json").write_text(json.dumps(meta))
    assert cli_main(["verify", str(store)]) == 1
    assert "it has no consolidated metadata" in capsys.readouterr().out
    with pytest.raises(es.StoreMismatch, match="has no consolidated metadata"):
        es.sweep(300, 10, store=store, **SMALL_SWEEP)


@pytest.mark.slow
def test_a_failed_report_write_keeps_the_old_report_and_leaves_no_temporary_files(tmp_path):
    """A full disk (RLIMIT_FSIZE, as above) while ``ensstab report --overwrite`` draws: the
    existing report is kept byte for byte, and no temporary directory is left beside it."""
    import resource
    import signal
    import subprocess
    import sys

    from ensstab_dask.plotting.report import write_report

    nc = write_netcdf(es.sweep(300, 10, **SMALL_SWEEP), tmp_path / "s.nc")
    rep = tmp_path / "rep"
    write_report(nc, rep)
    write_report(nc, rep, overwrite=True)  # a replacement that works leaves nothing behind either
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep", "s.nc"]
    before = {p.name: p.read_bytes() for p in rep.iterdir()}

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))  # far below a picture's size

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    # matplotlib builds its font cache on first use, and under the limit says so in a line
    # of its own: build it first, as any earlier picture on the machine would have.
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env, check=True, timeout=120)
    proc = subprocess.run(
        [sys.executable, "-m", "ensstab_dask.cli", "report", str(nc), "-o", str(rep), "--overwrite"],
        preexec_fn=small_disk,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1 and err[0].startswith("ensstab: error:"), (proc.returncode, err)
    assert {p.name: p.read_bytes() for p in rep.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep", "s.nc"]  # hidden temporary names included


def _special_files(tmp_path):
    """A FIFO, a socket and a link to /dev/null (and, for root, a character device of its
    own): each an existing path that is not a regular file. A write that replaced the
    link would replace the link, never /dev/null itself."""
    import socket

    os.mkfifo(tmp_path / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    (tmp_path / "null").symlink_to("/dev/null")
    paths = {"fifo": "a FIFO", "sock": "a socket", "null": "a character device"}
    if os.geteuid() == 0:
        os.mknod(tmp_path / "dev", stat.S_IFCHR | 0o600, os.makedev(1, 3))
        paths["dev"] = "a character device"
    return sock, {tmp_path / name: kind for name, kind in paths.items()}


def _kinds(paths):
    return {p: (os.path.islink(p), stat.S_IFMT(os.stat(p).st_mode)) for p in paths}


def test_outputs_never_replace_a_device_a_fifo_or_a_socket(tmp_path):
    """Not with overwrite=True, nor through a link: refused by name before anything is
    written, and each special file is left as it was."""
    sock, paths = _special_files(tmp_path)
    try:
        before = _kinds(paths)
        ds = xr.Dataset({"a": ("x", [1.0])})
        for path, kind in paths.items():
            with pytest.raises(ValueError, match=f"output '{path}' is {kind}, not a regular file"):
                write_json({"a": 1}, path, overwrite=True)
            with pytest.raises(ValueError, match=f"is {kind}"):
                write_netcdf(ds, path, overwrite=True)
        assert _kinds(paths) == before
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)  # no temporary left
    finally:
        sock.close()


def test_commands_refuse_a_special_file_as_output_before_the_work(tmp_path, capsys):
    sock, paths = _special_files(tmp_path)
    store = tmp_path / "s.zarr"
    es.sweep(300, 10, store=store, **SMALL_SWEEP)
    fifo, null = str(tmp_path / "fifo"), str(tmp_path / "null")
    commands = [
        ["simulate", "--n-feature", "200", "--n-target", "5", "--n-useful", "20", "--m-ensemble", "1", "--json", fifo],
        [
            "simulate",
            "--n-feature",
            "200",
            "--n-target",
            "5",
            "--n-useful",
            "20",
            "--m-ensemble",
            "1",
            "--json",
            null,
            "--overwrite",
        ],
        ["estimate", "--json", fifo, "--overwrite"],
        ["estimate", "--output", null, "--overwrite"],
        ["validate", "--json", fifo, "--overwrite"],
        [
            "sweep",
            "--n-feature",
            "300",
            "--n-useful",
            "20",
            "--p",
            "0.5",
            "--output",
            str(tmp_path / "sock"),
            "--overwrite",
            "--scheduler",
            "synchronous",
        ],
        ["export", str(store), fifo, "--overwrite"],
        ["report", str(store), "-o", fifo, "--overwrite"],
    ]
    try:
        before = _kinds(paths)
        for args in commands:
            assert cli_main(args) == 2, args
            out, err = capsys.readouterr()
            lines = err.strip().splitlines()
            assert len(lines) == 1 and "not a regular file" in lines[0], (args, err)
            assert out == "", (args, out)  # nothing done: not the data loaded, not a curve simulated
        assert _kinds(paths) == before
    finally:
        sock.close()


SIMULATE = ["simulate", "--n-feature", "200", "--n-target", "5", "--n-useful", "20", "--m-ensemble", "1,3"]


def _ensstab(*args: str, cwd) -> subprocess.CompletedProcess:
    """The command as a user runs it, its stdout a pipe."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    environ = dict(os.environ, PYTHONPATH=root)
    return subprocess.run(
        [sys.executable, "-m", "ensstab_dask.cli", *args], cwd=cwd, env=environ, capture_output=True, text=True
    )


def test_a_link_to_a_pipe_of_the_process_is_refused_and_stays_a_link(tmp_path):
    """A link to /proc/self/fd/1 resolves to a path that does not exist (pipe:[N]): it is
    refused as a stream, before the work, and never replaced by a file."""
    link = tmp_path / "out.json"
    link.symlink_to("/proc/self/fd/1")
    with pytest.raises(ValueError, match="system folder /proc"):
        write_json({"a": 1}, link, overwrite=True)
    proc = _ensstab(*SIMULATE, "--json", str(link), "--overwrite", cwd=tmp_path)
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1 and "system folder /proc" in err[0], proc.stderr
    assert proc.stdout == ""  # refused before the curve was simulated
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


@pytest.mark.skipif(bool(tmpfs_unavailable()), reason=tmpfs_unavailable() or "runs")
def test_dev_stdout_is_never_replaced_even_by_root(tmp_path):
    """--json /dev/stdout --overwrite into a pipe, as root: refused in one line, and the
    link is still a link. /dev here is a private tmpfs stand-in, so that a command that
    replaced the link would never touch the machine's own."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = (
        "mount -t tmpfs -o size=1m tmpfs /dev && ln -s /proc/self/fd/1 /dev/stdout && "
        f"PYTHONPATH={root} {sys.executable} -m ensstab_dask.cli {' '.join(SIMULATE)} --json /dev/stdout "
        "--overwrite | cat; [ -L /dev/stdout ] && echo STILL-A-LINK"
    )
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert "STILL-A-LINK" in proc.stdout, (proc.stdout, proc.stderr)
    assert "--json '/dev/stdout' is in the system folder /dev" in proc.stderr


def test_json_dash_writes_the_json_alone_on_stdout(tmp_path):
    """--json - : standard output holds the JSON and nothing else; the printed lines go to
    stderr. Other outputs refuse -."""
    proc = _ensstab(*SIMULATE, "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert set(json.loads(proc.stdout)["curve"]) == {"1", "3"}
    assert "m_ensemble  stability" in proc.stderr
    assert list(tmp_path.iterdir()) == []
    proc = _ensstab("estimate", "--features", "-", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        "ensstab: error: --features -: only --json writes to standard output; give a file name"
    )


def test_long_output_names_are_written_or_refused_before_the_work(tmp_path, capsys):
    """A 240-byte name is written (its temporary name is cut to fit, and a dead writer's
    leftover of it is cleaned); a name longer than the file system allows is refused in
    one line before the curve is simulated, not after it."""
    from ensstab_dask.outputs import clean_leftovers, temp_prefix

    long = tmp_path / ("a" * 235 + ".json")
    assert cli_main([*SIMULATE, "--json", str(long)]) == 0
    assert json.loads(long.read_text())["curve"].keys() == {"1", "3"}
    leftover = tmp_path / (temp_prefix(long).replace(str(os.getpid()), "999999999") + "x.tmp")
    leftover.write_text("")
    assert len(leftover.name) < 255 and clean_leftovers(long) == [leftover]
    capsys.readouterr()
    too_long = tmp_path / ("b" * 260 + ".json")
    assert cli_main([*SIMULATE, "--json", str(too_long)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("ensstab: error: --json: the file name") and "255" in err


@pytest.mark.parametrize("option", ["--json", "--features", "--output"])
def test_an_output_that_is_a_link_to_itself_is_refused_before_the_work(tmp_path, capsys, option):
    """Path.resolve() raises RuntimeError on a link loop: said in one line, by the option's name."""
    loop = tmp_path / "out"
    loop.symlink_to("out")
    data = tmp_path / "d.npz"
    rng = np.random.default_rng(0)
    np.savez(data, X=rng.normal(size=(20, 6)), y=np.repeat([0, 1], 10))
    args = ["estimate", "--data", str(data), "--n-target", "2", "--scheduler", "synchronous", "--no-cache"]
    assert cli_main([*args, option, str(loop)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"ensstab: error: {option} '{loop}' is a symbolic link that leads back to itself (a link loop); remove the "
        "link or choose another path"
    ]
    assert loop.is_symlink() and os.readlink(loop) == "out"


def test_a_damaged_netcdf_result_is_one_line_never_a_hang_nor_garbage(tmp_path, monkeypatch):
    """64 zero bytes written into an estimate's netCDF file, at places across it: each file
    is refused in one line (unreadable, its checksum failed, or its reading bounded in time
    and stopped), or read whole when the bytes fell where nothing is kept; never a traceback,
    a hang or a report of other numbers. (Once: an AttributeError, reports of changed values
    without a word, and reads that never ended.)"""
    import ensstab_dask as es
    from ensstab_dask import outputs
    from ensstab_dask.exceptions import InvalidParameterError
    from ensstab_dask.real.selectors import default_selector

    monkeypatch.setattr(outputs, "READ_SECONDS", 5.0)
    data = es.make_microarray(n_feature=100, n_informative=5, seed=0)
    est = es.estimate(
        data.X,
        data.y,
        3,
        selector=default_selector(5),
        m_ensemble=(1, 5),
        n_boot=0,
        client="synchronous",
        progress=False,
    )
    whole = tmp_path / "e.nc"
    est.to_netcdf(whole)
    want = outputs.read_netcdf(whole)
    raw = whole.read_bytes()
    outcomes = []
    for share in (0.05, 0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95):
        at = int(len(raw) * share)
        damaged = tmp_path / f"z{share}.nc"
        damaged.write_bytes(raw[:at] + bytes(64) + raw[at + 64 :])
        try:
            got = outputs.read_netcdf(damaged)
        except InvalidParameterError as exc:
            assert str(exc).startswith(f"result {damaged}: ") and "\n" not in str(exc)
            outcomes.append("refused")
        else:
            assert got.identical(want), share  # read: only where the zeros changed nothing kept
            outcomes.append("whole")
    assert outcomes.count("refused") >= 4, outcomes
