"""When the extraction agent runs: gates, cursor, mutual exclusion, throttle and coalescing.

Claude Code keeps this state in a closure; here it is an explicit object so each rule can be
tested on its own (spec 02 §4):

- the cursor `lastMemoryMessageUuid` moves to the last message only when a run succeeds (or
  is skipped because the conversation already wrote memory itself);
- `newMessageCount` counts user and assistant messages after the cursor, or all of them when
  the cursor's message is gone (compacted away);
- a run is skipped when an assistant message after the cursor already used Write or Edit on a
  memory file (mutual exclusion), and that check comes before the throttle;
- the throttle lets one run through every N eligible turns (N defaults to 1);
- a turn that ends while a run is in flight is stashed (latest wins) and replayed once as a
  trailing run, which skips the throttle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from workbench.engine.context.tokens import content_blocks
from workbench.engine.envflags import is_truthy, positive_int

StepAction = Literal["run", "stashed", "skipped_direct_write", "throttled"]
MODEL_VISIBLE_TYPES = frozenset({"user", "assistant"})
WRITE_TOOL_NAMES = frozenset({"Write", "Edit"})


def _raw(message: Any) -> Mapping[str, Any]:
    raw = getattr(message, "raw", message)
    return raw if isinstance(raw, Mapping) else {}


def _uuid(message: Any) -> str | None:
    value = _raw(message).get("uuid")
    return value if isinstance(value, str) else None


def count_model_visible_since(messages: Sequence[Any], since_uuid: str | None) -> int:
    """`countModelVisibleMessagesSince`: user/assistant messages after the cursor; all of them
    when there is no cursor or its message is no longer present."""
    visible = [m for m in messages if _raw(m).get("type") in MODEL_VISIBLE_TYPES]
    if since_uuid is None:
        return len(visible)
    found = False
    count = 0
    for message in messages:
        if not found:
            found = _uuid(message) == since_uuid
            continue
        if _raw(message).get("type") in MODEL_VISIBLE_TYPES:
            count += 1
    return count if found else len(visible)


def has_memory_writes_since(
    messages: Sequence[Any], since_uuid: str | None, is_auto_mem_path: Callable[[str], bool]
) -> bool:
    """`hasMemoryWritesSince`: an assistant Write/Edit on a memory file after the cursor.

    With no cursor every message is scanned; with a cursor that is not found, none is.
    """
    found = since_uuid is None
    for message in messages:
        raw = _raw(message)
        if not found:
            found = raw.get("uuid") == since_uuid
            continue
        if raw.get("type") != "assistant":
            continue
        for block in content_blocks(raw, "tool_use"):
            tool_input = block.get("input")
            path = tool_input.get("file_path") if isinstance(tool_input, Mapping) else None
            if block.get("name") in WRITE_TOOL_NAMES and isinstance(path, str):
                if is_auto_mem_path(path):
                    return True
    return False


# --- settings and gates ----------------------------------------------------------------------


@dataclass(frozen=True)
class ExtractionSettings:
    """Claude Code's build and server-side flags, modelled as explicit settings.

    Environment overrides (all optional): `WORKBENCH_EXTRACT_EVERY_N_TURNS` (the throttle,
    `tengu_bramble_lintel`), `WORKBENCH_EXTRACT_DISABLED` (turns `tengu_passport_quail` off),
    `WORKBENCH_EXTRACT_NONINTERACTIVE` (behave as a `-p` session, where extraction needs
    `tengu_slate_thimble`), `WORKBENCH_EXTRACT_SLATE_THIMBLE`.
    """

    build_flag: bool = True
    """`EXTRACT_MEMORIES` build flag."""
    extract_enabled: bool = True
    """`tengu_passport_quail`."""
    interactive: bool = True
    """An interactive session (the workbench stands in for one)."""
    non_interactive_allowed: bool = False
    """`tengu_slate_thimble`: extraction in non-interactive sessions."""
    every_n_turns: int = 1
    """`tengu_bramble_lintel`: run on every Nth eligible turn."""
    skip_index: bool = False
    """`tengu_moth_copse`: memories are written without the MEMORY.md step."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ExtractionSettings:
        return cls(
            extract_enabled=not is_truthy(env.get("WORKBENCH_EXTRACT_DISABLED")),
            interactive=not is_truthy(env.get("WORKBENCH_EXTRACT_NONINTERACTIVE")),
            non_interactive_allowed=is_truthy(env.get("WORKBENCH_EXTRACT_SLATE_THIMBLE")),
            every_n_turns=positive_int(env, "WORKBENCH_EXTRACT_EVERY_N_TURNS") or 1,
        )

    @property
    def extract_mode_active(self) -> bool:
        """`isExtractModeActive`: the flag, and an interactive session or the second flag."""
        return self.extract_enabled and (self.interactive or self.non_interactive_allowed)

    def to_json(self) -> dict[str, Any]:
        return {
            "build_flag": self.build_flag,
            "extract_enabled": self.extract_enabled,
            "interactive": self.interactive,
            "non_interactive_allowed": self.non_interactive_allowed,
            "every_n_turns": self.every_n_turns,
            "skip_index": self.skip_index,
        }


