"""What each API call's context is made of: a streaming pass over a transcript.

Every main-chain message is split into the blocks Claude Code sends (tool results by tool and
by file, tool calls, attachments by kind, reminders, commands, user and assistant text,
thinking, images) and each is counted with Claude Code's own rough estimate, the same one the
replay's meter uses, so the categories of a call add up exactly to the estimate of what the
transcript says was sent. The system prompt, tools and instruction files appear in no
transcript: their size is the difference at the session's first call (taken once, for every
call); what differs after that is shown per call as the difference, never folded away.

One pass: per call a small dict of totals and the slice of the session's items it sent (an
item is a small row: category, label, tokens, line, first call, tool, file); the current
segment's messages are kept (image data dropped) so the micro-compaction and file-restoration
previews can say what each would do to the items in context now.
"""

from __future__ import annotations

import heapq
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.context.attribution_models import (
    OVERHEAD,
    AttributionReport,
    CallPoint,
    CompactionMark,
    ContextItem,
    FileRead,
    ItemFates,
)
from workbench.engine.context.gc_pause import collection_paused
from workbench.engine.context.jsonl import parse_line, sniff_type
from workbench.engine.context.thresholds import Thresholds
from workbench.engine.context.tokens import (
    IMAGE_MAX_TOKEN_SIZE,
    _rough,
    attachment_api_texts,
    context_tokens_from_usage,
    is_synthetic_assistant,
    rough_token_count,
    rough_tokens_for_block,
)
from workbench.engine.context.transcript import MESSAGE_TYPES
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.shown_text import shown
from workbench.engine.userfiles import (
    TRANSCRIPT_LINE_LIMIT,
    line_pieces,
    open_stream,
    skip_rest_of_line,
)

if TYPE_CHECKING:
    from workbench.engine.context.spend import SpendTally
    from workbench.engine.profiles.detect import ResolvedVersion

LARGEST = 15
"""Items listed as the largest in context now."""
EARLIER_LARGEST = 5
_MAP = (dict, Mapping)
_MESSAGE_TYPE_BYTES = frozenset(kind.encode() for kind in MESSAGE_TYPES)
_MEDIA = frozenset({"image", "document"})
_COMMAND_MARKERS = ("<command-name>", "<local-command-stdout>", "<local-command-caveat>")
_LABEL_KEYS = {
    "Read": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
    "Bash": "command",
    "Grep": "pattern",
    "Glob": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
    "Task": "description",
    "Agent": "description",
}
_AGENT_PROGRESS = b'"agent_progress"'
_PATH_TOOLS = frozenset({"Read", "Edit", "MultiEdit", "Write", "NotebookEdit"})


def _tool_label(name: str, tool_input: Any) -> tuple[str, str | None]:
    """`Read src/tax.py`, and the file a file tool touched."""
    key = _LABEL_KEYS.get(name)
    value = tool_input.get(key) if key and isinstance(tool_input, _MAP) else None
    if not isinstance(value, str) or not value:
        return name, None
    text = " ".join(value.split())
    if len(text) <= 80:
        shown = text
    elif name in _PATH_TOOLS:
        shown = "…" + text[-79:]  # a path's end names the file
    else:
        shown = text[:79] + "…"
    return f"{name} {shown}", (value if name in _PATH_TOOLS else None)


def _text_category(text: str, raw: Mapping[str, Any]) -> str:
    if raw.get("isCompactSummary") is True:
        return "compact_summary"
    head = text.lstrip()[:40]
    if head.startswith("<system-reminder>"):
        return "reminder"
    if raw.get("isMeta") is True or any(m in text[:400] for m in _COMMAND_MARKERS):
        return "command"
    return "user_text"


