"""The oracle harness itself, without Claude Code: the fake API, the search, the extractors.

The real CLI is what `make oracle` runs; here a small simulated client stands in for it, so
the search's logic (bisection across compactions, scans across blocked runs) is checked on
rules we know.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from oracle import extract  # noqa: E402
from oracle.firing import FiringSearch  # noqa: E402
from oracle.sanitize import filler, sanitize_transcript, scrub  # noqa: E402
from tests.fakes.messages_api import (  # noqa: E402
    FakeMessagesAPI,
    RecordedRequest,
    ScriptedReply,
    usage_total,
)

TOOLS = [{"name": n, "input_schema": {"type": "object"}} for n in ("Bash", "Read", "Edit")]


def _request(messages, tools=TOOLS, index=0) -> RecordedRequest:
    body = {"model": "m", "max_tokens": 10, "messages": messages, "tools": tools}
    return RecordedRequest("POST", "/v1/messages", {}, body, index=index)


def test_fake_api_streams_what_the_sdk_expects():
    import anthropic

    with FakeMessagesAPI.for_cli(
        lambda r: ScriptedReply.tool_use([("Nope", {"x": 1})], text="hi", usage=usage_total(1234))
    ) as api:
        client = anthropic.Anthropic(base_url=api.base_url, api_key="k", max_retries=0)
        with client.messages.stream(
            model="claude-x", max_tokens=5, messages=[{"role": "user", "content": "q"}]
        ) as stream:
            message = stream.get_final_message()
        count = client.messages.count_tokens(
            model="claude-x", messages=[{"role": "user", "content": "q"}]
        )
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"x": 1}
    u = message.usage
    assert u.input_tokens + u.cache_read_input_tokens + u.output_tokens == 1234
    assert count.input_tokens >= 1
    assert [r.route for r in api.requests] == ["/v1/messages", "/v1/messages/count_tokens"]
    assert all("x-api-key" not in r.headers for r in api.requests)  # keys are never recorded


def test_fake_api_answers_probes_and_queues_in_order():
    import httpx

    with FakeMessagesAPI.for_cli() as api:
        api.reply_text("first")
        assert httpx.head(api.base_url).status_code == 200
        assert httpx.get(api.base_url + "/anything").status_code == 200
        body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "q"}]}
        first = httpx.post(api.base_url + "/v1/messages", json=body).json()
        second = httpx.post(api.base_url + "/v1/messages", json=body).json()
    assert first["content"][0]["text"] == "first"
    assert second["content"][0]["text"] == "ok"  # the default once the queue is empty
    assert [r.method for r in api.requests] == ["HEAD", "GET", "POST", "POST"]


def test_fake_api_for_the_cli_reports_a_failing_responder_and_takes_other_routes():
    import httpx

    def responder(request: RecordedRequest) -> ScriptedReply | None:
        raise KeyError("no such case")

    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "q"}]}
    with FakeMessagesAPI.for_cli(responder) as api:
        failed = httpx.post(api.base_url + "/v1/messages", json=body)
        side = httpx.post(api.base_url + "/api/event_logging/batch", json={"events": []})
    assert failed.status_code == 500 and failed.headers["x-should-retry"] == "false"
    assert api.errors == ["KeyError: 'no such case'"]
    assert side.status_code == 200
    # The tests' own fake stays loud: no probe or stray route is answered as if it were fine.
    with FakeMessagesAPI() as strict:
        assert httpx.get(strict.base_url).status_code == 404
        assert httpx.post(strict.base_url + "/v1/other", json={}).status_code == 404
        assert httpx.post(strict.base_url + "/v1/messages", json=body).status_code == 500


def _simulate(search: FiringSearch, *, threshold: int, trailing: int, kind: str) -> None:
    """A client that acts when usage + trailing >= threshold: compacts and goes on, or stops."""
    search.start_run()
    conversation = [{"role": "user", "content": "go"}]
    for _ in range(500):
        reply = search.respond(_request(conversation))
        if reply is None or reply.stop_reason != "tool_use":
            break
        total = sum(reply.usage.values())
        conversation += [
            {"role": "assistant", "content": reply.content},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "e"}],
            },
        ]
        if total + trailing >= threshold:
            if kind == "stop":
                break
            summary = conversation + [{"role": "user", "content": "S" * 2000}]
            search.respond(_request(summary))
            conversation = [{"role": "user", "content": "summary"}]
    search.end_run()


@pytest.mark.parametrize(
    ("threshold", "kind"),
    [(167_000, "compact"), (966_000, "compact"), (177_000, "stop"), (64_321, "stop")],
)
def test_search_finds_the_exact_firing_point(threshold, kind):
    search = FiringSearch(hints=(167_000, 177_000))
    for _ in range(10):
        _simulate(search, threshold=threshold, trailing=37, kind=kind)
        if search.done:
            break
    assert search.done
    assert search.hi == threshold - 37 and search.lo == threshold - 38
    assert search.hi_outcome == kind
    assert not search.anomalies


def test_search_reports_nothing_up_to_the_ceiling():
    search = FiringSearch()
    _simulate(search, threshold=10**9, trailing=5, kind="compact")
    assert search.done and not search.fired and search.lo == search.ceiling


def test_summary_requests_are_told_apart_from_main_calls():
    main = _request(
        [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]
    )
    reminder = _request([{"role": "user", "content": "<system-reminder>\n" + "r" * 3000}])
    summary = _request(
        [
            {"role": "user", "content": [{"type": "text", "text": "x" * 3000}]},
            {"role": "system", "content": "a trailing note"},
        ]
    )
    assert not extract.is_summary_request(main)
    assert not extract.is_summary_request(reminder)
    assert extract.is_summary_request(summary)


def test_memory_block_is_cut_out_of_the_first_message():
    text = (
        "<system-reminder>\nIntro.\n\nContents of /c/projects/p/memory/MEMORY.md (an index):\n\n"
        "- [A](a.md) — one\r\n- [B](b.md)\n</system-reminder>\n"
    )
    request = _request([{"role": "user", "content": [{"type": "text", "text": text}]}])
    [block] = extract.memory_blocks(request)
    assert block.path == "/c/projects/p/memory/MEMORY.md"
    assert block.text == "- [A](a.md) — one\r\n- [B](b.md)"


def test_prompt_structure_is_counted_not_copied():
    text = "# Other\nx\n# Memory notes\nintro at `/m/dir/`\n## One\na 200 b\n## Two\nc\n# Next\n"
    section = extract.memory_prompt_section(text)
    shape = extract.prompt_shape(section, "/m/dir/").to_json()
    assert shape["sections"] == 2 and shape["names_memory_dir"] and shape["mentions_line_limit"]
    assert "text" not in shape and len(shape["sha256"]) == 64


def test_sanitised_transcripts_keep_structure_and_lengths_but_no_text():
    rows = [
        {
            "type": "user",
            "uuid": "u-1",
            "cwd": "/tmp/oracle-abc/project",
            "message": {
                "role": "user",
                "content": "A reminder written by someone else, with words.",
            },
        },
        {
            "type": "assistant",
            "message": {
                "model": "claude-x",
                "usage": {"input_tokens": 7},
                "content": [{"type": "text", "text": "Probing."}],
            },
        },
        {"type": "api-request-shape", "system": ["s" * 50_000]},
    ]
    out = sanitize_transcript(rows, "/tmp/oracle-abc")
    text = out[0]["message"]["content"]
    assert len(text) == len(rows[0]["message"]["content"]) and "reminder" not in text
    assert text.count(" ") == rows[0]["message"]["content"].count(" ")
    assert out[0]["cwd"] == "<sandbox>/project" and out[0]["uuid"] == "u-1"
    assert out[1]["message"]["content"][0]["text"] == "Probing."  # our own text stays
    assert out[1]["message"]["usage"] == {"input_tokens": 7}
    assert len(json.dumps(out[2])) < 3_000  # bookkeeping is cut down
    assert filler("ab cd\nef") == "or ac\nle"


def test_scrub_replaces_the_sandbox_and_its_sanitised_name():
    value = {"a": ["/tmp/oracle-x_1/p", "-tmp-oracle-x-1-p"]}
    assert scrub(value, "/tmp/oracle-x_1") == {"a": ["<sandbox>/p", "<sandbox-sanitized>-p"]}


def test_bisection_pins_every_change_of_every_rule():
    """A value that changes three times, and one that never changes, over 200 releases."""
    from oracle import bisect, rules

    versions = [f"2.1.{n}" for n in range(100, 300)]
    model_changes = {130: "b", 171: "c", 250: "d"}

    def model_at(n: int) -> str:
        return max(((k, v) for k, v in model_changes.items() if n >= k), default=(0, "a"))[1]

    probed: list[str] = []

    def fake_probe(version: str, names: set[str]) -> dict:
        probed.append(version)
        n = int(version.split(".")[-1])
        return {"basic": {"ran": True, "model": model_at(n), "index_has_cr": True}}

    chosen = {"default-model", "crlf-conversion"}
    findings = bisect.bisect(versions, only=chosen, log=lambda _m: None, probe_fn=fake_probe)
    model = findings["rules"]["default-model"]
    assert [(c["last_before"], c["first_after"], c["to"]) for c in model["changes"]] == [
        ("2.1.129", "2.1.130", "b"),
        ("2.1.170", "2.1.171", "c"),
        ("2.1.249", "2.1.250", "d"),
    ]
    assert model["exact"] and model["old_value"] == "a" and model["new_value"] == "d"
    assert findings["rules"]["crlf-conversion"]["changed"] is False
    assert len(set(probed)) < 40  # a bisection, not a sweep
    assert set(rules.RULES_BY_ID) >= chosen


def test_side_calls_are_left_to_the_default_answer():
    """A tool-less call (a small model's title or quota check) must not use up a probe."""
    search = FiringSearch(script=[5_000, 6_000])
    search.start_run()
    assert search.respond(_request([{"role": "user", "content": "t"}], tools=[])) is None
    reply = search.respond(_request([{"role": "user", "content": "go"}]))
    assert reply is not None and sum(reply.usage.values()) == 5_000
