"""The extraction agent against the fake Messages API: prompt, turns, permissions, writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fakes.messages_api import FakeMessagesAPI

from workbench.engine import Engine
from workbench.engine.agents.extraction import (
    MAX_TURNS,
    CursorStore,
    ExtractionAgent,
    build_extraction_prompt,
)
from workbench.engine.agents.extraction_state import ExtractionSettings
from workbench.engine.agents.prompt import prompt_for_engine
from workbench.engine.agents.review_queue import ReviewQueue
from workbench.engine.llm import LLMError, LLMServerError, LLMTimeoutError

NEW_MEMORY = """---
name: Package manager
description: the user wants uv, never pip, in this repository
type: feedback
---

Use uv for every install.
**Why:** pip broke the lockfile once.
**How to apply:** any dependency change in this repo.
"""


def memory_dir(engine: Engine) -> Path:
    return Path(engine.locations.memory_dir)


def plan(engine: Engine, transcript: Path, **settings):
    agent = ExtractionAgent(engine, ExtractionSettings(**settings))
    return agent, agent.plan(str(transcript))


def script_two_step_save(fake: FakeMessagesAPI, memory: Path) -> None:
    fake.reply_tool_use([("Read", {"file_path": str(memory / "MEMORY.md")})])
    fake.reply_tool_use(
        [
            ("Write", {"file_path": str(memory / "feedback_uv.md"), "content": NEW_MEMORY}),
            (
                "Edit",
                {
                    "file_path": str(memory / "MEMORY.md"),
                    "old_string": "run pytest -q\n",
                    "new_string": "run pytest -q\n- [Package manager](feedback_uv.md) — uv only\n",
                },
            ),
        ]
    )
    fake.reply_text("Saved the uv preference.")


# --- dry run and prompt ----------------------------------------------------------------------


def test_dry_run_builds_the_exact_request_and_sends_nothing(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    agent, the_plan = plan(llm_engine, simple_session)
    result = agent.result_without_run(the_plan, dry_run=True)
    assert result.status == "dry_run" and result.engine == "dry-run"
    assert fake_messages_api.requests == []
    request = result.request
    assert request is not None
    assert [t["name"] for t in request["tools"]] == [
        "Read",
        "Grep",
        "Glob",
        "Bash",
        "Edit",
        "Write",
    ]
    # A perfect fork: the main agent's memory prompt, in the shape of the session's release.
    assert prompt_for_engine(llm_engine).text in request["system"]
    messages = request["messages"]
    assert messages[0] == {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": "Please always use uv instead of pip in this repo; pip broke our lockfile.",
            }
        ],
    }
    prompt = messages[-1]["content"][-1]["text"]
    assert "~4 messages" in prompt
    assert "## Existing memory files" in prompt and "feedback_testing.md" in prompt
    assert "## What NOT to save in memory" in prompt
    # The dry run leaves the cursor where it was.
    assert CursorStore(llm_engine).load(the_plan.session_id).last_memory_message_uuid is None
    json.dumps(result.to_json())  # everything is JSON-able


def test_prompt_variants() -> None:
    individual = build_extraction_prompt(7, "/m/", "- a.md", combined=False, skip_index=False)
    combined = build_extraction_prompt(7, "/m/", "", combined=True, skip_index=True)
    assert "~7 messages" in individual and "## Existing memory files" in individual
    assert "## Existing memory files" not in combined
    assert "<scope>" in combined and "<scope>" not in individual
    assert "MEMORY.md" in individual.split("## How to save memories")[1]
    assert "Step 2" not in combined


def test_prompt_is_our_own_wording() -> None:
    text = build_extraction_prompt(3, "/m/", "- x.md", combined=True, skip_index=False)
    for phrase in (
        "You are now acting as the memory extraction subagent",
        "Check this list before writing",
        "no git commands",
    ):
        assert phrase not in text


# --- a real run with scripted turns -----------------------------------------------------------


async def test_a_write_that_changes_nothing_saves_nothing(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    # The summary said "the agent finished without changing any memory" and then
    # "Saved 1 memory": the write put back the text the file already held.
    memory = memory_dir(llm_engine)
    existing = next(p for p in sorted(memory.glob("*.md")) if p.name != "MEMORY.md")
    fake_messages_api.reply_tool_use(
        [("Write", {"file_path": str(existing), "content": existing.read_text()})]
    )
    fake_messages_api.reply_text("Nothing new.")
    agent, the_plan = plan(llm_engine, simple_session)
    result = await agent.run(the_plan, mode="propose")
    data = result.to_json()
    assert data["changes"] == [] and "Saved" not in (data["summary"] or "")


async def test_writes_become_proposals_and_the_folder_is_untouched(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI, snapshot_tree
) -> None:
    memory = memory_dir(llm_engine)
    before = snapshot_tree(memory)
    script_two_step_save(fake_messages_api, memory)
    agent, the_plan = plan(llm_engine, simple_session)
    result = await agent.run(the_plan, mode="propose")
    assert snapshot_tree(memory) == before
    assert result.status == "ran" and result.engine == "llm"
    data = result.to_json()
    assert data["turns"] == 3 and data["stopped"] == "end_turn"
    assert data["written_paths"] == [str(memory / "feedback_uv.md"), str(memory / "MEMORY.md")]
    assert data["memory_paths"] == [str(memory / "feedback_uv.md")]
    assert data["summary"] == "● Saved 1 memory"
    assert data["memory_saved"]["subtype"] == "memory_saved"
    proposals = ReviewQueue(llm_engine).list()
    assert sorted(p.path for p in proposals) == ["MEMORY.md", "feedback_uv.md"]
    assert {c["outcome"] for c in data["changes"]} == {"proposed"}
    # The Read in turn 1 came back as a numbered listing in the second request.
    second = fake_messages_api.message_requests[1].body["messages"]
    assert "run pytest -q" in second[-1]["content"][0]["content"]
    # The cursor moved to the last message, so a second run finds nothing new.
    last_uuid = json.loads(simple_session.read_text().splitlines()[-1])["uuid"]
    assert result.cursor_after == last_uuid
    again = agent.plan(str(simple_session))
    assert agent.result_without_run(again, dry_run=False).status == "nothing_new"


async def test_apply_writes_through_history(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    memory = memory_dir(llm_engine)
    script_two_step_save(fake_messages_api, memory)
    agent, the_plan = plan(llm_engine, simple_session)
    result = await agent.run(the_plan, mode="apply")
    assert (memory / "feedback_uv.md").read_text() == NEW_MEMORY
    assert "feedback_uv.md) — uv only" in (memory / "MEMORY.md").read_text()
    actions = {e.action for e in llm_engine.history.entries()}
    assert actions == {"extraction-apply"}
    assert ReviewQueue(llm_engine).list() == []
    # Both files were written as one group, so one undo reverts the whole extraction.
    llm_engine.history.undo()
    assert not (memory / "feedback_uv.md").exists()
    assert "uv only" not in (memory / "MEMORY.md").read_text()
    assert all(c.outcome == "applied" for c in result.changes)


async def test_the_fork_stops_after_five_turns(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    memory = memory_dir(llm_engine)
    for _ in range(MAX_TURNS + 2):
        fake_messages_api.reply_tool_use([("Read", {"file_path": str(memory / "MEMORY.md")})])
    agent, the_plan = plan(llm_engine, simple_session)
    result = await agent.run(the_plan, mode="propose")
    assert len(fake_messages_api.message_requests) == MAX_TURNS
    assert fake_messages_api.pending == 2
    assert result.to_json()["stopped"] == "max_turns"


async def test_denied_calls_come_back_as_errors_and_nothing_escapes(
    llm_engine: Engine,
    simple_session: Path,
    fake_messages_api: FakeMessagesAPI,
    tmp_path: Path,
    snapshot_tree,
) -> None:
    memory = memory_dir(llm_engine)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep")
    os.symlink(outside, memory / "escape-link")
    project = Path(llm_engine.locations.project_root)
    watched = {p: snapshot_tree(p) for p in (outside, project)}
    fake_messages_api.reply_tool_use(
        [
            ("Write", {"file_path": str(memory / ".." / "sneaky.md"), "content": "x"}),
            ("Write", {"file_path": str(memory / "escape-link" / "x.md"), "content": "x"}),
            (
                "Edit",
                {
                    "file_path": str(outside / "victim.txt"),
                    "old_string": "keep",
                    "new_string": "gone",
                },
            ),
            ("Bash", {"command": f"rm -rf {outside}"}),
            ("Bash", {"command": f"echo pwned > {outside}/new.txt"}),
            ("Bash", {"command": "git push"}),
            ("Agent", {"prompt": "do something"}),
            ("mcp__github__create_issue", {"title": "x"}),
            ("Write", {"file_path": 7, "content": "x"}),
            (
                "Edit",
                {
                    "file_path": str(memory / "feedback_testing.md"),
                    "old_string": "absent text",
                    "new_string": "y",
                },
            ),
        ]
    )
    fake_messages_api.reply_text("nothing I can do")
    agent, the_plan = plan(llm_engine, simple_session)
    result = await agent.run(the_plan, mode="apply")
    data = result.to_json()
    assert all(call["is_error"] for call in data["tool_calls"])
    assert len(data["denied_calls"]) == 9  # every call but the Edit, which failed on its own
    second = fake_messages_api.message_requests[1].body["messages"][-1]["content"]
    assert [b["type"] for b in second] == ["tool_result"] * 10
    assert all(b.get("is_error") is True for b in second)
    assert "only" in second[0]["content"] and str(memory) in second[0]["content"]
    assert "read" in second[3]["content"].lower()
    assert "not found" in second[9]["content"]
    assert result.changes == ()
    assert data["summary"] == ""
    assert {p: snapshot_tree(p) for p in (outside, project)} == watched
    assert not (memory.parent / "sneaky.md").exists()


async def test_team_secret_write_is_refused_at_the_tool(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    memory = memory_dir(llm_engine)
    (memory / "team").mkdir()
    token = "gh" + "p_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    fake_messages_api.reply_tool_use(
        [
            ("Write", {"file_path": str(memory / "team" / "ci.md"), "content": f"token {token}\n"}),
            (
                "Write",
                {
                    "file_path": str(memory / "team" / "deploys.md"),
                    "content": "Deploys on Fridays are frozen.\n",
                },
            ),
        ]
    )
    fake_messages_api.reply_text("done")
    agent, the_plan = plan(llm_engine, simple_session)
    result = await agent.run(the_plan, mode="propose")
    refused, accepted = result.to_json()["tool_calls"]
    assert refused["is_error"] and "secret" in refused["content"].lower()
    assert token not in refused["content"]
    assert not accepted["is_error"]
    assert result.to_json()["summary"] == "● Saved 1 team memory"
    assert [p.path for p in ReviewQueue(llm_engine).list()] == ["team/deploys.md"]
    # The combined prompt was used because a team folder exists.
    first_prompt = fake_messages_api.message_requests[0].body["messages"][-1]["content"][-1]["text"]
    assert "<scope>" in first_prompt


async def test_malformed_tool_input_is_an_error_result(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    memory = memory_dir(llm_engine)
    fake_messages_api.reply_tool_use(
        [
            ("Write", {"file_path": str(memory / "a.md")}),
            ("Edit", {"file_path": str(memory / "MEMORY.md"), "old_string": 1, "new_string": []}),
            ("Read", {"file_path": str(memory / "MEMORY.md"), "offset": "ten"}),
            ("Grep", {"pattern": "(unclosed"}),
        ]
    )
    fake_messages_api.reply_text("ok")
    agent, the_plan = plan(llm_engine, simple_session)
    result = await agent.run(the_plan, mode="apply")
    assert all(c["is_error"] for c in result.to_json()["tool_calls"])
    assert not (memory / "a.md").exists()


async def test_api_errors_leave_cursor_and_folder_alone(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI, snapshot_tree
) -> None:
    memory = memory_dir(llm_engine)
    before = snapshot_tree(memory)
    fake_messages_api.reply_tool_use(
        [("Write", {"file_path": str(memory / "half.md"), "content": "half"})]
    )
    fake_messages_api.reply_error(500, "api_error", "internal failure")
    agent, the_plan = plan(llm_engine, simple_session)
    with pytest.raises(LLMServerError):
        await agent.run(the_plan, mode="apply")
    assert snapshot_tree(memory) == before  # the staged write from turn 1 was dropped
    assert ReviewQueue(llm_engine).list() == []
    assert CursorStore(llm_engine).load(the_plan.session_id).last_memory_message_uuid is None


async def test_timeouts_are_clear_errors(
    agent_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI, monkeypatch
) -> None:
    monkeypatch.setenv("API_TIMEOUT_MS", "300")
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    engine = Engine(agent_engine.locations, env=dict(os.environ))
    fake_messages_api.reply_text("too late", delay=3)
    agent, the_plan = plan(engine, simple_session)
    with pytest.raises(LLMTimeoutError) as caught:
        await agent.run(the_plan, mode="propose")
    assert "in time" in str(caught.value)
    assert isinstance(caught.value, LLMError)


async def test_garbage_response_is_a_clear_error(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    fake_messages_api.reply_raw(b"{this is not json")
    agent, the_plan = plan(llm_engine, simple_session)
    with pytest.raises(LLMError):
        await agent.run(the_plan, mode="propose")


# --- gates, mutual exclusion, throttle --------------------------------------------------------


def test_direct_memory_writes_skip_extraction(
    llm_engine: Engine, write_transcript, conversation, fake_messages_api: FakeMessagesAPI
) -> None:
    memory = memory_dir(llm_engine)
    c = conversation
    use = c["tool_use"]("Write", {"file_path": str(memory / "x.md"), "content": "x"}, "toolu_1")
    transcript = write_transcript(
        [c["user"]("remember x"), c["assistant"](use), c["tool_result"]("toolu_1")]
    )
    agent, the_plan = plan(llm_engine, transcript)
    result = agent.result_without_run(the_plan, dry_run=False)
    assert result.status == "skipped_direct_write"
    assert fake_messages_api.requests == []
    saved = CursorStore(llm_engine).load(the_plan.session_id)
    assert (
        saved.last_memory_message_uuid
        == json.loads(transcript.read_text().splitlines()[-1])["uuid"]
    )


def test_gates_stop_before_any_work(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    agent, the_plan = plan(llm_engine, simple_session, extract_enabled=False)
    result = agent.result_without_run(the_plan, dry_run=False)
    assert result.status == "gated" and "extract mode active" in result.reason
    assert result.request is None


def test_throttle_persists_between_invocations(llm_engine: Engine, simple_session: Path) -> None:
    statuses = []
    for _ in range(3):
        agent, the_plan = plan(llm_engine, simple_session, every_n_turns=3)
        statuses.append(agent.result_without_run(the_plan, dry_run=False).status)
        if the_plan.step.should_run:
            break
    assert statuses == ["throttled", "throttled", "dry_run"]


def test_cursor_not_found_counts_every_message(llm_engine: Engine, simple_session: Path) -> None:
    agent = ExtractionAgent(llm_engine, ExtractionSettings())
    from workbench.engine.agents.extraction_state import CursorState

    agent.cursors.save(Path(simple_session).stem, CursorState("compacted-away"))
    the_plan = agent.plan(str(simple_session))
    assert the_plan.step.new_message_count == 4


async def test_reading_an_old_memory_carries_the_freshness_note(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    memory = memory_dir(llm_engine)
    old = memory / "feedback_testing.md"
    ten_days_ago = old.stat().st_mtime - 10 * 86_400
    os.utime(old, (ten_days_ago, ten_days_ago))
    fake_messages_api.reply_tool_use(
        [
            ("Read", {"file_path": str(old)}),
            ("Read", {"file_path": str(memory / "MEMORY.md")}),
            ("Read", {"file_path": str(Path(llm_engine.locations.project_root) / "README.md")}),
        ]
    )
    fake_messages_api.reply_text("nothing to save")
    agent, the_plan = plan(llm_engine, simple_session)
    result = await agent.run(the_plan, mode="propose")
    stale, fresh, project = (c["content"] for c in result.to_json()["tool_calls"])
    assert stale.startswith("<system-reminder>This memory was saved 10 days ago.")
    assert fresh.startswith("     1\t") and project.startswith("     1\t")


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic notes the odd input on dump
async def test_tool_input_that_is_not_an_object_is_an_error_result(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    from fakes.messages_api import ScriptedReply

    memory = memory_dir(llm_engine)
    fake_messages_api.reply(
        ScriptedReply(
            content=[
                {"type": "tool_use", "id": "toolu_bad1", "name": "Write", "input": "{not json"},
                {"type": "tool_use", "id": "toolu_bad2", "name": "Edit", "input": None},
            ],
            stop_reason="tool_use",
        )
    )
    fake_messages_api.reply_text("gave up")
    agent, the_plan = plan(llm_engine, simple_session)
    result = await agent.run(the_plan, mode="apply")
    calls = result.to_json()["tool_calls"]
    assert [c["is_error"] for c in calls] == [True, True]
    assert result.changes == ()
    assert sorted(p.name for p in memory.iterdir()) == ["MEMORY.md", "feedback_testing.md"]
