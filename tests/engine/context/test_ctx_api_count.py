"""The Anthropic count-tokens endpoint beside the estimates (against the loopback fake)."""

from __future__ import annotations

import json

from fakes.messages_api import ScriptedReply

from workbench.cli import main
from workbench.devtools.synth import SessionBuilder
from workbench.engine import Engine


def _session(tmp_path):
    b = SessionBuilder(seed=31)
    b.prompt("Count me")
    b.tool_call("Read", {"file_path": "/repo/x.py"}, "print('x')\n" * 40, thinking="look")
    b.reply("Counted.")
    return b.write(tmp_path / "s.jsonl")


def test_measure_uses_the_count_tokens_endpoint(tmp_path, fake_messages_api):
    path = _session(tmp_path)
    fake_messages_api.reply_count_tokens(4321)
    engine = Engine.open(tmp_path)
    measured = engine.context.measure(path, api=True, model="claude-sonnet-4-6")
    assert measured.api_count == 4321 and measured.api_error is None
    assert measured.tiktoken_cl100k and measured.claude_code_estimate
    [request] = [r for r in fake_messages_api.requests if r.path.endswith("/count_tokens")]
    roles = [m["role"] for m in request.body["messages"]]
    assert roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:], strict=False))
    assert request.body["model"] == "claude-sonnet-4-6"


def test_measure_reports_an_api_error_without_failing(tmp_path, fake_messages_api, monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    path = _session(tmp_path)
    fake_messages_api.reply_count_tokens(
        ScriptedReply(status=529, error_type="overloaded_error", error_message="busy")
    )
    measured = Engine.open(tmp_path).context.measure(path, api=True)
    assert measured.api_count is None and measured.api_error


def test_gauge_measure_calls_the_api_when_a_key_is_set(tmp_path, capsys, fake_messages_api):
    path = _session(tmp_path)
    fake_messages_api.reply_count_tokens(777)
    code = main(["gauge", str(path), "--measure", "--json", "--project", str(tmp_path)])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["measurements"]["api_count"] == 777
