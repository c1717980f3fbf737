"""The memory store: list, read, lint and edit memory files and their MEMORY.md indexes.

Every write is atomic and recorded in the local history; edits of existing files refuse to
overwrite a file that changed on disk since it was read; team writes are checked for secrets
first. A save is Claude Code's two-step save: the file, then its one-line index entry.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import math
import os
import re
import threading
import time
from pathlib import Path
from stat import S_ISDIR
from typing import TYPE_CHECKING, Any

from workbench.engine.errors import (
    ConflictError,
    NotFoundError,
    RefusedWriteError,
    UserInputError,
    WorkbenchError,
)
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
from workbench.engine.memories.file_format import (
    body_links,
    edit_memory_text,
    kebab_name,
    link_keys,
    new_frontmatter,
    read_type,
)
from workbench.engine.memories.frontmatter import (
    MEMORY_TYPES,
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
    parse_index_line,
    strip_for_loading,
    truncate_entrypoint,
    truncation_warning,
)
from workbench.engine.memories.index_edits import (
    IndexFixPlan,
    index_line_for,
    with_index_line,
    with_link_moved,
    with_orphans,
    with_short_lines,
    without_dangling,
    without_links,
)
from workbench.engine.memories.lint import (
    LARGE_FILE_BYTES,
    FileFacts,
    lint_and_frontmatter,
    lint_file,
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
    IndexProjection,
    IndexReport,
    LintFinding,
    Manifest,
    MemoryDocument,
    MemoryEntry,
    RemoveResult,
    RenameResult,
    SaveResult,
)
from workbench.engine.memories.scan import MemoryScanner, format_manifest
from workbench.engine.memories.staleness import STALE_AFTER_DAYS, stale_message
from workbench.engine.memories.walk import iter_memory_paths
from workbench.engine.records import Record
from workbench.engine.records import replace as with_changes
from workbench.engine.userfiles import (
    INDEX_LIMIT,
    MEMORY_FILE_LIMIT,
    SCANNED_FILE_LIMIT,
    UnreadableFileError,
    describe,
    read_bytes,
    read_start,
    read_text,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import TypeVar

    from workbench.engine.engine import Engine
    from workbench.engine.history import History
    from workbench.engine.memories.finished_listing import Lookup
    from workbench.engine.memories.models import DraftCheck, DraftForm, EditableMemory

    # Here: a TypeVar bound by name compiles that name when the module loads (1.5 ms).
    _M = TypeVar("_M", bound="Callable[..., Any]")

DAY_MS = 86_400_000
_now_ns = time.time_ns
"""The clock a parsed index is trusted by (tests set it later to trust a fresh index)."""
SCOPES = ("all", "private", "team", "log")


def _check_scope(scope: str) -> None:
    if scope not in SCOPES:
        raise UserInputError(f"unknown scope {scope!r} (use one of {', '.join(SCOPES)})")


def _fingerprint(data: bytes) -> str:
    import hashlib  # here: loading OpenSSL is 4 ms the index report (SessionStart) never needs

    return hashlib.sha256(data).hexdigest()


def _decode_keeping_cr(data: bytes) -> str:
    """Index bytes as text with the BOM stripped and CRLF kept (how Claude Code measures)."""
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return slug[:60].rstrip("_") or "memory"


def _one_change(method: _M) -> _M:
    """Run a store method as one change: under the folder's lock, recorded or rolled back
    as a whole (its reads, checks and writes cannot interleave with another process)."""

    @functools.wraps(method)
    def wrapper(self: MemoryStore, *args: Any, **kwargs: Any) -> Any:
        try:
            with self.history.transaction():
                return method(self, *args, **kwargs)
        finally:
            self._forget_index()

    return wrapper  # type: ignore[return-value]


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


class MemoryStore:
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
        self._indexed: tuple[tuple[Stamp | None, Stamp | None], frozenset[str]] | None = None
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
            lints=lints + analysis.secret_lints,
            type_format=analysis.type_location,
        )

    # --- reading -----------------------------------------------------------------------
    # Below this method, `list` in a signature names it: annotations there say builtins.list.

    def list(self, scope: str = "all") -> list[MemoryEntry]:
        """Memory files newest first; `scope` is all, private, team or log."""
        if scope not in SCOPES:
            raise UserInputError(f"unknown scope {scope!r} (use one of {', '.join(SCOPES)})")
        indexed = self._indexed_paths()
        cache = self._listing_cache()
        stored = cache.load() if cache is not None else None
        rows = []
        for path, stat in iter_memory_paths(self.root):
            rel = self.relative(path)
            rows.append((path, stat, rel, self._analyse(path, stat, rel, stored)))
        if cache is not None and stored is not None:
            self._save_listing_cache(cache, stored, rows)
        everything = [self._entry(p, st, indexed, rel, a) for p, st, rel, a in rows]
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
        indexed = self._indexed_paths()
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
            rows.append(self._row(path, rel, stat, record, indexed, now_ms))
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
        entry = self._entry(str(target), stat, self._indexed_paths())
        parsed, body = split_document(text) if not binary else (None, "")
        head = parse_frontmatter("\n".join(text.split("\n", 30)[:30]) + "\n")
        return MemoryDocument(
            entry=entry,
            frontmatter=dict(parsed.data) if parsed else {},
            visible_to_claude=head.present and head.error is None,
            body=body,
            text=text,
            fingerprint=_fingerprint(data),
            frontmatter_error=parsed.error if parsed else "binary file",
            binary=binary,
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
        return data, decode(data)[0]

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
        with self._index_lock:
            now = _now_ns()
            try:  # stat'ed before the read: a change during the read shows as a new stamp
                stamps = (self._index_stamp(False), self._index_stamp(True))
            except OSError:
                stamps = None
            cached = self._indexed
            if cached is not None and cached[0] == stamps:
                return cached[1]
            linked, complete = self._parse_indexed_paths()
            self._indexed = None
            if stamps is not None and complete:
                if all(s is None or s[4] < now - RACY_NS for s in stamps):
                    self._indexed = (stamps, linked)
            return linked

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

    def _parse_indexed_paths(self) -> tuple[frozenset[str], bool]:
        """The paths both indexes link to, and whether both were read without error."""
        linked: set[str] = set()
        complete = True
        for team in (False, True):
            try:
                _, text = self._read_index(team)
            except OSError:
                complete = False
                continue  # lint reports the unreadable index; the listing goes on without it
            prefix = "team/" if team else ""
            for line in text.split("\n", MAX_ITEMISED_LINES)[:MAX_ITEMISED_LINES]:
                if "](" not in line:
                    continue  # no link: skip the regex (most lines of a huge index)
                parsed = parse_index_line(line)
                target = link_target_path(parsed.target) if parsed.target else None
                if target:
                    linked.add(os.path.normpath(prefix + target).replace(os.sep, "/"))
        return frozenset(linked), complete

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
        if not report.exists:
            return []
        rel = self.relative(report.path)
        findings = []
        if report.line_truncated:
            findings.append(
                LintFinding(
                    rel,
                    "index-over-lines",
                    "error",
                    f"{report.line_count} lines: only the first {report.max_lines} load "
                    f"({report.dropped_lines} dropped)",
                    report.max_lines + 1,
                )
            )
        if report.length_truncated:
            findings.append(
                LintFinding(
                    rel,
                    "index-over-length",
                    "error",
                    f"{report.length:,} characters (UTF-16 units): more than "
                    f"{report.max_length:,} load; the rest is cut",
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
                    f"no line in {'team/' if team else ''}MEMORY.md links to this file",
                )
            )
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
        # Recall's view: generic or duplicated descriptions the selector cannot tell apart
        # (a missing description is already reported above).
        findings.extend(
            f
            for f in self.engine.recall.lint_descriptions()
            if f.rule != "recall-description-missing"
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

    # --- writing -----------------------------------------------------------------------

    def _check_team_secrets(self, target: Path, content: str) -> None:
        if not self.locations.is_team_path(str(target)):
            return
        from workbench.engine.team.secrets import scan_for_secrets, team_write_refusal_message

        labels = [match.label for match in scan_for_secrets(content)]
        if labels:
            raise RefusedWriteError(team_write_refusal_message(labels))

    def _new_file_name(
        self, memory_type: str, name: str, team: bool, content: bytes | None = None
    ) -> tuple[str, bool]:
        """A free `TYPE_NAME[_N].md`, or one that already holds exactly `content` (True)."""
        folder = self._index_folder(team)
        # The release's naming: `type_name.md` (2.1.88's examples) or the kebab-case name.
        kebab = self.formats.kebab_names
        stem = kebab_name(name) if kebab else f"{memory_type}_{_slug(name)}"
        candidate = f"{stem}.md"
        counter = 2
        while True:
            path = folder / candidate
            if not path.exists():
                return candidate, False
            if content is not None and _same_bytes(path, content):
                return candidate, True
            candidate = f"{stem}-{counter}.md" if kebab else f"{stem}_{counter}.md"
            counter += 1

    def compose(self, memory_type: str, name: str, description: str, body: str) -> str:
        """A new memory file's full text in the release's format: frontmatter, a blank line,
        the body (2.1.332 nests the type under `metadata` and names it in kebab case)."""
        # The closing fence's `---\s*` swallows any whitespace the body starts with, so it is
        # dropped here: what is written is exactly what Claude Code (and `read`) will see.
        body = normalize_text(body).lstrip().rstrip("\n")
        if self.formats.kebab_names:
            name = kebab_name(name)
        head = new_frontmatter(name, description, memory_type, self.formats.writes_type_at)
        return head + "\n" + body + "\n"

    @staticmethod
    def editable(document: MemoryDocument) -> EditableMemory:
        """The editor's form fields and body for `document`, or its whole text (`raw`) when
        the form cannot represent it (broken or unclosed frontmatter, binary)."""
        from workbench.engine.memories.editable import editable_from

        return editable_from(document)

    @staticmethod
    def form_of(text: str) -> EditableMemory | None:
        """The form fields and body of a whole file's text, or None without frontmatter."""
        from workbench.engine.memories.editable import form_of

        return form_of(text)

    def edit_text(
        self,
        document: MemoryDocument,
        *,
        name: str,
        description: str,
        memory_type: str | None,
        body: str,
    ) -> str:
        """The text of `document` after a form edit, in the file's own format (a nested type
        stays nested, other keys are kept; unchanged fields leave the block as it was)."""
        return edit_memory_text(
            document.text,
            name=name,
            description=description,
            memory_type=memory_type,
            body=body,
            new_style=self.formats.writes_type_at,
        )

    def _validate_new(self, memory_type: str, name: str, description: str) -> None:
        if memory_type not in MEMORY_TYPES:
            raise UserInputError(
                f"type must be one of {', '.join(MEMORY_TYPES)} (got {memory_type!r})"
            )
        if not name.strip():
            raise UserInputError("a memory needs a name")
        if not description.strip():
            raise UserInputError("a memory needs a one-line description: recall decides by it")
        for field_name, value in (("name", name), ("description", description)):
            if "\n" in value or "\r" in value:
                raise UserInputError(
                    f"the {field_name} must be one line (it goes into the index and the manifest)"
                )
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise UserInputError(
                    f"the {field_name} holds bytes that are not text (not valid UTF-8)"
                ) from None

    def _target_for(self, file: str | None, memory_type: str, name: str, team: bool) -> Path:
        folder = self._index_folder(team)
        if file:
            if not file.endswith(".md"):
                raise UserInputError(f"memory files end in .md (got {file!r})")
            if Path(file).name == "MEMORY.md":
                raise UserInputError("MEMORY.md is the index; write memories to their own files")
            target = self.resolve(folder / file)
            if team and not self.locations.is_team_path(str(target)):
                raise UserInputError(f"{file} would land outside the team folder")
            return target
        return folder / self._new_file_name(memory_type, name, team)[0]

    def _index_line_for(self, target: Path, name: str, hook: str | None, team: bool) -> str:
        return index_line_for(target, name, hook, self._index_folder(team))

    def _with_index_line(self, text: str, target: Path, line: str, team: bool) -> str:
        """The index text with `line` replacing any line linking to `target`, else appended."""
        return with_index_line(text, target, line, self._index_folder(team))

    @staticmethod
    def first_listed(entries: Sequence[MemoryEntry]) -> MemoryEntry | None:
        """The memory a listing (grouped by scope, newest first) starts with."""
        return first_listed(entries)

    def check_draft(
        self,
        text: str,
        *,
        path: str,
        team: bool,
        form: DraftForm | None = None,
        new: bool = False,
    ) -> DraftCheck:
        """Lint a memory being edited as it would be saved (`text`, the whole file): its
        findings (never `memory-stale`, it is being written now), what the form still lacks,
        and for a new memory the index headroom after the save."""
        from workbench.engine.memories.models import DraftCheck

        facts = FileFacts(
            path=path,
            text=text,
            size_bytes=len(text.encode("utf-8")),
            age_days=0,
            team=team,
            reads_type_at=self.formats.reads_type_at,
            claude_version=self.engine.profile.version,
        )
        findings = [f for f in lint_file(facts) if f.rule != "memory-stale"]
        if form is not None:
            if form.memory_type is None:
                # The form composes an empty type; say what to do rather than quote ''.
                findings = [f for f in findings if not f.rule.startswith("type-")]
                message = "choose a type: " + ", ".join(MEMORY_TYPES)
                findings.insert(0, LintFinding(path, "type-missing", "error", message))
            if not form.name:
                findings.insert(
                    0, LintFinding(path, "name-missing", "error", "a memory needs a name")
                )
        projection = None
        if new and form is not None and form.memory_type and form.name:
            try:
                result = self.preview_save(
                    form.memory_type, form.name, form.description, file=form.file, team=team
                )
                projection = result.message or (
                    f"the index goes to {result.line_count_after}/200 lines, "
                    f"{result.length_after:,}/25,000 characters"
                )
            except WorkbenchError as exc:
                projection = str(exc)
        return DraftCheck(tuple(findings), projection)

    def preview_save(
        self,
        memory_type: str,
        name: str,
        description: str,
        *,
        file: str | None = None,
        team: bool = False,
        hook: str | None = None,
    ) -> IndexProjection:
        """What a save would do to the index's headroom, before anything is written."""
        target = self._target_for(file, memory_type, name, team)
        _, text = self._read_index(team)
        after = self._with_index_line(
            text, target, self._index_line_for(target, name, hook or description, team), team
        )
        return self._projection(self.index(team, text=text), self.index(team, text=after))

    def _projection(self, before: IndexReport, after: IndexReport) -> IndexProjection:
        loaded_before = {e.text for e in before.entries if e.loaded}
        newly_dropped = sum(1 for e in after.entries if not e.loaded and e.text in loaded_before)
        dropped_total = sum(1 for e in after.entries if not e.loaded)
        message = None
        if after.line_truncated or after.length_truncated:
            parts = []
            if after.line_truncated:
                parts.append(f"{after.line_count}/{after.max_lines} lines")
            if after.length_truncated:
                parts.append(f"{after.length:,}/{after.max_length:,} characters")
            message = (
                f"this save puts the index at {' and '.join(parts)}; "
                f"{dropped_total} entr{'y' if dropped_total == 1 else 'ies'} will not load"
            )
        return IndexProjection(
            line_count_before=before.line_count,
            line_count_after=after.line_count,
            length_before=before.length,
            length_after=after.length,
            headroom_before=before.headroom,
            headroom_after=after.headroom,
            newly_dropped=newly_dropped,
            message=message,
        )

    def save(
        self,
        *,
        type: str,  # noqa: A002 - mirrors the frontmatter key and the CLI flag
        name: str,
        description: str,
        body: str,
        file: str | None = None,
        team: bool = False,
        index: bool = True,
        hook: str | None = None,
        replace: bool = False,
    ) -> SaveResult:
        """Claude Code's two-step save: write the memory file, then its index line.

        Both steps and their history are one unit, made under the folder's lock. Without
        `file`, a name already taken gets `_2`, `_3`, … (said in `notes`); a file that
        already holds exactly this memory is reused, so a retried save adds nothing.
        """
        self._validate_new(type, name, description)
        if "\0" in body:
            raise UserInputError("the body holds a NUL character: memory files are text")
        content = self.compose(type, name, description, body)
        data = content.encode("utf-8")
        notes: list[str] = []
        if not normalize_text(body).strip():
            notes.append("the body was empty: the memory holds only its name, description and type")
        history = self.history
        # Everything that can be refused without looking at racing state, before the lock.
        first = f"{type}_{_slug(name)}.md"
        explicit = self._target_for(file, type, name, team) if file else None
        self._check_team_secrets(explicit or self._index_folder(team) / first, content)
        with self._writing_index(), history.transaction():
            identical = False
            if explicit is not None:
                target = explicit
                if target.exists() and not replace:
                    raise UserInputError(
                        f"{self.relative(target)} already exists (pass --replace to overwrite it)"
                    )
            else:
                chosen, identical = self._new_file_name(type, name, team, data)
                target = self._index_folder(team) / chosen
                if identical:
                    notes.append(f"{self.relative(target)} already holds exactly this memory")
                elif chosen != first:
                    taken = self.relative(self._index_folder(team) / first)
                    notes.append(
                        f"{taken} already exists, so this memory was saved as "
                        f"{self.relative(target)}"
                    )
            group = history.new_group()
            ids = []
            if not identical:
                ids.append(history.write(target, data, "save", group=group).id)
            index_line = None
            projection = None
            if index:
                index_line = self._index_line_for(target, name, hook or description, team)
                _, text = self._read_index(team)
                updated = self._with_index_line(text, target, index_line, team)
                projection = self._projection(
                    self.index(team, text=text), self.index(team, text=updated)
                )
                if updated != text:
                    ids.append(
                        history.write(
                            self.index_path(team),
                            updated.encode("utf-8"),
                            "index-edit",
                            note=f"entry for {self.relative(target)}",
                            group=group,
                        ).id
                    )
        report = self.index(team)
        return SaveResult(
            path=self.relative(target),
            abs_path=str(target),
            index_line=index_line,
            index_updated=index_line is not None,
            headroom=report.headroom,
            projection=projection,
            history_ids=tuple(ids),
            fingerprint=_fingerprint(data),
            notes=tuple(notes),
            unchanged=identical and len(ids) == 0,
        )

    def update(
        self, path: str | os.PathLike[str], text: str, expected_fingerprint: str | None
    ) -> SaveResult:
        """Replace a memory file's text, refusing if it changed on disk since it was read."""
        target = self.resolve(path)
        if target.name == "MEMORY.md":
            return self.write_index(
                text,
                team=self.locations.is_team_path(str(target)),
                expected_fingerprint=expected_fingerprint,
            )
        self._check_team_secrets(target, text)
        team = self.locations.is_team_path(str(target))
        with self.history.locked():
            self._check_fresh(target, expected_fingerprint)
            return self._write_whole(target, text, "save", team=team, index_updated=False)

    def write_index(
        self, text: str, *, team: bool = False, expected_fingerprint: str | None = None
    ) -> SaveResult:
        """Replace MEMORY.md (or team/MEMORY.md) as a whole, with the same conflict check."""
        target = self.index_path(team)
        if team:
            self._check_team_secrets(target, text)
        with self.history.locked():
            self._check_fresh(target, expected_fingerprint)
            return self._write_whole(target, text, "index-edit", team=team, index_updated=True)

    def _write_whole(
        self, target: Path, text: str, action: str, *, team: bool, index_updated: bool
    ) -> SaveResult:
        """Write `text` over `target` as one history entry; report the index headroom after."""
        data = text.encode("utf-8")
        with self._writing_index():
            entry = self.history.write(target, data, action)
        report = self.index(team)
        return SaveResult(
            path=self.relative(target),
            abs_path=str(target),
            index_line=None,
            index_updated=index_updated,
            headroom=report.headroom,
            history_ids=(entry.id,),
            fingerprint=_fingerprint(data),
        )

    def _check_fresh(self, target: Path, expected: str | None) -> None:
        if expected is None:
            return
        try:
            current = _fingerprint(read_bytes(target, MEMORY_FILE_LIMIT, "a memory file"))
        except FileNotFoundError:
            current = None
        if current != expected:
            state = "was deleted" if current is None else "changed on disk"
            raise ConflictError(
                f"{self.relative(target)} {state} since it was opened; the save was refused so "
                "nothing is overwritten (reload it, or keep your copy elsewhere)"
            )

    def _remove_index_links(
        self, targets: set[Path], team: bool, group: str, action: str
    ) -> tuple[int, builtins.list[str]]:
        data, text = self._read_index(team)
        if data is None:
            return 0, []
        kept, removed = without_links(text, targets, self._index_folder(team))
        if not removed:
            return 0, []
        entry = self.history.write(self.index_path(team), kept.encode("utf-8"), action, group=group)
        return removed, [entry.id]

    @_one_change
    def remove(self, path: str | os.PathLike[str]) -> RemoveResult:
        """Delete a memory file and every index line that links to it."""
        target = self.resolve(path)
        if target.name == "MEMORY.md":
            raise UserInputError("refusing to delete an index; edit it instead")
        if not target.is_file():
            raise NotFoundError(f"no memory file {self.relative(target)}")
        history = self.history
        group = history.new_group()
        ids = [history.delete(target, "delete", group=group).id]
        team = self.locations.is_team_path(str(target))
        removed, index_ids = self._remove_index_links({target}, team, group, "index-edit")
        return RemoveResult(self.relative(target), removed, tuple(ids + index_ids))

    @_one_change
    def rename(
        self, path: str | os.PathLike[str], new_path: str | os.PathLike[str]
    ) -> RenameResult:
        """Move a memory file within its scope and re-point index links to it."""
        source = self.resolve(path)
        dest = self.resolve(
            new_path
            if os.path.isabs(os.fspath(new_path)) or "/" in os.fspath(new_path)
            else source.parent / os.fspath(new_path)
        )
        if not source.is_file():
            raise NotFoundError(f"no memory file {self.relative(source)}")
        if not dest.name.endswith(".md") or dest.name == "MEMORY.md":
            raise UserInputError("the new name must be a .md file other than MEMORY.md")
        if dest.exists():
            raise UserInputError(f"{self.relative(dest)} already exists")
        team = self.locations.is_team_path(str(source))
        if team != self.locations.is_team_path(str(dest)):
            raise UserInputError(
                "renaming cannot move a memory between private and team; save it anew"
            )
        history = self.history
        group = history.new_group()
        data = read_bytes(source, MEMORY_FILE_LIMIT, "a memory file")
        ids = [
            history.write(
                dest, data, "rename", note=f"from {self.relative(source)}", group=group
            ).id
        ]
        ids.append(
            history.delete(source, "rename", note=f"to {self.relative(dest)}", group=group).id
        )
        index_data, text = self._read_index(team)
        updated_links = 0
        if index_data is not None:
            moved, updated_links = with_link_moved(text, source, dest, self._index_folder(team))
            if updated_links:
                ids.append(
                    history.write(
                        self.index_path(team), moved.encode("utf-8"), "index-edit", group=group
                    ).id
                )
        return RenameResult(self.relative(source), self.relative(dest), updated_links, tuple(ids))

    # --- index fixes -------------------------------------------------------------------
    # Each fix is planned first (the index text before and after, nothing written) so a front
    # end can show the change and ask; applying a plan refuses if the index moved meanwhile.

    def plan_index_fix(self, kind: str, team: bool = False) -> IndexFixPlan:
        """What one fix (`dangling`, `orphans` or `long-lines`) would write, without writing."""
        data, text = self._read_index(team)
        folder = self._index_folder(team)
        if kind == "dangling":
            after, count = without_dangling(text, self.index(team, text=text), folder)
        elif kind == "orphans":
            after, count = with_orphans(text, self._orphans_named(text, team), folder)
        elif kind == "long-lines":
            after, count = with_short_lines(text)
        else:
            raise UserInputError(f"unknown index fix {kind!r}")
        if data is None and kind != "orphans":
            after, count = text, 0  # no index: nothing to remove or shorten (orphans create it)
        return IndexFixPlan(kind, team, str(self.index_path(team)), text, after, count)

    @_one_change
    def apply_index_fix(self, plan: IndexFixPlan) -> int:
        """Write a planned fix; refused (ConflictError) if the index changed since the plan."""
        if not plan.count:
            return 0
        _, current = self._read_index(plan.team)
        if current != plan.before:
            raise ConflictError(
                f"{'team/' if plan.team else ''}MEMORY.md changed since the preview; "
                "nothing was written (look at the change again)"
            )
        self.history.write(
            self.index_path(plan.team),
            plan.after.encode("utf-8"),
            "index-fix",
            note=plan.note,
        )
        return plan.count

    def fix_remove_dangling(self, team: bool = False) -> int:
        """Drop index lines whose link target does not exist; returns how many."""
        return self.apply_index_fix(self.plan_index_fix("dangling", team))

    def fix_index_orphans(self, team: bool = False) -> int:
        """Add an index line for every memory file no line links to; returns how many."""
        return self.apply_index_fix(self.plan_index_fix("orphans", team))

    def fix_shorten_long_lines(self, team: bool = False) -> int:
        """Shorten index lines over the limit to about 150 characters; returns how many."""
        return self.apply_index_fix(self.plan_index_fix("long-lines", team))

    def _orphans_named(self, text: str, team: bool) -> builtins.list[tuple[Path, str, str | None]]:
        """The files no line of the index `text` links to, each with the name and hook of the
        line the `orphans` fix writes for it."""
        named = []
        for rel in self.index(team, text=text).orphans:
            target = self.root / rel
            analysis = self._analyse(str(target), target.stat())
            named.append((target, analysis.name or target.stem, analysis.description))
        return named


def _same_bytes(path: Path, content: bytes) -> bool:
    """True when `path` is a regular file holding exactly `content` (never waits on a pipe)."""
    try:
        return read_start(path, len(content) + 1)[0] == content
    except OSError:
        return False
