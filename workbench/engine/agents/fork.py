"""Running a forked memory agent and turning what it wrote into proposals or real writes.

Extraction and dream both run a bounded tool-use conversation over the same local tools and
the same permission check, then report what they wrote as Claude Code's `memory_saved`
message ("● Saved 2 memories · 1 team memory"). Writes are staged in a `Workspace` during the
run; only afterwards are they queued for review, applied through history, or just shown.
"""

from __future__ import annotations

import os
import secrets
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from workbench.engine.agents.permissions import CanUseTool
from workbench.engine.agents.review_queue import (
    ReviewQueue,
    sha256_or_none,
    team_secret_refusal,
    unified_diff,
)
from workbench.engine.agents.tools import AgentTools, StagedFile, Workspace
from workbench.engine.errors import WorkbenchError
from workbench.engine.jsutil import now_iso
from workbench.engine.shown_text import shown
from workbench.engine.wording import plural

if TYPE_CHECKING:
    from workbench.engine.engine import Engine
    from workbench.engine.llm import ToolLoopResult

WriteMode = Literal["propose", "apply", "show"]
"""What happens to staged writes: queue them for review, write them, or only show diffs."""

ENTRYPOINT_NAME = "MEMORY.md"


def memory_saved_text(private_count: int, team_count: int, verb: str = "Saved") -> str:
    """`● Saved 2 memories · 1 team memory`: the parts Claude Code shows, ours to render."""
    parts = []
    if private_count > 0:
        parts.append(plural(private_count, "memory"))
    if team_count > 0:
        parts.append(plural(team_count, "team memory"))
    return f"● {verb} {' · '.join(parts)}" if parts else ""


def memory_saved_message(
    memory_paths: Sequence[str], team_count: int, verb: str | None = None
) -> dict[str, Any]:
    """A `system/memory_saved` entry as Claude Code writes it to the transcript."""
    message: dict[str, Any] = {
        "type": "system",
        "subtype": "memory_saved",
        "writtenPaths": list(memory_paths),
        "timestamp": now_iso(),
        "uuid": str(uuid.uuid4()),
        "isMeta": False,
    }
    if team_count:
        message["teamCount"] = team_count
    if verb:
        message["verb"] = verb
    return message


def written_paths_from_replies(loop: ToolLoopResult) -> list[str]:
    """Unique `file_path`s of every Write/Edit the agent asked for, in order (Claude Code's
    `writtenPaths`, attempted or not)."""
    seen: dict[str, None] = {}
    for reply in loop.replies:
        for call in reply.tool_calls:
            path = call.input.get("file_path")
            if call.name in ("Write", "Edit") and isinstance(path, str):
                seen.setdefault(path, None)
    return list(seen)


def successful_write_paths(loop: ToolLoopResult) -> list[str]:
    """Unique `file_path`s of Write/Edit calls that were allowed and succeeded."""
    seen: dict[str, None] = {}
    for exchange in loop.exchanges:
        path = exchange.call.input.get("file_path")
        if exchange.call.name not in ("Write", "Edit") or not isinstance(path, str):
            continue
        if not exchange.denied and not exchange.outcome.is_error:
            seen.setdefault(path, None)
    return list(seen)


def without_index(paths: Sequence[str]) -> list[str]:
    """`memoryPaths`: the written paths minus any `MEMORY.md`."""
    return [p for p in paths if os.path.basename(p) != ENTRYPOINT_NAME]


@dataclass(frozen=True)
class FileChange:
    """One file an agent changed, as shown to the user."""

    abs_path: str
    path: str
    scope: str
    kind: str
    diff: str
    outcome: str
    """`proposed`, `applied`, `shown`, or `refused` (with `message`)."""
    proposal_id: str | None = None
    history_id: str | None = None
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "abs_path": self.abs_path,
            "scope": self.scope,
            "kind": self.kind,
            "outcome": self.outcome,
            "proposal_id": self.proposal_id,
            "history_id": self.history_id,
            "message": self.message,
            "diff": self.diff,
        }


