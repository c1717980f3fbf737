"""The few facts of a transcript line that the replay and its meter use, read two ways.

`meter_line` takes them from a parsed line (a dict). `lean_meter_line` decodes only those
fields from the line's bytes: msgspec skips everything else (the `toolUseResult` copies,
cwd, session ids) without building a Python object for it, which is most of a big
transcript's decoding cost. Any line the lean decoder cannot take as is (a content block
of a kind it does not model, a value of an unexpected shape, bad UTF-8, a lone surrogate)
is parsed in full by `parse_line`, the tolerant reader every other view uses, so both ways
give the same facts for every line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from workbench.engine.context.jsonl import parse_line
from workbench.engine.context.tokens import (
    IMAGE_MAX_TOKEN_SIZE,
    SYNTHETIC_MESSAGES,
    SYNTHETIC_MODEL,
    message_content,
    rough_token_count,
    rough_tokens_for_content,
    rough_tokens_for_message,
    token_usage,
    tool_use_tokens,
)
from workbench.engine.context.transcript import MESSAGE_TYPES
from workbench.engine.userfiles import TRANSCRIPT_LINE_LIMIT

_MAP = (dict, Mapping)

_COMPACT_COMMAND = "<command-name>/compact</command-name>"


class MeterLine(msgspec.Struct, gc=False):
    """One message line as the replay sees it (a Struct: built at C speed, once per line)."""

    line: int
    kind: str
    sidechain: bool
    """`isSidechain` is true."""
    boundary: bool
    """A `compact_boundary` system line."""
    uuid: str | None
    timestamp: str | None
    response_id: str | None
    """An assistant line's `message.id`."""
    model: str | None
    """An assistant line's `message.model`."""
    usage: Mapping[str, Any] | None
    """`getTokenUsage`: real usage of an assistant line, None otherwise."""
    cost: int
    """`roughTokenCountEstimationForMessage` of the line."""
    trigger: str | None = None
    """A boundary's `compactMetadata.trigger`."""
    pre_tokens: int | None = None
    """A boundary's `compactMetadata.preTokens`."""
    content: Any = None
    """A user line's `message.content` (dict blocks or lean blocks), for the /compact check."""

    def to_json(self) -> dict[str, Any]:
        """Every fact but the content (which tests compare through `is_compact_command`)."""
        names = [name for name in self.__struct_fields__ if name != "content"]
        return {
            **{name: getattr(self, name) for name in names},
            "compact_command": is_compact_command(self),
        }


def _str(value: Any) -> str | None:
    return value if type(value) is str else None


def meter_line(raw: Mapping[str, Any], line: int = 0) -> MeterLine:
    """The facts of a parsed message line."""
    kind = raw.get("type")
    kind = kind if type(kind) is str else ""
    boundary = kind == "system" and raw.get("subtype") == "compact_boundary"
    response_id = model = None
    if kind == "assistant":
        inner = raw.get("message")
        if isinstance(inner, _MAP):
            response_id, model = _str(inner.get("id")), _str(inner.get("model"))
    trigger = pre_tokens = None
    if boundary:
        meta = raw.get("compactMetadata")
        if isinstance(meta, _MAP):
            trigger = _str(meta.get("trigger"))
            recorded = meta.get("preTokens")
            pre_tokens = recorded if isinstance(recorded, int) else None
    return MeterLine(
        line,
        kind,
        raw.get("isSidechain") is True,
        boundary,
        _str(raw.get("uuid")),
        _str(raw.get("timestamp")),
        response_id,
        model,
        token_usage(raw),
        rough_tokens_for_message(raw),
        trigger,
        pre_tokens,
        message_content(raw) if kind == "user" else None,
    )


def is_compact_command(line: MeterLine) -> bool:
    """A user line holding the `/compact` command a user typed."""
    content = line.content
    if type(content) is str:
        return _COMPACT_COMMAND in content
    if not isinstance(content, list):
        return False
    for block in content:
        if isinstance(block, _Block):
            text = block.text  # None when absent: str(None) holds no command either
        elif isinstance(block, _MAP):
            text = block.get("text", "")
        else:
            continue
        if _COMPACT_COMMAND in (text if type(text) is str else str(text)):
            return True
    return False


# --- the lean decoder -----------------------------------------------------------------------
# Every field is `Any` (decoded as the full parser would) unless the meter walks into it;
# absent fields default to None, which is what `dict.get` gives the full path.


