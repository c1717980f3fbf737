"""`createAutoMemCanUseTool`: what the memory agents may and may not call."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.engine.agents.permissions import (
    create_auto_mem_can_use_tool,
    create_notes_can_use_tool,
    path_inside_folder,
)


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "projects" / "-p" / "memory"
    (folder / "team").mkdir(parents=True)
    return folder


def _can(memory_dir: Path):
    return create_auto_mem_can_use_tool(str(memory_dir) + "/")


@pytest.mark.parametrize("tool", ["Read", "Grep", "Glob"])
def test_read_tools_are_unrestricted(memory_dir: Path, tool: str) -> None:
    decision = _can(memory_dir)(tool, {"file_path": "/etc/hostname", "path": "/"})
    assert decision.allowed


def test_bash_allows_read_only_and_refuses_the_rest(memory_dir: Path) -> None:
    can = _can(memory_dir)
    assert can("Bash", {"command": "ls -la"}).allowed
    refused = can("Bash", {"command": "rm -rf ~"})
    assert not refused.allowed
    assert "read" in refused.message and "rm" in refused.message
    assert not can("Bash", {"command": 42}).allowed
    assert not can("Bash", {}).allowed


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_writes_inside_the_memory_folder_are_allowed(memory_dir: Path, tool: str) -> None:
    can = _can(memory_dir)
    assert can(tool, {"file_path": f"{memory_dir}/user_role.md"}).allowed
    assert can(tool, {"file_path": f"{memory_dir}/team/shared.md"}).allowed
    assert can(tool, {"file_path": f"{memory_dir}/new/sub/file.md"}).allowed


@pytest.mark.parametrize(
    "target",
    [
        "{root}/../outside.md",
        "{root}/team/../../escape.md",
        "{root}-evil/x.md",
        "{parent}/sibling.md",
        "/etc/passwd",
        "relative/path.md",
        "",
    ],
)
def test_writes_outside_are_refused(memory_dir: Path, target: str) -> None:
    path = target.format(root=memory_dir, parent=memory_dir.parent)
    for tool in ("Write", "Edit"):
        decision = _can(memory_dir)(tool, {"file_path": path})
        assert not decision.allowed, path
        assert str(memory_dir) in decision.message


def test_non_string_paths_are_refused(memory_dir: Path) -> None:
    can = _can(memory_dir)
    for value in (None, 3, ["a"], {"x": 1}, f"{memory_dir}/a\0.md"):
        assert not can("Write", {"file_path": value}).allowed
    assert not can("Edit", {}).allowed


def test_symlinked_folder_inside_pointing_outside_is_refused(
    memory_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, memory_dir / "link")
    # The plain prefix test passes; the realpath test catches the escape.
    decision = _can(memory_dir)("Write", {"file_path": f"{memory_dir}/link/x.md"})
    assert not decision.allowed


def test_symlinked_file_pointing_outside_is_refused(memory_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("keep me")
    os.symlink(target, memory_dir / "innocent.md")
    assert not _can(memory_dir)("Edit", {"file_path": f"{memory_dir}/innocent.md"}).allowed


def test_dangling_symlink_pointing_outside_is_refused(memory_dir: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "not-yet.txt", memory_dir / "dangling.md")
    assert not _can(memory_dir)("Write", {"file_path": f"{memory_dir}/dangling.md"}).allowed


def test_symlink_inside_to_inside_is_fine(memory_dir: Path) -> None:
    (memory_dir / "real.md").write_text("x")
    os.symlink(memory_dir / "real.md", memory_dir / "alias.md")
    assert _can(memory_dir)("Edit", {"file_path": f"{memory_dir}/alias.md"}).allowed


def test_memory_folder_reached_through_a_symlinked_parent(tmp_path: Path) -> None:
    real = tmp_path / "real-home" / "memory"
    real.mkdir(parents=True)
    os.symlink(tmp_path / "real-home", tmp_path / "home-link")
    linked = str(tmp_path / "home-link" / "memory") + "/"
    assert path_inside_folder(linked + "a.md", linked)
    assert not path_inside_folder(str(tmp_path / "real-home" / "a.md"), linked)


@pytest.mark.parametrize("tool", ["Agent", "Task", "WebFetch", "NotebookEdit", "mcp__x__y", "REPL"])
def test_every_other_tool_is_refused(memory_dir: Path, tool: str) -> None:
    decision = _can(memory_dir)(tool, {"file_path": f"{memory_dir}/a.md"})
    assert not decision.allowed
    assert "Read, Grep, Glob" in decision.message


def test_notes_agent_may_only_edit_the_notes_file(tmp_path: Path) -> None:
    notes = str(tmp_path / "s" / "session-memory" / "summary.md")
    can = create_notes_can_use_tool(notes)
    assert can("Edit", {"file_path": notes}).allowed
    assert not can("Write", {"file_path": notes}).allowed
    assert not can("Edit", {"file_path": notes + ".bak"}).allowed
    assert not can("Edit", {"file_path": str(tmp_path / "s" / "other.md")}).allowed
    assert not can("Read", {"file_path": notes}).allowed
    assert not can("Bash", {"command": "ls"}).allowed
