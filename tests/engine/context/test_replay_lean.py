"""The replay's lean line reader against the full parser: the same facts for every line.

`lean_meter_line` decodes only the fields the meter reads; `parse_line` + `meter_line` is
the tolerant full parse every other view uses. Any divergence between the two would change
a replay's figures, so they are compared line by line on transcripts holding every record
kind and every kind of bad line, and on generated lines of every shape.
"""

from __future__ import annotations

import json
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.devtools.synth import SessionBuilder
from workbench.engine.context.jsonl import parse_line
from workbench.engine.context.meter_lines import lean_meter_line, meter_line
from workbench.engine.context.replay import replay_file, replay_rows
from workbench.engine.context.thresholds import compute_thresholds
from workbench.engine.context.tokens import js_json, js_json_len, rough_tokens_for_message
from workbench.engine.context.transcript import MESSAGE_TYPES
from workbench.engine.jsutil import js_len


def ladder(model: str | None):
    return compute_thresholds(model or "claude-sonnet-4-6", env={})


def full_facts(line: bytes, number: int) -> dict | None:
    """What the full parser makes of a line (None: not a message line)."""
    raw = parse_line(line)
    if raw is None or not isinstance(raw.get("type"), str) or raw["type"] not in MESSAGE_TYPES:
        return None
    return _comparable(meter_line(raw, number).to_json())


def lean_facts(line: bytes, number: int) -> dict | None:
    row = lean_meter_line(line, number)
    return None if row is None else _comparable(row.to_json())


def _comparable(facts: dict) -> dict:
    # repr tells NaN from NaN as equal, and 0 from 0.0 and -0.0 as different.
    return {**facts, "usage": repr(facts["usage"])}


def _dump(entry: object, **options: object) -> bytes:
    return json.dumps(entry, **options).encode("utf-8", errors="surrogatepass")


