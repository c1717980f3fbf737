"""The model selector end to end against the fake Messages API (real SDK, loopback)."""

from __future__ import annotations

import pytest
from fakes.messages_api import FakeMessagesAPI

from workbench.engine.llm import LLMAuthError, LLMTimeoutError
from workbench.engine.recall.selector import SELECTION_SCHEMA

QUERY = "can we deploy to production on Dec 20?"


async def test_request_is_exact_and_the_pick_is_explained(fake_messages_api, tidy_folder):
    fake_messages_api.reply_json({"selected_memories": ["project_freeze.md", "user_role.md"]})
    recall = tidy_folder.engine().recall
    result = await recall.recall(QUERY, engine="auto", recent_tools=["Bash"])
    assert result.engine == "llm" and result.requested_engine == "auto"
    (sent,) = fake_messages_api.message_requests
    assert sent.body == result.request
    assert sent.body["max_tokens"] == 256 and sent.body["model"] == "claude-sonnet-4-6"
    assert sent.body["output_config"]["format"]["schema"] == SELECTION_SCHEMA
    content = sent.body["messages"][0]["content"]
    assert content == (
        f"Query: {QUERY}\n\nAvailable memories:\n{result.manifest}\n\nRecently used tools: Bash"
    )
    assert [s.path for s in result.selected] == ["project_freeze.md", "user_role.md"]
    first = result.selected[0]
    assert first.score is None and first.reasons[0] == "chosen by the model (pick 1 of 2)"
    assert any("matches 'deploy'" in r for r in first.reasons)
    assert result.selected[1].freshness_note  # 100 days old
    assert [m.path for m in result.surfacing.memories] == ["project_freeze.md", "user_role.md"]
    assert all(m.why_not.startswith("the model left it out") for m in result.near_misses)


async def test_unknown_names_are_dropped(fake_messages_api, tidy_folder):
    fake_messages_api.reply_json(
        {"selected_memories": ["invented.md", "../../etc/passwd", "feedback_money.md"]}
    )
    result = await tidy_folder.engine().recall.recall(QUERY, engine="llm")
    assert [s.path for s in result.selected] == ["feedback_money.md"]
    assert result.rejected_names == ("invented.md", "../../etc/passwd")
    assert any("not candidate files" in n for n in result.notes)


async def test_at_most_five_even_if_the_model_sends_more(fake_messages_api, memory_folder):
    names = [f"m{i}.md" for i in range(8)]
    for name in names:
        memory_folder.add(name, f"memory {name}")
    fake_messages_api.reply_json({"selected_memories": names})
    result = await memory_folder.engine().recall.recall("any two words", engine="llm")
    assert len(result.selected) == 5
    assert len(result.surfacing.memories) == 5
    assert any("beyond the limit of 5" in n for n in result.notes)


async def test_surfaced_files_are_never_offered(fake_messages_api, tidy_folder):
    fake_messages_api.reply_json({"selected_memories": ["project_freeze.md"]})
    result = await tidy_folder.engine().recall.recall(
        QUERY, engine="llm", surfaced=["project_freeze.md", "team/reference_oncall.md"]
    )
    sent = fake_messages_api.message_requests[0].body["messages"][0]["content"]
    assert "project_freeze.md" not in sent and "reference_oncall.md" not in sent
    assert result.selected == ()  # naming a surfaced file is naming a non-candidate
    assert result.rejected_names == ("project_freeze.md",)


@pytest.mark.parametrize(
    "answer", ["this is not json", '{"selected_memories": "project_freeze.md"}', ""]
)
async def test_invalid_model_output_means_no_memories(fake_messages_api, tidy_folder, answer):
    fake_messages_api.reply_text(answer)
    result = await tidy_folder.engine().recall.recall(QUERY, engine="llm")
    assert result.engine == "llm" and result.selected == ()
    assert result.model_answer == answer
    assert any("no memories" in n for n in result.notes)


async def test_nothing_left_to_offer_means_no_call(fake_messages_api, memory_folder):
    memory_folder.add("only.md", "the only memory")
    result = await memory_folder.engine().recall.recall(QUERY, engine="llm", surfaced=["only.md"])
    assert fake_messages_api.message_requests == []
    assert result.request is None and result.selected == ()


async def test_files_already_read_are_filtered_after_the_model(fake_messages_api, tidy_folder):
    fake_messages_api.reply_json({"selected_memories": ["project_freeze.md", "user_role.md"]})
    read = [str(tidy_folder.dir / "project_freeze.md")]
    result = await tidy_folder.engine().recall.recall(QUERY, engine="llm", read_files=read)
    assert [s.path for s in result.selected] == ["user_role.md"]
    assert "already read" in result.near_misses[0].why_not


async def test_api_error_on_llm_raises_a_clear_error(fake_messages_api, tidy_folder):
    fake_messages_api.reply_error(401, "authentication_error", "bad key")
    with pytest.raises(LLMAuthError) as caught:
        await tidy_folder.engine().recall.recall(QUERY, engine="llm")
    assert caught.value.exit_code == 2 and "ANTHROPIC_API_KEY" in str(caught.value)


async def test_auto_falls_back_to_offline_on_api_failure(fake_messages_api, tidy_folder):
    fake_messages_api.reply_error(529, "overloaded_error")
    result = await tidy_folder.engine().recall.recall(QUERY, engine="auto")
    assert result.engine == "offline" and result.requested_engine == "auto"
    assert result.error and result.error["kind"] == "overloaded"
    assert [s.path for s in result.selected] == ["project_freeze.md"]
    assert any("offline ranking instead" in n for n in result.notes)


async def test_timeout_is_reported_not_raised_raw(
    fake_messages_api: FakeMessagesAPI, tidy_folder, monkeypatch
):
    monkeypatch.setenv("API_TIMEOUT_MS", "300")
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    fake_messages_api.reply_json({"selected_memories": []}, delay=5)
    with pytest.raises(LLMTimeoutError):
        await tidy_folder.engine().recall.recall(QUERY, engine="llm")


async def test_auto_without_a_key_ranks_offline(tidy_folder):
    result = await tidy_folder.engine().recall.recall(QUERY)
    assert result.engine == "offline" and result.request is None
    assert any("ANTHROPIC_API_KEY is not set" in n for n in result.notes)


def test_build_request_without_a_call(tidy_folder):
    recall = tidy_folder.engine(ANTHROPIC_DEFAULT_SONNET_MODEL="claude-test").recall
    body = recall.build_request(QUERY, recent_tools=[" Bash ", "", "Bash"])
    assert body is not None and body["model"] == "claude-test"
    assert body["messages"][0]["content"].endswith("Recently used tools: Bash")
