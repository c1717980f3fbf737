"""Which tool calls the memory agents may make (`createAutoMemCanUseTool`, spec 02 §4).

Read, Grep and Glob are always allowed here (the tools themselves read regular files only,
and only inside the project, the memory folder and the transcripts); Bash may run read-only
commands only (judged by a real shell parse); Edit and Write may touch files inside the
memory folder only. Claude Code's test is a plain prefix test on the normalised path; the
workbench also resolves symlinks, so a link inside the folder that points outside it cannot
be used to escape. Nothing under a `.git` name may be written either: a repository's config
can name programs for git to run, and read-only Bash may run git in the memory folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.engine.agents.bash_readonly import judge_command
from workbench.engine.claude_paths import js_normalize

READ_TOOLS = frozenset({"Read", "Grep", "Glob"})
WRITE_TOOLS = frozenset({"Edit", "Write"})


@dataclass(frozen=True)
class PermissionDecision:
    """Allowed, or refused with a message the model will read as an error tool_result."""

    allowed: bool
    message: str = ""

    def to_json(self) -> dict[str, object]:
        return {"allowed": self.allowed, "message": self.message}


CanUseTool = Callable[[str, Mapping[str, Any]], PermissionDecision]

ALLOW = PermissionDecision(True)


def bash_refusal(reason: str) -> str:
    """The message a refused shell command gets (our wording of Claude Code's rule)."""
    return (
        "Only shell commands that read and change nothing may run here (ls, find, grep, cat, "
        f"stat, wc, head, tail and the like). This one was refused: {reason}."
    )


def path_inside_folder(file_path: object, folder: str) -> bool:
    """True when `file_path` is a string naming something inside `folder`.

    Both tests must pass: Claude Code's `isAutoMemPath` (the normalised path starts with the
    folder, which ends in `/`) and the same test after resolving symlinks on both sides.
    """
    if not isinstance(file_path, str) or not file_path or "\0" in file_path:
        return False
    prefix = folder if folder.endswith("/") else folder + "/"
    if not js_normalize(file_path).startswith(prefix):
        return False
    real_folder = os.path.realpath(prefix.rstrip("/")) + "/"
    return os.path.realpath(file_path).startswith(real_folder)


def names_git_metadata(file_path: str, folder: str) -> bool:
    """True when a part of `file_path` below `folder` is `.git` (any case: some file systems
    ignore it), so the write would create or change a repository's settings."""
    prefix = folder if folder.endswith("/") else folder + "/"
    inside = js_normalize(file_path)[len(prefix) :]
    return any(part.casefold() == ".git" for part in inside.split("/"))


def create_auto_mem_can_use_tool(memory_dir: str) -> CanUseTool:
    """The permission check shared by extraction and dream, bound to one memory folder."""
    folder = memory_dir if memory_dir.endswith("/") else memory_dir + "/"
    everything_else = (
        f"This agent may use only Read, Grep, Glob, read-only Bash, and Edit or Write on files "
        f"inside {folder}; the call was refused."
    )
    git_metadata = (
        "Files in a .git folder (or named .git) cannot be written here: git reads its settings "
        "there, and they can name programs to run. The call was refused."
    )

    def can_use_tool(tool_name: str, tool_input: Mapping[str, Any]) -> PermissionDecision:
        if tool_name in READ_TOOLS:
            return ALLOW
        if tool_name == "Bash":
            command = tool_input.get("command") if isinstance(tool_input, Mapping) else None
            verdict = judge_command(command if isinstance(command, str) else "")
            if verdict.read_only:
                return ALLOW
            return PermissionDecision(False, bash_refusal(verdict.reason))
        if tool_name in WRITE_TOOLS:
            file_path = tool_input.get("file_path") if isinstance(tool_input, Mapping) else None
            if path_inside_folder(file_path, folder):
                if names_git_metadata(str(file_path), folder):
                    return PermissionDecision(False, git_metadata)
                return ALLOW
            return PermissionDecision(False, everything_else)
        return PermissionDecision(False, everything_else)

    return can_use_tool


def create_notes_can_use_tool(notes_path: str) -> CanUseTool:
    """Session-memory updates: only `Edit` on exactly the notes file."""

    def can_use_tool(tool_name: str, tool_input: Mapping[str, Any]) -> PermissionDecision:
        file_path = tool_input.get("file_path") if isinstance(tool_input, Mapping) else None
        if tool_name == "Edit" and file_path == notes_path:
            return ALLOW
        return PermissionDecision(
            False, f"Only the Edit tool on {notes_path} may be used here; the call was refused."
        )

    return can_use_tool
