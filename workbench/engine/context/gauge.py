"""The threshold gauge: how full the context is right now, on the ladder of spec 04 §9.2.

`used` is `tokenCountWithEstimation` over the messages after the last compact boundary. It
needs only the last real usage and what follows it, so the gauge reads the transcript from
the end: on a 100 MB file it touches a few kilobytes plus one scan for boundary markers.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.context.jsonl import parse_line
from workbench.engine.context.thresholds import Thresholds, TokenWarningState, token_warning_state
from workbench.engine.context.tokens import (
    context_tokens_from_usage,
    inner_message,
    token_count_with_estimation,
    token_usage,
)
from workbench.engine.context.transcript import (
    MESSAGE_TYPES,
    CompactionEvent,
    Entry,
    Transcript,
    compaction_event,
)
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.records import Record
from workbench.engine.userfiles import open_stream
from workbench.engine.wording import plural

if TYPE_CHECKING:
    from workbench.engine.profiles.detect import ResolvedVersion

_BOUNDARY_MARK = b"compact_boundary"
_ASSISTANT_MARK = b'"assistant"'
# How far back to look for the model when the tail holds no assistant reply.
_MODEL_SEARCH_LIMIT = 200


class LastUsage(Record):
    """The last real usage record: what the API measured for the latest call."""

    uuid: str | None
    timestamp: str | None
    message_id: str | None
    context_tokens: int
    output_tokens: int
    total: int

    def to_json(self) -> dict[str, Any]:
        return {
            "uuid": self.uuid,
            "timestamp": self.timestamp,
            "message_id": self.message_id,
            "context_tokens": self.context_tokens,
            "output_tokens": self.output_tokens,
            "total": self.total,
        }


class TailRead(Record):
    """The part of a transcript the gauge needs, read from the end."""

    path: str
    size_bytes: int
    messages: list[Entry]
    """Main-chain messages from the usage anchor (or the last boundary) to the end."""
    model: str | None
    compactions: tuple[CompactionEvent, ...]
    bytes_read: int
    mode: str
    """`tail` (read from the end) or `full` (a live preserved segment needed the whole file)."""
    truncated_tail: bool = False
    broken_lines: int = 0
    sidechain: bool = False
    end_offset: int = 0
    """Where the last complete line ends: the follower continues from here."""


def _last_line_bounds(view: mmap.mmap, end: int) -> tuple[int, int]:
    start = view.rfind(b"\n", 0, end) + 1
    return start, end


def read_gauge_tail(path: str | os.PathLike[str], *, compactions: bool = True) -> TailRead:
    """Read backwards until the last usage's response (or a boundary) is fully covered.

    `compactions=False` skips the one scan of the whole file for boundary markers (the
    status line needs only the tail, and on 100 MB that scan is most of the time)."""
    target = Path(path)
    if target.is_dir():
        raise UserInputError(f"{target} is a folder, not a transcript file")
    try:
        handle = open_stream(target)  # a regular file only: no FIFO, no /dev/zero
    except FileNotFoundError:
        raise NotFoundError(f"no transcript at {target}") from None
    except PermissionError:
        raise UserInputError(f"cannot read {target}: permission denied") from None
    try:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return TailRead(str(target), 0, [], None, (), 0, "tail")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return _read_tail(view, str(target), size, compactions=compactions)
    finally:
        handle.close()


def _read_tail(view: mmap.mmap, path: str, size: int, *, compactions: bool = True) -> TailRead:
    ends_cleanly = view[size - 1 : size] == b"\n"
    end = size - 1 if ends_cleanly else size
    end_offset = size if ends_cleanly else view.rfind(b"\n", 0, size) + 1
    collected: list[Entry] = []
    anchor_id: str | None = None
    found_usage = False
    broken = 0
    truncated = False
    first = True
    lowest = size
    sidechain = _looks_like_subagent(view, size)
    while end >= 0:
        start, stop = _last_line_bounds(view, end)
        lowest = start
        line = view[start:stop]
        is_last = first
        first = False
        end = start - 1
        if not line.strip():
            continue
        raw = parse_line(line)
        if raw is None:
            if is_last and not ends_cleanly:
                truncated = True
            else:
                broken += 1
            continue
        kind = raw.get("type")
        if kind not in MESSAGE_TYPES or (raw.get("isSidechain") is True) != sidechain:
            continue
        entry = Entry(raw, 0, start)
        if kind == "system" and raw.get("subtype") == "compact_boundary":
            meta = raw.get("compactMetadata")
            if (
                not found_usage
                and isinstance(meta, Mapping)
                and isinstance(meta.get("preservedSegment"), Mapping)
            ):
                # Kept messages sit before the boundary in the file; read it all.
                return _full_read(path, size)
            collected.append(entry)
            break
        if kind == "assistant":
            message_id = inner_message(raw).get("id")
            if found_usage:
                collected.append(entry)
                if message_id != anchor_id and message_id is not None:
                    break  # an earlier response: the walk back stops here
                continue
            collected.append(entry)
            if token_usage(raw) is not None:
                found_usage = True
                anchor_id = message_id if isinstance(message_id, str) else None
                if anchor_id is None:
                    break
            continue
        collected.append(entry)
    collected.reverse()
    model = _model_from(collected) or _search_model(view, lowest, sidechain)
    return TailRead(
        path=path,
        size_bytes=size,
        messages=collected,
        model=model,
        compactions=tuple(_scan_compactions(view, size, sidechain)) if compactions else (),
        bytes_read=size - lowest,
        mode="tail",
        truncated_tail=truncated,
        broken_lines=broken,
        sidechain=sidechain,
        end_offset=end_offset,
    )


def _looks_like_subagent(view: mmap.mmap, size: int) -> bool:
    # Subagent transcripts live under `<session>/subagents/`; checking the first message line
    # is enough to tell them from a main transcript with a few inline sidechain lines.
    position = 0
    for _ in range(50):
        if position >= size:
            break
        stop = view.find(b"\n", position)
        stop = size if stop == -1 else stop
        raw = parse_line(view[position:stop])
        position = stop + 1
        if raw is not None and raw.get("type") in ("user", "assistant"):
            return raw.get("isSidechain") is True
    return False


def _model_from(entries: list[Entry]) -> str | None:
    for entry in reversed(entries):
        if entry.type == "assistant" and not entry.is_synthetic and entry.model:
            return entry.model
    return None


def _search_model(view: mmap.mmap, before: int, sidechain: bool) -> str | None:
    position = before
    for _ in range(_MODEL_SEARCH_LIMIT):
        hit = _rfind(view, _ASSISTANT_MARK, 0, position)
        if hit == -1:
            return None
        start = view.rfind(b"\n", 0, hit) + 1
        stop = view.find(b"\n", hit)
        raw = parse_line(view[start : stop if stop != -1 else len(view)])
        position = start
        if raw is None or raw.get("type") != "assistant":
            continue
        if (raw.get("isSidechain") is True) != sidechain:
            continue
        entry = Entry(raw)
        if not entry.is_synthetic and entry.model:
            return entry.model
    return None


SEARCH_WINDOW = 1 << 22
"""Bytes searched per call: mmap's find holds the GIL for a whole search, and a 100 MB file
searched in one go froze the UI thread for ~50 ms while the gauge ran in a worker."""


def _find(view: mmap.mmap, needle: bytes, start: int, end: int) -> int:
    """`view.find(needle, start, end)`, a window at a time (windows overlap by the needle)."""
    while start < end:
        stop = min(start + SEARCH_WINDOW, end)
        hit = view.find(needle, start, min(stop + len(needle) - 1, end))
        if hit != -1:
            return hit
        start = stop
    return -1


def _rfind(view: mmap.mmap, needle: bytes, start: int, end: int) -> int:
    """`view.rfind(needle, start, end)`, a window at a time from the end."""
    top = end
    while top > start:
        low = max(top - SEARCH_WINDOW, start)
        hit = view.rfind(needle, low, min(top + len(needle) - 1, end))
        if hit != -1:
            return hit
        top = low
    return -1


def _scan_compactions(view: mmap.mmap, size: int, sidechain: bool) -> list[CompactionEvent]:
    events: list[CompactionEvent] = []
    position = 0
    while True:
        hit = _find(view, _BOUNDARY_MARK, position, size)
        if hit == -1:
            return events
        start = view.rfind(b"\n", 0, hit) + 1
        stop = view.find(b"\n", hit)
        stop = size if stop == -1 else stop
        position = stop + 1
        raw = parse_line(view[start:stop])
        if raw is None or (raw.get("isSidechain") is True) != sidechain:
            continue
        entry = Entry(raw, 0, start)
        if entry.is_compact_boundary:
            events.append(compaction_event(entry))


def _full_read(path: str, size: int) -> TailRead:
    transcript = Transcript.load(path)
    current = transcript.current_messages()
    return TailRead(
        path=path,
        size_bytes=size,
        messages=current,
        model=transcript.model,
        compactions=tuple(transcript.compactions),
        bytes_read=size,
        mode="full",
        truncated_tail=transcript.stats.truncated_tail,
        broken_lines=transcript.stats.broken_lines,
        sidechain=transcript.is_subagent,
        end_offset=_complete_end(path, size),
    )


def _complete_end(path: str, size: int) -> int:
    with open_stream(path) as handle:
        handle.seek(max(0, size - 1))
        if handle.read(1) == b"\n":
            return size
        handle.seek(0)
        data = handle.read()
    return data.rfind(b"\n") + 1


# --- the report -----------------------------------------------------------------------------


class GaugeReport(Record):
    """One reading of the gauge: the ladder, the count and where it sits."""

    transcript: str | None
    session_id: str | None
    model: str
    model_source: str
    """`flag`, `transcript` or `default`."""
    thresholds: Thresholds
    used: int
    used_method: str
    state: TokenWarningState
    compactions: tuple[CompactionEvent, ...]
    last_usage: LastUsage | None
    size_bytes: int = 0
    bytes_read: int = 0
    read_mode: str = "tail"
    problems: tuple[str, ...] = ()
    claude: ResolvedVersion | None = None
    """The release whose rules the reading follows, and how it was chosen."""

    @property
    def notes(self) -> tuple[str, ...]:
        """What the reading means under the release in use (no threshold, unknown model)."""
        return self.thresholds.notes

    def to_json(self) -> dict[str, Any]:
        t = self.thresholds
        return {
            **(self.claude.to_json() if self.claude else {}),
            "transcript": self.transcript,
            "session_id": self.session_id,
            "model": self.model,
            "model_source": self.model_source,
            "context_window": t.context_window,
            "context_window_source": t.context_window_source,
            "max_output_tokens": t.max_output_tokens,
            "reserved": t.reserved,
            "effective_window": t.effective_window,
            "auto_compact_enabled": t.auto_compact_enabled,
            "auto_compact_disabled_by": t.auto_compact_disabled_by,
            "thresholds": t.thresholds_json(),
            "threshold_compaction": t.threshold_compaction,
            "reactive_compaction": t.reactive_compaction,
            "model_listed": t.model_listed,
            "model_known_from": t.model_known_from,
            "estimate_padding": t.estimate_padding,
            "notes": list(t.notes),
            "used": self.used,
            "used_method": self.used_method,
            "measured": self.last_usage.context_tokens if self.last_usage else None,
            "percent_left": self.state.percent_left,
            "above_warning": self.state.above_warning,
            "above_error": self.state.above_error,
            "above_autocompact": self.state.above_autocompact,
            "at_blocking": self.state.at_blocking,
            "label": self.state.label,
            "compactions": [
                {"uuid": c.uuid, "trigger": c.trigger, "pre_tokens": c.pre_tokens}
                for c in self.compactions
            ],
            "last_usage": self.last_usage.to_json() if self.last_usage else None,
            "overrides": [
                {"name": o.name, "value": o.value, "applied": o.applied, "effect": o.effect}
                for o in t.overrides
            ],
            "size_bytes": self.size_bytes,
            "bytes_read": self.bytes_read,
            "read_mode": self.read_mode,
            "problems": list(self.problems),
        }

    def status_line(self) -> str:
        """One short line: used/threshold, percent left, and Claude Code's label if shown."""
        t = self.thresholds
        target = t.autocompact if t.auto_compact_enabled else t.effective_window
        pct = round(self.used / target * 100) if target > 0 else 0
        parts = [f"ctx {_short(self.used)}/{_short(target)} ({pct}%)"]
        if not t.threshold_compaction:
            parts.append(
                "no threshold compaction" + (" (reactive)" if t.reactive_compaction else "")
            )
        elif self.state.at_blocking:
            parts.append("at the blocking limit")
        elif self.state.above_autocompact:
            parts.append("auto-compact due")
        elif self.state.label:
            parts.append(self.state.label)
        else:
            parts.append(f"{self.state.percent_left}% left")
        if not t.model_listed:
            parts.append(f"model unknown to Claude Code {t.claude_version}")
        return " · ".join(parts)


