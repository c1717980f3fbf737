"""Versioned schema migrations for both stores.

Each store keeps a `schema_migrations` table naming the versions applied. A migration is a tuple
of statements run in one transaction together with its row in that table, so a database is
always at exactly one version. Workers that start at once all try to migrate: SQLite's
`BEGIN IMMEDIATE` and PostgreSQL's advisory lock let one of them do it while the others wait and
then find nothing left to apply.

Version 1 is the schema the server shipped with before versioning (its `IF NOT EXISTS` lets a
database from then adopt version 1 untouched); version 2 keeps each entry's size and each repo's
totals, which the metrics report; PostgreSQL's version 3 holds the rate-limit buckets (SQLite
keeps those in a side file, see `store.SqliteRateBuckets`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


SQLITE: tuple[Migration, ...] = (
    Migration(
        1,
        "repos and entries",
        (
            "CREATE TABLE IF NOT EXISTS repos (org TEXT NOT NULL, repo TEXT NOT NULL, "
            "version INTEGER NOT NULL, last_modified TEXT NOT NULL, checksum TEXT NOT NULL, "
            "PRIMARY KEY (org, repo))",
            "CREATE TABLE IF NOT EXISTS entries (org TEXT NOT NULL, repo TEXT NOT NULL, "
            "key TEXT NOT NULL, content TEXT NOT NULL, checksum TEXT NOT NULL, "
            "PRIMARY KEY (org, repo, key))",
        ),
    ),
    Migration(
        2,
        "entry sizes and repo totals",
        (
            "ALTER TABLE entries ADD COLUMN size INTEGER NOT NULL DEFAULT 0",
            "UPDATE entries SET size = length(CAST(content AS BLOB))",
            "ALTER TABLE repos ADD COLUMN entry_count INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE repos ADD COLUMN byte_count INTEGER NOT NULL DEFAULT 0",
            "UPDATE repos SET "
            "entry_count = (SELECT count(*) FROM entries e "
            "WHERE e.org = repos.org AND e.repo = repos.repo), "
            "byte_count = (SELECT coalesce(sum(e.size), 0) FROM entries e "
            "WHERE e.org = repos.org AND e.repo = repos.repo)",
        ),
    ),
)

POSTGRESQL: tuple[Migration, ...] = (
    Migration(
        1,
        "repos and entries",
        (
            "CREATE TABLE IF NOT EXISTS repos (org TEXT NOT NULL, repo TEXT NOT NULL, "
            "version BIGINT NOT NULL, last_modified TEXT NOT NULL, checksum TEXT NOT NULL, "
            "PRIMARY KEY (org, repo))",
            # Bodies as UTF-8 bytes: PostgreSQL's text type cannot hold NUL, which a team file
            # may contain and SQLite stores.
            "CREATE TABLE IF NOT EXISTS entries (org TEXT NOT NULL, repo TEXT NOT NULL, "
            "key TEXT NOT NULL, content BYTEA NOT NULL, checksum TEXT NOT NULL, "
            "PRIMARY KEY (org, repo, key))",
        ),
    ),
    Migration(
        2,
        "entry sizes and repo totals",
        (
            "ALTER TABLE entries ADD COLUMN size BIGINT NOT NULL DEFAULT 0",
            "UPDATE entries SET size = octet_length(content)",
            "ALTER TABLE repos ADD COLUMN entry_count BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE repos ADD COLUMN byte_count BIGINT NOT NULL DEFAULT 0",
            "UPDATE repos SET entry_count = t.n, byte_count = t.b FROM "
            "(SELECT org, repo, count(*) AS n, coalesce(sum(size), 0) AS b FROM entries "
            "GROUP BY org, repo) AS t WHERE t.org = repos.org AND t.repo = repos.repo",
        ),
    ),
    Migration(
        3,
        "rate-limit buckets",
        (
            # UNLOGGED: no WAL for state that may be lost; a crash only refills the buckets.
            "CREATE UNLOGGED TABLE IF NOT EXISTS rate_buckets (bucket TEXT PRIMARY KEY, "
            "level DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL, "
            "allowed BOOLEAN NOT NULL)",
        ),
    ),
)

CREATE_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
    "name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)


def latest(migrations: tuple[Migration, ...]) -> int:
    """The version a fully migrated database is at."""
    return migrations[-1].version


def pending(migrations: tuple[Migration, ...], current: int) -> list[Migration]:
    """The migrations still to apply to a database at `current`, in order."""
    return [m for m in migrations if m.version > current]


@dataclass(frozen=True)
class MigrationReport:
    """What a migration run found and did."""

    before: int
    after: int
    applied: tuple[int, ...]

    def to_json(self) -> dict[str, object]:
        return {"before": self.before, "after": self.after, "applied": list(self.applied)}
