"""A project's sessions over time: how big each got, how it compacted, what it cost.

Each session is summarised by the attribution pass (no items kept, no previews), and the
summaries are cached under the workbench's home, keyed by the file's size and modification
time and by the rules in force, so a second look at 200 sessions reads only what changed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine import userfiles
from workbench.engine.context.attribution_models import AttributionReport

if TYPE_CHECKING:
    from workbench.engine.context.service import ContextService

CACHE_FORMAT = 2
"""Bump when a summary's fields or meaning change: older cache entries are then recomputed."""
_ENV_PREFIXES = ("CLAUDE_", "DISABLE_")


@dataclass(frozen=True)
class SessionSummary:
    """One session, in the few numbers that show how it ended."""

    session_id: str
    path: str
    size_bytes: int
    first_timestamp: str | None
    last_timestamp: str | None
    title: str | None
    model: str
    claude_version: str
    calls: int
    peak: int
    """The largest context a call held (its measured prompt plus output)."""
    peak_call: int | None
    final: int
    """The context now, as the gauge counts it for the session's end (Claude Code's
    count over the messages after the last compaction), so it agrees with `gauge`."""
    tokens_in: int
    """Prompt tokens over every call the session paid for (cache reads included): the main
    chain, sidechains and subagents, each response once."""
    tokens_out: int
    compactions: dict[str, int]
    """By trigger: auto, manual, reactive (and any other trigger a record names)."""
    compaction_points: tuple[dict[str, Any], ...]
    restored_files: int
    thresholds: dict[str, int | None]
    """warning, autocompact and blocking for the session's model (None: not in force)."""
    first_crossings: dict[str, int | None]
    """The first call whose prompt reached each threshold (None: never)."""
    final_method: str = "usage"
    """How `final` was counted, as the gauge says it: usage, usage+estimate or estimate."""
    spend_calls: dict[str, int] = field(default_factory=dict)
    """Calls counted in the spend by where they were found (main, sidechain, subagents,
    agent_progress); `calls` is the main chain's alone."""

    @property
    def peak_share(self) -> float | None:
        """The peak as a share of the auto-compact threshold (of the warning without one)."""
        limit = self.thresholds.get("autocompact") or self.thresholds.get("warning")
        return self.peak / limit if limit else None

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "path": self.path,
            "size_bytes": self.size_bytes,
            "first_timestamp": self.first_timestamp,
            "last_timestamp": self.last_timestamp,
            "title": self.title,
            "model": self.model,
            "claude_version": self.claude_version,
            "calls": self.calls,
            "peak": self.peak,
            "peak_call": self.peak_call,
            "peak_share": None if self.peak_share is None else round(self.peak_share, 4),
            "final": self.final,
            "final_method": self.final_method,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "compactions": dict(self.compactions),
            "compaction_points": [dict(p) for p in self.compaction_points],
            "restored_files": self.restored_files,
            "thresholds": dict(self.thresholds),
            "first_crossings": dict(self.first_crossings),
            "spend_calls": dict(self.spend_calls),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionSummary:
        fields = {k: v for k, v in data.items() if k != "peak_share"}
        fields["compaction_points"] = tuple(fields.get("compaction_points") or ())
        return cls(**fields)


def summarise(
    report: AttributionReport,
    *,
    path: Path,
    size: int,
    final: int | None = None,
    final_method: str = "usage",
) -> SessionSummary:
    """The summary of one attributed session; `final` is the gauge's count at its end
    (without it, the last call's prompt plus output). Spend comes from `report.spend` when
    the attribution tallied it, else from the main chain's calls."""
    ladder = report.thresholds
    thresholds: dict[str, int | None] = {
        "warning": ladder.warning,
        "autocompact": ladder.autocompact
        if ladder.threshold_compaction and ladder.auto_compact_enabled
        else None,
        "blocking": ladder.blocking if ladder.blocking_enabled else None,
    }
    crossings: dict[str, int | None] = dict.fromkeys(thresholds)
    peak, peak_call = 0, None
    tokens_in = tokens_out = 0
    for call in report.calls:
        recorded = call.recorded or 0
        total = recorded + call.output
        tokens_in += recorded
        tokens_out += call.output
        if total > peak:
            peak, peak_call = total, call.number
        for name, limit in thresholds.items():
            if limit is not None and crossings[name] is None and recorded >= limit:
                crossings[name] = call.number
    counts: dict[str, int] = {"auto": 0, "manual": 0, "reactive": 0}
    for mark in report.compactions:
        counts[mark.trigger] = counts.get(mark.trigger, 0) + 1
    last = report.calls[-1] if report.calls else None
    fallback = (last.recorded or 0) + last.output if last else report.current_total
    spend = report.spend
    stamps = [c.timestamp for c in report.calls if c.timestamp]
    return SessionSummary(
        session_id=path.stem,
        path=str(path),
        size_bytes=size,
        first_timestamp=stamps[0] if stamps else None,
        last_timestamp=stamps[-1] if stamps else None,
        title=report.first_prompt,
        model=report.model,
        claude_version=report.claude.version if report.claude else "",
        calls=len(report.calls),
        peak=peak,
        peak_call=peak_call,
        final=final if final is not None else fallback,
        final_method=final_method,
        tokens_in=spend.tokens_in if spend else tokens_in,
        tokens_out=spend.tokens_out if spend else tokens_out,
        spend_calls={k: v[0] for k, v in spend.by_source.items() if v[0]}
        if spend
        else {"main": len(report.calls)},
        compactions=counts,
        compaction_points=tuple(
            {
                "after_call": m.after_call,
                "trigger": m.trigger,
                "pre_tokens": m.pre_tokens,
                "restored_files": m.restored_files,
                "timestamp": m.timestamp,
            }
            for m in report.compactions
        ),
        restored_files=sum(m.restored_files for m in report.compactions),
        thresholds=thresholds,
        first_crossings=crossings,
    )