def _short(value: int) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M".replace(".0M", "M")
    if value >= 1_000:
        return f"{value / 1000:.1f}k".replace(".0k", "k")
    return str(value)


def last_usage_of(messages: list[Entry]) -> LastUsage | None:
    """The last real usage in `messages`, as the gauge shows it."""
    for entry in reversed(messages):
        usage = token_usage(entry.raw)
        if usage is not None:
            output = usage.get("output_tokens")
            context = context_tokens_from_usage(usage)
            out = output if isinstance(output, int) else 0
            return LastUsage(
                entry.uuid, entry.timestamp, entry.message_id, context, out, context + out
            )
    return None


def gauge_from_messages(
    messages: list[Entry],
    thresholds: Thresholds,
    *,
    transcript: str | None,
    session_id: str | None,
    model_source: str,
    compactions: tuple[CompactionEvent, ...] = (),
    used: int | None = None,
    used_method: str | None = None,
    size_bytes: int = 0,
    bytes_read: int = 0,
    read_mode: str = "tail",
    problems: tuple[str, ...] = (),
    claude: ResolvedVersion | None = None,
) -> GaugeReport:
    """A gauge reading for messages after the last boundary (count computed unless given)."""
    if used is None:
        used = token_count_with_estimation(messages)
    if used_method is None:
        usage = last_usage_of(messages)
        if usage is None:
            used_method = "estimate"
        else:
            used_method = "usage" if used == usage.total else "usage+estimate"
    return GaugeReport(
        transcript=transcript,
        session_id=session_id,
        model=thresholds.model,
        model_source=model_source,
        thresholds=thresholds,
        used=used,
        used_method=used_method,
        state=token_warning_state(used, thresholds),
        compactions=compactions,
        last_usage=last_usage_of(messages),
        size_bytes=size_bytes,
        bytes_read=bytes_read,
        read_mode=read_mode,
        problems=problems,
        claude=claude,
    )


def tail_problems(tail: TailRead) -> tuple[str, ...]:
    """Notes about the lines the tail read could not use."""
    notes: list[str] = []
    if tail.truncated_tail:
        notes.append("the last line is incomplete (the session may still be writing it)")
    if tail.broken_lines:
        broken = plural(tail.broken_lines, "line")
        verb = "is not a JSON object" if tail.broken_lines == 1 else "are not JSON objects"
        notes.append(f"{broken} near the end {verb}")
    return tuple(notes)
