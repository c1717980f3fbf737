"""Scanning the memory folder and formatting the recall manifest (spec 01 §3.1–3.2).

`scanMemoryFiles` lists every `.md` file below the memory folder except any `MEMORY.md`,
reads the first 30 lines of each, sorts newest first and keeps 200. The workbench also needs
the uncapped list (the tree shows every file), so both come from one cached walk: a re-scan
re-reads only files whose size or mtime changed.
"""

from __future__ import annotations

import os
import threading

from workbench.engine.jsutil import js_iso
from workbench.engine.memories.file_format import BOTH_LOCATIONS, read_type
from workbench.engine.memories.frontmatter import (
    description_of,
    parse_frontmatter,
    read_head,
)
from workbench.engine.memories.walk import iter_memory_paths
from workbench.engine.profiles.rules import TypeLocation
from workbench.engine.records import Record

MAX_MEMORY_FILES = 200


class MemoryHeader(Record):
    """What Claude Code's scanner knows about one memory file."""

    filename: str
    """Path relative to the memory folder, `/`-separated."""
    file_path: str
    """Absolute path."""
    mtime_ms: float
    description: str | None
    type: str | None
    """The type as the release in use reads it (None where it does not look)."""
    size_bytes: int = 0
    frontmatter_error: str | None = None
    type_location: TypeLocation | None = None
    """Where the file keeps its type (`top-level` or nested under `metadata`), if anywhere."""
    file_type: str | None = None
    """The type the file states, in either format."""

    @property
    def mtime_iso(self) -> str:
        return js_iso(self.mtime_ms)


class MemoryScanner:
    """Scans one memory folder, re-reading only files that changed since the last scan."""

    def __init__(
        self,
        memory_dir: str | os.PathLike[str],
        *,
        reads_type_at: tuple[TypeLocation, ...] = BOTH_LOCATIONS,
    ) -> None:
        self.memory_dir = os.fspath(memory_dir)
        self.reads_type_at = reads_type_at
        """Where the release in use looks for a memory's type."""
        self._cache: dict[str, tuple[int, int, MemoryHeader]] = {}
        self._lock = threading.Lock()
        self.last_reads = 0
        """How many files the last scan had to open (the rest came from the cache)."""

    def scan_all(self) -> list[MemoryHeader]:
        """Every memory file, newest first (no cap)."""
        reads = 0
        fresh: dict[str, tuple[int, int, MemoryHeader]] = {}
        headers: list[MemoryHeader] = []
        for path, stat in iter_memory_paths(self.memory_dir):
            cached = self._cache.get(path)
            if cached and cached[0] == stat.st_mtime_ns and cached[1] == stat.st_size:
                header = cached[2]
            else:
                read = read_header(path, self.memory_dir, stat, self.reads_type_at)
                reads += 1
                if read is None:
                    continue
                header = read
            fresh[path] = (stat.st_mtime_ns, stat.st_size, header)
            headers.append(header)
        with self._lock:
            self._cache = fresh
            self.last_reads = reads
        # Python's sort is stable, like V8's, so ties keep walk order.
        headers.sort(key=lambda h: h.mtime_ms, reverse=True)
        return headers

    def scan(self) -> list[MemoryHeader]:
        """`scanMemoryFiles`: newest first, capped at 200 after reading everything."""
        return self.scan_all()[:MAX_MEMORY_FILES]


def read_header(
    path: str,
    memory_dir: str,
    stat: os.stat_result | None = None,
    reads_type_at: tuple[TypeLocation, ...] = BOTH_LOCATIONS,
) -> MemoryHeader | None:
    """Read one file's header; None when it cannot be read (Claude Code drops those)."""
    try:
        head = read_head(path, known=stat)
        if stat is None:
            stat = os.stat(path)
    except OSError:
        return None
    parsed = parse_frontmatter(head)
    root = memory_dir.rstrip(os.sep) + os.sep
    rel = path[len(root) :] if path.startswith(root) else os.path.relpath(path, memory_dir)
    if os.sep != "/":
        rel = rel.replace(os.sep, "/")
    # Either format, top level first; the release sees it only where it looks.
    stated = read_type(parsed.data)
    return MemoryHeader(
        filename=rel,
        file_path=path,
        mtime_ms=stat.st_mtime_ns / 1_000_000,
        description=description_of(parsed.data),
        type=stated.type if stated.location in reads_type_at else None,
        size_bytes=stat.st_size,
        frontmatter_error=parsed.error,
        type_location=stated.location,
        file_type=stated.type,
    )


def scan_memory_files(
    memory_dir: str | os.PathLike[str], reads_type_at: tuple[TypeLocation, ...] = BOTH_LOCATIONS
) -> list[MemoryHeader]:
    """One-shot `scanMemoryFiles` (use `MemoryScanner` to re-scan cheaply)."""
    return MemoryScanner(memory_dir, reads_type_at=reads_type_at).scan()


def manifest_line(header: MemoryHeader) -> str:
    """`- [type] path (iso): description`, with the type and description parts optional."""
    tag = f"[{header.type}] " if header.type else ""
    line = f"- {tag}{header.filename} ({header.mtime_iso})"
    return f"{line}: {header.description}" if header.description else line


def format_manifest(headers: list[MemoryHeader]) -> str:
    """`formatMemoryManifest`: one line per file joined with newlines."""
    return "\n".join(manifest_line(h) for h in headers)
