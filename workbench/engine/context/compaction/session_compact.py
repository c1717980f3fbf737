"""Session-memory compaction (spec 04 §9.9): the session notes become the summary and the
most recent messages are kept verbatim."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.engine.context.compaction.prompt import summary_message_text
from workbench.engine.context.session_memory import (
    DEFAULT_TEMPLATE,
    MAX_SECTION_LENGTH,
    is_session_memory_empty,
)
from workbench.engine.context.tokens import (
    as_dict,
    assistant_message_id,
    content_blocks,
    estimate_message_tokens,
    message_content,
    rough_token_count,
    token_count_from_last_api_response,
)
from workbench.engine.envflags import is_truthy
from workbench.engine.jsutil import js_len
from workbench.engine.wording import plural

# Our marker for a section cut at compaction time (Claude Code appends its own).
SECTION_TRUNCATED_MARKER = "\n[… the rest of this section was cut to fit the compaction budget …]"


@dataclass(frozen=True)
class SMCompactConfig:
    """`tengu_sm_compact_config`: only positive values override these defaults."""

    min_tokens: int = 10_000
    min_text_block_messages: int = 5
    max_tokens: int = 40_000


def sm_compact_enabled(env: Mapping[str, str], *, gates_on: bool = True) -> tuple[bool, str]:
    """Whether Claude Code would try session-memory compaction, and why.

    The GrowthBook gates (`tengu_session_memory` and `tengu_sm_compact`) cannot be read
    offline; `gates_on` states the assumption.
    """
    if is_truthy(env.get("ENABLE_CLAUDE_CODE_SM_COMPACT")):
        return True, "ENABLE_CLAUDE_CODE_SM_COMPACT forces it on"
    if env.get("DISABLE_CLAUDE_CODE_SM_COMPACT") is not None:
        return False, "DISABLE_CLAUDE_CODE_SM_COMPACT is set"
    if gates_on:
        return True, "on when the session-memory feature gates are on (assumed)"
    return False, "the session-memory feature gates are off"


def is_compact_boundary(message: Any) -> bool:
    raw = as_dict(message)
    return raw.get("type") == "system" and raw.get("subtype") == "compact_boundary"


def has_text_blocks(message: Any) -> bool:
    """`hasTextBlocks`: assistant text, a non-empty user string, or a user text block."""
    raw = as_dict(message)
    kind = raw.get("type")
    content = message_content(raw)
    if kind == "user" and isinstance(content, str):
        return len(content) > 0
    if kind == "user" or kind == "assistant":
        return bool(content_blocks(raw, "text"))
    return False


def _tool_result_ids(raw: Mapping[str, Any]) -> list[str]:
    if raw.get("type") != "user":
        return []
    return [
        b["tool_use_id"]
        for b in content_blocks(raw, "tool_result")
        if isinstance(b.get("tool_use_id"), str)
    ]


def _tool_use_ids(raw: Mapping[str, Any]) -> list[str]:
    if raw.get("type") != "assistant":
        return []
    return [b["id"] for b in content_blocks(raw, "tool_use") if isinstance(b.get("id"), str)]


@dataclass(frozen=True)
class InvariantAdjustment:
    """How `adjustIndexToPreserveAPIInvariants` moved the start, rule by rule."""

    start: int
    after_tool_pairs: int
    after_split_records: int

    @property
    def index(self) -> int:
        return self.after_split_records


def adjust_index_with_reasons(messages: Sequence[Any], start: int) -> InvariantAdjustment:
    """Both rules: keep tool_use with its tool_result, and keep every record of a response."""
    if start <= 0 or start >= len(messages):
        return InvariantAdjustment(start, start, start)
    raws = [as_dict(m) for m in messages]
    adjusted = start
    # Rule (a): a kept tool_result needs the assistant message holding its tool_use.
    result_ids: list[str] = []
    for raw in raws[start:]:
        result_ids.extend(_tool_result_ids(raw))
    if result_ids:
        kept_uses: set[str] = set()
        for raw in raws[adjusted:]:
            kept_uses.update(_tool_use_ids(raw))
        needed = {i for i in result_ids if i not in kept_uses}
        i = adjusted - 1
        while i >= 0 and needed:
            uses = set(_tool_use_ids(raws[i]))
            if uses & needed:
                adjusted = i
                needed -= uses
            i -= 1
    after_pairs = adjusted
    # Rule (b): records split from one streamed response (thinking, text, tool_use) stay
    # together; the ids are collected once, so newly pulled-in records add none.
    # An empty id groups nothing: it never enters `kept_ids`.
    kept_ids = {mid for raw in raws[adjusted:] if (mid := assistant_message_id(raw))}
    for i in range(adjusted - 1, -1, -1):
        mid = assistant_message_id(raws[i])
        if mid is not None and mid in kept_ids:
            adjusted = i
    return InvariantAdjustment(start, after_pairs, adjusted)


def adjust_index_to_preserve_api_invariants(messages: Sequence[Any], start: int) -> int:
    """`adjustIndexToPreserveAPIInvariants`: the start index after both rules."""
    return adjust_index_with_reasons(messages, start).index


def calculate_messages_to_keep_index(
    messages: Sequence[Any], last_summarized_index: int, config: SMCompactConfig | None = None
) -> int:
    """`calculateMessagesToKeepIndex`: start after the summarised part, then extend back
    until the kept part holds enough tokens and text messages, never past the last boundary."""
    return _keep_index(messages, last_summarized_index, config or SMCompactConfig())[0]


def _keep_index(
    messages: Sequence[Any], last_summarized_index: int, config: SMCompactConfig
) -> tuple[int, int, InvariantAdjustment | None]:
    if not messages:
        return 0, 0, None
    start = last_summarized_index + 1 if last_summarized_index >= 0 else len(messages)
    tokens = 0
    text_messages = 0
    for message in messages[start:]:
        tokens += estimate_message_tokens([message])
        if has_text_blocks(message):
            text_messages += 1
    enough = tokens >= config.max_tokens or (
        tokens >= config.min_tokens and text_messages >= config.min_text_block_messages
    )
    if not enough:
        floor = 0
        for index in range(len(messages) - 1, -1, -1):
            if is_compact_boundary(messages[index]):
                floor = index + 1
                break
        for index in range(start - 1, floor - 1, -1):
            message = messages[index]
            tokens += estimate_message_tokens([message])
            if has_text_blocks(message):
                text_messages += 1
            start = index
            if tokens >= config.max_tokens:
                break
            if tokens >= config.min_tokens and text_messages >= config.min_text_block_messages:
                break
    adjustment = adjust_index_with_reasons(messages, start)
    return adjustment.index, start, adjustment


@dataclass(frozen=True)
class TruncatedNotes:
    """`truncateSessionMemoryForCompact`: the notes as the summary, sections over budget cut."""

    text: str
    was_truncated: bool
    truncated_sections: tuple[str, ...]


def truncate_session_memory_for_compact(content: str) -> TruncatedNotes:
    """Cut each `# ` section whose body exceeds 2,000 × 4 characters at a whole line."""
    budget = MAX_SECTION_LENGTH * 4
    out: list[str] = []
    truncated: list[str] = []
    header = ""
    body: list[str] = []

    def flush() -> None:
        if not header:
            out.extend(body)
            return
        if js_len("\n".join(body)) <= budget:
            out.append(header)
            out.extend(body)
            return
        kept = [header]
        used = 0
        for line in body:
            size = js_len(line) + 1
            if used + size > budget:
                break
            kept.append(line)
            used += size
        kept.append(SECTION_TRUNCATED_MARKER)
        out.extend(kept)
        truncated.append(header)

    for line in content.split("\n"):
        if line.startswith("# "):
            flush()
            header, body = line, []
        else:
            body.append(line)
    flush()
    return TruncatedNotes("\n".join(out), bool(truncated), tuple(truncated))


@dataclass(frozen=True)
class SessionMemoryCompactionPlan:
    """What session-memory compaction would do, or why it would fall back to full."""

    enabled: bool
    enabled_reason: str
    available: bool
    reason: str
    notes_path: str | None
    last_summarized_uuid: str | None
    pre_tokens: int
    """`tokenCountFromLastAPIResponse`, what the boundary would record."""
    threshold: int | None
    keep_start_index: int | None
    keep_start_uuid: str | None
    kept_messages: int
    kept_tokens: int
    post_compact_tokens: int
    falls_back_to_full: bool
    truncated_sections: tuple[str, ...]
    summary_tokens: int
    """Rough size of the summary message (the notes); `estimateMessageTokens` counts it 0."""
    adjustments: tuple[str, ...] = field(default_factory=tuple)
    kept_uuids: tuple[str, ...] = field(default_factory=tuple)
    summary_text: str | None = None

    @property
    def context_after_tokens(self) -> int:
        """What the next request carries: the kept messages and the notes as the summary
        (more than `post_compact_tokens`, Claude Code's count, which leaves the notes out)."""
        return self.kept_tokens + self.summary_tokens

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "enabled_reason": self.enabled_reason,
            "available": self.available,
            "reason": self.reason,
            "notes_path": self.notes_path,
            "last_summarized_uuid": self.last_summarized_uuid,
            "pre_tokens": self.pre_tokens,
            "threshold": self.threshold,
            "keep_start_index": self.keep_start_index,
            "keep_start_uuid": self.keep_start_uuid,
            "kept_messages": self.kept_messages,
            "kept_tokens": self.kept_tokens,
            "post_compact_tokens": self.post_compact_tokens,
            "falls_back_to_full": self.falls_back_to_full,
            "truncated_sections": list(self.truncated_sections),
            "summary_tokens": self.summary_tokens,
            "context_after_tokens": self.context_after_tokens,
            "adjustments": list(self.adjustments),
        }


