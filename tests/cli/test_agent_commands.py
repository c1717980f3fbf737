"""`extract`, `log`, `dream`, `review` and `session-memory update` through `main(argv)`."""

from __future__ import annotations

import argparse
import json
import os
import uuid
from pathlib import Path

import pytest

from workbench.cli import main

EXTRACT_KEYS = {
    "transcript",
    "status",
    "engine",
    "reason",
    "notice",
    "gates",
    "new_messages",
    "cursor_before",
    "cursor_after",
    "turns",
    "written_paths",
    "memory_paths",
    "team_count",
    "summary",
    "changes",
    "denied_calls",
    "request",
}


def run(capsys, *argv: str) -> tuple[int, object, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    data = json.loads(out) if "--json" in argv and out.strip() else out
    return code, data, err


def write_session(sample, text: str = "Remember: QA signs off every release on Thursdays.") -> Path:
    session = str(uuid.uuid4())
    path = Path(sample.transcripts_dir) / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = [
        {"type": "user", "uuid": str(uuid.uuid4()), "message": {"role": "user", "content": text}},
        {
            "type": "assistant",
            "uuid": str(uuid.uuid4()),
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "text", "text": "Noted."}],
            },
        },
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def script_save(fake, memory: Path, name: str = "project_qa_thursdays.md") -> None:
    fake.reply_tool_use(
        [
            (
                "Write",
                {
                    "file_path": str(memory / name),
                    "content": "---\nname: QA day\ndescription: QA signs off releases on "
                    "Thursdays\ntype: project\n---\n\nQA signs off every release on Thursdays.\n",
                },
            )
        ]
    )
    fake.reply_text("Saved.")


def no_traceback(err: str) -> bool:
    return "Traceback" not in err and err.count("\n") <= 1


# --- extract -----------------------------------------------------------------------------------


def test_extract_without_a_key_is_a_dry_run_that_says_so(install_sample, capsys) -> None:
    sample = install_sample("healthy")
    transcript = write_session(sample)
    code, data, err = run(capsys, "extract", str(transcript), "--json")
    assert code == 0
    assert "ANTHROPIC_API_KEY" in err and "dry run" in err
    assert set(data) >= EXTRACT_KEYS
    assert data["status"] == "dry_run" and data["engine"] == "dry-run"
    assert data["request"]["messages"][-1]["content"][-1]["text"].startswith(
        "You are now working as the memory extraction subagent"
    )
    # Human output also says it and shows the prompt.
    code, text, err = run(capsys, "extract", transcript.stem)
    assert code == 0 and "dry run" in text and "## Existing memory files" in text


def test_extract_apply_without_a_key_is_a_usage_error(install_sample, capsys) -> None:
    sample = install_sample("healthy")
    transcript = write_session(sample)
    code, out, err = run(capsys, "extract", str(transcript), "--apply")
    assert code == 2 and out == ""
    assert "ANTHROPIC_API_KEY" in err and no_traceback(err)


def test_extract_bad_transcript_and_flags(install_sample, capsys) -> None:
    install_sample("healthy")
    code, _, err = run(capsys, "extract", "no-such-session")
    assert code == 2 and no_traceback(err)
    with pytest.raises(SystemExit) as caught:
        main(["extract", "x", "--dry-run", "--apply"])
    assert caught.value.code == 2


def test_extract_then_review_accept(install_sample, fake_messages_api, capsys) -> None:
    sample = install_sample("healthy")
    memory = Path(sample.memory_dir)
    transcript = write_session(sample)
    script_save(fake_messages_api, memory)
    code, data, err = run(capsys, "extract", str(transcript), "--json")
    assert code == 0, err
    assert data["status"] == "ran" and data["summary"] == "● Saved 1 memory"
    assert not (memory / "project_qa_thursdays.md").exists()
    proposal_id = data["changes"][0]["proposal_id"]

    code, listed, _ = run(capsys, "review", "list", "--json")
    assert [p["id"] for p in listed] == [proposal_id]
    # The scripted model wrote the file but no index line: the list says what that means.
    assert listed[0]["unindexed"] is True
    code, human, _ = run(capsys, "review", "list")
    assert "▲ no index line: nothing in MEMORY.md or the queue points at it" in human
    code, shown, _ = run(capsys, "review", "show", proposal_id[:10])
    assert "+++ b/project_qa_thursdays.md" in shown

    code, accepted, _ = run(capsys, "review", "accept", proposal_id, "--json")
    assert code == 0 and accepted["accepted"][0]["path"] == "project_qa_thursdays.md"
    assert "Thursdays" in (memory / "project_qa_thursdays.md").read_text()
    code, history, _ = run(capsys, "history", "--json")
    assert history[0]["action"] == "extraction-apply"

    # Running again finds nothing new: the cursor moved.
    code, again, _ = run(capsys, "extract", str(transcript), "--json")
    assert again["status"] == "nothing_new"


