"""`workbench integrate claude`: the status line, the hooks and the MCP server in Claude Code's
settings, added or removed as a planned, reviewable change.

Where things go (Claude Code reads them there):
- user scope: `<config home>/settings.json` (statusLine, hooks) and the global config file
  (`$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`) for `mcpServers`;
- project scope: `<project>/.claude/settings.json` and `<project>/.mcp.json`.

A plan is computed first (the files' text before and after, shown as a diff); applying it
backs each file up beside itself, writes atomically, and refuses when a file changed since
the plan was made. Only the keys the workbench owns are touched, in the file's own
formatting. What was written is remembered under WORKBENCH_HOME (paths and hashes only), so
removal restores the original bytes exactly when nothing else changed in between, and
otherwise takes out just the workbench's entries.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.engine.atomic import atomic_write_bytes
from workbench.engine.errors import ConflictError, UserInputError
from workbench.engine.userfiles import SETTINGS_LIMIT, load_json, read_bytes
from workbench.live.json_text import (
    new_object_text,
    parse_object,
    remove_member,
    remove_path,
    set_member,
    set_path,
)

MCP_NAME = "memory-workbench"
DEFAULT_EVENTS = ("SessionStart", "PreCompact", "PostCompact")
HOOK_TIMEOUTS = {"SessionStart": 10, "PreCompact": 120, "PostCompact": 60, "Stop": 10}
"""Seconds Claude Code waits for each hook (a snapshot of a long session takes a while)."""


# --- what the workbench wants in the files ------------------------------------------------


def default_launcher(scope: str) -> list[str]:
    """How Claude Code should start the workbench: a plain `workbench` for a project file
    (it is committed and shared), else this installation's own executable."""
    if scope == "project":
        return ["workbench"]
    found = shutil.which("workbench")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "workbench"]


@dataclass(frozen=True)
class Wanted:
    """The parts to install and how to run them."""

    launcher: tuple[str, ...]
    statusline: bool = True
    events: tuple[str, ...] = DEFAULT_EVENTS
    mcp: bool = True
    replace_statusline: bool = False
    hook_flags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def command(self, *words: str) -> str:
        return shlex.join([*self.launcher, *words])

    def hook_command(self, event: str) -> str:
        return self.command("hook", event, *self.hook_flags.get(event, ()))


def _words(command: object) -> list[str]:
    if not isinstance(command, str):
        return []
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _runs_workbench(words: Sequence[str]) -> int | None:
    """Where the workbench's own arguments start in `words`, or None when it is not ours."""
    for i, word in enumerate(words):
        if os.path.basename(word) == "workbench":
            return i + 1
        if word == "-m" and i + 1 < len(words) and words[i + 1] == "workbench":
            return i + 2
    return None


def is_our_hook(command: object, event: str) -> bool:
    words = _words(command)
    start = _runs_workbench(words)
    return start is not None and words[start : start + 2] == ["hook", event]


def is_our_statusline(value: object) -> bool:
    if not isinstance(value, Mapping):
        return False
    words = _words(value.get("command"))
    start = _runs_workbench(words)
    return start is not None and words[start : start + 1] == ["statusline"]


def with_hooks(hooks: object, wanted: Wanted, events: Sequence[str]) -> dict[str, Any]:
    """The `hooks` value with one workbench command per event (updated in place if present)."""
    out: dict[str, Any] = json.loads(json.dumps(hooks)) if isinstance(hooks, Mapping) else {}
    for event in events:
        command = wanted.hook_command(event)
        groups = out.get(event)
        groups = groups if isinstance(groups, list) else []
        found = False
        for group in groups:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                if isinstance(hook, dict) and is_our_hook(hook.get("command"), event):
                    if not found:
                        hook["command"] = command
                        hook.setdefault("type", "command")
                        found = True
        if not found:
            groups.append(
                {
                    "hooks": [
                        {"type": "command", "command": command, "timeout": HOOK_TIMEOUTS[event]}
                    ]
                }
            )
        out[event] = groups
    return out


def without_hooks(hooks: object) -> dict[str, Any]:
    """The `hooks` value with every workbench command taken out (and groups left empty)."""
    out: dict[str, Any] = {}
    if not isinstance(hooks, Mapping):
        return out
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            kept = [
                h
                for h in group["hooks"]
                if not (isinstance(h, dict) and is_our_hook(h.get("command"), event))
            ]
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            out[event] = kept_groups
    return out


