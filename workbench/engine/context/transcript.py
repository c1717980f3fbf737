"""Reading Claude Code's session transcripts (`<projects>/<project>/<session>.jsonl`).

Every entry type is kept (raw dict available); unknown types and broken lines are counted,
never fatal, and a half-written last line is expected. On top of the raw entries this module
knows the conversation rules of spec 04 §11 and the appendix: streaming records that share
`message.id`, sidechains, compact boundaries and the messages after the last one, preserved
segments and their relinks (`preserved_segment.py`), and trusted session titles (the title
and prompt rules are in `titles.py`). The session list of a project, built on this model, is
`session_list.py`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from workbench.engine.context.jsonl import parse_line, split_lines
from workbench.engine.context.preserved_segment import (
    PreservedSegment,
    preserved_segment_relink,
    with_segment,
)
from workbench.engine.context.titles import (
    iso_timestamp,
    last_version,
    pick_title,
    slash_command,
    typed_prompt,
)
from workbench.engine.context.tokens import (
    assistant_message_id,
    content_blocks,
    context_tokens_from_usage,
    inner_message,
    is_synthetic_assistant,
    message_blocks,
    token_count_with_estimation,
    token_usage,
)
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.profiles.records import ALL_RECORD_TYPES
from workbench.engine.progress import ProgressCallback, Reporter
from workbench.engine.records import Record, replace
from workbench.engine.userfiles import open_stream
from workbench.engine.wording import plural, plural_noun

# Transcripts parse to plain dicts: testing `dict` first skips the slow ABC check.
_MAP = (dict, Mapping)

MESSAGE_TYPES = frozenset({"user", "assistant", "system", "attachment"})
KNOWN_TYPES = MESSAGE_TYPES | ALL_RECORD_TYPES
"""Every record type a profiled release writes (spec 04 §11.2 plus what 2.1.332 added)."""
# Claude Code reads at most this much of a transcript when resuming (MAX_TRANSCRIPT_READ_BYTES).
MAX_TRANSCRIPT_READ_BYTES = 50 * 1024 * 1024


class Entry:
    """One parsed transcript line; `raw` is the dict exactly as read."""

    __slots__ = ("raw", "line", "offset")

    def __init__(self, raw: dict[str, Any], line: int = 0, offset: int = 0) -> None:
        self.raw = raw
        self.line = line
        """1-based line number in the file (0 when built in memory)."""
        self.offset = offset
        """Byte offset of the line in the file."""

    def __repr__(self) -> str:
        return f"Entry(line={self.line}, type={self.type!r}, uuid={self.uuid!r})"

    def with_message(self, message: Mapping[str, Any]) -> Entry:
        """A copy carrying `message` in place of its own; the raw dict is copied, not changed."""
        raw = dict(self.raw)
        raw["message"] = message
        return Entry(raw, self.line, self.offset)

    @property
    def type(self) -> str:
        value = self.raw.get("type")
        return value if isinstance(value, str) else ""

    @property
    def subtype(self) -> str | None:
        value = self.raw.get("subtype")
        return value if isinstance(value, str) else None

    @property
    def uuid(self) -> str | None:
        value = self.raw.get("uuid")
        return value if isinstance(value, str) else None

    @property
    def parent_uuid(self) -> str | None:
        value = self.raw.get("parentUuid")
        return value if isinstance(value, str) else None

    @property
    def timestamp(self) -> str | None:
        value = self.raw.get("timestamp")
        return value if isinstance(value, str) else None

    @property
    def is_sidechain(self) -> bool:
        return self.raw.get("isSidechain") is True

    @property
    def is_meta(self) -> bool:
        return self.raw.get("isMeta") is True

    @property
    def is_message(self) -> bool:
        """A conversation message (user, assistant, system, attachment)."""
        return self.type in MESSAGE_TYPES

    @property
    def is_compact_boundary(self) -> bool:
        return self.type == "system" and self.subtype == "compact_boundary"

    @property
    def is_compact_summary(self) -> bool:
        return self.raw.get("isCompactSummary") is True

    @property
    def message(self) -> Mapping[str, Any]:
        return inner_message(self.raw)

    @property
    def content(self) -> Any:
        return self.message.get("content")

    @property
    def blocks(self) -> list[Mapping[str, Any]]:
        """Content blocks (a string content becomes one text block)."""
        return message_blocks(self.raw)

    @property
    def message_id(self) -> str | None:
        return assistant_message_id(self.raw)

    @property
    def request_id(self) -> str | None:
        value = self.raw.get("requestId")
        return value if isinstance(value, str) else None

    @property
    def model(self) -> str | None:
        value = self.message.get("model")
        return value if isinstance(value, str) else None

    @property
    def is_synthetic(self) -> bool:
        """A harness-made assistant message (API error, interruption) with no real usage."""
        return self.type == "assistant" and is_synthetic_assistant(self.raw)

    @property
    def usage(self) -> Mapping[str, Any] | None:
        """Real usage (`getTokenUsage`): None for synthetic and non-assistant entries."""
        return token_usage(self.raw)

    @property
    def compact_metadata(self) -> Mapping[str, Any]:
        value = self.raw.get("compactMetadata")
        return value if isinstance(value, _MAP) else {}

    def tool_uses(self) -> list[Mapping[str, Any]]:
        """The `tool_use` blocks of an assistant entry."""
        return content_blocks(self.raw, "tool_use") if self.type == "assistant" else []

    def tool_results(self) -> list[Mapping[str, Any]]:
        """The `tool_result` blocks of a user entry."""
        return content_blocks(self.raw, "tool_result") if self.type == "user" else []

    def text(self) -> str:
        """The plain text the entry carries (text blocks, string content, tool result text)."""
        parts: list[str] = []
        for block in self.blocks:
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    parts.append(inner)
                elif isinstance(inner, list):
                    parts.extend(
                        i["text"]
                        for i in inner
                        if isinstance(i, _MAP) and isinstance(i.get("text"), str)
                    )
        if self.type == "system" and isinstance(self.raw.get("content"), str):
            parts.append(self.raw["content"])
        return "\n".join(parts)

    def preview(self, limit: int = 120) -> str:
        """A one-line preview for lists."""
        text = " ".join(self.text().split())
        if not text:
            kinds = [str(b.get("type")) for b in self.blocks]
            text = f"[{', '.join(kinds)}]" if kinds else f"[{self.subtype or self.type}]"
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def to_json(self) -> dict[str, Any]:
        """A compact description for lists and the UI (not the raw line)."""
        return {
            "line": self.line,
            "type": self.type,
            "subtype": self.subtype,
            "uuid": self.uuid,
            "parent_uuid": self.parent_uuid,
            "timestamp": self.timestamp,
            "is_sidechain": self.is_sidechain,
            "message_id": self.message_id,
            "preview": self.preview(),
        }


class ReadStats(Record):
    """What reading a transcript found, good and bad."""

    size_bytes: int
    lines: int
    entries: int
    type_counts: dict[str, int]
    unknown_types: dict[str, int]
    broken_lines: int
    broken_line_numbers: tuple[int, ...]
    """The first few broken lines (1-based)."""
    truncated_tail: bool
    """The last line is incomplete: Claude Code is probably still writing it."""
    duplicate_uuids: int
    skipped_bytes: int = 0
    """Bytes not read because the file was larger than the reader's limit."""

    @property
    def problems(self) -> list[str]:
        """Human-readable notes about lines that could not be used."""
        notes: list[str] = []
        if self.broken_lines:
            shown = ", ".join(str(n) for n in self.broken_line_numbers)
            more = "" if self.broken_lines <= len(self.broken_line_numbers) else ", …"
            broken = plural(self.broken_lines, "line")
            verb = "is not a JSON object" if self.broken_lines == 1 else "are not JSON objects"
            notes.append(
                f"{broken} {verb} ({plural_noun(self.broken_lines, 'line')} {shown}{more})"
            )
        if self.truncated_tail:
            notes.append("the last line is incomplete (the session may still be writing it)")
        if self.unknown_types:
            kinds = ", ".join(f"{k} ×{v}" for k, v in sorted(self.unknown_types.items()))
            notes.append(f"entry types the workbench does not know: {kinds}")
        if self.skipped_bytes:
            notes.append(f"{self.skipped_bytes:,} bytes at the start were not read")
        return notes

    def to_json(self) -> dict[str, Any]:
        return {
            "size_bytes": self.size_bytes,
            "lines": self.lines,
            "entries": self.entries,
            "type_counts": self.type_counts,
            "unknown_types": self.unknown_types,
            "broken_lines": self.broken_lines,
            "broken_line_numbers": list(self.broken_line_numbers),
            "truncated_tail": self.truncated_tail,
            "duplicate_uuids": self.duplicate_uuids,
            "skipped_bytes": self.skipped_bytes,
            "problems": self.problems,
        }


