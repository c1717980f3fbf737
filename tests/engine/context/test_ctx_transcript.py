"""The lenient transcript reader: entry types, bad input, streaming splits, sidechains,
boundaries and preserved segments."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workbench.devtools.synth import SessionBuilder
from workbench.engine.context.session_list import list_sessions, session_info
from workbench.engine.context.tokens import token_count_with_estimation
from workbench.engine.context.transcript import Transcript, parse_entries
from workbench.engine.errors import NotFoundError, UserInputError


def _write(path: Path, rows: list[dict] | bytes) -> Path:
    if isinstance(rows, bytes):
        path.write_bytes(rows)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _basic_session(seed: int = 0) -> SessionBuilder:
    b = SessionBuilder(seed=seed)
    b.prompt("Add retries to the payment client")
    b.tool_call("Read", {"file_path": "/repo/src/pay.py"}, "1\timport httpx\n" * 40)
    b.tool_call(
        "Edit", {"file_path": "/repo/src/pay.py", "old_string": "a", "new_string": "b"}, "ok"
    )
    b.reply("Retries added.")
    return b


# --- bad input ------------------------------------------------------------------------------


def test_empty_file(tmp_path):
    t = Transcript.load(_write(tmp_path / "s.jsonl", b""))
    assert t.entries == [] and t.messages == [] and t.stats.broken_lines == 0
    assert t.context_tokens() == 0 and t.model is None and t.title is None


def test_truncated_last_line_is_normal_not_broken(tmp_path):
    data = _basic_session().to_bytes()
    cut = data[: len(data) - 40]  # the last line is half-written, no newline
    t = Transcript.load(_write(tmp_path / "s.jsonl", cut))
    assert t.stats.truncated_tail and t.stats.broken_lines == 0
    assert len(t.entries) == len(_basic_session().entries) - 1


def test_broken_lines_are_counted_with_their_numbers(tmp_path):
    lines = _basic_session().to_bytes().split(b"\n")
    lines.insert(2, b"{not json at all")
    lines.insert(4, b"[1, 2, 3]")  # JSON, but not an object
    t = Transcript.load(_write(tmp_path / "s.jsonl", b"\n".join(lines)))
    assert t.stats.broken_lines == 2 and t.stats.broken_line_numbers == (3, 5)
    assert any("not JSON objects" in p for p in t.stats.problems)


def test_binary_garbage(tmp_path):
    garbage = bytes(range(256)) * 64 + b"\n\x00\xff\xfe\n" + os.urandom(2048)
    t = Transcript.load(_write(tmp_path / "s.jsonl", garbage))
    assert t.entries == [] and t.stats.broken_lines >= 1
    assert t.context_tokens() == 0


def test_non_utf8_bytes_inside_a_line_are_replaced(tmp_path):
    row = b'{"type":"user","uuid":"u1","message":{"role":"user","content":"caf\xe9"}}\n'
    t = Transcript.load(_write(tmp_path / "s.jsonl", row))
    assert t.messages[0].content == "caf\ufffd"


def test_lone_surrogate_escape_is_accepted(tmp_path):
    row = b'{"type":"user","uuid":"u1","message":{"role":"user","content":"x\\ud800y"}}\n'
    t = Transcript.load(_write(tmp_path / "s.jsonl", row))
    assert len(t.messages) == 1


def test_a_50_mb_single_line(tmp_path):
    big = "x" * (50 * 1024 * 1024)
    row = {"type": "user", "uuid": "u", "message": {"role": "user", "content": big}}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(row), encoding="utf-8")  # no trailing newline either
    t = Transcript.load(path)
    assert len(t.messages) == 1 and t.context_tokens() == 13_107_200


def test_a_50_mb_single_broken_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"user","message":"' + b"y" * (50 * 1024 * 1024) + b"\n")
    t = Transcript.load(path)
    assert t.entries == [] and t.stats.broken_lines == 1


def test_deeply_nested_json_is_broken_not_a_crash(tmp_path):
    t = Transcript.load(_write(tmp_path / "s.jsonl", b"[" * 100_000 + b"\n"))
    assert t.stats.broken_lines == 1


def test_unknown_types_are_counted(tmp_path):
    rows = [{"type": "shiny-new-thing", "x": 1}, {"no_type": True}, {"type": "summary"}]
    t = Transcript.load(_write(tmp_path / "s.jsonl", rows))
    assert t.stats.unknown_types == {"shiny-new-thing": 1, "<none>": 1}
    assert len(t.entries) == 3 and t.messages == []


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(NotFoundError):
        Transcript.load(tmp_path / "nope.jsonl")
    with pytest.raises(UserInputError):
        Transcript.load(tmp_path)


def test_max_bytes_reads_the_newest_part_from_a_line_start(tmp_path):
    path = _basic_session().write(tmp_path / "s.jsonl")
    t = Transcript.load(path, max_bytes=3000)
    assert t.stats.skipped_bytes > 0 and t.stats.broken_lines == 0
    assert t.entries and t.entries[-1].raw == json.loads(path.read_text().splitlines()[-1])


# --- conversation rules ---------------------------------------------------------------------


def test_streaming_records_merge_into_one_response_with_max_output():
    b = SessionBuilder(seed=3)
    b.prompt("go")
    records = b.assistant(
        [
            {"type": "thinking", "thinking": "plan", "signature": "s"},
            {"type": "text", "text": "Reading two files."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}},
        ],
        output_tokens=321,
    )
    t = Transcript.from_dicts(b.entries)
    responses = t.responses()
    assert len(responses) == 1 and responses[0].records == 3
    assert responses[0].output_tokens == 321  # early records carry the placeholder 1
    assert records[0]["message"]["usage"]["output_tokens"] == 1


def test_sidechains_are_excluded_from_the_main_chain():
    b = _basic_session()
    b.sidechain = True
    b.user("subagent prompt " * 100)
    b.reply("subagent answer")
    b.sidechain = False
    b.reply("main answer")
    t = Transcript.from_dicts(b.entries)
    assert len(t.sidechain_messages) == 2
    assert all(not e.is_sidechain for e in t.messages)
    assert len(t.responses(sidechain=True)) == 1


def test_subagent_transcript_uses_its_own_chain():
    b = SessionBuilder(seed=5)
    b.sidechain = True
    b.prompt("look around")
    b.reply("done")
    t = Transcript.from_dicts(b.entries)
    assert t.is_subagent and len(t.messages) == 2 and t.context_tokens() > 0


def test_resumed_copies_are_deduplicated_by_uuid():
    b = _basic_session()
    entries = b.entries + [dict(b.entries[1])]
    t = Transcript.from_dicts(entries)
    assert t.duplicate_uuids == 1


def test_compact_boundary_and_messages_after_the_last_one():
    b = _basic_session()
    b.compact("Summary one.", pre_tokens=150_000)
    b.prompt("second part")
    b.reply("ok")
    b.compact("Summary two.", trigger="manual", pre_tokens=60_000)
    b.prompt("third part")
    t = Transcript.from_dicts(b.entries)
    assert [(c.trigger, c.pre_tokens) for c in t.compactions] == [
        ("auto", 150_000),
        ("manual", 60_000),
    ]
    assert all(c.summary_uuid for c in t.compactions)
    current = t.current_messages()
    assert current[0].is_compact_boundary and current[1].is_compact_summary
    assert current[-1].content == "third part"
    # No usage after the boundary: the rough estimate of everything after it.
    assert t.context_tokens() == token_count_with_estimation(current)


def _preserved_session(break_chain: bool = False) -> tuple[Transcript, list[str]]:
    b = SessionBuilder(seed=9)
    b.prompt("first")
    b.reply("old reply " * 50)
    b.prompt("keep me")
    head = b.entries[-1]["uuid"]
    kept = b.reply("kept reply " * 50)
    tail = kept[-1]["uuid"]
    if break_chain:
        kept[-1]["parentUuid"] = "missing-parent"
    boundary, summary = b.compact("Notes as summary.", pre_tokens=90_000)
    boundary["compactMetadata"]["preservedSegment"] = {
        "headUuid": head,
        "anchorUuid": summary["uuid"],
        "tailUuid": tail,
    }
    b.prompt("after compaction")
    return Transcript.from_dicts(b.entries), [head, tail]


def test_live_preserved_segment_is_relinked_after_the_summary_with_usage_zeroed():
    t, (head, tail) = _preserved_session()
    assert t.preserved is not None and t.preserved.status == "live"
    current = t.current_messages()
    uuids = [e.uuid for e in current]
    assert current[0].is_compact_boundary and current[1].is_compact_summary
    assert uuids[2] == head and tail in uuids
    assert current[-1].content == "after compaction"
    kept_assistant = next(e for e in current if e.type == "assistant")
    assert all(kept_assistant.message["usage"][k] == 0 for k in ("input_tokens", "output_tokens"))
    # The original entry is untouched.
    assert t.by_uuid[tail].message["usage"]["cache_read_input_tokens"] > 0
    # Zeroed usage still anchors the count: only what follows the kept reply is estimated.
    after = current[uuids.index(tail) + 1 :]
    assert t.context_tokens() == token_count_with_estimation(after)


def test_broken_preserved_segment_loads_without_relink():
    t, (head, _) = _preserved_session(break_chain=True)
    assert t.preserved is not None and t.preserved.status == "broken"
    assert head not in [e.uuid for e in t.current_messages()]


def test_titles_ignore_summaries_from_other_sessions():
    b = _basic_session()
    b.metadata("summary", summary="Somebody else's session", leafUuid="not-in-this-file")
    t = Transcript.from_dicts(b.entries)
    assert t.title == "Add retries to the payment client"
    b.metadata("summary", summary="Payment retries", leafUuid=b.entries[2]["uuid"])
    assert Transcript.from_dicts(b.entries).title == "Payment retries"
    b.metadata("custom-title", customTitle="My title")
    assert Transcript.from_dicts(b.entries).title == "My title"


# --- the session list -----------------------------------------------------------------------


def test_session_list_newest_first(tmp_path):
    old = _basic_session(1).write(tmp_path / "old.jsonl")
    new = _basic_session(2)
    new.compact("s")
    new_path = new.write(tmp_path / "new.jsonl")
    (tmp_path / "new" / "session-memory").mkdir(parents=True)
    (tmp_path / "new" / "session-memory" / "summary.md").write_text("# Session Title\n")
    os.utime(old, (1_000_000, 1_000_000))
    sessions = list_sessions(tmp_path)
    assert [s.session_id for s in sessions] == ["new", "old"]
    assert sessions[0].compactions == 1 and sessions[0].has_session_memory
    assert sessions[1].model == "claude-sonnet-4-6" and sessions[1].messages == 6
    assert session_info(new_path).to_json()["mtime"].endswith("Z")
    assert list_sessions(tmp_path / "missing") == []


def test_parse_entries_offsets_point_at_lines():
    data = b'{"type":"user"}\n\n{"type":"assistant"}\n'
    entries, stats = parse_entries(data)
    assert [(e.line, e.offset) for e in entries] == [(1, 0), (3, 17)]
    assert stats.lines == 2


# --- real transcripts -----------------------------------------------------------------------


def test_every_shared_transcript_loads(shared_transcripts):
    files = sorted(shared_transcripts.rglob("*.jsonl"))
    assert files
    for path in files:
        t = Transcript.load(path)
        assert t.stats.broken_lines == 0, path
        assert t.entries, path
        json.dumps(session_info(path).to_json())


def test_spotter_facts(shared_transcripts):
    path = next((shared_transcripts / "spotter").glob("*.jsonl"))
    t = Transcript.load(path)
    assert t.stats.lines == 1512
    assert len(t.responses()) == 139  # 254 assistant records, 139 responses
    assert sum(1 for e in t.messages if e.type == "assistant") == 254
    [event] = t.compactions
    assert (event.trigger, event.pre_tokens) == ("auto", 170_251)
    assert event.summary_uuid is not None
    contexts = [r.context_tokens for r in t.responses()]
    assert contexts[0] == 26_450
    last_before = max(
        (r for r in t.responses() if r.first_line < event.line), key=lambda r: r.first_line
    )
    assert last_before.context_tokens == 164_831
    first_after = min(
        (r for r in t.responses() if r.first_line > event.line), key=lambda r: r.first_line
    )
    assert first_after.context_tokens == 36_081


def test_images_summaries_all_belong_to_other_sessions(shared_transcripts):
    t = Transcript.load(shared_transcripts / "agentlogs" / "images.jsonl")
    assert t.stats.type_counts["summary"] == 18
    assert t.title == t.first_prompt  # none of the 18 summaries is trusted


def test_inline_sidechain_sample(shared_transcripts):
    t = Transcript.load(shared_transcripts / "agentlogs" / "subagent.jsonl")
    assert len(t.sidechain_messages) == 2
    assert all(not e.is_sidechain for e in t.messages)


def test_acompact_subagent_file(shared_transcripts):
    path = next((shared_transcripts / "spotter").rglob("agent-acompact-*.jsonl"))
    t = Transcript.load(path)
    assert t.is_subagent and len(t.responses()) == 1
