"""The memory extraction agent (spec 02 §4), run by the workbench over a saved transcript.

Claude Code forks its main agent at the end of a turn and lets the fork save what the recent
messages taught it. The workbench does the same from a transcript: the conversation after the
last compaction becomes the fork's message prefix, the extraction prompt is appended, and the
fork gets at most five turns with the memory-agent tools. Its writes are staged and then
queued for review (default), applied through history (`--apply`), or, for a dry run, nothing
is sent at all and the exact request is shown instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench.engine.agents.conversation import fork_messages
from workbench.engine.agents.extraction_state import (
    CursorState,
    ExtractionMachine,
    ExtractionSettings,
    ExtractionStep,
    GateCheck,
    extraction_gates,
)
from workbench.engine.agents.fork import (
    FileChange,
    ForkRun,
    WriteMode,
    memory_saved_message,
    run_fork,
    settle_writes,
)
from workbench.engine.agents.permissions import create_auto_mem_can_use_tool
from workbench.engine.agents.prompt import (
    how_to_save_section,
    prompt_for_engine,
    remember_forget_guidance,
    team_memory_in_use,
    types_section,
    what_not_to_save_section,
)
from workbench.engine.agents.tools import Workspace, tool_definitions
from workbench.engine.atomic import atomic_write_bytes
from workbench.engine.errors import UserInputError
from workbench.engine.memories.scan import format_manifest, scan_memory_files
from workbench.engine.userfiles import NOTES_LIMIT, load_json, read_bytes
from workbench.engine.wording import plural

if TYPE_CHECKING:
    from workbench.engine.context.transcript import Transcript
    from workbench.engine.engine import Engine
    from workbench.engine.profiles import BehaviourProfile

MAX_TURNS = 5
MAX_OUTPUT_TOKENS = 8_000
FORK_LABEL = "extract_memories"
ExtractionStatus = Literal[
    "ran", "dry_run", "gated", "nothing_new", "skipped_direct_write", "throttled"
]


# --- the prompt --------------------------------------------------------------------------------


def extraction_opener(new_message_count: int, memory_dir: str, manifest: str) -> str:
    """The first part of the extraction prompt: role, tools, turn budget, scope, manifest."""
    parts = [
        "You are now working as the memory extraction subagent. Read the most recent "
        f"~{new_message_count} messages above and decide what from them belongs in the "
        f"persistent memory at `{memory_dir}`.",
        "Tools you can use: Read, Grep and Glob anywhere; Bash for commands that only read "
        "(ls, find, cat, stat, wc, head, tail, grep and the like; rm and anything else that "
        f"writes is refused); Edit and Write only for files inside `{memory_dir}`. MCP tools, "
        "the Agent tool and shell commands that change things are all refused.",
        "You have only a few turns, so work in two steps: in your first turn, issue every "
        "Read you need at once, in parallel (for example the memory files you might update); "
        "in your second turn, issue every Write and Edit at once, in parallel. Do not spread "
        "reads and writes over many turns.",
        f"Base your memories ONLY on what the last ~{new_message_count} messages say. Do not "
        "investigate further: do not search the source, do not open code to confirm a detail, "
        "and do not run git.",
    ]
    if manifest:
        parts.append(
            "## Existing memory files\n\n"
            f"{manifest}\n\n"
            "Look through this list before writing: when a file already covers the subject, "
            "update it rather than creating a duplicate."
        )
    return "\n\n".join(parts)


def build_extraction_prompt(
    new_message_count: int,
    memory_dir: str,
    manifest: str,
    *,
    combined: bool,
    skip_index: bool,
) -> str:
    """The whole extraction prompt: opener, then the memory prompt's shared sections."""
    return "\n\n".join(
        [
            extraction_opener(new_message_count, memory_dir, manifest),
            remember_forget_guidance(),
            types_section(combined=combined),
            what_not_to_save_section(team=combined),
            how_to_save_section(skip_index=skip_index, combined=combined, for_extraction=True),
        ]
    )


def fork_system_prompt(memory_prompt_text: str) -> str:
    """The fork's system prompt: the main agent's memory instructions, framed."""
    head = (
        "You are Claude Code's memory agent. The conversation below is a saved Claude Code "
        "session that Memory Workbench replays so you can update the user's memory."
    )
    return f"{head}\n\n{memory_prompt_text}" if memory_prompt_text else head


# --- cursor persistence -------------------------------------------------------------------------