@dataclass(frozen=True)
class GateCheck:
    """One gate and whether it is open."""

    name: str
    open: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "open": self.open, "detail": self.detail}


def extraction_gates(
    env: Mapping[str, str],
    settings: ExtractionSettings,
    *,
    auto_memory_enabled: bool,
    is_subagent: bool = False,
) -> list[GateCheck]:
    """The caller-side and inner gates, in Claude Code's order."""
    bare = is_truthy(env.get("CLAUDE_CODE_SIMPLE"))
    remote = is_truthy(env.get("CLAUDE_CODE_REMOTE"))
    return [
        GateCheck("not bare mode", not bare, "CLAUDE_CODE_SIMPLE is set" if bare else "ok"),
        GateCheck(
            "build flag",
            settings.build_flag,
            "ok" if settings.build_flag else "EXTRACT_MEMORIES is off",
        ),
        GateCheck(
            "main agent",
            not is_subagent,
            "subagents never extract" if is_subagent else "ok",
        ),
        GateCheck(
            "extract mode active",
            settings.extract_mode_active,
            "ok"
            if settings.extract_mode_active
            else "extraction is switched off, or the session is non-interactive without the "
            "flag that allows it",
        ),
        GateCheck(
            "auto memory enabled",
            auto_memory_enabled,
            "ok" if auto_memory_enabled else "auto memory is disabled for this project",
        ),
        GateCheck("not remote mode", not remote, "CLAUDE_CODE_REMOTE is set" if remote else "ok"),
    ]


# --- the state machine -----------------------------------------------------------------------


@dataclass(frozen=True)
class CursorState:
    """What survives between turns (persisted per session by the workbench)."""

    last_memory_message_uuid: str | None = None
    turns_since_last_extraction: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "last_memory_message_uuid": self.last_memory_message_uuid,
            "turns_since_last_extraction": self.turns_since_last_extraction,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CursorState:
        uuid = data.get("last_memory_message_uuid")
        turns = data.get("turns_since_last_extraction")
        return cls(
            last_memory_message_uuid=uuid if isinstance(uuid, str) else None,
            turns_since_last_extraction=turns if isinstance(turns, int) and turns >= 0 else 0,
        )


@dataclass(frozen=True)
class ExtractionStep:
    """The machine's answer for one end of turn."""

    action: StepAction
    new_message_count: int = 0
    trailing: bool = False
    messages: tuple[Any, ...] = field(default_factory=tuple, repr=False)
    """The messages the run (if any) should extract from."""

    @property
    def should_run(self) -> bool:
        return self.action == "run"


class ExtractionMachine:
    """Claude Code's extraction scheduling rules over explicit state."""

    def __init__(
        self,
        settings: ExtractionSettings,
        is_auto_mem_path: Callable[[str], bool],
        state: CursorState | None = None,
    ) -> None:
        self.settings = settings
        self.is_auto_mem_path = is_auto_mem_path
        self.state = state or CursorState()
        self.in_progress = False
        self.pending: tuple[Any, ...] | None = None
        """The stashed messages of a turn that ended while a run was in flight."""

    def turn_ended(self, messages: Sequence[Any]) -> ExtractionStep:
        """A query loop finished with a final answer: stash, skip, throttle or run."""
        if self.in_progress:
            self.pending = tuple(messages)  # latest wins
            return ExtractionStep("stashed")
        return self._plan(tuple(messages), trailing=False)

    def _plan(self, messages: tuple[Any, ...], *, trailing: bool) -> ExtractionStep:
        cursor = self.state.last_memory_message_uuid
        new_count = count_model_visible_since(messages, cursor)
        if has_memory_writes_since(messages, cursor, self.is_auto_mem_path):
            # The conversation saved memories itself; extracting would duplicate them.
            self.state = replace(self.state, last_memory_message_uuid=_last_uuid(messages, cursor))
            return ExtractionStep("skipped_direct_write", new_count, trailing)
        turns = self.state.turns_since_last_extraction
        if not trailing:
            turns += 1
            if turns < self.settings.every_n_turns:
                self.state = replace(self.state, turns_since_last_extraction=turns)
                return ExtractionStep("throttled", new_count, trailing)
        self.state = replace(self.state, turns_since_last_extraction=0)
        self.in_progress = True
        return ExtractionStep("run", new_count, trailing, messages)

    def run_finished(self, step: ExtractionStep, *, success: bool) -> ExtractionStep | None:
        """Record a run's end; the cursor advances only on success. Returns the trailing run
        to start next, if a turn was stashed meanwhile."""
        if success:
            cursor = _last_uuid(step.messages, self.state.last_memory_message_uuid)
            self.state = replace(self.state, last_memory_message_uuid=cursor)
        self.in_progress = False
        if self.pending is None:
            return None
        stashed, self.pending = self.pending, None
        return self._plan(stashed, trailing=True)


def _last_uuid(messages: Sequence[Any], fallback: str | None) -> str | None:
    for message in reversed(messages):
        uuid = _uuid(message)
        if uuid is not None:
            return uuid
    return fallback
