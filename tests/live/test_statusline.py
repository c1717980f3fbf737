"""`workbench statusline`: Claude Code's own figures first, colours at the thresholds, formats,
the MEMORY.md badge, a tail-only read of the transcript, and never a blank line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import LiveProject, hook_env

GREEN, YELLOW, RED, BLOCK = "\x1b[32m", "\x1b[33m", "\x1b[31m", "\x1b[1;97;41m"


def payload(
    project: LiveProject,
    used: int | None = None,
    *,
    window: int = 200_000,
    model: str = "claude-sonnet-4-6",
    name: str = "Sonnet 4.6",
    transcript: str | None = None,
) -> dict:
    """A status-line payload shaped like Claude Code's; `used` splits over the usage fields."""
    data: dict = {
        "hook_event_name": "Status",
        "session_id": project.builder.session_id,
        "transcript_path": transcript or str(project.root / "not-written-yet.jsonl"),
        "cwd": str(project.root),
        "model": {"id": model, "display_name": name},
        "workspace": {"current_dir": str(project.root), "project_dir": str(project.root)},
        "version": "2.1.88",
        "cost": {"total_cost_usd": 0.42},
    }
    if used is not None:
        data["context_window"] = {
            "total_input_tokens": 999_999,  # session totals: never the context size
            "total_output_tokens": 55_555,
            "context_window_size": window,
            "current_usage": {
                "input_tokens": 12,
                "output_tokens": 988,
                "cache_creation_input_tokens": 1_000,
                "cache_read_input_tokens": used - 2_000,
            },
        }
    return data


def status(run_cli, data, *flags: str) -> tuple[int, str, str]:
    return run_cli("statusline", *flags, stdin=data)