class CompactionEvent(Record):
    """One `compact_boundary` and what the file says about it."""

    uuid: str | None
    line: int
    timestamp: str | None
    trigger: str | None
    pre_tokens: int | None
    post_tokens: int | None
    logical_parent_uuid: str | None
    summary_uuid: str | None
    """The `isCompactSummary` user message that follows the boundary."""
    preserved_segment: Mapping[str, Any] | None
    duration_ms: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "uuid": self.uuid,
            "trigger": self.trigger,
            "pre_tokens": self.pre_tokens,
            "post_tokens": self.post_tokens,
            "line": self.line,
            "timestamp": self.timestamp,
            "logical_parent_uuid": self.logical_parent_uuid,
            "summary_uuid": self.summary_uuid,
            "preserved_segment": dict(self.preserved_segment) if self.preserved_segment else None,
            "duration_ms": self.duration_ms,
        }


def compaction_event(entry: Entry, summary_uuid: str | None = None) -> CompactionEvent:
    """The event a `compact_boundary` entry records."""
    meta = entry.compact_metadata
    preserved = meta.get("preservedSegment")
    return CompactionEvent(
        uuid=entry.uuid,
        line=entry.line,
        timestamp=entry.timestamp,
        trigger=_str(meta.get("trigger")),
        pre_tokens=_opt_int(meta.get("preTokens")),
        post_tokens=_opt_int(meta.get("postTokens")),
        logical_parent_uuid=_str(entry.raw.get("logicalParentUuid")),
        summary_uuid=summary_uuid,
        preserved_segment=preserved if isinstance(preserved, _MAP) else None,
        duration_ms=_opt_int(meta.get("durationMs")),
    )


