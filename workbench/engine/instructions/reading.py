"""Bounded reads of instruction files, through `workbench.engine.userfiles`.

CLAUDE.md files are user files in any folder up the tree, so one of them may be a pipe, a
device or something enormous; none of that may hang or swamp the workbench, and each becomes
a finding on the report instead of an error.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass

from workbench.engine import userfiles

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
        data = userfiles.read_bytes(path, max_bytes, "an instruction file")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return FileText(None, "missing")
    except userfiles.UnreadableFileError as exc:
        if exc.errno == errno.EFBIG:
            size = exc.reason.removesuffix("; not read")
            return FileText(None, f"too large for the workbench to read ({size})")
        if exc.reason.startswith("a folder"):
            return FileText(None, "missing")  # Claude Code treats a folder like an absent file
        return FileText(None, exc.reason)
    except OSError as exc:
        return FileText(None, userfiles.describe(path, exc))
    return FileText(data.decode("utf-8", errors="replace"), None, len(data))
