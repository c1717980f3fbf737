"""Time-based micro-compaction (spec 04 §9.10): after a long pause the old results of
compactable tools are replaced by a placeholder; the five most recent are kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from workbench.engine.context.tokens import as_dict, content_blocks, tool_result_tokens

COMPACTABLE_TOOLS = frozenset(
    {"Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write"}
)
# The exact text Claude Code puts in place of a cleared result (recognised and reported).
CLEARED_PLACEHOLDER = "[Old tool result content cleared]"


@dataclass(frozen=True)
class TimeBasedConfig:
    """`tengu_slate_heron` defaults: off, 60 minutes, keep 5."""

    enabled: bool = False
    gap_threshold_minutes: float = 60
    keep_recent: int = 5


@dataclass(frozen=True)
class ClearedResult:
    """One tool result that would be replaced by the placeholder."""

    tool_use_id: str
    tool: str
    tokens: int
    uuid: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "tool_use_id": self.tool_use_id,
            "tool": self.tool,
            "tokens": self.tokens,
            "uuid": self.uuid,
        }


@dataclass(frozen=True)
class MicrocompactPlan:
    """What time-based micro-compaction would clear, and whether it would run now."""

    enabled: bool
    triggers_now: bool
    reason: str
    gap_minutes: float | None
    compactable_tool_uses: int
    kept_tool_use_ids: tuple[str, ...]
    cleared: tuple[ClearedResult, ...] = field(default_factory=tuple)
    already_cleared: int = 0

    @property
    def tool_results_cleared(self) -> int:
        return len(self.cleared)

    @property
    def tokens_saved(self) -> int:
        return sum(c.tokens for c in self.cleared)

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "triggers_now": self.triggers_now,
            "reason": self.reason,
            "gap_minutes": self.gap_minutes,
            "compactable_tool_uses": self.compactable_tool_uses,
            "kept_tool_use_ids": list(self.kept_tool_use_ids),
            "tool_results_cleared": self.tool_results_cleared,
            "tokens_saved": self.tokens_saved,
            "already_cleared": self.already_cleared,
            "cleared": [c.to_json() for c in self.cleared],
        }


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def plan_time_based_microcompact(
    messages: Sequence[Any],
    *,
    now: datetime,
    config: TimeBasedConfig | None = None,
    query_source: str | None = "repl_main_thread",
) -> MicrocompactPlan:
    """Which results the time-based path clears and the tokens that saves.

    The clearing is computed whatever the conditions, so a preview can show it; `triggers_now`
    says whether Claude Code would actually run it at `now`.
    """
    config = config or TimeBasedConfig()
    raws = [as_dict(m) for m in messages]
    tool_names: dict[str, str] = {}
    order: list[str] = []
    last_assistant_time: datetime | None = None
    for raw in raws:
        if raw.get("type") != "assistant":
            continue
        last_assistant_time = _parse_time(raw.get("timestamp")) or last_assistant_time
        for block in content_blocks(raw, "tool_use"):
            if (
                block.get("name") in COMPACTABLE_TOOLS
                and isinstance(block.get("id"), str)
                and block["id"] not in tool_names
            ):
                tool_names[block["id"]] = str(block["name"])
                order.append(block["id"])
    keep = max(1, config.keep_recent)
    kept = tuple(order[-keep:])
    to_clear = set(order[: max(0, len(order) - keep)])
    cleared: list[ClearedResult] = []
    already = 0
    for raw in raws:
        if raw.get("type") != "user":
            continue
        for block in content_blocks(raw, "tool_result"):
            tool_id = block.get("tool_use_id")
            if tool_id not in to_clear:
                continue
            if block.get("content") == CLEARED_PLACEHOLDER:
                already += 1
                continue
            uuid = raw.get("uuid")
            cleared.append(
                ClearedResult(
                    tool_use_id=str(tool_id),
                    tool=tool_names[str(tool_id)],
                    tokens=tool_result_tokens(block),
                    uuid=uuid if isinstance(uuid, str) else None,
                )
            )
    gap = None
    if last_assistant_time is not None:
        gap = (now - last_assistant_time).total_seconds() / 60
    saved = sum(c.tokens for c in cleared)
    if not config.enabled:
        triggers, reason = False, "time-based micro-compaction is off by default"
    elif not (query_source or "").startswith("repl_main_thread"):
        triggers, reason = False, "only the main thread micro-compacts"
    elif gap is None:
        triggers, reason = False, "no assistant message with a timestamp yet"
    elif gap < config.gap_threshold_minutes:
        triggers = False
        reason = f"the last reply was {gap:.0f} min ago (needs {config.gap_threshold_minutes:g})"
    elif saved == 0:
        triggers, reason = False, "nothing left to clear"
    else:
        triggers = True
        reason = f"{gap:.0f} min since the last reply: old tool results are cleared"
    return MicrocompactPlan(
        enabled=config.enabled,
        triggers_now=triggers,
        reason=reason,
        gap_minutes=round(gap, 1) if gap is not None else None,
        compactable_tool_uses=len(order),
        kept_tool_use_ids=kept,
        cleared=tuple(cleared),
        already_cleared=already,
    )
