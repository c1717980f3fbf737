"""The team server's SQLite storage: one row per (organization, repo), one per entry.

Durability and concurrency come from SQLite itself: the database runs in WAL mode with
`synchronous=FULL`, so a commit is on disk before the server answers and a killed server loses
nothing it acknowledged; every upsert is one `BEGIN IMMEDIATE` transaction that re-reads the
checksum it compares `If-Match` against, so two writers can never both apply on the same base
(the loser sees the new checksum and gets a 412).

The repo checksum is defined as

    "sha256:" + sha256(JSON([[key, entry_checksum], ...] sorted by key)).hexdigest()

with the JSON written compactly (`","` and `":"` separators, non-ASCII kept as UTF-8) and keys
sorted by code point. It depends only on the entries, so pushing content the server already
holds leaves the checksum (and every client's `If-Match`) unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from workbench.engine.jsutil import js_iso

SCHEMA = """
CREATE TABLE IF NOT EXISTS repos (
    org TEXT NOT NULL,
    repo TEXT NOT NULL,
    version INTEGER NOT NULL,
    last_modified TEXT NOT NULL,
    checksum TEXT NOT NULL,
    PRIMARY KEY (org, repo)
);
CREATE TABLE IF NOT EXISTS entries (
    org TEXT NOT NULL,
    repo TEXT NOT NULL,
    key TEXT NOT NULL,
    content TEXT NOT NULL,
    checksum TEXT NOT NULL,
    PRIMARY KEY (org, repo, key)
);
"""

BUSY_TIMEOUT_MS = 15_000


def entry_checksum(content: str) -> str:
    """`sha256:<hex>` of the UTF-8 content, as the sync protocol hashes entries."""
    return "sha256:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


def repo_checksum(entry_checksums: Mapping[str, str]) -> str:
    """The repo checksum defined in the module docstring."""
    pairs = [[key, entry_checksums[key]] for key in sorted(entry_checksums)]
    blob = json.dumps(pairs, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return "sha256:" + hashlib.sha256(blob).hexdigest()


@dataclass(frozen=True)
class RepoSnapshot:
    """A consistent view of one repo's team memory."""

    organization_id: str
    repo: str
    version: int
    last_modified: str
    checksum: str
    entry_checksums: dict[str, str]
    entries: dict[str, str] | None = None
    """Entry bodies; None when only hashes were asked for."""

    def to_json(self) -> dict[str, object]:
        """The GET 200 body (spec 03 §6.2), or the hashes view when bodies were not read."""
        if self.entries is None:
            return {
                "checksum": self.checksum,
                "version": self.version,
                "entryChecksums": dict(self.entry_checksums),
            }
        return {
            "organizationId": self.organization_id,
            "repo": self.repo,
            "version": self.version,
            "lastModified": self.last_modified,
            "checksum": self.checksum,
            "content": {
                "entries": dict(self.entries),
                "entryChecksums": dict(self.entry_checksums),
            },
        }


@dataclass(frozen=True)
class PutOutcome:
    """What an upsert did: applied, refused on `If-Match`, or refused for too many entries."""

    status: str
    """`ok`, `precondition_failed` or `too_many_entries`."""
    checksum: str | None = None
    version: int = 0
    last_modified: str | None = None
    total_entries: int = 0
    changed_keys: tuple[str, ...] = field(default_factory=tuple)


