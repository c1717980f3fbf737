"""The context commands end to end: keys of spec 05, exit codes, bad input."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.devtools.synth import SessionBuilder
from workbench.engine.claude_paths import project_root_for, sanitize_path
from workbench.engine.context.session_memory import DEFAULT_TEMPLATE

GAUGE_KEYS = {
    "transcript",
    "model",
    "context_window",
    "max_output_tokens",
    "reserved",
    "effective_window",
    "auto_compact_enabled",
    "thresholds",
    "used",
    "used_method",
    "percent_left",
    "above_warning",
    "above_error",
    "above_autocompact",
    "at_blocking",
    "label",
    "compactions",
}


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Path]:
    """A project folder, a config home, and two sessions (one with notes)."""
    root = tmp_path / "proj"
    root.mkdir()
    home = tmp_path / "claude"
    transcripts = home / "projects" / sanitize_path(project_root_for(root))
    old = SessionBuilder(seed=1, session_id="11111111-aaaa-4aaa-8aaa-111111111111")
    old.prompt("Rename the config loader")
    old.tool_call("Read", {"file_path": str(root / "config.py")}, "x = 1\n" * 50)
    old.reply("Renamed.")
    old_path = old.write(transcripts / f"{old.session_id}.jsonl")
    os.utime(old_path, (1_000_000, 1_000_000))
    new = SessionBuilder(seed=2, session_id="22222222-bbbb-4bbb-8bbb-222222222222")
    new.prompt("Add paging to the export API")
    for i in range(12):
        new.tool_call("Read", {"file_path": f"/repo/api/page_{i}.py"}, "row\n" * 900)
        new.reply(f"page {i} reviewed")
    new.compact("Summary of the paging work.", pre_tokens=150_000)
    new.prompt("continue with the tests")
    new.tool_call("Bash", {"command": "pytest tests/api -q"}, "12 passed")
    new.reply("Tests pass.")
    new_path = new.write(transcripts / f"{new.session_id}.jsonl")
    notes = transcripts / new.session_id / "session-memory" / "summary.md"
    notes.parent.mkdir(parents=True)
    notes.write_text(
        DEFAULT_TEMPLATE.replace("# Worklog\n", "# Worklog\n" + "- did a thing\n" * 700),
        encoding="utf-8",
    )
    return {"root": root, "home": home, "old": old_path, "new": new_path, "notes": notes}


def run(capsys, project, *argv: str, stdin: str | None = None, monkeypatch=None):
    if stdin is not None and monkeypatch is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main([*argv, "--project", str(project["root"]), "--config-home", str(project["home"])])
    out, err = capsys.readouterr()
    return code, out, err


def test_transcripts_lists_sessions_newest_first(capsys, project):
    code, out, _ = run(capsys, project, "transcripts", "--json")
    assert code == 0
    data = json.loads(out)
    assert [s["session_id"][:8] for s in data] == ["22222222", "11111111"]
    keys = {
        "session_id",
        "path",
        "size_bytes",
        "messages",
        "first_timestamp",
        "last_timestamp",
        "title",
        "model",
        "context_tokens",
        "compactions",
    }
    assert keys <= set(data[0])
    assert data[0]["compactions"] == 1 and data[1]["title"] == "Rename the config loader"


def test_transcripts_human_output(capsys, project):
    code, out, _ = run(capsys, project, "transcripts")
    assert code == 0 and "22222222" in out and "Rename the" in out


def test_gauge_latest_by_default(capsys, project):
    code, out, _ = run(capsys, project, "gauge", "--json")
    assert code == 0
    data = json.loads(out)
    assert GAUGE_KEYS <= set(data)
    assert data["transcript"] == str(project["new"])
    assert data["thresholds"] == {
        "warning": 147_000,
        "error": 147_000,
        "autocompact": 167_000,
        "blocking": 177_000,
    }
    assert data["used_method"] in ("usage", "usage+estimate")
    assert data["compactions"][0]["trigger"] == "auto"
    assert data["compactions"][0]["pre_tokens"] == 150_000


def test_gauge_by_session_prefix_path_and_model(capsys, project):
    code, out, _ = run(capsys, project, "gauge", "--session", "1111", "--json")
    assert code == 0 and json.loads(out)["transcript"] == str(project["old"])
    code, out, _ = run(
        capsys, project, "gauge", str(project["old"]), "--model", "opus[1m]", "--json"
    )
    data = json.loads(out)
    assert data["context_window"] == 1_000_000 and data["model_source"] == "flag"


def test_gauge_honours_env_overrides(capsys, project, monkeypatch):
    monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "50")
    monkeypatch.setenv("DISABLE_AUTO_COMPACT", "1")
    code, out, _ = run(capsys, project, "gauge", "--json")
    data = json.loads(out)
    assert data["auto_compact_enabled"] is False
    assert data["thresholds"]["autocompact"] == 90_000
    assert {o["name"] for o in data["overrides"]} >= {
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE",
        "DISABLE_AUTO_COMPACT",
    }


def test_gauge_human_output(capsys, project):
    code, out, _ = run(capsys, project, "gauge")
    assert code == 0 and "auto-compact" in out and "167,000" in out


def test_gauge_measure_counts_with_tiktoken(capsys, project):
    code, out, _ = run(capsys, project, "gauge", "--measure", "--json")
    measured = json.loads(out)["measurements"]
    assert measured["tiktoken_cl100k"] > 0 and measured["api_count"] is None


def test_gauge_follow_prints_json_lines(capsys, project):
    code, out, _ = run(capsys, project, "gauge", "--follow", "--json", "--updates", "1")
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 1 and GAUGE_KEYS <= set(json.loads(lines[0]))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["gauge", "/nope/missing.jsonl"], "no transcript"),
        (["gauge", "--session", "zzzz"], "no session"),
        (["compact-preview", "/nope/x.jsonl"], "no transcript"),
        (["session-memory", "--session", "zzzz"], "no session"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, project, argv, message):
    code, out, err = run(capsys, project, *argv)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_gauge_with_no_sessions(capsys, tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    code = main(["gauge", "--project", str(root), "--config-home", str(tmp_path / "c")])
    _, err = capsys.readouterr()
    assert code == 2 and "no sessions" in err


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00\x01\xff\xfe garbage\n", b'{"type":"user","message":{"content":"tru'],
)
def test_gauge_on_bad_files_gives_a_clear_result(capsys, project, tmp_path, data):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data)
    code, out, _ = run(capsys, project, "gauge", str(path), "--json")
    assert code == 0
    result = json.loads(out)
    assert result["used"] == 0 and result["used_method"] == "estimate"


def test_statusline(capsys, project, monkeypatch):
    payload = json.dumps(
        {
            "session_id": "22222222-bbbb-4bbb-8bbb-222222222222",
            "transcript_path": str(project["new"]),
            "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
        }
    )
    code, out, _ = run(capsys, project, "statusline", stdin=payload, monkeypatch=monkeypatch)
    assert code == 0 and len(out.strip().splitlines()) == 1
    assert out.startswith("Sonnet 4.6 · ctx ") and "/167k" in out


def test_statusline_new_session_and_bad_input(capsys, project, monkeypatch):
    payload = json.dumps({"transcript_path": str(project["root"] / "none.jsonl"), "model": {}})
    code, out, _ = run(capsys, project, "statusline", stdin=payload, monkeypatch=monkeypatch)
    assert code == 0 and "new session" in out
    # Bad input still prints a short line (a blank one, or exit != 0, hides the status line).
    code, out, err = run(capsys, project, "statusline", stdin="{oops", monkeypatch=monkeypatch)
    assert code == 0 and "not JSON" in err and out == "ctx ?\n"
    code, out, err = run(capsys, project, "statusline", stdin="[]", monkeypatch=monkeypatch)
    assert code == 0 and out == "ctx ?\n" and "JSON object" in err


def test_compact_preview_keys(capsys, project):
    code, out, _ = run(capsys, project, "compact-preview", str(project["new"]), "--json")
    assert code == 0
    data = json.loads(out)
    assert {
        "pre_tokens",
        "threshold",
        "would_autocompact",
        "session_memory",
        "full",
        "microcompact",
        "restored_files",
        "survival",
    } <= set(data)
    sm = data["session_memory"]
    assert sm["available"] and sm["truncated_sections"] == ["# Worklog"]
    assert {"keep_start_uuid", "kept_messages", "kept_tokens", "post_compact_tokens"} <= set(sm)
    assert sm["falls_back_to_full"] is False and data["chosen"] == "session_memory"
    # Few messages follow the boundary, so all of them are kept (the floor is the boundary).
    assert sm["kept_messages"] == data["messages"] - 1
    assert data["survival"]["span_messages"] == sm["keep_start_index"] == 1


def test_compact_preview_gives_the_context_after_the_app_shows(capsys, project):
    """The session-memory compaction's size afterwards carries the notes (the Compaction
    pane's figure); Claude Code's own post-compact count, without them, is named as such."""
    from workbench.engine import Engine
    from workbench.ui.panes.compaction_view import after_estimate

    code, out, _ = run(capsys, project, "compact-preview", str(project["new"]), "--json")
    sm = json.loads(out)["session_memory"]
    assert sm["context_after_tokens"] == sm["kept_tokens"] + sm["summary_tokens"]
    assert sm["summary_tokens"] > 0 and sm["post_compact_tokens"] == sm["kept_tokens"]
    engine = Engine.open(project["root"], config_home=str(project["home"]))
    preview = engine.context.compact_preview(str(project["new"]))
    assert after_estimate(preview) == (sm["context_after_tokens"], False)
    code, text, _ = run(capsys, project, "compact-preview", str(project["new"]))
    assert f"≈{sm['context_after_tokens']:,} in context after" in text
    assert f"post-compact count: {sm['post_compact_tokens']:,} (the kept messages only)" in text


def test_compact_preview_by_session_id_with_options(capsys, project, tmp_path):
    summary = tmp_path / "summary.txt"
    summary.write_text("We ran pytest tests/api -q and it passed.", encoding="utf-8")
    code, out, _ = run(
        capsys,
        project,
        "compact-preview",
        "22222222",
        "--summary",
        str(summary),
        "--ptl-gap",
        "500",
        "--last-summarized",
        "no-such-uuid",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["session_memory"]["falls_back_to_full"] is True
    assert data["chosen"] == "full"
    assert data["full"]["ptl_retry"] is not None
    assert data["survival"]["summary_given"] is True
    assert "pytest tests/api -q" not in data["survival"]["lost"]["commands"]


def test_compact_preview_human(capsys, project):
    code, out, _ = run(capsys, project, "compact-preview", str(project["new"]))
    assert code == 0 and "Session-memory compaction" in out and "Survival check" in out
    # The session's notes become the summary: the check is against them.
    assert "checked against session notes" in out


def test_compact_preview_human_frames_the_facts_like_the_pane(capsys, project):
    # A session without notes: no summary yet, so the facts are what one must keep.
    code, out, _ = run(capsys, project, "compact-preview", "11111111")
    assert code == 0
    head = next(x for x in out.splitlines() if x.startswith("Survival check"))
    assert head == "Survival check  1 fact in the 4 messages a summary replaces"
    assert "no summary to check (--summary FILE checks one)" in out


def test_compact_preview_human_says_what_a_checked_summary_lost(capsys, project, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("We worked on the API tests.\n", encoding="utf-8")
    code, out, _ = run(
        capsys,
        project,
        "compact-preview",
        "22222222",
        "--last-summarized",
        "no-such-uuid",
        "--summary",
        str(summary),
    )
    assert code == 0
    line = next(x for x in out.splitlines() if "checked against" in x)
    assert line.lstrip().startswith("✗ ") and " lost, checked against " in line


def test_session_memory_show(capsys, project):
    code, out, _ = run(capsys, project, "session-memory", "--json")
    assert code == 0
    data = json.loads(out)
    assert {
        "path",
        "exists",
        "is_empty",
        "template_source",
        "sections",
        "total_tokens",
        "over_total",
    } <= set(data)
    assert data["path"] == str(project["notes"])
    worklog = [s for s in data["sections"] if s["header"] == "# Worklog"][0]
    assert worklog["over_limit"] is True and {"header", "tokens", "over_limit"} <= set(worklog)


def test_session_memory_with_trigger_and_file(capsys, project):
    code, out, _ = run(
        capsys,
        project,
        "session-memory",
        "show",
        "--file",
        str(project["notes"]),
        "--trigger",
        str(project["new"]),
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert isinstance(data["trigger_points"], list)
    assert all(isinstance(u, str) for u in data["trigger_points"])


def test_session_memory_of_a_named_file_that_is_missing_exits_2(capsys, project, tmp_path):
    missing = str(tmp_path / "nope" / "summary.md")
    for extra in ((), ("--json",)):
        code, out, err = run(capsys, project, "session-memory", "--file", missing, *extra)
        assert code == 2 and out == "" and "Traceback" not in err
        assert err.strip().splitlines() == [f"workbench: no session-memory file at {missing}"]


def test_session_memory_not_written_yet_is_reported_not_an_error(capsys, project):
    session = project["old"].stem  # the session without notes: their default place is empty
    code, out, _ = run(capsys, project, "session-memory", "--session", session, "--json")
    assert code == 0 and json.loads(out)["exists"] is False
    code, out, _ = run(capsys, project, "session-memory", "--session", session)
    assert code == 0 and "no session notes yet" in out


def test_session_memory_update_is_delegated(capsys, project, monkeypatch):
    import workbench.commands.agents as agents

    calls = []

    def fake(args):
        calls.append((args.transcript, args.dry_run))
        return 0

    monkeypatch.setattr(agents, "run_session_memory_update", fake, raising=False)
    code, _, _ = run(capsys, project, "session-memory", "update", "--transcript", "t", "--dry-run")
    assert code == 0 and calls == [("t", True)]


def test_session_memory_update_flags_rejected_on_show(capsys, project):
    code, _, err = run(capsys, project, "session-memory", "--dry-run")
    assert code == 2 and "update" in err


def test_replay_command(capsys, project):
    code, out, _ = run(capsys, project, "replay", str(project["new"]), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["turn_count"] == len(data["turns"]) > 0
    assert data["compactions"][0]["recorded_pre_tokens"] == 150_000


def test_replay_spotter_via_cli(capsys, project, shared_transcripts):
    path = next((shared_transcripts / "spotter").glob("*.jsonl"))
    code, out, _ = run(capsys, project, "replay", str(path), "--no-turns", "--json")
    assert code == 0
    [compaction] = json.loads(out)["compactions"]
    assert compaction["agrees"] is True and compaction["recorded_pre_tokens"] == 170_251


def test_session_memory_update_not_available_yet(capsys, project, monkeypatch):
    import workbench.commands.agents as agents

    monkeypatch.delattr(agents, "run_session_memory_update", raising=False)
    code, out, err = run(capsys, project, "session-memory", "update")
    assert code == 2 and "not available" in err and out == ""


def test_gauge_with_the_1m_beta(capsys, project):
    code, out, _ = run(capsys, project, "gauge", "--beta", "context-1m-2025-08-07", "--json")
    data = json.loads(out)
    assert code == 0 and data["context_window"] == 1_000_000
    assert data["context_window_source"] == "1m-beta"


def test_gauge_refuses_a_transcript_and_a_session_together(capsys, project):
    code, out, err = run(capsys, project, "gauge", str(project["old"]), "--session", "2222")
    assert code == 2 and out == "" and "not more than one" in err


@pytest.mark.parametrize("content", [b"", b'not json\n{"type": \n\x00\xff\n'])
def test_compact_preview_of_no_messages_exits_2(capsys, project, tmp_path, content):
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(content)
    for extra in ((), ("--json",)):
        code, out, err = run(capsys, project, "compact-preview", str(transcript), *extra)
        assert code == 2 and out == "" and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1 and "nothing to compact" in err


def test_credentials_in_a_session_never_reach_the_output(tmp_path, capsys):
    """A pasted key in a prompt and a token in a shell command: the session's title, the
    context items and the compaction check's facts show them redacted."""
    from tests.secretgen import make_token

    root = tmp_path / "proj"
    root.mkdir()
    home = tmp_path / "claude"
    transcripts = home / "projects" / sanitize_path(project_root_for(root))
    key, token = make_token("anthropic-api-key"), make_token("github-pat")
    session = SessionBuilder(seed=5, session_id="33333333-cccc-4ccc-8ccc-333333333333")
    session.prompt(f"use this key {key} for the export job")
    session.tool_call("Bash", {"command": f"export GITHUB_TOKEN={token} && make release"}, "ok")
    session.reply("Released.")
    path = session.write(transcripts / f"{session.session_id}.jsonl")
    project = {"root": root, "home": home}
    outputs = []
    for argv in (
        ["transcripts", "--json"],
        ["transcripts"],
        ["context", "3333", "--json"],
        ["context", "3333"],
        ["compact-preview", str(path), "--json"],
    ):
        code, out, err = run(capsys, project, *argv)
        assert code == 0, (argv, err)
        outputs.append(out + err)
    for out in outputs:
        assert key not in out and token not in out
    assert any("[REDACTED]" in out for out in outputs)


