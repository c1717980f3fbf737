"""`--claude-version` on every command, and what the answers say about the release; plus the
findings on real data of issue 11 (titles, odd timestamps, agreement, --trigger)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from current_release import CurrentReleaseSession

from workbench.cli import main
from workbench.devtools.synth import SessionBuilder
from workbench.engine.claude_paths import project_root_for, sanitize_path


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "proj"
    root.mkdir()
    home = tmp_path / "claude"
    transcripts = home / "projects" / sanitize_path(project_root_for(root))
    b = SessionBuilder(seed=1, version="2.1.39", session_id="11111111-aaaa-4aaa-8aaa-111111111111")
    b.prompt("Rename the config loader")
    b.tool_call("Read", {"file_path": str(root / "config.py")}, "x = 1\n" * 50)
    b.reply("Renamed.")
    path = b.write(transcripts / f"{b.session_id}.jsonl")
    memory = transcripts / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [A](a.md) — a\n")
    (memory / "a.md").write_text("---\nname: a\ndescription: d\nmetadata:\n  type: user\n---\nx\n")
    return {"root": root, "home": home, "transcripts": transcripts, "session": path}


def run(capsys, project, *argv: str):
    code = main([*argv, "--project", str(project["root"]), "--config-home", str(project["home"])])
    out, err = capsys.readouterr()
    return code, out, err


COMMANDS = [
    ("paths",),
    ("index",),
    ("show", "a.md"),
    ("manifest",),
    ("lint",),
    ("gauge",),
    ("replay", "11111111"),
    ("compact-preview", "11111111"),
    ("session-memory",),
    ("recall", "config loader"),
    ("prompt",),
    ("dream", "--dry-run"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_command_takes_the_flag_and_says_which_release(capsys, project, command):
    code, out, err = run(capsys, project, *command, "--json", "--claude-version", "2.1.88")
    assert code in (0, 1), err
    data = json.loads(out)
    assert data["claude_version"] == "2.1.88" and data["claude_version_source"] == "flag"
    assert data["claude_profile"] == "2.1.88"


def test_list_commands_take_the_flag_too(capsys, project):
    for command in (("ls",), ("transcripts",), ("history",)):
        code, out, _ = run(capsys, project, *command, "--json", "--claude-version", "2.1.88")
        assert code == 0 and isinstance(json.loads(out), list)


def test_transcripts_carry_each_sessions_own_version(capsys, project):
    _, out, _ = run(capsys, project, "transcripts", "--json")
    assert json.loads(out)[0]["claude_version"] == "2.1.39"


def test_auto_follows_the_transcript_then_the_newest_profile(capsys, project):
    _, out, _ = run(capsys, project, "gauge", "--json")
    gauge = json.loads(out)
    assert (gauge["claude_version"], gauge["claude_version_source"]) == ("2.1.39", "transcript")
    _, out, _ = run(capsys, project, "paths", "--json")
    paths = json.loads(out)
    assert (paths["claude_version"], paths["claude_version_source"]) == ("2.1.332", "newest")


def test_the_environment_and_the_config_file_choose_the_release(
    capsys, project, monkeypatch, tmp_path
):
    config = tmp_path / "workbench.toml"
    config.write_text('claude_version = "2.1.100"\n')
    monkeypatch.setenv("WORKBENCH_CONFIG", str(config))
    _, out, _ = run(capsys, project, "paths", "--json")
    data = json.loads(out)
    assert (data["claude_version"], data["claude_version_source"]) == ("2.1.100", "config")
    assert data["claude_version_notes"]  # between the observed releases: uncertain
    monkeypatch.setenv("WORKBENCH_CLAUDE_VERSION", "2.1.88")
    _, out, _ = run(capsys, project, "paths", "--json")
    assert json.loads(out)["claude_version_source"] == "env"


def test_a_bad_version_is_one_line_and_exit_2(capsys, project):
    code, out, err = run(capsys, project, "paths", "--claude-version", "newest")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "not a Claude Code version" in err


def test_help_names_the_option(capsys):
    with pytest.raises(SystemExit):
        main(["gauge", "--help"])
    assert "--claude-version VERSION" in capsys.readouterr().out


def test_the_prompt_has_the_release_shape(capsys, project):
    _, out, _ = run(capsys, project, "prompt", "--json")
    assert json.loads(out)["text"].startswith("# Memory\n") and "metadata:" in out
    _, out, _ = run(capsys, project, "prompt", "--json", "--claude-version", "2.1.88")
    data = json.loads(out)
    assert data["text"].startswith("# auto memory\n") and data["style"] == "sectioned"


def test_the_gauge_explains_a_model_without_threshold_compaction(capsys, project):
    b = CurrentReleaseSession(model="claude-sonnet-4-5-20250929", session_id="s45")
    b.prompt("hello")
    b.reply("hi")
    b.write(project["transcripts"] / "s45.jsonl")
    code, out, _ = run(capsys, project, "gauge", "--session", "s45")
    assert code == 0
    assert "rules of Claude Code 2.1.332 (from the transcript)" in out
    assert "does not auto-compact" in out and "reactive compaction" in out
    assert not any(line.startswith("auto-compact") for line in out.splitlines())  # no rung


# --- findings on real data -----------------------------------------------------------------------


def _odd_session(transcripts: Path) -> Path:
    """Non-ISO timestamps, an unknown model, a resumed copy and one compaction."""
    b = SessionBuilder(seed=9, version="2.1.60", model="claude-mystery-9", session_id="odd")
    b.prompt("Tidy the build")
    b.tool_call("Bash", {"command": "make"}, "ok\n" * 300)
    b.reply("done")
    b.compact("Summary.", pre_tokens=40_000)
    b.prompt("next")
    b.tool_call("Read", {"file_path": "/x"}, "y\n" * 400)
    b.reply("read")
    stamps = ["1767225600", 1767225601500, "2026-01-01 00:00:02", "Thu, 01 Jan 2026 00:00:03 GMT"]
    for index, entry in enumerate(b.entries):
        if "timestamp" in entry:
            entry["timestamp"] = stamps[index % len(stamps)]
    # A resumed session starts with copies of the earlier session's lines (same uuids).
    copies = [dict(e) for e in b.entries[:4] if e.get("type") == "user"]
    b.entries[:0] = copies
    return b.write(transcripts / "odd.jsonl")


def test_transcripts_gauge_and_preview_agree_on_an_odd_file(capsys, project):
    path = _odd_session(project["transcripts"])
    _, out, _ = run(capsys, project, "transcripts", "--json")
    listed = next(s for s in json.loads(out) if s["session_id"] == "odd")
    _, out, _ = run(capsys, project, "gauge", str(path), "--json")
    gauge = json.loads(out)
    _, out, _ = run(capsys, project, "compact-preview", str(path), "--json")
    preview = json.loads(out)
    assert listed["model"] == gauge["model"] == preview["model"] == "claude-mystery-9"
    assert listed["context_tokens"] == gauge["used"] == preview["pre_tokens"]
    assert listed["compactions"] == len(gauge["compactions"]) == 1
    assert listed["last_timestamp"].endswith("Z") and listed["first_timestamp"].startswith("2026")
    assert any("not a model Claude Code 2.1.60 knows" in n for n in gauge["notes"])  # said
    _, out, _ = run(capsys, project, "transcripts")
    row = next(line for line in out.splitlines() if line.startswith("odd"))
    assert "2026-01-01 00:00" in row and "GMT" not in row and "17672256" not in row


def test_an_interruption_is_never_a_title_and_a_slash_command_is(capsys, project):
    interrupted = SessionBuilder(seed=3, session_id="int")
    interrupted.user("[Request interrupted by user]")
    interrupted.prompt("Fix the flaky test")
    interrupted.write(project["transcripts"] / "int.jsonl")
    command = SessionBuilder(seed=4, session_id="cmd")
    command.user(
        "<command-name>/review</command-name>\n<command-message>review</command-message>\n"
        "<command-args>PR 12</command-args>"
    )
    command.reply("Reviewing.")
    command.write(project["transcripts"] / "cmd.jsonl")
    _, out, _ = run(capsys, project, "transcripts", "--json")
    titles = {s["session_id"]: s["title"] for s in json.loads(out)}
    assert titles["int"] == "Fix the flaky test"
    assert titles["cmd"] == "/review PR 12"


def test_session_memory_trigger_takes_any_transcript(capsys, tmp_path):
    elsewhere = SessionBuilder(seed=5, session_id="far")
    elsewhere.prompt("work")
    for i in range(6):
        elsewhere.tool_call("Read", {"file_path": f"/f{i}"}, "z\n" * 3_000)
    path = elsewhere.write(tmp_path / "other-place" / "far.jsonl")
    empty = {"root": tmp_path / "empty", "home": tmp_path / "home"}
    empty["root"].mkdir()
    code, out, err = run(capsys, empty, "session-memory", "--trigger", str(path), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["path"].endswith("far/session-memory/summary.md")
    assert "trigger_points" in data or "trigger" in data
