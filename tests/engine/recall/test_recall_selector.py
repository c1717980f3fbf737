"""The model selector's request and the checks on its answer (spec 02 §3.3)."""

from __future__ import annotations

import json

import pytest

from workbench.engine.recall.selector import (
    SELECT_MEMORIES_SYSTEM_PROMPT,
    SELECTION_SCHEMA,
    build_selector_request,
    parse_selection,
    selector_user_message,
)

NAMES = ["a.md", "team/b.md", "c.md", "d.md", "e.md", "f.md", "g.md"]


def test_request_matches_claude_codes_selector():
    body = build_selector_request("fix the build", "- a.md (iso): x", model="claude-sonnet-4-6")
    assert body["model"] == "claude-sonnet-4-6"
    assert body["max_tokens"] == 256
    assert body["system"] == SELECT_MEMORIES_SYSTEM_PROMPT
    assert body["messages"] == [
        {"role": "user", "content": "Query: fix the build\n\nAvailable memories:\n- a.md (iso): x"}
    ]
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SELECTION_SCHEMA}}
    assert SELECTION_SCHEMA == {
        "type": "object",
        "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
        "required": ["selected_memories"],
        "additionalProperties": False,
    }
    assert "stream" not in body and "tools" not in body


def test_recent_tools_line_only_when_tools_were_used():
    assert selector_user_message("q", "m") == "Query: q\n\nAvailable memories:\nm"
    assert selector_user_message("q", "m", ["Bash", "Grep"]).endswith(
        "\n\nRecently used tools: Bash, Grep"
    )


def test_system_prompt_carries_the_rules_in_our_words():
    text = SELECT_MEMORIES_SYSTEM_PROMPT
    assert "at most 5" in text and "clearly be useful" in text
    assert "empty list" in text and "not sure" in text
    assert "recently used tools" in text and "warnings, gotchas or known problems" in text


def test_unknown_names_are_dropped_and_order_kept():
    parsed = parse_selection(
        json.dumps({"selected_memories": ["c.md", "nope.md", "../etc/passwd", "team/b.md"]}),
        NAMES,
    )
    assert parsed.accepted == ("c.md", "team/b.md")
    assert parsed.unknown == ("nope.md", "../etc/passwd")
    assert parsed.problem is None


def test_at_most_five_and_no_repeats():
    parsed = parse_selection(json.dumps({"selected_memories": NAMES + ["a.md"]}), NAMES)
    assert parsed.accepted == tuple(NAMES[:5])
    assert parsed.over_limit == ("f.md", "g.md")


@pytest.mark.parametrize(
    "text",
    [None, "", "not json", "[1, 2]", '{"selected": ["a.md"]}', '{"selected_memories": "a.md"}'],
)
def test_malformed_answers_mean_no_memories(text):
    parsed = parse_selection(text, NAMES)
    assert parsed.accepted == () and parsed.problem


def test_non_string_names_are_reported_not_crashed():
    parsed = parse_selection('{"selected_memories": [1, {"x": 2}, "a.md"]}', NAMES)
    assert parsed.accepted == ("a.md",) and parsed.unknown == ("1", '{"x": 2}')
