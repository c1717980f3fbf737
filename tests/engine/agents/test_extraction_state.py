"""Extraction scheduling: cursor, new-message count, mutual exclusion, throttle, coalescing."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.engine.agents.extraction_state import (
    CursorState,
    ExtractionMachine,
    ExtractionSettings,
    count_model_visible_since,
    extraction_gates,
    has_memory_writes_since,
)

MEMORY = "/home/u/.claude/projects/-p/memory/"


def is_mem(path: str) -> bool:
    return path.startswith(MEMORY)


def msg(kind: str, uid: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "uuid": uid, "message": {"role": kind, "content": list(blocks)}}


def write_block(path: str, name: str = "Write") -> dict[str, Any]:
    return {"type": "tool_use", "id": "t", "name": name, "input": {"file_path": path}}


CONVERSATION = [
    msg("user", "u1"),
    msg("assistant", "a1"),
    {"type": "system", "uuid": "s1", "subtype": "informational"},
    msg("user", "u2"),
    {"type": "attachment", "uuid": "at1", "attachment": {"type": "x"}},
    msg("assistant", "a2"),
]


def test_counts_only_user_and_assistant_messages_after_the_cursor() -> None:
    assert count_model_visible_since(CONVERSATION, None) == 4
    assert count_model_visible_since(CONVERSATION, "a1") == 2
    assert count_model_visible_since(CONVERSATION, "a2") == 0


def test_a_vanished_cursor_counts_everything() -> None:
    assert count_model_visible_since(CONVERSATION, "compacted-away") == 4


def test_memory_writes_after_the_cursor_are_seen() -> None:
    messages = [*CONVERSATION, msg("assistant", "a3", write_block(MEMORY + "user.md", "Edit"))]
    assert has_memory_writes_since(messages, None, is_mem)
    assert has_memory_writes_since(messages, "a2", is_mem)
    assert not has_memory_writes_since(messages, "a3", is_mem)
    # A cursor that is not found finds nothing (Claude Code's rule).
    assert not has_memory_writes_since(messages, "gone", is_mem)


def test_writes_elsewhere_or_by_other_tools_do_not_count() -> None:
    messages = [
        msg("assistant", "a1", write_block("/tmp/x.md")),
        msg("assistant", "a2", write_block(MEMORY + "x.md", "Read")),
        msg("assistant", "a3", write_block(MEMORY[:-1] + "-evil/x.md")),
        msg("user", "u1", write_block(MEMORY + "x.md")),
    ]
    assert not has_memory_writes_since(messages, None, is_mem)


def machine(every: int = 1, state: CursorState | None = None) -> ExtractionMachine:
    return ExtractionMachine(ExtractionSettings(every_n_turns=every), is_mem, state)


def test_a_run_advances_the_cursor_only_on_success() -> None:
    m = machine()
    step = m.turn_ended(CONVERSATION)
    assert step.should_run and step.new_message_count == 4
    m.run_finished(step, success=False)
    assert m.state.last_memory_message_uuid is None
    step = m.turn_ended(CONVERSATION)
    m.run_finished(step, success=True)
    assert m.state.last_memory_message_uuid == "a2"


def test_direct_memory_writes_skip_and_move_the_cursor() -> None:
    messages = [*CONVERSATION, msg("assistant", "a3", write_block(MEMORY + "x.md"))]
    m = machine(every=3)
    step = m.turn_ended(messages)
    assert step.action == "skipped_direct_write"
    assert m.state.last_memory_message_uuid == "a3"
    # The skip came before the throttle: no turn was counted.
    assert m.state.turns_since_last_extraction == 0


def test_throttle_runs_every_nth_turn() -> None:
    m = machine(every=3)
    actions = []
    for _ in range(6):
        step = m.turn_ended(CONVERSATION)
        actions.append(step.action)
        if step.should_run:
            m.run_finished(step, success=True)
    assert actions == ["throttled", "throttled", "run", "throttled", "throttled", "run"]


def test_turns_during_a_run_coalesce_into_one_trailing_run() -> None:
    m = machine(every=5)
    m.state = CursorState(turns_since_last_extraction=4)
    first = m.turn_ended(CONVERSATION[:2])
    assert first.should_run
    later = [*CONVERSATION, msg("user", "u3"), msg("assistant", "a3")]
    assert m.turn_ended(CONVERSATION[:4]).action == "stashed"
    assert m.turn_ended(later).action == "stashed"  # latest wins
    trailing = m.run_finished(first, success=True)
    assert trailing is not None and trailing.should_run and trailing.trailing
    # The trailing run ignores the throttle (every=5) and sees only the latest messages.
    assert trailing.messages[-1]["uuid"] == "a3"
    assert trailing.new_message_count == 4  # after the cursor a1: u2, a2, u3, a3
    assert m.run_finished(trailing, success=True) is None
    assert m.state.last_memory_message_uuid == "a3"


def test_cursor_state_round_trips_and_tolerates_junk() -> None:
    state = CursorState("abc", 2)
    assert CursorState.from_json(state.to_json()) == state
    assert (
        CursorState.from_json({"last_memory_message_uuid": 5, "turns_since_last_extraction": -1})
        == CursorState()
    )


@pytest.mark.parametrize(
    ("env", "settings", "auto", "closed"),
    [
        ({}, ExtractionSettings(), True, None),
        ({"CLAUDE_CODE_SIMPLE": "1"}, ExtractionSettings(), True, "not bare mode"),
        ({"CLAUDE_CODE_REMOTE": "true"}, ExtractionSettings(), True, "not remote mode"),
        ({}, ExtractionSettings(), False, "auto memory enabled"),
        ({}, ExtractionSettings(extract_enabled=False), True, "extract mode active"),
        ({}, ExtractionSettings(interactive=False), True, "extract mode active"),
        ({}, ExtractionSettings(interactive=False, non_interactive_allowed=True), True, None),
        ({}, ExtractionSettings(build_flag=False), True, "build flag"),
    ],
)
def test_gates(env, settings, auto, closed) -> None:
    gates = extraction_gates(env, settings, auto_memory_enabled=auto)
    shut = [g.name for g in gates if not g.open]
    assert shut == ([closed] if closed else [])


def test_settings_from_env() -> None:
    settings = ExtractionSettings.from_env(
        {"WORKBENCH_EXTRACT_EVERY_N_TURNS": "4", "WORKBENCH_EXTRACT_DISABLED": "yes"}
    )
    assert settings.every_n_turns == 4
    assert not settings.extract_mode_active
    assert ExtractionSettings.from_env({"WORKBENCH_EXTRACT_EVERY_N_TURNS": "0"}).every_n_turns == 1
