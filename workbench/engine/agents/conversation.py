"""A saved conversation turned into the message prefix of a forked agent.

Claude Code's forks share the main conversation exactly. The workbench rebuilds it from the
transcript (the messages after the last compaction, via the context package) and makes it
valid to send on its own: the Messages API refuses unanswered tool uses, orphan results and
empty text, which a transcript cut mid-turn can contain.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_MEDIA_TYPES = frozenset({"image", "document"})


def fork_messages(entries: Sequence[Any], prompt: str) -> list[dict[str, Any]]:
    """The conversation as API messages, made valid to send, with the prompt appended.

    Images and documents become a short placeholder (they are large and the agent saves text),
    tool_use blocks without a result and results without their tool_use are dropped (the API
    refuses both), and empty text blocks are removed.
    """
    from workbench.engine.context.tokens import api_messages

    visible = [e for e in entries if getattr(e, "type", None) in ("user", "assistant")]
    messages = [_strip_media(m) for m in api_messages(visible)]
    messages = _pair_tool_blocks(messages)
    prompt_block = {"type": "text", "text": prompt}
    if messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append(prompt_block)
    else:
        messages.append({"role": "user", "content": [prompt_block]})
    return messages


def _strip_media(message: dict[str, Any]) -> dict[str, Any]:
    def clean(block: Any) -> Any:
        if not isinstance(block, dict):
            return block
        if block.get("type") in _MEDIA_TYPES:
            return {"type": "text", "text": f"[{block.get('type')} omitted]"}
        if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            return {**block, "content": [clean(b) for b in block["content"]]}
        return block

    content = [clean(b) for b in message["content"]]
    content = [
        b
        for b in content
        if not (isinstance(b, dict) and b.get("type") == "text" and not str(b.get("text")).strip())
    ]
    return {"role": message["role"], "content": content}


def _pair_tool_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        content = list(message["content"])
        if message["role"] == "assistant":
            following = messages[index + 1]["content"] if index + 1 < len(messages) else []
            answered = {
                b.get("tool_use_id")
                for b in following
                if isinstance(b, dict) and b.get("type") == "tool_result"
            }
            content = [
                b
                for b in content
                if not (isinstance(b, dict) and b.get("type") == "tool_use")
                or b.get("id") in answered
            ]
        else:
            previous = out[-1]["content"] if out and out[-1]["role"] == "assistant" else []
            asked = {
                b.get("id") for b in previous if isinstance(b, dict) and b.get("type") == "tool_use"
            }
            results = [
                b
                for b in content
                if isinstance(b, dict)
                and b.get("type") == "tool_result"
                and b.get("tool_use_id") in asked
            ]
            others = [
                b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")
            ]
            content = results + others  # results must lead the message that answers tool uses
        if not content:
            continue
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"].extend(content)
        else:
            out.append({"role": message["role"], "content": content})
    while out and out[0]["role"] != "user":
        out.pop(0)
    return out
