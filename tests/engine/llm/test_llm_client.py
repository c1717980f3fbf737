"""The model layer against the fake Messages API, through the real `anthropic` SDK."""

from __future__ import annotations

import os

import pytest
from fakes.messages_api import FakeMessagesAPI, ScriptedReply

from workbench.engine.llm import (
    LLMAuthError,
    LLMBadResponseError,
    LLMConfig,
    LLMConnectionError,
    LLMNotConfiguredError,
    LLMOverloadedError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
    ModelClient,
    PromptTooLongError,
    user_message,
)


def _client(fake: FakeMessagesAPI, **overrides: object) -> ModelClient:
    env = dict(os.environ)
    env.update({k: str(v) for k, v in overrides.items()})
    return ModelClient.from_env(env)


def _body(client: ModelClient, **kw: object) -> dict:
    return client.build_request(messages=[user_message("which memories?")], max_tokens=256, **kw)


async def test_plain_call_sends_exactly_the_built_body(fake_messages_api: FakeMessagesAPI):
    fake_messages_api.reply_json({"selected_memories": ["a.md"]})
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    async with _client(fake_messages_api) as client:
        body = _body(client, system="pick memories", output_schema=schema)
        reply = await client.create(body)
    assert fake_messages_api.message_requests[-1].body == body
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": schema}}
    assert reply.json_text() == {"selected_memories": ["a.md"]}
    assert reply.request_id and reply.request_id.startswith("req_fake_")
    assert reply.usage.input_tokens == 42


async def test_key_and_default_model_come_from_the_environment(
    fake_messages_api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("ANTHROPIC_DEFAULT_SONNET_MODEL", "claude-sonnet-test")
    fake_messages_api.reply_text("ok")
    async with _client(fake_messages_api) as client:
        assert client.config.model == "claude-sonnet-test"
        await client.create(_body(client))
    sent = fake_messages_api.message_requests[-1]
    assert sent.body["model"] == "claude-sonnet-test"
    assert os.environ["ANTHROPIC_API_KEY"] in (
        sent.headers.get("x-api-key"),
        sent.headers.get("authorization", "").removeprefix("Bearer "),
    )


async def test_streaming_reassembles_text_and_tool_input(fake_messages_api: FakeMessagesAPI):
    long_text = "streamed " * 20
    fake_messages_api.reply_text(long_text)
    fake_messages_api.reply_tool_use([("Read", {"file_path": "/tmp/a b.md", "limit": 5})])
    pieces: list[str] = []
    async with _client(fake_messages_api) as client:
        first = await client.stream(_body(client, stream=True), on_text=pieces.append)
        second = await client.create(_body(client, stream=True))
    assert first.text == long_text
    assert len(pieces) > 1 and "".join(pieces) == long_text
    assert [r.body["stream"] for r in fake_messages_api.message_requests] == [True, True]
    (call,) = second.tool_calls
    assert (call.name, call.input) == ("Read", {"file_path": "/tmp/a b.md", "limit": 5})
    assert second.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("status", "error_type", "expected", "exit_code"),
    [
        (401, "authentication_error", LLMAuthError, 2),
        (403, "permission_error", LLMAuthError, 2),
        (429, "rate_limit_error", LLMRateLimitError, 2),
        (529, "overloaded_error", LLMOverloadedError, 2),
        (500, "api_error", LLMServerError, 2),
    ],
)
async def test_api_errors_become_clear_workbench_errors(
    fake_messages_api: FakeMessagesAPI, status, error_type, expected, exit_code
):
    fake_messages_api.reply_error(status, error_type, "secret-ish detail from the server")
    async with _client(fake_messages_api) as client:
        with pytest.raises(expected) as caught:
            await client.create(_body(client))
    error = caught.value
    assert error.status == status and error.exit_code == exit_code
    assert error.request_id and "\n" not in str(error)
    assert "secret-ish detail" not in str(error)  # the API's wording is kept, not printed
    assert error.to_json()["kind"] == expected.kind


async def test_prompt_too_long_exposes_the_token_gap(fake_messages_api: FakeMessagesAPI):
    fake_messages_api.reply_prompt_too_long(213_456, 200_000)
    async with _client(fake_messages_api) as client:
        with pytest.raises(PromptTooLongError) as caught:
            await client.create(_body(client))
    assert (caught.value.actual_tokens, caught.value.limit_tokens) == (213_456, 200_000)
    assert caught.value.gap == 13_456
    assert caught.value.to_json()["gap"] == 13_456


async def test_a_slow_answer_times_out_with_a_clear_error(fake_messages_api: FakeMessagesAPI):
    fake_messages_api.reply_text("too late", delay=5)
    async with _client(fake_messages_api, API_TIMEOUT_MS=300, CLAUDE_CODE_MAX_RETRIES=0) as client:
        with pytest.raises(LLMTimeoutError, match="did not answer in time"):
            await client.create(_body(client))
    assert len(fake_messages_api.message_requests) == 1  # no retries were configured


async def test_retries_follow_the_server_and_the_configured_count(
    fake_messages_api: FakeMessagesAPI,
):
    fake_messages_api.reply_error(
        529, "overloaded_error", headers={"x-should-retry": "true", "retry-after-ms": "5"}
    )
    fake_messages_api.reply_text("second time lucky")
    async with _client(fake_messages_api, CLAUDE_CODE_MAX_RETRIES=1) as client:
        reply = await client.create(_body(client))
    assert reply.text == "second time lucky"
    assert len(fake_messages_api.message_requests) == 2


async def test_garbled_response_and_mid_stream_error(fake_messages_api: FakeMessagesAPI):
    fake_messages_api.reply_raw(b"{this is not json")
    fake_messages_api.reply(
        ScriptedReply(
            content=[{"type": "text", "text": "partial"}],
            stream_error=("overloaded_error", "busy"),
        )
    )
    async with _client(fake_messages_api) as client:
        with pytest.raises(LLMBadResponseError, match="not valid JSON"):
            await client.create(_body(client))
        with pytest.raises(LLMOverloadedError):
            await client.stream(_body(client))


async def test_unreachable_endpoint_and_missing_key():
    config = LLMConfig(api_key="k", base_url="http://127.0.0.1:9", model="m", max_retries=0)
    async with ModelClient(config) as client:
        with pytest.raises(LLMConnectionError, match="could not reach"):
            await client.create(_body(client))
    no_key = ModelClient(LLMConfig(api_key=None, base_url="http://127.0.0.1:9", model="m"))
    with pytest.raises(LLMNotConfiguredError, match="ANTHROPIC_API_KEY"):
        await no_key.create(_body(no_key))


async def test_count_tokens_uses_the_endpoint(fake_messages_api: FakeMessagesAPI):
    fake_messages_api.reply_count_tokens(1234)
    async with _client(fake_messages_api) as client:
        counted = await client.count_tokens(
            messages=[user_message("hello")], system="be brief", tools=[]
        )
        estimated = await client.count_tokens(messages=[user_message("x" * 400)])
    assert counted == 1234
    assert estimated >= 100  # the fake's own estimate when nothing is scripted
    sent = [r for r in fake_messages_api.requests if r.path.endswith("/count_tokens")]
    assert sent[0].body["system"] == "be brief"
    assert sent[0].body["model"] == client.config.model


def test_unscripted_call_is_loud(fake_messages_api: FakeMessagesAPI):
    import asyncio

    async def go() -> None:
        async with _client(fake_messages_api, CLAUDE_CODE_MAX_RETRIES=0) as client:
            await client.create(_body(client))

    with pytest.raises(LLMServerError):
        asyncio.run(go())
