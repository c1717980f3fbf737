"""Claude Code 2.1.88: the rules of its source, as specs 01–04 describe them (the values
`build.py` starts every rule from)."""

from __future__ import annotations

from workbench.engine.profiles.rules import (
    DreamRules,
    MemoryFileRules,
    ModelRow,
    ObservabilityRules,
    PartialCompactionRules,
    ProjectDirRules,
    PromptRules,
    SettingsRules,
    UnicodePathRules,
)

WINDOW_200K = 200_000

CANONICAL_NAMES = (
    "claude-opus-4-6",
    "claude-opus-4-5",
    "claude-opus-4-1",
    "claude-opus-4",
    "claude-sonnet-4-6",
    "claude-sonnet-4-5",
    "claude-sonnet-4",
    "claude-haiku-4-5",
    "claude-3-7-sonnet",
    "claude-3-5-sonnet",
    "claude-3-5-haiku",
    "claude-3-opus",
    "claude-3-sonnet",
    "claude-3-haiku",
)


def _row(match: str, default: int, upper: int) -> ModelRow:
    return ModelRow(match, WINDOW_200K, default, upper)


# `getModelMaxOutputTokens`: substrings of the canonical name, checked in order (spec 04 §9.3).
OUTPUT_ROWS = (
    _row("opus-4-6", 64_000, 128_000),
    _row("sonnet-4-6", 32_000, 128_000),
    _row("opus-4-5", 32_000, 64_000),
    _row("sonnet-4", 32_000, 64_000),
    _row("haiku-4", 32_000, 64_000),
    _row("opus-4-1", 32_000, 32_000),
    _row("opus-4", 32_000, 32_000),
    _row("claude-3-opus", 4_096, 4_096),
    _row("claude-3-sonnet", 8_192, 8_192),
    _row("claude-3-haiku", 4_096, 4_096),
    _row("3-5-sonnet", 8_192, 8_192),
    _row("3-5-haiku", 8_192, 8_192),
    _row("3-7-sonnet", 32_000, 64_000),
)

PARTIAL = PartialCompactionRules(keeps_recent_messages=False, manual_writes_summary_transcript=True)
SETTINGS = SettingsRules(
    memory_dir_sources=("policySettings", "flagSettings", "localSettings", "userSettings"),
    notes=(
        "autoMemoryDirectory in the project's committed .claude/settings.json is ignored: a "
        "cloned repository must not choose where memories are written",
    ),
)
PROJECT_DIR = ProjectDirRules(name_env=None)
UNICODE = UnicodePathRules(nfc_project_root=True, runs_in_non_nfc_folder=False)
MEMORY_FILES = MemoryFileRules(
    reads_type_at=("top-level",), writes_type_at="top-level", kebab_names=False, body_links=False
)
PROMPT = PromptRules(style="sectioned")
DREAM = DreamRules(gates_known=True)
OBSERVABILITY = ObservabilityRules()