def every_kind_lines() -> list[bytes]:
    """A session with every record kind Claude Code writes, plus lines it never should."""
    b = SessionBuilder(seed=3, version="2.1.332")
    b.prompt("Make the export faster — ünïcödé, 日本語, emoji 🎉")
    b.tool_call("Read", {"file_path": "/repo/a.py", "limit": 2000}, "x = 1\n" * 300)
    b.tool_call(
        "Edit",
        {"file_path": "/repo/a.py", "old_string": "x → y 🎉", "new_string": "é\u2028\t\x01"},
        "ok",
        tool_use_result={"filePath": "/repo/a.py", "structuredPatch": [{"lines": ["-a", "+b"]}]},
    )
    b.tool_call("Bash", {"command": "sleep 1", "timeout": 1.5, "big": 10**30}, "done")
    b.tool_call(
        "WebFetch",
        {"url": "https://example.invalid", "ratio": 1e16},
        [{"type": "text", "text": "page"}],
    )
    b.reply("Done.", thinking="think about it 🤔")
    b.synthetic()
    b.synthetic("[Request interrupted by user]")
    b.system("turn_duration", durationMs=1200)
    b.system("stop_hook_summary", hookCount=2)
    b.sidechain = True
    b.user("a subagent's prompt " * 20)
    b.reply("subagent answer")
    b.sidechain = False
    b.compact("Summary so far.", pre_tokens=167_500)
    b.user("<command-name>/compact</command-name>\n<command-args>keep tests</command-args>")
    b.prompt("carry on")
    b.reply("continuing")
    b.compact(
        "Second summary.",
        trigger="manual",
        preserved_segment={"headUuid": "h", "anchorUuid": "a", "tailUuid": "t"},
    )
    b.user([{"type": "text", "text": "<command-name>/compact</command-name>"}])
    b.compact("Third summary.", trigger="auto", pre_tokens=None)
    b.entries[-2]["compactMetadata"]["preTokens"] = 12.0  # a float count is no count
    b.metadata("summary", summary="the export", leafUuid="nowhere")
    b.metadata("custom-title", customTitle="Export")
    b.metadata("queue-operation", operation="enqueue", content="later")
    lines = [_dump(e, separators=(",", ":"), ensure_ascii=False) for e in b.entries]
    base = {
        "parentUuid": None,
        "isSidechain": False,
        "sessionId": b.session_id,
        "timestamp": "2026-02-10T09:30:00.000Z",
    }

    def add(entry: dict, **options: object) -> None:
        lines.append(_dump({**base, **entry}, **(options or {"separators": (",", ":")})))

    # Attachments, counted by kind (prompt_snapshot is bookkeeping), with and without `rendered`.
    for number, attachment in enumerate(
        [
            {"type": "prompt_snapshot", "content": "the whole prompt again " * 100},
            {"type": "total_tokens_reminder", "used": 1000},
            {
                "type": "file",
                "filename": "/a.py",
                "content": {"type": "text", "file": {"content": "x\n" * 50}},
            },
            {
                "type": "relevant_memories",
                "memories": [{"header": "h", "content": "c" * 40}, "junk"],
            },
            {"type": "hook_additional_context", "content": ["one", "two", 3]},
            {"type": "queued_command", "prompt": [{"text": "do it"}, "junk"]},
            {"type": "invoked_skills", "skills": [{"content": "skill body"}]},
            {"type": "hook_success", "content": "ok"},
            {"type": "environment", "ratio": 0.25, "when": 1e21},
            {"type": "date_change", "newDate": "2026-02-11"},
            "not an object",
            None,
        ]
    ):
        add({"type": "attachment", "attachment": attachment, "uuid": f"att-{number}"})
    add(
        {
            "type": "attachment",
            "attachment": {"type": "total_tokens_reminder"},
            "rendered": [{"content": "You have used 1000 tokens."}, {"content": 5}, "junk"],
            "uuid": "att-rendered",
        }
    )
    # Records that are not messages, from the newest release.
    for kind in (
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "cost-state",
        "tools-used",
        "progress",
    ):
        add(
            {
                "type": kind,
                "uuid": f"rec-{kind}",
                "message": {"content": "not counted"},
                "data": {"x": [1, 2]},
            }
        )
    # Assistants of every block kind, known and unknown, in odd shapes.
    usage = {
        "input_tokens": 3,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 150_000,
        "output_tokens": 40,
    }
    for number, blocks in enumerate(
        [
            [{"type": "text", "text": "plain"}],
            [{"type": "text", "text": ["a", "list"]}],
            [{"type": "text"}],
            [{"type": "redacted_thinking", "data": "abc" * 30}],
            [{"type": "image", "source": {"type": "base64", "data": "AAAA"}}],
            [{"type": "document", "source": {}}],
            [{"type": "server_tool_use", "id": "s", "name": "web_search", "input": {"q": "x"}}],
            [{"type": "web_search_tool_result", "content": [{"url": "u"}]}],
            [{"no_type": True}],
            ["a bare string block"],
            [{"type": "tool_use", "name": None, "input": None}],
            [{"type": "tool_use", "name": 7, "input": [1, 2.5, {"k": "ü"}]}],
            [],
            "string content",
            {"content": "a dict is no content"},
            None,
        ]
    ):
        add(
            {
                "type": "assistant",
                "uuid": f"asst-{number}",
                "message": {
                    "id": f"msg_{number}",
                    "model": "claude-sonnet-4-6",
                    "content": blocks,
                    "usage": usage,
                },
            }
        )
    # Odd shapes of the fields the meter reads.
    add(
        {
            "type": "assistant",
            "uuid": "no-usage",
            "message": {"id": "msg_x", "content": "x", "usage": "none"},
        }
    )
    add({"type": "assistant", "uuid": "msg-null", "message": None})
    add({"type": "assistant", "uuid": "msg-str", "message": "hello"})
    add(
        {
            "type": "assistant",
            "uuid": "bool-usage",
            "message": {
                "id": "msg_b",
                "content": "x",
                "usage": {"input_tokens": True, "output_tokens": 2.5},
            },
        }
    )
    add(
        {
            "type": "assistant",
            "uuid": "id-int",
            "message": {"id": 5, "model": 6, "content": "x", "usage": usage},
        }
    )
    add(
        {
            "type": "user",
            "uuid": 17,
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "content": [{"type": "text", "text": "t"}, {"type": "image"}, "s"],
                    }
                ]
            },
        }
    )
    add({"type": "user", "uuid": "tr-none", "message": {"content": [{"type": "tool_result"}]}})
    add({"type": "user", "uuid": "side-str", "isSidechain": "true", "message": {"content": "x"}})
    add(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "cb-odd",
            "compactMetadata": "none",
        }
    )
    add(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "cb-bool",
            "compactMetadata": {"trigger": 5, "preTokens": True},
        }
    )
    add({"type": "system", "subtype": ["compact_boundary"], "uuid": "cb-list"})
    add({"type": ["user"], "uuid": "type-list"})
    add({"type": 5, "uuid": "type-int"})
    # The same message written another way: spaces, ASCII escapes, duplicate keys.
    add({"type": "user", "uuid": "spaced", "message": {"content": "ünï 🎉"}}, ensure_ascii=True)
    add(
        {
            "type": "assistant",
            "uuid": "spaced-a",
            "message": {
                "id": "m_s",
                "content": [{"type": "tool_use", "name": "T", "input": {"a": "é", "n": [1, 2]}}],
                "usage": usage,
            },
        },
        separators=(", ", ": "),
    )
    lines.append(
        b'{"type":"user","uuid":"dup","message":{"content":"first"},"message":{"content":"second one"}}'
    )
    lines.append(b'{"type":"user","uuid":"dup-type","type":"progress","message":{"content":"x"}}')
    # Bad lines: broken JSON, bad UTF-8, lone surrogates, NaN, not an object, deep nesting.
    lines += [
        b"{broken",
        b"",
        b"   ",
        b"[1, 2, 3]",
        b'"a string"',
        b'{"type":"user","uuid":"bad-utf8","message":{"content":"caf\xe9 \xff"}}',
        b'{"type":"user","uuid":"bad-utf8-elsewhere","cwd":"\xff\xfe","message":{"content":"fine"}}',
        b'{"type":"user","uuid":"lone","message":{"content":"half \\ud83d pair"}}',
        b'{"type":"assistant","uuid":"nan","message":{"id":"m_nan","content":"x","usage":{"input_tokens":NaN}}}',
        b'{"type":"user","uuid":"inf","message":{"content":[{"type":"tool_use","name":"T","input":{"x":1e400}}]}}',
        b'{"type":"user","uuid":"trailing","message":{"content":"x"}} junk',
        b'\xef\xbb\xbf{"type":"user","uuid":"bom","message":{"content":"x"}}',
        b'{"type":"user","uuid":"deep","message":{"content":"x"},"toolUseResult":'
        + b"[" * 300
        + b"]" * 300
        + b"}",
        b'{"type":"user","uuid":"ctrl","message":{"content":"a\tb"}}',
        b'{"type":"user","uuid":"esc","message":{"content":"\\u00e9\\n\\"\\\\\\/\\ud83c\\udf89"}}',
    ]
    # A uuid seen again (the replay keeps the first) and a half-written last line.
    lines.append(lines[3])
    lines.append(b'{"type":"assistant","uuid":"half","message":{"id":"m_h","cont')
    return lines


