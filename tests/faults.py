"""Faults for the tests and the probe replay (tests/probe/probe_cases_loud.py): the CLI run
as a user runs it, without root's override of file permissions, or with a full disk; a
listener on a port that accepts and never answers, or answers in another protocol; and
a sweep store that a run left half done."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: A small sweep: quick, and its store has one chunk per n_useful row.
SWEEP = [
    "sweep",
    "--n-feature",
    "300",
    "--n-target",
    "10",
    "--m-stability",
    "5",
    "--repeats",
    "2",
    "--scheduler",
    "synchronous",
    "--quiet",
]


@dataclass
class Ran:
    """A finished (or timed-out) CLI run."""

    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool

    @property
    def lines(self) -> list[str]:
        return self.stderr.strip().splitlines()

    def one_line_error(self) -> bool:
        """Exit status 2 and exactly one line, ``ensstab: error: ...``, no traceback."""
        return self.returncode == 2 and len(self.lines) == 1 and self.lines[0].startswith("ensstab: error: ")


def env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def run_cli(*args: str, cwd: Path | str | None = None, timeout: float = 300, preexec=None) -> Ran:
    """``python -m ensstab_dask.cli ARGS``; a run past ``timeout`` is killed and marked."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ensstab_dask.cli", *args],
        cwd=cwd,
        env=env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=preexec,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        timed_out = True
    return Ran(None if timed_out else proc.returncode, out, err, time.monotonic() - start, timed_out)


# Without root's override ---------------------------------------------------------------

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def permissions_apply() -> str:
    """Why file permissions cannot be made to bind a child process here ("" when they can):
    a user other than root is bound by them anyway; root is once it drops the capabilities
    that override them."""
    if os.name != "posix":
        return "POSIX permissions"
    if os.geteuid() != 0:
        return ""
    if not sys.platform.startswith("linux"):
        return "dropping root's override needs Linux capabilities"
    return ""


def drop_root_override() -> None:
    """``preexec_fn``: the child, if root, loses the capabilities that let root write where
    permissions forbid (they leave its bounding set, so the program it runs lacks them)."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` and everything under it without write permission for the block, and writable
    again after it (so that pytest can clean it up), however the block ends."""
    for folder, _, files in os.walk(path):
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)
        os.chmod(folder, 0o555)
    try:
        yield
    finally:
        for folder, _, files in os.walk(path):
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)


# A full disk -------------------------------------------------------------------------------


def tmpfs_unavailable() -> str:
    """Why a private tmpfs cannot be mounted here ("" when it can: root, Linux, unshare)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return "mounting a small tmpfs needs root on Linux"
    if shutil.which("unshare") is None:
        return "needs util-linux's unshare for a private mount namespace"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True, timeout=30
    )
    return "" if probe.returncode == 0 else f"mounting a tmpfs failed: {probe.stderr.decode().strip()}"


def on_a_full_disk(script: str, store: Path, free_kb: int, *, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the shell ``script`` in a private mount namespace where ``$DISK`` is a 1 MB tmpfs
    holding a copy of ``store`` (as ``$DISK/s.zarr``) and a file filling all but ``free_kb``
    of it (``$DISK/filler``: remove it to free the space). The mount goes with the script."""
    body = f"""set -e
DISK=$(mktemp -d)
mount -t tmpfs -o size=1m tmpfs "$DISK"
cp -r '{store}' "$DISK/s.zarr"
avail=$(df -k "$DISK" | tail -1 | awk '{{print $4}}')
dd if=/dev/zero of="$DISK/filler" bs=1k count=$((avail - {free_kb})) 2>/dev/null
cd "$DISK"
set +e
{script}
"""
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", body], capture_output=True, text=True, timeout=timeout, env=env()
    )


# Sweep stores ----------------------------------------------------------------------------------


def half_done_store(folder: Path, rows: int = 8, undone: tuple[int, ...] = (4, 5, 6, 7)) -> tuple[Path, list[str]]:
    """A store of a small sweep with the rows ``undone`` not done (as a sweep killed before
    them leaves it), and the sweep's arguments; also ``folder/reference.zarr``, the same
    sweep finished."""
    args = [*SWEEP, "--n-useful", f"20:{10 * (rows + 1)}:10", "--p", "0.3,0.6", "--batch-size", "1"]
    reference = folder / "reference.zarr"
    ran = run_cli(*args, "--store", str(reference))
    assert ran.returncode == 0, ran.stderr
    store = folder / "half.zarr"
    shutil.copytree(reference, store)
    import zarr

    # What a killed sweep leaves: those rows' flags 0 (their chunks are there from the
    # template on) and their data never written.
    with zarr.config.set({"array.write_empty_chunks": True}):
        flags = zarr.open_array(str(store / "completed"), mode="r+")
        for row in undone:
            flags[row] = 0
    for row in undone:
        for rows in store.glob(f"*/c/{row}"):
            if rows.is_dir() and rows.parts[-3] != "completed":
                shutil.rmtree(rows)
    return store, args


