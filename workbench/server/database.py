"""`--db` values: a plain path or `sqlite:///path` for SQLite, `postgresql://…` for PostgreSQL."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

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
        _check_conninfo(text)
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


def has_password(url: str) -> bool:
    """Whether a database URL carries a password (in its user part or a `password=`)."""
    return bool(secrets_in(url))


def secrets_in(url: str) -> list[str]:
    """The password of a PostgreSQL URL in every form a message could quote it, longest first."""
    found: set[str] = set()
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if ":" in userinfo:
        raw = userinfo.partition(":")[2]
        found.update({raw, unquote(raw)})
    for raw in re.findall(r"(?i)(?:^|&)password=([^&]*)", parts.query):
        found.update({raw, unquote(raw)})
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name.lower() == "password":
            found.add(value)
    return sorted((secret for secret in found if secret), key=len, reverse=True)


def scrub(text: str, url: str) -> str:
    """`text` with the URL's password, in any of its forms, replaced by `***`."""
    for secret in secrets_in(url):
        text = text.replace(secret, "***")
    return text


def _check_conninfo(url: str) -> None:
    # libpq quotes the part it cannot read, which may be the password: say it without it.
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(url)
    except ProgrammingError as exc:
        first = (str(exc).strip().splitlines() or ["not a PostgreSQL URL"])[0]
        raise ValueError(f"not a usable PostgreSQL URL ({scrub(first, url)})") from None