def test_the_lean_reader_gives_the_full_parsers_facts_for_every_line():
    lines = every_kind_lines()
    kinds = set()
    for number, line in enumerate(lines, 1):
        full = full_facts(line, number)
        assert lean_facts(line, number) == full, (number, line[:200])
        kinds.add(None if full is None else full["kind"])
    assert kinds == {None, "user", "assistant", "system", "attachment"}


def test_the_lean_reader_and_the_full_parser_replay_alike(tmp_path):
    # Through the whole replay too: turns, thresholds crossed, compactions, the final count.
    lines = every_kind_lines()
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    streamed = replay_file(path, thresholds_for=ladder, default_model="claude-sonnet-4-6")
    seen: set[str] = set()
    rows = []
    for number, line in enumerate(lines, 1):
        raw = parse_line(line)
        if raw is None or not isinstance(raw.get("type"), str) or raw["type"] not in MESSAGE_TYPES:
            continue
        uuid = raw.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue
            seen.add(uuid)
        if raw.get("isSidechain") is not True:
            rows.append((number, raw))
    full = replay_rows(
        rows, thresholds_for=ladder, default_model="claude-sonnet-4-6", transcript=str(path)
    )
    assert streamed.to_json() == full.to_json()
    assert streamed.turns
    assert [c.trigger for c in streamed.compactions] == ["auto", "manual", "auto", None, None]
    # The /compact typed after the first and second summaries is seen by both readers.
    assert ["/compact" in c.note for c in streamed.compactions] == [True, True, False, False, False]


