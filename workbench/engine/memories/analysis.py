"""One memory file's analysis (`Analysis`: its name, type, size and findings) and the plain
list `ListingCache` keeps it as between runs.

Apart from store.py because the record is a layout by position (13 fields) that must be
written, checked and read back the same way: `as_record` writes it, `valid_record` checks
it (the cache is a file anyone with the user's rights may change), `from_record` reads it
back, and `with_dangling_links` finishes a listing built from records. The store decides
when a file is read and keeps the analyses; what it makes of the bytes is decoded here.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from workbench.engine.memories.frontmatter import MEMORY_TYPES, normalize_text
from workbench.engine.memories.listing_cache import Stamp
from workbench.engine.memories.models import LintFinding


class Analysis(NamedTuple):
    """Everything the store derives from one file, cached by its stamp (in memory, and
    between runs by `ListingCache`). A tuple, not a `Record`: one is built for each file a
    listing reads, in a fifth of the time."""

    stamp: Stamp
    name: str | None
    description: str | None
    type: str | None
    units: int
    """The text's length in UTF-16 units (what the token estimate counts)."""
    binary: bool
    not_utf8: bool
    lints: tuple[LintFinding, ...]
    """The file's findings but `memory-stale`, which depends on today (`ages` says if it
    applies) and the team-secret ones."""
    type_location: str | None = None
    links: tuple[str, ...] = ()
    """The `[[name]]` links of the body."""
    ages: bool = False
    """`memory-stale` applies (a linted text file)."""
    secret_lints: tuple[LintFinding, ...] = ()
    mtime: str = ""
    """The stamp's mtime as `toISOString` prints it (formatted once, not per listing)."""


def as_record(analysis: Analysis) -> list[Any]:
    """`analysis` as a `ListingCache` record (paths left out: the key gives them)."""

    def lints(found: tuple[LintFinding, ...]) -> list[Any]:
        return [[f.rule, f.severity, f.message, f.line] for f in found]

    a = analysis
    return [
        list(a.stamp),
        a.name,
        a.description,
        a.type,
        a.type_location,
        a.units,
        a.binary,
        a.not_utf8,
        a.ages,
        lints(a.lints),
        lints(a.secret_lints),
        list(a.links),
        a.mtime,
    ]


_SEVERITIES = frozenset({"error", "warning", "info"})
_KINDS = frozenset({None, *MEMORY_TYPES})
_LOCATIONS = frozenset({None, "top-level", "metadata"})
_OPTIONAL_TEXT = (str, type(None))


def valid_record(record: object, stamp: Stamp) -> bool:
    """Whether a `ListingCache` record is for a file with this `stamp` and every field is
    well formed (the cache is a file anyone with the user's rights may have changed)."""
    if not isinstance(record, list) or len(record) != 13 or record[0] != list(stamp):
        return False
    try:
        _, name, description, kind, location, units, binary, not_utf8, ages = record[:9]
        lints, secret_lints, links, mtime = record[9:]
        # A set lookup of a list raises TypeError, which makes the record invalid too.
        return (
            isinstance(name, _OPTIONAL_TEXT)
            and isinstance(description, _OPTIONAL_TEXT)
            and kind in _KINDS
            and location in _LOCATIONS
            and type(units) is int
            and type(binary) is bool
            and type(not_utf8) is bool
            and type(ages) is bool
            and type(mtime) is str
            and type(links) is list
            and (not links or all(type(link) is str for link in links))
            and _valid_findings(lints)
            and _valid_findings(secret_lints)
        )
    except TypeError:
        return False


def _valid_findings(raw: object) -> bool:
    if type(raw) is not list:
        return False
    for finding in raw:
        if type(finding) is not list or len(finding) != 4:
            return False
        rule, severity, message, line = finding
        if not (
            type(rule) is str
            and severity in _SEVERITIES
            and type(message) is str
            and (line is None or type(line) is int)
        ):
            return False
    return True


def from_record(rel: str, record: object, stamp: Stamp) -> Analysis | None:
    """The analysis a `ListingCache` record holds for a file with this `stamp`; None unless
    `valid_record` says it is one."""
    if not valid_record(record, stamp):
        return None
    assert isinstance(record, list)
    _, name, description, kind, location, units, binary, not_utf8, ages = record[:9]
    lints, secret_lints, links, mtime = record[9:]

    def findings(raw: list[Any]) -> tuple[LintFinding, ...]:
        return tuple(LintFinding(rel, *finding) for finding in raw)

    return Analysis(
        stamp=stamp,
        name=name,
        description=description,
        type=kind,
        units=units,
        binary=binary,
        not_utf8=not_utf8,
        lints=findings(lints),
        type_location=location,
        links=tuple(links),
        ages=ages,
        secret_lints=findings(secret_lints),
        mtime=mtime,
    )


def with_dangling_links(
    rows: list[tuple[float, list[Any], dict[str, Any]]], scope: str
) -> list[tuple[float, list[Any], dict[str, Any]]]:
    """The rows in `scope`, newest first, each dict with a `memory-dangling-link` finding per
    `[[name]]` no memory in the folder answers to (as `list` adds them)."""
    known: set[str] = set()
    if any(record[11] for _, record, _ in rows):  # the names matter only when a file links
        for _, record, row in rows:
            known.add(file_stem(row["path"]))
            if record[1]:
                known.add(record[1])
    out = []
    for item in sorted(rows, key=lambda item: item[0], reverse=True):
        _, record, row = item
        if scope != "all" and row["scope"] != scope:
            continue
        for link in record[11]:
            if link not in known:
                row["lints"].append(
                    {
                        "path": row["path"],
                        "rule": "memory-dangling-link",
                        "severity": "warning",
                        "message": dangling_message(link),
                        "line": None,
                    }
                )
        out.append(item)
    return out


def dangling_message(link: str) -> str:
    """What `memory-dangling-link` says of a `[[link]]` no memory answers to."""
    return f"links to [[{link}]], but no memory has that name or file name"


def file_stem(rel: str) -> str:
    """`Path(rel).stem` without building a Path (a listing asks it of every file)."""
    name = rel.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def decode(data: bytes) -> tuple[str, bool, bool]:
    """Text, is-binary, is-not-UTF-8."""
    if b"\0" in data[:8192]:
        return "", True, False
    try:
        return normalize_text(data.decode("utf-8")), False, False
    except UnicodeDecodeError:
        return normalize_text(data.decode("utf-8", errors="replace")), False, True


def team_secret_lints(rel: str, text: str) -> list[LintFinding]:
    """A `team-secret` error when a team file holds something shaped like a credential."""
    from workbench.engine.team.secrets import scan_for_secrets

    labels = [match.label for match in scan_for_secrets(text)]
    if not labels:
        return []
    message = (
        f"holds what looks like a credential ({', '.join(labels)}); team sync will refuse to "
        "push it and team saves are refused"
    )
    return [LintFinding(rel, "team-secret", "error", message)]
