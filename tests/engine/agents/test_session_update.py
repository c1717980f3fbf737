"""Session-memory updates: file set-up, the update prompt, the Edit-only agent."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fakes.messages_api import FakeMessagesAPI

from workbench.engine import Engine
from workbench.engine.agents.session_update import (
    DEFAULT_UPDATE_PROMPT,
    SessionMemoryUpdater,
    build_update_prompt,
    limit_reminders,
    resolve_target,
    setup_notes_file,
)
from workbench.engine.context.session_memory import DEFAULT_TEMPLATE
from workbench.engine.errors import NotFoundError, UserInputError


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def notes_with(sections: dict[str, int]) -> str:
    """Notes whose sections have roughly the given token counts (4 chars per token)."""
    parts = []
    for header, tokens in sections.items():
        parts.append(f"{header}\n" + "x" * (tokens * 4))
    return "\n".join(parts)


def test_setup_creates_private_folder_and_file_once(agent_engine: Engine, tmp_path: Path) -> None:
    notes = Path(agent_engine.locations.session_memory_path("s1"))
    os.umask(0o022)
    assert setup_notes_file(agent_engine, str(notes))
    assert notes.read_text() == DEFAULT_TEMPLATE
    assert mode_of(notes) == 0o600
    assert mode_of(notes.parent) == 0o700
    assert mode_of(notes.parent.parent) == 0o700
    notes.write_text("my own notes")
    assert not setup_notes_file(agent_engine, str(notes))
    assert notes.read_text() == "my own notes"


def test_setup_uses_a_custom_template(agent_engine: Engine) -> None:
    config = Path(agent_engine.locations.config_home) / "session-memory" / "config"
    config.mkdir(parents=True)
    (config / "template.md").write_text("# Only section\n_custom_\n")
    notes = agent_engine.locations.session_memory_path("s2")
    setup_notes_file(agent_engine, notes)
    assert Path(notes).read_text() == "# Only section\n_custom_\n"


def test_no_reminders_when_within_limits() -> None:
    assert limit_reminders(notes_with({"# A": 100, "# B": 1999})) == ""


def test_oversized_sections_are_listed_largest_first() -> None:
    text = limit_reminders(notes_with({"# Small": 10, "# Big": 2500, "# Bigger": 3000}))
    assert text.startswith("\n\nIMPORTANT:")
    lines = text.strip().splitlines()[1:]
    assert lines == [
        '- "# Bigger" is ~3000 tokens (limit: 2000)',
        '- "# Big" is ~2500 tokens (limit: 2000)',
    ]
    assert "CRITICAL" not in text


def test_over_total_adds_the_critical_block_first() -> None:
    notes = notes_with({f"# S{i}": 1900 for i in range(7)} | {"# Huge": 2100})
    text = limit_reminders(notes)
    assert text.startswith("\n\nCRITICAL:")
    assert "12000" in text and '"Current State"' in text and '"Errors & Corrections"' in text
    critical, listing = text.split("\n\nSections to condense first:\n")
    assert listing == '- "# Huge" is ~2100 tokens (limit: 2000)'


def test_prompt_substitutes_once_and_keeps_unknown_names(agent_engine: Engine) -> None:
    notes = "has {{notesPath}} inside and $1 and \\1"
    prompt, source = build_update_prompt(agent_engine.locations.config_home, notes, "/n/summary.md")
    assert source == "default"
    assert "<current_notes_content>\nhas {{notesPath}} inside and $1 and \\1\n" in prompt
    assert prompt.count("/n/summary.md") == DEFAULT_UPDATE_PROMPT.count("{{notesPath}}")
    config = Path(agent_engine.locations.config_home) / "session-memory" / "config"
    config.mkdir(parents=True)
    (config / "prompt.md").write_text("Notes at {{notesPath}}: {{currentNotes}} {{unknown}}")
    custom, source = build_update_prompt(agent_engine.locations.config_home, "N", "/p")
    assert source == "custom"
    assert custom == "Notes at /p: N {{unknown}}"


def test_prompt_is_our_own_wording() -> None:
    for phrase in (
        "IMPORTANT: This message and these instructions are NOT part of the actual user",
        "Your ONLY task is to use the Edit tool",
    ):
        assert phrase not in DEFAULT_UPDATE_PROMPT


def test_resolve_target(agent_engine: Engine, write_transcript, conversation) -> None:
    path = write_transcript([conversation["user"]("hi")], session="sess-1")
    target = resolve_target(agent_engine, session="sess-1")
    assert target.transcript_path == str(path)
    assert target.notes_path == agent_engine.locations.session_memory_path("sess-1")
    by_file = resolve_target(agent_engine, file=target.notes_path)
    assert by_file.session_id == "sess-1" and by_file.transcript_path == str(path)
    newest = resolve_target(agent_engine)
    assert newest.session_id == "sess-1"
    with pytest.raises(NotFoundError):
        resolve_target(agent_engine, session="missing")
    with pytest.raises(UserInputError):
        resolve_target(agent_engine, session="../etc")
    with pytest.raises(UserInputError):
        resolve_target(agent_engine, file="/tmp/elsewhere/summary.md")


def test_dry_run_creates_nothing(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    target = resolve_target(llm_engine, transcript=str(simple_session))
    result = SessionMemoryUpdater(llm_engine).dry_run(target)
    assert result.status == "dry_run"
    assert not Path(target.notes_path).exists()
    assert fake_messages_api.requests == []
    assert [t["name"] for t in result.request["tools"]] == ["Edit"]
    prompt = result.request["messages"][-1]["content"][-1]["text"]
    assert "<current_notes_content>\n\n# Session Title" in prompt


async def test_update_applies_edits_to_the_notes_file_only(
    llm_engine: Engine,
    simple_session: Path,
    fake_messages_api: FakeMessagesAPI,
    snapshot_tree,
) -> None:
    target = resolve_target(llm_engine, transcript=str(simple_session))
    memory = Path(llm_engine.locations.memory_dir)
    memory_before = snapshot_tree(memory)
    description = "_What is actively being worked on right now? Pending tasks not yet completed. Immediate next steps._"
    fake_messages_api.reply_tool_use(
        [
            (
                "Edit",
                {
                    "file_path": target.notes_path,
                    "old_string": description + "\n",
                    "new_string": description + "\nAdding a parser test; uv replaces pip.\n",
                },
            ),
            ("Write", {"file_path": target.notes_path, "content": "wiped"}),
            (
                "Edit",
                {"file_path": str(memory / "MEMORY.md"), "old_string": "- ", "new_string": "x"},
            ),
            ("Read", {"file_path": target.notes_path}),
        ]
    )
    fake_messages_api.reply_text("Notes updated.")
    result = await SessionMemoryUpdater(llm_engine).update(target)
    notes = Path(target.notes_path)
    assert result.created and result.status == "updated"
    text = notes.read_text()
    assert "Adding a parser test; uv replaces pip." in text
    assert text.startswith(DEFAULT_TEMPLATE.split("_What is actively")[0])
    assert mode_of(notes) == 0o600
    calls = result.to_json()["tool_calls"]
    assert [c["denied"] for c in calls] == [False, True, True, True]
    assert snapshot_tree(memory) == memory_before
    actions = [e.action for e in llm_engine.history.entries(notes)]
    assert actions == ["session-memory-update", "session-memory-setup"]


async def test_update_that_changes_nothing(
    llm_engine: Engine, simple_session: Path, fake_messages_api: FakeMessagesAPI
) -> None:
    target = resolve_target(llm_engine, transcript=str(simple_session))
    setup_notes_file(llm_engine, target.notes_path)
    Path(target.notes_path).write_text("# Current State\n_x_\nbusy\n")
    fake_messages_api.reply_tool_use(
        [("Edit", {"file_path": target.notes_path, "old_string": "absent", "new_string": "y"})]
    )
    fake_messages_api.reply_text("nothing")
    result = await SessionMemoryUpdater(llm_engine).update(target)
    assert result.status == "unchanged" and not result.created
    assert Path(target.notes_path).read_text() == "# Current State\n_x_\nbusy\n"