def _preview(text: str, limit: int = 60) -> str:
    flat = " ".join(text[:400].split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _other(block: Any, tokens: int, line: int, call: int) -> tuple[Any, ...]:
    kind = block.get("type") if isinstance(block, _MAP) else None
    label = f"{kind} block" if isinstance(kind, str) else "a block of another kind"
    return ("other", label, tokens, line, call)


def _slim(raw: dict[str, Any]) -> dict[str, Any]:
    """A copy of a message with image and document data emptied (they count 2,000 each)."""
    inner = raw.get("message")
    if not isinstance(inner, _MAP):
        return raw
    content = inner.get("content")
    if not isinstance(content, list):
        return raw

    def strip(block: Any) -> Any:
        if not isinstance(block, _MAP):
            return block
        kind = block.get("type")
        if kind in _MEDIA and isinstance(block.get("source"), _MAP):
            return {**block, "source": {**block["source"], "data": ""}}
        if kind == "tool_result" and isinstance(block.get("content"), list):
            return {**block, "content": [strip(b) for b in block["content"]]}
        return block

    return {
        **raw,
        "message": {**inner, "content": [strip(b) for b in content]},
        "toolUseResult": None,
    }


class _Walk:
    """The running state of one pass."""

    def __init__(self, *, keep_items: bool) -> None:
        self.keep_items = keep_items
        self.tally: dict[str, int] = {}
        self.items: list[tuple[Any, ...]] = []
        """Every item of the session; the current segment's start at `segment_start`."""
        self.segment_start = 0
        self.tools: dict[str, tuple[str, str, str | None]] = {}
        self.calls: list[CallPoint] = []
        self.compactions: list[CompactionMark] = []
        self.segment_rows: list[dict[str, Any]] = []
        self.earlier: list[tuple[int, list[tuple[Any, ...]]]] = []
        self.segment = 0
        self.overhead: int | None = None
        self.current_id: str | None = None
        self.restored = 0
        self.pending_boundary: dict[str, Any] | None = None
        self.messages = 0
        self.model: str | None = None
        self.lookahead = 0
        self.first_prompt: str | None = None
        self.media = False
        """The message being read holds an image or a document (its data is not kept)."""
        self.adds: list[tuple[str, int]] = []
        """What the message being read added, by category."""
        self.messages_now: dict[str, tuple[Any, tuple[tuple[str, int], ...], int, int]] = {}
        """uuid → (parent uuid, its adds, its items' start and end) for the current segment,
        and the segment before it: a partial compaction keeps messages from there."""
        self.messages_before: dict[str, tuple[Any, tuple[tuple[str, int], ...], int, int]] = {}
        self.notes: list[str] = []

    def add(self, category: str, tokens: int, item: tuple[Any, ...]) -> None:
        if not tokens:
            return
        self.tally[category] = self.tally.get(category, 0) + tokens
        self.adds.append((category, tokens))
        if self.keep_items:
            # Every counted block is an item, so a call's items add up to its categories.
            self.items.append(item)

    # --- messages ---------------------------------------------------------------------------

    def user(self, raw: dict[str, Any], line: int, call: int) -> None:
        inner = raw.get("message")
        content = inner.get("content") if isinstance(inner, _MAP) else None
        if isinstance(content, str):
            category = _text_category(content, raw)
            tokens = _rough(content)
            if category == "user_text" and self.first_prompt is None and content.strip():
                self.first_prompt = _preview(content, 120)
            self.add(category, tokens, (category, _preview(content), tokens, line, call))
            return
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict):
                tokens = rough_tokens_for_block(block)
                self.add("other", tokens, _other(block, tokens, line, call))
                continue
            kind = block.get("type")
            if kind == "tool_result":
                self._tool_result(block, line, call)
            elif kind == "text":
                text = block.get("text")
                text = text if isinstance(text, str) else ("" if text is None else str(text))
                tokens = _rough(text)
                category = _text_category(text, raw)
                if category == "user_text" and self.first_prompt is None and text.strip():
                    self.first_prompt = _preview(text, 120)
                self.add(category, tokens, (category, _preview(text), tokens, line, call))
            elif kind in _MEDIA:
                self.add(
                    "image", IMAGE_MAX_TOKEN_SIZE, ("image", kind, IMAGE_MAX_TOKEN_SIZE, line, call)
                )
            else:
                tokens = rough_tokens_for_block(block)
                self.add("other", tokens, _other(block, tokens, line, call))

    def _tool_result(self, block: dict[str, Any], line: int, call: int) -> None:
        tool_id = block.get("tool_use_id")
        known = self.tools.get(tool_id) if isinstance(tool_id, str) else None
        name, label, path = known if known else ("unknown tool", "a tool result", None)
        category = f"tool_result:{name}"
        content = block.get("content")
        tokens = 0
        media = 0
        if type(content) is str:
            tokens = _rough(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, _MAP) and part.get("type") in _MEDIA:
                    media += 1
                else:
                    tokens += rough_tokens_for_block(part)
        self.add(category, tokens, (category, label, tokens, line, call, name, path, tool_id))
        if media:
            self.media = True
            size = media * IMAGE_MAX_TOKEN_SIZE
            self.add(
                "image",
                size,
                ("image", f"image from {label}", size, line, call, name, None, tool_id),
            )

    def assistant(self, raw: dict[str, Any], line: int, call: int) -> None:
        inner = raw.get("message")
        content = inner.get("content") if isinstance(inner, _MAP) else None
        if isinstance(content, str):
            self.add(
                "assistant_text",
                _rough(content),
                ("assistant_text", _preview(content), _rough(content), line, call),
            )
            return
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict):
                tokens = rough_tokens_for_block(block)
                self.add("other", tokens, _other(block, tokens, line, call))
                continue
            kind = block.get("type")
            tokens = rough_tokens_for_block(block)
            if kind == "text":
                text = block.get("text")
                label = _preview(text) if isinstance(text, str) else "text"
                self.add("assistant_text", tokens, ("assistant_text", label, tokens, line, call))
            elif kind == "tool_use":
                given = block.get("name")
                name = given if isinstance(given, str) else "tool"
                label, path = _tool_label(name, block.get("input"))
                tool_id = block.get("id")
                if isinstance(tool_id, str):
                    self.tools[tool_id] = (name, label, path)
                self.add(
                    "tool_use",
                    tokens,
                    ("tool_use", f"{label} (call)", tokens, line, call, name, path, tool_id),
                )
            elif kind in ("thinking", "redacted_thinking"):
                self.add("thinking", tokens, ("thinking", "thinking", tokens, line, call))
            elif kind in _MEDIA:
                self.media = True
                self.add("image", tokens, ("image", kind, tokens, line, call))
            else:
                self.add("other", tokens, _other(block, tokens, line, call))

    def attachment(self, raw: dict[str, Any], line: int, call: int) -> None:
        attachment = raw.get("attachment")
        if not isinstance(attachment, _MAP):
            return
        kind = attachment.get("type") if isinstance(attachment.get("type"), str) else "unknown"
        tokens = sum(rough_token_count(text) for text in attachment_api_texts(attachment))
        name = attachment.get("filename") or attachment.get("path")
        label = f"{kind} {name}" if isinstance(name, str) else kind
        path = (
            name if kind in ("file", "compact_file_reference") and isinstance(name, str) else None
        )
        self.add(
            f"attachment:{kind}",
            tokens,
            (f"attachment:{kind}", label, tokens, line, call, None, path),
        )
        if kind in ("file", "compact_file_reference") and not self._segment_has_call():
            self.restored += 1

    def _segment_has_call(self) -> bool:
        return bool(self.calls) and self.calls[-1].segment == self.segment


