"""Real compactions of a session: what was about to be compacted, and what the summary lost.

Claude Code's PreCompact hook runs just before it summarises; `CompactionLog.snapshot` then
saves the dry run of that very span (what is kept, summarised and restored, and the paths,
commands, numbers and identifiers at risk). The PostCompact hook runs once the summary
exists; `CompactionLog.finish` reads the summary Claude Code wrote into the transcript (the
`isCompactSummary` record after the new boundary) and marks each saved fact kept or lost.

One JSON file per compaction under `<WORKBENCH_HOME>/compactions/<project>/<session id>/`,
written atomically. Fact values pass the secret redactor before they are stored, so a
credential in a command line never lands in the workbench's state.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.atomic import atomic_write_bytes
from workbench.engine.context.jsonl import parse_line
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.jsutil import js_iso
from workbench.engine.userfiles import SCANNED_FILE_LIMIT, load_json, open_stream, read_bytes
from workbench.engine.wording import plural

if TYPE_CHECKING:
    from workbench.engine.context.compaction.preview import CompactPreview
    from workbench.engine.engine import Engine

FACT_KINDS = ("paths", "commands", "numbers", "identifiers")
MAX_FACTS_PER_KIND = 100
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_BOUNDARY_MARK = b"compact_boundary"
_SUMMARY_SEARCH_LINES = 200
"""How many lines after a boundary may come before its summary record."""
_PRESERVED_SEARCH_LINES = 20_000
"""How far back from a boundary the messages it kept verbatim are looked for."""
POLL_SECONDS = 0.1
_pause = time.sleep
"""How a hook waits between reads of a transcript that is behind (tests replace it)."""


def check_session_id(session_id: object) -> str:
    """A session id safe to use as a folder name (hook input is not trusted)."""
    if not isinstance(session_id, str) or not _SESSION_ID.match(session_id):
        raise UserInputError(f"not a session id: {session_id!r}")
    if session_id.strip(".") == "":
        raise UserInputError(f"not a session id: {session_id!r}")
    return session_id


@dataclass(frozen=True)
class Fact:
    """One fact of the compacted span: a path, a command, a number or an identifier."""

    value: str
    count: int

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "count": self.count}


@dataclass(frozen=True)
class CompactionSnapshot:
    """The dry run of the span Claude Code was about to compact, taken in PreCompact."""

    created: str
    session_id: str
    transcript: str
    transcript_bytes: int
    """The transcript's size when the snapshot was taken: the new boundary lands after it."""
    trigger: str | None
    has_custom_instructions: bool
    model: str
    messages: int
    pre_tokens: int
    threshold: int
    chosen: str
    """`session_memory` or `full`: the path Claude Code would take."""
    summarised_messages: int
    kept_messages: int
    kept_tokens: int
    restored_files: tuple[tuple[str, int], ...]
    facts: Mapping[str, tuple[Fact, ...]]

    @property
    def fact_count(self) -> int:
        return sum(len(v) for v in self.facts.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "session_id": self.session_id,
            "transcript": self.transcript,
            "transcript_bytes": self.transcript_bytes,
            "trigger": self.trigger,
            "has_custom_instructions": self.has_custom_instructions,
            "model": self.model,
            "messages": self.messages,
            "pre_tokens": self.pre_tokens,
            "threshold": self.threshold,
            "chosen": self.chosen,
            "summarised_messages": self.summarised_messages,
            "kept_messages": self.kept_messages,
            "kept_tokens": self.kept_tokens,
            "restored_files": [{"path": p, "tokens": t} for p, t in self.restored_files],
            "facts": {kind: [f.to_json() for f in self.facts.get(kind, ())] for kind in FACT_KINDS},
            "fact_count": self.fact_count,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CompactionSnapshot:
        facts = data.get("facts") or {}
        return cls(
            created=str(data["created"]),
            session_id=str(data["session_id"]),
            transcript=str(data["transcript"]),
            transcript_bytes=int(data["transcript_bytes"]),
            trigger=data.get("trigger"),
            has_custom_instructions=bool(data.get("has_custom_instructions")),
            model=str(data.get("model", "")),
            messages=int(data.get("messages", 0)),
            pre_tokens=int(data.get("pre_tokens", 0)),
            threshold=int(data.get("threshold", 0)),
            chosen=str(data.get("chosen", "full")),
            summarised_messages=int(data.get("summarised_messages", 0)),
            kept_messages=int(data.get("kept_messages", 0)),
            kept_tokens=int(data.get("kept_tokens", 0)),
            restored_files=tuple(
                (str(f["path"]), int(f["tokens"])) for f in data.get("restored_files", ())
            ),
            facts={
                kind: tuple(Fact(str(f["value"]), int(f["count"])) for f in facts.get(kind, ()))
                for kind in FACT_KINDS
            },
        )


@dataclass(frozen=True)
class LossReport:
    """What the summary Claude Code actually wrote kept of the snapshot's facts."""

    created: str
    summary_source: str | None
    """`transcript` (the summary record after the new boundary), `hook input` (PostCompact's
    own copy, when the transcript did not have it yet) or None when none was found."""
    summary_chars: int
    boundary_uuid: str | None
    trigger: str | None
    pre_tokens: int | None
    post_tokens: int | None
    kept: Mapping[str, int]
    lost: Mapping[str, tuple[str, ...]]
    note: str = ""

    @property
    def lost_count(self) -> int:
        return sum(len(v) for v in self.lost.values())

    @property
    def checked(self) -> bool:
        return self.summary_source is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "summary_source": self.summary_source,
            "summary_chars": self.summary_chars,
            "boundary_uuid": self.boundary_uuid,
            "trigger": self.trigger,
            "pre_tokens": self.pre_tokens,
            "post_tokens": self.post_tokens,
            "kept": {kind: self.kept.get(kind, 0) for kind in FACT_KINDS},
            "lost": {kind: list(self.lost.get(kind, ())) for kind in FACT_KINDS},
            "lost_count": self.lost_count,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LossReport:
        lost = data.get("lost") or {}
        kept = data.get("kept") or {}
        return cls(
            created=str(data["created"]),
            summary_source=data.get("summary_source"),
            summary_chars=int(data.get("summary_chars", 0)),
            boundary_uuid=data.get("boundary_uuid"),
            trigger=data.get("trigger"),
            pre_tokens=data.get("pre_tokens"),
            post_tokens=data.get("post_tokens"),
            kept={kind: int(kept.get(kind, 0)) for kind in FACT_KINDS},
            lost={kind: tuple(str(v) for v in lost.get(kind, ())) for kind in FACT_KINDS},
            note=str(data.get("note", "")),
        )


@dataclass(frozen=True)
class CompactionRecord:
    """One real compaction: its snapshot, and its loss report once PostCompact ran."""

    id: str
    path: str
    snapshot: CompactionSnapshot | None
    report: LossReport | None = None

    @property
    def session_id(self) -> str:
        return self.snapshot.session_id if self.snapshot else ""

    @property
    def created(self) -> str:
        if self.snapshot is not None:
            return self.snapshot.created
        return self.report.created if self.report else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "snapshot": self.snapshot.to_json() if self.snapshot else None,
            "report": self.report.to_json() if self.report else None,
        }


