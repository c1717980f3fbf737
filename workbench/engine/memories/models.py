"""Result types of the memory store: what `ls`, `show`, `index`, `lint` and `save` return.

Frozen records shared by the CLI (which prints `to_json()`) and the app (which renders the
fields); nothing here does I/O.
"""

from __future__ import annotations

from typing import Any, Literal

from workbench.engine.records import Record, as_dict

MEMORY_TYPES = ("user", "feedback", "project", "reference")
"""The four types a memory may have, in the order the editor offers them."""

Severity = Literal["error", "warning", "info"]
Scope = Literal["private", "team", "log"]


class LintFinding(Record):
    """One problem found in a memory file or the index."""

    path: str
    rule: str
    severity: Severity
    message: str
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        # Plain dicts: `asdict` deep-copies every field, which a 10,000-file listing pays.
        return {
            "path": self.path,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "line": self.line,
        }


class MemoryEntry(Record):
    """One memory file as the tree and `workbench ls` show it."""

    path: str
    """Relative to the memory folder, `/`-separated."""
    abs_path: str
    name: str
    """The frontmatter `name`, else the file stem."""
    description: str | None
    type: str | None
    """One of the four types, or None when missing or not exactly one of them."""
    scope: Scope
    mtime_ms: float
    mtime: str
    age_days: int
    size_bytes: int
    tokens: int
    indexed: bool
    lints: tuple[LintFinding, ...] = ()
    index_loads: bool = False
    """An index line links it above the cut (`indexed` and False: only lines that never
    load link it, so a session starts without it)."""
    type_format: str | None = None
    """Where the file keeps its type: `top-level` (`type:`), `metadata` (nested, as Claude
    Code 2.1.332 writes it), or None when it has none."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "abs_path": self.abs_path,
            "name": self.name,
            "description": self.description,
            "type": self.type,
            "scope": self.scope,
            "mtime": self.mtime,
            "age_days": self.age_days,
            "size_bytes": self.size_bytes,
            "tokens": self.tokens,
            "indexed": self.indexed,
            "index_loads": self.index_loads,
            "lints": [finding.to_json() for finding in self.lints],
            "type_format": self.type_format,
        }


class MemoryDocument(Record):
    """A whole memory file, ready to view or edit."""

    entry: MemoryEntry
    frontmatter: dict[str, Any]
    """What the frontmatter says (parsed from the whole file)."""
    visible_to_claude: bool
    """The frontmatter closes within the first 30 lines, so Claude Code reads it."""
    body: str
    text: str
    """The full text, BOM stripped and CRLF folded."""
    fingerprint: str
    """sha256 of the bytes read; a save passes it back to detect changes on disk."""
    frontmatter_error: str | None = None
    binary: bool = False
    past_the_cut: bool = False
    """Its index line is past the cut, so Claude Code starts a session without it."""

    def to_json(self) -> dict[str, Any]:
        return {
            **self.entry.to_json(),
            "frontmatter": self.frontmatter,
            "visible_to_claude": self.visible_to_claude,
            "body": self.body,
            "fingerprint": self.fingerprint,
            "frontmatter_error": self.frontmatter_error,
        }


class IndexEntry(Record):
    """One line of MEMORY.md."""

    line: int
    """1-based, in the trimmed text."""
    text: str
    title: str | None
    target: str | None
    """The linked file, as written."""
    hook: str | None
    loaded: bool
    """Whether this line survives the truncation Claude Code applies."""
    target_exists: bool | None
    """None for lines without a link."""

    @property
    def local_target(self) -> str | None:
        """The file the link points at, relative to the index (anchor and query dropped);
        None for a URL or no link."""
        if not self.target:
            return None
        from workbench.engine.memories.index import link_target_path

        return link_target_path(self.target)

    def to_json(self) -> dict[str, Any]:
        # Spelled out: `asdict` costs ~10x more, and an index may have a million lines.
        return {
            "line": self.line,
            "text": self.text,
            "title": self.title,
            "target": self.target,
            "hook": self.hook,
            "loaded": self.loaded,
            "target_exists": self.target_exists,
        }


class Headroom(Record):
    """How far the index is from its limits; negative when over."""

    lines: int
    length: int

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


class IndexReport(Record):
    """The load report for one MEMORY.md: what Claude Code keeps and what falls off."""

    path: str
    exists: bool
    line_count: int
    length: int
    """JS length (UTF-16 units) of the trimmed text."""
    utf8_bytes: int
    max_lines: int
    max_length: int
    line_truncated: bool
    length_truncated: bool
    loaded_content: str
    """Exactly the text Claude Code keeps, before its warning is appended."""
    warning: str | None
    entries: tuple[IndexEntry, ...]
    dropped_lines: int
    dangling: tuple[str, ...]
    orphans: tuple[str, ...]
    headroom: Headroom
    loaded_lines: int = 0
    """How many lines of the trimmed text survive (the cut falls after this line)."""
    long_lines: tuple[int, ...] = ()
    """Line numbers longer than the ~200-character guideline."""
    unlisted_lines: int = 0
    """Lines past the first 10,000, counted but not examined (no entries, links or lints)."""
    unreadable: str | None = None
    """Why the index could not be read (a pipe, a device, a link loop, too big); the report
    is then empty, so the rest of the folder still lists and lints."""

    def to_json(self) -> dict[str, Any]:
        data = as_dict(self)
        data["headroom"] = self.headroom.to_json()
        data["entries"] = [entry.to_json() for entry in self.entries]
        data["dangling"] = list(self.dangling)
        data["orphans"] = list(self.orphans)
        data["long_lines"] = list(self.long_lines)
        return data


class IndexProjection(Record):
    """What a save would do to the index: "puts the index at 203/200 lines; 3 entries drop"."""

    line_count_before: int
    line_count_after: int
    length_before: int
    length_after: int
    headroom_before: Headroom
    headroom_after: Headroom
    newly_dropped: int
    """Entries that load now but would not after the save."""
    message: str | None

    def to_json(self) -> dict[str, Any]:
        return as_dict(self) | {
            "headroom_before": self.headroom_before.to_json(),
            "headroom_after": self.headroom_after.to_json(),
        }


class SaveResult(Record):
    """The outcome of a two-step save."""

    path: str
    abs_path: str
    index_line: str | None
    index_updated: bool
    headroom: Headroom
    projection: IndexProjection | None = None
    history_ids: tuple[str, ...] = ()
    fingerprint: str = ""
    notes: tuple[str, ...] = ()
    """What the user should know about how the save went (a name taken, an empty body)."""
    unchanged: bool = False
    """The file already held exactly this memory, so nothing new was written."""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "abs_path": self.abs_path,
            "index_line": self.index_line,
            "index_updated": self.index_updated,
            "headroom": self.headroom.to_json(),
            "projection": None if self.projection is None else self.projection.to_json(),
            "history_ids": list(self.history_ids),
            "notes": list(self.notes),
            "unchanged": self.unchanged,
        }


class RemoveResult(Record):
    """The outcome of deleting a memory and its index lines."""

    removed: str
    index_lines_removed: int
    history_ids: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "removed": self.removed,
            "index_lines_removed": self.index_lines_removed,
            "history_ids": list(self.history_ids),
        }


class RenameResult(Record):
    """The outcome of renaming a memory and re-pointing index links."""

    old_path: str
    new_path: str
    links_updated: int
    history_ids: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return as_dict(self) | {"history_ids": list(self.history_ids)}


class Manifest(Record):
    """The manifest recall sends: newest first, at most 200 lines."""

    text: str
    count: int
    files: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "count": self.count, "files": list(self.files)}


class DraftForm(Record):
    """The fields of the editor's form (absent when the whole file is edited as text)."""

    memory_type: str | None
    name: str
    description: str
    file: str | None = None
    """The file name asked for (new memories only; None: derived from the name)."""


class DraftCheck(Record):
    """What is wrong with a memory being written, before it is saved, and what saving a new
    one would do to the index's headroom."""

    findings: tuple[LintFinding, ...]
    projection: str | None = None
    """`the index goes to 12/200 lines, …`, the headroom warning, or why it cannot be saved."""
    default_file: str | None = None
    """The file a new memory would be saved as when none is given (the release's naming:
    `deploy-window.md` or `project_deploy_window.md`, with a suffix if that one is taken)."""


class EditableMemory(Record):
    """What the editor form shows for one document."""

    name: str
    description: str
    type: str | None
    body: str
    raw: bool
    """True when the form cannot represent the file (broken or unclosed frontmatter, binary):
    the editor then edits the whole text."""
