"""Recently used tools, surfaced memories and read files from a session transcript."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.engine.recall.signals import (
    collect_read_files,
    collect_recent_successful_tools,
    collect_surfaced_memories,
    last_human_text,
    session_signals,
)


def human(text: str) -> dict:
    return {"type": "user", "message": {"role": "user", "content": text}}


def uses(*calls: tuple[str, str, dict]) -> dict:
    blocks = [{"type": "tool_use", "id": i, "name": n, "input": inp} for i, n, inp in calls]
    return {"type": "assistant", "message": {"role": "assistant", "content": blocks}}


def results(*pairs: tuple[str, bool]) -> dict:
    blocks = [
        {"type": "tool_result", "tool_use_id": i, "content": "out", "is_error": err}
        for i, err in pairs
    ]
    return {"type": "user", "message": {"role": "user", "content": blocks}}


def memories_attachment(*items: tuple[str, str]) -> dict:
    return {
        "type": "attachment",
        "attachment": {
            "type": "relevant_memories",
            "memories": [{"path": p, "content": c, "mtimeMs": 0} for p, c in items],
        },
    }


def test_tools_since_the_previous_prompt_that_all_succeeded():
    entries = [
        human("earlier prompt"),
        uses(("old", "Glob", {})),
        results(("old", False)),
        human("run the tests"),
        uses(("t1", "Bash", {}), ("t2", "Read", {}), ("t3", "Grep", {})),
        results(("t1", False), ("t2", False), ("t3", True)),
        uses(("t4", "Bash", {}), ("t5", "Edit", {})),
        results(("t4", False)),  # t5 has no result yet
        human("now deploy it"),
        {"type": "attachment", "attachment": {"type": "date_change"}},
    ]
    assert collect_recent_successful_tools(entries) == ["Bash", "Read"]


def test_any_failure_excludes_the_tool():
    entries = [
        human("go"),
        uses(("a", "Bash", {})),
        results(("a", False)),
        uses(("b", "Bash", {})),
        results(("b", True)),
        human("next"),
    ]
    assert collect_recent_successful_tools(entries) == []


def test_without_a_new_prompt_the_current_turn_counts():
    entries = [human("go"), uses(("a", "Read", {})), results(("a", False))]
    assert collect_recent_successful_tools(entries) == ["Read"]
    assert collect_recent_successful_tools([]) == []


def test_surfaced_memories_sum_js_lengths():
    entries = [
        memories_attachment(("/m/a.md", "abc"), ("/m/b.md", "😀")),
        memories_attachment(("/m/a.md", "abc")),
        human("x"),
    ]
    surfaced = collect_surfaced_memories(entries)
    assert surfaced.paths == ("/m/a.md", "/m/b.md")
    assert surfaced.total_bytes == 3 + 2 + 3


def test_read_files_and_last_prompt():
    entries = [
        human("look at the config"),
        uses(("r", "Read", {"file_path": "/m/a.md"}), ("w", "Write", {"file_path": "/m/x.md"})),
        {"type": "user", "isMeta": True, "message": {"role": "user", "content": "meta"}},
    ]
    assert collect_read_files(entries) == ("/m/a.md",)
    assert last_human_text(entries) == "look at the config"


def test_session_signals_use_only_what_follows_the_last_compaction(tmp_path: Path):
    rows = [
        {**human("before"), "uuid": "1"},
        {**memories_attachment(("/m/old.md", "x" * 100)), "uuid": "2"},
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "3",
            "compactMetadata": {"trigger": "auto", "preTokens": 1},
        },
        {**memories_attachment(("/m/new.md", "y" * 10)), "uuid": "4"},
        {**human("which memories now?"), "uuid": "5"},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    signals = session_signals(str(path))
    assert signals.surfaced.paths == ("/m/new.md",)
    assert signals.surfaced.total_bytes == 10
    assert signals.query == "which memories now?"


def test_real_transcripts_do_not_break_the_derivations(shared_transcripts: Path):
    for path in sorted(shared_transcripts.rglob("*.jsonl")):
        signals = session_signals(str(path))
        assert all(isinstance(t, str) and t for t in signals.recent_tools)
        assert signals.surfaced.total_bytes >= 0
