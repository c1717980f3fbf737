"""What the attribution of a session holds: per-call categories, items, and their fate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.engine.shown_text import shown

if TYPE_CHECKING:
    from workbench.engine.context.spend import Spend
    from workbench.engine.context.thresholds import Thresholds
    from workbench.engine.profiles.detect import ResolvedVersion

OVERHEAD = "overhead"
"""The part of a call's prompt no transcript message accounts for: the system prompt, the
tools, the instruction files. Measured once, at the session's first call with usage."""

GROUPS: dict[str, str] = {
    "tool_result": "Tool results",
    "tool_use": "Tool calls",
    "attachment": "Attachments",
    "reminder": "Reminders",
    "command": "Commands",
    "user_text": "User text",
    "compact_summary": "Compaction summary",
    "assistant_text": "Assistant text",
    "thinking": "Thinking",
    "image": "Images",
    "other": "Other",
    OVERHEAD: "System prompt, tools, instructions",
}
"""Category prefix → the group it is drawn in (`tool_result:Read` is in Tool results)."""


def group_of(category: str) -> str:
    """The display group of a category key."""
    return GROUPS.get(category.split(":", 1)[0], "Other")


def category_label(category: str) -> str:
    """`tool_result:Read` as `Tool results: Read`, `user_text` as `User text`."""
    head, _, tail = category.partition(":")
    name = GROUPS.get(head, head)
    return f"{name}: {tail}" if tail else name


@dataclass(frozen=True)
class CallPoint:
    """One API call of the main chain, what its prompt was made of, and the reconciliation."""

    number: int
    """1-based, over the whole session."""
    line: int
    timestamp: str | None
    model: str | None
    segment: int
    """Compact boundaries before this call."""
    categories: dict[str, int]
    """Rough tokens of the messages sent, by category (overhead included)."""
    recorded: int | None
    """The prompt the API measured (input + cache creation + cache read); None if unknown."""
    output: int = 0
    held_from: int = 0
    added_from: int = 0
    held_to: int = 0
    """The items this call sent are the report's item rows `[held_from:held_to]`; the ones
    it sent first (the call before it did not) start at `added_from`."""

    @property
    def items_held(self) -> int:
        return self.held_to - self.held_from

    @property
    def items_added(self) -> int:
        return self.held_to - self.added_from

    @property
    def estimate(self) -> int:
        """The categories summed: what the transcript says was sent, plus the overhead."""
        return sum(self.categories.values())

    @property
    def difference(self) -> int | None:
        """Measured minus estimated (positive: the estimate is short)."""
        return None if self.recorded is None else self.recorded - self.estimate

    def to_json(self) -> dict[str, Any]:
        return {
            "call": self.number,
            "line": self.line,
            "timestamp": self.timestamp,
            "model": self.model,
            "segment": self.segment,
            "estimate": self.estimate,
            "recorded": self.recorded,
            "difference": self.difference,
            "output": self.output,
            "categories": dict(self.categories),
            "items_held": self.items_held,
            "items_added": self.items_added,
        }


@dataclass(frozen=True)
class ContextItem:
    """One thing in the context: a tool result, an attachment, a message's text."""

    category: str
    label: str
    tokens: int
    line: int
    call: int
    """The first call that sent it (1-based)."""
    tool: str | None = None
    path: str | None = None
    tool_use_id: str | None = None
    micro: str | None = None
    """What time-based micro-compaction would do to it (None: not something it touches)."""
    compaction: str | None = None
    """What a compaction would do to it (or, for an item of an earlier segment, did)."""
    in_context: bool = True
    """Still in the context now (False: a compaction has summarised it)."""

    def describe(self, calls: int | None = None) -> str:
        """`Read src/billing/tax.py at call 41: 18,200 tokens`. Given the session's number of
        calls, an item added after the last one says it goes with the next call instead of
        naming a call that never ran."""
        if calls is not None and self.call > calls:
            return f"{self.label} after call {calls:,}, sent with the next: {self.tokens:,} tokens"
        return f"{self.label} at call {self.call:,}: {self.tokens:,} tokens"

    def fates_text(self) -> str:
        """`micro-compaction: … · compaction: …` for an item in context; for one a compaction
        has summarised, what it did."""
        if not self.in_context:
            return self.compaction or "summarised by a compaction"
        fates = []
        if self.micro:
            fates.append(f"micro-compaction: {self.micro}")
        if self.compaction:
            fates.append(f"compaction: {self.compaction}")
        return " · ".join(fates)

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "label": self.label,
            "tokens": self.tokens,
            "line": self.line,
            "call": self.call,
            "tool": self.tool,
            "path": self.path,
            "tool_use_id": self.tool_use_id,
            "micro_compaction": self.micro,
            "compaction": self.compaction,
            "in_context": self.in_context,
        }

    @classmethod
    def from_row(
        cls,
        row: tuple[Any, ...],
        micro: str | None = None,
        compaction: str | None = None,
        *,
        in_context: bool = True,
    ) -> ContextItem:
        """An item from the pass's compact row `(category, label, tokens, line, call[, tool,
        path, tool_use_id])`."""
        category, label, tokens, line, call, tool, path, tool_id = (*row, None, None, None)[:8]
        # Redacted here, for the items shown, not in the pass over every block.
        return cls(
            category,
            shown(label),
            tokens,
            line,
            call,
            tool,
            path,
            tool_id,
            micro,
            compaction,
            in_context,
        )


