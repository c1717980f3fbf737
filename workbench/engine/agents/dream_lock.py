"""The consolidation lock `<memory>/.consolidate-lock` (spec 02 §8.4).

One file does two jobs. Its mtime is "when memory was last consolidated" (0 when absent) and
its body is the PID of the process consolidating now. A lock younger than an hour whose PID is
alive blocks a second consolidation; an older one, or one whose process is gone, is stale and
may be taken. After writing its PID the taker reads the file back to make sure another process
did not win the race. When a consolidation fails, the lock is rolled back: the mtime is
rewound to its earlier value (with an empty body), or the file is removed if there was none.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.engine.userfiles import read_text

HOLDER_STALE_MS = 60 * 60 * 1000
"""A holder that has not finished within an hour is presumed dead."""


def pid_alive(pid: int) -> bool:
    """True when a process with this PID exists (signal 0 probes without touching it)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, it just belongs to someone else
    return True


@dataclass(frozen=True)
class LockState:
    """What the lock file says right now."""

    path: str
    exists: bool
    mtime_ms: float
    """Last consolidation time (0 when the file is absent)."""
    holder_pid: int | None
    holder_alive: bool
    held: bool
    """A live process took it less than an hour ago, so a new consolidation must wait."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "exists": self.exists,
            "last_consolidated_ms": self.mtime_ms,
            "holder_pid": self.holder_pid,
            "holder_alive": self.holder_alive,
            "held": self.held,
        }


class ConsolidationLock:
    """Acquire, inspect and roll back one memory folder's consolidation lock."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        pid: int | None = None,
        clock_ms: Callable[[], float] | None = None,
        is_alive: Callable[[int], bool] = pid_alive,
    ) -> None:
        self.path = Path(path)
        self.pid = os.getpid() if pid is None else pid
        self._clock_ms = clock_ms or (lambda: time.time() * 1000)
        self._is_alive = is_alive

    def last_consolidated_ms(self) -> float:
        """The lock's mtime in ms, or 0 when there is no lock file."""
        try:
            return self.path.stat().st_mtime_ns / 1_000_000
        except FileNotFoundError:
            return 0.0

    def _holder(self) -> int | None:
        try:
            body = read_text(self.path, 4096, "the dream lock").strip()
        except (FileNotFoundError, IsADirectoryError):
            return None
        return int(body) if body.isdigit() else None

    def state(self) -> LockState:
        """The lock as it stands, without changing it."""
        mtime = self.last_consolidated_ms()
        exists = self.path.exists()
        holder = self._holder()
        alive = holder is not None and self._is_alive(holder)
        fresh = exists and (self._clock_ms() - mtime) < HOLDER_STALE_MS
        return LockState(str(self.path), exists, mtime, holder, alive, bool(fresh and alive))

    def try_acquire(self) -> float | None:
        """Take the lock; return the earlier mtime (0 if none), or None when it is held."""
        current = self.state()
        if current.held and current.holder_pid != self.pid:
            return None
        prior = current.mtime_ms if current.exists else 0.0
        self._write_body(str(self.pid))
        if self._holder() != self.pid:
            return None  # another process wrote its PID between our write and our read
        return prior

    def record_consolidation(self) -> None:
        """Stamp "consolidated now" by writing our PID (a manual consolidation)."""
        self._write_body(str(self.pid))

    def rollback(self, prior_mtime_ms: float) -> None:
        """Undo a failed consolidation: rewind the mtime, or remove a lock that was new."""
        if prior_mtime_ms <= 0:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            return
        self._write_body("")
        seconds = prior_mtime_ms / 1000
        os.utime(self.path, (seconds, seconds))

    def _write_body(self, body: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Non-blocking: a named pipe put in place of the lock fails at once instead of waiting.
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(self.path, flags, 0o600)
        try:
            os.write(fd, body.encode("ascii"))
        finally:
            os.close(fd)
