"""What the store derived from each memory file, kept between runs.

A listing of 10,000 memories reads and lints 10,000 files; most of them have not changed since
the last run. One JSON file per memory folder (under the workbench's cache folder) keeps each
file's derived facts beside its device, inode, size, mtime and ctime, and a record is used only
when all five are as recorded. The ctime changes on every write and cannot be set back, so an
edit that restores the old mtime is still seen; a record is stored only when the file's ctime
was safely in the past when it was read, since a second write within the filesystem's
timestamp granularity would otherwise leave all five unchanged (git's "racy" entries).

Beside it, the finished listing (the compact JSON `ls --json` prints) is kept for each scope
with a key that hashes every file's path and stamp in walk order and both indexes' stamps, and
with where each file's age and `memory-stale` finding sit in it (`finished_listing`). A
listing whose walk gives the same key is that output again with those spans brought up to
date, without loading the records: the output depends on nothing else (the code, the
release's rules and the folder are checked as for the records). It is kept only when every
file and index was trusted, read and parsed whole.

The whole cache is dropped when the code that derives the facts, PyYAML, Python, the memory
folder or the release's rules differ. A missing, unreadable or malformed cache is ignored, a
malformed record is re-read, writes are atomic (temp file, rename) and a failed write is
silent: the cache only ever saves time, it never decides an answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import zlib
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.engine.engine import Engine
    from workbench.engine.memories.finished_listing import Finished

FORMAT = 1
FOLDER = "memory-listing"
MAX_BYTES = 64 * 1024 * 1024
"""A cache over this is neither written nor read (each record is a few hundred bytes)."""
MAX_FOLDERS = 32
"""Caches kept for this many memory folders; the least recently written go first."""
RACY_NS = 3_000_000_000
"""A file whose ctime is this close to the time it was read is not cached (coarse clocks and
filesystems with 1–2 s timestamps)."""

FINISHED_FIELDS = 8
"""Integers a row of a finished listing's table holds (`finished_listing.FIELDS`)."""

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


def compact_json(data: Any) -> bytes:
    """`data` as the bytes `json.dumps(data, separators=(",", ":"), ensure_ascii=False)`
    gives in UTF-8 (orjson writes them in a tenth of the time); where orjson refuses a value
    (a lone surrogate, an integer past 64 bits) the json module writes it, escaping what
    UTF-8 cannot carry."""
    written = orjson_json(data)
    if written is not None:
        return written
    import json

    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, separators=(",", ":")).encode("ascii")


def orjson_json(data: Any) -> bytes | None:
    """`compact_json(data)` when orjson writes it; None where it refuses a value."""
    import orjson

    try:
        return orjson.dumps(data)
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
        return None


def listing_cache_for(engine: Engine) -> ListingCache | None:
    """The listing cache of the engine's memory folder, under the rules of its release
    (None when the engine has no cache folder)."""
    folder = engine.versions.cache_dir
    if folder is None:
        return None
    profile = engine.profile
    rules = [list(profile.memory_files.reads_type_at), profile.version]
    return ListingCache(folder, str(Path(engine.locations.memory_dir)), rules)


