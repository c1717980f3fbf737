"""Bounded reads of instruction files: regular files only, never blocking, capped in size.

CLAUDE.md files are user files in any folder up the tree, so one of them may be a pipe, a
device or something enormous; none of that may hang or swamp the workbench.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

MAX_INSTRUCTION_BYTES = 4 * 1024 * 1024
"""Larger files are not read (Claude Code would load them whole; the report says so)."""


@dataclass(frozen=True)
class FileText:
    """What reading one path gave: its text, or why there is none."""

    text: str | None
    problem: str | None = None
    """None when the file was read; `missing` when there is nothing at the path."""
    size: int = 0

    @property
    def missing(self) -> bool:
        return self.problem == "missing"


def read_instruction_file(path: str, max_bytes: int = MAX_INSTRUCTION_BYTES) -> FileText:
    """The UTF-8 text at `path` (invalid bytes become U+FFFD, as Node decodes them)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return FileText(None, "missing")
    except NotADirectoryError:
        return FileText(None, "missing")
    except OSError as exc:
        return FileText(None, f"cannot be read ({exc.strerror})")
    if stat.S_ISDIR(info.st_mode):
        return FileText(None, "missing")  # Claude Code treats a folder like an absent file
    if not stat.S_ISREG(info.st_mode):
        return FileText(None, "not a regular file (a pipe, socket or device): not read")
    if info.st_size > max_bytes:
        return FileText(
            None, f"{info.st_size:,} bytes: too large for the workbench to read", info.st_size
        )
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return FileText(None, "missing")
    except OSError as exc:
        return FileText(None, f"cannot be read ({exc.strerror})")
    try:
        # Swapped for something else between the stat and the open: refuse it again.
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return FileText(None, "not a regular file (a pipe, socket or device): not read")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            data = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not data:
                break
            chunks.append(data)
            size += len(data)
    except OSError as exc:
        return FileText(None, f"cannot be read ({exc.strerror})")
    finally:
        os.close(fd)
    if size > max_bytes:
        return FileText(
            None, f"over {max_bytes:,} bytes: too large for the workbench to read", size
        )
    return FileText(b"".join(chunks).decode("utf-8", errors="replace"), None, size)
