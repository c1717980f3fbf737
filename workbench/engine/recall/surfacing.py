"""What the agent would actually be shown for the memories recall picks (spec 02 §3.4).

Each picked file is read up to 200 lines or 4,096 bytes (whole lines only) with a notice
when cut, introduced by its header, and wrapped in a system reminder. At most 5 memories go
in per turn, and once 60 KB of memories have been surfaced in a session, recall stops.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from workbench.engine.jsutil import js_len
from workbench.engine.memories.frontmatter import normalize_text
from workbench.engine.recall.freshness import memory_age_days, memory_header
from workbench.engine.userfiles import open_regular, read_fd

MAX_MEMORY_LINES = 200
MAX_MEMORY_BYTES = 4096
MAX_MEMORIES_PER_TURN = 5
MAX_SESSION_BYTES = 60 * 1024
SURFACE_READ_BYTES = 64 * 1024
"""What is held of a file being surfaced: 4,096 bytes of text come from at most ~8 KB."""

TruncationReason = Literal["bytes", "lines"]


@dataclass(frozen=True)
class SurfacedRead:
    """A memory file read the way recall reads it."""

    content: str
    """The kept text plus, when cut, the truncation notice."""
    truncated: TruncationReason | None
    kept_lines: int
    total_lines: int
    kept_bytes: int
    total_bytes: int


def truncation_notice(reason: TruncationReason, path: str) -> str:
    """The note appended to a cut memory, pointing the agent at the full file."""
    why = (
        f"it is longer than the {MAX_MEMORY_BYTES}-byte limit"
        if reason == "bytes"
        else f"only its first {MAX_MEMORY_LINES} lines are included"
    )
    return (
        f"\n\n> Only part of this memory file is shown here ({why}). "
        f"Use the Read tool to see the whole file: {path}"
    )


def read_for_surfacing(path: str, data: bytes | None = None) -> SurfacedRead:
    """`readMemoriesForSurfacing` for one file: whole lines up to 200 lines and 4,096 bytes.

    Only the start of the file is held (4,096 bytes of text never need more than
    `SURFACE_READ_BYTES` of it); the rest of a big file is streamed past to count its lines.
    """
    whole = None
    if data is None:
        data, whole = _read_start_and_count(path)
    text = normalize_text(data.decode("utf-8", errors="replace"))
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()  # a final newline ends the last line; it does not start another
    kept: list[str] = []
    used = 0
    reason: TruncationReason | None = None
    for line in lines:
        if len(kept) == MAX_MEMORY_LINES:
            reason = "lines"
            break
        size = len(line.encode("utf-8")) + (1 if kept else 0)
        if used + size > MAX_MEMORY_BYTES:
            reason = "bytes"
            break
        kept.append(line)
        used += size
    content = "\n".join(kept)
    if reason is not None:
        content += truncation_notice(reason, path)
    return SurfacedRead(
        content=content,
        truncated=reason,
        kept_lines=len(kept),
        total_lines=len(lines) if whole is None else whole[1],
        kept_bytes=used,
        total_bytes=len(data) if whole is None else whole[0],
    )


def _read_start_and_count(path: str) -> tuple[bytes, tuple[int, int] | None]:
    """The first `SURFACE_READ_BYTES` of a regular file and, when the file is longer, its
    size and line count (counted by streaming past the rest, not holding it)."""
    fd, info = open_regular(path)
    try:
        data = read_fd(fd, SURFACE_READ_BYTES + 1, info.st_size + 1)  # sized: most are small
        if len(data) <= SURFACE_READ_BYTES:
            return data, None
        size, newlines, last = len(data), data.count(b"\n"), data[-1:]
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            newlines += chunk.count(b"\n")
            last = chunk[-1:]
    finally:
        os.close(fd)
    # As `split` counts them below: a final newline ends the last line, not a new one.
    lines = newlines + 1 - (1 if last == b"\n" and newlines else 0)
    return data[:SURFACE_READ_BYTES], (size, lines)


def wrap_reminder(header: str, content: str) -> str:
    """How a surfaced memory is rendered into the conversation."""
    return f"<system-reminder>\n{header}\n\n{content}\n</system-reminder>"


@dataclass(frozen=True)
class SurfacedMemory:
    """One memory exactly as it would be injected."""

    path: str
    abs_path: str
    header: str
    content: str
    truncated: TruncationReason | None
    kept_lines: int
    total_lines: int
    length: int
    """JS length of `content`: what the 60 KB session budget counts."""
    injected: str
    """The whole system reminder the agent would see."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "abs_path": self.abs_path,
            "header": self.header,
            "content": self.content,
            "truncated": self.truncated,
            "kept_lines": self.kept_lines,
            "total_lines": self.total_lines,
            "length": self.length,
            "injected": self.injected,
        }


@dataclass(frozen=True)
class SurfacingView:
    """Everything recall would inject this turn, against the per-turn and session limits."""

    memories: tuple[SurfacedMemory, ...]
    session_bytes_before: int
    turn_bytes: int
    would_inject: bool
    skipped_reason: str | None
    max_per_turn: int = MAX_MEMORIES_PER_TURN
    max_lines: int = MAX_MEMORY_LINES
    max_bytes: int = MAX_MEMORY_BYTES
    session_budget: int = MAX_SESSION_BYTES

    @property
    def session_bytes_after(self) -> int:
        return self.session_bytes_before + (self.turn_bytes if self.would_inject else 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "memories": [m.to_json() for m in self.memories],
            "max_per_turn": self.max_per_turn,
            "max_lines": self.max_lines,
            "max_bytes": self.max_bytes,
            "session_budget": self.session_budget,
            "session_bytes_before": self.session_bytes_before,
            "turn_bytes": self.turn_bytes,
            "session_bytes_after": self.session_bytes_after,
            "would_inject": self.would_inject,
            "skipped_reason": self.skipped_reason,
        }


def surface(
    picks: Sequence[tuple[str, str, float]],
    *,
    now: float,
    session_bytes_before: int = 0,
    query: str = "",
) -> SurfacingView:
    """Build the view for `(relative path, absolute path, mtime_ms)` picks, in order."""
    memories = []
    for rel, abs_path, mtime_ms in picks[:MAX_MEMORIES_PER_TURN]:
        try:
            read = read_for_surfacing(abs_path)
        except OSError:
            continue  # Claude Code drops files it cannot read
        header = memory_header(abs_path, memory_age_days(mtime_ms, now))
        memories.append(
            SurfacedMemory(
                path=rel,
                abs_path=abs_path,
                header=header,
                content=read.content,
                truncated=read.truncated,
                kept_lines=read.kept_lines,
                total_lines=read.total_lines,
                length=js_len(read.content),
                injected=wrap_reminder(header, read.content),
            )
        )
    skipped = prefetch_skip_reason(query, session_bytes_before)
    return SurfacingView(
        memories=tuple(memories),
        session_bytes_before=session_bytes_before,
        turn_bytes=sum(m.length for m in memories),
        would_inject=skipped is None and bool(memories),
        skipped_reason=skipped,
    )


def prefetch_skip_reason(query: str, session_bytes: int) -> str | None:
    """Why Claude Code would not run recall for this prompt at all, or None."""
    if query and not any(ch.isspace() for ch in query):
        return "single-word prompts do not trigger recall"
    if session_bytes >= MAX_SESSION_BYTES:
        return (
            f"this session has already surfaced {session_bytes:,} of the "
            f"{MAX_SESSION_BYTES:,}-byte budget, so recall no longer runs until compaction"
        )
    return None
