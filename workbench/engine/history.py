"""Local history: every change the workbench makes to a file, kept so it can be undone.

Each change is one line in `<WORKBENCH_HOME>/history/<project key>/log.jsonl` naming the file
and the content before and after, stored once each in a content-addressed blob folder. The
folder is private (0700, blobs 0600) because it holds copies of memory files.

Undo is a stack: `undo` reverses the newest change that is still in effect (a save and its
index line are one change), so repeated undos walk back through history; `redo` re-applies the
most recent undone change until a new change is made. Undo and redo are recorded too.

A change and its history line are one unit. Under the memory folder's lock (see
`folder_lock`), a transaction stores the blobs, writes its intent to `pending.json`, changes
the files, then appends its lines to the log and drops the intent. A process killed in
between leaves the intent behind; the next one to take the lock finishes the job (the lines
were appended: keep) or rolls the files back (they were not: neither happened).

The log is input like any file: an unreadable or malformed line is skipped and reported, and
undo only touches files inside the folders the workbench manages.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from workbench.engine.atomic import TEMP_SUFFIX, atomic_write_bytes, through_link
from workbench.engine.atomic import _fsync_dir as fsync_dir
from workbench.engine.errors import (
    ConflictError,
    NotFoundError,
    PathTraversalError,
    UserInputError,
)
from workbench.engine.folder_lock import folder_lock
from workbench.engine.jsutil import js_iso
from workbench.engine.userfiles import MIB, NOTES_LIMIT, SCANNED_FILE_LIMIT, read_bytes
from workbench.engine.wording import plural, plural_noun

if TYPE_CHECKING:
    from workbench.engine.engine import Engine

ACTION_WORDS = {
    "save": "a save",
    "edit": "an edit",
    "delete": "a delete",
    "rename": "a rename",
    "index-edit": "an index edit",
    "index-fix": "an index fix",
    "sync-pull": "a pull",
    "sync-overwrite": "a push over a teammate's version",
    "extraction-apply": "accepting a proposal",
    "log-append": "a log entry",
    "session-memory-update": "a session-notes update",
    "session-memory-setup": "the session notes' setup",
}
"""Each change's action id (kept in the log) in the words a message uses."""

UNDO_ACTION = "undo"
REDO_ACTION = "redo"
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
_OUR_TEMP = re.compile(r"^\..+\.[0-9a-f]{8}" + re.escape(TEMP_SUFFIX) + "$")
_OLD_UNDO_NOTE = re.compile(r"^undo (\S+)$")

LOG_LIMIT = 1024 * MIB
"""The history log is read whole; past this it is refused, not loaded (years of edits fit)."""


class _Link(TypedDict, total=False):
    """What an undo or redo entry points back at (the entry's `undoes` / `redoes` field)."""

    undoes: str
    redoes: str


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
    undoes: str = ""
    """For an undo: the change (group) it reversed."""
    redoes: str = ""
    """For a redo: the change (group) it re-applied."""

    @property
    def change_key(self) -> str:
        """The change this entry belongs to: its group, else the entry alone."""
        return self.group or self.id

    @property
    def effect(self) -> str:
        """What happened to the file, in words: `deleted`, `restored`, `reverted`, …"""
        if self.before == self.after:
            return "unchanged"
        if self.after is None:
            return "deleted"
        if self.action == UNDO_ACTION:
            return "restored" if self.before is None else "reverted"
        if self.action == REDO_ACTION:
            return "re-created" if self.before is None else "re-applied"
        return "created" if self.before is None else "changed"

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        if not self.undoes:
            del out["undoes"]
        if not self.redoes:
            del out["redoes"]
        return out


@dataclass(frozen=True)
class UndoResult:
    """What an undo or a redo did: the change it acted on and one entry per file touched."""

    kind: str
    """`undo` or `redo`."""
    change: str
    """The change key (group) that was undone or redone."""
    action: str
    """The action of the change, e.g. `save` or `delete`."""
    entries: tuple[HistoryEntry, ...]
    """The new history entries, one per file, in the order they were made."""

    @property
    def what(self) -> str:
        """The change in words (`accepting a proposal`), for messages; the id otherwise."""
        return ACTION_WORDS.get(self.action, self.action)

    def __iter__(self) -> Iterator[HistoryEntry]:
        # Callers of the list-returning undo of old iterate the new entries.
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def lines(self, name: Any = str) -> list[str]:
        """One line per file: `deleted feedback_x.md`, `restored MEMORY.md`, …"""
        return [f"{e.effect} {name(e.path)}" for e in self.entries]


