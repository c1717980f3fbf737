"""`workbench recall` and `workbench prompt` through `main(argv)`: keys, exit codes, errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from workbench.cli import main

RECALL_KEYS = {"query", "engine", "candidates", "manifest", "selected", "near_misses", "request"}
SELECTED_KEYS = {"path", "type", "description", "age", "freshness_note", "score", "reasons"}


def run(capsys, *argv: str) -> tuple[int, object, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    data = json.loads(out) if "--json" in argv and out.strip() else out
    return code, data, err


def test_offline_recall_json_keys(install_sample, capsys):
    install_sample("healthy")
    code, data, err = run(
        capsys, "recall", "can we deploy checkout during the holiday freeze?", "--json"
    )
    assert code == 0 and err == ""
    assert set(data) >= RECALL_KEYS
    assert data["engine"] == "offline" and data["request"] is None
    assert data["selected"][0]["path"] == "project_release_freeze.md"
    assert set(data["selected"][0]) >= SELECTED_KEYS
    assert all(s["path"] in data["candidates"] for s in data["selected"])
    assert all({"path", "score", "why_not"} <= set(m) for m in data["near_misses"])
    assert data["manifest"].count("\n") + 1 == len(data["candidates"])


def test_flags_feed_the_rules(install_sample, capsys):
    install_sample("healthy")
    code, data, _ = run(
        capsys,
        "recall",
        "can we deploy checkout during the holiday freeze?",
        "--engine",
        "offline",
        "--recent-tools",
        "Bash, Read",
        "--surfaced",
        "project_release_freeze.md,feedback_pnpm.md",
        "--json",
    )
    assert code == 0
    assert data["recent_tools"] == ["Bash", "Read"]
    assert "project_release_freeze.md" not in data["candidates"]
    assert "feedback_pnpm.md" not in data["candidates"]
    assert "project_release_freeze.md" not in [s["path"] for s in data["selected"]]
    assert data["surfacing"]["session_bytes_before"] > 0


def test_llm_recall_against_the_fake_api(install_sample, fake_messages_api, capsys):
    install_sample("healthy")
    fake_messages_api.reply_json({"selected_memories": ["project_release_freeze.md", "nope.md"]})
    code, data, _ = run(capsys, "recall", "holiday deploys?", "--engine", "llm", "--json")
    assert code == 0
    assert data["engine"] == "llm"
    assert data["request"] == fake_messages_api.message_requests[0].body
    assert [s["path"] for s in data["selected"]] == ["project_release_freeze.md"]
    assert data["rejected_names"] == ["nope.md"]


def test_llm_without_a_key_is_a_clean_exit_2(install_sample, capsys):
    install_sample("healthy")
    code, out, err = run(capsys, "recall", "holiday deploys?", "--engine", "llm")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "ANTHROPIC_API_KEY" in err and "Traceback" not in err


def test_api_error_is_one_line_and_exit_2(install_sample, fake_messages_api, capsys):
    install_sample("healthy")
    fake_messages_api.reply_error(529, "overloaded_error", "busy")
    code, out, err = run(capsys, "recall", "holiday deploys?", "--engine", "llm", "--json")
    assert code == 2 and out == "" and "overloaded" in err and err.count("\n") == 1


def test_auto_fallback_warns_on_stderr(install_sample, fake_messages_api, capsys):
    install_sample("healthy")
    fake_messages_api.reply_error(500, "api_error")
    code, data, err = run(capsys, "recall", "holiday deploys?", "--json")
    assert code == 0 and data["engine"] == "offline" and data["error"]["http_status"] == 500
    assert "offline ranking" in err


def test_recall_from_a_transcript(install_sample, capsys, tmp_path):
    sample = install_sample("healthy")
    freeze = str(sample.memory_dir / "project_release_freeze.md")
    rows = [
        {"type": "user", "uuid": "1", "message": {"role": "user", "content": "hi there"}},
        {
            "type": "attachment",
            "uuid": "2",
            "attachment": {
                "type": "relevant_memories",
                "memories": [{"path": freeze, "content": "x" * 70_000, "mtimeMs": 0}],
            },
        },
        {
            "type": "user",
            "uuid": "3",
            "message": {"role": "user", "content": "can we deploy checkout in December?"},
        },
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code, data, _ = run(capsys, "recall", "--transcript", str(path), "--json")
    assert code == 0
    assert data["query"] == "can we deploy checkout in December?"
    assert "project_release_freeze.md" not in data["candidates"]
    assert data["surfacing"]["session_bytes_before"] == 70_000
    assert data["surfacing"]["would_inject"] is False


def test_bad_input(install_sample, capsys, tmp_path):
    install_sample("healthy")
    assert run(capsys, "recall", "   ")[0] == 2
    code, _, err = run(capsys, "recall", "x y", "--transcript", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "Traceback" not in err
    with pytest.raises(SystemExit) as caught:
        main(["recall", "x y", "--engine", "magic"])
    assert caught.value.code == 2


def test_human_output_without_json(install_sample, capsys):
    install_sample("warnings")
    code, out, _ = run(capsys, "recall", "can I deploy billing this Friday?", "--show-injected")
    assert code == 0
    assert "1. feedback_no_friday_deploys.md" in out
    assert "<system-reminder>" in out and "Near misses" in out


def test_prompt_json_and_text(install_sample, capsys, monkeypatch):
    install_sample("healthy")
    code, data, _ = run(capsys, "prompt", "--json")
    assert code == 0 and set(data) >= {"mode", "text", "tokens"}
    assert data["mode"] == "combined"  # the healthy sample has a team folder
    code, data, _ = run(capsys, "prompt", "--mode", "individual", "--skip-index", "--json")
    assert data["mode"] == "individual" and "Step 2" not in data["text"]
    monkeypatch.setenv("CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES", "Prefer British spelling.")
    code, out, err = run(capsys, "prompt", "--mode", "daily-log")
    assert code == 0 and out.startswith("# auto memory") and "daily-log prompt" in err
    code, out, _ = run(capsys, "prompt")
    assert out.rstrip().endswith("Prefer British spelling.")


def test_prompt_when_auto_memory_is_off(install_sample, capsys, monkeypatch):
    install_sample("healthy")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    code, data, _ = run(capsys, "prompt", "--json")
    assert code == 0 and data["mode"] == "disabled" and data["text"] == ""


def test_cli_module_stays_light():
    code = "import workbench.cli as c; c.build_parser(); import sys; print('bm25s' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