def test_restored_files_are_sized_from_the_fullest_text_and_say_so(capsys, project):
    """A file last read ten lines at a time is sized from its earlier full read, one seen
    only in part says so; `compact-preview` and `context` give the same figure and words."""
    from tests.engine.context.test_ctx_restore_sizes import WHOLE, read

    b = SessionBuilder(seed=3, session_id="33333333-cccc-4ccc-8ccc-333333333333")
    b.prompt("Fix the rounding")
    read(b, "/nowhere/billing.py", WHOLE)
    read(b, "/nowhere/billing.py", WHOLE, offset=22, limit=10)
    read(b, "/nowhere/rates.py", WHOLE, offset=100, limit=20)
    b.reply("Fixed.")
    b.write(project["new"].parent / f"{b.session_id}.jsonl")
    code, out, _ = run(capsys, project, "compact-preview", "33333333", "--json")
    assert code == 0
    files = {f["path"]: f for f in json.loads(out)["restored_files"]}
    billing, rates = files["/nowhere/billing.py"], files["/nowhere/rates.py"]
    assert (billing["size_source"], rates["size_source"]) == ("full-read", "partial-read")
    assert billing["tokens"] > 2_000 > 500 > rates["tokens"]
    code, text, _ = run(capsys, project, "compact-preview", "33333333")
    assert (
        f"+ /nowhere/billing.py  ≈{billing['tokens']:,} tokens  (attached in full, sized from "
        "its last full read)" in text
    )
    assert (
        f"+ /nowhere/rates.py  ≈{rates['tokens']:,} tokens  (attached in full, sized from a "
        "partial read; the whole file is larger)" in text
    )
    code, out, _ = run(capsys, project, "context", "33333333", "--json")
    fates = {i["label"]: i["compaction"] for i in json.loads(out)["largest"]}
    assert fates["Read /nowhere/billing.py"] == (
        f"summarised, then re-attached in full (≈{billing['tokens']:,} tokens, sized from its "
        "last full read)"
    )
    assert fates["Read /nowhere/rates.py"] == (
        f"summarised, then re-attached (≈{rates['tokens']:,} tokens, sized from a partial "
        "read; the whole file is larger)"
    )


