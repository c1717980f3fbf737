"""The session list of a project: which `<session>.jsonl` files it has and a summary of each
(title, size, messages, model, context now), as `workbench transcripts` and the panes' session
pickers show them.

Apart from `transcript.py` because it works on a folder of files, not on one transcript: it
reads each file through the transcript model, or, for a big file, samples it with the gauge's
tail read and a pass over the title lines.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.context.jsonl import parse_line
from workbench.engine.context.titles import (
    iso_timestamp,
    last_version,
    pick_title,
    slash_command,
    typed_prompt,
)
from workbench.engine.context.tokens import token_count_with_estimation
from workbench.engine.context.transcript import Entry, Transcript
from workbench.engine.jsutil import js_iso
from workbench.engine.records import Record
from workbench.engine.userfiles import iter_lines, open_stream


class SessionInfo(Record):
    """One session of a project, as `workbench transcripts` lists it."""

    session_id: str
    path: str
    size_bytes: int
    mtime: str
    messages: int
    first_timestamp: str | None
    last_timestamp: str | None
    title: str | None
    model: str | None
    context_tokens: int
    compactions: int
    broken_lines: int = 0
    has_session_memory: bool = False
    subagent_transcripts: int = 0
    claude_version: str | None = None
    """The Claude Code release that wrote the session (its last `version` field)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "path": self.path,
            "size_bytes": self.size_bytes,
            "mtime": self.mtime,
            "messages": self.messages,
            "first_timestamp": self.first_timestamp,
            "last_timestamp": self.last_timestamp,
            "title": self.title,
            "model": self.model,
            "context_tokens": self.context_tokens,
            "compactions": self.compactions,
            "broken_lines": self.broken_lines,
            "has_session_memory": self.has_session_memory,
            "subagent_transcripts": self.subagent_transcripts,
            "claude_version": self.claude_version,
        }


def session_files(transcripts_dir: str | os.PathLike[str]) -> list[Path]:
    """The project's `<session>.jsonl` files, newest first."""
    folder = Path(transcripts_dir)
    try:
        files = [p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(files, key=_mtime, reverse=True)


# Above this size the session list samples a file instead of parsing all of it.
QUICK_INFO_BYTES = 16 * 1024 * 1024


def session_info(path: str | os.PathLike[str]) -> SessionInfo:
    """Read one transcript and summarise it for the session list."""
    target = Path(path)
    stat = target.stat()
    session_dir = target.with_suffix("")
    subagents = session_dir / "subagents"
    extras: _SessionExtras = {
        "has_session_memory": (session_dir / "session-memory" / "summary.md").is_file(),
        "subagent_transcripts": sum(1 for _ in subagents.rglob("agent-*.jsonl"))
        if subagents.is_dir()
        else 0,
    }
    if stat.st_size > QUICK_INFO_BYTES:
        return _quick_session_info(target, stat, extras)
    transcript = Transcript.load(target)
    return SessionInfo(
        session_id=transcript.session_id,
        path=str(target),
        size_bytes=stat.st_size,
        mtime=js_iso(stat.st_mtime * 1000),
        messages=sum(1 for e in transcript.messages if e.type in ("user", "assistant")),
        first_timestamp=transcript.first_timestamp,
        last_timestamp=transcript.last_timestamp,
        title=transcript.title,
        model=transcript.model,
        context_tokens=transcript.context_tokens(),
        compactions=len(transcript.compactions),
        broken_lines=transcript.stats.broken_lines,
        claude_version=transcript.version,
        **extras,
    )


_TITLE_TYPES = frozenset({b"custom-title", b"ai-title", b"summary", b"last-prompt"})


if TYPE_CHECKING:  # a TypedDict class evaluates its annotations: a millisecond per import
    from typing import TypedDict

    class _SessionExtras(TypedDict):
        """The session-list facts read beside the transcript (its folder), not from it."""

        has_session_memory: bool
        subagent_transcripts: int


def _quick_session_info(target: Path, stat: os.stat_result, extras: _SessionExtras) -> SessionInfo:
    """The session-list facts of a big file: the gauge's tail read for the context and model,
    and one pass that parses only title lines and the first prompt. Message counts come from
    the lines' type keys; broken lines are not counted here."""
    from workbench.engine.context.gauge import read_gauge_tail
    from workbench.engine.context.jsonl import sniff_type

    tail = read_gauge_tail(target)
    messages = 0
    first_stamp: str | None = None
    titles: list[Entry] = []
    first_prompt: str | None = None
    first_command: str | None = None
    with open_stream(target, buffering=1 << 20) as handle:
        for line in iter_lines(handle):
            kind = sniff_type(line)
            if kind in _TITLE_TYPES:
                raw = parse_line(line)
                if raw is not None:
                    titles.append(Entry(raw))
                continue
            # Assistant lines name their type after the message, so the sniff cannot see it.
            is_message = kind == b"user" if kind is not None else b'"type":"assistant"' in line
            if not is_message or b'"isSidechain":true' in line[:400]:
                continue
            messages += 1
            if first_stamp is None or (first_prompt is None and kind == b"user"):
                raw = parse_line(line)
                if raw is not None:
                    entry = Entry(raw)
                    first_stamp = first_stamp or iso_timestamp(raw.get("timestamp"))
                    first_prompt = first_prompt or typed_prompt(entry)
                    first_command = first_command or slash_command(entry)
    stamps = (iso_timestamp(e.raw.get("timestamp")) for e in reversed(tail.messages))
    last_stamp = next((stamp for stamp in stamps if stamp), None)
    return SessionInfo(
        session_id=target.stem,
        path=str(target),
        size_bytes=stat.st_size,
        mtime=js_iso(stat.st_mtime * 1000),
        messages=messages,
        first_timestamp=first_stamp,
        last_timestamp=last_stamp,
        # Summary leaves could be anywhere in a big file: trust them, as the resume picker does.
        title=pick_title(titles, None, first_prompt or first_command),
        model=tail.model,
        context_tokens=token_count_with_estimation(tail.messages),
        compactions=len(tail.compactions),
        broken_lines=tail.broken_lines,
        claude_version=last_version(tail.messages),
        **extras,
    )


def list_sessions(transcripts_dir: str | os.PathLike[str]) -> list[SessionInfo]:
    """Every session of a project, newest first."""
    return [session_info(path) for path in session_files(transcripts_dir)]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