@dataclass(frozen=True)
class SessionHistory:
    """Every session of one project, oldest first."""

    transcripts_dir: str
    sessions: tuple[SessionSummary, ...]
    read: int
    """Sessions summarised now (the rest came from the cache)."""
    cached: int
    problems: tuple[str, ...] = field(default_factory=tuple)

    def totals(self) -> dict[str, int]:
        out = {"sessions": len(self.sessions), "calls": 0, "tokens_in": 0, "tokens_out": 0}
        out.update({"auto": 0, "manual": 0, "reactive": 0, "restored_files": 0})
        for s in self.sessions:
            out["calls"] += s.calls
            out["tokens_in"] += s.tokens_in
            out["tokens_out"] += s.tokens_out
            out["restored_files"] += s.restored_files
            for trigger, count in s.compactions.items():
                out[trigger] = out.get(trigger, 0) + count
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "transcripts_dir": self.transcripts_dir,
            "totals": self.totals(),
            "read": self.read,
            "cached": self.cached,
            "problems": list(self.problems),
            "sessions": [s.to_json() for s in self.sessions],
        }


def _fingerprint(service: ContextService, path: Path) -> str:
    claude = service.claude_for(path)
    env = sorted((k, v) for k, v in service.env.items() if k.startswith(_ENV_PREFIXES))
    text = json.dumps([CACHE_FORMAT, claude.version, env], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cache_file(service: ContextService) -> Path:
    from workbench.paths import workbench_home

    name = hashlib.sha256(service.transcripts_dir.encode("utf-8", "surrogatepass")).hexdigest()
    return workbench_home() / "cache" / "sessions" / f"{name[:24]}.json"


def _load_cache(path: Path) -> dict[str, Any]:
    try:
        data = userfiles.load_json(
            userfiles.read_bytes(path, userfiles.INDEX_LIMIT, "the session cache"), str(path)
        )
    except (OSError, ValueError, userfiles.JsonInputError):
        return {}
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT:
        return {}
    entries = data.get("sessions")
    return entries if isinstance(entries, dict) else {}


def build_history(service: ContextService, *, cache: bool = True) -> SessionHistory:
    """Summaries of every session of the project, from the cache where nothing changed."""
    from workbench.engine.atomic import atomic_write_text
    from workbench.engine.context.session_list import session_files
    from workbench.engine.context.spend import files_key, subagent_files
    from workbench.engine.errors import WorkbenchError

    store = cache_file(service) if cache else None
    entries = _load_cache(store) if store is not None else {}
    fresh: dict[str, Any] = {}
    sessions: list[SessionSummary] = []
    problems: list[str] = []
    read = cached = 0
    for path in session_files(service.transcripts_dir):
        try:
            stat = path.stat()
        except OSError:
            continue
        # The subagents' files count in the spend and grow on their own.
        subagents = files_key(subagent_files(path))
        key = [stat.st_size, stat.st_mtime_ns, subagents, _fingerprint(service, path)]
        entry = entries.get(str(path))
        if isinstance(entry, dict) and entry.get("key") == key:
            try:
                summary = SessionSummary.from_json(entry["summary"])
                cached += 1
            except (KeyError, TypeError):
                summary = None
        else:
            summary = None
        if summary is None:
            try:
                report = service.attribution(path, previews=False, keep_items=False, spend=True)
                # The gauge's own count (read from the file's end), so the two never differ.
                gauge = service.gauge(str(path), compactions=False)
            except (WorkbenchError, OSError) as exc:
                problems.append(f"{path.name}: {exc}")
                continue
            summary = summarise(
                report,
                path=path,
                size=stat.st_size,
                final=gauge.used,
                final_method=gauge.used_method,
            )
            read += 1
        fresh[str(path)] = {"key": key, "summary": summary.to_json()}
        sessions.append(summary)
    sessions.sort(key=lambda s: (s.first_timestamp or s.last_timestamp or "", s.session_id))
    if store is not None and (read or len(fresh) != len(entries)):
        try:
            store.parent.mkdir(parents=True, exist_ok=True)
            payload = {"format": CACHE_FORMAT, "sessions": fresh}
            atomic_write_text(store, json.dumps(payload, separators=(",", ":")))
        except OSError as exc:
            problems.append(f"the summary cache could not be written: {exc.strerror or exc}")
    return SessionHistory(
        transcripts_dir=service.transcripts_dir,
        sessions=tuple(sessions),
        read=read,
        cached=cached,
        problems=tuple(problems),
    )