@dataclass(frozen=True)
class ForkRun:
    """A finished forked-agent run and what became of its writes."""

    loop: ToolLoopResult
    written_paths: tuple[str, ...]
    memory_paths: tuple[str, ...]
    saved_paths: tuple[str, ...]
    """Memory files (not MEMORY.md) whose writes succeeded."""
    team_count: int
    summary: str
    changes: tuple[FileChange, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        # Tool inputs and results are the model's words: a credential it tried to write
        # into team memory must not be echoed back, so every string passes the redactor.
        return {
            "turns": self.loop.turns,
            "stopped": self.loop.stopped,
            "final_text": redact_tree(self.loop.final_text),
            "written_paths": list(self.written_paths),
            "memory_paths": list(self.memory_paths),
            "saved_paths": list(self.saved_paths),
            "team_count": self.team_count,
            "summary": self.summary,
            "changes": [c.to_json() for c in self.changes],
            "tool_calls": [redact_tree(e.to_json()) for e in self.loop.exchanges],
            "denied_calls": [redact_tree(e.to_json()) for e in self.loop.exchanges if e.denied],
            "usage": self.loop.usage.to_json(),
        }


def redact_tree(value: Any) -> Any:
    """`value` with every string passed through the secret redactor."""
    from workbench.engine.team.secrets.redaction import redact_secrets

    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, list):
        return [redact_tree(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_tree(item) for key, item in value.items()}
    return value


def freshness_for(engine: Engine) -> Callable[[str], str]:
    """Claude Code prepends the memory freshness note when Read opens an old memory file."""
    from workbench.engine.recall.freshness import freshness_note, memory_age_days

    def note(path: str) -> str:
        if not engine.locations.is_auto_mem_path(path):
            return ""
        try:
            mtime_ms = os.stat(path).st_mtime_ns / 1_000_000
        except OSError:
            return ""  # a file staged in this run is new, so it is fresh
        return freshness_note(memory_age_days(mtime_ms))

    return note


def secret_check_for(engine: Engine) -> Callable[[str, str], str | None]:
    """The write-time team secret guard, as the tools call it before staging."""

    def check(path: str, text: str) -> str | None:
        return team_secret_refusal(engine, path, text)

    return check


async def run_fork(
    engine: Engine,
    request: Mapping[str, Any],
    *,
    workspace: Workspace,
    can_use_tool: CanUseTool,
    max_turns: int,
    verb: str = "Saved",
) -> ForkRun:
    """Run the agent loop with the local tools and a model client from the engine's
    environment; writes stay staged in `workspace`."""
    from workbench.engine.llm import ModelClient, run_tool_loop

    tools = AgentTools(
        workspace, secret_check=secret_check_for(engine), note_for_read=freshness_for(engine)
    )

    def permission(call: Any) -> str | None:
        decision = can_use_tool(call.name, call.input)
        return None if decision.allowed else decision.message

    async with ModelClient.from_env(engine.env) as client:
        loop = await run_tool_loop(
            client, request, tools.handlers(), max_turns=max_turns, can_use_tool=permission
        )
    written = written_paths_from_replies(loop)
    # A write that left a file as it was saves nothing: the summary counts what changed.
    changed = {f.path for f in workspace.changed_files()}
    saved = [p for p in without_index(successful_write_paths(loop)) if p in changed]
    team_count = sum(1 for p in saved if engine.locations.is_team_path(p))
    return ForkRun(
        loop=loop,
        written_paths=tuple(written),
        memory_paths=tuple(without_index(written)),
        saved_paths=tuple(saved),
        team_count=team_count,
        summary=memory_saved_text(len(saved) - team_count, team_count, verb),
    )


def settle_writes(
    engine: Engine,
    staged: Sequence[StagedFile],
    *,
    mode: WriteMode,
    source: str,
    note: str = "",
) -> list[FileChange]:
    """Queue, apply or only show each changed staged file."""
    queue = ReviewQueue(engine)
    group = secrets.token_hex(4)
    changes: list[FileChange] = []
    for item in staged:
        if not item.changed:
            continue
        rel = engine.locations.relative(item.path)
        scope = (
            "team" if rel.startswith("team/") else "log" if rel.startswith("logs/") else "private"
        )
        before = None if item.original is None else item.original.decode("utf-8", "replace")
        # Shown, printed and put in JSON: a credential in it is replaced (the queued
        # proposal keeps the content itself, to write on accept).
        diff = shown(unified_diff(before, item.content, rel))
        kind = "create" if item.original is None else "modify"
        base = dict(abs_path=item.path, path=rel, scope=scope, kind=kind, diff=diff)
        try:
            if mode == "show":
                changes.append(FileChange(**base, outcome="shown"))
            elif mode == "propose":
                (proposal,) = queue.propose([item], source=source, note=note, group=group)
                changes.append(FileChange(**base, outcome="proposed", proposal_id=proposal.id))
            else:
                entry = queue.write_checked(
                    item.path,
                    item.content,
                    sha256_or_none(item.original),
                    note=note or source,
                    group=group,
                )
                changes.append(FileChange(**base, outcome="applied", history_id=entry.id))
        except (WorkbenchError, OSError) as exc:  # one refusal never stops the others
            changes.append(FileChange(**base, outcome="refused", message=str(exc)))
    return changes
