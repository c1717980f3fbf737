"""`--db` values: a plain path or `sqlite:///path` for SQLite, `postgresql://…` for PostgreSQL."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from workbench.server.store import Store, TeamStore

_PG_SCHEMES = ("postgresql://", "postgres://")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True)
class Database:
    """Where the server keeps its data."""

    kind: str
    """`sqlite` or `postgresql`."""
    location: str
    """The SQLite file's absolute path, or the PostgreSQL URL (with any password)."""

    @property
    def shown(self) -> str:
        """For output and logs: the password replaced by `***`."""
        return redact(self.location) if self.kind == "postgresql" else self.location

    @property
    def sqlite_path(self) -> Path | None:
        return Path(self.location) if self.kind == "sqlite" else None


def parse_database(value: str | os.PathLike[str]) -> Database:
    """Read a `--db` value; ValueError with a one-line reason when it names no store."""
    text = os.fspath(value)
    if not text.strip():
        raise ValueError("the database is empty")
    lowered = text.lower()
    if lowered.startswith(_PG_SCHEMES):
        if not urlsplit(text).hostname and "host=" not in text:
            raise ValueError("a postgresql:// URL needs a host")
        return Database("postgresql", text)
    if lowered.startswith("sqlite://"):
        # sqlite:///abs/path (like file:///) and SQLAlchemy's sqlite:////abs/path alike.
        rest = text[len("sqlite://") :]
        if not rest or rest == "/":
            raise ValueError("sqlite:// needs a file path, as in sqlite:///var/lib/team.sqlite3")
        path = "/" + rest.lstrip("/") if rest.startswith("/") else rest
        return Database("sqlite", os.path.abspath(path))
    if _SCHEME.match(text):
        scheme = text.split("://", 1)[0]
        raise ValueError(f"unknown database scheme {scheme}:// (use postgresql:// or sqlite://)")
    return Database("sqlite", os.path.abspath(text))


def open_store(database: Database | str | os.PathLike[str], *, pool_size: int = 10) -> Store:
    """A store for `database`; nothing is opened until it is first used."""
    db = database if isinstance(database, Database) else parse_database(database)
    if db.kind == "postgresql":
        from workbench.server.store_pg import PostgresStore

        return PostgresStore(db.location, pool_size=pool_size)
    return TeamStore(db.location)


def redact(url: str) -> str:
    """A URL with its password (and any `password=` parameter) replaced by `***`."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, sep, _password = userinfo.partition(":")
        netloc = f"{user}:***@{hostport}" if sep else f"{user}@{hostport}"
    query = re.sub(r"(?i)(password=)[^&]*", r"\1***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