class CursorStore:
    """The extraction cursor of each session, kept under WORKBENCH_HOME."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _path(self, session_id: str) -> Path:
        from workbench.paths import state_dir

        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id)[:120]
        return state_dir("extraction", self.engine.history.folder.name) / f"{safe}.json"

    def load(self, session_id: str) -> CursorState:
        try:
            path = self._path(session_id)
            data = load_json(read_bytes(path, NOTES_LIMIT, "an extraction cursor"), str(path))
        except (OSError, ValueError, UserInputError):
            return CursorState()
        return CursorState.from_json(data) if isinstance(data, dict) else CursorState()

    def save(self, session_id: str, state: CursorState) -> None:
        data = json.dumps(state.to_json()).encode("utf-8")
        atomic_write_bytes(self._path(session_id), data, mode=0o600)


# --- planning and running -----------------------------------------------------------------------


@dataclass(frozen=True)
class ExtractionPlan:
    """Everything decided before the model is asked: gates, cursor, prompt and request."""

    transcript_path: str
    session_id: str
    gates: tuple[GateCheck, ...]
    step: ExtractionStep
    cursor_before: CursorState
    machine: ExtractionMachine = field(repr=False, compare=False)
    manifest_count: int = 0
    prompt: str = ""
    request: dict[str, Any] | None = None

    @property
    def gated(self) -> bool:
        return not all(g.open for g in self.gates)


@dataclass(frozen=True)
class ExtractionResult:
    """What `workbench extract` did and found."""

    transcript: str
    session_id: str
    status: ExtractionStatus
    engine: str
    """`llm` when the model ran, `dry-run` when only the request was built, `none`."""
    reason: str
    gates: tuple[GateCheck, ...]
    new_messages: int
    cursor_before: str | None
    cursor_after: str | None
    manifest_count: int = 0
    request: dict[str, Any] | None = None
    run: ForkRun | None = None
    changes: tuple[FileChange, ...] = ()
    notice: str = ""
    """Said to the user, e.g. that no key was set so only a dry run happened."""

    @property
    def refused(self) -> list[FileChange]:
        return [c for c in self.changes if c.outcome == "refused"]

    def to_json(self) -> dict[str, Any]:
        run = self.run.to_json() if self.run else {}
        memory_saved = None
        if self.run and self.run.saved_paths:
            memory_saved = memory_saved_message(self.run.saved_paths, self.run.team_count)
        return {
            "transcript": self.transcript,
            "session_id": self.session_id,
            "status": self.status,
            "engine": self.engine,
            "reason": self.reason,
            "notice": self.notice,
            "gates": [g.to_json() for g in self.gates],
            "new_messages": self.new_messages,
            "cursor_before": self.cursor_before,
            "cursor_after": self.cursor_after,
            "manifest_count": self.manifest_count,
            "max_turns": MAX_TURNS,
            "turns": run.get("turns", 0),
            "stopped": run.get("stopped"),
            "written_paths": run.get("written_paths", []),
            "memory_paths": run.get("memory_paths", []),
            "saved_paths": run.get("saved_paths", []),
            "team_count": run.get("team_count", 0),
            "summary": run.get("summary", ""),
            "memory_saved": memory_saved,
            "changes": [c.to_json() for c in self.changes],
            "tool_calls": run.get("tool_calls", []),
            "denied_calls": run.get("denied_calls", []),
            "final_text": run.get("final_text", ""),
            "usage": run.get("usage"),
            "request": self.request,
        }


class ExtractionAgent:
    """Plans and runs extraction for one engine (project and memory folder)."""

    def __init__(self, engine: Engine, settings: ExtractionSettings | None = None) -> None:
        self.engine = engine
        self.settings = settings or ExtractionSettings.from_env(engine.env)
        self.cursors = CursorStore(engine)

    def load_transcript(self, path: str) -> Transcript:
        from workbench.engine.context.transcript import Transcript

        return Transcript.load(path)

    def plan(self, transcript_path: str, *, skip_index: bool | None = None) -> ExtractionPlan:
        """Decide whether a run would happen now, and build its prompt and request."""
        transcript = self.load_transcript(transcript_path)
        session_id = transcript.session_id
        locations = self.engine.locations
        gates = tuple(
            extraction_gates(
                self.engine.env,
                self.settings,
                auto_memory_enabled=locations.auto_memory_enabled,
            )
        )
        cursor = self.cursors.load(session_id)
        machine = ExtractionMachine(self.settings, locations.is_auto_mem_path, cursor)
        messages = transcript.current_messages()
        plan = ExtractionPlan(
            transcript_path=str(transcript_path),
            session_id=session_id,
            gates=gates,
            step=ExtractionStep("throttled"),
            cursor_before=cursor,
            machine=machine,
        )
        if plan.gated:
            return plan
        step = machine.turn_ended(messages)
        if not step.should_run or step.new_message_count == 0:
            return _replace_plan(plan, step=step)
        # The release that wrote the session: its memory prompt and format apply.
        profile = self.engine.claude_for(transcript_path).profile
        headers = scan_memory_files(locations.memory_dir, profile.memory_files.reads_type_at)
        manifest = format_manifest(headers)
        combined = team_memory_in_use(locations.team_dir)
        skip = self.settings.skip_index if skip_index is None else skip_index
        prompt = build_extraction_prompt(
            step.new_message_count,
            locations.memory_dir,
            manifest,
            combined=combined,
            skip_index=skip,
        )
        request = self.build_request(messages, prompt, skip_index=skip, profile=profile)
        return _replace_plan(
            plan, step=step, manifest_count=len(headers), prompt=prompt, request=request
        )

    def build_request(
        self,
        messages: Sequence[Any],
        prompt: str,
        *,
        skip_index: bool,
        profile: BehaviourProfile | None = None,
    ) -> dict[str, Any]:
        """The exact first request of the fork (its system prompt in `profile`'s shape)."""
        from workbench.engine.llm import LLMConfig, build_request

        memory_prompt = prompt_for_engine(self.engine, skip_index=skip_index, profile=profile)
        return build_request(
            model=LLMConfig.from_env(self.engine.env).model,
            max_tokens=MAX_OUTPUT_TOKENS,
            system=fork_system_prompt(memory_prompt.text),
            messages=fork_messages(messages, prompt),
            tools=tool_definitions(),
        )

    def result_without_run(self, plan: ExtractionPlan, *, dry_run: bool) -> ExtractionResult:
        """The result for a plan that is not sent: gated, skipped, or a dry run."""
        step = plan.step
        cursor_before = plan.cursor_before.last_memory_message_uuid
        if plan.gated:
            closed = next(g for g in plan.gates if not g.open)
            status: ExtractionStatus = "gated"
            reason = f"extraction would not run: {closed.name} ({closed.detail})"
        elif step.action == "skipped_direct_write":
            status = "skipped_direct_write"
            reason = (
                "the conversation already wrote to the memory folder after the cursor, so "
                "extraction skips these messages and moves the cursor past them"
            )
        elif step.action == "throttled":
            status = "throttled"
            reason = (
                f"extraction runs every {self.settings.every_n_turns} eligible turns; this "
                "turn was counted and skipped"
            )
        elif step.new_message_count == 0:
            status = "nothing_new"
            reason = "no new messages since the last extraction"
        else:
            status = "dry_run"
            reason = "dry run: the request below was built but not sent"
        if not dry_run and status in ("skipped_direct_write", "throttled"):
            self.cursors.save(plan.session_id, plan.machine.state)
        cursor_after = plan.machine.state.last_memory_message_uuid if not dry_run else cursor_before
        return ExtractionResult(
            transcript=plan.transcript_path,
            session_id=plan.session_id,
            status=status,
            engine="dry-run" if status == "dry_run" else "none",
            reason=reason,
            gates=plan.gates,
            new_messages=step.new_message_count,
            cursor_before=cursor_before,
            cursor_after=cursor_after,
            manifest_count=plan.manifest_count,
            request=plan.request if status == "dry_run" else None,
        )

    async def run(self, plan: ExtractionPlan, *, mode: WriteMode) -> ExtractionResult:
        """Send the plan's request and run the fork; the cursor advances only on success."""
        if plan.request is None or not plan.step.should_run:
            return self.result_without_run(plan, dry_run=False)
        locations = self.engine.locations
        workspace = Workspace(
            project_root=locations.project_root,
            read_roots=(locations.memory_dir, locations.transcripts_dir),
        )
        success = False
        try:
            run = await run_fork(
                self.engine,
                plan.request,
                workspace=workspace,
                can_use_tool=create_auto_mem_can_use_tool(locations.memory_dir),
                max_turns=MAX_TURNS,
            )
            success = True
        finally:
            plan.machine.run_finished(plan.step, success=success)
            self.cursors.save(plan.session_id, plan.machine.state)
        changes = settle_writes(
            self.engine,
            workspace.changed_files(),
            mode=mode,
            source="extract",
            note=f"extraction from session {plan.session_id}",
        )
        return ExtractionResult(
            transcript=plan.transcript_path,
            session_id=plan.session_id,
            status="ran",
            engine="llm",
            reason=_ran_reason(run, changes, mode),
            gates=plan.gates,
            new_messages=plan.step.new_message_count,
            cursor_before=plan.cursor_before.last_memory_message_uuid,
            cursor_after=plan.machine.state.last_memory_message_uuid,
            manifest_count=plan.manifest_count,
            run=run,
            changes=tuple(changes),
        )


def _replace_plan(plan: ExtractionPlan, **changes: Any) -> ExtractionPlan:
    from dataclasses import replace

    return replace(plan, **changes)


def _ran_reason(run: ForkRun, changes: Sequence[FileChange], mode: WriteMode) -> str:
    if not changes:
        return (
            f"the agent finished after {plural(run.loop.turns, 'turn')} without changing any memory"
        )
    verbs = {"propose": "queued for review", "apply": "written", "show": "shown"}
    return f"{plural(len(changes), 'file change')} {verbs[mode]} after {plural(run.loop.turns, 'turn')}"
