"""Append-only daily logs: `<memory>/logs/YYYY/MM/YYYY-MM-DD.md` (spec 01 §1.5, 02 §8.1).

In assistant mode Claude Code appends short timestamped bullets to the log of the local day,
creating the file and its folders on first write, and a nightly consolidation distils the logs
into topic files. `workbench log TEXT` adds an entry the same way. Each append rewrites the
file atomically through the local history (so it can be undone) while holding a lock, so two
appends never lose one another.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.errors import UserInputError
from workbench.engine.userfiles import NOTES_LIMIT, first_invalid_utf8_line, read_bytes

if TYPE_CHECKING:
    from workbench.engine.engine import Engine

MAX_ENTRY_CHARS = 2000
LOG_ACTION = "log-append"


@dataclass(frozen=True)
class LogEntry:
    """One appended bullet and where it went."""

    path: str
    abs_path: str
    date: str
    line: str
    created: bool
    """The day's file did not exist before this entry."""
    history_id: str
    redacted: int = 0
    """Secrets replaced by `[REDACTED]` before the entry was written."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "abs_path": self.abs_path,
            "date": self.date,
            "line": self.line,
            "created": self.created,
            "history_id": self.history_id,
            "redacted": self.redacted,
        }


def format_entry(text: str, when: datetime) -> str:
    """`- HH:MM text`: one line, inner line breaks folded to spaces."""
    flat = " ".join(text.split())
    if not flat:
        raise UserInputError("the log entry is empty")
    if len(flat) > MAX_ENTRY_CHARS:
        raise UserInputError(
            f"the log entry is {len(flat)} characters; keep it under {MAX_ENTRY_CHARS} "
            "(logs hold short bullets; put detail in a memory file)"
        )
    return f"- {when:%H:%M} {flat}"


def append_entry(engine: Engine, text: str, *, now: datetime | None = None) -> LogEntry:
    """Append one bullet to today's log (local date), creating the file when needed."""
    from workbench.engine.team.secrets.redaction import redact

    when = (now or datetime.now()).astimezone()
    # A log is read back into the agent's context (and consolidated into memories), so a
    # credential typed into an entry is replaced before it is written, shown or recorded.
    redaction = redact(format_entry(text, when))
    line = redaction.text
    path = Path(engine.locations.daily_log_path(when.date()))
    with _append_lock(engine):
        try:
            existing: bytes | None = read_bytes(path, NOTES_LIMIT, "a daily log")
        except FileNotFoundError:
            existing = None
        if existing is None:
            body = f"# {when:%Y-%m-%d}\n\n{line}\n"
        else:
            number = first_invalid_utf8_line(existing)
            if number is not None:
                raise UserInputError(
                    f"{engine.locations.relative(path)} has bytes that are not UTF-8 on line "
                    f"{number}; an append would rewrite them, so nothing was written"
                )
            text_before = existing.decode("utf-8")
            separator = "" if text_before.endswith("\n") or not text_before else "\n"
            body = f"{text_before}{separator}{line}\n"
        entry = engine.history.write(path, body.encode("utf-8"), LOG_ACTION, note=line)
    return LogEntry(
        path=engine.locations.relative(path),
        abs_path=str(path),
        date=f"{when:%Y-%m-%d}",
        line=line,
        created=existing is None,
        history_id=entry.id,
        redacted=redaction.count,
    )


@contextmanager
def _append_lock(engine: Engine) -> Iterator[None]:
    # The log file itself is replaced on every write, so the lock lives beside our history.
    folder = engine.history.folder
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(folder / "log-append.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
