"""Transcripts in the shape Claude Code 2.1.332 writes (spec 08), for regular tests.

Around every API call that release writes bookkeeping the model never reads: a
`prompt_snapshot` attachment holding the prompt again, `api-request` / `api-request-blob`
records, an `api-request-shape` with the whole system prompt and tool list; it adds
`environment`, `model`, `session_context`, `date` and `instructions` attachments, a
`total_tokens_reminder` attachment after each tool result, new keys on user and assistant
records, and partial compactions that keep the latest messages (preservedSegment and
preservedMessages). The usage numbers are what the API would measure: bookkeeping never
counts toward them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.devtools.synth import SessionBuilder

SNAPSHOT_TOKENS = 27_560
"""Rough size of each prompt snapshot (counting it gave 194,560 where 167,000 was the top)."""


class CurrentReleaseSession(SessionBuilder):
    """A 2.1.332 session: `SessionBuilder` plus that release's records."""

    def __init__(self, *, model: str = "claude-opus-5-5", version: str = "2.1.332", **kw: Any):
        super().__init__(model=model, version=version, **kw)

    # --- records ------------------------------------------------------------------------------

    def attachment(self, kind: str, *, counts: bool = True, **payload: Any) -> dict[str, Any]:
        """An attachment record (part of the next prompt unless `counts` is off)."""
        return self._append(
            {
                **self._chain(),
                **self._stamps(),
                "type": "attachment",
                "attachment": {"type": kind, **payload},
                "uuid": self.new_uuid(),
                "timestamp": self.tick(0.1),
            },
            counts=counts,
        )

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A top-level bookkeeping record (no uuid chain)."""
        entry = {"type": kind, **fields, "sessionId": self.session_id, "timestamp": self.tick(0.1)}
        self.entries.append(entry)
        return entry

    def opening(self) -> None:
        """What the release writes before the first prompt."""
        self.attachment("environment", platform="linux", shell="bash", cwd=self.cwd)
        self.attachment("model", model=self.model)
        self.attachment("session_context", entrypoint="cli", interactive=False)
        self.attachment("date", date="2026-07-01")
        self.attachment("instructions", files=["CLAUDE.md"])
        self.record("mode", mode="default")
        self.record(
            "api-request-shape",
            system="You are a coding agent. " * 3_000,
            tools=[{"name": f"Tool{i}", "input_schema": {"type": "object"}} for i in range(40)],
        )

    def before_call(self) -> None:
        """Bookkeeping written before each API call: never part of what the model reads."""
        self.attachment(
            "prompt_snapshot", counts=False, prompt="context " * (SNAPSHOT_TOKENS * 4 // 8)
        )
        ref = self._token("reqref_", 12)
        self.record("api-request", requestRef=ref, model=self.model, messages=120)
        self.record("api-request-blob", requestRef=ref, data="b" * 20_000)

    def assistant(self, blocks: Sequence[Mapping[str, Any]], **kw: Any) -> list[dict[str, Any]]:
        self.before_call()
        records = super().assistant(blocks, **kw)
        for index, record in enumerate(records):
            record.update(
                apiBlockIndex=index,
                effort="medium",
                requestRef=self._token("reqref_", 12),
                requestedModel=self.model,
                madeBy="main",
            )
            record["message"]["usage"]["output_tokens_details"] = {"thinking_tokens": 0}
            record["message"]["stop_details"] = None
        self.record("cost-state", usd=0.01)
        self.record("tools-used", tools=[b.get("name") for b in blocks if b.get("name")])
        return records

    def tool_result(self, tool_use_id: str, content: Any, **kw: Any) -> dict[str, Any]:
        entry = super().tool_result(tool_use_id, content, **kw)
        entry.update(promptSource="tool", rowSource="main", turnOrigin="assistant")
        # The release reports the running total to the model after each tool result.
        self.attachment("total_tokens_reminder", totalTokens=self.prompt_tokens, limit=1_000_000)
        return entry

    # --- compaction ---------------------------------------------------------------------------

    @property
    def count(self) -> int:
        """What the next call's prompt will hold (the API's measure, used for the records)."""
        return self.prompt_tokens + self.last_output + self.pending_tokens

    def partial_compact(
        self, *, keep: int = 2, pre_tokens: int | None = None, trigger: str = "auto"
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A partial compaction: the last `keep` messages stay verbatim after the summary."""
        chain = [e for e in self.entries if e.get("type") in ("user", "assistant")]
        kept = chain[-keep:]
        pre = pre_tokens if pre_tokens is not None else self.count
        boundary, summary = self.compact(
            "Tools used before this point: Read, Bash.\n\nSummary: the export work so far.",
            trigger=trigger,
            pre_tokens=pre,
            post_tokens=24_000,
            # This builder's large start count stands for the conversation before it, which
            # the compaction drops: the next prompt starts small again.
            prompt_after=14_000,
        )
        meta = boundary["compactMetadata"]
        meta.update(
            cumulativeDroppedTokens=pre - 24_000,
            durationMs=41_000,
            preservedSegment={
                "headUuid": kept[0]["uuid"],
                "anchorUuid": summary["uuid"],
                "tailUuid": kept[-1]["uuid"],
            },
            preservedMessages={
                "anchorUuid": summary["uuid"],
                "uuids": [e["uuid"] for e in kept],
                "allUuids": [e["uuid"] for e in kept],
            },
            runningTurnPrompt=None,
        )
        return boundary, summary


def long_session(
    *,
    model: str = "claude-opus-5-5",
    threshold: int = 967_000,
    start: int = 930_000,
    seed: int = 3,
    pre_offset: int = -6,
) -> tuple[CurrentReleaseSession, int]:
    """A session that auto-compacts once when its count reaches exactly `threshold`, as
    2.1.332 records it (preTokens `pre_offset` from that count), then carries on. Returns
    the builder and the count that fired."""
    _, fired = _long_session(model, threshold, start, seed, pre_offset)
    # Shift the system prompt so the crossing lands on the threshold itself.
    return _long_session(model, threshold, start - (fired - threshold), seed, pre_offset)


def _long_session(
    model: str, threshold: int, start: int, seed: int, pre_offset: int
) -> tuple[CurrentReleaseSession, int]:
    b = CurrentReleaseSession(model=model, seed=seed, system_prompt_tokens=start)
    b.opening()
    b.prompt("Speed up the nightly export")
    fired = 0
    i = 0
    while not fired:
        b.tool_call("Read", {"file_path": f"/repo/export/part_{i}.py"}, "row\n" * 12_000)
        if b.count >= threshold:
            fired = b.count
            b.partial_compact(keep=2, pre_tokens=fired + pre_offset)
        i += 1
    b.prompt("carry on")
    for j in range(3):
        b.tool_call("Bash", {"command": f"pytest -k part_{j}"}, "1 passed")
    b.reply("Done.")
    return b, fired
