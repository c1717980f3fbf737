"""A Messages API that answers wrongly or too slowly (issue 10): one clear error, in time.

Against the fake API on loopback through the real SDK. The deadlines are short so the tests
stay quick; the bounds asserted are generous (many times the deadline), and every call is
also wrapped in an outer guard so that a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from fakes.messages_api import FakeMessagesAPI, ScriptedReply

from workbench.engine.llm import (
    LLMBadResponseError,
    LLMError,
    LLMTimeoutError,
    ModelClient,
    user_message,
)

DEADLINE_MS = 1000
BOUND_S = 10.0
"""A call must have ended this long after it started (ten times its deadline)."""
GUARD_S = 30.0


def _client(**overrides: object) -> ModelClient:
    env = dict(os.environ)
    env.update({"API_TIMEOUT_MS": str(DEADLINE_MS), "CLAUDE_CODE_MAX_RETRIES": "0"})
    env.update({k: str(v) for k, v in overrides.items()})
    return ModelClient.from_env(env)


def _body(client: ModelClient, **kw: object) -> dict:
    return client.build_request(messages=[user_message("which memories?")], max_tokens=64, **kw)


async def _fails(call, expected: type[LLMError]) -> tuple[LLMError, float]:
    """Await `call`; it must raise `expected` (a one-line message) within BOUND_S."""
    started = time.monotonic()
    with pytest.raises(expected) as caught:
        await asyncio.wait_for(call, GUARD_S)
    elapsed = time.monotonic() - started
    message = str(caught.value)
    assert message and "\n" not in message and len(message) < 300
    assert elapsed < BOUND_S, f"ended after {elapsed:.1f} s"
    return caught.value, elapsed


@pytest.mark.parametrize(
    ("body", "content_type", "stream", "says"),
    [
        (b"<html><body>Sign in to the proxy</body></html>", "text/html", False, "text/html"),
        (b"<html>proxy</html>", "text/html; charset=utf-8", True, "text/html"),
        (
            b'event: message_start\ndata: {"type": "message_start"}\n\n',
            "text/event-stream",
            False,
            "event stream to a request that did not ask for one",
        ),
        (b'{"type": "message", "content": []}', "application/json", True, "asked for an event"),
        (b"event: ping\ndata: {}\n\n", "text/event-stream", True, "does not add up"),
    ],
)
async def test_a_200_that_is_not_a_message_is_one_clear_error(
    fake_messages_api: FakeMessagesAPI, body: bytes, content_type: str, stream: bool, says: str
):
    fake_messages_api.reply_raw(body, content_type=content_type)
    async with _client() as client:
        error, _ = await _fails(client.create(_body(client, stream=stream)), LLMBadResponseError)
    assert says in str(error)
    assert error.kind == "bad_response"


async def test_count_tokens_answered_with_html_is_one_clear_error(
    fake_messages_api: FakeMessagesAPI,
):
    fake_messages_api.reply_count_tokens(
        ScriptedReply(raw_body=b"<html>login</html>", headers={"content-type": "text/html"})
    )
    async with _client() as client:
        call = client.count_tokens(messages=[user_message("hello")])
        error, _ = await _fails(call, LLMBadResponseError)
    assert "text/html" in str(error)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("retries", [0, 2])
async def test_a_trickling_server_cannot_keep_a_call_past_the_deadline(
    fake_messages_api: FakeMessagesAPI, stream: bool, retries: int
):
    """One byte every 0.2 s: no single read waits as long as the 1 s timeout, so only an
    overall deadline (retries included) ends the call. The answer would take minutes."""
    for _ in range(retries + 1):
        fake_messages_api.reply_text("x" * 2000, trickle=0.2)
    async with _client(CLAUDE_CODE_MAX_RETRIES=retries) as client:
        error, elapsed = await _fails(client.create(_body(client, stream=stream)), LLMTimeoutError)
    assert "did not answer in time" in str(error) and "API_TIMEOUT_MS" in str(error)
    assert elapsed >= DEADLINE_MS / 1000 * 0.5  # it really waited for the deadline first


def test_the_fake_trickles_as_scripted(fake_messages_api: FakeMessagesAPI) -> None:
    """The fault is real: the bytes arrive one by one, slowly, and add up to the message."""
    import httpx

    fake_messages_api.reply_text("hi", trickle=0.01)
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
    headers = {"x-api-key": os.environ["ANTHROPIC_API_KEY"]}
    started = time.monotonic()
    with httpx.stream(
        "POST", f"{fake_messages_api.base_url}/v1/messages", json=body, headers=headers
    ) as response:
        pieces = list(response.iter_raw(1))
    assert len(pieces) > 100 and time.monotonic() - started >= 0.5
    assert json.loads(b"".join(pieces))["content"][0]["text"] == "hi"
