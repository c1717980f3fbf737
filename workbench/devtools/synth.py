"""Build realistic Claude Code transcripts: for tests, benchmarks and the sample projects.

The entries follow the shapes of real 2.1.x transcripts (spec 04 appendix): chain fields,
session stamps, one assistant record per content block sharing `message.id` and usage with
placeholder output on early records, tool results with `toolUseResult`, hook progress lines,
file-history snapshots, compact boundaries with their summary, and usage numbers that grow
the way a real session's prompt does. Everything is deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
import string
import uuid as uuidlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from workbench.engine.context.tokens import rough_tokens_for_message

_ALPHABET = string.ascii_letters + string.digits


class SessionBuilder:
    """Append entries to one session the way Claude Code writes them."""

    def __init__(
        self,
        *,
        session_id: str | None = None,
        cwd: str = "/home/dev/projects/checkout-service",
        model: str = "claude-sonnet-4-6",
        version: str = "2.1.39",
        git_branch: str = "main",
        slug: str | None = "quiet-amber-harbor",
        start: datetime | None = None,
        seed: int = 0,
        system_prompt_tokens: int = 14_000,
    ) -> None:
        self.rng = random.Random(seed)
        self.session_id = session_id or self.new_uuid()
        self.cwd = cwd
        self.model = model
        self.version = version
        self.git_branch = git_branch
        self.slug = slug
        self.clock = start or datetime(2026, 2, 10, 9, 0, 0, tzinfo=UTC)
        self.entries: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.system_prompt_tokens = system_prompt_tokens
        # What the next API call's prompt holds: system prompt and tools, then the messages.
        self.prompt_tokens = system_prompt_tokens
        self.pending_tokens = 0
        self.last_output = 0
        self.sidechain = False

    # --- ids and time ---------------------------------------------------------------------

    def new_uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def _token(self, prefix: str, length: int = 24) -> str:
        return prefix + "".join(self.rng.choice(_ALPHABET) for _ in range(length))

    def tick(self, seconds: float = 2.0) -> str:
        """Advance the clock and return it as `toISOString()` text."""
        self.clock += timedelta(seconds=seconds)
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.clock.microsecond // 1000:03d}Z"

    def _stamps(self) -> dict[str, Any]:
        stamps: dict[str, Any] = {
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": self.git_branch,
        }
        if self.slug:
            stamps["slug"] = self.slug
        return stamps

    def _chain(self, parent: str | None = None) -> dict[str, Any]:
        return {
            "parentUuid": self.parent if parent is None else parent,
            "isSidechain": self.sidechain,
        }

    def _append(self, entry: dict[str, Any], *, counts: bool = True) -> dict[str, Any]:
        self.entries.append(entry)
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            self.parent = uuid
        if counts and entry.get("type") in ("user", "attachment"):
            self.pending_tokens += rough_tokens_for_message(entry)
        return entry

    # --- entries --------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """A `file-history-snapshot` (written before each human turn)."""
        message_id = self.new_uuid()
        return self._append(
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "snapshot": {
                    "messageId": message_id,
                    "trackedFileBackups": {},
                    "timestamp": self.tick(0.2),
                },
                "isSnapshotUpdate": False,
            }
        )

    def user(self, content: str | list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """A user message: a typed prompt (string) or blocks."""
        entry = {
            **self._chain(),
            **self._stamps(),
            "type": "user",
            "message": {"role": "user", "content": content},
            "uuid": self.new_uuid(),
            "timestamp": self.tick(5.0),
            **extra,
        }
        if not extra.get("isMeta") and isinstance(content, str):
            entry.setdefault("permissionMode", "default")
        return self._append(entry)

    def prompt(self, text: str) -> dict[str, Any]:
        """A human turn: the snapshot Claude Code writes first, then the prompt."""
        self.snapshot()
        return self.user(text)

    def assistant(
        self,
        blocks: Sequence[Mapping[str, Any]],
        *,
        output_tokens: int | None = None,
        placeholder_output: bool = True,
        model: str | None = None,
        usage: Mapping[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        """One API response written as one record per content block, sharing id and usage.

        Usage grows like a real session: the prompt is the previous prompt, the previous
        output and everything appended since, mostly served from the cache.
        """
        message_id = self._token("msg_01", 22)
        request_id = self._token("req_011C", 20)
        if usage is None:
            prompt = self.prompt_tokens + self.last_output + self.pending_tokens
            created = self.last_output + self.pending_tokens
            body_tokens = sum(
                rough_tokens_for_message({"type": "assistant", "message": {"content": [dict(b)]}})
                for b in blocks
            )
            final_output = output_tokens if output_tokens is not None else max(1, body_tokens)
            usage = {
                "input_tokens": 3 if created else 1,
                "cache_creation_input_tokens": max(0, created - 3),
                "cache_read_input_tokens": max(0, prompt - created),
                "cache_creation": {
                    "ephemeral_5m_input_tokens": max(0, created - 3),
                    "ephemeral_1h_input_tokens": 0,
                },
                "output_tokens": final_output,
                "service_tier": "standard",
            }
            self.prompt_tokens = prompt
            self.last_output = final_output
            self.pending_tokens = 0
        records: list[dict[str, Any]] = []
        for position, block in enumerate(blocks):
            record_usage = dict(usage)
            last = position == len(blocks) - 1
            if placeholder_output and not last:
                record_usage["output_tokens"] = 1  # streaming placeholder on early records
            entry = {
                **self._chain(),
                **self._stamps(),
                "message": {
                    "model": model or self.model,
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "content": [dict(block)],
                    "stop_reason": ("tool_use" if block.get("type") == "tool_use" else None)
                    if last
                    else None,
                    "stop_sequence": None,
                    "usage": record_usage,
                },
                "requestId": request_id,
                "type": "assistant",
                "uuid": self.new_uuid(),
                "timestamp": self.tick(1.5),
            }
            records.append(self._append(entry, counts=False))
        return records

    def synthetic(self, text: str = "No response requested.") -> dict[str, Any]:
        """A harness-made assistant message (no real usage)."""
        entry = {
            **self._chain(),
            **self._stamps(),
            "message": {
                "id": self.new_uuid(),
                "model": "<synthetic>",
                "role": "assistant",
                "type": "message",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "stop_sequence",
                "stop_sequence": "",
                "usage": {
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                },
            },
            "type": "assistant",
            "uuid": self.new_uuid(),
            "timestamp": self.tick(0.5),
            "isApiErrorMessage": text != "No response requested.",
        }
        return self._append(entry)

    def progress(self, kind: str = "hook_progress", tool_use_id: str | None = None) -> None:
        """A legacy progress line (chained, never part of the context)."""
        data: dict[str, Any] = {"type": kind}
        if kind == "hook_progress":
            data.update(
                {
                    "hookEvent": "PostToolUse",
                    "hookName": "PostToolUse:Edit",
                    "command": "./scripts/check.sh",
                }
            )
        self._append(
            {
                **self._chain(),
                **self._stamps(),
                "type": "progress",
                "data": data,
                "toolUseID": tool_use_id or self._token("toolu_01", 22),
                "parentToolUseID": tool_use_id or self._token("toolu_01", 22),
                "uuid": self.new_uuid(),
                "timestamp": self.tick(0.1),
            }
        )

    def tool_result(
        self,
        tool_use_id: str,
        content: str | list[dict[str, Any]],
        *,
        is_error: bool = False,
        tool_use_result: Any = None,
        parent: str | None = None,
    ) -> dict[str, Any]:
        """The user message carrying a tool's result."""
        block: dict[str, Any] = {"tool_use_id": tool_use_id, "type": "tool_result"}
        block["content"] = content
        if is_error:
            block["is_error"] = True
        extra: dict[str, Any] = {}
        if tool_use_result is not None:
            extra["toolUseResult"] = tool_use_result
        if parent:
            # Tool results hang off the assistant record that asked for them.
            extra["sourceToolAssistantUUID"] = parent
            extra["parentUuid"] = parent
        return self.user([block], **extra)

    def tool_call(
        self,
        name: str,
        tool_input: Mapping[str, Any],
        result: str | list[dict[str, Any]],
        *,
        text: str | None = None,
        thinking: str | None = None,
        hooks: int = 2,
        is_error: bool = False,
        tool_use_result: Any = None,
    ) -> str:
        """A response that calls one tool, the hook progress lines, then the result.

        Returns the tool_use id.
        """
        tool_id = self._token("toolu_01", 22)
        blocks: list[dict[str, Any]] = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking, "signature": "sig"})
        if text:
            blocks.append({"type": "text", "text": text})
        blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": dict(tool_input)})
        records = self.assistant(blocks)
        for _ in range(hooks):
            self.progress("hook_progress", tool_id)
        self.tool_result(
            tool_id,
            result,
            is_error=is_error,
            tool_use_result=tool_use_result,
            parent=records[-1]["uuid"],
        )
        return tool_id

    def reply(self, text: str, *, thinking: str | None = None) -> list[dict[str, Any]]:
        """A response that ends the turn with text."""
        blocks: list[dict[str, Any]] = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking, "signature": "sig"})
        blocks.append({"type": "text", "text": text})
        records = self.assistant(blocks)
        records[-1]["message"]["stop_reason"] = "end_turn"
        return records

    def system(self, subtype: str, **fields: Any) -> dict[str, Any]:
        """A system entry (turn_duration, stop_hook_summary, …)."""
        return self._append(
            {
                **self._chain(),
                **self._stamps(),
                "type": "system",
                "subtype": subtype,
                **fields,
                "uuid": self.new_uuid(),
                "timestamp": self.tick(0.3),
                "isMeta": False,
            }
        )

    def compact(
        self,
        summary: str,
        *,
        trigger: str = "auto",
        pre_tokens: int | None = None,
        preserved_segment: Mapping[str, str] | None = None,
        post_tokens: int | None = None,
        prompt_after: int | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A compact boundary (a fresh root) and the summary message that follows it.

        The next call's prompt is then `prompt_after` (default: the system prompt, which
        compaction never shrinks) plus the summary."""
        last_uuid = self.parent
        meta: dict[str, Any] = {
            "trigger": trigger,
            "preTokens": pre_tokens
            if pre_tokens is not None
            else self.prompt_tokens + self.last_output + self.pending_tokens,
        }
        if post_tokens is not None:
            meta["postTokens"] = post_tokens
        if preserved_segment is not None:
            meta["preservedSegment"] = dict(preserved_segment)
        boundary = self._append(
            {
                "parentUuid": None,
                "logicalParentUuid": last_uuid,
                "isSidechain": False,
                **self._stamps(),
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "timestamp": self.tick(40.0),
                "uuid": self.new_uuid(),
                "level": "info",
                "compactMetadata": meta,
            },
            counts=False,
        )
        summary_entry = self.user(summary, isCompactSummary=True, isVisibleInTranscriptOnly=True)
        # The messages sent before the boundary are gone from the prompt; what was not sent
        # yet (the summary, a kept tail's newest result) goes with the next call.
        self.prompt_tokens = self.system_prompt_tokens if prompt_after is None else prompt_after
        self.last_output = 0
        return boundary, summary_entry

    def metadata(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A non-message entry (`custom-title`, `summary`, `last-prompt`, …)."""
        entry = {"type": kind, **fields}
        if kind != "summary":
            entry.setdefault("sessionId", self.session_id)
        self.entries.append(entry)
        return entry

    # --- output ---------------------------------------------------------------------------

    def lines(self) -> Iterable[str]:
        for entry in self.entries:
            yield json.dumps(entry, separators=(",", ":"), ensure_ascii=False)

    def to_bytes(self) -> bytes:
        return ("\n".join(self.lines()) + "\n").encode("utf-8")

    def write(self, path: str | Path) -> Path:
        """Write the session as JSONL (creating folders)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.to_bytes())
        return target
