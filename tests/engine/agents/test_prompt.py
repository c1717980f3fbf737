"""The memory prompt: variants, dispatch, the facts each section must carry, its size."""

from __future__ import annotations

import re

import pytest

from workbench.engine import Engine
from workbench.engine.agents import prompt as mp
from workbench.engine.jsutil import js_len, js_round

MEM = "/home/u/.claude/projects/-repo/memory/"
TEAM = MEM + "team/"
SECTIONS = (
    "## Types of memory",
    "## What NOT to save in memory",
    "## How to save memories",
    "## When to access memories",
    "## Before recommending from memory",
    "## Memory and other forms of persistence",
)


def test_individual_prompt_has_every_section_once_and_no_scopes():
    text = mp.build_individual_prompt(MEM)
    assert text.startswith("# auto memory\n")
    for heading in SECTIONS:
        assert text.count(heading) == 1, heading
    assert f"`{MEM}`" in text
    assert "<scope>" not in text and "## Memory scope" not in text
    assert re.findall(r"<name>(\w+)</name>", text) == ["user", "feedback", "project", "reference"]
    assert "API keys" not in text  # the team-secrets rule belongs to team prompts only


def test_combined_prompt_adds_scopes_and_the_team_rules():
    text = mp.build_combined_prompt(MEM, TEAM)
    assert text.startswith("# Memory\n") and "## Memory scope" in text
    assert f"`{MEM}`" in text and f"`{TEAM}`" in text
    scopes = re.findall(r"<scope>(.*?)</scope>", text)
    assert len(scopes) == 4
    assert scopes[0] == "always private"
    assert scopes[1].startswith("private by default") and "team only" in scopes[1]
    assert "strong lean towards team" in scopes[2]
    assert scopes[3] == "usually team"
    assert "API keys" in text and "credentials" in text
    assert "contradict a team feedback memory" in text
    assert "synced at the start of every session" in text


@pytest.mark.parametrize("combined", [False, True])
def test_two_step_save_and_the_skip_index_variant(combined: bool):
    two_step = mp.how_to_save_section(combined=combined)
    assert "**Step 1**" in two_step and "**Step 2**" in two_step
    assert "`- [Title](file.md) — one-line hook`" in two_step
    assert "150 characters" in two_step and "lines after 200" in two_step
    assert "no frontmatter" in two_step
    skip = mp.how_to_save_section(skip_index=True, combined=combined)
    assert "Step 2" not in skip and "MEMORY.md" not in skip.replace("has its own MEMORY.md", "")
    assert "lines after 200" not in skip
    for section in (two_step, skip):
        assert "user_role.md" in section and "feedback_testing.md" in section
        assert (
            "name: {{memory name}}" in section
            and "type: {{user, feedback, project, reference}}" in section
        )
        assert "**Why:**" in section and "**How to apply:**" in section


def test_extraction_wording_of_the_index_warning():
    text = mp.how_to_save_section(for_extraction=True)
    assert "loaded into your system prompt" in text and "lines after 200" in text


def test_what_not_to_save_carries_every_exclusion():
    text = mp.what_not_to_save_section()
    for fact in (
        "architecture",
        "file paths",
        "Git history",
        "Debugging",
        "CLAUDE.md",
        "work in progress",
        "explicitly asks",
        "surprising or non-obvious",
    ):
        assert fact in text, fact


def test_when_to_access_and_trusting_recall_facts():
    access = mp.when_to_access_section()
    assert access.count("\n- ") == 4
    assert "MUST" in access and "MEMORY.md\nwere empty" not in access and "were empty" in access
    recall = mp.trusting_recall_section()
    assert '"The memory says X exists" is not the same as "X exists now."' in recall
    assert "git log" in recall and "grep" in recall


def test_daily_log_prompt_uses_a_date_pattern_and_is_append_only():
    text = mp.build_daily_log_prompt(MEM)
    assert f"`{MEM}logs/YYYY/MM/YYYY-MM-DD.md`" in text
    assert not re.search(r"\d{4}-\d{2}-\d{2}", text)  # no literal date: survives midnight
    assert "currentDate" in text and "append" in text.lower()
    assert "## What to log" in text and "## What NOT to save in memory" in text
    assert "## MEMORY.md" in text and "never edit it" in text
    assert "## MEMORY.md" not in mp.build_daily_log_prompt(MEM, skip_index=True)


def test_extra_guidelines_are_appended_only_when_not_blank():
    env = {mp.EXTRA_GUIDELINES_ENV: "Write memories in British English."}
    individual = mp.load_memory_prompt(MEM, TEAM, env, mode="individual")
    combined = mp.load_memory_prompt(MEM, TEAM, env, mode="combined")
    assert individual.text.endswith("Write memories in British English.")
    assert combined.text.endswith("Write memories in British English.")
    daily = mp.load_memory_prompt(MEM, TEAM, env, mode="daily-log")
    assert "British English" not in daily.text
    blank = mp.load_memory_prompt(MEM, TEAM, {mp.EXTRA_GUIDELINES_ENV: "  \n "}, mode="individual")
    assert blank.text == mp.build_individual_prompt(MEM)


@pytest.mark.parametrize(
    ("enabled", "team", "daily", "expected"),
    [
        (True, False, False, "individual"),
        (True, True, False, "combined"),
        (True, True, True, "daily-log"),
        (False, True, True, "disabled"),
    ],
)
def test_dispatch_follows_load_memory_prompt(enabled, team, daily, expected):
    result = mp.load_memory_prompt(
        MEM, TEAM, {}, auto_memory_enabled=enabled, team_enabled=team, daily_log_active=daily
    )
    assert result.mode == expected
    if expected == "disabled":
        assert (result.text, result.tokens) == ("", 0)
    else:
        assert result.tokens == js_round(js_len(result.text) / 4) > 300
    assert set(result.to_json()) >= {"mode", "text", "tokens"}


def test_prompt_for_engine_uses_the_team_folder_and_env(tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    engine = Engine.open(tmp_path, memory_dir=str(memory), env={"HOME": str(tmp_path)})
    assert mp.prompt_for_engine(engine).mode == "individual"
    (memory / "team").mkdir()
    combined = mp.prompt_for_engine(engine, skip_index=True)
    assert combined.mode == "combined" and combined.skip_index
    assert f"`{memory}/team/`" in combined.text
    assert "Step 2" not in combined.text


def test_prompt_is_in_our_own_words():
    """Reference sentences quoted in the spec must not appear verbatim."""
    everything = "\n".join(
        [
            mp.build_individual_prompt(MEM),
            mp.build_combined_prompt(MEM, TEAM),
            mp.build_daily_log_prompt(MEM),
        ]
    )
    for quoted in (
        "This directory already exists — write to it directly with the Write tool",
        "You MUST avoid saving sensitive data within shared team memories",
        "Never write memory content directly into MEMORY.md",
        "MEMORY.md is always loaded into your conversation context — lines after 200",
        "A separate nightly process distills these logs",
        "Read it for orientation, but do not edit it directly",
        "Write each memory to its own file",
    ):
        assert quoted not in everything