@dataclass(frozen=True)
class LogProblem:
    """A line of the history log that was skipped."""

    line: int
    reason: str


@dataclass
class _Planned:
    entry: HistoryEntry
    applied: bool = False


@dataclass
class _Transaction:
    changes: list[_Planned] = field(default_factory=list)


def _project_key(memory_dir: str) -> str:
    digest = hashlib.sha256(memory_dir.encode("utf-8")).hexdigest()[:16]
    tail = "".join(c if c.isalnum() else "-" for c in memory_dir.rstrip("/")[-60:])
    return f"{tail.strip('-')}-{digest}"


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _new_id() -> str:
    return f"{int(time.time() * 1000):x}-{secrets.token_hex(3)}"


def _parse_entry(raw: Any) -> HistoryEntry | None:
    """A validated entry, or None when the line is not one (wrong keys, types or hashes)."""
    if not isinstance(raw, dict):
        return None
    text_fields = ("id", "time", "action", "path")
    optional = ("note", "group", "undoes", "redoes")
    if any(not isinstance(raw.get(k), str) or not raw.get(k) for k in text_fields):
        return None
    if any(not isinstance(raw.get(k, ""), str) for k in optional):
        return None
    for key in ("before", "after"):
        value = raw.get(key)
        if value is not None and not (isinstance(value, str) and _DIGEST.match(value)):
            return None
    if not os.path.isabs(raw["path"]) or "\0" in raw["path"]:
        return None
    known = set(text_fields) | set(optional) | {"before", "after"}
    return HistoryEntry(**{k: v for k, v in raw.items() if k in known})


