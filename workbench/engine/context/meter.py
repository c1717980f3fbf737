"""`tokenCountWithEstimation`, kept up to date one message at a time.

Claude Code recomputes the count from the whole message list; the gauge's follow mode and the
turn-by-turn replay cannot afford that on a 100 MB transcript, so this meter keeps the few
numbers the computation depends on and gives the same answer after every message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.engine.context.tokens import (
    as_dict,
    rough_tokens_for_message,
    token_count_from_usage,
    token_usage,
)
from workbench.engine.context.transcript import MESSAGE_TYPES

if TYPE_CHECKING:
    from workbench.engine.context.meter_lines import MeterLine

# Transcripts parse to plain dicts: testing `dict` first skips the slow ABC check.
_MAP = (dict, Mapping)

_UNKNOWN: Any = object()


class ContextMeter:
    """Incremental `tokenCountWithEstimation` over the main chain after the last boundary."""

    __slots__ = (
        "usage",
        "usage_total",
        "since_anchor",
        "all_tokens",
        "run_id",
        "run_since",
        "messages",
        "last_usage_raw",
        "sidechain",
    )

    def __init__(self, *, sidechain: bool = False) -> None:
        self.sidechain = sidechain
        """Count sidechain entries instead (a subagent's own transcript)."""
        self.reset()

    def reset(self) -> None:
        """Forget everything: a compact boundary starts a new count."""
        self.usage: Mapping[str, Any] | None = None
        self.usage_total = 0
        self.since_anchor = 0
        """Rough tokens of the messages after the first record of the last usage's response."""
        self.all_tokens = 0
        """Rough tokens of every message since the boundary (used while no usage exists)."""
        self.run_id: str | None = None
        self.run_since = 0
        self.messages = 0
        self.last_usage_raw: Mapping[str, Any] | None = None

    @property
    def count(self) -> int:
        """The current `tokenCountWithEstimation`."""
        if self.usage is None:
            return self.all_tokens
        return self.usage_total + self.since_anchor

    @property
    def padded_count(self) -> int:
        """The count with the estimated part padded by 4/3, rounded up: what newer releases
        compare with the threshold for newer models (their `preTokens` records `count`)."""
        if self.usage is None:
            return -(-self.all_tokens * 4 // 3)
        return self.usage_total + -(-self.since_anchor * 4 // 3)

    @property
    def method(self) -> str:
        """`usage`, `usage+estimate` or `estimate` (no usage since the boundary)."""
        if self.usage is None:
            return "estimate"
        return "usage+estimate" if self.since_anchor else "usage"

    def add(
        self,
        message: Any,
        *,
        tokens: int | None = None,
        usage: Any = _UNKNOWN,
    ) -> None:
        """Account for one more main-chain message (boundaries reset the meter).

        Callers that already computed `token_usage` may pass it (None included) as `usage`.
        """
        raw = as_dict(message)
        kind = raw.get("type")
        if (
            type(kind) is not str  # a list is no type (and is not hashable)
            or kind not in MESSAGE_TYPES
            or (raw.get("isSidechain") is True) != self.sidechain
        ):
            return
        if kind == "system" and raw.get("subtype") == "compact_boundary":
            self.reset()
            self.messages = 1
            return
        response_id: str | None = None
        found = None
        if kind == "assistant":
            inner = raw.get("message")
            value = inner.get("id") if isinstance(inner, _MAP) else None
            response_id = value if isinstance(value, str) else None
            found = token_usage(raw) if usage is _UNKNOWN else usage
        cost = rough_tokens_for_message(raw) if tokens is None else tokens
        self.count_message(cost, response_id, found, raw)

    def add_line(self, line: MeterLine) -> None:
        """`add` for a line whose facts were already read (the replay's lean reader)."""
        if line.sidechain != self.sidechain or line.kind not in MESSAGE_TYPES:
            return
        if line.boundary:
            self.reset()
            self.messages = 1
            return
        self.count_message(line.cost, line.response_id, line.usage, None)

    def count_message(
        self,
        cost: int,
        response_id: str | None,
        usage: Mapping[str, Any] | None,
        raw: Mapping[str, Any] | None,
    ) -> None:
        """One main-chain message of `cost` rough tokens (not a boundary); `response_id` and
        `usage` are an assistant's `message.id` and real usage, else None."""
        self.messages += 1
        self.all_tokens += cost
        if response_id is None:
            # Non-assistant entries (and assistants without an id) never stop the walk back.
            self.run_since += cost
            self.since_anchor += cost
            if usage is not None:
                self._anchor(raw, usage, 0)
            return
        if response_id == self.run_id:
            self.run_since += cost
        else:
            self.run_id = response_id
            self.run_since = 0
        if usage is not None:
            self._anchor(raw, usage, self.run_since)
        else:
            self.since_anchor += cost

    def _anchor(self, raw: Mapping[str, Any] | None, usage: Mapping[str, Any], since: int) -> None:
        self.usage = usage
        self.usage_total = token_count_from_usage(usage)
        self.since_anchor = since
        self.last_usage_raw = raw
