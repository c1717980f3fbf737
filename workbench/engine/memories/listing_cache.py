"""What the store derived from each memory file, kept between runs.

A listing of 10,000 memories reads and lints 10,000 files; most of them have not changed since
the last run. One JSON file per memory folder (under the workbench's cache folder) keeps each
file's derived facts beside its device, inode, size, mtime and ctime, and a record is used only
when all five are as recorded. The ctime changes on every write and cannot be set back, so an
edit that restores the old mtime is still seen; a record is stored only when the file's ctime
was safely in the past when it was read, since a second write within the filesystem's
timestamp granularity would otherwise leave all five unchanged (git's "racy" entries).

The whole cache is dropped when the code that derives the facts, PyYAML, Python, the memory
folder or the release's rules differ. A missing, unreadable or malformed cache is ignored, a
malformed record is re-read, writes are atomic (temp file, rename) and a failed write is
silent: the cache only ever saves time, it never decides an answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

FORMAT = 1
FOLDER = "memory-listing"
MAX_BYTES = 64 * 1024 * 1024
"""A cache over this is neither written nor read (each record is a few hundred bytes)."""
MAX_FOLDERS = 32
"""Caches kept for this many memory folders; the least recently written go first."""
RACY_NS = 3_000_000_000
"""A file whose ctime is this close to the time it was read is not cached (coarse clocks and
filesystems with 1–2 s timestamps)."""

Stamp = tuple[int, int, int, int, int]
"""(device, inode, size, mtime_ns, ctime_ns) of the file a record describes."""


def stamp_of(info: os.stat_result) -> Stamp:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _code_stamp() -> list[Any]:
    """What the derived facts depend on besides the file: this code, PyYAML and Python."""
    from workbench import __version__

    engine = Path(__file__).resolve().parent.parent
    files: list[Any] = [FORMAT, __version__, sys.version]
    folders = [engine / "memories", engine / "team" / "secrets"]
    for folder in folders:
        with contextlib.suppress(OSError):
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    files.append([entry.name, info.st_size, info.st_mtime_ns])
    for single in (engine / "jsutil.py", engine / "userfiles.py", _yaml_file()):
        try:
            found = os.stat(single) if single else None
        except OSError:
            found = None
        files.append([str(single), found.st_size, found.st_mtime_ns] if found else None)
    return files


def _yaml_file() -> str | None:
    """PyYAML's package file, found the way a plain import would without importing it
    (~40 ms) or asking importlib (~12 ms): the first `sys.path` entry holding it."""
    for base in sys.path:
        candidate = os.path.join(base or ".", "yaml", "__init__.py")
        if os.path.isfile(candidate):
            return candidate
    return None


class ListingCache:
    """The cached records of one memory folder under `folder` (None: no cache at all)."""

    def __init__(self, folder: Path | None, memory_dir: str, rules: list[Any]) -> None:
        self.folder = folder / FOLDER if folder is not None else None
        name = hashlib.sha256(os.fsencode(memory_dir)).hexdigest()[:24]
        self.path = self.folder / f"{name}.json" if self.folder is not None else None
        self._context = [memory_dir, rules]
        self.started_ns = time.time_ns()
        """Records of files whose ctime is near or after this are not stored."""

    def trusted(self, stamp: Stamp) -> bool:
        """Whether a file with this stamp, read after `started_ns`, may be stored."""
        return stamp[4] < self.started_ns - RACY_NS

    def load(self) -> dict[str, list[Any]]:
        """Records by absolute path, each `[stamp, ...facts]`; {} when there is no usable
        cache (missing, unreadable, malformed, or written for other code or rules)."""
        if self.path is None:
            return {}
        try:
            with open(self.path, "rb") as handle:
                if os.fstat(handle.fileno()).st_size > MAX_BYTES:
                    return {}
                data = json.loads(handle.read())
        except (OSError, ValueError, RecursionError):
            return {}
        if (
            not isinstance(data, dict)
            or data.get("context") != self._context
            or data.get("code") != _code_stamp()
        ):
            return {}
        records = data.get("records")
        return records if isinstance(records, dict) else {}

    def save(self, records: dict[str, list[Any]]) -> None:
        """Replace the cache with `records` (best effort: errors are ignored)."""
        if self.path is None or self.folder is None:
            return
        payload = {"context": self._context, "code": _code_stamp(), "records": records}
        try:
            data = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode()
        except (ValueError, TypeError):
            return
        if len(data) > MAX_BYTES:
            return
        # A temp name of this process and thread: the app lists from two threads at times.
        tmp = self.folder / f".{self.path.name}.{os.getpid()}-{threading.get_ident()}.tmp"
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(fd, "wb") as handle:
                handle.write(data)
            # No fsync: a cache torn by a crash reads as malformed, and is ignored.
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return
        self._prune()

    def _prune(self) -> None:
        """Keep the caches of the `MAX_FOLDERS` most recently listed memory folders, and drop
        temp files a crashed write left (over an hour old)."""
        assert self.folder is not None
        try:
            caches = []
            for entry in os.scandir(self.folder):
                if entry.name.endswith(".json"):
                    caches.append((entry.stat().st_mtime_ns, entry.path))
                elif entry.name.endswith(".tmp"):
                    if entry.stat().st_mtime_ns < self.started_ns - 3600 * 10**9:
                        os.unlink(entry.path)
            caches.sort(reverse=True)
            for _, old in caches[MAX_FOLDERS:]:
                os.unlink(old)
        except OSError:
            return
