"""`workbench hook EVENT` fed the JSON Claude Code sends: snapshots, loss reports, load reports,
and bad input that never blocks a session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from secretgen import make_token

from workbench.cli import main
from workbench.engine import Engine
from workbench.engine.context.compaction_log import check_session_id

from .conftest import LiveProject, hook_env

SUMMARY_RAW = (
    "<analysis>The user named 170,251 ms and the pytest command.</analysis>\n"
    "<summary>\n1. Fix the retry logic in src/net/retry.py.\n2. RetryPolicy changes.\n</summary>"
)


def compaction_files(project: LiveProject) -> list[Path]:
    home = Path(os.environ["WORKBENCH_HOME"]) / "compactions"
    return sorted(home.rglob("*.json"))


def test_pre_then_post_compact_keeps_a_snapshot_and_reports_what_the_summary_lost(
    live_project: LiveProject, run_cli
) -> None:
    # --wait 0: the fixture's transcript is far below the threshold, where a real automatic
    # compaction never starts; the hook would wait for a reply that is not coming.
    code, out, err = run_cli(
        "hook",
        "PreCompact",
        "--wait",
        "0",
        stdin=live_project.hook_input("PreCompact", trigger="auto", custom_instructions=""),
    )
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert "saved what this compaction replaces" in answer["systemMessage"]
    [file] = compaction_files(live_project)
    assert file.parent.name == live_project.builder.session_id
    snapshot = json.loads(file.read_text())["snapshot"]
    assert snapshot["trigger"] == "auto"
    assert snapshot["transcript_bytes"] == live_project.transcript.stat().st_size
    facts = {kind: [f["value"] for f in items] for kind, items in snapshot["facts"].items()}
    assert str(live_project.root / "src/net/retry.py") in facts["paths"]
    assert "pytest tests/net -k test_backoff -q" in facts["commands"]
    assert "170,251" in facts["numbers"] and "2.5" in facts["numbers"]
    assert {"RetryPolicy", "max_attempts", "backoff_factor"} <= set(facts["identifiers"])

    # Claude Code compacts: a boundary and the summary record it wrote after it.
    live_project.builder.compact(
        "This session is being continued from a previous conversation.\n\nSummary:\n"
        "1. Fix the retry logic in src/net/retry.py (RetryPolicy, max_attempts).",
        pre_tokens=61_000,
        post_tokens=4_200,
    )
    live_project.write()
    code, out, err = run_cli(
        "hook",
        "PostCompact",
        stdin=live_project.hook_input("PostCompact", trigger="auto", compact_summary=SUMMARY_RAW),
    )
    assert (code, err) == (0, "")
    message = json.loads(out)["systemMessage"]
    assert "lost" in message and "pytest tests/net -k test_backoff -q" in message
    [file] = compaction_files(live_project)
    report = json.loads(file.read_text())["report"]
    assert report["summary_source"] == "transcript"
    assert (report["pre_tokens"], report["post_tokens"], report["trigger"]) == (
        61_000,
        4_200,
        "auto",
    )
    assert report["lost"]["commands"] == ["pytest tests/net -k test_backoff -q"]
    assert set(report["lost"]["numbers"]) == {"170,251", "2.5"}
    assert report["lost"]["identifiers"] == ["backoff_factor"]
    assert report["lost"]["paths"] == []
    assert report["kept"]["identifiers"] == 2

    code, out, _ = run_cli("compactions", "--json", "--project", str(live_project.root))
    listed = json.loads(out)
    assert listed["session_id"] == live_project.builder.session_id
    assert [c["report"]["lost_count"] for c in listed["compactions"]] == [4]


def test_post_compact_falls_back_to_the_hook_summary_then_upgrades_to_the_transcript(
    live_project: LiveProject, run_cli
) -> None:
    run_cli("hook", "PreCompact", stdin=live_project.hook_input("PreCompact", trigger="manual"))
    # The transcript does not have the summary record yet; PostCompact's copy stands in, with
    # the analysis block removed (the model never sees it after compaction).
    code, _, _ = run_cli(
        "hook",
        "PostCompact",
        "--wait",
        "0",
        stdin=live_project.hook_input("PostCompact", trigger="manual", compact_summary=SUMMARY_RAW),
    )
    assert code == 0
    log = live_project.engine.context.compaction_log
    [record] = log.records(live_project.builder.session_id, refresh=False)
    assert record.report is not None and record.report.summary_source == "hook input"
    assert "170,251" in record.report.lost["numbers"]
    # Once the transcript holds the record, reading the history re-checks against it.
    live_project.builder.compact("Summary:\nretry.py done; 170,251 ms kept.", trigger="manual")
    live_project.write()
    [record] = log.records(live_project.builder.session_id)
    assert record.report is not None and record.report.summary_source == "transcript"
    assert "170,251" not in record.report.lost["numbers"]


def test_post_compact_without_a_snapshot_says_so(live_project: LiveProject, run_cli) -> None:
    live_project.builder.compact("Summary:\nnothing much")
    live_project.write()
    code, out, _ = run_cli("hook", "PostCompact", stdin=live_project.hook_input("PostCompact"))
    assert code == 0
    assert "could not be checked: no PreCompact snapshot" in json.loads(out)["systemMessage"]


def test_a_secret_in_a_command_never_reaches_the_snapshot(
    live_project: LiveProject, run_cli
) -> None:
    token = make_token("github-pat")
    live_project.builder.tool_call("Bash", {"command": f"export GH_TOKEN={token} && make"}, "ok")
    live_project.write()
    code, out, _ = run_cli("hook", "PreCompact", stdin=live_project.hook_input("PreCompact"))
    assert code == 0 and token not in out
    [file] = compaction_files(live_project)
    text = file.read_text()
    assert token not in text
    assert "export GH_TOKEN=[REDACTED] && make" in text


def index_lines(count: int) -> str:
    return "".join(f"- [Note {i}](note_{i}.md) — note number {i}\n" for i in range(count))


def test_session_start_reports_what_loaded_as_a_user_message_only(
    live_project: LiveProject, run_cli
) -> None:
    memory = live_project.memory_dir
    (memory / "MEMORY.md").write_text(
        "- [Testing](feedback_testing.md) — run pytest -q\n"
        "- [Gone](gone.md) — a file that was deleted\n" + index_lines(210),
        encoding="utf-8",
    )
    old = memory / "feedback_testing.md"
    os.utime(old, (old.stat().st_mtime - 90 * 86_400,) * 2)
    hook = live_project.hook_input("SessionStart", source="startup", model="claude-sonnet-4-6")
    code, out, err = run_cli("hook", "SessionStart", stdin=hook)
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert "hookSpecificOutput" not in answer  # nothing reaches the model unless asked
    message = answer["systemMessage"]
    assert "200 of 212 entries loaded; 12 fell off past line 200: Note 198, Note 199" in message
    assert "links to missing files" in message and "gone.md" in message
    assert "feedback_testing.md (90 days)" in message

    code, out, _ = run_cli("hook", "SessionStart", "--context", stdin=hook)
    context = json.loads(out)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert "Note 209" in context["additionalContext"]


def test_session_start_says_when_text_past_the_cut_is_lost_though_every_entry_loads(
    live_project: LiveProject, run_cli
) -> None:
    # Every entry sits at the top; 240 lines of pasted notes follow. The character cut ends
    # the load at line 161 of them: "all loaded" alone would hide that the notes never load.
    memory = live_project.memory_dir
    notes = "".join(f"- note {n}: " + "x" * 140 + "\n" for n in range(240))
    (memory / "MEMORY.md").write_text(
        "- [Testing](feedback_testing.md) — run pytest -q\n" + notes, encoding="utf-8"
    )
    hook = live_project.hook_input("SessionStart", source="startup")
    code, out, _ = run_cli("hook", "SessionStart", "--quiet", stdin=hook)
    message = json.loads(out)["systemMessage"]
    head = message.splitlines()[0]
    assert head.startswith("Memory Workbench: MEMORY.md: all 1 entry loaded, but "), head
    assert " lines below them fell off at the 25,000-character limit, after line " in head
    assert "(241 of 200 lines, " in head


def test_session_start_quiet_says_nothing_when_all_loads(
    live_project: LiveProject, run_cli
) -> None:
    hook = live_project.hook_input("SessionStart", source="resume")
    code, out, _ = run_cli("hook", "SessionStart", stdin=hook)
    assert code == 0 and "all 1 entry loaded" in json.loads(out)["systemMessage"]
    code, out, err = run_cli("hook", "SessionStart", "--quiet", stdin=hook)
    assert (code, out, err) == (0, "", "")


@pytest.mark.parametrize(
    ("event", "stdin", "message"),
    [
        ("PreCompact", "", "no hook input on stdin"),
        ("PreCompact", "{not json", "the hook input is not JSON"),
        ("PreCompact", "[1, 2]", "must be a JSON object"),
        ("PreCompact", {"hook_event_name": "PreCompact"}, "has no transcript_path"),
        ("PreCompact", {"hook_event_name": "Stop"}, "is for Stop, but this hook handles"),
        ("Bogus", {}, "unknown hook event 'Bogus'"),
        (
            "PostCompact",
            {"session_id": "../../etc", "transcript_path": "/nowhere.jsonl"},
            "not a session id",
        ),
        ("PreCompact", {"transcript_path": "/nowhere/at/all.jsonl"}, "no transcript at"),
    ],
)
def test_bad_input_is_one_line_and_never_blocks(run_cli, event, stdin, message) -> None:
    code, out, err = run_cli("hook", event, stdin=stdin)
    # 1, never 2: Claude Code treats 2 as "block this compaction / this stop".
    assert code == 1 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_no_stdin_is_missing_input(monkeypatch, capsys) -> None:
    # A hook started with no stdin (or on a terminal) has no payload: said so, never blocking.
    monkeypatch.setattr("sys.stdin", None)
    assert main(["hook", "PreCompact"]) == 1
    err = capsys.readouterr().err
    assert "no hook input on stdin" in err and "Traceback" not in err


def test_a_real_hook_process_prints_only_json(live_project: LiveProject) -> None:
    hook = live_project.hook_input("SessionStart", source="startup")
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "hook", "SessionStart"],
        input=json.dumps(hook),
        capture_output=True,
        text=True,
        env=hook_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["systemMessage"].startswith("Memory Workbench: MEMORY.md")
    broken = subprocess.run(
        [sys.executable, "-m", "workbench", "hook", "PreCompact"],
        input="{",
        capture_output=True,
        text=True,
        env=hook_env(),
        timeout=60,
        check=False,
    )
    assert (broken.returncode, broken.stdout) == (1, "")
    assert "Traceback" not in broken.stderr and len(broken.stderr.splitlines()) == 1


def test_stop_does_nothing_unless_asked(live_project: LiveProject, run_cli) -> None:
    code, out, err = run_cli("hook", "Stop", stdin=live_project.hook_input("Stop"))
    assert (code, out, err) == (0, "", "")
    code, out, err = run_cli("hook", "SessionEnd", stdin=live_project.hook_input("SessionEnd"))
    assert (code, out, err) == (0, "", "")


def test_stop_with_propose_queues_the_extraction_for_review(
    live_project: LiveProject, run_cli, fake_messages_api
) -> None:
    from workbench.engine.agents.review_queue import ReviewQueue

    memory = live_project.memory_dir
    new_memory = (
        "---\nname: Retry timeouts\ndescription: the retry timeout this project uses\n"
        "type: project\n---\n\nThe retry timeout is 170,251 ms.\n"
    )
    fake_messages_api.reply_tool_use(
        [("Write", {"file_path": str(memory / "project_retry.md"), "content": new_memory})]
    )
    fake_messages_api.reply_text("Saved.")
    before = sorted(p.name for p in memory.iterdir())
    code, out, err = run_cli(
        "hook", "Stop", "--propose", "--foreground", stdin=live_project.hook_input("Stop")
    )
    assert code == 0, err
    assert "proposed 1 memory change for review" in json.loads(out)["systemMessage"]
    assert sorted(p.name for p in memory.iterdir()) == before  # nothing written yet
    engine = Engine.open(live_project.root)
    assert [p.path for p in ReviewQueue(engine).list()] == ["project_retry.md"]


def test_session_ids_from_hook_input_are_checked() -> None:
    assert check_session_id(SESSION_OK) == SESSION_OK
    for bad in ("..", "a/b", "", "x" * 200, ".hidden/..", None, 3):
        with pytest.raises(Exception, match="not a session id"):
            check_session_id(bad)


SESSION_OK = "5e55a0e1-aaaa-4bbb-8ccc-0123456789ab"


def test_messages_kept_verbatim_by_a_partial_compaction_are_not_lost(
    live_project: LiveProject, run_cli
) -> None:
    builder = live_project.builder
    hook = live_project.hook_input("PreCompact", trigger="auto")
    run_cli("hook", "PreCompact", "--wait", "0", stdin=hook)  # far below the threshold
    # Newer Claude Code keeps the last messages as they were and marks them on the boundary.
    kept = [e for e in builder.entries if e.get("type") in ("user", "assistant")][-2:]
    builder.compact(
        "Summary:\nFixing src/net/retry.py.",
        preserved_segment={
            "headUuid": kept[0]["uuid"],
            "anchorUuid": "a1",
            "tailUuid": kept[-1]["uuid"],
        },
    )
    live_project.write()
    code, out, _ = run_cli("hook", "PostCompact", stdin=live_project.hook_input("PostCompact"))
    assert code == 0
    [record] = live_project.engine.context.compaction_log.records(builder.session_id)
    report = record.report
    assert report is not None and "kept verbatim" in report.note
    # The reply naming these was kept whole, so they survived without the summary.
    assert "backoff_factor" not in report.lost["identifiers"]
    assert "2.5" not in report.lost["numbers"]
    assert "pytest tests/net -k test_backoff -q" in report.lost["commands"]


def test_a_snapshot_without_its_post_compact_is_closed_by_the_next(
    live_project: LiveProject, run_cli
) -> None:
    hook = live_project.hook_input("PreCompact", trigger="manual")
    run_cli("hook", "PreCompact", stdin=hook)
    run_cli("hook", "PreCompact", stdin=hook)  # the first compaction never finished
    first, second = live_project.engine.context.compaction_log.records(
        live_project.builder.session_id
    )
    assert first.report is not None and not first.report.checked
    assert "no PostCompact followed" in first.report.note
    assert second.report is None


def test_stop_with_propose_detaches_the_extraction(live_project: LiveProject, run_cli) -> None:
    import time

    code, out, err = run_cli("hook", "Stop", "--propose", stdin=live_project.hook_input("Stop"))
    assert (code, out, err) == (0, "", "")  # the session does not wait for it
    log = Path(os.environ["WORKBENCH_HOME"]) / "logs" / "extract-hook.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (log.exists() and log.read_text().strip()):
        time.sleep(0.2)
    # Without a key the extraction only says why it did not run; it ran all the same.
    assert "ANTHROPIC_API_KEY" in log.read_text()


def _crossing_reply(builder) -> None:  # type: ignore[no-untyped-def]
    """The reply that takes the context past the auto-compact threshold, and its tool result."""
    over = {"input_tokens": 3, "cache_read_input_tokens": 171_000, "output_tokens": 40}
    builder.assistant([{"type": "text", "text": "Checking the retry tests."}], usage=over)


def test_an_automatic_snapshot_waits_for_the_reply_that_crossed_the_threshold(
    live_project: LiveProject, monkeypatch
) -> None:
    """Claude Code writes its transcript in batches: when PreCompact runs, the reply that
    crossed the threshold may not be in the file yet. The snapshot reads again as it grows."""
    from workbench.engine.context import compaction_log

    log = live_project.engine.context.compaction_log
    polls: list[float] = []

    def sleep(seconds: float) -> None:  # the write lands while the hook waits
        polls.append(seconds)
        if len(polls) == 2:
            _crossing_reply(live_project.builder)
            live_project.write()

    monkeypatch.setattr(compaction_log, "_pause", sleep)
    record = log.snapshot(live_project.transcript, trigger="auto", wait_seconds=60)
    snap = record.snapshot
    assert snap is not None and snap.pre_tokens >= 171_000
    assert snap.transcript_bytes == live_project.transcript.stat().st_size
    assert len(polls) == 2  # read again once the file grew, then done


def test_a_manual_or_caught_up_snapshot_never_waits(live_project: LiveProject, monkeypatch) -> None:
    from workbench.engine.context import compaction_log

    def sleep(seconds: float) -> None:
        raise AssertionError("the snapshot waited")

    monkeypatch.setattr(compaction_log, "_pause", sleep)
    log = live_project.engine.context.compaction_log
    low = log.snapshot(live_project.transcript, trigger="manual", wait_seconds=60).snapshot
    assert low is not None and low.pre_tokens < 167_000  # below, and a manual compaction
    _crossing_reply(live_project.builder)
    live_project.write()
    high = log.snapshot(live_project.transcript, trigger="auto", wait_seconds=60).snapshot
    assert high is not None and high.pre_tokens >= 171_000


def test_an_automatic_snapshot_gives_up_waiting_and_keeps_what_it_read(
    live_project: LiveProject,
) -> None:
    log = live_project.engine.context.compaction_log
    record = log.snapshot(live_project.transcript, trigger="auto", wait_seconds=0.3)
    snap = record.snapshot
    assert snap is not None and 0 < snap.pre_tokens < 167_000
    assert snap.transcript_bytes == live_project.transcript.stat().st_size


def session_start(project: LiveProject, run_cli, *flags: str) -> dict:
    hook = project.hook_input("SessionStart", source="startup")
    code, out, err = run_cli("hook", "SessionStart", *flags, stdin=hook)
    assert (code, err) == (0, "")
    return json.loads(out)


def test_session_start_context_stays_within_its_budget(live_project: LiveProject, run_cli) -> None:
    from workbench.live.hooks import CONTEXT_BUDGET

    pad = "x" * 60  # ~105 characters a line: 200 lines stay under 25,000 characters
    long_title = "Long " + "y" * 5_000  # one title past the cut as long as a line can be
    lines = [f"- [Note {i}](note_{i}.md) — {pad}\n" for i in range(1_500)]
    lines[700] = f"- [{long_title}](long.md) — long\n"
    (live_project.memory_dir / "MEMORY.md").write_text("".join(lines), encoding="utf-8")
    answer = session_start(live_project, run_cli, "--context")
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= CONTEXT_BUDGET
    first = context.splitlines()[0]
    assert first.startswith("MEMORY.md was cut past line 200, so these entries")
    assert "Note 200; Note 201; " in first and "Note 1499" not in first
    shown = first.split(": ", 1)[1].split(" and ")[0].split("; ")
    more = int(first.rsplit(" and ", 1)[1].split()[0].replace(",", ""))
    assert len(shown) + more == 1_300  # every dropped entry is named or counted
    assert "1,500 links to missing files" in answer["systemMessage"]
    assert len(answer["systemMessage"]) < 1_000
    # The user's message names the same limit the index report does.
    message = answer["systemMessage"].splitlines()[0]
    assert "200 of 1,500 entries loaded; 1,300 fell off past line 200: Note 200" in message
    assert "character limit" not in message


def test_session_start_counts_past_the_itemised_lines(live_project: LiveProject, run_cli) -> None:
    # Only the first 10,000 lines are itemised; the counts come from the report's totals.
    (live_project.memory_dir / "MEMORY.md").write_text(
        "".join(f"- [N{i}](n{i}.md)\n" for i in range(20_000)), encoding="utf-8"
    )
    engine = Engine.open(live_project.root)
    report = engine.memories.index(False)
    assert (report.loaded_lines, report.dropped_lines) == (200, 19_800)
    message = session_start(live_project, run_cli)["systemMessage"].splitlines()[0]
    assert "200 of 20,000 lines loaded; 19,800 fell off past line 200: N200, N201, N202" in message
    assert message.endswith("and 19,797 more")


def test_session_start_shows_no_secret_in_a_name(live_project: LiveProject, run_cli) -> None:
    token = make_token("github-pat", seed="session-start")
    memory = live_project.memory_dir
    stale = memory / f"stale-{token}.md"
    stale.write_text("---\nname: s\ndescription: s\ntype: user\n---\n\ns\n", encoding="utf-8")
    os.utime(stale, (stale.stat().st_mtime - 90 * 86_400,) * 2)
    (memory / "MEMORY.md").write_text(
        f"- [Stale]({stale.name}) — old\n- [x]({token}.md)\n"
        + index_lines(200)
        + f"- [Deploy with {token}](deploy.md) — past the cut\n",
        encoding="utf-8",
    )
    answer = session_start(live_project, run_cli, "--context")
    shown = json.dumps(answer)
    assert token not in shown
    message = answer["systemMessage"]
    assert "202 links to missing files: [REDACTED].md, note_0.md" in message
    assert "stale-[REDACTED].md (90 days)" in message
    assert "Deploy with [REDACTED]" in answer["hookSpecificOutput"]["additionalContext"]


def test_post_compact_names_lost_facts_short_and_redacted() -> None:
    from workbench.engine.context.compaction_log import CompactionRecord, LossReport
    from workbench.live.hooks import MAX_NAME_CHARS, describe_loss

    token = make_token("github-pat", seed="post-compact")
    command = "python -c '" + "x" * 4_000 + "'"
    report = LossReport(
        created="t", summary_source="transcript", summary_chars=10, boundary_uuid=None,
        trigger="auto", pre_tokens=None, post_tokens=None, kept={},
        lost={"commands": (command, f"gh auth login --with-token {token}")},
    )  # fmt: skip
    message = describe_loss(CompactionRecord("id", "p", None, report))
    assert token not in message and "--with-token [REDACTED]" in message
    assert len(message) < 3 * MAX_NAME_CHARS
