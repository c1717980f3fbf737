"""`workbench context` and `workbench sessions` end to end: session naming, keys, output."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.devtools.synth import SessionBuilder
from workbench.engine.claude_paths import project_root_for, sanitize_path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    folder = config / "projects" / sanitize_path(project_root_for(root))
    for number in (1, 2):
        b = SessionBuilder(
            seed=number, session_id=f"{number}{number}{number}aaaaa-0000-4000-8000-000000000000"
        )
        b.prompt(f"Task {number}")
        b.tool_call("Read", {"file_path": "/p/src/tax.py"}, "x = 1\n" * (400 * number))
        b.reply("Done.")
        b.write(folder / f"{b.session_id}.jsonl")
    return root


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_context_json_names_sessions_like_the_other_commands(project, capsys):
    code, out, err = run(capsys, "context", "--session", "222", "--project", str(project), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["transcript"].endswith("222aaaaa-0000-4000-8000-000000000000.jsonl")
    assert data["call_count"] == data["reconciled_calls"] == 2
    for call in data["calls"]:
        assert sum(call["categories"].values()) == call["estimate"]
        assert call["difference"] == call["recorded"] - call["estimate"]
    assert data["largest"][0]["label"] == "Read /p/src/tax.py"
    assert data["largest"][0]["compaction"].startswith("summarised")
    assert data["claude_version"]


def test_context_human_output_and_bad_session(project, capsys):
    code, out, _ = run(capsys, "context", "111", "--project", str(project), "--top", "1")
    assert code == 0
    assert "In context now" in out and "Largest items now" in out
    assert "Read /p/src/tax.py at call 2:" in out
    assert "difference" in out
    code, _, err = run(capsys, "context", "--session", "999", "--project", str(project))
    assert code != 0 and "no session" in err and "Traceback" not in err


def test_sessions_json_and_table(project, capsys):
    code, out, _ = run(capsys, "sessions", "--project", str(project), "--json")
    data = json.loads(out)
    assert code == 0 and data["totals"]["sessions"] == 2 and data["read"] == 2
    assert [s["title"] for s in data["sessions"]] == ["Task 1", "Task 2"]
    code, out, _ = run(capsys, "sessions", "--project", str(project))
    assert code == 0 and "2 sessions ·" in out and "2 summarised from the cache" in out


def test_an_item_not_yet_sent_reads_the_same_in_the_cli_and_the_pane(project, capsys):
    from workbench.engine import Engine
    from workbench.ui.panes.context_view import largest_content

    config = Path(os.environ["CLAUDE_CONFIG_DIR"])
    folder = config / "projects" / sanitize_path(project_root_for(project))
    b = SessionBuilder(seed=9, session_id="333aaaaa-0000-4000-8000-000000000000")
    b.prompt("Task 3")
    b.tool_call("Read", {"file_path": "/p/src/vat.py"}, "y = 2\n" * 900)  # no call after it
    b.write(folder / f"{b.session_id}.jsonl")
    code, out, err = run(capsys, "context", "333", "--project", str(project), "--top", "1")
    assert code == 0, err
    assert "Read /p/src/vat.py after call 1, sent with the next:" in out
    assert "at call 2:" not in out
    engine = Engine.open(project, config_home=str(config))
    report = engine.context.attribution(engine.context.resolve_transcript(session="333"))
    shown = largest_content(report, limit=1).plain.split("\n")[1].strip()
    assert shown in out


def test_context_json_lists_the_items_each_call_added(project, capsys):
    code, out, err = run(capsys, "context", "222", "--project", str(project), "--json")
    assert code == 0, err
    calls = json.loads(out)["calls"]
    held: dict[str, int] = {}
    for call in calls:
        assert {item["call"] for item in call["added"]} <= {call["call"]}
        for item in call["added"]:
            held[item["category"]] = held.get(item["category"], 0) + item["tokens"]
        assert held == {k: v for k, v in call["categories"].items() if k != "overhead"}
        assert call["items_held"] >= call["items_added"] == len(call["added"])
    read = next(i for i in calls[1]["added"] if i["category"] == "tool_result:Read")
    assert (read["tool"], read["path"], read["in_context"]) == ("Read", "/p/src/tax.py", True)
    assert read["tokens"] == max(i["tokens"] for i in calls[1]["added"])


def test_context_call_prints_the_items_of_one_call(project, capsys):
    code, out, err = run(capsys, "context", "222", "--project", str(project), "--call", "2")
    assert code == 0, err
    assert "Call 2 of 2" in out and "Items it sent" in out
    lines = out.splitlines()
    first = lines.index(next(line for line in lines if "Items it sent" in line)) + 1
    assert lines[first].strip().startswith("Read /p/src/tax.py at call 2:")
    assert "· new" in lines[first] and "micro-compaction:" in lines[first + 1]
    code, out, _ = run(
        capsys, "context", "222", "--project", str(project), "--call", "-1", "--top", "1"
    )
    assert code == 0 and "Call 2 of 2" in out and "more (--top to list more)" in out
    code, out, _ = run(capsys, "context", "222", "--project", str(project), "--call", "1", "--json")
    data = json.loads(out)["call"]
    assert data["call"] == 1 and len(data["items"]) == data["items_held"]
    assert (
        sum(i["tokens"] for i in data["items"]) + data["categories"].get("overhead", 0)
        == (data["estimate"])
    )
    code, _, err = run(capsys, "context", "222", "--project", str(project), "--call", "3")
    assert code == 2 and "--call 3: the session has 2 API calls" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