class ApiResponse(Record):
    """One API response, merged from the records streaming split it into."""

    message_id: str
    request_id: str | None
    uuid: str | None
    """The first record's uuid."""
    first_line: int
    last_line: int
    timestamp: str | None
    model: str | None
    records: int
    usage: Mapping[str, Any]
    """From the record with the largest `output_tokens` (early records hold placeholders)."""
    is_sidechain: bool

    @property
    def context_tokens(self) -> int:
        """The prompt size of this call: input + cache creation + cache read."""
        return context_tokens_from_usage(self.usage)

    @property
    def output_tokens(self) -> int:
        value = self.usage.get("output_tokens")
        return value if isinstance(value, int) else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "request_id": self.request_id,
            "uuid": self.uuid,
            "first_line": self.first_line,
            "last_line": self.last_line,
            "timestamp": self.timestamp,
            "model": self.model,
            "records": self.records,
            "context_tokens": self.context_tokens,
            "output_tokens": self.output_tokens,
        }


_PROGRESS_LINES = 4096
"""Lines between two progress reports while parsing a transcript."""


def parse_entries(
    data: bytes,
    *,
    base_offset: int = 0,
    first_line: int = 1,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Entry], ReadStats]:
    """Every line of `data` that is a JSON object, plus counts of everything else.

    `progress` hears how many bytes of `data` were parsed, every few thousand lines (it may
    raise `OperationCancelled` to stop)."""
    entries: list[Entry] = []
    type_counts: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    broken: list[int] = []
    broken_count = 0
    truncated_tail = False
    lines = 0
    ends_cleanly = data.endswith(b"\n")
    last_number = data.count(b"\n") + 1
    for number, offset, line in split_lines(data, base_offset):
        lines += 1
        if progress is not None and lines % _PROGRESS_LINES == 0:
            progress(offset - base_offset)
        raw = parse_line(line)
        if raw is None:
            if number == last_number and not ends_cleanly:
                truncated_tail = True
                continue
            broken_count += 1
            if len(broken) < 10:
                broken.append(number + first_line - 1)
            continue
        kind = raw.get("type")
        kind_name = kind if isinstance(kind, str) else "<none>"
        type_counts[kind_name] += 1
        if kind_name not in KNOWN_TYPES:
            unknown[kind_name] += 1
        entries.append(Entry(raw, number + first_line - 1, offset))
    stats = ReadStats(
        size_bytes=len(data),
        lines=lines,
        entries=len(entries),
        type_counts=dict(type_counts),
        unknown_types=dict(unknown),
        broken_lines=broken_count,
        broken_line_numbers=tuple(broken),
        truncated_tail=truncated_tail,
        duplicate_uuids=0,
    )
    return entries, stats