def test_an_oddly_shaped_line_no_longer_stops_the_replay(tmp_path):
    # A text block holding a list where a synthetic message is looked for, and a type that
    # is a list: both stopped the replay with an internal error.
    path = tmp_path / "s.jsonl"
    usage = {"input_tokens": 5, "output_tokens": 1}
    path.write_text(
        json.dumps({"type": ["user"], "uuid": "t"})
        + "\n"
        + json.dumps(
            {
                "type": "assistant",
                "uuid": "a",
                "message": {
                    "id": "m1",
                    "content": [{"type": "text", "text": ["a"]}],
                    "usage": usage,
                },
            }
        )
        + "\n"
    )
    report = replay_file(
        path, thresholds_for=ladder, default_model="claude-sonnet-4-6", claude=None
    )
    assert [t.context_tokens for t in report.turns] == [5]


_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"])
    | st.sampled_from('\ud800\udfff\u2028\x00\n"\\'),
    max_size=12,
)
_SCALAR = (
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | _TEXT
)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_BLOCK_KIND = (
    st.sampled_from(
        [
            "text",
            "tool_result",
            "tool_use",
            "thinking",
            "image",
            "document",
            "redacted_thinking",
            "server_tool_use",
        ]
    )
    | _SCALAR
)
_BLOCK = (
    st.fixed_dictionaries(
        {"type": _BLOCK_KIND},
        optional={
            "text": _JSON,
            "content": _JSON,
            "name": _JSON,
            "input": _JSON,
            "thinking": _JSON,
            "data": _JSON,
        },
    )
    | _SCALAR
)
_MESSAGE = st.fixed_dictionaries(
    {},
    optional={
        "id": _JSON,
        "model": st.sampled_from(["<synthetic>", "claude-opus-4-6"]) | _JSON,
        "usage": st.dictionaries(
            st.sampled_from(["input_tokens", "output_tokens", "cache_read_input_tokens"]), _SCALAR
        )
        | _JSON,
        "content": _TEXT | st.lists(_BLOCK, max_size=4) | _JSON,
    },
)
_ATTACHMENT = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["file", "prompt_snapshot", "hook_success", "queued_command", "date"]
        )
        | _SCALAR
    },
    optional={"content": _JSON, "prompt": _JSON, "memories": _JSON},
)
_LINE = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system", "attachment", "progress"]) | _SCALAR},
    optional={
        "subtype": st.just("compact_boundary") | _SCALAR,
        "isSidechain": _SCALAR,
        "uuid": _JSON,
        "timestamp": _JSON,
        "message": _MESSAGE | _JSON,
        "attachment": _ATTACHMENT | _JSON,
        "rendered": st.lists(st.fixed_dictionaries({"content": _JSON}) | _SCALAR, max_size=2)
        | _JSON,
        "compactMetadata": st.fixed_dictionaries(
            {}, optional={"trigger": _JSON, "preTokens": _SCALAR}
        )
        | _JSON,
        "toolUseResult": _JSON,
    },
)


