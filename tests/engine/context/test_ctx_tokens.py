"""Claude Code's token estimates, exactly (spec 04 §10 and §9.10)."""

from __future__ import annotations

import math

import pytest

from workbench.devtools.synth import SessionBuilder
from workbench.engine.context.meter import ContextMeter
from workbench.engine.context.tokens import (
    api_messages,
    bytes_per_token_for_file_type,
    context_percentages,
    estimate_message_tokens,
    rough_token_count,
    rough_token_count_for_file_type,
    rough_tokens_for_block,
    rough_tokens_for_message,
    rough_tokens_for_messages,
    tiktoken_count,
    token_count_from_last_api_response,
    token_count_from_usage,
    token_count_with_estimation,
    token_usage,
)


def user(content):
    return {"type": "user", "message": {"role": "user", "content": content}}


def assistant(blocks, usage=None, message_id="msg_a", model="claude-sonnet-4-6"):
    inner = {"id": message_id, "model": model, "role": "assistant", "content": blocks}
    if usage is not None:
        inner["usage"] = usage
    return {"type": "assistant", "message": inner}


def usage(inp=0, create=0, read=0, out=0):
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": create,
        "cache_read_input_tokens": read,
        "output_tokens": out,
    }


# --- roughTokenCountEstimation --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 0),  # 0.25 → 0
        ("ab", 1),  # 0.5 → 1 (Math.round rounds half up; Python's round would give 0)
        ("abcdef", 2),  # 1.5 → 2
        ("abcdefghij", 3),  # 2.5 → 3 (Python: 2)
        ("x" * 4000, 1000),
        ("😀", 1),  # one code point, two UTF-16 units: 0.5 → 1
        ("😀😀😀😀", 2),  # 8 units
        ("é" * 4, 1),  # BMP: one unit each
    ],
)
def test_rough_token_count_uses_js_length_and_rounding(text: str, expected: int):
    assert rough_token_count(text) == expected


def test_json_files_count_two_bytes_per_token():
    assert bytes_per_token_for_file_type("json") == 2
    assert bytes_per_token_for_file_type(".JSONL") == 2
    assert bytes_per_token_for_file_type("jsonc") == 2
    assert bytes_per_token_for_file_type("py") == 4
    assert rough_token_count_for_file_type('{"a": 1}', "json") == 4
    assert rough_token_count_for_file_type('{"a": 1}', "md") == 2


