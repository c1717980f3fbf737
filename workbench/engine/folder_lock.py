"""One writer at a time per memory folder, across threads and processes.

Index edits are read-modify-write and a conflict check is read-compare-write: two workbench
processes interleaving them lose updates. Every change therefore runs while holding an
exclusive `flock` on `<memory folder>/.workbench.lock` (beside MEMORY.md; Claude Code's scans
only read `.md` files, and team sync only reads `team/`). The lock is re-entrant within a
process: a save holds it and the history writes it makes take it again. Waiting is bounded
(`WORKBENCH_LOCK_TIMEOUT` seconds, default 10) and ends in a clear error, never a hang.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from workbench.engine.errors import ActionRequired, UserInputError

LOCK_NAME = ".workbench.lock"
DEFAULT_TIMEOUT_SECONDS = 10.0
_POLL_SECONDS = 0.01


class FolderBusyError(ActionRequired):
    """Another process kept the memory folder's lock for longer than the wait allows."""


class _ProcessLock:
    """The flock for one lock file, shared by every engine of this process."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.thread_lock = threading.RLock()
        self.depth = 0
        self.fd: int | None = None


_LOCKS: dict[str, _ProcessLock] = {}
_LOCKS_GUARD = threading.Lock()


def _process_lock(path: str) -> _ProcessLock:
    with _LOCKS_GUARD:
        lock = _LOCKS.get(path)
        if lock is None:
            lock = _LOCKS[path] = _ProcessLock(path)
        return lock


def lock_timeout(env: dict[str, str] | None = None) -> float:
    """The bounded wait, from `WORKBENCH_LOCK_TIMEOUT` (seconds) or the default."""
    raw = (env if env is not None else os.environ).get("WORKBENCH_LOCK_TIMEOUT", "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_TIMEOUT_SECONDS
    return value if value >= 0 else DEFAULT_TIMEOUT_SECONDS


def _open_lock_file(folder: Path) -> int:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except (FileExistsError, NotADirectoryError):
        raise UserInputError(f"the memory folder {folder} is not a folder") from None
    except PermissionError:
        raise UserInputError(f"cannot write in the memory folder {folder}") from None


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike[str], timeout: float | None = None) -> Iterator[bool]:
    """Hold the folder's write lock; yields True when this call took the flock (outermost)."""
    folder = Path(os.path.normpath(os.fspath(folder)))
    lock = _process_lock(str(folder / LOCK_NAME))
    wait = lock_timeout() if timeout is None else timeout
    deadline = time.monotonic() + wait
    if not lock.thread_lock.acquire(timeout=max(wait, 0.001)):
        raise _busy(folder, wait)
    outermost = lock.depth == 0
    try:
        if outermost:
            fd = _open_lock_file(folder)
            try:
                _flock_until(fd, deadline, folder, wait)
            except BaseException:
                os.close(fd)
                raise
            lock.fd = fd
        lock.depth += 1
        try:
            yield outermost
        finally:
            lock.depth -= 1
            if lock.depth == 0 and lock.fd is not None:
                fd, lock.fd = lock.fd, None
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
    finally:
        lock.thread_lock.release()


def _flock_until(fd: int, deadline: float, folder: Path, wait: float) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise _busy(folder, wait) from None
            time.sleep(_POLL_SECONDS)


def _busy(folder: Path, wait: float) -> FolderBusyError:
    return FolderBusyError(
        f"another workbench process is changing {folder} (waited {wait:g} s for its lock); "
        "nothing was written, try again"
    )