def mcp_entry(wanted: Wanted) -> dict[str, Any]:
    return {"type": "stdio", "command": wanted.launcher[0], "args": [*wanted.launcher[1:], "mcp"]}


# --- files, plans and state ---------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One settings file and the role it plays."""

    path: Path
    role: str
    """`settings` (statusLine and hooks) or `mcp` (mcpServers)."""


@dataclass(frozen=True)
class FileChange:
    """One file before and after (after None: the file is removed)."""

    target: Target
    before: bytes | None
    after: bytes | None
    action: str
    """`create`, `modify`, `restore`, `delete` or `unchanged`."""
    notes: tuple[str, ...] = ()
    state: Mapping[str, Any] | None = None
    """What to remember once written (None: forget the file)."""
    spent_backup: str | None = None
    """A backup the change makes redundant (the original it restores), removed after it."""

    @property
    def changed(self) -> bool:
        return self.action != "unchanged"

    def diff(self) -> str:
        """A unified diff, secrets redacted (a global config file may hold other data)."""
        if not self.changed:
            return ""
        from workbench.engine.team.secrets.redaction import redact_secrets

        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = (self.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        name = str(self.target.path)
        lines = difflib.unified_diff(
            old,
            new,
            fromfile="/dev/null" if self.before is None else name,
            tofile="/dev/null" if self.after is None else name,
        )
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        return redact_secrets(text)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.target.path),
            "role": self.target.role,
            "action": self.action,
            "diff": self.diff(),
            "notes": list(self.notes),
        }


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:  # a regular file only: a pipe or device named settings.json is refused, not read
        return read_bytes(path, SETTINGS_LIMIT, "a settings file")
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise UserInputError(f"{path} is a folder, not a settings file") from None