# Listeners that are not Dask schedulers --------------------------------------------------------


@contextlib.contextmanager
def listener(answer: bytes | None = None, accepted: threading.Event | None = None) -> Iterator[str]:
    """A TCP listener on 127.0.0.1 that accepts connections and then says nothing
    (``answer`` None) or sends ``answer`` (another service's greeting); ``accepted`` is set
    once it has accepted one. Yields its address."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    held: list[socket.socket] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            if accepted is not None:
                accepted.set()
            if answer is not None:
                with contextlib.suppress(OSError):
                    conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        done.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """A real HTTP server (the standard library's) on 127.0.0.1. Yields its address as a
    scheduler address would be given."""
    import http.server

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:  # no line per request on the test's stderr
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


#: What an HTTP server answers a request it cannot parse.
HTTP_ANSWER = b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>Bad request</html>\r\n"


@contextlib.contextmanager
def stopped_scheduler() -> Iterator[str]:
    """A real Dask scheduler process, stopped (SIGSTOP) once it listens: it accepts
    connections (the kernel does) and never answers. Yields its address."""
    port_socket = socket.socket()
    port_socket.bind(("127.0.0.1", 0))
    port = port_socket.getsockname()[1]
    port_socket.close()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-dashboard",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env(),
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.2)
        proc.send_signal(signal.SIGSTOP)
        yield f"tcp://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait(30)


# Listeners that answer Dask's handshake with something that runs code when unpickled ----------


class _Touch:
    """Unpickled, creates the file at ``path``: what a hostile listener would send."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return exec, (f"open({self.path!r}, 'w').close()",)


def dask_message(*frames: bytes) -> bytes:
    """``frames`` as distributed's TCP comm sends one message: an 8-byte length, the
    prelude (how many frames, each one's length), then the frames."""
    import struct

    body = struct.pack(f"<Q{len(frames)}Q", len(frames), *map(len, frames)) + b"".join(frames)
    return struct.pack("<Q", len(body)) + body


def pickling_answer(path: Path, how: str) -> bytes:
    """A handshake answer that creates ``path`` in whoever unpickles it: ``"pickled"``, a
    msgpack frame whose ``__Pickled__`` entry points at a pickle (distributed's reader
    unpickles it), ``"serialized"``, the same through ``__Serialized__`` and dask's pickle
    serializer, or ``"raw"``, a bare pickle as the message's one frame."""
    import pickle

    import msgpack

    payload = pickle.dumps(_Touch(path), protocol=5)
    if how == "pickled":
        header = msgpack.packb({"num-sub-frames": 0, "pickled-obj": payload}, use_bin_type=True)
        return dask_message(msgpack.packb({"__Pickled__": 1}, use_bin_type=True), header)
    if how == "serialized":
        header = msgpack.packb(
            {"serializer": "pickle", "num-sub-frames": 1, "writeable": (False,), "type": "x", "type-serialized": b""},
            use_bin_type=True,
        )
        return dask_message(msgpack.packb({"__Serialized__": 1}, use_bin_type=True), header, payload)
    if how == "raw":
        return dask_message(payload)
    raise ValueError(f"how must be 'pickled', 'serialized' or 'raw'; got {how!r}")


def scheduler_identity_answer(*, whole: bool = True) -> bytes:
    """What a listener with no scheduler behind it sends on every connection at once:
    distributed's handshake, then an identity as a Scheduler, with every field a scheduler's
    has (``whole``: the package's check before the Client passes; the Client's own requests
    then get answers no scheduler gives) or only ``{"type": "Scheduler"}`` (refused by the check)."""
    import pickle

    import msgpack

    hello = msgpack.packb({"compression": None, "python": [3, 11, 0], "pickle-protocol": pickle.HIGHEST_PROTOCOL})
    fields = {"type": "Scheduler"}
    if whole:
        fields |= {
            "id": "Scheduler-fake",
            "address": "tcp://127.0.0.1:1",
            "services": {},
            "started": 0.0,
            "n_workers": 0,
            "total_threads": 0,
            "total_memory": 0,
            "workers": {},
        }
    return dask_message(hello) + dask_message(msgpack.packb(fields))


def forge(path: Path, change) -> None:
    """The netCDF file at ``path`` changed by ``change(ds)`` and sealed again with the
    package's own checksum, as someone who knows the checksum would forge it."""
    import xarray as xr

    from ensstab_dask.outputs import CHECKSUM_ATTR, content_checksum

    with xr.open_dataset(path) as ds:
        ds = ds.load()
    del ds.attrs[CHECKSUM_ATTR]
    ds = change(ds)
    ds.attrs[CHECKSUM_ATTR] = content_checksum(ds)
    path.unlink()
    ds.to_netcdf(path)
