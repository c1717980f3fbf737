"""Following a transcript as Claude Code writes it: only the appended bytes are read.

The follower starts from the gauge's tail read, feeds the incremental meter with each new
complete line, and keeps a partial last line until its newline arrives. A truncated or
replaced file, or a new boundary with a preserved segment, triggers a fresh tail read.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.context.gauge import (
    GaugeReport,
    LastUsage,
    gauge_from_messages,
    last_usage_of,
    read_gauge_tail,
    tail_problems,
)
from workbench.engine.context.jsonl import parse_line
from workbench.engine.context.meter import ContextMeter
from workbench.engine.context.thresholds import Thresholds
from workbench.engine.context.tokens import context_tokens_from_usage, token_usage
from workbench.engine.context.transcript import (
    MESSAGE_TYPES,
    CompactionEvent,
    Entry,
    compaction_event,
)
from workbench.engine.userfiles import TRANSCRIPT_LINE_LIMIT, open_stream

if TYPE_CHECKING:
    from workbench.engine.profiles.detect import ResolvedVersion

WATCH_DEBOUNCE_MS = 50
WATCH_STEP_MS = 10


@dataclass(frozen=True)
class FollowUpdate:
    """What one poll found."""

    lines: int
    """Complete new lines handled."""
    changed: bool
    """The gauge reading differs from the previous one."""
    reset: bool
    """The file shrank, was replaced, or needed a full re-read."""
    report: GaugeReport


class TranscriptFollower:
    """Keeps a gauge reading current for a growing transcript."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        thresholds_for: Callable[[str | None], Thresholds],
        *,
        model_override: str | None = None,
        default_model: str = "claude-sonnet-4-6",
        session_id: str | None = None,
        claude: ResolvedVersion | None = None,
    ) -> None:
        self.path = str(path)
        self._claude = claude
        self._thresholds_for = thresholds_for
        self._model_override = model_override
        self._default_model = default_model
        self.session_id = session_id or Path(path).stem
        self._meter = ContextMeter()
        self._offset = 0
        self._inode: tuple[int, int] | None = None
        self._pending = b""
        self._skipping = False
        self._model: str | None = None
        self._compactions: list[CompactionEvent] = []
        self._last_usage: LastUsage | None = None
        self._report: GaugeReport | None = None
        self._problems: tuple[str, ...] = ()
        self._size = 0

    @property
    def report(self) -> GaugeReport:
        """The current reading (reads the file on first use)."""
        if self._report is None:
            self.restart()
        assert self._report is not None
        return self._report

    @property
    def offset(self) -> int:
        """Bytes consumed so far (the start of any incomplete last line)."""
        return self._offset

    def restart(self) -> GaugeReport:
        """Read the tail afresh and rebuild the meter from it."""
        tail = read_gauge_tail(self.path)
        self._meter = ContextMeter(sidechain=tail.sidechain)
        for entry in tail.messages:
            self._meter.add(entry.raw)
        self._offset = tail.end_offset
        self._pending = b""
        self._skipping = False
        self._model = tail.model
        self._compactions = list(tail.compactions)
        self._last_usage = last_usage_of(tail.messages)
        self._problems = tail_problems(tail)
        self._size = tail.size_bytes
        try:
            stat = os.stat(self.path)
            self._inode = (stat.st_dev, stat.st_ino)
        except OSError:
            self._inode = None
        self._report = self._build(tail.bytes_read, tail.mode)
        return self._report

    def poll(self) -> FollowUpdate:
        """Handle whatever was appended since the last call."""
        if self._report is None:
            report = self.restart()
            return FollowUpdate(0, True, True, report)
        try:
            stat = os.stat(self.path)
        except OSError:
            return FollowUpdate(0, False, False, self._report)
        if (stat.st_dev, stat.st_ino) != self._inode or stat.st_size < self._offset:
            before = self._report
            report = self.restart()
            return FollowUpdate(0, report != before, True, report)
        if stat.st_size == self._offset + len(self._pending):
            return FollowUpdate(0, False, False, self._report)
        with open_stream(self.path, known=stat) as handle:
            handle.seek(self._offset + len(self._pending))
            data = handle.read(stat.st_size - self._offset - len(self._pending))
        return self.feed(data, size=stat.st_size)

    def feed(self, data: bytes, *, size: int | None = None) -> FollowUpdate:
        """Handle appended bytes (`poll` reads them; tests and benchmarks may pass them)."""
        if self._report is None:
            self.restart()
        buffer = self._pending + data
        cut = buffer.rfind(b"\n")
        if cut == -1:
            if len(buffer) > TRANSCRIPT_LINE_LIMIT:
                # A runaway line: stop holding it; the rest of it is dropped when it ends.
                self._offset += len(buffer)
                self._pending = b""
                self._skipping = True
            else:
                self._pending = buffer
            return FollowUpdate(0, False, False, self.report)
        complete, self._pending = buffer[: cut + 1], buffer[cut + 1 :]
        self._offset += len(complete)
        if self._skipping:
            complete = complete[complete.find(b"\n") + 1 :]
            self._skipping = False
        self._size = size if size is not None else self._offset + len(self._pending)
        handled = 0
        for line in complete.split(b"\n"):
            if not line.strip():
                continue
            handled += 1
            raw = parse_line(line)
            if raw is None:
                continue
            if self._apply(raw):
                before = self._report
                report = self.restart()
                return FollowUpdate(handled, report != before, True, report)
        before = self._report
        self._report = self._build(len(data), "follow")
        return FollowUpdate(
            handled, _reading(self._report) != _reading(before), False, self._report
        )

    def _apply(self, raw: Mapping[str, Any]) -> bool:
        """Feed one entry; True when a full re-read is needed."""
        kind = raw.get("type")
        if kind not in MESSAGE_TYPES or (raw.get("isSidechain") is True) != self._meter.sidechain:
            return False
        if kind == "system" and raw.get("subtype") == "compact_boundary":
            meta = raw.get("compactMetadata")
            if isinstance(meta, Mapping) and isinstance(meta.get("preservedSegment"), Mapping):
                return True
            self._compactions.append(compaction_event(Entry(dict(raw))))
            self._last_usage = None
        if kind == "assistant":
            entry = Entry(dict(raw))
            if not entry.is_synthetic and entry.model:
                self._model = entry.model
            usage = token_usage(raw)
            if usage is not None:
                out = usage.get("output_tokens")
                context = context_tokens_from_usage(usage)
                out_tokens = out if isinstance(out, int) else 0
                self._last_usage = LastUsage(
                    entry.uuid,
                    entry.timestamp,
                    entry.message_id,
                    context,
                    out_tokens,
                    context + out_tokens,
                )
        self._meter.add(raw)
        return False

    def _build(self, bytes_read: int, mode: str) -> GaugeReport:
        model = self._model_override or self._model or self._default_model
        source = "flag" if self._model_override else ("transcript" if self._model else "default")
        report = gauge_from_messages(
            [],
            self._thresholds_for(model),
            transcript=self.path,
            session_id=self.session_id,
            model_source=source,
            compactions=tuple(self._compactions),
            used=self._meter.count,
            used_method=self._meter.method,
            size_bytes=self._size,
            bytes_read=bytes_read,
            read_mode=mode,
            problems=self._problems,
            claude=self._claude,
        )
        # gauge_from_messages looks for usage in the list it is given; ours is tracked here.
        return _with_last_usage(report, self._last_usage)

    # --- watching -------------------------------------------------------------------------

    def watch(self, *, stop: Callable[[], bool] | None = None) -> Iterator[GaugeReport]:
        """Yield the first reading, then one per change, as the file grows (blocking)."""
        import watchfiles  # deferred: only live views need the watcher

        yield self.report
        target = Path(self.path).resolve()
        for _changes in watchfiles.watch(
            target.parent,
            watch_filter=lambda _change, changed: Path(changed).resolve() == target,
            stop_event=_StopFlag(stop) if stop else None,
            # A live gauge wants each write promptly, not batched over watchfiles' 1.6 s.
            debounce=WATCH_DEBOUNCE_MS,
            step=WATCH_STEP_MS,
            rust_timeout=500,
            yield_on_timeout=stop is not None,
        ):
            if stop is not None and stop():
                return
            update = self.poll()
            if update.changed:
                yield update.report

    async def awatch(self) -> AsyncIterator[GaugeReport]:
        """The same as `watch`, for async callers (the TUI's workers)."""
        import watchfiles

        yield self.report
        target = Path(self.path).resolve()
        async for _changes in watchfiles.awatch(
            target.parent,
            watch_filter=lambda _change, changed: Path(changed).resolve() == target,
            debounce=WATCH_DEBOUNCE_MS,
            step=WATCH_STEP_MS,
        ):
            update = self.poll()
            if update.changed:
                yield update.report


class _StopFlag:
    """Adapts a callable to the `is_set()` interface watchfiles polls."""

    def __init__(self, predicate: Callable[[], bool]) -> None:
        self._predicate = predicate

    def is_set(self) -> bool:
        return self._predicate()


def _reading(report: GaugeReport | None) -> tuple[Any, ...] | None:
    if report is None:
        return None
    return (report.used, report.model, len(report.compactions), report.state)


def _with_last_usage(report: GaugeReport, usage: LastUsage | None) -> GaugeReport:
    from workbench.engine.records import replace

    return replace(report, last_usage=usage)