MICRO_UNTOUCHED = "untouched: it clears only old tool results"


@dataclass(frozen=True)
class ItemFates:
    """What time-based micro-compaction and a compaction would do to the items in context
    now, taken from the engine's own previews over the current segment."""

    compactable: frozenset[str]
    """The tools whose results micro-compaction clears."""
    cleared: Mapping[str, int]
    """tool_use_id → tokens saved, for the results it would clear."""
    kept: frozenset[str]
    """The latest compactable results it keeps."""
    restored: Mapping[str, tuple[bool, str, int, str | None, str]]
    """path → (re-attached, `file` or a reference kind, tokens, why not, how: "in full (2,310
    tokens)", "as a reference (…)", or with the figure's caveat) after a compaction."""
    skipped: Mapping[str, str]
    partial: bool
    """The release keeps the latest messages verbatim through a compaction."""

    def micro(self, row: tuple[Any, ...]) -> str:
        category = row[0]
        tool = row[5] if len(row) > 5 else None
        tool_id = row[7] if len(row) > 7 else None
        if tool_id is None or not (category.startswith("tool_result") or category == "image"):
            return MICRO_UNTOUCHED
        if tool not in self.compactable:
            return f"kept: {tool} results are never cleared"
        if tool_id in self.cleared:
            if category == "image":
                return "cleared with its tool result"
            return f"cleared to a placeholder (saves {self.cleared[tool_id]:,} tokens)"
        if tool_id in self.kept:
            if len(self.kept) == 1:
                return "kept: the latest result, which it keeps"
            return f"kept: one of the {len(self.kept)} latest results it keeps"
        return "untouched: already cleared or not among the results it clears"

    def compaction(self, row: tuple[Any, ...]) -> str:
        category = row[0]
        path = row[6] if len(row) > 6 else None
        tail = ", unless it is among the latest messages kept verbatim" if self.partial else ""
        if category == "image":
            return "stripped before the summary is written" + tail
        if category.startswith("tool_result:Read") and path:
            found = self.restored.get(path)
            if found is not None and found[0]:
                return f"summarised, then re-attached {found[4]}"
            reason = (found[3] if found is not None else None) or self.skipped.get(path, "")
            return "summarised; not re-attached" + (f" ({reason})" if reason else "") + tail
        return "summarised" + tail


@dataclass(frozen=True)
class CompactionMark:
    """A compaction in the session: where, how, and what came back."""

    line: int
    after_call: int
    """Calls before it."""
    trigger: str
    """`auto`, `manual` or `reactive` (an auto record the release can only have made on a
    refused prompt), or whatever the record says."""
    recorded_trigger: str | None
    pre_tokens: int | None
    restored_files: int = 0
    """Files re-attached after it (post-compact file attachments)."""
    timestamp: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "after_call": self.after_call,
            "trigger": self.trigger,
            "recorded_trigger": self.recorded_trigger,
            "pre_tokens": self.pre_tokens,
            "restored_files": self.restored_files,
            "timestamp": self.timestamp,
        }


@dataclass(frozen=True)
class FileRead:
    """A file read into the current context, all its reads together."""

    path: str
    tokens: int
    reads: int
    last_call: int
    restored: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "tokens": self.tokens,
            "reads": self.reads,
            "last_call": self.last_call,
            "restored_after_compaction": self.restored,
        }


