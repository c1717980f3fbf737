"""`workbench integrate claude`: a diff first, only the workbench's keys touched in the file's
own formatting, idempotent, and a removal that gives the original bytes back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workbench.engine.errors import ConflictError
from workbench.live import claude_settings as cs
from workbench.live.json_text import remove_path, set_path

from .conftest import LiveProject

# Unrelated settings in a hand-edited style: four-space indent, inline arrays, another hook,
# non-ASCII text, and keys in an order of the user's choosing.
SETTINGS = """{
    "model": "opus",
    "permissions": {
        "allow": ["Bash(npm test:*)", "Read(~/notes/**)"],
        "deny": []
    },
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi"}]}]
    },
    "env": {"GREETING": "grüß dich"},
    "includeCoAuthoredBy": false
}
"""
GLOBAL = (
    '{\n  "numStartups": 12,\n  "mcpServers": {\n    "other": {"command": "other-server"}\n  },'
    '\n  "projects": {\n    "/code/app": {\n      "allowedTools": []\n    }\n  }\n}'
)
OURS = {"statusLine", "SessionStart", "PreCompact", "PostCompact", "memory-workbench"}


@pytest.fixture
def settings(live_project: LiveProject) -> dict[str, Path]:
    home = Path(os.environ["CLAUDE_CONFIG_DIR"])
    home.mkdir(parents=True, exist_ok=True)
    user = home / "settings.json"
    user.write_text(SETTINGS, encoding="utf-8")
    global_config = home / ".claude.json"
    global_config.write_text(GLOBAL, encoding="utf-8")
    return {"settings": user, "global": global_config, "root": live_project.root}


def integrate(run_cli, root: Path, *flags: str):
    return run_cli("integrate", "claude", "--project", str(root), "--command", "workbench", *flags)


def strip_ours(data: dict) -> dict:
    data = json.loads(json.dumps(data))
    data.pop("statusLine", None)
    for event in ("SessionStart", "PreCompact", "PostCompact"):
        data.get("hooks", {}).pop(event, None)
    data.get("mcpServers", {}).pop("memory-workbench", None)
    return data


def backups(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".workbench-backup-" in p.name)


def test_shows_the_diff_adds_only_its_keys_and_is_idempotent(settings, run_cli) -> None:
    code, out, err = integrate(run_cli, settings["root"], "--yes")
    assert code == 0, err
    # The diff came first: every added line of ours, and the one line that gained a comma.
    assert f"--- {settings['settings']}" in out and f"+++ {settings['settings']}" in out
    assert '+                        "command": "workbench hook PreCompact",' in out
    assert '-    "includeCoAuthoredBy": false' in out
    assert '+    "includeCoAuthoredBy": false,' in out
    assert '+      "command": "workbench",' in out  # the MCP server in the global config
    after = settings["settings"].read_text(encoding="utf-8")
    data = json.loads(after)
    assert data["statusLine"] == {
        "type": "command",
        "command": "workbench statusline",
        "padding": 0,
    }
    for event, timeout in (("SessionStart", 10), ("PreCompact", 120), ("PostCompact", 60)):
        assert data["hooks"][event] == [
            {
                "hooks": [
                    {"type": "command", "command": f"workbench hook {event}", "timeout": timeout}
                ]
            }
        ]
    assert strip_ours(data) == json.loads(SETTINGS)
    # Untouched members keep their exact text (the last ones of an object gain a comma).
    lines = after.splitlines()
    for line in SETTINGS.splitlines():
        assert line in lines or line + "," in lines, line
    assert '    "statusLine": {\n        "type": "command",' in after  # the file's own indent
    global_data = json.loads(settings["global"].read_text())
    assert global_data["mcpServers"]["memory-workbench"] == {
        "type": "stdio",
        "command": "workbench",
        "args": ["mcp"],
    }
    assert '    "other": {"command": "other-server"},' in settings["global"].read_text()
    assert strip_ours(global_data) == json.loads(GLOBAL)
    made = backups(settings["settings"].parent)
    assert len(made) == 2
    assert (settings["settings"].parent / made[1]).read_text() == SETTINGS

    before = (settings["settings"].read_bytes(), settings["global"].read_bytes())
    code, out, _ = integrate(run_cli, settings["root"], "--yes")
    assert code == 0 and "nothing to do: already in place" in out
    assert (settings["settings"].read_bytes(), settings["global"].read_bytes()) == before
    assert backups(settings["settings"].parent) == made


def test_removal_restores_the_original_bytes(settings, run_cli) -> None:
    original = (settings["settings"].read_bytes(), settings["global"].read_bytes())
    assert integrate(run_cli, settings["root"], "--yes")[0] == 0
    code, out, _ = run_cli("integrate", "claude", "--remove", "--yes")
    assert code == 0 and "would restore the original of" in out
    assert (settings["settings"].read_bytes(), settings["global"].read_bytes()) == original
    assert backups(settings["settings"].parent) == []  # the restored originals were the backups
    code, out, _ = run_cli("integrate", "claude", "--remove", "--yes")
    assert code == 0 and "nothing to do: already removed" in out


def test_removal_after_other_changes_takes_out_only_the_workbench(settings, run_cli) -> None:
    assert integrate(run_cli, settings["root"], "--yes")[0] == 0
    edited = (
        settings["settings"]
        .read_text()
        .replace('"model": "opus",', '"model": "opus",\n    "theme": "dark",')
    )
    settings["settings"].write_text(edited)
    code, out, _ = run_cli("integrate", "claude", "--remove", "--yes")
    assert code == 0 and "would change" in out
    data = json.loads(settings["settings"].read_text())
    assert data["theme"] == "dark"
    assert data == {**json.loads(SETTINGS), "theme": "dark"}
    assert "PreToolUse" in data["hooks"]
    assert '"allow": ["Bash(npm test:*)", "Read(~/notes/**)"],' in settings["settings"].read_text()


def test_a_users_own_status_line_is_kept_unless_replaced(settings, run_cli) -> None:
    mine = {"type": "command", "command": "npx ccstatusline"}
    settings["settings"].write_text(json.dumps({"statusLine": mine}, indent=2))
    code, out, _ = integrate(run_cli, settings["root"], "--yes", "--no-mcp")
    assert code == 0 and "kept your own status line" in out
    assert json.loads(settings["settings"].read_text())["statusLine"] == mine
    code, out, _ = integrate(run_cli, settings["root"], "--yes", "--no-mcp", "--replace-statusline")
    assert code == 0
    assert json.loads(settings["settings"].read_text())["statusLine"]["command"] == (
        "workbench statusline"
    )
    settings["settings"].write_text(settings["settings"].read_text() + "\n")  # someone else
    run_cli("integrate", "claude", "--remove", "--yes", "--no-mcp")
    data = json.loads(settings["settings"].read_text())
    assert data["statusLine"] == mine and "SessionStart" not in data.get("hooks", {})


def test_dry_run_and_no_answer_change_nothing(settings, run_cli) -> None:
    before = settings["settings"].read_bytes()
    code, out, _ = integrate(run_cli, settings["root"], "--dry-run")
    assert code == 0 and "dry run: nothing was changed" in out and "+++" in out
    code, out, err = integrate(run_cli, settings["root"])  # stdin is not a terminal
    assert code == 1 and "nothing was changed" in err
    assert settings["settings"].read_bytes() == before
    assert backups(settings["settings"].parent) == []


def test_invalid_settings_are_refused(settings, run_cli) -> None:
    settings["settings"].write_text('{"model": "opus",}')
    code, _, err = integrate(run_cli, settings["root"], "--yes")
    assert code == 2 and "is not valid JSON" in err and "nothing was changed" in err
    assert settings["settings"].read_text() == '{"model": "opus",}'


def test_project_scope_uses_the_projects_files(settings, run_cli) -> None:
    root = settings["root"]
    code, _, _ = run_cli(
        "integrate", "claude", "--scope", "project", "--project", str(root), "--yes"
    )
    assert code == 0
    project_settings = json.loads((root / ".claude" / "settings.json").read_text())
    assert project_settings["statusLine"]["command"] == "workbench statusline"
    assert json.loads((root / ".mcp.json").read_text())["mcpServers"]["memory-workbench"] == {
        "type": "stdio",
        "command": "workbench",
        "args": ["mcp"],
    }
    assert settings["settings"].read_text() == SETTINGS  # the user file is untouched
    run_cli(
        "integrate", "claude", "--scope", "project", "--project", str(root), "--remove", "--yes"
    )
    assert not (root / ".mcp.json").exists() and not (root / ".claude" / "settings.json").exists()


def test_extraction_on_stop_is_opt_in(settings, run_cli) -> None:
    integrate(run_cli, settings["root"], "--yes", "--no-mcp")
    assert "Stop" not in json.loads(settings["settings"].read_text())["hooks"]
    integrate(run_cli, settings["root"], "--yes", "--no-mcp", "--extract-on-stop")
    stop = json.loads(settings["settings"].read_text())["hooks"]["Stop"]
    assert stop[0]["hooks"][0]["command"] == "workbench hook Stop --propose"


def test_a_file_changed_after_the_plan_is_not_overwritten(tmp_path: Path) -> None:
    target = cs.Target(tmp_path / "settings.json", "settings")
    target.path.write_text("{}\n")
    states = cs.StateStore(tmp_path / "state")
    changes = cs.plan_install([target], cs.Wanted(launcher=("workbench",)), states)
    target.path.write_text('{"model": "sonnet"}\n')  # Claude Code wrote meanwhile
    with pytest.raises(ConflictError, match="changed since the plan was made"):
        cs.apply(changes, states)
    assert target.path.read_text() == '{"model": "sonnet"}\n'


def test_nested_edits_keep_the_surrounding_text() -> None:
    text = '{\n  "a": {"x": 1},\n  "b": [1, 2]\n}\n'
    added = set_path(text, ("a", "y"), {"z": True})
    assert added == '{\n  "a": {"x": 1, "y": {\n      "z": true\n    }},\n  "b": [1, 2]\n}\n'
    assert remove_path(added, ("a", "y")) == text
    created = set_path(text, ("c", "d"), 1)
    assert json.loads(created) == {"a": {"x": 1}, "b": [1, 2], "c": {"d": 1}}
    assert created.startswith('{\n  "a": {"x": 1},\n  "b": [1, 2],\n  "c": {')
