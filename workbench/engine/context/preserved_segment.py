"""A partial compaction's preserved segment: the messages a `compact_boundary` kept, and the
relink Claude Code applies to them when it loads the session (`applyPreservedSegmentRelinks`).

Apart from `transcript.py` because two readers share it: the whole-file `Transcript` and the
streamed session model (`session_model.py`), which relinks across the two chains it keeps.
It reads entries through their properties and copies them with `Entry.with_message`, so
`Entry` is imported for its type alone and `transcript.py` can import this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.engine.records import Record

if TYPE_CHECKING:
    from workbench.engine.context.transcript import Entry

_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


class PreservedSegment(Record):
    """A partial compaction's kept messages and whether Claude Code would relink them."""

    status: str
    """`live` (relinked on load), `broken` (head not reachable: the full history loads) or
    `stale` (a later boundary without a segment superseded it)."""
    head_uuid: str | None
    anchor_uuid: str | None
    tail_uuid: str | None
    messages: tuple[Entry, ...] = ()
    """Head to tail, with assistant usage zeroed as Claude Code does on load."""

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "head_uuid": self.head_uuid,
            "anchor_uuid": self.anchor_uuid,
            "tail_uuid": self.tail_uuid,
            "messages": len(self.messages),
        }


def preserved_segment_relink(
    messages: Sequence[Entry], by_uuid: Mapping[str, Entry], last_boundary: int | None
) -> PreservedSegment | None:
    """`applyPreservedSegmentRelinks`: walk tail → head through `parentUuid` and zero usage."""
    if last_boundary is None:
        return None
    segment_boundary = None
    for index in range(last_boundary, -1, -1):
        entry = messages[index]
        if entry.is_compact_boundary and isinstance(
            entry.compact_metadata.get("preservedSegment"), Mapping
        ):
            segment_boundary = index
            break
    if segment_boundary is None:
        return None
    meta = messages[segment_boundary].compact_metadata["preservedSegment"]
    head, anchor, tail = (
        _str(meta.get("headUuid")),
        _str(meta.get("anchorUuid")),
        _str(meta.get("tailUuid")),
    )
    if segment_boundary != last_boundary:
        return PreservedSegment("stale", head, anchor, tail)
    chain: list[Entry] = []
    current = by_uuid.get(tail) if tail else None
    seen: set[str] = set()
    while current is not None and current.uuid not in seen:
        seen.add(current.uuid or "")
        if current.is_message:
            chain.append(current)
        if current.uuid == head:
            break
        parent = current.parent_uuid
        current = by_uuid.get(parent) if parent else None
    if not chain or chain[-1].uuid != head:
        return PreservedSegment("broken", head, anchor, tail)
    chain.reverse()
    return PreservedSegment("live", head, anchor, tail, tuple(_zero_usage(e) for e in chain))


def with_segment(after: Sequence[Entry], segment: PreservedSegment) -> list[Entry]:
    """The messages from a boundary on, as Claude Code loads them: the segment's messages put
    back after its anchor (right after the boundary when the anchor is not there), each once."""
    kept_uuids = {e.uuid for e in segment.messages}
    tail = [e for e in after if e.uuid not in kept_uuids]
    insert_at = 1
    for position, entry in enumerate(tail):
        if entry.uuid == segment.anchor_uuid:
            insert_at = position + 1
            break
    return tail[:insert_at] + list(segment.messages) + tail[insert_at:]


def _zero_usage(entry: Entry) -> Entry:
    # Zeroed usage stops an immediate re-compaction after resume; copy, never mutate.
    if entry.type != "assistant" or not isinstance(entry.message.get("usage"), Mapping):
        return entry
    usage = dict(entry.message["usage"])
    for name in _USAGE_FIELDS:
        usage[name] = 0
    message = dict(entry.message)
    message["usage"] = usage
    return entry.with_message(message)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
