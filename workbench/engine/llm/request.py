"""Request bodies and replies of the Messages API, as plain data.

`build_request` returns the exact JSON body that is sent, so a dry run can show the user
precisely what would leave the machine. `ModelReply` is the part of a response the engine
uses, independent of the SDK's classes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.engine.llm.errors import LLMBadResponseError

Message = dict[str, Any]
"""One `{role, content}` entry of `messages`."""


def json_schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The structured-output block: `{type: 'json_schema', schema}`."""
    return {"type": "json_schema", "schema": dict(schema)}


def build_request(
    *,
    model: str,
    messages: Sequence[Message],
    max_tokens: int,
    system: str | Sequence[Mapping[str, Any]] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    temperature: float | None = None,
    stop_sequences: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None,
    stream: bool = False,
) -> dict[str, Any]:
    """The exact `POST /v1/messages` body; optional fields appear only when given.

    A structured-output schema goes in `output_config.format`, where the current API takes
    it (Claude Code 2.1.88 sent the same `{type: 'json_schema', schema}` block as the beta
    `output_format` field, which the API now folds into `output_config`).
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
    }
    if system:
        body["system"] = system if isinstance(system, str) else [dict(b) for b in system]
    body["messages"] = [_copy_message(m) for m in messages]
    if tools:
        body["tools"] = [dict(t) for t in tools]
    if tool_choice:
        body["tool_choice"] = dict(tool_choice)
    if output_schema is not None:
        body["output_config"] = {"format": json_schema_format(output_schema)}
    if temperature is not None:
        body["temperature"] = temperature
    if stop_sequences:
        body["stop_sequences"] = list(stop_sequences)
    if metadata:
        body["metadata"] = dict(metadata)
    if stream:
        body["stream"] = True
    return body


def user_message(content: str | Sequence[Mapping[str, Any]]) -> Message:
    """A `{role: 'user', content}` message."""
    return {"role": "user", "content": content if isinstance(content, str) else list(content)}


def _copy_message(message: Mapping[str, Any]) -> Message:
    copied = json.loads(json.dumps(message))  # deep copy that also proves it is JSON-able
    if copied.get("role") not in ("user", "assistant"):
        raise ValueError(f"message role must be 'user' or 'assistant', not {copied.get('role')!r}")
    return copied


@dataclass(frozen=True)
class ToolCall:
    """One `tool_use` block the model asked for."""

    id: str
    name: str
    input: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "input": self.input}


@dataclass(frozen=True)
class Usage:
    """Token usage of one reply."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


@dataclass(frozen=True)
class ModelReply:
    """An assistant message as the engine needs it."""

    id: str
    model: str
    content: tuple[dict[str, Any], ...]
    """The content blocks as JSON dicts (`text`, `tool_use`, `thinking`, …)."""
    stop_reason: str | None
    usage: Usage = field(default_factory=Usage)
    request_id: str | None = None

    @property
    def text(self) -> str:
        """All text blocks joined (empty when there are none)."""
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    @property
    def first_text(self) -> str | None:
        """The first text block, which structured output lands in; None when absent."""
        for block in self.content:
            if block.get("type") == "text":
                return str(block.get("text", ""))
        return None

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The `tool_use` blocks, in order."""
        calls = []
        for block in self.content:
            if block.get("type") == "tool_use":
                raw_input = block.get("input")
                calls.append(
                    ToolCall(
                        id=str(block.get("id", "")),
                        name=str(block.get("name", "")),
                        input=raw_input if isinstance(raw_input, dict) else {},
                    )
                )
        return tuple(calls)

    def as_message(self) -> Message:
        """The reply as an assistant entry to append to `messages` for the next turn."""
        return {"role": "assistant", "content": [dict(b) for b in self.content]}

    def json_text(self) -> Any:
        """The first text block parsed as JSON (structured output)."""
        text = self.first_text
        if text is None:
            raise LLMBadResponseError("the model answered without any text to parse")
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise LLMBadResponseError(
                f"the model's answer is not valid JSON ({exc.msg} at position {exc.pos})"
            ) from None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "model": self.model,
            "content": list(self.content),
            "stop_reason": self.stop_reason,
            "usage": self.usage.to_json(),
            "request_id": self.request_id,
        }


def reply_from_sdk(message: Any, request_id: str | None = None) -> ModelReply:
    """Convert an SDK `Message` into a `ModelReply`."""
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        data = dump(mode="json", exclude_none=False)
    elif isinstance(message, Mapping):
        data = dict(message)
    else:
        raise LLMBadResponseError("the Anthropic API's answer is not a message")
    if not isinstance(data, Mapping):
        raise LLMBadResponseError("the Anthropic API's answer is not a message")
    return reply_from_json(data, request_id=request_id or getattr(message, "_request_id", None))


def reply_from_json(data: Mapping[str, Any], request_id: str | None = None) -> ModelReply:
    """Build a `ModelReply` from a Messages API response body."""
    content = data.get("content")
    if not isinstance(content, list):
        raise LLMBadResponseError("the API response has no content list")
    usage = data.get("usage") or {}
    return ModelReply(
        id=str(data.get("id", "")),
        model=str(data.get("model", "")),
        content=tuple(_clean_block(b) for b in content if isinstance(b, dict)),
        stop_reason=data.get("stop_reason"),
        usage=Usage(
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_creation_input_tokens=int(usage.get("cache_creation_input_tokens") or 0),
            cache_read_input_tokens=int(usage.get("cache_read_input_tokens") or 0),
        ),
        request_id=request_id,
    )


# Response-only fields that the API refuses when a block is sent back in `messages`.
_RESPONSE_ONLY = {"citations", "caller", "parsed_output"}


def _clean_block(block: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if not (k in _RESPONSE_ONLY and v is None)}


def tool_result_block(
    tool_use_id: str, content: str | Iterable[Mapping[str, Any]], *, is_error: bool = False
) -> dict[str, Any]:
    """A `tool_result` block answering one `tool_use`."""
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": content if isinstance(content, str) else [dict(c) for c in content],
    }
    if is_error:
        block["is_error"] = True
    return block
