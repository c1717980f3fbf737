"""The memory store: list, read, lint and edit memory files and their MEMORY.md indexes.

`MemoryStore` is the memories area's service. This module holds what it reads: the folder's
paths, each file's analysis (kept in memory, and between runs by `ListingCache`; what is
derived from a file, and its record form, is in analysis.py), the listing, the index's load
report and lint. Its writes (save, update, remove, rename, the index fixes) and what the
editor asks before one are inherited from `MemoryWriting` in writing.py.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import math
import os
import threading
import time
from pathlib import Path
from stat import S_ISDIR
from typing import TYPE_CHECKING, Any, NamedTuple

from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.jsutil import js_iso, js_len, js_round
from workbench.engine.memories.analysis import (
    Analysis,
    as_record,
    dangling_message,
    decode,
    file_stem,
    from_record,
    team_secret_lints,
    valid_record,
    with_dangling_links,
)
from workbench.engine.memories.file_format import body_links, link_keys, read_type
from workbench.engine.memories.frontmatter import (
    ParsedFrontmatter,
    normalize_text,
    parse_frontmatter,
    split_document,
)
from workbench.engine.memories.index import (
    INDEX_LINE_GUIDE,
    INDEX_LINE_LIMIT,
    MAX_ENTRYPOINT_LENGTH,
    MAX_ENTRYPOINT_LINES,
    MAX_ITEMISED_LINES,
    link_target_path,
    linked_paths,
    parse_index_line,
    strip_for_loading,
    truncate_entrypoint,
    truncation_warning,
)
from workbench.engine.memories.index_edits import IndexFixPlan as IndexFixPlan
from workbench.engine.memories.lint import (
    LARGE_FILE_BYTES,
    FileFacts,
    lint_and_frontmatter,
    stale_finding,
)
from workbench.engine.memories.listing_cache import (
    RACY_NS,
    ListingCache,
    Stamp,
    compact_json,
    listing_cache_for,
    orjson_json,
    stamp_of,
)
from workbench.engine.memories.models import (
    Headroom,
    IndexEntry,
    IndexReport,
    LintFinding,
    Manifest,
    MemoryDocument,
    MemoryEntry,
)
from workbench.engine.memories.scan import MemoryScanner, format_manifest
from workbench.engine.memories.staleness import STALE_AFTER_DAYS, stale_message
from workbench.engine.memories.walk import iter_memory_paths
from workbench.engine.memories.writing import MemoryWriting, fingerprint
from workbench.engine.records import Record
from workbench.engine.records import replace as with_changes
from workbench.engine.userfiles import (
    INDEX_LIMIT,
    MEMORY_FILE_LIMIT,
    SCANNED_FILE_LIMIT,
    UnreadableFileError,
    describe,
    first_invalid_utf8_line,
    read_bytes,
    read_start,
    read_text,
)
from workbench.engine.wording import plural_noun

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from workbench.engine.engine import Engine
    from workbench.engine.history import History
    from workbench.engine.memories.finished_listing import Lookup

DAY_MS = 86_400_000
_now_ns = time.time_ns
"""The clock a parsed index is trusted by (tests set it later to trust a fresh index)."""
SCOPES = ("all", "private", "team", "log")


def _check_scope(scope: str) -> None:
    if scope not in SCOPES:
        raise UserInputError(f"unknown scope {scope!r} (use one of {', '.join(SCOPES)})")


class IndexLinks(NamedTuple):
    """The memory paths both indexes link to: from any line, and from lines that load."""

    linked: frozenset[str]
    loaded: frozenset[str]


def _index_text(data: bytes) -> str:
    """Index bytes as the store edits them: the BOM stripped and CRLF folded, like a memory
    file, but a NUL kept as a NUL (Claude Code reads it as text; `decode` would call the whole
    index binary and an edit would write it back empty)."""
    return normalize_text(data.decode("utf-8", errors="replace"))


def _decode_keeping_cr(data: bytes) -> str:
    """Index bytes as text with the BOM stripped and CRLF kept (how Claude Code measures)."""
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


SCOPE_ORDER = ("private", "team", "log")
"""The order front ends list scopes in (the tree's groups)."""


def first_listed(entries: Sequence[MemoryEntry]) -> MemoryEntry | None:
    """The memory a list grouped by scope, newest first within each, starts with."""
    for scope in SCOPE_ORDER:
        for entry in entries:
            if entry.scope == scope:
                return entry
    return None


class WarmView(Record):
    """Everything a front end shows first, prepared by `MemoryStore.warm_up`."""

    entries: tuple[MemoryEntry, ...]
    index: IndexReport
    team_index: IndexReport | None
    folder_exists: bool
    first_document: MemoryDocument | None


class MemoryStore(MemoryWriting):
    """Reads and edits one project's memory folder."""

    def __init__(self, engine: Engine, history: History | None = None) -> None:
        self.engine = engine
        self._history = history
        self.locations = engine.locations
        self.root = Path(engine.locations.memory_dir)
        self.formats = engine.profile.memory_files
        """The memory-file format of the release in use (what it reads, how new files look)."""
        self.scanner = MemoryScanner(self.root, reads_type_at=self.formats.reads_type_at)
        self._analysis: dict[str, Analysis] = {}
        self.use_listing_cache = True
        """Keep analyses between runs in the engine's cache folder, when it has one."""
        self._lock = threading.Lock()
        self.now_ms: float | None = None
        """A fixed "now" for ages (tests and snapshots); None means the wall clock."""
        self._warm_thread: threading.Thread | None = None
        self._warm_view: WarmView | None = None
        self._index_lock = threading.Lock()
        self._indexed: tuple[tuple[Stamp | None, Stamp | None], IndexLinks] | None = None
        """The last parse of both indexes' links, with their stamps (dropped on our writes)."""

    @property
    def history(self) -> History:
        """Where every change is recorded (the engine's own unless one was passed); opened on
        first use, so reading the index (the SessionStart hook) never loads it."""
        if self._history is None:
            self._history = self.engine.history
        return self._history

    # --- warming -----------------------------------------------------------------------

    def warm_up(self) -> None:
        """Read, lint and index the folder in the background (front ends call this while
        they import their UI, so the first view is ready, or nearly, when it is wanted)."""
        if self._warm_thread is None:
            self._warm_thread = threading.Thread(
                target=self._warm, name="memory-warm-up", daemon=True
            )
            self._warm_thread.start()

    def _warm(self) -> None:
        try:
            exists = self.root.is_dir()
            entries = tuple(self.list()) if exists else ()
            team = self.index(team=True) if (self.root / "team").is_dir() else None
            opening = first_listed(entries)
            first = self.read(opening.path) if opening is not None else None
            self._warm_view = WarmView(entries, self.index(), team, exists, first)
        except Exception:  # noqa: BLE001 - best effort: the front end's own load reports errors
            self._warm_view = None

    def take_warm_view(self, wait: float = 0.0) -> WarmView | None:
        """The view `warm_up` prepared, once, if it is finished within `wait` seconds."""
        thread = self._warm_thread
        if thread is not None and wait > 0:
            thread.join(wait)
        if thread is None or thread.is_alive():
            return None
        view, self._warm_view = self._warm_view, None
        return view

    def wait_warm(self, timeout: float = 30.0) -> None:
        """Wait for a warm-up started earlier (no-op otherwise), so work is not done twice."""
        thread = self._warm_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @staticmethod
    def first_listed(entries: Sequence[MemoryEntry]) -> MemoryEntry | None:
        """The memory a listing (grouped by scope, newest first) starts with."""
        return first_listed(entries)

    # --- paths -------------------------------------------------------------------------

    def _now_ms(self) -> float:
        return self.now_ms if self.now_ms is not None else time.time() * 1000

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """An absolute path inside the memory folder for a relative or absolute `path`."""
        raw = os.fspath(path)
        if not raw:
            raise UserInputError("no memory path given")
        candidate = Path(raw) if os.path.isabs(raw) else self.root / raw
        resolved = Path(os.path.normpath(candidate))
        root = Path(os.path.normpath(self.root))
        if resolved != root and root not in resolved.parents:
            raise UserInputError(f"{raw} is outside the memory folder {self.locations.memory_dir}")
        return resolved

    def relative(self, path: str | os.PathLike[str]) -> str:
        # Paths the folder walk built are the folder plus clean names: cut the prefix
        # (relpath normalises both sides, a cost a 10,000-file listing pays for each file).
        if isinstance(path, str):
            prefix = self._prefix
            if prefix and path.startswith(prefix):
                rest = path[len(prefix) :]
                if rest and "//" not in rest and "/." not in "/" + rest:
                    return rest
        return self.locations.relative(path)

    @functools.cached_property
    def _prefix(self) -> str | None:
        # The memory folder with one trailing slash, when it is absolute and already normal.
        if os.sep != "/":
            return None
        root = self.locations.memory_dir.rstrip("/")  # kept with a trailing slash
        if not (os.path.isabs(root) and os.path.normpath(root) == root):
            return None
        return root + "/"

    def scope_of(self, rel: str) -> str:
        """`team`, `log` or `private` for a path relative to the memory folder."""
        first = rel.split("/", 1)[0]
        if first == "team" and "/" in rel:
            return "team"
        if first == "logs" and "/" in rel:
            return "log"
        return "private"

    # --- analysis ----------------------------------------------------------------------

    def _analyse(
        self,
        path: str,
        stat: os.stat_result,
        rel: str | None = None,
        stored: dict[str, Any] | None = None,
    ) -> Analysis:
        """The file's analysis: from memory, else from `stored` (records of a
        `ListingCache`), else read now; each only when its stamp is the file's."""
        stamp = stamp_of(stat)
        cached = self._analysis.get(path)
        if cached and cached.stamp == stamp:
            return cached
        if rel is None:
            rel = self.relative(path)
        record = stored.get(path) if stored else None
        restored = from_record(rel, record, stamp) if record is not None else None
        if restored is not None:
            with self._lock:
                self._analysis[path] = restored
            return restored
        try:
            # Lint needs only the start of a huge file: it is flagged as too large anyway.
            data, read_stat = read_start(path, LARGE_FILE_BYTES + 1, known=stat)
        except OSError as exc:
            finding = LintFinding(rel, "file-unreadable", "error", describe(path, exc))
            return Analysis(stamp, None, None, None, 0, False, False, (finding,))
        # What was read is what the open file's stat describes: if it changed since the
        # walk, the next listing sees a different stamp and reads it again.
        stamp = stamp_of(read_stat)
        text, binary, not_utf8 = decode(data)
        scope = self.scope_of(rel)
        facts = FileFacts(
            path=rel,
            text=text,
            size_bytes=stat.st_size,
            age_days=None,  # `memory-stale` is added per listing: it depends on today
            team=scope == "team",
            binary=binary,
            not_utf8=not_utf8,
            reads_type_at=self.formats.reads_type_at,
            claude_version=self.engine.profile.version,
        )
        seen: ParsedFrontmatter | None = None
        if scope == "log":
            lints: builtins.list[LintFinding] = []
        else:
            # The linter reads the frontmatter of the first 30 lines; the same parse names
            # the file (a file under 30 lines parses the same with one more newline).
            lints, seen = lint_and_frontmatter(facts)
        secret_lints = team_secret_lints(rel, text) if facts.team and not binary else []
        if seen is None and not binary:
            seen = parse_frontmatter("\n".join(text.split("\n", 30)[:30]) + "\n")
        data_fm = seen.data if seen else {}
        name = data_fm.get("name")
        description = data_fm.get("description") or None
        stated = read_type(data_fm)
        analysis = Analysis(
            stamp=stamp,
            name=str(name) if name else None,
            description=str(description) if description else None,
            type=stated.type,
            units=js_len(text),
            binary=binary,
            not_utf8=not_utf8,
            lints=tuple(lints),
            type_location=stated.location,
            links=tuple(body_links(text[seen.body_offset :] if seen and seen.present else text))
            if not binary
            else (),
            ages=scope != "log" and not binary,
            secret_lints=tuple(secret_lints),
            mtime=js_iso(stamp[3] / 1e6),
        )
        with self._lock:
            self._analysis[path] = analysis
        return analysis

    def _age_days(self, mtime_ms: float) -> int:
        # memoryAgeDays: whole days, never negative.
        return max(0, math.floor((self._now_ms() - mtime_ms) / DAY_MS))

    def _entry(
        self,
        path: str,
        stat: os.stat_result,
        indexed: frozenset[str],
        rel: str | None = None,
        analysis: Analysis | None = None,
        loaded: frozenset[str] = frozenset(),
    ) -> MemoryEntry:
        if rel is None:
            rel = self.relative(path)
        if analysis is None:
            analysis = self._analyse(path, stat, rel)
        mtime_ms = stat.st_mtime_ns / 1e6
        age_days = self._age_days(mtime_ms)
        lints = analysis.lints
        stale = stale_finding(rel, age_days) if analysis.ages else None
        if stale is not None:
            lints += (stale,)
        return MemoryEntry(
            path=rel,
            abs_path=path,
            name=analysis.name or file_stem(rel),
            description=analysis.description,
            type=analysis.type,
            scope=self.scope_of(rel),  # type: ignore[arg-type]
            mtime_ms=mtime_ms,
            mtime=analysis.mtime
            if analysis.mtime and analysis.stamp[3] == stat.st_mtime_ns
            else js_iso(mtime_ms),
            age_days=age_days,
            size_bytes=stat.st_size,
            tokens=js_round(analysis.units / 4) if analysis.units else js_round(stat.st_size / 4),
            indexed=rel in indexed,
            index_loads=rel in loaded,
            lints=lints + analysis.secret_lints,
            type_format=analysis.type_location,
        )

    # --- reading -----------------------------------------------------------------------
    # Below this method, `list` in a signature names it: annotations there say builtins.list.

    def list(self, scope: str = "all") -> list[MemoryEntry]:
        """Memory files newest first; `scope` is all, private, team or log."""
        if scope not in SCOPES:
            raise UserInputError(f"unknown scope {scope!r} (use one of {', '.join(SCOPES)})")
        indexed, loaded = self._indexed_paths(), self.loaded_index_paths()
        cache = self._listing_cache()
        stored = cache.load() if cache is not None else None
        rows = []
        for path, stat in iter_memory_paths(self.root):
            rel = self.relative(path)
            rows.append((path, stat, rel, self._analyse(path, stat, rel, stored)))
        if cache is not None and stored is not None:
            self._save_listing_cache(cache, stored, rows)
        everything = [self._entry(p, st, indexed, rel, a, loaded) for p, st, rel, a in rows]
        everything = self._with_link_lints(everything, [row[3] for row in rows])
        entries = [e for e in everything if scope == "all" or e.scope == scope]
        entries.sort(key=lambda e: e.mtime_ms, reverse=True)
        return entries

    def listing(self, scope: str = "all") -> builtins.list[dict[str, Any]]:
        """What `list` returns, as the plain dicts `MemoryEntry.to_json` makes, built straight
        from each file's cache record: a listing of files unchanged since the last run opens
        none of them and builds no record objects."""
        _check_scope(scope)
        walk = iter_memory_paths(self.root)
        listed, _ = self._listing(scope, walk, self._now_ms(), self._listing_cache())
        return [row for _, _, row in listed]

    def listing_json(self, scope: str = "all", found: Lookup | None = None) -> bytes:
        """`listing(scope)` as one line of compact JSON (what `ls --json` prints when piped).

        The output is kept between runs (`ListingCache`, `finished_listing`): while every
        file and index has the stamp it had, the next call takes it after the folder walk
        and rewrites only the ages that changed, reading no file and no record. `found`:
        that look-up, made already (`Engine.memory_listing_json`)."""
        from workbench.engine.memories import finished_listing

        _check_scope(scope)
        now_ms = self._now_ms()
        cache = self._listing_cache()
        if found is None:
            found = finished_listing.look_up(
                cache, scope, str(self.root), self._index_paths(), now_ms
            )
        if found.output is not None:
            return found.output
        walk, key, indexes = found.walk, found.key, found.indexes
        listed, whole = self._listing(scope, walk, now_ms, cache)
        rows = [row for _, _, row in listed]
        # Kept only as orjson writes it: the rare listing with a value only the json module
        # can write (escaped) is listed afresh each time.
        output = orjson_json(rows)
        if output is None:
            return compact_json(rows)
        parsed = self._indexed  # the indexes' links, when their parse was whole and trusted
        if cache is not None and key is not None and whole:
            if parsed is not None and parsed[0] == indexes:
                items = [
                    finished_listing.Listed(row, mtime_ms, len(record[9]), record[8])
                    for mtime_ms, record, row in listed
                ]
                kept = finished_listing.encode(items, output, now_ms)
                if kept is not None:
                    cache.keep_finished(scope, key, kept)
        return output

    def _listing(
        self,
        scope: str,
        walk: builtins.list[tuple[str, os.stat_result]],
        now_ms: float,
        cache: ListingCache | None,
    ) -> tuple[builtins.list[tuple[float, builtins.list[Any], dict[str, Any]]], bool]:
        """Each listed file's mtime, cache record and dict, newest first; and whether every
        file's record was read whole and may be kept."""
        indexed, loaded = self._indexed_paths(), self.loaded_index_paths()
        stored = cache.load() if cache is not None else {}
        keep: dict[str, builtins.list[Any]] = {}
        read = 0
        rows = []
        for path, stat in walk:
            stamp = stamp_of(stat)
            rel = self.relative(path)
            record = stored.get(path)
            if record is not None and valid_record(record, stamp):
                keep[path] = record
            else:
                analysis = self._analyse(path, stat, rel)
                record = as_record(analysis)
                # Kept when read without error, unchanged since the walk, not racily new.
                if (
                    cache is not None
                    and self._analysis.get(path) is analysis
                    and analysis.stamp == stamp
                    and cache.trusted(stamp)
                ):
                    keep[path] = record
                    read += 1
            rows.append(self._row(path, rel, stat, record, indexed, loaded, now_ms))
        if cache is not None and (read or len(keep) != len(stored)):
            cache.save(keep)
        whole = cache is not None and len(keep) == len(rows)
        return with_dangling_links(rows, scope), whole

    def _row(
        self,
        path: str,
        rel: str,
        stat: os.stat_result,
        record: builtins.list[Any],
        indexed: frozenset[str],
        loaded: frozenset[str],
        now_ms: float,
    ) -> tuple[float, builtins.list[Any], dict[str, Any]]:
        """One file's `MemoryEntry.to_json` dict from its cache record, with the sort key
        and the record (its name and links decide the dangling-link findings)."""
        _, name, description, kind, location, units, _b, _n, ages, lints, secret, _l, mtime = record
        mtime_ms = stat.st_mtime_ns / 1e6
        age_days = max(0, math.floor((now_ms - mtime_ms) / DAY_MS))
        findings = [
            {"path": rel, "rule": rule, "severity": severity, "message": text, "line": line}
            for rule, severity, text, line in lints
        ]
        if ages and age_days > STALE_AFTER_DAYS:
            findings.append(
                {
                    "path": rel,
                    "rule": "memory-stale",
                    "severity": "info",
                    "message": stale_message(age_days),
                    "line": None,
                }
            )
        for rule, severity, text, line in secret:
            findings.append(
                {"path": rel, "rule": rule, "severity": severity, "message": text, "line": line}
            )
        row = {
            "path": rel,
            "abs_path": path,
            "name": name or file_stem(rel),
            "description": description,
            "type": kind,
            "scope": self.scope_of(rel),
            "mtime": mtime if mtime and record[0][3] == stat.st_mtime_ns else js_iso(mtime_ms),
            "age_days": age_days,
            "size_bytes": stat.st_size,
            "tokens": js_round(units / 4) if units else js_round(stat.st_size / 4),
            "indexed": rel in indexed,
            "index_loads": rel in loaded,
            "lints": findings,
            "type_format": location,
        }
        return mtime_ms, record, row

    def _listing_cache(self) -> ListingCache | None:
        """The between-runs cache of this folder's analyses (None when there is none)."""
        return listing_cache_for(self.engine) if self.use_listing_cache else None

    def _index_paths(self) -> tuple[str, str]:
        return (str(self.index_path(False)), str(self.index_path(True)))

    def _save_listing_cache(
        self,
        cache: ListingCache,
        stored: dict[str, Any],
        rows: builtins.list[tuple[str, os.stat_result, str, Analysis]],
    ) -> None:
        """Store what this listing read, when it read anything or a file has gone."""
        keep = [
            (path, analysis)
            for path, stat, _, analysis in rows
            # Read without error, unchanged since the walk, and not racily new.
            if self._analysis.get(path) is analysis
            and analysis.stamp == stamp_of(stat)
            and cache.trusted(analysis.stamp)
        ]
        if len(keep) == len(stored) and all(
            isinstance(old := stored.get(path), list) and old[:1] == [list(analysis.stamp)]
            for path, analysis in keep
        ):
            return  # what is on disk already
        cache.save({path: as_record(analysis) for path, analysis in keep})

    def _with_link_lints(
        self,
        entries: builtins.list[MemoryEntry],
        analyses: builtins.list[Analysis] | None = None,
    ) -> builtins.list[MemoryEntry]:
        """Add a `memory-dangling-link` finding for each `[[name]]` no memory answers to."""
        if analyses is None:
            analyses = [self._analysis_of(entry) for entry in entries]
        known: set[str] = set()
        for entry, analysis in zip(entries, analyses, strict=True):
            known |= link_keys(analysis.name, file_stem(entry.path))
        out = []
        for entry, analysis in zip(entries, analyses, strict=True):
            missing = [link for link in analysis.links if link not in known]
            if missing:
                extra = tuple(
                    LintFinding(
                        entry.path, "memory-dangling-link", "warning", dangling_message(link)
                    )
                    for link in missing
                )
                entry = with_changes(entry, lints=entry.lints + extra)
            out.append(entry)
        return out

    def _analysis_of(self, entry: MemoryEntry) -> Analysis:
        cached = self._analysis.get(entry.abs_path)
        if cached is not None:
            return cached
        return self._analyse(entry.abs_path, os.stat(entry.abs_path))

    def read(self, path: str | os.PathLike[str]) -> MemoryDocument:
        """One memory file with its frontmatter, body and a fingerprint for safe saving."""
        target = self.resolve(path)
        try:
            stat = target.stat()
            if S_ISDIR(stat.st_mode):
                raise UserInputError(f"{self.relative(target)} is a folder, not a memory file")
            data = read_bytes(target, MEMORY_FILE_LIMIT, "a memory file", known=stat)
        except FileNotFoundError:
            raise NotFoundError(f"no memory file {self.relative(target)}") from None
        except OSError as exc:
            raise UserInputError(f"{self.relative(target)}: {describe(target, exc)}") from None
        text, binary, _ = decode(data)
        entry = self._entry(
            str(target), stat, self._indexed_paths(), loaded=self.loaded_index_paths()
        )
        if target.name == "MEMORY.md":
            # An index is not a memory: its findings are the index's (cut, dangling links,
            # bytes), not a memory file's (no frontmatter, no type).
            team = target.parent == self._index_folder(True)
            own = [f for f in self._index_findings(team) if f.path == entry.path]
            entry = with_changes(entry, lints=tuple(own))
        parsed, body = split_document(text) if not binary else (None, "")
        head = parse_frontmatter("\n".join(text.split("\n", 30)[:30]) + "\n")
        return MemoryDocument(
            entry=entry,
            frontmatter=dict(parsed.data) if parsed else {},
            visible_to_claude=head.present and head.error is None,
            body=body,
            text=text,
            fingerprint=fingerprint(data),
            frontmatter_error=parsed.error if parsed else "binary file",
            binary=binary,
            past_the_cut=entry.indexed and not entry.index_loads,
        )

    def manifest(self) -> Manifest:
        """The manifest recall would send, from Claude Code's capped scan."""
        headers = self.scanner.scan()
        files = tuple(
            {
                "path": h.filename,
                "abs_path": h.file_path,
                "type": h.type,
                "description": h.description,
                "mtime": h.mtime_iso,
            }
            for h in headers
        )
        return Manifest(text=format_manifest(headers), count=len(headers), files=files)

    # --- the index ---------------------------------------------------------------------

    def index_path(self, team: bool = False) -> Path:
        return Path(self.locations.team_entrypoint if team else self.locations.entrypoint)

    def _index_folder(self, team: bool) -> Path:
        return self.root / "team" if team else self.root

    def _read_index(self, team: bool) -> tuple[bytes | None, str]:
        """The index's bytes and text; (None, "") when it does not exist. A pipe, a device,
        a link loop or an index over the size limit raises `UnreadableFileError`."""
        try:
            data = read_bytes(self.index_path(team), INDEX_LIMIT, "MEMORY.md")
        except FileNotFoundError:
            return None, ""
        except OSError as exc:
            path = self.relative(self.index_path(team))
            raise UnreadableFileError(path, describe(path, exc)) from None
        return data, _index_text(data)

    def _read_index_to_edit(self, team: bool) -> tuple[bytes | None, str]:
        """`_read_index`, refused when writing the text back would change bytes nobody
        asked to change: a byte that is not UTF-8 reads as U+FFFD and would be written so."""
        data, text = self._read_index(team)
        line = first_invalid_utf8_line(data) if data is not None else None
        if line is not None:
            name = self.relative(self.index_path(team))
            raise UserInputError(
                f"{name} has bytes that are not UTF-8 on line {line}; the workbench edits an "
                "index only when it can write every other line back exactly (fix that line "
                "first)"
            )
        return data, text

    def indexed_paths(self) -> frozenset[str]:
        """Memory paths (relative to the memory folder, `team/` for the team's) that a line
        of MEMORY.md or team/MEMORY.md links to."""
        return self._indexed_paths()

    def _indexed_paths(self) -> frozenset[str]:
        """Memory paths (relative to the memory folder) that some index line links to.

        The viewer asks on every cursor move, and parsing a 9,000-line index takes ~100 ms:
        the last parse is reused while both indexes keep the stamp (device, inode, size,
        mtime, ctime) they had before it was read and the store wrote nothing since. A parse
        of an index whose ctime was near the clock is not kept (a second write within the
        same timestamp tick would leave its stamp unchanged), nor one that met an error. The
        lock makes the stat, the read and the keeping one step, so a write the store makes
        meanwhile is forgotten after the parse is kept, not before.
        """
        return self._index_links().linked

    def loaded_index_paths(self) -> frozenset[str]:
        """Of `indexed_paths`, those whose index line loads whole: a line past the cut links
        a memory Claude Code never sees at the start of a session."""
        return self._index_links().loaded

    def _index_links(self) -> IndexLinks:
        """Both indexes' links, kept while both indexes keep their stamps (see above)."""
        with self._index_lock:
            now = _now_ns()
            try:  # stat'ed before the read: a change during the read shows as a new stamp
                stamps = (self._index_stamp(False), self._index_stamp(True))
            except OSError:
                stamps = None
            cached = self._indexed
            if cached is not None and cached[0] == stamps:
                return cached[1]
            found, complete = self._parse_index_links()
            self._indexed = None
            if stamps is not None and complete:
                if all(s is None or s[4] < now - RACY_NS for s in stamps):
                    self._indexed = (stamps, found)
            return found

    def _index_stamp(self, team: bool) -> Stamp | None:
        """The index's stamp, None when it does not exist."""
        try:
            return stamp_of(os.stat(self.index_path(team)))
        except FileNotFoundError:
            return None

    def _forget_index(self) -> None:
        """Drop the parsed index links (after each of the store's own writes)."""
        with self._index_lock:
            self._indexed = None

    @contextlib.contextmanager
    def _writing_index(self) -> Iterator[None]:
        """Forget the parsed index links once the writes inside are done (or failed)."""
        try:
            yield
        finally:
            self._forget_index()

    def _parse_index_links(self) -> tuple[IndexLinks, bool]:
        """What both indexes link to, all lines and the lines that load, from one read of
        each; and whether both were read without error."""
        linked: set[str] = set()
        loaded: set[str] = set()
        complete = True
        for team in (False, True):
            try:
                data, text = self._read_index(team)
            except OSError:
                complete = False
                continue  # lint reports the unreadable index; the listing goes on without it
            if data is None:
                continue
            prefix = "team/" if team else ""
            linked |= linked_paths(text, prefix, MAX_ITEMISED_LINES)
            loaded |= linked_paths(self._lines_that_load(data), prefix)
        return IndexLinks(frozenset(linked), frozenset(loaded)), complete

    def _lines_that_load(self, data: bytes) -> str:
        """The index lines Claude Code keeps whole (measured as it measures, CR included)."""
        cut = truncate_entrypoint(
            strip_for_loading(_decode_keeping_cr(data)), self.engine.profile.index
        )
        return "\n".join(cut.trimmed.split("\n", cut.kept_lines)[: cut.kept_lines])

    def _orphan_candidates(self, team: bool) -> builtins.list[str]:
        rels = [self.relative(p) for p, _ in iter_memory_paths(self.root)]
        if team:
            return [r for r in rels if self.scope_of(r) == "team"]
        return [r for r in rels if self.scope_of(r) == "private"]

    def index(self, team: bool = False, *, text: str | None = None) -> IndexReport:
        """The load report for MEMORY.md (or team/MEMORY.md): what loads and what does not."""
        path = self.index_path(team)
        unreadable = None
        try:
            data, current = self._read_index(team)
        except UnreadableFileError as exc:
            data, current, unreadable = None, "", exc.reason
        exists = data is not None or unreadable is not None
        if text is None:
            # Line endings as written: a CRLF index's `\r` counts toward the 25,000 limit.
            text = _decode_keeping_cr(data) if data is not None else current
        truncation = truncate_entrypoint(strip_for_loading(text), self.engine.profile.index)
        folder = self._index_folder(team)
        prefix = "team/" if team else ""
        entries: list[IndexEntry] = []
        linked: set[str] = set()
        dangling: dict[str, None] = {}  # ordered and O(1) to test: a huge index stays linear
        exists_cache: dict[str, bool] = {}
        folder_name = os.fspath(folder)
        long_lines: list[int] = []
        lines = truncation.trimmed.split("\n") if truncation.trimmed else []
        unlisted = max(0, len(lines) - MAX_ITEMISED_LINES)
        for number, line in enumerate(lines[:MAX_ITEMISED_LINES], 1):
            line = line.removesuffix("\r")
            # JS length is between len() and twice it: measure only lines near the limit.
            if len(line) > INDEX_LINE_LIMIT or (
                2 * len(line) > INDEX_LINE_LIMIT and js_len(line) > INDEX_LINE_LIMIT
            ):
                long_lines.append(number)
            if not line.strip():
                continue
            parsed = parse_index_line(line)
            target_exists: bool | None = None
            local = link_target_path(parsed.target) if parsed.target else None
            if local:
                target_exists = exists_cache.get(local)
                if target_exists is None:
                    target_exists = os.path.isfile(os.path.join(folder_name, local.rstrip("/")))
                    exists_cache[local] = target_exists
                linked.add(os.path.normpath(prefix + local).replace(os.sep, "/"))
                if not target_exists:
                    dangling.setdefault(parsed.target or local)
            entries.append(
                IndexEntry(
                    line=number,
                    text=line,
                    title=parsed.title,
                    target=parsed.target,
                    hook=parsed.hook,
                    loaded=number <= truncation.kept_lines,
                    target_exists=target_exists,
                )
            )
        orphans = tuple(r for r in self._orphan_candidates(team) if r not in linked)
        return IndexReport(
            path=str(path),
            exists=exists,
            line_count=truncation.line_count if truncation.trimmed else 0,
            length=truncation.length,
            utf8_bytes=len(truncation.trimmed.encode("utf-8")),
            max_lines=MAX_ENTRYPOINT_LINES,
            max_length=MAX_ENTRYPOINT_LENGTH,
            line_truncated=truncation.line_truncated,
            length_truncated=truncation.length_truncated,
            loaded_content=truncation.loaded,
            warning=truncation_warning(truncation),
            entries=tuple(entries),
            dropped_lines=max(0, truncation.line_count - truncation.kept_lines)
            if truncation.trimmed
            else 0,
            dangling=tuple(dangling),
            orphans=orphans,
            headroom=Headroom(
                lines=MAX_ENTRYPOINT_LINES - (truncation.line_count if truncation.trimmed else 0),
                length=MAX_ENTRYPOINT_LENGTH - truncation.length,
            ),
            loaded_lines=truncation.kept_lines if truncation.trimmed else 0,
            long_lines=tuple(long_lines),
            unlisted_lines=unlisted,
            unreadable=unreadable,
        )

    def _index_findings(self, team: bool) -> builtins.list[LintFinding]:
        report = self.index(team)
        if report.unreadable:
            return [
                LintFinding(
                    self.relative(report.path), "index-unreadable", "error", report.unreadable
                )
            ]
        name = f"{'team/' if team else ''}MEMORY.md"
        if not report.exists:
            # No index at all: every memory in its scope is unlinked, and lint says so.
            message = f"there is no {name}, so no line links to this file"
            return [LintFinding(o, "index-orphan", "warning", message) for o in report.orphans]
        rel = self.relative(report.path)
        findings = self._index_byte_findings(team, rel)
        # The line cut comes first, then the character cut takes more from what is left:
        # each finding counts the lines its own cut drops.
        past_line_cut = report.line_count - report.max_lines if report.line_truncated else 0
        if report.line_truncated:
            findings.append(
                LintFinding(
                    rel,
                    "index-over-lines",
                    "error",
                    f"{report.line_count} lines: only the first {report.max_lines} load "
                    f"({past_line_cut} dropped)",
                    report.max_lines + 1,
                )
            )
        if report.length_truncated:
            cut = report.dropped_lines - past_line_cut
            findings.append(
                LintFinding(
                    rel,
                    "index-over-length",
                    "error",
                    f"{report.length:,} characters (UTF-16 units): more than "
                    f"{report.max_length:,} load; the rest is cut "
                    f"({cut} {plural_noun(cut, 'line')} dropped)",
                    report.loaded_lines + 1,
                )
            )
        for number in report.long_lines:
            findings.append(
                LintFinding(
                    rel,
                    "index-line-too-long",
                    "warning",
                    f"index line over {INDEX_LINE_LIMIT} characters; keep entries near "
                    f"{INDEX_LINE_GUIDE}",
                    number,
                )
            )
        for entry in report.entries:
            if entry.target_exists is False:
                findings.append(
                    LintFinding(
                        rel,
                        "index-dangling-link",
                        "error",
                        f"links to {entry.target}, which does not exist",
                        entry.line,
                    )
                )
        for orphan in report.orphans:
            findings.append(
                LintFinding(
                    orphan,
                    "index-orphan",
                    "warning",
                    f"no line in {name} links to this file",
                )
            )
        return findings

    def _index_byte_findings(self, team: bool, rel: str) -> builtins.list[LintFinding]:
        """Bytes an index should not hold: ones that are not UTF-8 (the workbench then refuses
        to edit it) and a NUL (sent to the model as it is)."""
        data, text = self._read_index(team)
        findings = []
        bad = first_invalid_utf8_line(data) if data is not None else None
        if bad is not None:
            message = "bytes that are not UTF-8 read as \ufffd; saves and fixes leave this index alone until they are fixed"
            findings.append(LintFinding(rel, "file-not-utf8", "error", message, bad))
        if "\0" in text:
            line = text.count("\n", 0, text.index("\0")) + 1
            message = "a NUL character, which Claude Code sends to the model as it is"
            findings.append(LintFinding(rel, "index-nul-character", "warning", message, line))
        return findings

    def lint(self) -> builtins.list[LintFinding]:
        """Findings for every memory file and both indexes, errors first."""
        findings: list[LintFinding] = []
        for entry in self.list():
            findings.extend(entry.lints)
        unlisted: list[tuple[str, str]] = []
        iter_memory_paths(self.root, unlisted)
        findings.extend(
            LintFinding(self.relative(path), "file-unreadable", "error", reason)
            for path, reason in unlisted
        )
        for team in (False, True):
            findings.extend(self._index_findings(team))
        findings.extend(self._team_secret_findings())
        # Recall's view across files: descriptions the selector cannot tell apart (missing
        # and generic ones are each file's own findings, above).
        findings.extend(
            f
            for f in self.engine.recall.lint_descriptions()
            if f.rule == "recall-description-duplicate"
        )
        order = {"error": 0, "warning": 1, "info": 2}
        findings.sort(key=lambda f: (order[f.severity], f.path, f.line or 0, f.rule))
        return findings

    def _team_secret_findings(self) -> builtins.list[LintFinding]:
        """Secrets in team files that are not memories (every regular file is pushed)."""
        team_dir = self.root / "team"
        if not team_dir.is_dir():
            return []
        findings = []
        for path in sorted(p for p in team_dir.rglob("*") if p.is_file() and p.suffix != ".md"):
            try:
                text = read_text(path, SCANNED_FILE_LIMIT, "a team file", universal_newlines=True)
            except OSError:
                continue
            findings.extend(team_secret_lints(self.relative(path), text))
        return findings