class StateStore:
    """What each integration wrote: `<WORKBENCH_HOME>/integrations/<hash of the path>.json`."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root

    @property
    def root(self) -> Path:
        if self._root is None:
            from workbench.paths import workbench_home

            self._root = workbench_home() / "integrations"
        return self._root

    def _file(self, path: Path) -> Path:
        key = hashlib.sha256(str(path.absolute()).encode("utf-8")).hexdigest()[:24]
        return self.root / f"claude-{key}.json"

    def load(self, path: Path) -> dict[str, Any] | None:
        try:
            data = load_json(read_bytes(self._file(path), SETTINGS_LIMIT, "a settings backup"), "")
        except (OSError, ValueError, UserInputError):
            return None
        return data if isinstance(data, dict) and data.get("path") == str(path.absolute()) else None

    def save(self, path: Path, state: Mapping[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = json.dumps({**state, "path": str(path.absolute())}, indent=1).encode("utf-8")
        atomic_write_bytes(self._file(path), data, mode=0o600)

    def forget(self, path: Path) -> None:
        try:
            self._file(path).unlink()
        except FileNotFoundError:
            pass


def _encode(text: str) -> bytes:
    return text.encode("utf-8")


def _install_settings(
    target: Target, before: bytes | None, wanted: Wanted, state: Any
) -> FileChange:
    name = str(target.path)
    text = before.decode("utf-8") if before is not None else None
    notes: list[str] = []
    current = parse_object(text, name=name).value() if text is not None else {}
    values: dict[str, Any] = {}
    previous_status = (state or {}).get("previous_statusline")
    if wanted.statusline:
        status = {"type": "command", "command": wanted.command("statusline"), "padding": 0}
        existing = current.get("statusLine")
        if existing is None or is_our_statusline(existing):
            values["statusLine"] = status
        elif wanted.replace_statusline:
            values["statusLine"] = status
            previous_status = existing
            notes.append("your status line is replaced (removal puts it back)")
        else:
            notes.append(
                "kept your own status line; pass --replace-statusline to use the workbench's"
            )
    hooks = None
    if wanted.events:
        hooks = with_hooks(current.get("hooks"), wanted, wanted.events)
        values["hooks"] = hooks
    after_text = text
    if after_text is None:
        after_text = new_object_text(values) if values else None
    else:
        if "statusLine" in values:
            after_text = set_member(after_text, "statusLine", values["statusLine"], name=name)
        if hooks is not None:
            after_text = _set_events(after_text, current.get("hooks"), hooks, name)
    after = _encode(after_text) if after_text is not None else None
    created = [k for k in values if k not in current]
    return _change(target, before, after, notes, state, previous_status, created)


def _install_mcp(target: Target, before: bytes | None, wanted: Wanted, state: Any) -> FileChange:
    name = str(target.path)
    text = before.decode("utf-8") if before is not None else None
    current = parse_object(text, name=name).value() if text is not None else {}
    servers = current.get("mcpServers")
    if servers is not None and not isinstance(servers, Mapping):
        raise UserInputError(f"{name}: mcpServers is not an object; nothing was changed")
    if text is None:
        after_text = new_object_text({"mcpServers": {MCP_NAME: mcp_entry(wanted)}})
    else:
        after_text = set_path(text, ("mcpServers", MCP_NAME), mcp_entry(wanted), name=name)
    notes = []
    if target.path.name == ".mcp.json":
        notes.append("Claude Code asks once before it starts a project's MCP servers")
    created = [] if servers is not None else ["mcpServers"]
    return _change(target, before, _encode(after_text), notes, state, None, created)


def _set_events(text: str, old: object, new: Mapping[str, Any], name: str) -> str:
    """Write only the hook events that differ, each in place, so the others keep their text."""
    previous = old if isinstance(old, Mapping) else None
    if previous is None:
        return set_member(text, "hooks", dict(new), name=name)
    for event, groups in new.items():
        if previous.get(event) != groups:
            text = set_path(text, ("hooks", event), groups, name=name)
    for event in previous:
        if event not in new:
            text = remove_path(text, ("hooks", event), name=name)
    return text


def has_ours(role: str, values: Mapping[str, Any]) -> bool:
    """Whether a file's values already hold any of the workbench's entries."""
    if role == "mcp":
        servers = values.get("mcpServers")
        return isinstance(servers, Mapping) and MCP_NAME in servers
    if is_our_statusline(values.get("statusLine")):
        return True
    return without_hooks(values.get("hooks")) != (values.get("hooks") or {})


def _change(
    target: Target,
    before: bytes | None,
    after: bytes | None,
    notes: Sequence[str],
    state: Mapping[str, Any] | None,
    previous_status: Any,
    created: Sequence[str],
) -> FileChange:
    if after == before:
        return FileChange(target, before, after, "unchanged", tuple(notes), state)
    values = parse_object(before.decode("utf-8")).value() if before is not None else {}
    if state is not None and state.get("written_sha256") == _sha(before):
        # The file is as the workbench last left it: the original from then still applies.
        origin = {k: state.get(k) for k in ("existed", "original_sha256", "backup")}
        created = sorted(set(state.get("created_keys", [])) | set(created))
    elif not has_ours(target.role, values):
        origin = {"existed": before is not None, "original_sha256": _sha(before), "backup": None}
    else:
        # Someone changed the file after an earlier install: no byte-exact original any more,
        # so removal will take out the workbench's entries one by one.
        origin = {"existed": True, "original_sha256": None, "backup": None}
    new_state = {
        "role": target.role,
        **origin,
        "created_keys": sorted(created),
        "previous_statusline": previous_status,
    }
    action = "create" if before is None else "modify"
    return FileChange(target, before, after, action, tuple(notes), new_state)


def _remove_from(
    target: Target, before: bytes | None, state: Mapping[str, Any] | None
) -> FileChange:
    name = str(target.path)
    if before is None:
        return FileChange(target, None, None, "unchanged", ("not there",), None)
    if state is not None and state.get("written_sha256") == _sha(before):
        # Nothing changed since the workbench wrote it: put the original back, byte for byte.
        if not state.get("existed"):
            return FileChange(target, before, None, "delete", (), None)
        backup = Path(state["backup"]) if state.get("backup") else None
        original = _read(backup) if backup else None
        if original is not None and _sha(original) == state.get("original_sha256"):
            return FileChange(target, before, original, "restore", (), None, str(backup))
    text = before.decode("utf-8")
    current = parse_object(text, name=name).value()
    created = set((state or {}).get("created_keys", []))
    after = text
    if target.role == "settings":
        status = current.get("statusLine")
        if is_our_statusline(status):
            previous = (state or {}).get("previous_statusline")
            if previous is not None:
                after = set_member(after, "statusLine", previous, name=name)
            else:
                after = remove_member(after, "statusLine", name=name)
        if isinstance(current.get("hooks"), Mapping):
            hooks = without_hooks(current["hooks"])
            if not hooks and "hooks" in created:
                after = remove_member(after, "hooks", name=name)
            elif hooks != current["hooks"]:
                after = _set_events(after, current["hooks"], hooks, name)
    else:
        servers = current.get("mcpServers")
        if isinstance(servers, Mapping) and MCP_NAME in servers:
            if len(servers) == 1 and "mcpServers" in created:
                after = remove_member(after, "mcpServers", name=name)
            else:
                after = remove_path(after, ("mcpServers", MCP_NAME), name=name)
    data = _encode(after)
    if data == before:
        return FileChange(
            target, before, before, "unchanged", ("nothing of the workbench's",), None
        )
    return FileChange(target, before, data, "modify", (), None)


def plan_install(targets: Sequence[Target], wanted: Wanted, states: StateStore) -> list[FileChange]:
    """The change to each file that installs `wanted` (files already right are unchanged)."""
    changes = []
    for target in targets:
        before = _read(target.path)
        state = states.load(target.path)
        if target.role == "settings":
            changes.append(_install_settings(target, before, wanted, state))
        else:
            changes.append(_install_mcp(target, before, wanted, state))
    return changes


def plan_remove(targets: Sequence[Target], states: StateStore) -> list[FileChange]:
    """The change to each file that takes the workbench out again."""
    return [_remove_from(t, _read(t.path), states.load(t.path)) for t in targets]


def apply(
    changes: Sequence[FileChange], states: StateStore, *, now: float | None = None
) -> list[str]:
    """Write the planned changes; returns the backup files made. Refused as a whole when a
    file no longer holds what the plan was made from."""
    for change in changes:
        if change.changed and _read(change.target.path) != change.before:
            raise ConflictError(
                f"{change.target.path} changed since the plan was made; nothing was written "
                "(run the command again to see the new diff)"
            )
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    backups = []
    for change in changes:
        if not change.changed:
            continue
        path = change.target.path
        state = dict(change.state) if change.state is not None else None
        if change.before is not None and change.action in ("create", "modify"):
            # Every write keeps the file as it was beside it; the original (what removal
            # restores) is remembered only when this is it.
            backup = path.with_name(f"{path.name}.workbench-backup-{stamp}")
            atomic_write_bytes(backup, change.before, mode=path.stat().st_mode & 0o777)
            backups.append(str(backup))
            if state is not None and state.get("original_sha256") == _sha(change.before):
                state["backup"] = state.get("backup") or str(backup)
        if change.after is None:
            path.unlink()
        else:
            atomic_write_bytes(path, change.after)
        if state is None:
            states.forget(path)
        else:
            state["written_sha256"] = _sha(change.after)
            states.save(path, state)
        if change.spent_backup:
            Path(change.spent_backup).unlink(missing_ok=True)
    return backups


def targets_for(
    scope: str, *, config_home: str, project: str, env: Mapping[str, str]
) -> dict[str, Target]:
    """The settings file and the MCP file for `scope`."""
    if scope == "project":
        base = Path(project)
        return {
            "settings": Target(base / ".claude" / "settings.json", "settings"),
            "mcp": Target(base / ".mcp.json", "mcp"),
        }
    from workbench.engine.context.thresholds import global_config_path

    return {
        "settings": Target(Path(config_home) / "settings.json", "settings"),
        "mcp": Target(global_config_path(env, config_home), "mcp"),
    }


def summary(changes: Sequence[FileChange]) -> list[str]:
    out = []
    for change in changes:
        verb = {
            "create": "would create",
            "modify": "would change",
            "restore": "would restore the original of",
            "delete": "would delete (the workbench created it)",
            "unchanged": "no change to",
        }[change.action]
        out.append(f"{verb} {change.target.path}")
        out.extend(f"  note: {note}" for note in change.notes)
    return out
