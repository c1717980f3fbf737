"""Result objects of team sync, shared by the CLI (`to_json`, spec 05 keys) and the UI."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SyncError:
    """Why a request failed: `auth`, `timeout`, `network`, `http`, `parse`, `conflict`, …"""

    kind: str
    http_status: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "http_status": self.http_status, "message": self.message}


@dataclass(frozen=True)
class SkippedSecret:
    """A local file not pushed because the scanner found a secret: the first rule (as Claude
    Code reports it) and every kind found."""

    path: str
    """The key; redacted (`notes/[REDACTED].md`) when the secret is in the name."""
    rule_id: str
    label: str
    rule_ids: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    found_in: str = "content"
    """`content`, or `name` when the file's name (path) holds the secret."""

    @property
    def all_labels(self) -> tuple[str, ...]:
        """Every kind of secret in the file, first rule first."""
        return self.labels or (self.label,)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "rule_id": self.rule_id,
            "label": self.label,
            "rule_ids": list(self.rule_ids or (self.rule_id,)),
            "labels": list(self.all_labels),
        }
        if self.found_in != "content":
            out["found_in"] = self.found_in
        return out


@dataclass(frozen=True)
class SkippedKey:
    """A pulled entry that was not written, and why."""

    key: str
    """The key as it may be shown: escaped to one line, redacted if it holds a secret."""
    reason: str
    """`invalid_key` (cannot be a file name), `unsafe_key` (leaves the team folder),
    `secret_in_key`, `secret_in_content`, `too_large` or `write_failed`."""
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        out = {"key": self.key, "reason": self.reason}
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class LocalSnapshot:
    """The team folder as a push sees it: pushable entries plus what was left out."""

    entries: dict[str, str]
    hashes: dict[str, str]
    skipped_secrets: tuple[SkippedSecret, ...] = ()
    skipped_too_large: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()
    over_limit: tuple[str, ...] = ()
    """Keys dropped because the server's learned max_entries was exceeded."""

    @property
    def all_keys(self) -> set[str]:
        """Every file present locally, pushable or not."""
        skipped = {s.path for s in self.skipped_secrets}
        return set(self.entries) | skipped | set(self.skipped_too_large) | set(self.over_limit)


@dataclass(frozen=True)
class ReplacedLocal:
    """A file changed here since the last sync that a pull replaced (the server wins)."""

    key: str
    history_id: str | None
    """The history entry whose undo brings the local version back."""

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "history_id": self.history_id}


@dataclass(frozen=True)
class PullResult:
    """What a pull did (spec 05 `sync pull`)."""

    status: str
    """`ok`, `not_modified`, `empty` or `error`."""
    written: tuple[str, ...] = ()
    unchanged: int = 0
    skipped: tuple[SkippedKey, ...] = ()
    checksum: str | None = None
    error: SyncError | None = None
    replaced_local: tuple[ReplacedLocal, ...] = ()
    """Of `written`, files changed here since the last sync (kept in history)."""

    @property
    def ok(self) -> bool:
        return self.status != "error"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "written": len(self.written),
            "written_keys": list(self.written),
            "unchanged": self.unchanged,
            "skipped": [s.to_json() for s in self.skipped],
            "replaced_local": [r.to_json() for r in self.replaced_local],
            "checksum": self.checksum,
            "error": None if self.error is None else self.error.to_json(),
        }


@dataclass(frozen=True)
class Overwrite:
    """A push that replaced a teammate's newer version of a file (local wins, but it is said).

    Their version is kept in local history: undoing `history_id` puts it back in the file."""

    key: str
    time: str
    server_hash: str
    """The hash of the teammate's version the push replaced."""
    local_hash: str
    history_id: str | None = None
    """The history entry holding their version; None when it could not be fetched."""

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "time": self.time,
            "server_hash": self.server_hash,
            "local_hash": self.local_hash,
            "history_id": self.history_id,
        }

    @classmethod
    def from_json(cls, data: Any) -> Overwrite | None:
        """An overwrite read back from saved state, or None when malformed."""
        if not isinstance(data, dict):
            return None
        key, time, server_hash, local_hash, history_id = (
            data.get(k) for k in ("key", "time", "server_hash", "local_hash", "history_id")
        )
        if not (
            isinstance(key, str)
            and isinstance(time, str)
            and isinstance(server_hash, str)
            and isinstance(local_hash, str)
            and isinstance(history_id, str | None)
        ):
            return None
        return cls(key, time, server_hash, local_hash, history_id=history_id)


@dataclass(frozen=True)
class PushResult:
    """What a push did (spec 05 `sync push`)."""

    status: str
    """`ok`, `error`, `conflict` or `suppressed`."""
    uploaded: int = 0
    uploaded_keys: tuple[str, ...] = ()
    batches: int = 0
    conflict_retries: int = 0
    skipped_secrets: tuple[SkippedSecret, ...] = ()
    skipped_too_large: tuple[str, ...] = ()
    max_entries: int | None = None
    error: SyncError | None = None
    suppressed_reason: str | None = None
    overwritten: tuple[Overwrite, ...] = ()
    """Teammates' newer versions this push replaced (after a 412 and the hash probe)."""
    skipped_over_limit: tuple[str, ...] = ()
    """Files past the server's entry limit (the last ones in key order), not pushed."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "uploaded": self.uploaded,
            "uploaded_keys": list(self.uploaded_keys),
            "batches": self.batches,
            "conflict_retries": self.conflict_retries,
            "skipped_secrets": [s.to_json() for s in self.skipped_secrets],
            "skipped_too_large": list(self.skipped_too_large),
            "max_entries": self.max_entries,
            "error": None if self.error is None else self.error.to_json(),
            "suppressed_reason": self.suppressed_reason,
            "overwritten": [o.to_json() for o in self.overwritten],
            "skipped_over_limit": list(self.skipped_over_limit),
        }


@dataclass(frozen=True)
class KeyState:
    """One key seen from both sides: local hash, server hash and the last agreed hash."""

    key: str
    local: str | None
    server: str | None
    last_synced: str | None
    state: str
    """`in_sync`, `local_changed`, `server_changed`, `both_changed`, `local_only`,
    `server_only`, `deleted_locally`, `secret_blocked` or `too_large`."""

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "local": self.local,
            "server": self.server,
            "last_synced": self.last_synced,
            "state": self.state,
        }


@dataclass(frozen=True)
class SyncStatus:
    """Everything the sync pane shows, computed offline from disk and saved state."""

    server: str | None
    repo: str
    team_dir: str
    local_entries: int
    pending: tuple[str, ...]
    keys: tuple[KeyState, ...]
    skipped_secrets: tuple[SkippedSecret, ...]
    skipped_too_large: tuple[str, ...]
    last_checksum: str | None
    max_entries: int | None
    suppressed_reason: str | None
    conflicts: tuple[dict[str, Any], ...] = ()
    history: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    overwrites: tuple[Overwrite, ...] = ()
    """Teammates' versions pushes replaced, newest first (each restorable from history)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "repo": self.repo,
            "team_dir": self.team_dir,
            "local_entries": self.local_entries,
            "pending": list(self.pending),
            "pending_count": len(self.pending),
            "keys": [k.to_json() for k in self.keys],
            "skipped_secrets": [s.to_json() for s in self.skipped_secrets],
            "skipped_too_large": list(self.skipped_too_large),
            "last_checksum": self.last_checksum,
            "max_entries": self.max_entries,
            "suppressed_reason": self.suppressed_reason,
            "conflicts": list(self.conflicts),
            "history": list(self.history),
            "overwrites": [o.to_json() for o in self.overwrites],
        }
