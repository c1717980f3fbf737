"""The Claude Code plugin folder: the layout the plugin system installs, and every command it
runs is one the CLI accepts, configured as `integrate claude` would configure it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from workbench.cli import build_parser
from workbench.live import claude_settings as cs
from workbench.live.hooks import EVENTS

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "plugins" / "memory-workbench"


def test_the_layout_claude_code_installs() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "memory-workbench"
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"]) and manifest["description"]
    # Only the manifest lives in .claude-plugin; components sit at the plugin root.
    assert sorted(p.name for p in (PLUGIN / ".claude-plugin").iterdir()) == ["plugin.json"]
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    [entry] = market["plugins"]
    assert entry["name"] == manifest["name"]
    assert (REPO / entry["source"]).resolve() == PLUGIN.resolve()


def test_hooks_match_what_integrate_writes() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(cs.DEFAULT_EVENTS) and set(hooks) <= set(EVENTS)
    wanted = cs.Wanted(launcher=("workbench",))
    assert hooks == cs.with_hooks({}, wanted, cs.DEFAULT_EVENTS)
    parser = build_parser()
    for event, groups in hooks.items():
        words = shlex.split(groups[0]["hooks"][0]["command"])
        assert words[0] == "workbench"
        args = parser.parse_args(words[1:])
        assert args.command == "hook" and args.event == event


def test_the_mcp_server_config() -> None:
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"memory-workbench": cs.mcp_entry(cs.Wanted(launcher=("workbench",)))}


COMMANDS = sorted((PLUGIN / "commands").glob("*.md"))


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: p.stem)
def test_each_slash_command_runs_a_real_workbench_command(path: Path) -> None:
    text = path.read_text()
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert match, "frontmatter"
    front = dict(line.split(": ", 1) for line in match.group(1).splitlines())
    assert front["description"]
    runs = re.findall(r"!`([^`]+)`", text)
    assert len(runs) == 1
    words = shlex.split(runs[0].replace("$ARGUMENTS", "a prompt"))
    assert words[0] == "workbench"
    build_parser().parse_args(words[1:])  # exits (fails the test) on a bad command line
    allowed = front["allowed-tools"]
    assert allowed == f"Bash(workbench {words[1]}:*)"


def test_the_four_commands_are_there() -> None:
    assert [p.stem for p in COMMANDS] == [
        "compaction-drop",
        "compaction-lost",
        "recall",
        "what-loaded",
    ]
