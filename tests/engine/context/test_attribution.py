"""Attribution: per-call categories add up to the estimate, the estimate is reconciled with
the recorded usage at every call, the largest items carry what compaction would do to them;
on generated sessions and on the real transcripts in ../shared/data."""

from __future__ import annotations

import base64
import os
from datetime import UTC, datetime
from pathlib import Path

from current_release import CurrentReleaseSession

from workbench.devtools.synth import SessionBuilder
from workbench.engine import Engine
from workbench.engine.context.attribution_models import OVERHEAD, condensed
from workbench.engine.context.tokens import rough_tokens_for_messages
from workbench.engine.context.transcript import Transcript

NOW = datetime(2026, 2, 10, 12, 0, tzinfo=UTC)
PNG = base64.b64encode(b"\x89PNG" + bytes(3000)).decode()


def engine_for(tmp_path: Path, version: str | None = None) -> Engine:
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    env["WORKBENCH_CLAUDE_COMMAND"] = ""
    (tmp_path / "proj").mkdir(exist_ok=True)
    return Engine.open(tmp_path / "proj", env=env, claude_version=version)


def attachment(builder: SessionBuilder, payload: dict) -> None:
    builder._append(
        {
            **builder._chain(),
            **builder._stamps(),
            "type": "attachment",
            "attachment": payload,
            "uuid": builder.new_uuid(),
            "timestamp": builder.tick(0.5),
        }
    )


