"""What a session transcript tells recall: tools just used, memories already surfaced.

`collectRecentSuccessfulTools` and `collectSurfacedMemories` (spec 02 §3.4) over transcript
entries (raw dicts, or the context reader's entries with `.raw`), plus the files the agent
has read, which recall also never offers again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.engine.context.tokens import content_blocks, message_blocks
from workbench.engine.jsutil import js_len


def _raw(entry: Any) -> Mapping[str, Any]:
    return entry if isinstance(entry, Mapping) else getattr(entry, "raw", {})


def is_human_turn(entry: Any) -> bool:
    """A prompt the user typed: a non-meta user message that is not only tool results."""
    raw = _raw(entry)
    if raw.get("type") != "user" or raw.get("isMeta") or raw.get("isCompactSummary"):
        return False
    blocks = message_blocks(raw)
    return bool(blocks) and not any(b.get("type") == "tool_result" for b in blocks)


def _is_prompt_companion(entry: Any) -> bool:
    raw = _raw(entry)
    kind = raw.get("type")
    return kind in ("attachment", "system") or (kind == "user" and raw.get("isMeta") is True)


def last_human_text(entries: Sequence[Any]) -> str | None:
    """The text of the newest human prompt (what recall would be asked about)."""
    for entry in reversed(entries):
        if is_human_turn(entry):
            texts = [b.get("text") for b in message_blocks(_raw(entry)) if b.get("type") == "text"]
            return "\n".join(t for t in texts if isinstance(t, str))
    return None


def collect_recent_successful_tools(entries: Sequence[Any]) -> list[str]:
    """Tools that succeeded since the previous human turn; any failure excludes the name.

    The newest human prompt (the one being answered) is skipped; the scan stops at the
    human turn before it. A tool_use still waiting for its result does not count. Names
    come out in the order they were first used.
    """
    items = list(entries)
    end = len(items)
    probe = end
    while probe and _is_prompt_companion(items[probe - 1]):
        probe -= 1  # attachments and meta lines that came with the new prompt
    if probe and is_human_turn(items[probe - 1]):
        end = probe - 1
    start = end
    while start and not is_human_turn(items[start - 1]):
        start -= 1
    uses: dict[str, str] = {}
    outcome: dict[str, bool] = {}
    for entry in items[start:end]:
        raw = _raw(entry)
        for block in message_blocks(raw):
            kind = block.get("type")
            if kind == "tool_use" and raw.get("type") == "assistant":
                if isinstance(block.get("id"), str) and isinstance(block.get("name"), str):
                    uses[block["id"]] = block["name"]
            elif kind == "tool_result" and raw.get("type") == "user":
                outcome[str(block.get("tool_use_id"))] = block.get("is_error") is True
    succeeded: list[str] = []
    failed: set[str] = set()
    for use_id, name in uses.items():
        if use_id not in outcome:
            continue
        if outcome[use_id]:
            failed.add(name)
        elif name not in succeeded:
            succeeded.append(name)
    return [name for name in succeeded if name not in failed]


@dataclass(frozen=True)
class SurfacedSoFar:
    """Memories already surfaced in the live part of a session."""

    paths: tuple[str, ...]
    total_bytes: int
    """Sum of the JS length of their content: what the 60 KB budget counts."""


def collect_surfaced_memories(entries: Iterable[Any]) -> SurfacedSoFar:
    """`collectSurfacedMemories`: paths and size of earlier `relevant_memories` attachments."""
    paths: list[str] = []
    total = 0
    for entry in entries:
        raw = _raw(entry)
        attachment = raw.get("attachment")
        if raw.get("type") != "attachment" or not isinstance(attachment, Mapping):
            continue
        if attachment.get("type") != "relevant_memories":
            continue
        for memory in attachment.get("memories") or []:
            if not isinstance(memory, Mapping):
                continue
            path = memory.get("path")
            if isinstance(path, str) and path not in paths:
                paths.append(path)
            content = memory.get("content")
            if isinstance(content, str):
                total += js_len(content)
    return SurfacedSoFar(tuple(paths), total)


def collect_read_files(entries: Iterable[Any]) -> tuple[str, ...]:
    """Absolute paths the agent read with the Read tool (Claude Code's `readFileState`)."""
    seen: list[str] = []
    for entry in entries:
        raw = _raw(entry)
        if raw.get("type") != "assistant":
            continue
        for block in content_blocks(raw, "tool_use"):
            if block.get("name") == "Read":
                tool_input = block.get("input")
                path = tool_input.get("file_path") if isinstance(tool_input, Mapping) else None
                if isinstance(path, str) and os.path.isabs(path) and path not in seen:
                    seen.append(os.path.normpath(path))
    return tuple(seen)


@dataclass(frozen=True)
class SessionSignals:
    """Everything recall takes from one transcript."""

    transcript: str
    query: str | None
    recent_tools: tuple[str, ...]
    surfaced: SurfacedSoFar
    read_files: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "transcript": self.transcript,
            "query": self.query,
            "recent_tools": list(self.recent_tools),
            "surfaced": list(self.surfaced.paths),
            "surfaced_bytes": self.surfaced.total_bytes,
            "read_files": list(self.read_files),
        }


def session_signals(path: str) -> SessionSignals:
    """Read a transcript and derive recall's inputs from its live (post-compaction) part."""
    from workbench.engine.context.transcript import Transcript

    transcript = Transcript.load(path)
    live = transcript.current_messages()
    return SessionSignals(
        transcript=path,
        query=last_human_text(live),
        recent_tools=tuple(collect_recent_successful_tools(live)),
        surfaced=collect_surfaced_memories(live),
        read_files=collect_read_files(live),
    )
