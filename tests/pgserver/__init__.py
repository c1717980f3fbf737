"""A throwaway PostgreSQL server on loopback, for the tests and the load benchmark.

`initdb` refuses to run as root, so as root the cluster's programs run as the `postgres` user
(through `runuser`), in a folder that user owns; otherwise as the current user. The server
listens on 127.0.0.1 at a free port with its socket in that folder, runs without fsync (the
tests kill server processes, never the machine) and is stopped and removed by `stop()`.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

START_TIMEOUT_S = 120


def find_bindir() -> Path | None:
    """The newest PostgreSQL's bin folder holding initdb, pg_ctl and postgres, or None."""
    candidates = []
    for initdb in glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        folder = Path(initdb).parent
        try:
            version = int(folder.parent.name.split(".")[0])
        except ValueError:
            version = 0
        candidates.append((version, folder))
    found = shutil.which("initdb")
    if found:
        candidates.append((0, Path(found).parent))
    for _, folder in sorted(candidates, reverse=True):
        if all((folder / name).exists() for name in ("initdb", "pg_ctl", "postgres")):
            return folder
    return None


def unavailable_reason() -> str | None:
    """Why no cluster can be started here, or None when one can."""
    if find_bindir() is None:
        return "no PostgreSQL binaries (/usr/lib/postgresql/*/bin/initdb); install postgresql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a postgres user to run initdb as"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PgCluster:
    """One PostgreSQL server in a temporary folder."""

    def __init__(self, bindir: Path, root: Path) -> None:
        self.bindir = bindir
        self.root = root
        self.data = root / "data"
        self.sock = root / "sock"
        self.log = root / "server.log"
        self.port = 0
        self._as_postgres = os.geteuid() == 0

    # --- life cycle -------------------------------------------------------------------

    @classmethod
    def create(cls) -> PgCluster:
        """initdb and start a new cluster; raises RuntimeError with the log when it fails."""
        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError("no PostgreSQL binaries")
        root = Path(tempfile.mkdtemp(prefix="wb-pg-"))
        cluster = cls(bindir, root)
        cluster.sock.mkdir()
        if cluster._as_postgres:
            entry = pwd.getpwnam("postgres")
            for path in (root, cluster.sock):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        try:
            cluster._run(
                "initdb", "-D", str(cluster.data), "-A", "trust", "-U", "postgres",
                "--no-sync", "-E", "UTF8", "--locale=C",
            )  # fmt: skip
            cluster.start()
        except BaseException:
            cluster.remove()
            raise
        return cluster

    def _run(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(self.bindir / program), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S + 30,
            stdin=subprocess.DEVNULL,
            cwd=self.root,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{program} failed: {done.stderr.strip()}\n{self.log_tail()}")
        return done

    def start(self) -> None:
        """Start the server (on the same port after a stop); returns once it accepts."""
        for attempt in range(3):
            port = self.port or _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {port} -k {self.sock} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
            )
            done = self._run(
                "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options,
                "-w", "-t", str(START_TIMEOUT_S), "start", check=False,
            )  # fmt: skip
            if done.returncode == 0:
                self.port = port
                return
            if self.port or attempt == 2:  # a fixed port stays fixed; else try another
                raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()}\n{self.log_tail()}")
            time.sleep(0.2)

    def stop(self) -> None:
        """Stop the server (fast shutdown: open sessions are ended)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def remove(self) -> None:
        """Stop the server and delete its folder."""
        if (self.data / "postmaster.pid").exists():
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    # --- databases --------------------------------------------------------------------

    def url(self, schema: str | None = None) -> str:
        """A URL of the `postgres` database, with `schema` first on the search path."""
        base = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        if schema is None:
            return base
        return f"{base}?options=-csearch_path%3D{schema}"

    def new_schema(self) -> tuple[str, str]:
        """A fresh, empty schema: (its name, a URL whose tables live in it)."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return name, self.url(name)

    def drop_schema(self, name: str) -> None:
        import psycopg

        try:
            with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        except psycopg.Error:
            pass  # the server is going away anyway


def stored_texts(db: str) -> list[str]:
    """Every entry body a team-server database holds, read straight from either store."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db, connect_timeout=10) as conn:
            return [bytes(row[0]).decode() for row in conn.execute("SELECT content FROM entries")]
    import sqlite3

    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT content FROM entries")]
