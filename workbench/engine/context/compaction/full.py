"""Full compaction (spec 04 §9.6, §9.8, §9.11): what is summarised, how big the summary
request is, which images are stripped, and the prompt-too-long retry's head truncation."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.engine.context.compaction.prompt import SUMMARIZER_SYSTEM_PROMPT, compact_prompt
from workbench.engine.context.tokens import (
    api_messages,
    as_dict,
    inner_message,
    message_content,
    rough_token_count,
    rough_tokens_for_messages,
    token_count_with_estimation,
)

MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20_000
MAX_PTL_RETRIES = 3
# Claude Code's marker, recognised when it already heads a message list.
CLAUDE_PTL_RETRY_MARKER = "[earlier conversation truncated for compaction retry]"
# The marker the workbench itself writes.
PTL_RETRY_MARKER = "[the oldest part of the conversation was dropped so the summary request fits]"
_PTL_PATTERN = re.compile(r"prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)", re.IGNORECASE)


# --- images ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StrippedMedia:
    """Messages with media replaced by placeholders, and how many were replaced."""

    messages: list[dict[str, Any]]
    images: int
    documents: int


def _strip_block(block: Any, counts: list[int]) -> Any:
    if not isinstance(block, Mapping):
        return block
    kind = block.get("type")
    if kind == "image":
        counts[0] += 1
        return {"type": "text", "text": "[image]"}
    if kind == "document":
        counts[1] += 1
        return {"type": "text", "text": "[document]"}
    if kind == "tool_result" and isinstance(block.get("content"), list):
        before = tuple(counts)
        inner = [_strip_block(item, counts) for item in block["content"]]
        if tuple(counts) != before:
            return {**block, "content": inner}
    return block


def strip_images_from_messages(messages: Sequence[Any]) -> StrippedMedia:
    """`stripImagesFromMessages`: user images and documents (top level or inside a tool
    result) become `[image]` / `[document]`; other messages are returned unchanged."""
    counts = [0, 0]
    out: list[dict[str, Any]] = []
    for message in messages:
        raw = as_dict(message)
        content = message_content(raw)
        if raw.get("type") != "user" or not isinstance(content, list):
            out.append(dict(raw))
            continue
        before = tuple(counts)
        blocks = [_strip_block(block, counts) for block in content]
        if tuple(counts) == before:
            out.append(dict(raw))
        else:
            out.append({**raw, "message": {**raw["message"], "content": blocks}})
    return StrippedMedia(out, counts[0], counts[1])


# --- the prompt-too-long retry --------------------------------------------------------------


def group_messages_by_api_round(messages: Sequence[Any]) -> list[list[Any]]:
    """`groupMessagesByApiRound`: a new group at each assistant with a new `message.id`."""
    groups: list[list[Any]] = []
    current: list[Any] = []
    last_id: object = object()
    for message in messages:
        raw = as_dict(message)
        is_assistant = raw.get("type") == "assistant"
        message_id = inner_message(raw).get("id") if is_assistant else None
        if is_assistant and message_id != last_id and current:
            groups.append(current)
            current = [message]
        else:
            current.append(message)
        if is_assistant:
            last_id = message_id
    if current:
        groups.append(current)
    return groups


def prompt_too_long_gap(error_text: str) -> int | None:
    """`getPromptTooLongTokenGap`: actual − limit from "prompt is too long: N tokens > M"."""
    if not error_text.lower().startswith("prompt is too long"):
        return None
    match = _PTL_PATTERN.search(error_text)
    if not match:
        return None
    gap = int(match.group(1)) - int(match.group(2))
    return gap if gap > 0 else None


@dataclass(frozen=True)
class PtlTruncation:
    """`truncateHeadForPTLRetry`: the API rounds dropped from the front for a retry."""

    gap: int | None
    groups: int
    dropped_groups: int
    dropped_messages: int
    dropped_tokens: int
    kept_messages: int
    marker_prepended: bool
    messages: list[Any] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "gap": self.gap,
            "groups": self.groups,
            "dropped_groups": self.dropped_groups,
            "dropped_messages": self.dropped_messages,
            "dropped_tokens": self.dropped_tokens,
            "kept_messages": self.kept_messages,
            "marker_prepended": self.marker_prepended,
        }


def _is_marker(message: Any) -> bool:
    raw = as_dict(message)
    content = message_content(raw)
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], Mapping):
        content = content[0].get("text")
    return (
        raw.get("type") == "user"
        and raw.get("isMeta") is True
        and content in (PTL_RETRY_MARKER, CLAUDE_PTL_RETRY_MARKER)
    )


def truncate_head_for_ptl_retry(messages: Sequence[Any], gap: int | None) -> PtlTruncation | None:
    """Drop whole API rounds from the front until `gap` tokens are gone (20% of the rounds
    when the gap is unknown); None when fewer than two rounds exist."""
    work = list(messages)
    if work and _is_marker(work[0]):
        work = work[1:]
    groups = group_messages_by_api_round(work)
    if len(groups) < 2:
        return None
    if gap is not None:
        dropped_tokens = 0
        drop = 0
        for group in groups:
            dropped_tokens += rough_tokens_for_messages(group)
            drop += 1
            if dropped_tokens >= gap:
                break
    else:
        drop = max(1, math.floor(0.2 * len(groups)))
    drop = min(drop, len(groups) - 1)
    if drop < 1:
        return None
    dropped = [m for group in groups[:drop] for m in group]
    kept = [m for group in groups[drop:] for m in group]
    marker = False
    if kept and as_dict(kept[0]).get("type") == "assistant":
        kept.insert(
            0,
            {
                "type": "user",
                "isMeta": True,
                "message": {"role": "user", "content": PTL_RETRY_MARKER},
            },
        )
        marker = True
    return PtlTruncation(
        gap=gap,
        groups=len(groups),
        dropped_groups=drop,
        dropped_messages=len(dropped),
        dropped_tokens=rough_tokens_for_messages(dropped),
        kept_messages=len(kept),
        marker_prepended=marker,
        messages=kept,
    )


# --- the plan -------------------------------------------------------------------------------


@dataclass(frozen=True)
class FullCompactionPlan:
    """`compactConversation` as a dry run: everything after the last boundary is summarised."""

    summarized_messages: int
    pre_tokens: int
    """`tokenCountWithEstimation`, what the boundary records as `preTokens`."""
    request_tokens: int
    """Rough size of the streaming-fallback request: stripped messages plus the prompt."""
    prompt_tokens: int
    images_stripped: int
    documents_stripped: int
    max_output_tokens: int
    system_prompt: str
    ptl: PtlTruncation | None = None
    request: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "summarized_messages": self.summarized_messages,
            "pre_tokens": self.pre_tokens,
            "request_tokens": self.request_tokens,
            "prompt_tokens": self.prompt_tokens,
            "images_stripped": self.images_stripped,
            "documents_stripped": self.documents_stripped,
            "max_output_tokens": self.max_output_tokens,
            "ptl_retry": self.ptl.to_json() if self.ptl else None,
            "request": self.request,
        }


def plan_full_compaction(
    messages: Sequence[Any],
    *,
    model_max_output: int,
    custom_instructions: str | None = None,
    ptl_gap: int | None = None,
    simulate_ptl: bool = False,
    include_request: bool = False,
    model: str | None = None,
) -> FullCompactionPlan:
    """Size the summary request for `messages` (from the last boundary on)."""
    prompt = compact_prompt(custom_instructions)
    request_message = {"type": "user", "message": {"role": "user", "content": prompt}}
    stripped = strip_images_from_messages(messages)
    request_messages = [*stripped.messages, request_message]
    request_tokens = rough_tokens_for_messages(request_messages)
    max_out = min(MAX_OUTPUT_TOKENS_FOR_SUMMARY, model_max_output)
    ptl = None
    if simulate_ptl or ptl_gap is not None:
        ptl = truncate_head_for_ptl_retry(list(messages), ptl_gap)
    request = None
    if include_request:
        request = {
            "model": model,
            "max_tokens": max_out,
            "system": SUMMARIZER_SYSTEM_PROMPT,
            "messages": api_messages(request_messages),
        }
    summarized = sum(
        1 for m in messages if as_dict(m).get("type") in ("user", "assistant", "attachment")
    )
    return FullCompactionPlan(
        summarized_messages=summarized,
        pre_tokens=token_count_with_estimation(messages),
        request_tokens=request_tokens,
        prompt_tokens=rough_token_count(prompt),
        images_stripped=stripped.images,
        documents_stripped=stripped.documents,
        max_output_tokens=max_out,
        system_prompt=SUMMARIZER_SYSTEM_PROMPT,
        ptl=ptl,
        request=request,
    )
