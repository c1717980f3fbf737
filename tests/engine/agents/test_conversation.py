"""The fork's message prefix: valid for the Messages API whatever the transcript holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workbench.engine.agents.conversation import fork_messages
from workbench.engine.context.transcript import Transcript


def assert_valid_for_api(messages: list[dict[str, Any]]) -> None:
    """Roles alternate from a user turn; every tool_use is answered in the next message and
    every tool_result answers the previous one; no empty text; no images."""
    assert messages and messages[0]["role"] == "user"
    for previous, current in zip(messages, messages[1:], strict=False):
        assert previous["role"] != current["role"]
    for index, message in enumerate(messages):
        blocks = message["content"]
        assert blocks, index
        for block in blocks:
            if block["type"] == "text":
                assert block["text"].strip()
            assert block["type"] not in ("image", "document")
        if message["role"] == "assistant":
            asked = [b["id"] for b in blocks if b["type"] == "tool_use"]
            if asked:
                following = messages[index + 1]["content"]
                answered = [b["tool_use_id"] for b in following if b["type"] == "tool_result"]
                assert sorted(asked) == sorted(answered), index
                kinds = [b["type"] for b in following]
                assert kinds[: len(answered)] == ["tool_result"] * len(answered)
        else:
            results = [b for b in blocks if b["type"] == "tool_result"]
            if results:
                before = messages[index - 1]["content"]
                ids = {b["id"] for b in before if b["type"] == "tool_use"}
                assert {b["tool_use_id"] for b in results} <= ids


def entry(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": f"{kind}-{id(content)}",
        "message": {"role": kind, "content": content},
        **extra,
    }


def build(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    transcript = Transcript.from_dicts(rows)
    return fork_messages(transcript.current_messages(), "PROMPT")


def test_prompt_goes_last_in_a_user_turn() -> None:
    messages = build([entry("user", "hi"), entry("assistant", [{"type": "text", "text": "yo"}])])
    assert messages[-1] == {"role": "user", "content": [{"type": "text", "text": "PROMPT"}]}
    after_user = build([entry("user", "hi")])
    assert after_user == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "PROMPT"}],
        }
    ]


def test_unanswered_tool_uses_and_orphan_results_are_dropped() -> None:
    use = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    orphan = {"type": "tool_result", "tool_use_id": "nope", "content": "x"}
    messages = build(
        [
            entry("user", [orphan, {"type": "text", "text": "start"}]),
            entry("assistant", [{"type": "text", "text": "running"}, use]),
        ]
    )
    assert_valid_for_api(messages)
    assert all(b["type"] != "tool_use" for m in messages for b in m["content"])
    assert all(b["type"] != "tool_result" for m in messages for b in m["content"])


def test_streamed_records_merge_and_media_become_placeholders() -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
    }
    rows = [
        entry("user", [{"type": "text", "text": "look"}, image]),
        entry("assistant", [{"type": "text", "text": "one"}]),
        entry("assistant", [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}]),
        entry("user", [{"type": "tool_result", "tool_use_id": "t", "content": [image]}]),
        entry("assistant", [{"type": "text", "text": ""}]),
    ]
    messages = build(rows)
    assert_valid_for_api(messages)
    assert messages[0]["content"][1] == {"type": "text", "text": "[image omitted]"}
    assert [b["type"] for b in messages[1]["content"]] == ["text", "tool_use"]
    assert messages[2]["content"][0]["content"] == [{"type": "text", "text": "[image omitted]"}]


def test_sidechains_and_pre_compaction_messages_are_left_out() -> None:
    rows = [
        entry("user", "before compaction"),
        {"type": "system", "subtype": "compact_boundary", "uuid": "b", "compactMetadata": {}},
        entry("user", "summary of the earlier part", isCompactSummary=True),
        entry("assistant", [{"type": "text", "text": "side"}], isSidechain=True),
        entry("assistant", [{"type": "text", "text": "main"}]),
    ]
    texts = [b["text"] for m in build(rows) for b in m["content"]]
    assert texts == ["summary of the earlier part", "main", "PROMPT"]


@pytest.mark.shared_data
def test_real_transcripts_become_valid_requests(shared_transcripts: Path) -> None:
    files = sorted(shared_transcripts.rglob("*.jsonl"))
    assert files
    for path in files:
        transcript = Transcript.load(path)
        messages = fork_messages(transcript.current_messages(), "PROMPT")
        assert_valid_for_api(messages)
