"""What the sync client remembers between runs, per server, repo and team folder.

Claude Code keeps `lastKnownChecksum`, `serverChecksums`, `serverMaxEntries` and the push
suppression in memory for one session; the workbench also keeps them on disk (under
`WORKBENCH_HOME/sync/`) so a CLI push sends only the delta, plus what the UI shows: the hash
each key had when it was last synced, a history of every sync and of every 412 conflict.
The team folder is part of the key because the state describes one local copy: two clones of
the same repo on one machine must not share a `lastKnownChecksum`.

Only hashes, key names, counts and our own messages are stored: never file content, never a
token, never a secret's text.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.engine.atomic import atomic_write_text
from workbench.engine.errors import UserInputError
from workbench.engine.userfiles import NOTES_LIMIT, load_json, read_bytes

STATE_VERSION = 1
MAX_HISTORY = 200
MAX_CONFLICTS = 100


@dataclass
class SyncState:
    """Mutable sync bookkeeping for one (server, repo) pair."""

    server: str
    repo: str
    team_dir: str = ""
    last_known_checksum: str | None = None
    server_checksums: dict[str, str] = field(default_factory=dict)
    server_max_entries: int | None = None
    push_suppressed_reason: str | None = None
    suppressed_keys: list[str] = field(default_factory=list)
    """Local keys when pushes were suppressed: one of them disappearing lifts the suppression."""
    last_synced: dict[str, str] = field(default_factory=dict)
    """Per key, the `sha256:` hash both sides agreed on at the last successful pull or push."""
    history: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    overwrites: list[dict[str, Any]] = field(default_factory=list)
    """Teammates' versions a push replaced: key, time, both hashes and the history id that
    holds theirs (never the content)."""

    def record(self, entry: dict[str, Any]) -> None:
        """Append one sync to the history, keeping the newest MAX_HISTORY."""
        self.history.append(entry)
        del self.history[:-MAX_HISTORY]

    def record_conflict(self, entry: dict[str, Any]) -> None:
        """Append one 412 conflict, keeping the newest MAX_CONFLICTS."""
        self.conflicts.append(entry)
        del self.conflicts[:-MAX_CONFLICTS]

    def record_overwrite(self, entry: dict[str, Any]) -> None:
        """Append one overwrite of a teammate's version, keeping the newest MAX_CONFLICTS."""
        self.overwrites.append(entry)
        del self.overwrites[:-MAX_CONFLICTS]

    def suppress(self, reason: str, local_keys: list[str]) -> None:
        """Stop pushing until a local file is deleted (or the user forces a push)."""
        self.push_suppressed_reason = reason
        self.suppressed_keys = sorted(local_keys)

    def lift_suppression(self) -> None:
        """Allow pushes again."""
        self.push_suppressed_reason = None
        self.suppressed_keys = []

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "server": self.server,
            "repo": self.repo,
            "teamDir": self.team_dir,
            "lastKnownChecksum": self.last_known_checksum,
            "serverChecksums": dict(self.server_checksums),
            "serverMaxEntries": self.server_max_entries,
            "pushSuppressedReason": self.push_suppressed_reason,
            "suppressedKeys": list(self.suppressed_keys),
            "lastSynced": dict(self.last_synced),
            "history": list(self.history),
            "conflicts": list(self.conflicts),
            "overwrites": list(self.overwrites),
        }

    @classmethod
    def from_json(cls, data: Any, server: str, repo: str, team_dir: str = "") -> SyncState:
        """Rebuild state from disk, dropping anything malformed rather than failing."""
        state = cls(server=server, repo=repo, team_dir=team_dir)
        if not isinstance(data, dict):
            return state
        checksum = data.get("lastKnownChecksum")
        state.last_known_checksum = checksum if isinstance(checksum, str) else None
        state.server_checksums = _str_map(data.get("serverChecksums"))
        max_entries = data.get("serverMaxEntries")
        if isinstance(max_entries, int) and not isinstance(max_entries, bool) and max_entries > 0:
            state.server_max_entries = max_entries
        reason = data.get("pushSuppressedReason")
        state.push_suppressed_reason = reason if isinstance(reason, str) else None
        keys = data.get("suppressedKeys")
        if isinstance(keys, list):
            state.suppressed_keys = [k for k in keys if isinstance(k, str)]
        state.last_synced = _str_map(data.get("lastSynced"))
        for name in ("history", "conflicts", "overwrites"):
            items = data.get(name)
            if isinstance(items, list):
                setattr(state, name, [i for i in items if isinstance(i, dict)])
        return state


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def normalize_server(url: str) -> str:
    """The server URL as state is keyed: no trailing slash, scheme and host lower-cased."""
    url = url.strip().rstrip("/")
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)(.*)$", url)
    if not match:
        return url
    return f"{match.group(1).lower()}://{match.group(2).lower()}{match.group(3)}"


class SyncStateStore:
    """Loads and saves SyncState files, one per (server, repo)."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root

    @property
    def root(self) -> Path:
        if self._root is None:
            from workbench.paths import state_dir

            self._root = state_dir("sync")
        else:
            self._root.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self._root

    def path_for(self, server: str, repo: str, team_dir: str = "") -> Path:
        """The state file for this triple: a readable name plus a hash that keeps it unique."""
        server = normalize_server(server)
        digest = hashlib.sha256(f"{server}\n{repo}\n{team_dir}".encode()).hexdigest()[:16]
        readable = re.sub(r"[^A-Za-z0-9]+", "-", f"{server.split('://')[-1]}-{repo}").strip("-")
        return self.root / f"{readable[:80]}-{digest}.json"

    def load(self, server: str, repo: str, team_dir: str = "") -> SyncState:
        """The saved state, or a fresh one when there is none or it cannot be read."""
        server = normalize_server(server)
        try:
            path = self.path_for(server, repo, team_dir)
            data = load_json(read_bytes(path, NOTES_LIMIT, "a sync state file"), str(path))
        except (OSError, ValueError, UserInputError):
            data = None
        return SyncState.from_json(data, server, repo, team_dir)

    def save(self, state: SyncState) -> None:
        """Write the state atomically with private permissions."""
        path = self.path_for(state.server, state.repo, state.team_dir)
        text = json.dumps(state.to_json(), ensure_ascii=False, indent=1, sort_keys=True)
        atomic_write_text(path, text + "\n", mode=0o600)
        os.chmod(path, 0o600)