SPOTTER_RESTORED = {
    # file: (tokens, size source) — before the fix, the last partial Read: 191, 295, 211, 625
    "waiting_summary/slice_builder.ex": (1_470, "edit"),
    "services/waiting_summary.ex": (1_590, "edit"),
    "live/subagent_live.ex": (2_523, "edit"),
    "assets/js/app.js": (3_162, "edit"),
    "tasks/b7636e2.output": (4_530, "full-read"),
}


def test_spotter_restored_files_are_sized_from_the_whole_file(capsys, project, shared_transcripts):
    """The real session: each of the five files was last read in part after being read
    whole and edited; none of them is on this machine."""
    path = shared_transcripts / "spotter" / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    code, out, _ = run(capsys, project, "compact-preview", str(path), "--json")
    assert code == 0
    found = {
        next(key for key in SPOTTER_RESTORED if f["path"].endswith(key)): (
            f["tokens"],
            f["size_source"],
        )
        for f in json.loads(out)["restored_files"]
    }
    assert found == SPOTTER_RESTORED


def test_sessions_final_agrees_with_the_gauge_after_a_compaction(capsys, project):
    # The second session compacted: `sessions` gave the last call's context from before the
    # boundary, `gauge` and `transcripts` the count after it.
    code, out, _ = run(capsys, project, "sessions", "--json", "--no-cache")
    assert code == 0
    by_id = {s["session_id"]: s for s in json.loads(out)["sessions"]}
    code, out, _ = run(capsys, project, "transcripts", "--json")
    listed = {s["session_id"]: s["context_tokens"] for s in json.loads(out)}
    for session_id, summary in by_id.items():
        code, out, _ = run(capsys, project, "gauge", "--session", session_id, "--json")
        gauge = json.loads(out)
        assert (summary["final"], summary["final_method"]) == (gauge["used"], gauge["used_method"])
        assert summary["final"] == listed[session_id]


