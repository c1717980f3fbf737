"""The team server's storage: what both stores share, and the SQLite store.

A store keeps one row per (organization, repo) and one per entry. Each upsert is one
transaction that locks the repo's row before it reads the checksum it compares `If-Match`
against, so two writers can never both apply on the same base (the loser sees the new checksum
and gets a 412). SQLite takes that lock with `BEGIN IMMEDIATE` (the whole file, even across
processes); PostgreSQL (`store_pg.py`) with `SELECT … FOR UPDATE` on the repo's row. The
decision itself, `plan_upsert`, is shared, so both stores answer every PUT alike.

SQLite runs in WAL mode with `synchronous=FULL`: a commit is on disk before the server answers,
so a killed server loses nothing it acknowledged.

The repo checksum is defined as

    "sha256:" + sha256(JSON([[key, entry_checksum], ...] sorted by key)).hexdigest()

with the JSON written compactly (`","` and `":"` separators, non-ASCII kept as UTF-8) and keys
sorted by code point. It depends only on the entries, so pushing content the server already
holds leaves the checksum (and every client's `If-Match`) unchanged, and every worker of every
store computes the same ETag for the same entries.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, TypeVar

from workbench.engine.jsutil import js_iso
from workbench.server import migrations
from workbench.server.migrations import MigrationReport

BUSY_TIMEOUT_MS = 15_000
T = TypeVar("T")


class StoreUnavailable(Exception):
    """The database cannot answer now (down, locked, out of connections): the request may be
    retried later. The message never holds credentials."""


class SchemaError(Exception):
    """The database's schema is not one this server can use (newer, or not migrated)."""


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
    total_bytes: int = 0

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
    total_bytes: int = 0


@dataclass(frozen=True)
class RepoRow:
    version: int
    last_modified: str
    checksum: str


@dataclass(frozen=True)
class UpsertPlan:
    """The shared decision on one PUT; `writes` is empty unless something changes."""

    outcome: PutOutcome
    writes: tuple[tuple[str, str, str, int], ...] = ()
    """(key, content, checksum, size) to store."""


def plan_upsert(
    row: RepoRow | None,
    current: Mapping[str, tuple[str, int]],
    entries: Mapping[str, str],
    if_match: str | None,
    max_entries: int,
    now_ms: float,
) -> UpsertPlan:
    """Decide a PUT against the locked state: `current` maps key → (checksum, size)."""
    has_data = row is not None and bool(current)
    current_checksum = row.checksum if row is not None and has_data else None
    if if_match is not None and not _etag_matches(if_match, current_checksum):
        return UpsertPlan(PutOutcome("precondition_failed", checksum=current_checksum))

    incoming = {}
    for key, content in entries.items():
        encoded = content.encode("utf-8")
        incoming[key] = (content, "sha256:" + hashlib.sha256(encoded).hexdigest(), len(encoded))
    merged = {key: digest for key, (digest, _) in current.items()}
    sizes = {key: size for key, (_, size) in current.items()}
    for key, (_, digest, size) in incoming.items():
        merged[key] = digest
        sizes[key] = size
    if len(merged) > max_entries:
        return UpsertPlan(PutOutcome("too_many_entries", total_entries=len(merged)))

    changed = tuple(sorted(k for k, (_, d, _) in incoming.items() if current.get(k, ("",))[0] != d))
    version = row.version if row is not None else 0
    last_modified = row.last_modified if row is not None and row.last_modified else None
    total_bytes = sum(sizes.values())
    if not changed:
        checksum = repo_checksum(merged) if merged else None
        outcome = PutOutcome("ok", checksum, version, last_modified, len(merged), (), total_bytes)
        return UpsertPlan(outcome)
    writes = tuple((key, *incoming[key]) for key in changed)
    outcome = PutOutcome(
        "ok",
        repo_checksum(merged),
        version + 1,
        js_iso(now_ms),
        len(merged),
        changed,
        total_bytes,
    )
    return UpsertPlan(outcome, writes)