class Transcript:
    """A whole transcript file: raw entries plus the conversation views Claude Code uses."""

    def __init__(self, path: str, entries: list[Entry], stats: ReadStats) -> None:
        self.path = path
        self.entries = entries
        self.stats = stats

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        max_bytes: int | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Transcript:
        """Read a transcript; missing files and folders are a `NotFoundError`. `on_progress`
        hears how many bytes were parsed ("reading"); raising `OperationCancelled` from it
        stops the read."""
        target = Path(path)
        if target.is_dir():
            raise UserInputError(f"{target} is a folder, not a transcript file")
        try:
            # A regular file only: a FIFO would never end, /dev/zero would fill memory.
            with open_stream(target) as handle:
                size = os.fstat(handle.fileno()).st_size
                skipped = 0
                if max_bytes is not None and size > max_bytes:
                    # Keep the newest part, starting at a line boundary.
                    skipped = size - max_bytes
                    handle.seek(skipped)
                    data = handle.read()
                    cut = data.find(b"\n")
                    skipped += cut + 1 if cut != -1 else len(data)
                    data = data[cut + 1 :] if cut != -1 else b""
                else:
                    data = handle.read()
        except FileNotFoundError:
            raise NotFoundError(f"no transcript at {target}") from None
        except PermissionError:
            raise UserInputError(f"cannot read {target}: permission denied") from None
        report = Reporter(on_progress, "reading", len(data), unit="bytes")
        report(0, force=True)
        entries, stats = parse_entries(
            data, base_offset=skipped, progress=report if report.active else None
        )
        report.finish()
        if skipped:
            stats = _with(stats, skipped_bytes=skipped, size_bytes=size)
        return cls(str(target), entries, stats)

    @classmethod
    def from_bytes(cls, data: bytes, path: str = "<memory>") -> Transcript:
        """A transcript parsed from bytes already in memory."""
        entries, stats = parse_entries(data)
        return cls(path, entries, stats)

    @classmethod
    def from_dicts(cls, rows: Iterable[Mapping[str, Any]], path: str = "<memory>") -> Transcript:
        """A transcript built from entry dicts (tests, generated sessions)."""
        entries = [Entry(dict(row), number) for number, row in enumerate(rows, 1)]
        counts = Counter(e.type or "<none>" for e in entries)
        stats = ReadStats(
            size_bytes=0,
            lines=len(entries),
            entries=len(entries),
            type_counts=dict(counts),
            unknown_types={k: v for k, v in counts.items() if k not in KNOWN_TYPES},
            broken_lines=0,
            broken_line_numbers=(),
            truncated_tail=False,
            duplicate_uuids=0,
        )
        return cls(path, entries, stats)

    # --- identity -------------------------------------------------------------------------

    @cached_property
    def session_id(self) -> str:
        """The file name's stem, else the first `sessionId` in the file."""
        stem = Path(self.path).stem
        if stem and stem != "<memory>":
            return stem
        for entry in self.entries:
            value = entry.raw.get("sessionId")
            if isinstance(value, str):
                return value
        return stem

    @cached_property
    def by_uuid(self) -> dict[str, Entry]:
        """Every entry with a uuid (first occurrence wins), progress lines included."""
        index: dict[str, Entry] = {}
        for entry in self.entries:
            uuid = entry.uuid
            if uuid is not None and uuid not in index:
                index[uuid] = entry
        return index

    # --- conversation ---------------------------------------------------------------------

    @cached_property
    def is_subagent(self) -> bool:
        """A subagent's own transcript: every message is a sidechain message."""
        flags = [e.is_sidechain for e in self.entries if e.type in MESSAGE_TYPES]
        return bool(flags) and all(flags)

    @cached_property
    def messages(self) -> list[Entry]:
        """Main-chain messages in file order, each uuid once (resumes copy earlier lines).

        In a subagent's own transcript the subagent's chain is the main chain.
        """
        seen: set[str] = set()
        out: list[Entry] = []
        sidechain = self.is_subagent
        for entry in self.entries:
            if entry.type not in MESSAGE_TYPES or entry.is_sidechain != sidechain:
                continue
            uuid = entry.uuid
            if uuid is not None:
                if uuid in seen:
                    continue
                seen.add(uuid)
            out.append(entry)
        return out

    @cached_property
    def duplicate_uuids(self) -> int:
        """Main-chain messages dropped because their uuid had already appeared."""
        sidechain = self.is_subagent
        total = sum(
            1 for e in self.entries if e.type in MESSAGE_TYPES and e.is_sidechain == sidechain
        )
        return total - len(self.messages)

    @cached_property
    def sidechain_messages(self) -> list[Entry]:
        """Inline subagent messages (`isSidechain: true`), excluded from the main context."""
        if self.is_subagent:
            return []
        return [e for e in self.entries if e.type in MESSAGE_TYPES and e.is_sidechain]

    @cached_property
    def compactions(self) -> list[CompactionEvent]:
        """Every compact boundary of the main chain, oldest first, paired with its summary."""
        events: list[CompactionEvent] = []
        messages = self.messages
        for index, entry in enumerate(messages):
            if not entry.is_compact_boundary:
                continue
            summary_uuid = None
            for later in messages[index + 1 : index + 12]:
                if later.is_compact_boundary:
                    break
                if later.type == "user" and later.is_compact_summary:
                    summary_uuid = later.uuid
                    break
            events.append(compaction_event(entry, summary_uuid))
        return events

    @cached_property
    def last_boundary_index(self) -> int | None:
        """Index in `messages` of the last compact boundary, or None."""
        for index in range(len(self.messages) - 1, -1, -1):
            if self.messages[index].is_compact_boundary:
                return index
        return None

    @cached_property
    def preserved(self) -> PreservedSegment | None:
        """The preserved segment of the last boundary, relinked as Claude Code loads it."""
        return preserved_segment_relink(self.messages, self.by_uuid, self.last_boundary_index)

    def current_messages(self) -> list[Entry]:
        """What Claude Code sends after the last compaction: the boundary, its summary, any
        preserved messages (usage zeroed), then everything after, in order."""
        boundary = self.last_boundary_index
        if boundary is None:
            return list(self.messages)
        after = self.messages[boundary:]
        segment = self.preserved
        if segment is None or segment.status != "live":
            return list(after)
        return with_segment(after, segment)

    def responses(self, *, sidechain: bool = False) -> list[ApiResponse]:
        """API responses deduplicated by (message.id, requestId), keeping the max-output copy.

        With `sidechain=True`, inline subagent responses are returned instead; replays of a
        parent response inside a sidechain (same id, new request) are dropped.
        """
        source = self.sidechain_messages if sidechain else self.messages
        main_ids = {e.message_id for e in self.messages if e.message_id} if sidechain else set()
        merged: dict[tuple[str, str | None], dict[str, Any]] = {}
        for entry in source:
            if entry.type != "assistant" or entry.is_synthetic:
                continue
            usage = entry.usage
            message_id = entry.message_id
            if usage is None or message_id is None or message_id in main_ids:
                continue
            key = (message_id, entry.request_id)
            slot = merged.get(key)
            if slot is None:
                merged[key] = {"first": entry, "last": entry, "best": usage, "records": 1}
                continue
            slot["last"] = entry
            slot["records"] += 1
            if _output(usage) >= _output(slot["best"]):
                slot["best"] = usage
        return [
            ApiResponse(
                message_id=key[0],
                request_id=key[1],
                uuid=slot["first"].uuid,
                first_line=slot["first"].line,
                last_line=slot["last"].line,
                timestamp=slot["first"].timestamp,
                model=slot["first"].model,
                records=slot["records"],
                usage=slot["best"],
                is_sidechain=sidechain,
            )
            for key, slot in merged.items()
        ]

    # --- facts for lists ------------------------------------------------------------------

    @cached_property
    def model(self) -> str | None:
        """The model of the last real main-chain response."""
        for entry in reversed(self.messages):
            if entry.type == "assistant" and not entry.is_synthetic and entry.model:
                return entry.model
        return None

    @cached_property
    def first_timestamp(self) -> str | None:
        """The first readable timestamp, as ISO 8601 UTC (`toISOString` form)."""
        stamps = (iso_timestamp(e.raw.get("timestamp")) for e in self.entries)
        return next((stamp for stamp in stamps if stamp), None)

    @cached_property
    def last_timestamp(self) -> str | None:
        """The last readable timestamp, as ISO 8601 UTC (`toISOString` form)."""
        stamps = (iso_timestamp(e.raw.get("timestamp")) for e in reversed(self.entries))
        return next((stamp for stamp in stamps if stamp), None)

    @cached_property
    def version(self) -> str | None:
        """The Claude Code release that wrote the last record carrying a `version`."""
        return last_version(self.entries)

    @cached_property
    def title(self) -> str | None:
        """Custom title, AI title, a summary that belongs to this file, the last prompt, or
        the first typed prompt. Summaries naming another session's leaf are ignored (a known
        Claude Code bug writes other sessions' summaries into a file)."""
        return pick_title(self.entries, self.by_uuid, self.first_prompt)

    @cached_property
    def first_prompt(self) -> str | None:
        """The first prompt the user typed (not injected, not a command wrapper, not an
        interruption marker); else the first slash command, as `/name args`."""
        command = None
        for entry in self.messages:
            text = typed_prompt(entry)
            if text:
                return text
            command = command or slash_command(entry)
        return command

    def context_tokens(self) -> int:
        """`tokenCountWithEstimation` over the messages after the last compact boundary."""
        return token_count_with_estimation(self.current_messages())

    def find_index(self, uuid: str, messages: Sequence[Entry] | None = None) -> int | None:
        """Index of the message with `uuid` in `messages` (default: the main chain)."""
        for index, entry in enumerate(self.messages if messages is None else messages):
            if entry.uuid == uuid:
                return index
        return None


# --- helpers --------------------------------------------------------------------------------


def _with(stats: ReadStats, **changes: Any) -> ReadStats:
    return replace(stats, **changes)


def _output(usage: Mapping[str, Any]) -> int:
    value = usage.get("output_tokens")
    return value if isinstance(value, int) else 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _opt_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