def test_accept_conflict_and_reject(install_sample, fake_messages_api, capsys) -> None:
    sample = install_sample("healthy")
    memory = Path(sample.memory_dir)
    script_save(fake_messages_api, memory, "feedback_pnpm.md")
    code, data, _ = run(capsys, "extract", str(write_session(sample)), "--json")
    proposal_id = data["changes"][0]["proposal_id"]
    (memory / "feedback_pnpm.md").write_text("edited by hand meanwhile\n")
    code, result, err = run(capsys, "review", "accept", proposal_id, "--json")
    assert code == 1 and "changed" in err and no_traceback(err)
    assert result["failed"][0]["id"] == proposal_id
    assert (memory / "feedback_pnpm.md").read_text() == "edited by hand meanwhile\n"
    code, _, _ = run(capsys, "review", "reject", "--all")
    assert code == 0
    code, listed, _ = run(capsys, "review", "list", "--json")
    assert listed == []


def test_extract_apply_writes_now(install_sample, fake_messages_api, capsys) -> None:
    sample = install_sample("healthy")
    memory = Path(sample.memory_dir)
    script_save(fake_messages_api, memory)
    code, data, _ = run(capsys, "extract", str(write_session(sample)), "--apply", "--json")
    assert code == 0 and data["changes"][0]["outcome"] == "applied"
    assert (memory / "project_qa_thursdays.md").exists()
    code, _, _ = run(capsys, "undo")
    assert code == 0 and not (memory / "project_qa_thursdays.md").exists()


def test_extract_api_error_is_one_clean_line(install_sample, fake_messages_api, capsys) -> None:
    sample = install_sample("healthy")
    fake_messages_api.reply_error(401, "authentication_error", "bad key")
    code, out, err = run(capsys, "extract", str(write_session(sample)))
    assert code == 2 and out == "" and no_traceback(err)
    assert "refused the key" in err


def test_team_secrets_are_refused_and_never_echoed(
    install_sample, fake_messages_api, capsys
) -> None:
    sample = install_sample("healthy")
    memory = Path(sample.memory_dir)
    token = "gh" + "p_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    fake_messages_api.reply_tool_use(
        [("Write", {"file_path": str(memory / "team" / "ci.md"), "content": f"use {token}"})]
    )
    fake_messages_api.reply_text(f"I tried to save {token}")
    code, data, err = run(capsys, "extract", str(write_session(sample)), "--apply", "--json")
    assert code == 0 and data["changes"] == []
    assert data["tool_calls"][0]["is_error"]
    assert token not in json.dumps(data) and token not in err
    assert not (memory / "team" / "ci.md").exists()


def test_a_refused_write_is_said_in_the_human_output(
    install_sample, fake_messages_api, capsys
) -> None:
    sample = install_sample("healthy")
    memory = Path(sample.memory_dir)
    token = "gh" + "p_" + "Z9x8C7v6B5n4M3a2S1d0F9g8H7j6K5l4Q3w2"
    fake_messages_api.reply_tool_use(
        [("Write", {"file_path": str(memory / "team" / "ci.md"), "content": f"use {token}"})]
    )
    fake_messages_api.reply_text("done")
    code, out, err = run(capsys, "extract", str(write_session(sample)), "--apply")
    assert code == 0 and token not in out + err
    assert "failed Write:" in out and "GitHub" in out


def test_accept_time_secret_guard_is_exit_1(install_sample, capsys) -> None:
    from workbench.engine import Engine
    from workbench.engine.agents.review_queue import ReviewQueue
    from workbench.engine.agents.tools import StagedFile

    sample = install_sample("healthy")
    memory = Path(sample.memory_dir)
    token = "gh" + "p_" + "M1n2B3v4C5x6Z7l8K9j0H1g2F3d4S5a6P7o8"
    queue = ReviewQueue(Engine.open(sample.project_root))
    (proposal,) = queue.propose(
        [StagedFile(str(memory / "team" / "deploy.md"), None, f"deploy key {token}\n")],
        source="extract",
    )
    code, out, err = run(capsys, "review", "accept", proposal.id)
    assert code == 1 and "GitHub" in err and token not in err + out
    assert not (memory / "team" / "deploy.md").exists()