class Store(Protocol):
    """What the app needs from a store; `TeamStore` (SQLite) and `PostgresStore` provide it."""

    kind: str

    def migrate(self, *, apply: bool = True) -> MigrationReport: ...
    def ping(self) -> None: ...
    def snapshot(self, org: str, repo: str, *, with_bodies: bool = True) -> RepoSnapshot | None: ...
    def upsert(
        self,
        org: str,
        repo: str,
        entries: Mapping[str, str],
        *,
        if_match: str | None,
        max_entries: int,
    ) -> PutOutcome: ...
    def take_token(self, bucket: str, rate: float, burst: float) -> float: ...
    def close(self) -> None: ...


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class TeamStore:
    """The SQLite store: thread-safe, each thread gets its own connection."""

    kind = "sqlite"

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        self.db_path = Path(db_path)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._migrated = False
        self._buckets: SqliteRateBuckets | None = None

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
        self._local.conn = conn
        with self._lock:
            self._connections.append(conn)
        return conn

    def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        try:
            if not self._migrated:
                self.migrate()
            return fn(self._connect())
        except sqlite3.OperationalError as exc:
            # Locked past the busy timeout, disk full, file gone: nothing was applied.
            raise StoreUnavailable(f"the SQLite database cannot answer: {exc}") from exc

    def initialize(self) -> None:
        """Create the file and apply migrations now, so a bad `--db` path fails before serving."""
        self.migrate()

    def migrate(self, *, apply: bool = True) -> MigrationReport:
        """Bring the schema to the newest version (or, with apply=False, check it is there)."""
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")  # one migrator at a time, across processes too
        try:
            conn.execute(migrations.CREATE_TABLE)
            before = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations")
            current = int(before.fetchone()[0])
            newest = migrations.latest(migrations.SQLITE)
            if current > newest:
                raise SchemaError(
                    f"the database is at schema version {current}; this server knows up to "
                    f"{newest} (upgrade the workbench)"
                )
            todo = migrations.pending(migrations.SQLITE, current)
            if todo and not apply:
                raise SchemaError(
                    f"the database is at schema version {current}, the server needs {newest}: "
                    "run `workbench team-server migrate`"
                )
            for step in todo:
                for statement in step.statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (step.version, step.name, _now_iso()),
                )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        self._migrated = True
        return MigrationReport(current, newest, tuple(m.version for m in todo))

    def ping(self) -> None:
        """Raise StoreUnavailable unless the database answers a query."""
        self._run(lambda conn: conn.execute("SELECT 1 FROM schema_migrations LIMIT 1").fetchall())

    def close(self) -> None:
        """Close every connection this store opened."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
            buckets, self._buckets = self._buckets, None
        for conn in connections:
            try:
                conn.close()
            except sqlite3.Error:
                pass
        if buckets is not None:
            buckets.close()

    # --- reads ------------------------------------------------------------------------

    def snapshot(self, org: str, repo: str, *, with_bodies: bool = True) -> RepoSnapshot | None:
        """The repo's current state, or None when it holds no entries."""
        return self._run(lambda conn: self._snapshot(conn, org, repo, with_bodies))

    def _snapshot(
        self, conn: sqlite3.Connection, org: str, repo: str, with_bodies: bool
    ) -> RepoSnapshot | None:
        conn.execute("BEGIN")  # one read transaction: the row and the entries agree
        try:
            row = conn.execute(
                "SELECT version, last_modified, checksum, byte_count FROM repos "
                "WHERE org = ? AND repo = ?",
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
        version, last_modified, checksum, total_bytes = row
        return RepoSnapshot(
            org, repo, version, last_modified, checksum, checksums, entries, total_bytes
        )

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
        return self._run(lambda conn: self._upsert(conn, org, repo, entries, if_match, max_entries))

    def _upsert(
        self,
        conn: sqlite3.Connection,
        org: str,
        repo: str,
        entries: Mapping[str, str],
        if_match: str | None,
        max_entries: int,
    ) -> PutOutcome:
        # IMMEDIATE takes the write lock before reading, so the If-Match comparison and the
        # write see the same database state even with several server processes.
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = conn.execute(
                "SELECT version, last_modified, checksum FROM repos WHERE org = ? AND repo = ?",
                (org, repo),
            ).fetchone()
            current = {
                key: (digest, size)
                for key, digest, size in conn.execute(
                    "SELECT key, checksum, size FROM entries WHERE org = ? AND repo = ?",
                    (org, repo),
                )
            }
            row = RepoRow(*found) if found is not None else None
            plan = plan_upsert(row, current, entries, if_match, max_entries, time.time() * 1000)
            if plan.writes:
                self._write(conn, org, repo, plan)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT" if plan.writes else "ROLLBACK")
        return plan.outcome

    @staticmethod
    def _write(conn: sqlite3.Connection, org: str, repo: str, plan: UpsertPlan) -> None:
        out = plan.outcome
        conn.executemany(
            "INSERT INTO entries (org, repo, key, content, checksum, size) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (org, repo, key) DO UPDATE SET "
            "content = excluded.content, checksum = excluded.checksum, size = excluded.size",
            [(org, repo, *write) for write in plan.writes],
        )
        conn.execute(
            "INSERT INTO repos (org, repo, version, last_modified, checksum, entry_count, "
            "byte_count) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (org, repo) DO UPDATE SET "
            "version = excluded.version, last_modified = excluded.last_modified, "
            "checksum = excluded.checksum, entry_count = excluded.entry_count, "
            "byte_count = excluded.byte_count",
            (org, repo, out.version, out.last_modified, out.checksum, out.total_entries,
             out.total_bytes),
        )  # fmt: skip

    # --- rate limits ------------------------------------------------------------------

    def take_token(self, bucket: str, rate: float, burst: float) -> float:
        """Take one request from `bucket`: 0.0 if allowed, else the seconds until it would be."""
        with self._lock:
            if self._buckets is None:
                self._buckets = SqliteRateBuckets(Path(f"{self.db_path}-ratelimit"))
            buckets = self._buckets
        try:
            return buckets.take(bucket, rate, burst)
        except sqlite3.OperationalError as exc:
            raise StoreUnavailable(f"the rate-limit database cannot answer: {exc}") from exc


def take_sql(*, least: str, greatest: str, now: str, param: Callable[[str], str]) -> str:
    """The one-statement token bucket both stores run (the dialects differ in names only).

    Every SET expression reads the row as it was, so `level` (refilled, then charged when a
    token was there) and `allowed` come from the same refill. `param(name)` writes a named
    placeholder; the parameters are `bucket`, `rate` and `burst`.
    """
    rate, burst, bucket = param("rate"), param("burst"), param("bucket")
    refill = f"{least}({burst}, b.level + {greatest}(0, {now} - b.updated) * {rate})"
    return (
        "INSERT INTO rate_buckets AS b (bucket, level, updated, allowed) "
        f"VALUES ({bucket}, {burst} - 1, {now}, TRUE) ON CONFLICT (bucket) DO UPDATE SET "
        f"level = CASE WHEN {refill} >= 1 THEN {refill} - 1 ELSE {refill} END, "
        f"updated = {greatest}(b.updated, {now}), allowed = {refill} >= 1 "
        "RETURNING allowed, level"
    )


def retry_after(allowed: bool, level: float, rate: float) -> float:
    """Seconds until the bucket holds a whole token again (0.0 when the request was allowed)."""
    if allowed:
        return 0.0
    return max((1.0 - level) / rate, 0.001)


class SqliteRateBuckets:
    """Rate-limit buckets for the SQLite store, in a side file next to the database.

    Shared by every worker on the machine, like the database. A file of its own with
    `synchronous=OFF` because bucket levels may be lost (a crash only refills them) and
    because a bucket update must never queue behind a PUT for the database's write lock.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._sql = take_sql(least="min", greatest="max", now=":now", param=lambda name: f":{name}")

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=5
            )
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = OFF")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS rate_buckets (bucket TEXT PRIMARY KEY, "
                "level REAL NOT NULL, updated REAL NOT NULL, allowed INTEGER NOT NULL)"
            )
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def take(self, bucket: str, rate: float, burst: float) -> float:
        params = {"bucket": bucket, "rate": rate, "burst": burst, "now": time.time()}
        allowed, level = self._connect().execute(self._sql, params).fetchone()
        return retry_after(bool(allowed), float(level), rate)

    def close(self) -> None:
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:
                pass


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
