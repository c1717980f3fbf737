"""Claude Code 2.1.332: the rules observed on the real CLI (spec 08).

Only behaviour was observed, never source. Facts that could not be observed keep 2.1.88's
rule and say so (`known_from="assumed"`, notes), so a front end never presents a guess as a
measurement.
"""

from __future__ import annotations

from workbench.engine.profiles import instruction_rules, legacy
from workbench.engine.profiles.records import (
    LEGACY_ATTACHMENT_TYPES,
    LEGACY_RECORD_TYPES,
    NEW_ATTACHMENT_TYPES,
    NEW_RECORD_TYPES,
)
from workbench.engine.profiles.rules import (
    CompactWindowRules,
    DreamRules,
    IndexLoadRules,
    MemoryFileRules,
    ModelRow,
    ModelRules,
    ObservabilityRules,
    PartialCompactionRules,
    ProjectDirRules,
    PromptRules,
    ReactiveRules,
    RecordRules,
    SettingsRules,
    UnicodePathRules,
)

WINDOW_1M = 1_000_000
WINDOW_200K = legacy.WINDOW_200K
_ASSUMED = "not observed on 2.1.332: 2.1.88's rule is assumed"


def _no_threshold(match: str, default: int, upper: int) -> ModelRow:
    return ModelRow(
        match,
        WINDOW_200K,
        default,
        upper,
        threshold_compaction=False,
        known_from="observed",
        note=None,
    )


def _assumed(row: ModelRow) -> ModelRow:
    return ModelRow(
        row.match,
        row.window,
        row.default_output,
        row.upper_output,
        known_from="assumed",
        note=_ASSUMED,
    )


_LEGACY_ROWS = {row.match: row for row in legacy.OUTPUT_ROWS}

MODELS = ModelRules(
    default_model="claude-opus-5-5",
    default_model_known_from="observed",
    aliases={
        "sonnet": "claude-sonnet-5-5",
        "opus": "claude-opus-5-5",
        "haiku": "claude-haiku-4-5-20251001",
        "sonnet[1m]": "claude-sonnet-5-5[1m]",
        "opus[1m]": "claude-opus-5-5[1m]",
    },
    aliases_known_from="assumed",
    canonical_names=("claude-opus-5-5", "claude-sonnet-5-5", *legacy.CANONICAL_NAMES),
    rows=(
        ModelRow(
            "opus-5-5",
            WINDOW_1M,
            128_000,
            128_000,
            known_from="observed",
            note="its upper output limit was not observed",
        ),
        ModelRow(
            "sonnet-5-5",
            WINDOW_1M,
            64_000,
            128_000,
            known_from="observed",
            note="its output limits were not observed (the 20,000 reserve was)",
        ),
        ModelRow("opus-4-6", WINDOW_200K, 64_000, 128_000, known_from="observed"),
        ModelRow("sonnet-4-6", WINDOW_200K, 32_000, 128_000, known_from="observed"),
        _no_threshold("opus-4-5", 32_000, 64_000),
        _no_threshold("sonnet-4-5", 32_000, 64_000),
        _no_threshold("haiku-4-5", 32_000, 64_000),
        _no_threshold("3-5-haiku", 8_192, 8_192),
        *(
            _assumed(_LEGACY_ROWS[name])
            for name in (
                "sonnet-4",
                "haiku-4",
                "opus-4-1",
                "opus-4",
                "claude-3-opus",
                "claude-3-sonnet",
                "claude-3-haiku",
                "3-5-sonnet",
                "3-7-sonnet",
            )
        ),
    ),
    fallback=ModelRow(
        "",
        WINDOW_200K,
        32_000,
        64_000,
        known_from="assumed",
        note=(
            "not in the 2.1.332 table: the gauge assumes 2.1.88's rule for unknown models "
            "(200,000 window, compaction by threshold)"
        ),
    ),
    window_override_enables_threshold=True,
    blocking_without_threshold=False,
)

COMPACT_WINDOW = CompactWindowRules(suffixes=True, floor=100_000)
REACTIVE = ReactiveRules(compacts_on_prompt_too_long=True)
PARTIAL = PartialCompactionRules(
    keeps_recent_messages=True,
    manual_writes_summary_transcript=False,
    pre_tokens_below_trigger=6,
    notes=(
        "how many of the latest messages stay verbatim after the summary was not observed",
        "the summary starts with a block listing the tools used before it",
    ),
)
SETTINGS = SettingsRules(
    memory_dir_sources=(
        "policySettings",
        "flagSettings",
        "localSettings",
        "projectSettings",
        "userSettings",
    ),
    notes=(
        "autoMemoryDirectory in the project's .claude/settings.json counts once the workspace "
        "is trusted (`claude -p` trusts it); the setting's own help text still says otherwise",
    ),
)
PROJECT_DIR = ProjectDirRules(
    name_env="CLAUDE_CODE_PROJECT_DIR_NAME",
    notes=("observed with CLAUDE_CONFIG_DIR set; without it the variable was not tried",),
)
UNICODE = UnicodePathRules(nfc_project_root=False, runs_in_non_nfc_folder=True)
INDEX = IndexLoadRules(
    folds_crlf=True,
    trims_unit_separator=True,
    warning_quotes_cut=True,
    notes=("how much of the first cut line the warning quotes was not measured",),
)
MEMORY_FILES = MemoryFileRules(
    reads_type_at=("top-level", "metadata"),
    writes_type_at="metadata",
    kebab_names=True,
    body_links=True,
    notes=(
        "reading a top-level type was not observed; assumed, since older files use it",
        "the file name Claude Code picks was not observed; the workbench names the file "
        "after the kebab-case name",
    ),
)
PROMPT = PromptRules(
    style="flat",
    notes=(
        "only the single-folder prompt was observed; the team and daily-log prompts keep "
        "2.1.88's shape",
    ),
)
RECORDS = RecordRules(
    record_types=LEGACY_RECORD_TYPES | NEW_RECORD_TYPES.keys(),
    attachment_types=LEGACY_ATTACHMENT_TYPES | NEW_ATTACHMENT_TYPES.keys(),
)
DREAM = DreamRules(
    gates_known=False,
    notes=(
        "with autoDreamEnabled and six earlier sessions, 2.1.332 did not consolidate at the "
        "end of the turn where 2.1.88 did; why is not known, so the gates shown are 2.1.88's",
    ),
)
OBSERVABILITY = ObservabilityRules(
    not_observed={
        "recall": "2.1.88's selector and manifest",
        "extraction": "2.1.88's extraction agent",
        "session memory": "2.1.88's update thresholds and template",
        "team memory": "2.1.88's sync protocol",
        "time-based micro-compaction": "2.1.88's gap and keep-recent rules",
    }
)

FAMILIES = {
    "models": MODELS,
    "compact-window": COMPACT_WINDOW,
    "reactive-compaction": REACTIVE,
    "partial-compaction": PARTIAL,
    "settings": SETTINGS,
    "project-dir-name": PROJECT_DIR,
    "unicode-paths": UNICODE,
    "index-loading": INDEX,
    "memory-files": MEMORY_FILES,
    "memory-prompt": PROMPT,
    "transcript-records": RECORDS,
    "auto-dream": DREAM,
    "observability": OBSERVABILITY,
    "instruction-files": instruction_rules.CURRENT,
}