def _rows(handle: Any, spend: SpendTally | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Main-chain candidates: (line number, entry), each uuid once; lines are bounded (a
    runaway line is read past, never held or parsed) and numbered as the file numbers them.
    With `spend`, the `agent_progress` lines (a subagent's calls) are tallied on the way."""
    seen: set[str] = set()
    limit = TRANSCRIPT_LINE_LIMIT
    pieces = line_pieces(handle, limit)
    for number, line in enumerate(pieces, 1):
        if len(line) > limit and line[-1] != 10:
            # The rest of the line is read from `pieces` past `enumerate`, so the numbers
            # stay one per line without correction.
            skip_rest_of_line(pieces)
            continue
        kind = sniff_type(line)
        if kind is not None and kind not in _MESSAGE_TYPE_BYTES:
            if spend is not None and kind == b"progress" and _AGENT_PROGRESS in line:
                progress = parse_line(line)
                if progress is not None:
                    spend.add_progress(progress)
            continue
        raw = parse_line(line)
        if raw is None or raw.get("type") not in MESSAGE_TYPES:
            if spend is not None and raw is not None and raw.get("type") == "progress":
                spend.add_progress(raw)
            continue
        uuid = raw.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue
            seen.add(uuid)
        yield number, raw


def attribute_file(
    path: str | os.PathLike[str],
    *,
    thresholds_for: Callable[[str | None], Thresholds],
    default_model: str,
    claude: ResolvedVersion | None = None,
    now: datetime | None = None,
    previews: Mapping[str, Any] | None = None,
    keep_items: bool = True,
    spend: SpendTally | None = None,
) -> AttributionReport:
    """Attribute a transcript file in one streaming pass (see the module docstring).

    `previews` carries the file-restoration options of the compaction preview
    (`project_root`, `excluded_paths`, `plan_dir`); None skips the previews. `spend`, when
    given, tallies every call the file records (sidechains and subagent progress too).
    """
    target = Path(path)
    try:
        # A regular file only (a FIFO would never end), bounded lines.
        handle = open_stream(target, buffering=1 << 20)
    except FileNotFoundError:
        raise NotFoundError(f"no transcript at {target}") from None
    except IsADirectoryError:
        raise UserInputError(f"{target} is a folder, not a transcript file") from None
    # The cyclic collector waits, as in the replay: the pass allocates millions of objects
    # none of which is in a cycle, and now keeps every item of the session alive.
    with handle, collection_paused():
        rows = _rows(handle, spend)
        first = next(rows, None)
        sidechain = first is not None and first[1].get("isSidechain") is True
        every: Iterator[tuple[int, dict[str, Any]]] = itertools.chain(
            [first] if first else [], rows
        )
        if spend is not None:
            every = _tally(every, spend, sidechain)
        stream = (row for row in every if (row[1].get("isSidechain") is True) == sidechain)
        return attribute_rows(
            stream,
            transcript=str(target),
            thresholds_for=thresholds_for,
            default_model=default_model,
            claude=claude,
            now=now,
            previews=previews,
            keep_items=keep_items,
        )


def _tally(
    rows: Iterator[tuple[int, dict[str, Any]]], spend: SpendTally, sidechain: bool
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The rows unchanged, each assistant one tallied: an inline sidechain (a v2.0 Task's
    turns) is left out of the context but was paid for."""
    for row in rows:
        raw = row[1]
        if raw.get("type") == "assistant":
            main = (raw.get("isSidechain") is True) == sidechain
            spend.add(raw, "main" if main else "sidechain")
        yield row


def attribute_rows(
    rows: Iterable[tuple[int, dict[str, Any]]],
    *,
    transcript: str,
    thresholds_for: Callable[[str | None], Thresholds],
    default_model: str,
    claude: ResolvedVersion | None = None,
    now: datetime | None = None,
    previews: Mapping[str, Any] | None = None,
    keep_items: bool = True,
) -> AttributionReport:
    """Attribute (line, entry) rows of the main chain, in order."""
    walk = _Walk(keep_items=keep_items)
    keep_rows = previews is not None and keep_items
    model = default_model
    for line, raw in rows:
        kind = raw.get("type")
        walk.messages += 1
        if walk.lookahead and kind == "user":
            walk.lookahead -= 1
            if _is_compact_command(raw) and walk.compactions:
                mark = walk.compactions[-1]
                walk.compactions[-1] = _with_trigger(mark, "manual")
        uuid = raw.get("uuid")
        if kind == "system":
            if raw.get("subtype") == "compact_boundary":
                kept = _boundary(walk, raw, line, thresholds_for(model), claude)
                if keep_rows:
                    before = walk.segment_rows
                    walk.segment_rows = [raw, *(r for r in before if r.get("uuid") in kept)]
            elif keep_rows:
                walk.segment_rows.append(raw)
            if isinstance(uuid, str):
                start = len(walk.items)
                walk.messages_now[uuid] = (raw.get("parentUuid"), (), start, start)
            continue
        walk.adds = []
        start = len(walk.items)
        call = len(walk.calls) + 1
        if kind == "assistant":
            inner = raw.get("message")
            inner = inner if isinstance(inner, _MAP) else {}
            response_id = inner.get("id") if isinstance(inner.get("id"), str) else None
            usage = inner.get("usage")
            if (
                isinstance(usage, _MAP)
                and response_id is not None
                and response_id != walk.current_id
                and not is_synthetic_assistant(raw)
            ):
                walk.current_id = response_id
                if isinstance(inner.get("model"), str):
                    model = inner["model"]
                _call(walk, raw, line, usage, model)
                # The reply is first sent by the next call, like the rest of what follows.
                call = len(walk.calls) + 1
            elif isinstance(usage, _MAP) and response_id == walk.current_id and walk.calls:
                last = walk.calls[-1]
                output = usage.get("output_tokens")
                if isinstance(output, int) and output > last.output:
                    walk.calls[-1] = CallPoint(**{**last.__dict__, "output": output})
            walk.assistant(raw, line, call)
        elif kind == "user":
            walk.user(raw, line, call)
        elif kind == "attachment":
            walk.attachment(raw, line, call)
        if keep_rows:
            walk.segment_rows.append(_slim(raw) if walk.media else raw)
        walk.media = False
        if isinstance(uuid, str):
            walk.messages_now[uuid] = (
                raw.get("parentUuid"),
                tuple(walk.adds),
                start,
                len(walk.items),
            )
    return _report(walk, transcript, model, thresholds_for(model), claude, now, previews)


def _call(
    walk: _Walk, raw: dict[str, Any], line: int, usage: Mapping[str, Any], model: str
) -> None:
    recorded = context_tokens_from_usage(usage)
    messages = sum(walk.tally.values())
    if walk.overhead is None:
        walk.overhead = max(0, recorded - messages)
    categories = dict(walk.tally)
    if walk.overhead:
        categories[OVERHEAD] = walk.overhead
    output = usage.get("output_tokens")
    stamp = raw.get("timestamp")
    before = walk.calls[-1] if walk.calls else None
    added_from = (
        before.held_to
        if before is not None and before.segment == walk.segment
        else walk.segment_start
    )
    walk.calls.append(
        CallPoint(
            number=len(walk.calls) + 1,
            line=line,
            timestamp=stamp if isinstance(stamp, str) else None,
            model=model,
            segment=walk.segment,
            categories=categories,
            recorded=recorded,
            output=output if isinstance(output, int) and not isinstance(output, bool) else 0,
            held_from=walk.segment_start,
            added_from=added_from,
            held_to=len(walk.items),
        )
    )


def _boundary(
    walk: _Walk,
    raw: dict[str, Any],
    line: int,
    ladder: Thresholds,
    claude: ResolvedVersion | None,
) -> frozenset[str]:
    """Start a new segment at a compact boundary; the uuids of the messages it preserved."""
    if walk.compactions:
        walk.compactions[-1] = _with_restored(walk.compactions[-1], walk.restored)
    meta = raw.get("compactMetadata")
    meta = meta if isinstance(meta, _MAP) else {}
    recorded = meta.get("trigger") if isinstance(meta.get("trigger"), str) else None
    pre = meta.get("preTokens")
    trigger = recorded or "unknown"
    reactive = claude is not None and claude.profile.reactive.compacts_on_prompt_too_long
    if recorded == "auto" and not ladder.threshold_compaction and reactive:
        trigger = "reactive"
    stamp = raw.get("timestamp")
    walk.compactions.append(
        CompactionMark(
            line=line,
            after_call=len(walk.calls),
            trigger=trigger,
            recorded_trigger=recorded,
            pre_tokens=pre if isinstance(pre, int) and not isinstance(pre, bool) else None,
            timestamp=stamp if isinstance(stamp, str) else None,
        )
    )
    if walk.keep_items and len(walk.items) > walk.segment_start:
        segment = itertools.islice(walk.items, walk.segment_start, None)
        top = heapq.nlargest(EARLIER_LARGEST, segment, key=lambda item: item[2])
        walk.earlier.append((walk.segment, top))
    walk.tally = {}
    walk.segment_start = len(walk.items)
    walk.messages_before, walk.messages_now = walk.messages_now, {}
    walk.restored = 0
    walk.segment += 1
    walk.current_id = None
    walk.lookahead = 6
    kept = _preserved(walk, meta.get("preservedSegment"))
    if not kept:
        walk.tools = {}  # kept tool calls keep naming their results
    return kept


def _preserved(walk: _Walk, segment: Any) -> frozenset[str]:
    """A partial compaction (2.1.332): the messages head to tail stay in context after the
    summary (`applyPreservedSegmentRelinks`), so their items and tallies carry over."""
    if not isinstance(segment, _MAP):
        return frozenset()
    head, tail = segment.get("headUuid"), segment.get("tailUuid")
    known = walk.messages_before
    chain: list[str] = []
    seen: set[str] = set()
    current = tail
    while isinstance(current, str) and current in known and current not in seen:
        seen.add(current)
        chain.append(current)
        if current == head:
            break
        current = known[current][0]
    if chain and chain[-1] == head:
        chain.reverse()
    elif isinstance(head, str) and isinstance(tail, str) and head in known and tail in known:
        # The parent walk left the messages read here (a progress line between them):
        # the segment is the run of messages from head to tail as written.
        order = list(known)
        chain = order[order.index(head) : order.index(tail) + 1]
    else:
        chain = []
    if not chain:
        walk.notes.append(
            "a partial compaction's preserved messages were not found before its boundary: "
            "only what follows the boundary is counted"
        )
        return frozenset()
    for uuid in chain:
        entry = known[uuid]
        adds, start, end = entry[1:]
        for category, tokens in adds:
            walk.tally[category] = walk.tally.get(category, 0) + tokens
        if walk.keep_items:
            walk.items.extend(walk.items[start:end])
        walk.messages_now[uuid] = entry
    return frozenset(chain)


def _with_trigger(mark: CompactionMark, trigger: str) -> CompactionMark:
    return CompactionMark(**{**mark.__dict__, "trigger": trigger})


def _with_restored(mark: CompactionMark, restored: int) -> CompactionMark:
    return CompactionMark(**{**mark.__dict__, "restored_files": restored})


def _is_compact_command(raw: Mapping[str, Any]) -> bool:
    inner = raw.get("message")
    content = inner.get("content") if isinstance(inner, _MAP) else None
    marker = "<command-name>/compact</command-name>"
    if isinstance(content, str):
        return marker in content
    if isinstance(content, list):
        return any(isinstance(b, _MAP) and marker in str(b.get("text", "")) for b in content)
    return False


def _report(
    walk: _Walk,
    transcript: str,
    model: str,
    ladder: Thresholds,
    claude: ResolvedVersion | None,
    now: datetime | None,
    previews: Mapping[str, Any] | None,
) -> AttributionReport:
    if walk.compactions:
        walk.compactions[-1] = _with_restored(walk.compactions[-1], walk.restored)
    current = dict(walk.tally)
    overhead = walk.overhead or 0
    if overhead:
        current[OVERHEAD] = overhead
    notes: list[str] = list(dict.fromkeys(walk.notes))
    fates = _fates(walk, now, previews, claude, notes)
    items_now = walk.items[walk.segment_start :]
    top = heapq.nlargest(LARGEST, items_now, key=lambda item: item[2])
    largest = tuple(
        ContextItem.from_row(row, fates.micro(row), fates.compaction(row))
        if fates is not None
        else ContextItem.from_row(row)
        for row in top
    )
    reads: dict[str, list[int]] = {}
    for row in items_now:
        if len(row) > 6 and row[5] == "Read" and row[0].startswith("tool_result") and row[6]:
            entry = reads.setdefault(row[6], [0, 0, 0])
            entry[0] += row[2]
            entry[1] += 1
            entry[2] = max(entry[2], row[4])
    restored_paths = (
        {path for path, found in fates.restored.items() if found[0]} if fates else set()
    )
    files = tuple(
        sorted(
            (FileRead(p, t, n, c, p in restored_paths) for p, (t, n, c) in reads.items()),
            key=lambda f: -f.tokens,
        )
    )
    earlier = tuple(
        (
            segment,
            tuple(
                ContextItem.from_row(
                    row, None, "summarised by the compaction that ended it", in_context=False
                )
                for row in rows
            ),
        )
        for segment, rows in walk.earlier
    )
    if not walk.calls:
        notes.append("no API call with usage in this transcript: nothing to reconcile")
    else:
        notes.append(
            f"the system prompt, tools and instruction files are not in the transcript: the "
            f"first call's measured prompt exceeds its messages by {overhead:,} tokens, taken as "
            "their size for every call"
        )
    return AttributionReport(
        transcript=transcript,
        model=model,
        thresholds=ladder,
        calls=tuple(walk.calls),
        compactions=tuple(walk.compactions),
        overhead=overhead,
        overhead_source="first call" if walk.calls else "none",
        current=current,
        largest=largest,
        items_now=len(items_now),
        files_read=files,
        earlier_largest=earlier,
        notes=tuple(notes),
        claude=claude,
        messages=walk.messages,
        first_prompt=shown(walk.first_prompt) if walk.first_prompt else None,
        item_rows=tuple(walk.items),
        fates=fates,
    )


def _fates(
    walk: _Walk,
    now: datetime | None,
    previews: Mapping[str, Any] | None,
    claude: ResolvedVersion | None,
    notes: list[str],
) -> ItemFates | None:
    """What micro-compaction and a compaction would do to each item now, from the engine's
    own previews over the current segment (None: previews skipped)."""
    if previews is None or not walk.segment_rows:
        return None
    from workbench.engine.context.compaction.microcompact import (
        COMPACTABLE_TOOLS,
        plan_time_based_microcompact,
    )
    from workbench.engine.context.compaction.restore import plan_file_restoration, read_file_state

    rows = walk.segment_rows
    micro = plan_time_based_microcompact(rows, now=now or datetime.now().astimezone())
    plan = plan_file_restoration(
        read_file_state(rows),
        excluded_paths=previews.get("excluded_paths", ()),
        plan_dir=previews.get("plan_dir"),
        project_root=previews.get("project_root"),
        read_disk=bool(previews.get("read_disk", True)),
    )
    if not micro.enabled:
        notes.append(
            "time-based micro-compaction is off unless Claude Code's server turns it on: "
            "what it would clear is shown as if it ran"
        )
    return ItemFates(
        compactable=frozenset(COMPACTABLE_TOOLS),
        cleared={c.tool_use_id: c.tokens for c in micro.cleared},
        kept=frozenset(micro.kept_tool_use_ids),
        restored={
            f.path: (f.included, f.kind, f.tokens, f.reason, f.how_attached) for f in plan.files
        },
        skipped=dict(plan.skipped),
        partial=claude is not None and claude.profile.partial.keeps_recent_messages,
    )