def test_the_payload_figures_come_first(live_project: LiveProject, run_cli) -> None:
    code, out, err = status(run_cli, payload(live_project, 72_000), "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["source"] == "payload" and data["used"] == 72_000
    assert data["line"] == "Sonnet 4.6 · ctx 72k/167k (43%) · 57% left"
    assert data["thresholds"] == {
        "warning": 147_000,
        "error": 147_000,
        "autocompact": 167_000,
        "blocking": 177_000,
    }


def test_a_1m_window_in_the_payload_moves_the_ladder(live_project: LiveProject, run_cli) -> None:
    # Transcripts never say a session runs with [1m]; the payload's window size does.
    code, out, _ = status(run_cli, payload(live_project, 300_000, window=1_000_000), "--json")
    data = json.loads(out)
    assert data["context_window"] == 1_000_000
    assert data["thresholds"]["autocompact"] == 967_000
    assert data["line"].startswith("Sonnet 4.6 · ctx 300k/967k (31%)")
    _, out, _ = status(run_cli, payload(live_project, 90_000, window=120_000), "--json")
    assert json.loads(out)["thresholds"]["autocompact"] == 120_000 - 20_000 - 13_000


def test_without_figures_the_count_comes_from_the_transcript_end(
    live_project: LiveProject, run_cli
) -> None:
    builder = live_project.builder
    for i in range(40):  # history before a compaction: the line must not read it
        builder.tool_call("Read", {"file_path": f"/repo/old_{i}.py"}, "old line\n" * 2_000)
    builder.compact("Summary:\nearlier work", pre_tokens=150_000)
    builder.prompt("carry on")
    builder.reply("Carrying on.")
    live_project.write()
    data = payload(live_project, transcript=str(live_project.transcript))
    code, out, _ = status(run_cli, data, "--json")
    result = json.loads(out)
    assert code == 0 and result["source"] == "transcript"
    gauge = live_project.engine.context.gauge(str(live_project.transcript))
    assert result["used"] == gauge.used
    assert result["bytes_read"] < result["size_bytes"] / 20  # read from the end only
    assert result["compactions"] == []  # the whole-file scan is skipped


def test_a_new_session_shows_zero(live_project: LiveProject, run_cli) -> None:
    code, out, _ = status(run_cli, payload(live_project))
    assert code == 0 and out == "Sonnet 4.6 · ctx 0/167k (0%) · new session\n"


@pytest.mark.parametrize(
    ("used", "colour", "state"),
    [
        (100_000, GREEN, "40% left"),
        (150_000, YELLOW, "10% until auto-compact"),
        (170_000, RED, "auto-compact due"),
        (178_000, BLOCK, "blocking"),
    ],
)
def test_colours_follow_the_thresholds(
    live_project: LiveProject, run_cli, monkeypatch, used, colour, state
) -> None:
    monkeypatch.delenv("NO_COLOR")
    _, out, _ = status(run_cli, payload(live_project, used), "--format", "{tokens} {state}")
    assert out.strip() == f"{colour}{used // 1000}k\x1b[0m {colour}{state}\x1b[0m"


def test_no_color_and_the_color_flag(live_project: LiveProject, run_cli, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    _, plain, _ = status(run_cli, payload(live_project, 150_000))
    assert "\x1b[" not in plain
    _, forced, _ = status(run_cli, payload(live_project, 150_000), "--color", "always")
    assert YELLOW in forced
    monkeypatch.delenv("NO_COLOR")
    _, never, _ = status(run_cli, payload(live_project, 150_000), "--color", "never")
    assert never == plain


def test_formats_and_the_memory_badge(live_project: LiveProject, run_cli) -> None:
    fmt = "{model} {tokens}/{auto_compact} {badge}"
    _, out, _ = status(run_cli, payload(live_project, 72_000), "--format", fmt)
    assert out == "Sonnet 4.6 72k/167k\n"  # no badge, no trailing space
    lines = "".join(f"- [Note {i}](note_{i}.md) — note {i}\n" for i in range(230))
    (live_project.memory_dir / "MEMORY.md").write_text(lines, encoding="utf-8")
    _, out, _ = status(run_cli, payload(live_project, 72_000), "--format", fmt)
    assert out == "Sonnet 4.6 72k/167k MEMORY.md 230/200 lines\n"
    _, out, _ = status(run_cli, payload(live_project, 72_000), "--format", fmt, "--no-badge")
    assert out == "Sonnet 4.6 72k/167k\n"
    every = "{percent}|{left}|{to_go}|{window}|{source}|{state}"
    _, out, _ = status(run_cli, payload(live_project, 72_000), "--format", every)
    assert out == "43%|57%|95k|200k|payload|57% left\n"


@pytest.mark.parametrize(
    ("stdin", "flags", "line", "reason"),
    [
        ("", (), "ctx ?", "must be a JSON object"),
        ("{oops", (), "ctx ?", "not JSON"),
        ("[1, 2]", (), "ctx ?", "must be a JSON object"),
        ('{"model": {"id": "claude-opus-4-6"}}', (), "claude-opus-4-6 · ctx ?", "neither"),
        (
            '{"model": {"display_name": "Opus"}, "transcript_path": "/x.jsonl"}',
            ("--format", "{model} {nope}"),
            "Opus · ctx ?",
            "unknown field {nope}",
        ),
        ('{"transcript_path": "/x.jsonl"}', ("--format", "{tokens"), "ctx ?", "not a valid"),
    ],
)
def test_bad_input_prints_a_fallback_never_a_blank_line(
    run_cli, stdin, flags, line, reason
) -> None:
    code, out, err = run_cli("statusline", *flags, stdin=stdin)
    # Claude Code blanks the line on a non-zero exit, so the fallback exits 0.
    assert (code, out) == (0, line + "\n")
    assert reason in err and len(err.splitlines()) == 1


def test_a_directory_as_transcript_still_prints_a_line(live_project: LiveProject, run_cli):
    code, out, err = status(run_cli, payload(live_project, transcript=str(live_project.root)))
    assert code == 0 and out.strip()


def test_the_real_process(live_project: LiveProject) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "statusline", "--color", "never"],
        input=json.dumps(payload(live_project, 72_000)),
        capture_output=True,
        text=True,
        env=hook_env(),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "Sonnet 4.6 · ctx 72k/167k (43%) · 57% left\n",
        "",
    )


def test_the_release_that_sends_the_payload_sets_the_ladder(
    live_project: LiveProject, run_cli
) -> None:
    """Claude Code names itself in the payload: 2.1.88 auto-compacts opus-4-5 at 167,000,
    2.1.332 has no threshold compaction for it (spec 08), and the JSON has the gauge's shape."""
    data = payload(live_project, 150_000)
    data["model"] = {"id": "claude-opus-4-5-20251101"}
    shown = {}
    for version in ("2.1.88", "2.1.332"):
        code, out, _ = status(run_cli, {**data, "version": version}, "--json")
        shown[version] = json.loads(out)
        assert code == 0 and shown[version]["claude_version"] == version
        assert shown[version]["claude_version_source"] == "input"
    assert shown["2.1.88"]["thresholds"]["autocompact"] == 167_000
    assert shown["2.1.332"]["thresholds"]["autocompact"] is None
    assert "until auto-compact" in shown["2.1.88"]["line"]
    assert "until auto-compact" not in shown["2.1.332"]["line"]