def plan_session_memory_compaction(
    messages: Sequence[Any],
    notes: str | None,
    *,
    notes_path: str | None = None,
    template: str | None = None,
    last_summarized_uuid: str | None = None,
    threshold: int | None = None,
    transcript_path: str | None = None,
    config: SMCompactConfig | None = None,
    env: Mapping[str, str] | None = None,
    gates_on: bool = True,
) -> SessionMemoryCompactionPlan:
    """`trySessionMemoryCompaction` as a dry run over `messages` (from the last boundary)."""
    config = config or SMCompactConfig()
    enabled, enabled_reason = sm_compact_enabled(env or {}, gates_on=gates_on)
    pre_tokens = token_count_from_last_api_response(messages)

    def unavailable(reason: str) -> SessionMemoryCompactionPlan:
        return SessionMemoryCompactionPlan(
            enabled=enabled,
            enabled_reason=enabled_reason,
            available=False,
            reason=reason,
            notes_path=notes_path,
            last_summarized_uuid=last_summarized_uuid,
            pre_tokens=pre_tokens,
            threshold=threshold,
            keep_start_index=None,
            keep_start_uuid=None,
            kept_messages=0,
            kept_tokens=0,
            post_compact_tokens=0,
            falls_back_to_full=True,
            truncated_sections=(),
            summary_tokens=0,
        )

    if notes is None:
        return unavailable("there is no session-memory file for this session")
    if is_session_memory_empty(notes, template or DEFAULT_TEMPLATE):
        return unavailable("the session notes are still the empty template")
    if last_summarized_uuid is not None:
        found = next(
            (i for i, m in enumerate(messages) if as_dict(m).get("uuid") == last_summarized_uuid),
            None,
        )
        if found is None:
            return unavailable(
                "the last summarised message is not among the current messages, so Claude "
                "Code falls back to a full compaction"
            )
        last_index = found
    else:
        # A resumed session: nothing is known to be summarised, so keeping starts empty.
        last_index = len(messages) - 1
    index, _, adjustment = _keep_index(messages, last_index, config)
    adjustments: list[str] = []
    if adjustment is not None:
        if adjustment.after_tool_pairs != adjustment.start:
            moved = plural(adjustment.start - adjustment.after_tool_pairs, "message")
            adjustments.append(f"moved back {moved} to keep tool calls with their results")
        if adjustment.after_split_records != adjustment.after_tool_pairs:
            moved = plural(adjustment.after_tool_pairs - adjustment.after_split_records, "message")
            adjustments.append(f"moved back {moved} to keep every record of a streamed response")
    kept = [m for m in messages[index:] if not is_compact_boundary(m)]
    kept_tokens = estimate_message_tokens(kept)
    truncated = truncate_session_memory_for_compact(notes)
    summary = summary_message_text(
        truncated.text,
        suppress_follow_up=True,
        transcript_path=transcript_path,
        recent_preserved=True,
    )
    if truncated.was_truncated and notes_path:
        summary += (
            "\n\nSome sections of the session notes were shortened here; the full notes are "
            f"at: {notes_path}"
        )
    # The boundary is a system message and the summary has string content, so
    # estimateMessageTokens counts only the kept messages.
    post = kept_tokens
    falls_back = threshold is not None and post >= threshold
    reason = (
        f"the kept messages alone ({post:,} tokens) would still reach the auto-compact "
        f"threshold ({threshold:,}), so Claude Code falls back to a full compaction"
        if falls_back
        else f"keeps the last {plural(len(kept), 'message')} and uses the session notes as the summary"
    )
    keep_uuid = as_dict(messages[index]).get("uuid") if index < len(messages) else None
    return SessionMemoryCompactionPlan(
        enabled=enabled,
        enabled_reason=enabled_reason,
        available=not falls_back,
        reason=reason,
        notes_path=notes_path,
        last_summarized_uuid=last_summarized_uuid,
        pre_tokens=pre_tokens,
        threshold=threshold,
        keep_start_index=index,
        keep_start_uuid=keep_uuid if isinstance(keep_uuid, str) else None,
        kept_messages=len(kept),
        kept_tokens=kept_tokens,
        post_compact_tokens=post,
        falls_back_to_full=falls_back,
        truncated_sections=truncated.truncated_sections,
        summary_tokens=rough_token_count(summary),
        adjustments=tuple(adjustments),
        kept_uuids=tuple(u for m in kept if isinstance(u := as_dict(m).get("uuid"), str)),
        summary_text=summary,
    )
