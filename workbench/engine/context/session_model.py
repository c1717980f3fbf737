"""One transcript read once for every view that needs its messages (`engine.context.session`).

The gauge's token counts, the compaction preview and the session-memory trigger all used to
load the whole file, each its own copy (about 250 MB of dicts for a 100 MB transcript). Only
two things of the file are needed after one pass: what Claude Code sends now (the messages
from the last compact boundary on, plus a preserved segment) and where the notes' updates
would fire (a running scan). So the file is streamed, and only the last two compaction
segments are held while reading: the one before the last boundary is where a preserved
segment's messages live.

Anything the window cannot answer exactly (a subagent's own file, a preserved segment whose
chain reaches further back) falls back to a whole-file `Transcript.load`, so the answers are
always the ones the whole file gives.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.engine.context.gc_pause import collection_paused
from workbench.engine.context.jsonl import parse_line
from workbench.engine.context.preserved_segment import preserved_segment_relink, with_segment
from workbench.engine.context.session_memory import TriggerReport, TriggerScan
from workbench.engine.context.transcript import MESSAGE_TYPES, Entry, Transcript
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.progress import ProgressCallback, Reporter
from workbench.engine.userfiles import TRANSCRIPT_LINE_LIMIT, open_stream, skip_rest_of_line


@dataclass(frozen=True, slots=True, weakref_slot=True)
class SessionModel:
    """What the panes and commands need of one transcript, read in one pass."""

    path: str
    key: tuple[int, int]
    """(size, mtime_ns) of the file when it was read: a changed file is read again."""
    model: str | None
    """The model of the last real main-chain response."""
    message_count: int
    """Main-chain messages (each uuid once), the length of the session's timeline."""
    current: tuple[Entry, ...]
    """What Claude Code sends after the last compaction (`Transcript.current_messages`)."""
    trigger: TriggerReport
    """Where session-memory updates would fire over the whole chain."""

    @property
    def session_id(self) -> str:
        return Path(self.path).stem

    def current_messages(self) -> list[Entry]:
        return list(self.current)


def file_key(path: str | os.PathLike[str]) -> tuple[int, int]:
    """(size, mtime_ns) of `path`; a missing file is a `NotFoundError`."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        raise NotFoundError(f"no transcript at {path}") from None
    return stat.st_size, stat.st_mtime_ns


def read_session_model(
    path: str | os.PathLike[str], *, on_progress: ProgressCallback | None = None
) -> SessionModel:
    """Stream `path` once into a `SessionModel` (see the module docstring). `on_progress`
    hears how many bytes were read ("reading"); raising `OperationCancelled` from it stops
    the read."""
    target = Path(path)
    if target.is_dir():
        raise UserInputError(f"{target} is a folder, not a transcript file")
    key = file_key(target)
    try:
        handle = open_stream(target, buffering=1 << 20)
    except FileNotFoundError:
        raise NotFoundError(f"no transcript at {target}") from None
    except PermissionError:
        raise UserInputError(f"cannot read {target}: permission denied") from None
    with handle, collection_paused():
        window = _Window()
        report = Reporter(on_progress, "reading", os.fstat(handle.fileno()).st_size, unit="bytes")
        if report.active:
            report(0, force=True)
            tell = handle.tell
            for entry in _entries(handle):
                window.add(entry)
                report(tell())
            report.finish()
        else:
            for entry in _entries(handle):
                window.add(entry)
    model = window.finish(str(target), key)
    return model if model is not None else _from_whole_file(target, key, on_progress)


def _from_whole_file(
    target: Path, key: tuple[int, int], on_progress: ProgressCallback | None = None
) -> SessionModel:
    with collection_paused():
        loaded = Transcript.load(target, on_progress=on_progress)
    scan = TriggerScan()
    for message in loaded.messages:
        scan.add(message)
    return SessionModel(
        str(target),
        key,
        loaded.model,
        len(loaded.messages),
        tuple(loaded.current_messages()),
        scan.finish(),
    )


def _entries(handle: Any) -> Iterator[Entry]:
    """Every line that is a JSON object, numbered and placed as `Transcript.load` does."""
    readline, limit = handle.readline, TRANSCRIPT_LINE_LIMIT
    pieces = iter(lambda: readline(limit + 1), b"")
    offset, number = 0, 0
    for line in pieces:
        number += 1
        if len(line) > limit and line[-1] != 10:
            skip_rest_of_line(pieces)  # a runaway line: the whole-file read refuses it too
            offset = handle.tell()
            continue
        start = offset
        offset += len(line)
        if line.isspace():
            continue
        raw = parse_line(line.rstrip(b"\n") if line[-1] == 10 else line)
        if raw is not None:
            yield Entry(raw, number, start)


class _Window:
    """The last two compaction segments of the main chain, the trigger scan over all of it,
    and what tells whether the window's answer is the whole file's."""

    __slots__ = (
        "seen",
        "segment",
        "previous",
        "links",
        "previous_links",
        "scan",
        "count",
        "model",
        "main",
        "side",
    )

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.segment: list[Entry] = []  # main-chain messages from the last boundary on
        self.previous: list[Entry] = []  # the segment before it
        # First entry of each uuid (progress lines too) in the two segments, for the
        # preserved segment's parent walk.
        self.links: dict[str, Entry] = {}
        self.previous_links: dict[str, Entry] = {}
        self.scan = TriggerScan()
        self.count = 0
        self.model: str | None = None
        self.main = 0
        self.side = 0

    def add(self, entry: Entry) -> None:
        uuid = entry.uuid
        # A message uuid already seen was first seen here or before the window; a later
        # copy must not stand in for the first (the parent walk then falls back).
        if (
            uuid is not None
            and uuid not in self.links
            and uuid not in self.previous_links
            and uuid not in self.seen
        ):
            self.links[uuid] = entry
        if entry.type not in MESSAGE_TYPES:
            return
        if entry.is_sidechain:
            self.side += 1
            return
        self.main += 1
        if uuid is not None:
            if uuid in self.seen:
                return
            self.seen.add(uuid)
        self.count += 1
        self.scan.add(entry)
        if entry.type == "assistant" and not entry.is_synthetic and entry.model:
            self.model = entry.model
        if entry.is_compact_boundary:
            self.previous, self.segment = self.segment, []
            self.previous_links, self.links = self.links, {}
            if uuid is not None:
                self.links[uuid] = entry
        self.segment.append(entry)

    def finish(self, path: str, key: tuple[int, int]) -> SessionModel | None:
        """The model, or None when only the whole file can answer."""
        if self.main == 0 and self.side > 0:
            return None  # a subagent's own transcript: its sidechain is the main chain
        current = self._current()
        if current is None:
            return None
        return SessionModel(path, key, self.model, self.count, current, self.scan.finish())

    def _current(self) -> tuple[Entry, ...] | None:
        messages = self.segment
        if not messages or not messages[0].is_compact_boundary:
            return tuple(messages)  # never compacted: the whole chain is current
        links = {**self.links, **self.previous_links}  # earlier first occurrence wins
        chain = self.previous + messages
        segment = preserved_segment_relink(chain, links, len(chain) - len(messages))
        if segment is None or segment.status == "stale":
            return tuple(messages)
        if segment.status != "live":
            return None  # the chain may reach before the window: ask the whole file
        return tuple(with_segment(messages, segment))