class _Block(msgspec.Struct, gc=False):
    type: Any = None
    text: Any = None
    content: Any = None
    name: Any = None
    input: Any = None
    thinking: Any = None
    data: Any = None


class _Message(msgspec.Struct, gc=False):
    id: Any = None
    model: Any = None
    usage: Any = None
    content: str | list[_Block] | None = None


class _Line(msgspec.Struct, gc=False):
    type: Any = None
    subtype: Any = None
    isSidechain: Any = None  # noqa: N815 - the transcript's key
    uuid: Any = None
    timestamp: Any = None
    message: _Message | None = None
    attachment: Any = None
    rendered: Any = None
    compactMetadata: Any = None  # noqa: N815 - the transcript's key


_decode = msgspec.json.Decoder(_Line).decode
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)


class _Unmodelled(Exception):
    """A content block the lean decoder kept no fields for: the full parser takes the line."""


def lean_meter_line(line: bytes, number: int) -> MeterLine | None:
    """The facts of one transcript line, or None when it is not a message line (or does not
    parse: the same lines `parse_line` refuses)."""
    if len(line) > TRANSCRIPT_LINE_LIMIT:
        return None
    try:
        record = _decode(line)
        kind = record.type
        if type(kind) is not str or kind not in MESSAGE_TYPES:
            return None
        return _lean(record, kind, number)
    except _DECODE_ERRORS + (_Unmodelled,):
        raw = parse_line(line)
        kind = raw.get("type") if raw is not None else None
        if raw is None or type(kind) is not str or kind not in MESSAGE_TYPES:
            return None
        return meter_line(raw, number)


def _lean(record: _Line, kind: str, number: int) -> MeterLine:
    message = record.message
    usage = response_id = model = trigger = pre_tokens = content = None
    cost = 0
    boundary = False
    if kind == "assistant" or kind == "user":
        if message is not None:
            content = message.content
            if content:
                cost = _rough(content) if isinstance(content, str) else _blocks_cost(content)
            if kind == "assistant":
                found_id, found_model = message.id, message.model
                response_id = found_id if type(found_id) is str else None
                model = found_model if type(found_model) is str else None
                found = message.usage
                if isinstance(found, _MAP) and not _synthetic(message):
                    usage = found
    elif kind == "attachment":
        attachment = {"type": kind, "attachment": record.attachment, "rendered": record.rendered}
        cost = rough_tokens_for_message(attachment)
    elif record.subtype == "compact_boundary":
        boundary = True
        meta = record.compactMetadata
        if isinstance(meta, _MAP):
            trigger = _str(meta.get("trigger"))
            recorded = meta.get("preTokens")
            pre_tokens = recorded if isinstance(recorded, int) else None
    uuid, stamp = record.uuid, record.timestamp
    return MeterLine(
        number,
        kind,
        record.isSidechain is True,
        boundary,
        uuid if type(uuid) is str else None,
        stamp if type(stamp) is str else None,
        response_id,
        model,
        usage,
        cost,
        trigger,
        pre_tokens,
        content if kind == "user" else None,
    )


def _synthetic(message: _Message) -> bool:
    # `is_synthetic_assistant` over the lean fields.
    if message.model == SYNTHETIC_MODEL:
        return True
    content = message.content
    if isinstance(content, list) and content:
        first = content[0]
        if first.type == "text":
            text = first.text
            return type(text) is str and text in SYNTHETIC_MESSAGES
    return False


def _rough(value: Any) -> int:
    # rough_token_count(_text(value)), with the common case (ASCII text) inlined.
    if type(value) is str and value.isascii():
        return (len(value) + 2) // 4
    return rough_token_count(_text(value))


def _blocks_cost(blocks: list[_Block]) -> int:
    # `rough_tokens_for_block` over the lean fields, per block type.
    total = 0
    for block in blocks:
        kind = block.type
        if kind == "tool_result":
            inner = block.content
            total += _rough(inner) if type(inner) is str else rough_tokens_for_content(inner)
        elif kind == "text":
            total += _rough(block.text)
        elif kind == "tool_use":
            total += tool_use_tokens(block.name, block.input)
        elif kind == "thinking":
            total += _rough(block.thinking)
        elif kind == "image" or kind == "document":
            total += IMAGE_MAX_TOKEN_SIZE
        elif kind == "redacted_thinking":
            total += _rough(block.data)
        else:
            raise _Unmodelled  # counted as its whole JSON, which only the full parse has
    return total


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))