def test_block_rules():
    assert rough_tokens_for_block({"type": "text", "text": "x" * 40}) == 10
    assert rough_tokens_for_block({"type": "image", "source": {"data": "A" * 99999}}) == 2000
    assert rough_tokens_for_block({"type": "document", "source": {}}) == 2000
    assert rough_tokens_for_block({"type": "thinking", "thinking": "y" * 8}) == 2
    assert rough_tokens_for_block({"type": "redacted_thinking", "data": "z" * 12}) == 3
    # tool_use: name + JSON.stringify(input) with compact separators
    block = {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls -la"}}
    assert rough_tokens_for_block(block) == round(len('Bash{"command":"ls -la"}') / 4)
    # tool_result recurses into its content, string or list
    assert rough_tokens_for_block({"type": "tool_result", "content": "q" * 20}) == 5
    nested = {
        "type": "tool_result",
        "content": [{"type": "text", "text": "q" * 20}, {"type": "image", "source": {}}],
    }
    assert rough_tokens_for_block(nested) == 2005
    other = {"type": "server_tool_use", "id": "s"}
    assert rough_tokens_for_block(other) == round(len('{"type":"server_tool_use","id":"s"}') / 4)


def test_blocks_are_rounded_one_by_one():
    # Two 2-unit texts: 0.5 + 0.5 rounded separately is 2; rounding the sum would give 1.
    message = user([{"type": "text", "text": "ab"}, {"type": "text", "text": "cd"}])
    assert rough_tokens_for_message(message) == 2


def test_message_types_other_than_user_assistant_attachment_count_zero():
    assert rough_tokens_for_message({"type": "system", "content": "x" * 400}) == 0
    assert rough_tokens_for_message({"type": "progress", "data": {"x": "y" * 400}}) == 0
    hook = {
        "type": "attachment",
        "attachment": {"type": "hook_additional_context", "content": ["z" * 40]},
    }
    assert rough_tokens_for_message(hook) == 10
    assert (
        rough_tokens_for_message({"type": "attachment", "attachment": {"type": "hook_success"}})
        == 0
    )


# --- estimateMessageTokens ------------------------------------------------------------------


def test_estimate_message_tokens_pads_by_four_thirds_and_rounds_up():
    message = user([{"type": "text", "text": "x" * 400}])  # 100
    assert estimate_message_tokens([message]) == math.ceil(100 * 4 / 3) == 134


def test_estimate_message_tokens_string_content_quirk():
    # A plain-string user message (typed prompt, compact summary) counts nothing at all.
    assert estimate_message_tokens([user("x" * 4000)]) == 0
    assert rough_tokens_for_messages([user("x" * 4000)]) == 1000


def test_estimate_message_tokens_tool_result_items():
    result = {
        "type": "tool_result",
        "content": [
            {"type": "text", "text": "x" * 40},
            {"type": "image", "source": {}},
            {"type": "other", "x": "ignored"},
        ],
    }
    assert estimate_message_tokens([user([result])]) == math.ceil((10 + 2000) * 4 / 3)


def test_estimate_message_tokens_ignores_other_types():
    assert estimate_message_tokens([{"type": "system", "content": "x" * 40}]) == 0


# --- usage ----------------------------------------------------------------------------------


def test_usage_total_and_missing_cache_fields():
    assert token_count_from_usage(usage(1, 1484, 163346, 1)) == 164832
    assert token_count_from_usage({"input_tokens": 5, "output_tokens": 7}) == 12


def test_synthetic_messages_have_no_usage():
    real = assistant([{"type": "text", "text": "hi"}], usage(1, 2, 3, 4))
    assert token_usage(real) is not None
    by_model = assistant([{"type": "text", "text": "hi"}], usage(1, 2, 3, 4), model="<synthetic>")
    assert token_usage(by_model) is None
    by_text = assistant([{"type": "text", "text": "No response requested."}], usage(9, 9, 9, 9))
    assert token_usage(by_text) is None


def test_token_count_with_estimation_no_usage_anywhere():
    messages = [user("x" * 400), user([{"type": "text", "text": "y" * 40}])]
    assert token_count_with_estimation(messages) == 110


def test_token_count_with_estimation_adds_messages_after_usage():
    messages = [
        user("x" * 400),
        assistant([{"type": "text", "text": "ok"}], usage(10, 20, 30, 40), "m1"),
        user("y" * 400),
    ]
    assert token_count_with_estimation(messages) == 100 + 100


def test_token_count_with_estimation_walks_back_over_split_records():
    tool_a = {"type": "tool_use", "id": "a", "name": "Read", "input": {"file_path": "/x"}}
    tool_b = {"type": "tool_use", "id": "b", "name": "Read", "input": {"file_path": "/y"}}
    result = user([{"type": "tool_result", "tool_use_id": "a", "content": "r" * 400}])
    messages = [
        user("start"),
        assistant([{"type": "text", "text": "t" * 40}], usage(1, 2, 1000, 1), "m1"),
        assistant([tool_a], usage(1, 2, 1000, 1), "m1"),
        result,
        assistant([tool_b], usage(1, 2, 1000, 50), "m1"),
    ]
    # Anchor at the first record: the later records and the interleaved result are estimated.
    expected = 1053 + rough_tokens_for_messages(messages[2:])
    assert token_count_with_estimation(messages) == expected
    assert token_count_from_last_api_response(messages) == 1053


def test_walk_back_stops_at_a_different_response():
    messages = [
        assistant([{"type": "text", "text": "a" * 400}], usage(0, 0, 500, 5), "m1"),
        user("u" * 40),
        assistant([{"type": "text", "text": "b" * 400}], usage(0, 0, 700, 9), "m2"),
    ]
    assert token_count_with_estimation(messages) == 709


def test_synthetic_messages_are_skipped_as_anchors_but_estimated():
    messages = [
        assistant([{"type": "text", "text": "a"}], usage(0, 0, 500, 5), "m1"),
        assistant([{"type": "text", "text": "x" * 80}], usage(0, 0, 0, 0), "syn", "<synthetic>"),
    ]
    assert token_count_with_estimation(messages) == 505 + 20


def test_context_percentages_for_the_status_line():
    assert context_percentages(usage(1, 1484, 163346, 999), 200_000) == (82, 18)
    assert context_percentages(usage(0, 0, 500_000, 0), 200_000) == (100, 0)


# --- the incremental meter agrees with the full computation ----------------------------------


def _session(seed: int) -> list[dict]:
    b = SessionBuilder(seed=seed)
    b.prompt("Fix the flaky checkout test")
    b.tool_call("Read", {"file_path": "/repo/tests/test_checkout.py"}, "1\tdef test():\n" * 50)
    b.tool_call("Bash", {"command": "pytest -q"}, "3 passed", thinking="run the tests")
    b.synthetic("[Request interrupted by user]")
    b.prompt("continue")
    b.assistant(
        [
            {"type": "text", "text": "Two reads in parallel."},
            {"type": "tool_use", "id": "p1", "name": "Read", "input": {"file_path": "/a"}},
            {"type": "tool_use", "id": "p2", "name": "Read", "input": {"file_path": "/b"}},
        ]
    )
    b.tool_result("p1", "a" * 900)
    b.tool_result("p2", "b" * 700)
    b.compact("Summary of the work so far.")
    b.prompt("next step")
    b.reply("Done.")
    b.user("and one more " * 30)
    return b.entries


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_meter_matches_token_count_with_estimation_at_every_step(seed: int):
    entries = [e for e in _session(seed) if e["type"] in ("user", "assistant", "system")]
    meter = ContextMeter()
    start = 0
    for index, entry in enumerate(entries):
        meter.add(entry)
        if entry.get("subtype") == "compact_boundary":
            start = index
        assert meter.count == token_count_with_estimation(entries[start : index + 1])


# --- measured counts ------------------------------------------------------------------------


def test_tiktoken_count_works_offline():
    assert tiktoken_count("hello world") == 2
    assert tiktoken_count("") == 0


def test_api_messages_merge_roles_and_drop_signed_thinking():
    messages = [
        user("hi"),
        assistant([{"type": "thinking", "thinking": "hmm", "signature": "s"}], None, "m"),
        assistant([{"type": "text", "text": "hello"}], None, "m"),
        user([{"type": "tool_result", "tool_use_id": "t", "content": "x"}]),
    ]
    out = api_messages(messages)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert out[1]["content"] == [{"type": "text", "text": "hmm"}, {"type": "text", "text": "hello"}]