@dataclass(frozen=True)
class FoundSummary:
    """The boundary and summary record Claude Code appended for one compaction."""

    boundary: Mapping[str, Any]
    text: str | None
    preserved: str = ""
    """The text of the messages a partial compaction kept verbatim (newer Claude Code keeps
    the last messages as they were): facts in them survive without the summary."""
    preserved_messages: int = 0


@dataclass
class _Redactor:
    """Redacts secrets in fact values, loading the scanner only once and only if needed."""

    _redact: Callable[[str], str] | None = field(default=None)

    def __call__(self, values: Sequence[str]) -> list[str]:
        if not values:
            return []
        if self._redact is None:
            from workbench.engine.team.secrets.redaction import redact_secrets

            self._redact = redact_secrets
        joined = "\n".join(values)
        if self._redact(joined) == joined:
            return list(values)
        return [self._redact(v) for v in values]


class CompactionLog:
    """The real compactions of one project's sessions."""

    def __init__(self, engine: Engine, root: Path | None = None) -> None:
        self.engine = engine
        self._root = root

    @property
    def root(self) -> Path:
        """`<WORKBENCH_HOME>/compactions/<project folder name>/` (not created here)."""
        if self._root is None:
            from workbench.paths import workbench_home

            project = os.path.basename(self.engine.locations.transcripts_dir.rstrip("/"))
            self._root = workbench_home() / "compactions" / (project or "project")
        return self._root

    def folder(self, session_id: str) -> Path:
        return self.root / check_session_id(session_id)

    # --- PreCompact ---------------------------------------------------------------------

    def snapshot(
        self,
        transcript: str | os.PathLike[str],
        *,
        session_id: str | None = None,
        trigger: str | None = None,
        custom_instructions: str | None = None,
        wait_seconds: float = 0.0,
        now_ms: float | None = None,
    ) -> CompactionRecord:
        """Preview the span about to be compacted and keep it as a new record.

        An automatic compaction starts only above the threshold, so an `auto` preview below it
        means the transcript is behind: Claude Code writes it in batches, and the reply that
        crossed the threshold (with the tool results after it) may not be in the file yet when
        the hook runs. Such a preview is read again as the file grows, for up to
        `wait_seconds`."""
        path = Path(transcript)
        if not path.is_file():
            raise NotFoundError(f"no transcript at {path}")
        session = check_session_id(session_id or path.stem)
        stamp = time.time() * 1000 if now_ms is None else now_ms
        stale = self._pending(session)
        if stale is not None:
            # A snapshot no PostCompact followed: that compaction failed or was cancelled.
            note = "no PostCompact followed this snapshot (the compaction did not complete)"
            unfinished = loss_report(stale.snapshot, None, created=js_iso(stamp))
            self._save(
                session,
                CompactionRecord(stale.id, "", stale.snapshot, replace(unfinished, note=note)),
            )
        size = path.stat().st_size
        preview = self.engine.context.compact_preview(str(path))
        deadline = time.monotonic() + max(0.0, wait_seconds)
        while trigger == "auto" and preview.pre_tokens < preview.threshold:
            if time.monotonic() >= deadline:
                break
            _pause(POLL_SECONDS)
            grown = path.stat().st_size
            if grown != size:
                size = grown
                preview = self.engine.context.compact_preview(str(path))
        snap = snapshot_from_preview(
            preview,
            session_id=session,
            transcript=str(path),
            transcript_bytes=size,
            trigger=trigger if isinstance(trigger, str) else None,
            has_custom_instructions=bool(custom_instructions and custom_instructions.strip()),
            created=js_iso(stamp),
        )
        record = CompactionRecord(id=_record_id(now_ms), path="", snapshot=snap, report=None)
        return self._save(session, record)

    # --- PostCompact --------------------------------------------------------------------

    def finish(
        self,
        transcript: str | os.PathLike[str],
        *,
        session_id: str | None = None,
        trigger: str | None = None,
        hook_summary: str | None = None,
        wait_seconds: float = 0.0,
        now_ms: float | None = None,
    ) -> CompactionRecord:
        """Check the newest snapshot against the summary Claude Code wrote, and keep the report.

        The summary comes from the transcript when its record is there; PostCompact's own
        copy (`hook_summary`) stands in when it is not (yet). Without either, wait up to
        `wait_seconds` for the transcript to catch up."""
        path = Path(transcript)
        session = check_session_id(session_id or path.stem)
        record = self._pending(session)
        since = record.snapshot.transcript_bytes if record and record.snapshot else 0
        found = find_summary(path, since)
        deadline = time.monotonic() + max(0.0, wait_seconds)
        while (found is None or found.text is None) and not hook_summary:
            if time.monotonic() >= deadline:
                break
            _pause(POLL_SECONDS)
            found = find_summary(path, since)
        report = loss_report(
            record.snapshot if record else None,
            found,
            hook_summary=hook_summary,
            trigger=trigger,
            created=js_iso(time.time() * 1000 if now_ms is None else now_ms),
        )
        if record is None:
            record = CompactionRecord(id=_record_id(now_ms), path="", snapshot=None)
        return self._save(session, CompactionRecord(record.id, "", record.snapshot, report))

    def refresh(self, record: CompactionRecord) -> CompactionRecord:
        """Re-check a report made from PostCompact's copy once the transcript has the record."""
        snap, report = record.snapshot, record.report
        if snap is None or report is None or report.summary_source == "transcript":
            return record
        found = find_summary(Path(snap.transcript), snap.transcript_bytes)
        if found is None or found.text is None:
            return record
        fresh = loss_report(snap, found, trigger=report.trigger, created=report.created)
        return self._save(snap.session_id, CompactionRecord(record.id, "", snap, fresh))

    # --- reading ------------------------------------------------------------------------

    def records(self, session_id: str, *, refresh: bool = True) -> list[CompactionRecord]:
        """The session's compactions, oldest first; unreadable files are skipped."""
        folder = self.folder(session_id)
        try:
            files = sorted(folder.glob("*.json"))
        except OSError:
            return []
        out = []
        for file in files:
            record = _load(file)
            if record is None:
                continue
            out.append(self.refresh(record) if refresh else record)
        return out

    def sessions(self) -> list[str]:
        """Sessions with at least one record, newest activity first."""
        try:
            folders = [p for p in self.root.iterdir() if p.is_dir() and any(p.glob("*.json"))]
        except OSError:
            return []
        folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        return [p.name for p in folders]

    def _pending(self, session_id: str) -> CompactionRecord | None:
        """The newest record still waiting for its loss report."""
        for record in reversed(self.records(session_id, refresh=False)):
            if record.report is None:
                return record
            break
        return None

    def _save(self, session_id: str, record: CompactionRecord) -> CompactionRecord:
        folder = self.folder(session_id)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        target = folder / f"{record.id}.json"
        body = {k: v for k, v in record.to_json().items() if k != "path"}
        data = json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8")
        atomic_write_bytes(target, data, mode=0o600)
        return CompactionRecord(record.id, str(target), record.snapshot, record.report)


