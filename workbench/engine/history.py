"""Local history: every change the workbench makes to a file, kept so it can be undone.

Each change is one line in `<WORKBENCH_HOME>/history/<project key>/log.jsonl` naming the file
and the content before and after, stored once each in a content-addressed blob folder.
Undo restores the "before" content (or removes a file that the change created) and is itself
recorded, so an undo can be undone too. The folder is private (0700, blobs 0600) because it
holds copies of memory files.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.engine.atomic import atomic_write_bytes
from workbench.engine.errors import ConflictError, NotFoundError
from workbench.engine.jsutil import js_iso

if TYPE_CHECKING:
    from workbench.engine.engine import Engine


@dataclass(frozen=True)
class HistoryEntry:
    """One recorded change to one file."""

    id: str
    time: str
    """ISO 8601 UTC with milliseconds, as JS `toISOString`."""
    action: str
    """What made the change: `save`, `delete`, `rename`, `index-edit`, `sync-pull`, `undo`, …"""
    path: str
    """Absolute path of the file."""
    before: str | None
    """Blob hash of the content before the change; None when the file did not exist."""
    after: str | None
    """Blob hash of the content after the change; None when the change removed the file."""
    note: str = ""
    group: str = ""
    """Changes made together (a save and its index line) share a group and undo together."""

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _project_key(memory_dir: str) -> str:
    digest = hashlib.sha256(memory_dir.encode("utf-8")).hexdigest()[:16]
    tail = "".join(c if c.isalnum() else "-" for c in memory_dir.rstrip("/")[-60:])
    return f"{tail.strip('-')}-{digest}"


class History:
    """The change log for one memory folder."""

    def __init__(self, engine: Engine, root: Path | None = None) -> None:
        from workbench.paths import workbench_home

        base = root or workbench_home() / "history"
        self.engine = engine
        self.folder = base / _project_key(engine.locations.memory_dir)
        self._lock = threading.Lock()

    # --- storage -----------------------------------------------------------------------

    @property
    def log_path(self) -> Path:
        return self.folder / "log.jsonl"

    def _ensure(self) -> None:
        (self.folder / "blobs").mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.folder, 0o700)

    def _put_blob(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        blob = self.folder / "blobs" / digest
        if not blob.exists():
            atomic_write_bytes(blob, data, mode=0o600)
        return digest

    def blob(self, digest: str) -> bytes:
        """The content stored under `digest`."""
        try:
            return (self.folder / "blobs" / digest).read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"history blob {digest[:12]} is missing") from None

    def _append(self, entry: HistoryEntry) -> None:
        line = json.dumps(entry.to_json(), ensure_ascii=False) + "\n"
        with open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    # --- recording ---------------------------------------------------------------------

    def new_group(self) -> str:
        """An id that ties several changes together so they undo as one."""
        return secrets.token_hex(4)

    def record(
        self,
        path: str | os.PathLike[str],
        before: bytes | None,
        after: bytes | None,
        action: str,
        *,
        note: str = "",
        group: str = "",
    ) -> HistoryEntry:
        """Record a change that was just made to `path`."""
        with self._lock:
            self._ensure()
            entry = HistoryEntry(
                id=f"{int(time.time() * 1000):x}-{secrets.token_hex(3)}",
                time=js_iso(time.time() * 1000),
                action=action,
                path=os.fspath(path),
                before=None if before is None else self._put_blob(before),
                after=None if after is None else self._put_blob(after),
                note=note,
                group=group,
            )
            self._append(entry)
        return entry

    def write(
        self,
        path: str | os.PathLike[str],
        data: bytes,
        action: str,
        *,
        note: str = "",
        group: str = "",
        mode: int | None = None,
    ) -> HistoryEntry:
        """Write `data` atomically to `path` and record the change."""
        target = Path(path)
        before = _read_or_none(target)
        atomic_write_bytes(target, data, mode=mode)
        return self.record(target, before, data, action, note=note, group=group)

    def delete(
        self, path: str | os.PathLike[str], action: str, *, note: str = "", group: str = ""
    ) -> HistoryEntry:
        """Remove `path` and record its last content so it can be restored."""
        target = Path(path)
        before = _read_or_none(target)
        if before is None:
            raise NotFoundError(f"no such file: {target}")
        target.unlink()
        return self.record(target, before, None, action, note=note, group=group)

    # --- reading and undo ---------------------------------------------------------------

    def entries(self, path: str | os.PathLike[str] | None = None) -> list[HistoryEntry]:
        """Every recorded change, newest first, optionally for one file."""
        try:
            lines = self.log_path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        wanted = None if path is None else os.path.abspath(os.fspath(path))
        out = []
        for line in lines:
            try:
                entry = HistoryEntry(**json.loads(line))
            except (ValueError, TypeError):
                continue  # a torn last line from a crash is skipped, never fatal
            if wanted is None or entry.path == wanted:
                out.append(entry)
        out.reverse()
        return out

    def get(self, entry_id: str) -> HistoryEntry:
        """The entry with this id (a unique prefix is enough)."""
        matches = [e for e in self.entries() if e.id == entry_id or e.id.startswith(entry_id)]
        if not matches:
            raise NotFoundError(f"no history entry {entry_id!r}")
        exact = [e for e in matches if e.id == entry_id]
        if len(exact) == 1 or len(matches) == 1:
            return (exact or matches)[0]
        raise NotFoundError(f"history id {entry_id!r} is ambiguous; give more characters")

    def undo(self, entry_id: str | None = None, *, force: bool = False) -> list[HistoryEntry]:
        """Reverse a change (the latest one by default) and every change in its group.

        Refuses when a file no longer holds what the change left there, unless `force`.
        """
        all_entries = self.entries()
        if not all_entries:
            raise NotFoundError("nothing to undo: the workbench has made no changes here")
        target = self.get(entry_id) if entry_id else all_entries[0]
        batch = [e for e in all_entries if target.group and e.group == target.group] or [target]
        for entry in batch:
            current = _read_or_none(Path(entry.path))
            current_hash = None if current is None else hashlib.sha256(current).hexdigest()
            if current_hash != entry.after and not force:
                raise ConflictError(
                    f"{entry.path} changed since history entry {entry.id}; "
                    "undo would overwrite newer work (use --force to undo anyway)"
                )
        group = self.new_group()
        undone = []
        for entry in batch:  # newest first, so chained changes unwind in order
            path = Path(entry.path)
            note = f"undo {entry.id}"
            if entry.before is None:
                if path.exists():
                    undone.append(self.delete(path, "undo", note=note, group=group))
            else:
                undone.append(
                    self.write(path, self.blob(entry.before), "undo", note=note, group=group)
                )
        return undone


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
