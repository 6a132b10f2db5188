"""The single-writer lock of a sweep store.

Zarr writes a block smaller than a chunk by read-modify-write of the chunk, so two
writers of one store would lose each other's cells: a sweep holds :func:`writer_lock`
while it writes. The lock is a hidden sibling of the store (:func:`lock_path`), so it
exists before the store does.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import stat
from pathlib import Path

from ensstab_dask.exceptions import InvalidParameterError, OutputNotWritten, StoreLocked
from ensstab_dask.outputs import check_writable, special_kind, umask_mode
from ensstab_dask.wording import param

__all__ = ["writer_lock", "lock_path", "check_store_path"]


def check_store_path(store: str | os.PathLike) -> None:
    """Refuse a store path that no sweep can write: a symbolic link to nothing (writing
    through it would make a store somewhere the user did not name), anything there that is
    not a folder (a device, a FIFO, a file), or one in a folder this process may not write
    in. :func:`writer_lock` runs it before it makes the lock file, so it comes before any
    cluster is started and no lock is made beside what is refused."""
    path = Path(store)
    if path.is_symlink() and not path.exists():
        raise InvalidParameterError(
            param("store") + f": {str(path)!r} is a symbolic link to {os.readlink(path)!r}, which does not exist; "
            "give the store's own path, or remove the link"
        )
    if path.exists() and not path.is_dir():
        # A store is a folder: a device, a FIFO or a file is refused before its lock is made beside it.
        mode = path.stat().st_mode
        kind = special_kind(mode) or "a file"
        raise InvalidParameterError(
            param("store")
            + f": {str(path)!r} is {kind}, not a store: a store is a folder (like sweep.zarr); choose another path"
        )
    try:
        check_writable(path)
    except OutputNotWritten as exc:
        raise InvalidParameterError(param("store") + f": {exc}") from None


def lock_path(store: str | os.PathLike) -> Path:
    """The lock file of a store: a hidden sibling, so that it exists before the store does.

    Keyed by the store's resolved path, not the name given: two writers reaching one
    store through a symbolic link (``alias.zarr -> S.zarr``) meet at one lock.
    """
    store = Path(store).resolve()
    return store.parent / f".{store.name}.lock"


@contextlib.contextmanager
def writer_lock(store: str | os.PathLike):
    """Hold the store's single-writer lock while the block runs.

    Zarr writes a block smaller than a chunk by read-modify-write of the chunk, so two
    writers of one store lose each other's cells. The lock is an exclusive ``flock`` on
    :func:`lock_path`, which records the owner's pid and host for the message a second
    writer gets (:class:`StoreLocked`, at once: it does not wait). The kernel releases a
    ``flock`` when its process dies, however it dies, so a killed sweep never leaves a
    stale lock behind. POSIX only; on a network file system it holds as far as the
    system's ``flock`` does.
    """
    check_store_path(store)
    path = lock_path(store)
    if not path.parent.is_dir():
        raise InvalidParameterError(param("store") + f": directory {str(path.parent)!r} does not exist")
    try:
        # O_NOFOLLOW: a link planted at the lock's path would have the pid written into
        # (and the file truncated at) whatever it points to.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, umask_mode())
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.EISDIR):
            raise
        what = "a symbolic link" if exc.errno == errno.ELOOP else "a directory"
        raise InvalidParameterError(
            param("store") + f": its lock file {str(path)!r} is {what}, which a sweep never makes; remove it and rerun"
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            # A hard link, a FIFO or a device: not a file this lock made, so nothing is written into it.
            raise InvalidParameterError(
                param("store")
                + f": its lock file {str(path)!r} is not a plain file of its own (a hard link or a special "
                "file); remove it and rerun"
            )
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                owner = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
            except ValueError:
                owner = {}
            who = f"pid {owner.get('pid', '?')} on {owner.get('host', '?')}"
            raise StoreLocked(
                param("store") + f" {str(store)!r} is being written by another sweep ({who}); wait for it to finish, "
                "then rerun to resume"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname()}).encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the flock