def _record_id(now_ms: float | None) -> str:
    stamp = int(time.time() * 1000 if now_ms is None else now_ms)
    return f"{stamp:013d}-{secrets.token_hex(3)}"


def _load(path: Path) -> CompactionRecord | None:
    try:
        data = load_json(read_bytes(path, SCANNED_FILE_LIMIT, "a compaction record"), str(path))
        snap = data.get("snapshot")
        report = data.get("report")
        return CompactionRecord(
            id=str(data["id"]),
            path=str(path),
            snapshot=CompactionSnapshot.from_json(snap) if snap else None,
            report=LossReport.from_json(report) if report else None,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError, UserInputError):
        return None


def snapshot_from_preview(
    preview: CompactPreview,
    *,
    session_id: str,
    transcript: str,
    transcript_bytes: int,
    trigger: str | None,
    has_custom_instructions: bool,
    created: str,
    redact: Callable[[Sequence[str]], list[str]] | None = None,
) -> CompactionSnapshot:
    """The parts of a dry run worth keeping, with every fact value passed through `redact`."""
    redactor = redact or _Redactor()
    survival = preview.survival
    facts: dict[str, tuple[Fact, ...]] = {}
    for kind in FACT_KINDS:
        items = list(getattr(survival, kind))[:MAX_FACTS_PER_KIND]
        values = redactor([i.value for i in items])
        facts[kind] = tuple(Fact(v, i.count) for v, i in zip(values, items, strict=True))
    sm = preview.session_memory
    on_sm = preview.chosen == "session_memory" and sm.keep_start_index is not None
    return CompactionSnapshot(
        created=created,
        session_id=session_id,
        transcript=transcript,
        transcript_bytes=transcript_bytes,
        trigger=trigger,
        has_custom_instructions=has_custom_instructions,
        model=preview.model,
        messages=preview.messages,
        pre_tokens=preview.pre_tokens,
        threshold=preview.threshold,
        chosen=preview.chosen,
        summarised_messages=survival.span_messages,
        kept_messages=sm.kept_messages if on_sm else 0,
        kept_tokens=sm.kept_tokens if on_sm else 0,
        restored_files=tuple((f.path, f.tokens) for f in preview.files.restored),
        facts=facts,
    )