class TeamStore:
    """Thread-safe access to the SQLite file; each thread gets its own connection."""

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        self.db_path = Path(db_path)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    # --- connections ------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise RuntimeError("the team store is closed")
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.db_path,
            isolation_level=None,  # explicit BEGIN/COMMIT only
            check_same_thread=False,  # closed from the thread that stops the server
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.executescript(SCHEMA)
        self._local.conn = conn
        with self._lock:
            self._connections.append(conn)
        return conn

    def initialize(self) -> None:
        """Create the file and tables now, so a bad `--db` path fails before serving."""
        self._connect()

    def close(self) -> None:
        """Close every connection this store opened."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for conn in connections:
            try:
                conn.close()
            except sqlite3.Error:
                pass

    # --- reads ------------------------------------------------------------------------

    def snapshot(self, org: str, repo: str, *, with_bodies: bool = True) -> RepoSnapshot | None:
        """The repo's current state, or None when it holds no entries."""
        conn = self._connect()
        conn.execute("BEGIN")  # one read transaction: the row and the entries agree
        try:
            row = conn.execute(
                "SELECT version, last_modified, checksum FROM repos WHERE org = ? AND repo = ?",
                (org, repo),
            ).fetchone()
            if row is None:
                return None
            column = "content, checksum" if with_bodies else "checksum"
            rows = conn.execute(
                f"SELECT key, {column} FROM entries WHERE org = ? AND repo = ? ORDER BY key",
                (org, repo),
            ).fetchall()
        finally:
            conn.execute("COMMIT")
        if not rows:
            return None
        if with_bodies:
            entries: dict[str, str] | None = {key: content for key, content, _ in rows}
            checksums = {key: digest for key, _, digest in rows}
        else:
            entries = None
            checksums = {key: digest for key, digest in rows}
        version, last_modified, checksum = row
        return RepoSnapshot(org, repo, version, last_modified, checksum, checksums, entries)

    # --- writes -----------------------------------------------------------------------

    def upsert(
        self,
        org: str,
        repo: str,
        entries: Mapping[str, str],
        *,
        if_match: str | None,
        max_entries: int,
    ) -> PutOutcome:
        """Apply `entries` (keys not named are kept) in one immediate transaction."""
        incoming = {key: (content, entry_checksum(content)) for key, content in entries.items()}
        conn = self._connect()
        # IMMEDIATE takes the write lock before reading, so the If-Match comparison and the
        # write see the same database state even with several server processes.
        conn.execute("BEGIN IMMEDIATE")
        try:
            outcome = self._upsert_locked(conn, org, repo, incoming, if_match, max_entries)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        if outcome.status == "ok" and outcome.changed_keys:
            conn.execute("COMMIT")
        else:
            conn.execute("ROLLBACK")
        return outcome

    def _upsert_locked(
        self,
        conn: sqlite3.Connection,
        org: str,
        repo: str,
        incoming: Mapping[str, tuple[str, str]],
        if_match: str | None,
        max_entries: int,
    ) -> PutOutcome:
        row = conn.execute(
            "SELECT version, last_modified, checksum FROM repos WHERE org = ? AND repo = ?",
            (org, repo),
        ).fetchone()
        current = dict(
            conn.execute(
                "SELECT key, checksum FROM entries WHERE org = ? AND repo = ?", (org, repo)
            ).fetchall()
        )
        has_data = row is not None and bool(current)
        current_checksum = row[2] if has_data else None
        if if_match is not None and not _etag_matches(if_match, current_checksum):
            return PutOutcome("precondition_failed", checksum=current_checksum)

        merged = dict(current)
        for key, (_, digest) in incoming.items():
            merged[key] = digest
        if len(merged) > max_entries:
            return PutOutcome("too_many_entries", total_entries=len(merged))

        changed = tuple(sorted(k for k, (_, d) in incoming.items() if current.get(k) != d))
        version = row[0] if row is not None else 0
        last_modified = row[1] if row is not None else None
        if not changed:
            checksum = repo_checksum(merged) if merged else None
            return PutOutcome("ok", checksum, version, last_modified, len(merged), ())

        conn.executemany(
            "INSERT INTO entries (org, repo, key, content, checksum) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (org, repo, key) DO UPDATE SET "
            "content = excluded.content, checksum = excluded.checksum",
            [(org, repo, key, *incoming[key]) for key in changed],
        )
        checksum = repo_checksum(merged)
        version += 1
        last_modified = js_iso(time.time() * 1000)
        conn.execute(
            "INSERT INTO repos (org, repo, version, last_modified, checksum) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (org, repo) DO UPDATE SET version = excluded.version, "
            "last_modified = excluded.last_modified, checksum = excluded.checksum",
            (org, repo, version, last_modified, checksum),
        )
        return PutOutcome("ok", checksum, version, last_modified, len(merged), changed)


def parse_etag_list(header: str) -> list[str]:
    """The entity tags in an `If-Match` / `If-None-Match` header, quotes and `W/` removed."""
    tags = []
    for part in header.split(","):
        tag = part.strip()
        if tag.startswith("W/"):
            tag = tag[2:]
        tag = tag.strip().strip('"')
        if tag:
            tags.append(tag)
    return tags


def _etag_matches(header: str, current: str | None) -> bool:
    tags = parse_etag_list(header)
    if current is None:
        return False
    return "*" in tags or current in tags