@settings(max_examples=400, deadline=None)
@given(_LINE, st.booleans(), st.booleans())
def test_the_lean_reader_agrees_on_generated_lines(entry, ascii_only, spaced):
    separators = (", ", ": ") if spaced else (",", ":")
    line = _dump(entry, ensure_ascii=ascii_only, separators=separators)
    assert lean_facts(line, 1) == full_facts(line, 1)


def test_msgspec_writes_strings_as_js_json_does():
    # The premise of js_json_len: every code point outside the surrogates is escaped alike.
    text = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    assert js_json_len(text) == js_len(js_json(text))
    assert js_json_len({"k": [text, 1, True, None]}) == js_len(
        js_json({"k": [text, 1, True, None]})
    )


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_js_json_len_is_the_length_of_js_json(value):
    assert js_json_len(value) == js_len(js_json(value))


def test_a_tool_use_counts_its_json_as_before():
    for tool_input in (
        {"timeout": 1e16},
        {"a": "\ud800"},
        {"s": {1, 2}},
        {1: "int key"},
        None,
        "text",
    ):
        block = {"type": "tool_use", "name": "T", "input": tool_input}
        raw = {"type": "assistant", "message": {"content": [block]}}
        text = "T" + js_json({} if tool_input is None else tool_input)
        assert rough_tokens_for_message(raw) == (js_len(text) + 2) // 4, tool_input


def test_lines_as_claude_code_writes_them_need_no_full_parse(tmp_path, monkeypatch):
    # The lean decoder must take the common shapes itself, or the replay is no faster.
    import workbench.engine.context.meter_lines as lean

    def refuse(line: bytes) -> None:
        raise AssertionError(f"fell back to the full parse: {line[:120]!r}")

    monkeypatch.setattr(lean, "parse_line", refuse)
    b = SessionBuilder(seed=5)
    b.prompt("Speed up the export — ü 🎉")
    b.tool_call("Read", {"file_path": "/repo/a.py"}, "x = 1\n" * 50, thinking="look first")
    b.tool_call("Grep", {"pattern": "def "}, [{"type": "text", "text": "a.py:1"}])
    b.reply("Done.", thinking="check")
    b.synthetic()
    b.compact("Summary.")
    b.reply("after")
    b.progress()
    path = b.write(tmp_path / "s.jsonl")
    report = replay_file(path, thresholds_for=ladder, default_model="claude-sonnet-4-6")
    assert len(report.turns) == 4 and len(report.compactions) == 1


def test_the_meter_counts_a_lean_line_as_it_counts_the_parsed_line():
    from workbench.engine.context.meter import ContextMeter

    for sidechain in (False, True):
        by_dict, by_line = ContextMeter(sidechain=sidechain), ContextMeter(sidechain=sidechain)
        for number, line in enumerate(every_kind_lines(), 1):
            raw = parse_line(line)
            if raw is None:
                continue
            by_dict.add(raw)
            by_line.add_line(meter_line(raw, number))
            state = [(m.count, m.padded_count, m.method, m.messages) for m in (by_dict, by_line)]
            assert state[0] == state[1], (number, line[:120])


def test_the_lean_reader_agrees_on_the_real_transcripts(shared_transcripts):
    paths = sorted(shared_transcripts.rglob("*.jsonl"))
    assert paths
    for path in paths:
        for number, line in enumerate(path.read_bytes().split(b"\n"), 1):
            assert lean_facts(line, number) == full_facts(line, number), (path.name, number)