def loss_report(
    snapshot: CompactionSnapshot | None,
    found: FoundSummary | None,
    *,
    hook_summary: str | None = None,
    trigger: str | None = None,
    created: str,
) -> LossReport:
    """Mark each of the snapshot's facts kept or lost by the summary that was written."""
    from workbench.engine.context.compaction.prompt import format_compact_summary
    from workbench.engine.context.compaction.survival import summary_keeps

    meta: Mapping[str, Any] = {}
    boundary_uuid = None
    if found is not None:
        raw_meta = found.boundary.get("compactMetadata")
        meta = raw_meta if isinstance(raw_meta, Mapping) else {}
        uuid = found.boundary.get("uuid")
        boundary_uuid = uuid if isinstance(uuid, str) else None
    summary: str | None = None
    source: str | None = None
    preserved = found.preserved if found is not None else ""
    if found is not None and found.text is not None:
        summary, source = found.text, "transcript"
    elif isinstance(hook_summary, str) and hook_summary.strip():
        # PostCompact sends the model's raw reply; what the model sees afterwards has the
        # analysis block removed, so facts named only there are lost.
        summary, source = format_compact_summary(hook_summary), "hook input"
    kept: dict[str, int] = dict.fromkeys(FACT_KINDS, 0)
    lost: dict[str, tuple[str, ...]] = {kind: () for kind in FACT_KINDS}
    note = ""
    if snapshot is None:
        note = "no PreCompact snapshot for this compaction, so there was nothing to check"
    elif summary is None:
        note = "the summary was not found in the transcript or the hook input"
    else:
        keeps = summary_keeps(summary + ("\n" + preserved if preserved else ""))
        if found is not None and found.preserved_messages:
            note = (
                f"{plural(found.preserved_messages, 'message')} "
                f"{'was' if found.preserved_messages == 1 else 'were'} kept verbatim, so "
                "their facts count as kept"
            )
        for kind in FACT_KINDS:
            facts = snapshot.facts.get(kind, ())
            gone = tuple(f.value for f in facts if not keeps(f.value))
            lost[kind] = gone
            kept[kind] = len(facts) - len(gone)
    return LossReport(
        created=created,
        summary_source=source if snapshot is not None else None,
        summary_chars=len(summary or ""),
        boundary_uuid=boundary_uuid,
        trigger=_str(meta.get("trigger")) or trigger,
        pre_tokens=_int(meta.get("preTokens")),
        post_tokens=_int(meta.get("postTokens")),
        kept=kept,
        lost=lost,
        note=note,
    )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def find_summary(path: Path, since: int = 0) -> FoundSummary | None:
    """The last compact boundary starting at or after byte `since`, and its summary text
    (None while the summary record is not written yet)."""
    try:
        handle = open_stream(path)
    except OSError:
        return None
    try:
        size = os.fstat(handle.fileno()).st_size
        if size <= since:
            return None
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return _find_in(view, size, max(0, since))
    except (OSError, ValueError):
        return None
    finally:
        handle.close()


