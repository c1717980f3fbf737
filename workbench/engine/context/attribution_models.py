"""What the attribution of a session holds: per-call categories, items, and their fate."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    """What a compaction would do to it."""

    def describe(self, calls: int | None = None) -> str:
        """`Read src/billing/tax.py at call 41: 18,200 tokens`. Given the session's number of
        calls, an item added after the last one says it goes with the next call instead of
        naming a call that never ran."""
        if calls is not None and self.call > calls:
            return f"{self.label} after call {calls:,}, sent with the next: {self.tokens:,} tokens"
        return f"{self.label} at call {self.call:,}: {self.tokens:,} tokens"

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
        }


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
            "current": {"total": self.current_total, "categories": dict(self.current)},
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
        if include_calls:
            data["calls"] = [c.to_json() for c in self.calls]
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
