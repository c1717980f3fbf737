"""The bounded tool-use loop: scripted tool turns, local handlers, the turn cap."""

from __future__ import annotations

import pytest
from fakes.messages_api import FakeMessagesAPI

from workbench.engine.errors import UserInputError
from workbench.engine.llm import ModelClient, ToolCall, ToolOutcome, run_tool_loop, user_message

TOOLS = [
    {"name": "Read", "description": "read", "input_schema": {"type": "object"}},
    {"name": "Write", "description": "write", "input_schema": {"type": "object"}},
]


def _request(client: ModelClient) -> dict:
    return client.build_request(
        messages=[user_message("save what matters")], max_tokens=1000, tools=TOOLS
    )


async def test_tools_run_locally_and_results_go_back(fake_messages_api: FakeMessagesAPI):
    fake_messages_api.reply_tool_use(
        [("Read", {"file_path": "a.md"}), ("Read", {"file_path": "b.md"})]
    )
    fake_messages_api.reply_text("done")
    seen: list[str] = []

    def read(tool_input: dict) -> str:
        seen.append(tool_input["file_path"])
        return f"contents of {tool_input['file_path']}"

    async with ModelClient.from_env(__import__("os").environ) as client:
        result = await run_tool_loop(client, _request(client), {"Read": read}, max_turns=5)
    assert seen == ["a.md", "b.md"]
    assert result.stopped == "end_turn" and result.turns == 2 and result.final_text == "done"
    second = fake_messages_api.message_requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    results = second[2]["content"]
    assert [r["type"] for r in results] == ["tool_result", "tool_result"]
    assert results[0]["content"] == "contents of a.md" and "is_error" not in results[0]
    assert results[0]["tool_use_id"] == second[1]["content"][0]["id"]
    assert fake_messages_api.message_requests[1].body["tools"] == TOOLS


async def test_denied_unknown_and_failing_tools_become_error_results(
    fake_messages_api: FakeMessagesAPI,
):
    fake_messages_api.reply_tool_use(
        [
            ("Write", {"file_path": "/etc/passwd", "content": "x"}),
            ("Bash", {"command": "rm -rf /"}),
            ("Read", {"file_path": "boom"}),
            ("Read", {"file_path": "bad"}),
        ]
    )
    fake_messages_api.reply_text("ok")
    writes: list[dict] = []

    def read(tool_input: dict) -> ToolOutcome:
        if tool_input["file_path"] == "boom":
            raise RuntimeError("disk on fire")
        raise UserInputError("no such file: bad")

    def deny_outside(call: ToolCall) -> str | None:
        return "writes outside the memory folder are refused" if call.name == "Write" else None

    async with ModelClient.from_env(__import__("os").environ) as client:
        result = await run_tool_loop(
            client,
            _request(client),
            {"Read": read, "Write": writes.append},
            max_turns=3,
            can_use_tool=deny_outside,
        )
    assert writes == []
    outcomes = [(e.call.name, e.denied, e.outcome.is_error) for e in result.exchanges]
    assert outcomes == [
        ("Write", True, True),
        ("Bash", True, True),
        ("Read", False, True),
        ("Read", False, True),
    ]
    sent = fake_messages_api.message_requests[1].body["messages"][2]["content"]
    assert all(r["is_error"] is True for r in sent)
    assert "refused" in sent[0]["content"] and "Bash" in sent[1]["content"]
    assert "disk on fire" in sent[2]["content"] and sent[3]["content"] == "no such file: bad"


@pytest.mark.parametrize("max_turns", [1, 5])
async def test_the_turn_cap_stops_the_loop(fake_messages_api: FakeMessagesAPI, max_turns: int):
    for _ in range(max_turns + 2):
        fake_messages_api.reply_tool_use([("Read", {"file_path": "again.md"})])
    calls = 0

    async def read(tool_input: dict) -> str:
        nonlocal calls
        calls += 1
        return "same again"

    async with ModelClient.from_env(__import__("os").environ) as client:
        result = await run_tool_loop(client, _request(client), {"Read": read}, max_turns=max_turns)
    assert result.stopped == "max_turns"
    assert len(fake_messages_api.message_requests) == max_turns == result.turns
    assert calls == max_turns  # the last turn's tools still ran, as in Claude Code
    assert fake_messages_api.pending == 2