# --- log ---------------------------------------------------------------------------------------


def test_log_appends_to_todays_file(install_sample, capsys) -> None:
    sample = install_sample("healthy")
    code, data, err = run(capsys, "log", "Chose", "Stripe", "webhooks", "--json")
    assert code == 0 and err == ""
    path = Path(data["abs_path"])
    assert path.is_relative_to(Path(sample.memory_dir) / "logs")
    assert path.read_text().endswith(f"{data['line']}\n")
    assert data["line"].endswith(" Chose Stripe webhooks")
    code, _, err = run(capsys, "log", "   ")
    assert code == 2 and no_traceback(err)


# --- dream -------------------------------------------------------------------------------------


def test_dream_without_a_key_shows_the_request(install_sample, capsys) -> None:
    sample = install_sample("healthy")
    code, data, err = run(capsys, "dream", "--json")
    assert code == 0 and "ANTHROPIC_API_KEY" in err
    assert data["status"] == "dry_run"
    assert data["request"]["messages"][0]["content"].startswith("# Dream")
    assert not Path(sample.memory_dir, ".consolidate-lock").exists()
    code, _, err = run(capsys, "dream", "--apply")
    assert code == 2 and no_traceback(err)


def test_dream_dry_run_with_a_key_shows_the_diff_only(
    install_sample, fake_messages_api, capsys
) -> None:
    sample = install_sample("healthy")
    memory = Path(sample.memory_dir)
    before = (memory / "MEMORY.md").read_text()
    fake_messages_api.reply_tool_use(
        [
            (
                "Edit",
                {
                    "file_path": str(memory / "MEMORY.md"),
                    "old_string": before.splitlines()[0],
                    "new_string": before.splitlines()[0] + " (checked)",
                },
            )
        ]
    )
    fake_messages_api.reply_text("Tidied the index.")
    code, data, _ = run(capsys, "dream", "--dry-run", "--json")
    assert code == 0 and data["changes"][0]["outcome"] == "shown"
    assert "(checked)" in data["changes"][0]["diff"]
    assert (memory / "MEMORY.md").read_text() == before
    assert data["lock_rolled_back"] and not (memory / ".consolidate-lock").exists()


# --- session-memory update ---------------------------------------------------------------------


def _session_args(sample, **kw) -> argparse.Namespace:
    base = {"session": None, "file": None, "transcript": None, "dry_run": False, "json": True}
    base.update(kw)
    return argparse.Namespace(project=str(sample.project_root), **base)


def test_session_memory_update_entry_point(install_sample, fake_messages_api, capsys) -> None:
    from workbench.commands.agents import run_session_memory_update

    sample = install_sample("healthy")
    transcript = write_session(sample)
    code = run_session_memory_update(
        _session_args(sample, transcript=str(transcript), dry_run=True)
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["status"] == "dry_run" and fake_messages_api.requests == []
    notes = Path(data["path"])
    assert not notes.exists()

    fake_messages_api.reply_tool_use(
        [
            (
                "Edit",
                {
                    "file_path": str(notes),
                    "old_string": "Immediate next steps._\n",
                    "new_string": "Immediate next steps._\nRecording the QA sign-off day.\n",
                },
            )
        ]
    )
    fake_messages_api.reply_text("done")
    code = run_session_memory_update(_session_args(sample, session=transcript.stem))
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["status"] == "updated" and data["created"]
    assert "Recording the QA sign-off day." in notes.read_text()
    assert oct(os.stat(notes).st_mode & 0o777) == "0o600"


def test_session_memory_update_without_a_key(install_sample, capsys) -> None:
    from workbench.commands.agents import run_session_memory_update

    sample = install_sample("healthy")
    transcript = write_session(sample)
    code = run_session_memory_update(_session_args(sample, session=transcript.stem))
    out, err = capsys.readouterr()
    assert code == 0 and "ANTHROPIC_API_KEY" in err
    assert json.loads(out)["status"] == "dry_run"


@pytest.mark.parametrize("action", ["accept", "reject"])
def test_all_on_an_empty_queue_is_nothing_to_do_not_a_mistake(install_sample, capsys, action):
    install_sample("healthy")
    code, out, err = run(capsys, "review", action, "--all")
    assert code == 0 and err == "" and "nothing to do" in out