class History:
    """The change log for one memory folder."""

    def __init__(self, engine: Engine, root: Path | None = None) -> None:
        from workbench.paths import workbench_home

        self._home = root or workbench_home() / "history"
        self.engine = engine
        self.folder = self._home / _project_key(engine.locations.memory_dir)
        self._lock = threading.RLock()
        self._tx: _Transaction | None = None
        self._swept = False
        self.problems: list[LogProblem] = []
        """Lines the last read of the log skipped."""
        self.recovered: list[str] = []
        """What recovery of an interrupted change did in this process (for front ends)."""

    # --- storage -----------------------------------------------------------------------

    @property
    def log_path(self) -> Path:
        return self.folder / "log.jsonl"

    @property
    def pending_path(self) -> Path:
        return self.folder / "pending.json"

    def _ensure(self) -> None:
        try:
            (self.folder / "blobs").mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(self.folder, 0o700)
        except (FileExistsError, NotADirectoryError):
            raise UserInputError(
                f"cannot keep history in {self._home}: part of that path is a file, not a "
                "folder (check WORKBENCH_HOME); nothing was written"
            ) from None
        except PermissionError:
            raise UserInputError(
                f"cannot keep history in {self._home}: permission denied; nothing was written"
            ) from None

    def _put_blob(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        blob = self.folder / "blobs" / digest
        if not blob.exists():
            atomic_write_bytes(blob, data, mode=0o600)
        return digest

    def blob(self, digest: str) -> bytes:
        """The content stored under `digest`."""
        if not _DIGEST.match(digest):
            raise NotFoundError(f"not a history blob name: {digest[:16]!r}")
        try:
            return read_bytes(self.folder / "blobs" / digest, SCANNED_FILE_LIMIT, "a history blob")
        except FileNotFoundError:
            raise NotFoundError(f"history blob {digest[:12]} is missing") from None

    def _append(self, entries: list[HistoryEntry]) -> None:
        """Append `entries` in one write; a torn last line from a crash gets its own line."""
        if not entries:
            return
        text = "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in entries)
        fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                text = "\n" + text
            data = text.encode("utf-8")
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    # --- locking, transactions and recovery --------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the memory folder's write lock (re-entrant); the first time, tidy up after
        any process that was killed while it held it."""
        with self._lock, folder_lock(self.engine.locations.memory_dir) as outermost:
            if outermost and self._tx is None:
                self._recover()
                if not self._swept:
                    self._swept = True
                    self._sweep_temp_files()
            yield

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Run several changes as one: recorded together, or rolled back together when the
        block raises. Nested transactions join the outer one."""
        with self.locked():
            if self._tx is not None:
                yield
                return
            self._tx = tx = _Transaction()
            try:
                yield
            except BaseException:
                self._tx = None
                self._roll_back(tx)
                raise
            self._tx = None
            try:
                self._commit(tx)
            except BaseException:
                self._roll_back(tx)
                raise

    def _plan(self, entry: HistoryEntry) -> _Planned:
        """Store an intended change (before the file is touched) in the active transaction."""
        assert self._tx is not None
        planned = _Planned(entry)
        self._tx.changes.append(planned)
        self._write_pending(entry)
        return planned

    def _write_pending(self, entry: HistoryEntry) -> None:
        """Append one intended change to the journal and make it durable (one line each, so
        a transaction of n changes costs n small appends, not n rewrites)."""
        line = (json.dumps(entry.to_json(), ensure_ascii=False) + "\n").encode("utf-8")
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        fd = os.open(self.pending_path, flags, 0o600)
        try:
            created = os.fstat(fd).st_size == 0
            while line:
                line = line[os.write(fd, line) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            fsync_dir(self.folder)

    def _commit(self, tx: _Transaction) -> None:
        self._append([p.entry for p in tx.changes if p.applied])
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self.pending_path.unlink()

    def _roll_back(self, tx: _Transaction) -> None:
        """Put back what an aborted transaction changed; the intent stays if that fails."""
        for planned in reversed(tx.changes):
            if planned.applied:
                self._restore(Path(planned.entry.path), planned.entry.before, planned.entry.after)
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self.pending_path.unlink()

    def _restore(self, path: Path, content: str | None, expected: str | None) -> bool:
        """Set `path` back to blob `content` (None: absent) if it still holds `expected`."""
        current = _sha(_read_or_none(path))
        if current == content:
            return True
        if current != expected:
            return False  # someone changed it since: leave their work alone
        if content is None:
            path.unlink()
        else:
            atomic_write_bytes(through_link(path), self.blob(content))
        return True

    def _recover(self) -> None:
        """Finish or roll back a change whose process died between the file and the log."""
        try:
            raw = read_bytes(self.pending_path, NOTES_LIMIT, "a pending history change")
        except (FileNotFoundError, NotADirectoryError):
            return
        planned = []
        for line in raw.split(b"\n"):
            try:
                planned.append(_parse_entry(json.loads(line.decode("utf-8"))))
            except (ValueError, RecursionError):
                continue  # a line cut short by the kill: its file was not touched yet
        changes = [p for p in planned if p is not None and self._is_managed(p.path)]
        logged = {e.id for e in self._read_log()}
        if any(c.id in logged for c in changes):
            # The log append began: the change happened; record whatever is missing.
            missing = [
                c
                for c in changes
                if c.id not in logged and _sha(_read_or_none(Path(c.path))) == c.after
            ]
            self._append(missing)
            self.recovered.append(f"kept an interrupted change to {plural(len(changes), 'file')}")
        else:
            kept = 0
            for change in reversed(changes):
                if not self._restore(Path(change.path), change.before, change.after):
                    kept += 1
            message = f"rolled back an interrupted change to {plural(len(changes), 'file')}"
            if kept:
                message += f" ({kept} changed again since, left as they are)"
            self.recovered.append(message)
        self.pending_path.unlink()

    def _sweep_temp_files(self) -> None:
        """Remove our temp files left by a killed writer (we hold the lock, so none is live)."""
        for top in (self.engine.locations.memory_dir, str(self.folder)):
            for folder, dirs, files in os.walk(top):
                dirs[:] = [d for d in dirs if not d.startswith(".git")]
                for name in files:
                    if not _OUR_TEMP.match(name):
                        continue
                    path = os.path.join(folder, name)
                    with contextlib.suppress(OSError):
                        if os.path.isfile(path) and not os.path.islink(path):
                            os.unlink(path)

    # --- recording ---------------------------------------------------------------------

    def new_group(self) -> str:
        """An id that ties several changes together so they undo as one."""
        return secrets.token_hex(4)

    def _entry(
        self,
        path: Path,
        before: bytes | None,
        after: bytes | None,
        action: str,
        note: str,
        group: str,
        **extra: str,
    ) -> HistoryEntry:
        self._ensure()
        return HistoryEntry(
            id=_new_id(),
            time=js_iso(time.time() * 1000),
            action=action,
            path=os.path.abspath(path),
            before=None if before is None else self._put_blob(before),
            after=None if after is None else self._put_blob(after),
            note=note,
            group=group,
            **extra,
        )

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
        """Record a change that was just made to `path` (by code that made it itself)."""
        with self.locked():
            entry = self._entry(Path(path), before, after, action, note, group)
            if self._tx is not None:
                self._tx.changes.append(_Planned(entry, applied=True))
                self._write_pending(entry)
            else:
                self._append([entry])
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
        **extra: str,
    ) -> HistoryEntry:
        """Write `data` atomically to `path` and record the change, as one unit."""
        target = Path(path)
        with self.transaction():
            before = _read_or_none(target)
            entry = self._entry(target, before, data, action, note, group, **extra)
            planned = self._plan(entry)
            atomic_write_bytes(through_link(target), data, mode=mode)
            planned.applied = True
        return entry

    def delete(
        self,
        path: str | os.PathLike[str],
        action: str,
        *,
        note: str = "",
        group: str = "",
        **extra: str,
    ) -> HistoryEntry:
        """Remove `path` and record its last content so it can be restored."""
        target = Path(path)
        with self.transaction():
            before = _read_or_none(target)
            if before is None:
                raise NotFoundError(f"no such file: {target}")
            entry = self._entry(target, before, None, action, note, group, **extra)
            planned = self._plan(entry)
            target.unlink()
            planned.applied = True
        return entry

    # --- reading -----------------------------------------------------------------------

    def _read_log(self) -> list[HistoryEntry]:
        """Every entry in log order; unreadable lines go to `problems`, never fail."""
        problems: list[LogProblem] = []
        out: list[HistoryEntry] = []
        try:
            data = read_bytes(self.log_path, LOG_LIMIT, "the history log")
        except (FileNotFoundError, NotADirectoryError):
            self.problems = []
            return []
        lines = data.split(b"\n")
        for number, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                entry = _parse_entry(json.loads(raw.decode("utf-8")))
            except UnicodeDecodeError:
                problems.append(LogProblem(number, "not UTF-8"))
                continue
            except (ValueError, RecursionError):
                reason = "cut short (a crash while writing)" if number == len(lines) else "not JSON"
                problems.append(LogProblem(number, reason))
                continue
            if entry is None:
                problems.append(LogProblem(number, "not a history entry"))
                continue
            out.append(entry)
        self.problems = problems
        return out

    def problem_summary(self) -> str | None:
        """One line about skipped log lines, or None when every line was read."""
        if not self.problems:
            return None
        shown = ", ".join(f"line {p.line}: {p.reason}" for p in self.problems[:3])
        more = f" and {len(self.problems) - 3} more" if len(self.problems) > 3 else ""
        count = len(self.problems)
        return (
            f"skipped {count} unreadable {plural_noun(count, 'line')} in the history log "
            f"{self.log_path} ({shown}{more}); the rest is usable"
        )

    def entries(self, path: str | os.PathLike[str] | None = None) -> list[HistoryEntry]:
        """Every recorded change, newest first, optionally for one file."""
        if self.pending_path.exists():
            with self.locked():
                pass  # taking the lock finishes or rolls back an interrupted change
        wanted = None if path is None else os.path.abspath(os.fspath(path))
        out = [e for e in self._read_log() if wanted is None or e.path == wanted]
        out.reverse()
        return out

    def get(self, entry_id: str) -> HistoryEntry:
        """The entry with this id (a unique prefix is enough)."""
        return self._find(self.entries(), entry_id)

    def in_effect(self, entry_id: str) -> bool:
        """Whether the change holding `entry_id` is in effect (recorded and not undone)."""
        chronological = list(reversed(self.entries()))
        entry = self._find(chronological, entry_id)
        _, applied, _ = self._stack(chronological)
        return applied.get(entry.change_key, True)

    @staticmethod
    def _find(entries: list[HistoryEntry], entry_id: str) -> HistoryEntry:
        matches = [e for e in entries if e.id == entry_id or e.id.startswith(entry_id)]
        if not matches:
            raise NotFoundError(f"no history entry {entry_id!r}")
        exact = [e for e in matches if e.id == entry_id]
        if len(exact) == 1 or len(matches) == 1:
            return (exact or matches)[0]
        raise NotFoundError(f"history id {entry_id!r} is ambiguous; give more characters")

    # --- the undo stack ----------------------------------------------------------------

    def _stack(
        self, chronological: list[HistoryEntry]
    ) -> tuple[dict[str, list[HistoryEntry]], dict[str, bool], list[str]]:
        """Changes (key → entries, oldest first), whether each is in effect, the redo stack."""
        changes: dict[str, list[HistoryEntry]] = {}
        applied: dict[str, bool] = {}
        redo: list[str] = []
        by_id = {e.id: e for e in chronological}
        seen_ops: set[str] = set()
        for entry in chronological:
            if entry.action in (UNDO_ACTION, REDO_ACTION):
                op = entry.change_key
                if op in seen_ops:
                    continue  # one undo touching several files is one step
                seen_ops.add(op)
                target, undo = self._op_target(entry, by_id)
                if target is None:
                    continue
                applied[target] = not undo
                if target in redo:
                    redo.remove(target)
                if undo:
                    redo.append(target)
                continue
            key = entry.change_key
            if key not in changes:
                changes[key] = []
                redo.clear()  # a new change ends the redo stack
            changes[key].append(entry)
            applied[key] = True
        return changes, applied, redo

    @staticmethod
    def _op_target(entry: HistoryEntry, by_id: dict[str, HistoryEntry]) -> tuple[str | None, bool]:
        """The change an undo or redo entry acted on, and whether it undid it."""
        if entry.undoes:
            return entry.undoes, True
        if entry.redoes:
            return entry.redoes, False
        # Logs written before the stack: an undo noted "undo <id>" and toggled that entry.
        match = _OLD_UNDO_NOTE.match(entry.note)
        target = by_id.get(match.group(1)) if match else None
        undo = True
        while target is not None and target.action == UNDO_ACTION and not target.undoes:
            inner = _OLD_UNDO_NOTE.match(target.note)
            target = by_id.get(inner.group(1)) if inner else None
            undo = not undo
        if target is None:
            return None, True
        if target.undoes:
            return target.undoes, not undo
        return target.change_key, undo

    def _is_managed(self, path: str) -> bool:
        """Inside the memory folder (team and logs included) or a session-notes folder of
        this project, lexically and after resolving the links of its folders. The file itself
        may be a link: a save writes through it, as Claude Code does, so undo may too."""
        locations = self.engine.locations
        normal = os.path.normpath(path)
        memory = os.path.normpath(locations.memory_dir)
        roots = [memory]
        transcripts = os.path.normpath(locations.transcripts_dir)
        parts = Path(normal).parts
        if (
            normal.startswith(transcripts + os.sep)
            and len(parts) == len(Path(transcripts).parts) + 3
            and parts[-2:] == ("session-memory", "summary.md")
        ):
            roots.append(transcripts)
        for root in roots:
            if not normal.startswith(root + os.sep):
                continue
            real_root = os.path.realpath(root)
            real = os.path.join(os.path.realpath(os.path.dirname(normal)), Path(normal).name)
            if real.startswith(real_root + os.sep):
                return True
        return False

    def _check_managed(self, batch: list[HistoryEntry]) -> None:
        for entry in batch:
            if not self._is_managed(entry.path):
                raise PathTraversalError(
                    f"history entry {entry.id} names {entry.path}, which is outside the "
                    f"folders the workbench manages ({self.engine.locations.memory_dir}); "
                    "refused, nothing was changed"
                )
            if os.path.lexists(entry.path) and not os.path.isfile(entry.path):
                raise PathTraversalError(
                    f"history entry {entry.id} names {entry.path}, which is not a regular "
                    "file now; refused, nothing was changed"
                )

    def undo(self, entry_id: str | None = None, *, force: bool = False) -> UndoResult:
        """Reverse a change (the newest still in effect by default) and every file in it.

        Refuses when a file no longer holds what the change left there, unless `force`.
        """
        with self.locked():
            chronological = list(reversed(self.entries()))
            if not chronological:
                raise NotFoundError("nothing to undo: the workbench has made no changes here")
            changes, applied, _ = self._stack(chronological)
            if entry_id:
                entry = self._find(chronological, entry_id)
                if entry.action in (UNDO_ACTION, REDO_ACTION):
                    verb = "an undo" if entry.action == UNDO_ACTION else "a redo"
                    raise UserInputError(
                        f"history entry {entry.id} is {verb}; to reverse it use "
                        f"`workbench {'redo' if entry.action == UNDO_ACTION else 'undo'}`"
                    )
                key = entry.change_key
                if not applied.get(key, True):
                    raise UserInputError(
                        f"change {entry.id} is already undone (`workbench redo` puts it back)"
                    )
            else:
                pending = [k for k in changes if applied.get(k)]
                if not pending:
                    raise NotFoundError("nothing left to undo: every recorded change is undone")
                key = pending[-1]
            batch = changes[key]
            self._check_managed(batch)
            if not force:
                newest: dict[str, HistoryEntry] = {}
                for entry in batch:
                    newest[entry.path] = entry
                for path, entry in newest.items():
                    if _sha(_read_or_none(Path(path))) != entry.after:
                        raise ConflictError(
                            f"{path} changed since history entry {entry.id}; undo would "
                            "overwrite newer work (use --force to undo anyway)"
                        )
            return self._replay(UNDO_ACTION, key, list(reversed(batch)), undo=True)

    def redo(self, entry_id: str | None = None, *, force: bool = False) -> UndoResult:
        """Re-apply the most recently undone change (or the one named), if nothing changed
        the files since."""
        with self.locked():
            chronological = list(reversed(self.entries()))
            changes, applied, redo_stack = self._stack(chronological)
            if entry_id:
                entry = self._find(chronological, entry_id)
                key = entry.undoes or entry.change_key
                if key not in changes:
                    raise UserInputError(f"history entry {entry.id} is not a change to redo")
                if applied.get(key, True):
                    raise UserInputError(
                        f"change {entry.id} is in effect; there is nothing to redo"
                    )
            else:
                if not redo_stack:
                    raise NotFoundError("nothing to redo: no undo since the last change")
                key = redo_stack[-1]
            batch = changes[key]
            self._check_managed(batch)
            if not force:
                oldest: dict[str, HistoryEntry] = {}
                for entry in batch:
                    oldest.setdefault(entry.path, entry)
                for path, entry in oldest.items():
                    if _sha(_read_or_none(Path(path))) != entry.before:
                        raise ConflictError(
                            f"{path} changed since the undo; redo would overwrite newer work "
                            "(use --force to redo anyway)"
                        )
            return self._replay(REDO_ACTION, key, batch, undo=False)

    def _record_same(
        self,
        path: Path,
        current: bytes | None,
        kind: str,
        note: str,
        group: str,
        link: _Link,
    ) -> HistoryEntry:
        entry = self._entry(path, current, current, kind, note, group, **link)
        assert self._tx is not None
        self._tx.changes.append(_Planned(entry, applied=True))
        return entry

    def _replay(self, kind: str, key: str, batch: list[HistoryEntry], *, undo: bool) -> UndoResult:
        group = self.new_group()
        link = _Link(undoes=key) if undo else _Link(redoes=key)
        made: list[HistoryEntry] = []
        with self.transaction():
            for entry in batch:
                path = Path(entry.path)
                content = entry.before if undo else entry.after
                note = f"{kind} of {entry.action} {entry.id}"
                current = _read_or_none(path)
                if _sha(current) == content:
                    # Already as wanted (a forced step): still recorded, so the stack moves on.
                    made.append(self._record_same(path, current, kind, note, group, link))
                elif content is None:
                    made.append(self.delete(path, kind, note=note, group=group, **link))
                else:
                    data = self.blob(content)
                    made.append(self.write(path, data, kind, note=note, group=group, **link))
        action = batch[-1].action if undo else batch[0].action  # the change's first entry
        return UndoResult(kind, key, action, tuple(made))


def _read_or_none(path: Path) -> bytes | None:
    # Any managed file (a memory, team file, notes, a log): bounded, never a pipe or device.
    try:
        return read_bytes(path, SCANNED_FILE_LIMIT, "a managed file")
    except FileNotFoundError:
        return None