def test_sessions_spend_and_final_on_the_real_transcripts(capsys, tmp_path, shared_transcripts):
    import shutil

    root = tmp_path / "proj"
    root.mkdir()
    home = tmp_path / "claude"
    folder = home / "projects" / sanitize_path(project_root_for(root))
    folder.mkdir(parents=True)
    for name in ("subagent", "compact"):
        shutil.copy(shared_transcripts / "agentlogs" / f"{name}.jsonl", folder)
    spotter = "4d5611e5-241a-462a-8d15-5122611a9569"
    shutil.copy(shared_transcripts / "spotter" / f"{spotter}.jsonl", folder)
    shutil.copytree(shared_transcripts / "spotter" / spotter, folder / spotter)
    where = {"root": root, "home": home}
    code, out, _ = run(capsys, where, "sessions", "--json", "--no-cache")
    assert code == 0
    by_id = {s["session_id"]: s for s in json.loads(out)["sessions"]}
    # The inline Task sidechain (12,409) and, for spotter, the compaction's own call in
    # subagents/ (173,514) and the subagent calls in agent_progress lines (604,209).
    assert by_id["subagent"]["tokens_in"] == 44_098
    assert by_id[spotter]["tokens_in"] == 12_876_004
    assert by_id[spotter]["calls"] == 139  # the context curve stays the main chain's
    assert (by_id["compact"]["final"], by_id["compact"]["final_method"]) == (652, "estimate")


def test_context_says_its_total_now_is_an_estimate(capsys, project):
    code, out, _ = run(capsys, project, "context", "--session", "22222222", "--json", "--no-calls")
    assert code == 0 and json.loads(out)["current"]["method"] == "estimate"
