"""The PostgreSQL store: the same protocol and guarantees as the SQLite one, for many workers.

psycopg 3 with `psycopg_pool`: each worker keeps a small pool of connections (opened in the
worker, never inherited across a fork). Every connection is checked as it is taken from the
pool, so after the database restarts the first request gets a fresh connection instead of a
dead one, and a database that is down answers 503 (`StoreUnavailable`) within the pool timeout
rather than hanging the request.

A PUT locks its repo's row (`SELECT … FOR UPDATE`, creating the row first if the repo is new),
then reads the entries' checksums and decides with the shared `plan_upsert`. Under READ
COMMITTED each statement after the lock sees every earlier writer's commit, and every writer
of the repo holds that lock, so the comparison and the write see one state. A GET is a single
statement, hence a single snapshot of the row and its entries.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from workbench.server import migrations
from workbench.server.migrations import MigrationReport
from workbench.server.store import (
    PutOutcome,
    RepoRow,
    RepoSnapshot,
    SchemaError,
    StoreUnavailable,
    plan_upsert,
    retry_after,
    take_sql,
)

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

T = TypeVar("T")
POOL_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 5
MIGRATION_LOCK = 7_310_514  # any constant shared by every migrating worker
DEFAULT_POOL_SIZE = 10
STATEMENT_TIMEOUT_MS = 20_000
LOCK_TIMEOUT_MS = 15_000
IDLE_IN_TRANSACTION_MS = 60_000

_NOW = "extract(epoch FROM clock_timestamp())::float8"


class PostgresStore:
    """A store in PostgreSQL, reached at a `postgresql://` URL."""

    kind = "postgresql"

    def __init__(self, url: str, *, pool_size: int = DEFAULT_POOL_SIZE) -> None:
        self.url = url
        self.pool_size = max(1, pool_size)
        self._pool: ConnectionPool | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._take_sql = take_sql(
            least="least", greatest="greatest", now=_NOW, param=lambda n: f"%({n})s"
        )

    # --- connections ------------------------------------------------------------------

    def _pool_now(self) -> ConnectionPool:
        with self._lock:
            if self._closed:
                raise RuntimeError("the team store is closed")
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                self._pool = ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=self.pool_size,
                    timeout=POOL_TIMEOUT_S,
                    check=ConnectionPool.check_connection,
                    kwargs={"connect_timeout": CONNECT_TIMEOUT_S},
                    configure=_configure,
                    name="team-store",
                    open=False,
                )
                self._pool.open(wait=False)
            return self._pool

    def _run(self, fn: Callable[[psycopg.Connection[Any]], T], *, autocommit: bool = False) -> T:
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._pool_now().connection() as conn:
                if autocommit:
                    conn.autocommit = True
                    try:
                        return fn(conn)
                    finally:
                        if not conn.closed:
                            conn.autocommit = False
                return fn(conn)  # the pool commits on a clean exit, rolls back otherwise
        except PoolTimeout as exc:
            raise StoreUnavailable("no PostgreSQL connection could be had in time") from exc
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(
                f"PostgreSQL cannot answer: {_first_line(exc, self.url)}"
            ) from exc

    def _direct(self) -> psycopg.Connection[Any]:
        """One connection outside the pool (migrations, start-up checks)."""
        import psycopg

        try:
            return psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(
                f"cannot connect to PostgreSQL: {_first_line(exc, self.url)}"
            ) from exc

    def initialize(self) -> None:
        """Apply migrations now, so a bad URL fails before serving."""
        self.migrate()

    def migrate(self, *, apply: bool = True) -> MigrationReport:
        """Bring the schema to the newest version (or, with apply=False, check it is there)."""
        import psycopg

        with self._direct() as conn:
            try:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                conn.execute(migrations.CREATE_TABLE)
                found = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations")
                row = found.fetchone()
                current = int(row[0]) if row else 0
                newest = migrations.latest(migrations.POSTGRESQL)
                if current > newest:
                    raise SchemaError(
                        f"the database is at schema version {current}; this server knows up "
                        f"to {newest} (upgrade the workbench)"
                    )
                todo = migrations.pending(migrations.POSTGRESQL, current)
                if todo and not apply:
                    raise SchemaError(
                        f"the database is at schema version {current}, the server needs "
                        f"{newest}: run `workbench team-server migrate`"
                    )
                for step in todo:
                    for statement in step.statements:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at) "
                        "VALUES (%s, %s, now()::text)",
                        (step.version, step.name),
                    )
            except psycopg.OperationalError as exc:
                raise StoreUnavailable(
                    f"PostgreSQL cannot answer: {_first_line(exc, self.url)}"
                ) from exc
            except psycopg.Error as exc:
                raise SchemaError(
                    f"cannot migrate the database: {_first_line(exc, self.url)}"
                ) from exc
        return MigrationReport(current, newest, tuple(m.version for m in todo))

    def ping(self) -> None:
        """Raise StoreUnavailable unless the database answers a query."""
        self._run(lambda conn: conn.execute("SELECT 1").fetchone(), autocommit=True)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close(timeout=5)

    # --- reads ------------------------------------------------------------------------

    def snapshot(self, org: str, repo: str, *, with_bodies: bool = True) -> RepoSnapshot | None:
        """The repo's current state, or None when it holds no entries."""
        body = "e.content" if with_bodies else "NULL"
        sql = (
            "SELECT r.version, r.last_modified, r.checksum, r.byte_count, e.key, e.checksum, "
            f"{body} FROM repos r JOIN entries e ON e.org = r.org AND e.repo = r.repo "
            'WHERE r.org = %s AND r.repo = %s ORDER BY e.key COLLATE "C"'
        )
        rows = self._run(lambda conn: conn.execute(sql, (org, repo)).fetchall(), autocommit=True)
        if not rows:
            return None
        version, last_modified, checksum, total_bytes = rows[0][:4]
        checksums = {row[4]: row[5] for row in rows}
        entries = {row[4]: bytes(row[6]).decode("utf-8") for row in rows} if with_bodies else None
        return RepoSnapshot(
            org, repo, int(version), last_modified, checksum, checksums, entries, int(total_bytes)
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
        """Apply `entries` (keys not named are kept) in one transaction."""
        return self._run(lambda conn: self._upsert(conn, org, repo, entries, if_match, max_entries))

    @staticmethod
    def _upsert(
        conn: psycopg.Connection[Any],
        org: str,
        repo: str,
        entries: Mapping[str, str],
        if_match: str | None,
        max_entries: int,
    ) -> PutOutcome:
        lock = (
            "SELECT version, last_modified, checksum FROM repos "
            "WHERE org = %s AND repo = %s FOR UPDATE"
        )
        found = conn.execute(lock, (org, repo)).fetchone()
        if found is None:
            # A new repo: make its row (rolled back with the rest unless the PUT applies) so
            # that two first PUTs also queue on one lock.
            conn.execute(
                "INSERT INTO repos (org, repo, version, last_modified, checksum) "
                "VALUES (%s, %s, 0, '', '') ON CONFLICT (org, repo) DO NOTHING",
                (org, repo),
            )
            found = conn.execute(lock, (org, repo)).fetchone()
        row = RepoRow(int(found[0]), found[1], found[2]) if found is not None else None
        current = {
            key: (digest, int(size))
            for key, digest, size in conn.execute(
                "SELECT key, checksum, size FROM entries WHERE org = %s AND repo = %s",
                (org, repo),
            )
        }
        plan = plan_upsert(row, current, entries, if_match, max_entries, time.time() * 1000)
        if not plan.writes:
            conn.rollback()
            return plan.outcome
        out = plan.outcome
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO entries (org, repo, key, content, checksum, size) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (org, repo, key) DO UPDATE SET "
                "content = excluded.content, checksum = excluded.checksum, size = excluded.size",
                [
                    (org, repo, key, content.encode("utf-8"), digest, size)
                    for key, content, digest, size in plan.writes
                ],
            )
        conn.execute(
            "UPDATE repos SET version = %s, last_modified = %s, checksum = %s, "
            "entry_count = %s, byte_count = %s WHERE org = %s AND repo = %s",
            (out.version, out.last_modified, out.checksum, out.total_entries, out.total_bytes,
             org, repo),
        )  # fmt: skip
        return out

    # --- rate limits ------------------------------------------------------------------

    def take_token(self, bucket: str, rate: float, burst: float) -> float:
        """Take one request from `bucket`: 0.0 if allowed, else the seconds until it would be."""
        params = {"bucket": bucket, "rate": float(rate), "burst": float(burst)}
        row = self._run(
            lambda conn: conn.execute(self._take_sql, params).fetchone(),
            autocommit=True,
        )
        assert row is not None
        return retry_after(bool(row[0]), float(row[1]), rate)


def _configure(conn: psycopg.Connection[Any]) -> None:
    """Bound every request: no statement, lock wait or abandoned transaction lasts long (a
    stuck one answers 503 and releases its repo's lock instead of holding up every writer)."""
    conn.execute(
        f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}; SET lock_timeout = {LOCK_TIMEOUT_MS}; "
        f"SET idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_MS}"
    )
    conn.commit()


def _first_line(exc: BaseException, url: str) -> str:
    # libpq's messages name the host and port; the scrub is for those that quote a value.
    from workbench.server.database import scrub

    text = str(exc).strip().splitlines()
    return scrub(text[0], url) if text else type(exc).__name__