@dataclass(frozen=True)
class AttributionReport:
    """A session's context, call by call and item by item, reconciled with the usage."""

    transcript: str
    model: str
    thresholds: Thresholds
    calls: tuple[CallPoint, ...]
    compactions: tuple[CompactionMark, ...]
    overhead: int
    """The overhead taken for every call."""
    overhead_source: str
    """`first call` (measured), or `none` (no call had usage)."""
    current: dict[str, int]
    """The context now, by category (messages after the last boundary, plus the overhead)."""
    largest: tuple[ContextItem, ...]
    """The biggest items in the context now, largest first."""
    items_now: int
    files_read: tuple[FileRead, ...]
    earlier_largest: tuple[tuple[int, tuple[ContextItem, ...]], ...] = ()
    """(segment, its largest items) for the segments compaction has summarised."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    claude: ResolvedVersion | None = None
    messages: int = 0
    first_prompt: str | None = None
    """The first thing the user typed (a title when the session has no other)."""
    item_rows: tuple[tuple[Any, ...], ...] = ()
    """Every item of the session in transcript order, as compact rows (`ContextItem.from_row`);
    each call names its slice (`CallPoint.held_from`, `held_to`)."""
    fates: ItemFates | None = None
    """What the compactions would do to the items now (None: previews skipped)."""
    spend: Spend | None = None
    """Every call the session paid for, subagents included (None: not asked for)."""

    def added_since_previous(self, number: int) -> dict[str, int]:
        """What call `number` sent beyond the call before it, by category (a call after a
        compaction is compared with nothing: it all came after the boundary)."""
        if not 0 < number <= len(self.calls):
            return {}
        point = self.calls[number - 1]
        before = self.calls[number - 2] if number > 1 else None
        earlier = (
            before.categories if before is not None and before.segment == point.segment else {}
        )
        return {
            category: tokens - earlier.get(category, 0)
            for category, tokens in point.categories.items()
            if tokens > earlier.get(category, 0)
        }

    def call_items(self, number: int, *, added_only: bool = False) -> tuple[ContextItem, ...]:
        """The items call `number` (1-based) sent, largest first (`added_only`: the ones no
        earlier call sent), each saying whether it is still in context and what a compaction
        would do or did to it."""
        if not 0 < number <= len(self.calls):
            raise IndexError(f"call {number} of {len(self.calls)}")
        point = self.calls[number - 1]
        start = point.added_from if added_only else point.held_from
        rows = sorted(self.item_rows[start : point.held_to], key=lambda row: (-row[2], row[3]))
        if point.segment < len(self.compactions):
            after = self.compactions[point.segment].after_call
            fate = f"summarised by the compaction after call {after:,}"
            return tuple(ContextItem.from_row(r, None, fate, in_context=False) for r in rows)
        if self.fates is None:
            return tuple(ContextItem.from_row(r) for r in rows)
        fates = self.fates
        return tuple(ContextItem.from_row(r, fates.micro(r), fates.compaction(r)) for r in rows)

    @property
    def current_total(self) -> int:
        return sum(self.current.values())

    @property
    def reconciled_calls(self) -> int:
        return sum(1 for c in self.calls if c.recorded is not None)

    def to_json(self, *, include_calls: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            **(self.claude.to_json() if self.claude else {}),
            "transcript": self.transcript,
            "model": self.model,
            "messages": self.messages,
            "call_count": len(self.calls),
            "reconciled_calls": self.reconciled_calls,
            "overhead": self.overhead,
            "overhead_source": self.overhead_source,
            "thresholds": self.thresholds.thresholds_json(),
            # The messages by category plus the overhead: not the gauge's count (`used`),
            # which takes the last call's usage and leaves the system prompt out before one.
            "current": {
                "total": self.current_total,
                "method": "estimate",
                "categories": dict(self.current),
            },
            "largest": [i.to_json() for i in self.largest],
            "items_now": self.items_now,
            "files_read": [f.to_json() for f in self.files_read],
            "compactions": [c.to_json() for c in self.compactions],
            "earlier_largest": [
                {"segment": segment, "items": [i.to_json() for i in items]}
                for segment, items in self.earlier_largest
            ],
            "notes": list(self.notes),
        }
        if self.spend is not None:
            data["spend"] = self.spend.to_json()
        if include_calls:
            data["calls"] = [
                {
                    **c.to_json(),
                    "added": [i.to_json() for i in self.call_items(c.number, added_only=True)],
                }
                for c in self.calls
            ]
        return data


PLOT_GROUPS: tuple[tuple[str, str], ...] = (
    ("tools", "tool results"),
    ("calls", "tool calls"),
    ("attach", "attachments, reminders, commands"),
    ("user", "user text, summaries"),
    ("assistant", "assistant text"),
    ("thinking", "thinking"),
    ("images", "images"),
    ("other", "other"),
    ("overhead", "system prompt, tools, instructions"),
)
"""The few groups a plot or a table column shows, in stacking order, with their names."""
_CONDENSED = {
    "tool_result": "tools",
    "tool_use": "calls",
    "attachment": "attach",
    "reminder": "attach",
    "command": "attach",
    "user_text": "user",
    "compact_summary": "user",
    "assistant_text": "assistant",
    "thinking": "thinking",
    "image": "images",
    OVERHEAD: "overhead",
}


def condensed(categories: dict[str, int]) -> dict[str, int]:
    """Categories folded into `PLOT_GROUPS` (every group present, zero when empty)."""
    out = {key: 0 for key, _name in PLOT_GROUPS}
    for category, tokens in categories.items():
        out[_CONDENSED.get(category.split(":", 1)[0], "other")] += tokens
    return out
