"""Request bodies, config and error parsing: the parts that need no server."""

from __future__ import annotations

import pytest

from workbench.engine.llm import (
    DEFAULT_SONNET_MODEL,
    LLMBadResponseError,
    LLMConfig,
    build_request,
    prompt_too_long_tokens,
    user_message,
)
from workbench.engine.llm.request import reply_from_json


def test_build_request_includes_only_given_fields_in_api_order():
    body = build_request(model="m", messages=[user_message("q")], max_tokens=256)
    assert body == {"model": "m", "max_tokens": 256, "messages": [{"role": "user", "content": "q"}]}
    full = build_request(
        model="m",
        messages=[user_message("q")],
        max_tokens=10,
        system="sys",
        tools=[{"name": "Read", "input_schema": {"type": "object"}}],
        output_schema={"type": "object"},
        stream=True,
    )
    assert full["system"] == "sys" and full["stream"] is True
    assert full["output_config"]["format"]["type"] == "json_schema"
    assert full["tools"][0]["name"] == "Read"


def test_build_request_rejects_bad_input():
    with pytest.raises(ValueError):
        build_request(model="m", messages=[{"role": "system", "content": "x"}], max_tokens=5)
    with pytest.raises(ValueError):
        build_request(model="m", messages=[user_message("q")], max_tokens=0)
    with pytest.raises(TypeError):
        build_request(model="m", messages=[{"role": "user", "content": {1, 2}}], max_tokens=5)


def test_config_reads_env_with_claude_code_names():
    config = LLMConfig.from_env({})
    assert (config.model, config.api_key, config.base_url) == (
        DEFAULT_SONNET_MODEL,
        None,
        "https://api.anthropic.com",
    )
    assert DEFAULT_SONNET_MODEL == "claude-sonnet-4-6"
    env = {
        "ANTHROPIC_API_KEY": " k ",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:1234/",
        "ANTHROPIC_DEFAULT_SONNET_MODEL": "claude-x",
        "API_TIMEOUT_MS": "2500",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }
    config = LLMConfig.from_env(env)
    assert config.api_key == "k" and config.base_url == "http://127.0.0.1:1234"
    assert (config.model, config.timeout_s, config.max_retries) == ("claude-x", 2.5, 0)
    assert "k" not in str(config.describe().values())


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("prompt is too long: 210000 tokens > 200000 maximum", (210000, 200000)),
        ("Prompt is too long: 5 token > 4", (5, 4)),
        ("prompt is too long", None),
        ("rate limited", None),
    ],
)
def test_prompt_too_long_parsing(message, expected):
    assert prompt_too_long_tokens(message) == expected


def test_reply_json_text_errors_are_clear():
    reply = reply_from_json({"content": [{"type": "text", "text": "not json"}]})
    with pytest.raises(LLMBadResponseError, match="not valid JSON"):
        reply.json_text()
    empty = reply_from_json({"content": []})
    with pytest.raises(LLMBadResponseError, match="without any text"):
        empty.json_text()
    with pytest.raises(LLMBadResponseError):
        reply_from_json({"content": "nope"})