def _find_in(view: mmap.mmap, size: int, since: int) -> FoundSummary | None:
    end = size
    while True:
        hit = view.rfind(_BOUNDARY_MARK, since, end)
        if hit == -1:
            return None
        start = view.rfind(b"\n", 0, hit) + 1
        stop = view.find(b"\n", hit)
        stop = size if stop == -1 else stop
        end = start
        if start < since:
            return None
        raw = parse_line(view[start:stop])
        if (
            raw is None
            or raw.get("type") != "system"
            or raw.get("subtype") != "compact_boundary"
            or raw.get("isSidechain") is True
        ):
            continue
        preserved, count = _preserved_before(view, start, raw)
        return FoundSummary(
            raw, _summary_after(view, size, stop + 1, raw.get("uuid")), preserved, count
        )


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)


def _preserved_before(view: mmap.mmap, end: int, boundary: Mapping[str, Any]) -> tuple[str, int]:
    """The text of the messages the boundary says were kept (by uuid list or as a segment
    from head to tail), read backwards from the boundary."""
    meta = boundary.get("compactMetadata")
    if not isinstance(meta, Mapping):
        return "", 0
    listed: set[str] = set()
    messages = meta.get("preservedMessages")
    if isinstance(messages, Mapping):
        for key in ("uuids", "allUuids"):
            values = messages.get(key)
            if isinstance(values, list):
                listed.update(v for v in values if isinstance(v, str))
    segment = meta.get("preservedSegment")
    head = tail = None
    if isinstance(segment, Mapping):
        head = segment.get("headUuid") if isinstance(segment.get("headUuid"), str) else None
        tail = segment.get("tailUuid") if isinstance(segment.get("tailUuid"), str) else None
    if not listed and not (head and tail):
        return "", 0
    texts: list[str] = []
    count = 0
    inside = False
    position = end - 1
    for _ in range(_PRESERVED_SEARCH_LINES):
        if position <= 0:
            break
        start = view.rfind(b"\n", 0, position) + 1
        raw = parse_line(view[start:position])
        position = start - 1
        if raw is None or raw.get("type") not in ("user", "assistant"):
            continue
        uuid = raw.get("uuid")
        if uuid == tail:
            inside = True
        if uuid in listed or inside:
            message = raw.get("message")
            _strings(message.get("content") if isinstance(message, Mapping) else None, texts)
            count += 1
            listed.discard(uuid)
        if uuid == head:
            inside = False
            head = tail = None
        if not listed and head is None:
            break
    return "\n".join(texts), count


def _summary_after(view: mmap.mmap, size: int, position: int, boundary: object) -> str | None:
    from workbench.engine.context.tokens import message_content

    for _ in range(_SUMMARY_SEARCH_LINES):
        if position >= size:
            return None
        stop = view.find(b"\n", position)
        if stop == -1:
            return None  # the line is still being written
        raw = parse_line(view[position:stop])
        position = stop + 1
        if raw is None or raw.get("type") != "user" or raw.get("isCompactSummary") is not True:
            continue
        if boundary is not None and raw.get("parentUuid") not in (boundary, None):
            continue
        content = message_content(raw)
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [
                b.get("text") for b in content if isinstance(b, Mapping) and b.get("type") == "text"
            ]
            return "\n".join(t for t in texts if isinstance(t, str))
        return None
    return None
