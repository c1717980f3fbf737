"""What a session cost in API tokens: every call it made, its subagents' included.

The main context curve counts the main chain alone; spend counts every call the session paid
for (spec 04, appendix §7 and §8 rule 4): the main chain, inline sidechains (v2.0 wrote a
Task's turns into the main file with `isSidechain`), the `subagents/*.jsonl` files beside the
transcript (v2.1, the compaction's summarising call among them) and the `agent_progress` lines
that copy a subagent's responses into the parent. One response is often written several
times (a record per content block, a subagent file and its progress copy), so each is counted
once, by `(message.id, requestId)`, keeping the copy with the largest output (the early
copies hold a streaming placeholder). A sidechain copy of a main-chain response (a replay
of the parent's messages) is dropped.

The tally holds one small entry per response, never a message, and the subagent files are
streamed line by line like the transcript.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from workbench.engine.context.jsonl import parse_line, sniff_type
from workbench.engine.context.tokens import context_tokens_from_usage, is_synthetic_assistant
from workbench.engine.records import Record
from workbench.engine.userfiles import (
    TRANSCRIPT_LINE_LIMIT,
    line_pieces,
    open_stream,
    skip_rest_of_line,
)

SOURCES = ("main", "sidechain", "subagents", "agent_progress")
"""Where a response was first seen, in the order they are read."""
_AGENT_PROGRESS = b'"agent_progress"'


class Spend(Record):
    """Tokens a session's calls were billed for, each response once."""

    calls: int
    tokens_in: int
    """Prompt tokens (input + cache creation + cache read) over every call."""
    tokens_out: int
    by_source: dict[str, tuple[int, int, int]]
    """Source → (calls, tokens in, tokens out), by where each response was found (first
    seen, except that a subagent's file wins over its progress copy)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "by_source": {
                name: {"calls": c, "tokens_in": i, "tokens_out": o}
                for name, (c, i, o) in self.by_source.items()
            },
        }


class SpendTally:
    """The running tally of one session (see the module docstring)."""

    __slots__ = ("_calls", "_main_ids")

    def __init__(self) -> None:
        # (message.id, requestId) → [source, tokens in, tokens out]
        self._calls: dict[tuple[str, str | None], list[Any]] = {}
        self._main_ids: set[str] = set()

    def add(self, raw: Mapping[str, Any], source: str) -> None:
        """An assistant entry read from `source` (one of `SOURCES`)."""
        if raw.get("type") != "assistant" or is_synthetic_assistant(raw):
            return
        inner = raw.get("message")
        if not isinstance(inner, Mapping):
            return
        message_id, usage = inner.get("id"), inner.get("usage")
        if not isinstance(message_id, str) or not isinstance(usage, Mapping):
            return
        request = raw.get("requestId")
        key = (message_id, request if isinstance(request, str) else None)
        output = usage.get("output_tokens")
        output = output if type(output) is int else 0
        if source == "main":
            self._main_ids.add(message_id)
        held = self._calls.get(key)
        if held is None:
            self._calls[key] = [source, context_tokens_from_usage(usage), output]
            return
        if output > held[2]:
            held[2] = output
        if source == "subagents" and held[0] == "agent_progress":
            held[0] = source  # the subagent's own file is the record; progress is its copy

    def add_progress(self, raw: Mapping[str, Any]) -> None:
        """A `progress` line: an `agent_progress` one carries a subagent's message."""
        data = raw.get("data")
        if not isinstance(data, Mapping) or data.get("type") != "agent_progress":
            return
        message = data.get("message")
        if isinstance(message, Mapping):
            self.add(message, "agent_progress")

    def add_file(self, path: str | os.PathLike[str], source: str = "subagents") -> None:
        """Every assistant and `agent_progress` line of a file, streamed (bounded lines)."""
        try:
            handle = open_stream(path, buffering=1 << 20)
        except OSError:
            return  # a subagent file gone or unreadable costs nothing we can count
        limit = TRANSCRIPT_LINE_LIMIT
        with handle:
            pieces = line_pieces(handle, limit)
            for line in pieces:
                if len(line) > limit and line[-1] != 10:
                    skip_rest_of_line(pieces)
                    continue
                kind = sniff_type(line)
                if kind == b"progress" and _AGENT_PROGRESS not in line:
                    continue
                if kind is not None and kind not in (b"assistant", b"progress"):
                    continue
                raw = parse_line(line)
                if raw is None:
                    continue
                if raw.get("type") == "progress":
                    self.add_progress(raw)
                else:
                    self.add(raw, source)

    def finish(self) -> Spend:
        by_source = {name: [0, 0, 0] for name in SOURCES}
        for (message_id, _request), (source, tokens_in, tokens_out) in self._calls.items():
            if source != "main" and message_id in self._main_ids:
                continue  # a sidechain's replay of a parent response: the parent counts it
            row = by_source.setdefault(source, [0, 0, 0])
            row[0] += 1
            row[1] += tokens_in
            row[2] += tokens_out
        return Spend(
            calls=sum(r[0] for r in by_source.values()),
            tokens_in=sum(r[1] for r in by_source.values()),
            tokens_out=sum(r[2] for r in by_source.values()),
            by_source={name: (r[0], r[1], r[2]) for name, r in by_source.items()},
        )


def subagent_files(transcript: str | os.PathLike[str]) -> list[Path]:
    """`<session>/subagents/[<subdir>/]agent-*.jsonl` beside a transcript, sorted."""
    folder = Path(transcript).with_suffix("") / "subagents"
    try:
        return sorted(p for p in folder.rglob("*.jsonl") if p.is_file())
    except OSError:
        return []


def files_key(paths: Iterable[Path]) -> list[list[Any]]:
    """(name, size, mtime) of each file: a cached spend is stale when any of them changed."""
    key: list[list[Any]] = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        key.append([path.name, stat.st_size, stat.st_mtime_ns])
    return key