def rich_session(path: Path) -> Path:
    """Reads, a screenshot, thinking, reminders, a slash command, attachments, a compaction
    with a restored file, and more work after it."""
    b = SessionBuilder(seed=3, session_id="aaaaaaaa-1111-4aaa-8aaa-aaaaaaaaaaaa")
    b.prompt("Fix the tax rounding in the billing module")
    b.user("<system-reminder>\nA note the harness adds.\n</system-reminder>", isMeta=True)
    attachment(b, {"type": "date_change", "newDate": "2026-02-10"})
    b.tool_call("Read", {"file_path": "/repo/src/billing/tax.py"}, "    1→x = 1\n" * 900)
    b.tool_call("Grep", {"pattern": "round("}, "src/billing/tax.py:12: round(x)\n" * 40)
    b.tool_call(
        "mcp__browser__screenshot",
        {},
        [
            {"type": "text", "text": "captured"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        ],
    )
    b.tool_call("Bash", {"command": "pytest -q tests/billing"}, "F" * 3000, thinking="Hmm " * 300)
    b.user("<command-name>/context</command-name>\n<command-args></command-args>")
    b.reply("The rounding is fixed.", thinking="Checking " * 50)
    b.compact("Summary: the tax rounding was fixed in src/billing/tax.py.", trigger="auto")
    attachment(
        b,
        {
            "type": "file",
            "filename": "/repo/src/billing/tax.py",
            "content": {
                "type": "text",
                "file": {"filePath": "/repo/src/billing/tax.py", "content": "x = 1\n" * 300},
            },
        },
    )
    b.prompt("Now the invoices")
    for k in range(8):
        b.tool_call(
            "Read", {"file_path": f"/repo/src/billing/invoice_{k}.py"}, "y = 2\n" * (100 + 80 * k)
        )
    b.tool_call("Read", {"file_path": "/repo/src/billing/invoice_7.py"}, "y = 2\n" * 50)
    b.reply("Invoices done.")
    return b.write(path)


def calls_from_scratch(path: Path) -> dict[int, int]:
    """Line of each call's first record → rough tokens of what preceded it since the
    boundary, computed independently from the whole loaded transcript."""
    out: dict[int, int] = {}
    segment: list = []
    current = None
    for entry in Transcript.load(path).messages:
        if entry.is_compact_boundary:
            segment, current = [entry], None
            continue
        if entry.type == "assistant" and entry.usage is not None and entry.message_id != current:
            current = entry.message_id
            out[entry.line] = rough_tokens_for_messages(segment)
        segment.append(entry)
    return out


def check_invariants(report, path: Path) -> None:
    expected = calls_from_scratch(path)
    assert [c.line for c in report.calls] == list(expected)
    for call in report.calls:
        messages = call.estimate - call.categories.get(OVERHEAD, 0)
        assert messages == expected[call.line], call.number
        assert sum(call.categories.values()) == call.estimate
        assert sum(condensed(call.categories).values()) == call.estimate
        assert call.recorded is not None and call.difference == call.recorded - call.estimate
        assert call.categories.get(OVERHEAD, 0) == report.overhead
    check_items(report)


def check_items(report) -> None:
    """Every call's items add up to its categories (the overhead is no item); the ones it
    added are the ones it sent first, and what it held is what it and the calls before it in
    its segment added."""
    held: dict[str, int] = {}
    segment = -1
    for call in report.calls:
        if call.segment != segment:
            segment, held = call.segment, {}
        added = report.call_items(call.number, added_only=True)
        assert {i.call for i in added} <= {call.number}, call.number
        for item in added:
            held[item.category] = held.get(item.category, 0) + item.tokens
        messages = {k: v for k, v in call.categories.items() if k != OVERHEAD}
        assert held == messages, call.number
        items = report.call_items(call.number)
        assert len(items) == call.items_held
        assert [i.tokens for i in items] == sorted((i.tokens for i in items), reverse=True)
    # An item is first sent by the first call after its line (a reply by the next call).
    lines = [c.line for c in report.calls]
    for row in report.item_rows:
        number, line = row[4], row[3]
        assert number == 1 or lines[number - 2] <= line, row
        assert number > len(lines) or line < lines[number - 1], row


def test_generated_session_adds_up_and_reconciles(tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    report = engine_for(tmp_path).context.attribution(path, now=NOW)
    check_invariants(report, path)
    first = report.calls[0]
    assert report.overhead == first.recorded - (first.estimate - report.overhead) == 14_000
    # The generator's usage is the rough estimate plus its 14,000-token system prompt.
    assert all(c.difference == 0 for c in report.calls if c.segment == 0)
    kinds = set().union(*(c.categories for c in report.calls), report.current)
    assert {
        "tool_result:Read",
        "tool_result:Grep",
        "tool_result:Bash",
        "tool_result:mcp__browser__screenshot",
        "tool_use",
        "thinking",
        "image",
        "reminder",
        "command",
        "user_text",
        "assistant_text",
        "attachment:date_change",
        "compact_summary",
        "attachment:file",
    } <= kinds
    assert [c.trigger for c in report.compactions] == ["auto"]
    assert report.compactions[0].restored_files == 1


def test_largest_items_now_with_what_compaction_would_do(tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    report = engine_for(tmp_path).context.attribution(path, now=NOW)
    top = report.largest[0]
    assert top.label == "Read /repo/src/billing/invoice_7.py"
    assert top.describe().startswith("Read /repo/src/billing/invoice_7.py at call ")
    assert top.tokens == max(i.tokens for i in report.largest)
    # Eight reads of compactable results: the latest five are kept, older ones cleared.
    fates = {i.label: i.micro for i in report.largest if i.category == "tool_result:Read"}
    assert fates["Read /repo/src/billing/invoice_0.py"].startswith("cleared to a placeholder")
    assert fates["Read /repo/src/billing/invoice_6.py"].startswith("kept: one of the 5")
    assert "re-attached" in top.compaction
    assert all(i.call >= report.compactions[0].after_call for i in report.largest)
    reads = {f.path: f for f in report.files_read}
    assert reads["/repo/src/billing/invoice_7.py"].reads == 2
    assert report.earlier_largest and report.earlier_largest[0][1][0].label.startswith(
        "Read /repo/src/billing/tax.py"
    )


def test_each_call_lists_its_items_with_tool_file_and_tokens(tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    report = engine_for(tmp_path).context.attribution(path, now=NOW)
    check_items(report)
    boundary = report.compactions[0].after_call
    # The last call before the compaction: every kind of item, none left in context now.
    before = report.call_items(boundary)
    kinds = {i.category for i in before}
    assert {"tool_result:Read", "tool_result:Bash", "attachment:date_change", "image"} <= kinds
    assert {"reminder", "command", "thinking", "user_text", "tool_use"} <= kinds
    read = next(i for i in before if i.category == "tool_result:Read")
    assert (read.tool, read.path, read.label) == (
        "Read",
        "/repo/src/billing/tax.py",
        "Read /repo/src/billing/tax.py",
    )
    assert read.tokens == max(i.tokens for i in before)
    assert not any(i.in_context for i in before)
    assert {i.compaction for i in before} == {f"summarised by the compaction after call {boundary}"}
    # A call after it: its items are in context now and carry what compaction would do.
    last = report.call_items(len(report.calls))
    assert all(i.in_context and i.micro and i.compaction for i in last)
    assert "file /repo/src/billing/tax.py" in {i.label for i in last}
    new = report.call_items(len(report.calls), added_only=True)
    assert new and len(new) < len(last)


def test_the_largest_items_now_each_say_what_micro_compaction_would_do(tmp_path):
    from workbench.engine.context.attribution_models import MICRO_UNTOUCHED

    path = rich_session(tmp_path / "s.jsonl")
    report = engine_for(tmp_path).context.attribution(path, now=NOW)
    assert all(i.micro and i.compaction for i in report.largest)
    others = [i for i in report.largest if not i.category.startswith("tool_result")]
    assert others and all(i.micro == MICRO_UNTOUCHED for i in others)


def test_images_are_counted_apart_and_their_data_never_kept(tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    report = engine_for(tmp_path).context.attribution(path, now=NOW)
    call = next(c for c in report.calls if c.categories.get("image"))
    assert call.categories["image"] == 2_000


def test_a_model_without_threshold_compaction_calls_the_auto_record_reactive(tmp_path):
    b = SessionBuilder(seed=4, model="claude-sonnet-4-5", version="2.1.332")
    b.prompt("go")
    b.tool_call("Bash", {"command": "ls"}, "a\n" * 100)
    b.compact("Summary.", trigger="auto")
    b.reply("ok")
    path = b.write(tmp_path / "r.jsonl")
    report = engine_for(tmp_path).context.attribution(path, now=NOW)
    assert [(c.trigger, c.recorded_trigger) for c in report.compactions] == [("reactive", "auto")]
    older = engine_for(tmp_path, "2.1.88").context.attribution(path, now=NOW)
    assert [c.trigger for c in older.compactions] == ["auto"]


def test_real_transcripts_add_up_and_reconcile_at_every_call(shared_transcripts, tmp_path):
    paths = sorted(shared_transcripts.rglob("*.jsonl"))
    assert paths
    engine = engine_for(tmp_path)
    checked = 0
    for path in paths:
        report = engine.context.attribution(path, now=NOW)
        check_invariants(report, path)
        replay = engine.context.replay(path)
        assert [c.recorded for c in report.calls] == [t.context_tokens for t in replay.turns]
        checked += len(report.calls)
    assert checked > 100


def test_a_fifo_transcript_is_refused_at_once(tmp_path):
    import threading

    from workbench.engine.userfiles import UnreadableFileError

    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    outcome: list[object] = []

    def attribute() -> None:
        try:
            engine_for(tmp_path).context.attribution(fifo, now=NOW)
        except UnreadableFileError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=attribute, daemon=True)
    thread.start()
    thread.join(timeout=20)
    assert outcome and "pipe" in str(outcome[0]).lower()


def test_a_runaway_line_is_skipped_and_later_lines_keep_their_numbers(tmp_path, monkeypatch):
    from workbench.engine.context import attribution

    path = rich_session(tmp_path / "s.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    expected = engine_for(tmp_path).context.attribution(path, now=NOW)
    # A metadata line far longer than the cap, between the prompt and the first call.
    assert max(map(len, lines)) < 100_000
    runaway = b'{"type":"progress","data":"' + b"z" * 300_000 + b'"}\n'
    path.write_bytes(b"".join([lines[0], runaway, *lines[1:]]))
    monkeypatch.setattr(attribution, "TRANSCRIPT_LINE_LIMIT", 100_000)
    report = engine_for(tmp_path).context.attribution(path, now=NOW)
    assert [c.line for c in report.calls] == [
        c.line + (1 if c.line > 1 else 0) for c in expected.calls
    ]
    assert [c.estimate for c in report.calls] == [c.estimate for c in expected.calls]


def test_a_partial_compaction_keeps_its_preserved_messages_in_context_now(tmp_path):
    # 2.1.332 keeps the last messages verbatim after the summary (preservedSegment); the
    # context now showed only the summary and the overhead, as if nothing had been kept.
    b = CurrentReleaseSession(seed=1, system_prompt_tokens=20_000)
    b.prompt("Speed up the export")
    for i in range(3):
        b.tool_call("Read", {"file_path": f"/repo/p{i}.py"}, "row\n" * 3_000)
    b.partial_compact(keep=2)
    path = b.write(tmp_path / "partial.jsonl")
    report = engine_for(tmp_path).context.attribution(path, now=NOW)
    current = Transcript.load(path).current_messages()
    assert [e.is_compact_summary for e in current[:2]] == [False, True] and len(current) == 4
    messages = {k: v for k, v in report.current.items() if k != OVERHEAD}
    assert sum(messages.values()) == rough_tokens_for_messages([e.raw for e in current])
    assert messages["tool_result:Read"] == 3_000 and "tool_use" in messages
    assert {item.label for item in report.largest} >= {"Read /repo/p2.py"}
    assert report.items_now == 3