class ListingCache:
    """The cached records of one memory folder under `folder` (None: no cache at all)."""

    def __init__(self, folder: Path | None, memory_dir: str, rules: list[Any]) -> None:
        self.folder = folder / FOLDER if folder is not None else None
        # A checksum, not a digest: hashlib loads OpenSSL (2 ms of every listing), and two
        # folders that shared a name would only take turns (the context tells them apart).
        raw = os.fsencode(memory_dir)
        name = f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"
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
        import orjson  # here: the hooks and the status line load this module, never a listing

        try:
            with open(self.path, "rb") as handle:
                if os.fstat(handle.fileno()).st_size > MAX_BYTES:
                    return {}
                data = orjson.loads(handle.read())
        except (OSError, ValueError, RecursionError):  # orjson.JSONDecodeError: a ValueError
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
        if self.path is None:
            return
        import orjson

        payload = {"context": self._context, "code": _code_stamp(), "records": records}
        try:
            data = orjson.dumps(payload)
        except (ValueError, TypeError):
            return
        self._write(self.path, data)

    def listing_key(self, scope: str, walk: list[tuple[str, os.stat_result]], extra: Any) -> str:
        """What a finished listing of `scope` depends on besides the clock: every file's path
        and stamp in walk order, and `extra` (the indexes' stamps)."""
        # The stamps are integers, whose hash (unlike a string's) is the same in every
        # process: hashing their tuple in C costs a third of serialising them. Any change to
        # a file moves its stamp (a rename too: it sets the ctime); the paths' checksum is
        # on top of that.
        stamps = hash(tuple([stamp_of(info) for _, info in walk]))
        paths = "\0".join([path for path, _ in walk]).encode("utf-8", "surrogateescape")
        return f"{scope}:{extra!r}:{len(walk)}:{stamps:x}:{zlib.crc32(paths):08x}"

    def finished(self, scope: str, key: str) -> Finished | None:
        """The listing of `scope` kept under `key` (see `finished_listing`), or None."""
        from workbench.engine.memories.finished_listing import Finished

        path = self._finished_path(scope)
        if path is None:
            return None
        try:
            with open(path, "rb") as handle:
                if os.fstat(handle.fileno()).st_size > MAX_BYTES:
                    return None
                head = handle.readline(64 * 1024)
                body = handle.read()
            # The json module, loaded already: orjson would cost more to import than it saves.
            header = json.loads(head)
        except (OSError, ValueError, RecursionError):
            return None
        if not (
            isinstance(header, dict)
            and header.get("key") == key
            and header.get("context") == self._context
            and type(rows := header.get("rows")) is int
            and type(size := header.get("size")) is int
            and isinstance(now_ms := header.get("now"), (int, float))
            and header.get("fields") == FINISHED_FIELDS
            and rows >= 0
            and len(body) == rows * (FINISHED_FIELDS + 3) * 8 + size
            and header.get("code") == _code_stamp()
        ):
            return None
        table: array[int] = array("q")
        mtimes: array[float] = array("d")
        bounds: array[float] = array("d")
        order: array[int] = array("q")
        at = 0
        for values, count in ((table, FINISHED_FIELDS), (mtimes, 1), (bounds, 1), (order, 1)):
            if values.itemsize != 8:
                return None
            values.frombytes(body[at : at + rows * count * 8])
            at += rows * count * 8
        return Finished(body[at:], table, mtimes, bounds, order, float(now_ms))

    def keep_finished(self, scope: str, key: str, kept: Finished) -> None:
        """Keep a listing of `scope` under `key` (best effort)."""
        path = self._finished_path(scope)
        arrays = (kept.table, kept.mtimes, kept.bounds, kept.order)
        if path is None or any(values.itemsize != 8 for values in arrays):
            return
        header = {
            "key": key,
            "context": self._context,
            "rows": len(kept.mtimes),
            "size": len(kept.output),
            "now": kept.now_ms,
            "fields": FINISHED_FIELDS,
            "code": _code_stamp(),
        }
        line = json.dumps(header, ensure_ascii=True, separators=(",", ":")).encode()
        body = [values.tobytes() for values in arrays]
        self._write(path, b"".join((line, b"\n", *body, kept.output)))

    def _finished_path(self, scope: str) -> Path | None:
        if self.path is None:
            return None
        return self.path.with_name(f"{self.path.stem}-{scope}.out")

    def _write(self, path: Path, data: bytes) -> None:
        """Write `data` to `path` atomically, silently giving up on an error."""
        if self.folder is None or len(data) > MAX_BYTES:
            return
        # A temp name of this process and thread: the app lists from two threads at times.
        tmp = self.folder / f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp"
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(fd, "wb") as handle:
                handle.write(data)
            # No fsync: a cache torn by a crash reads as malformed, and is ignored.
            os.replace(tmp, path)
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
            caches: dict[str, list[tuple[int, str]]] = {".json": [], ".out": []}
            for entry in os.scandir(self.folder):
                kind = os.path.splitext(entry.name)[1]
                if kind in caches:
                    caches[kind].append((entry.stat().st_mtime_ns, entry.path))
                elif kind == ".tmp":
                    if entry.stat().st_mtime_ns < self.started_ns - 3600 * 10**9:
                        os.unlink(entry.path)
            # A folder's records, and its finished listings for up to four scopes.
            for kind, keep in ((".json", MAX_FOLDERS), (".out", 4 * MAX_FOLDERS)):
                for _, old in sorted(caches[kind], reverse=True)[keep:]:
                    os.unlink(old)
        except OSError:
            return
