"""Claude Code 2.1.332: the rules observed on the real CLI (spec 08), the values rules take
after their changes (`timeline.py` says from which release; `build.py` assembles them).

Only behaviour was observed, never source. Facts that could not be observed keep 2.1.88's
rule and say so (`known_from="assumed"`, notes), so a front end never presents a guess as a
measurement.
"""

from __future__ import annotations

from workbench.engine.profiles import legacy
from workbench.engine.profiles.rules import (
    DreamRules,
    IndexLoadRules,
    MemoryFileRules,
    ModelRow,
    ObservabilityRules,
    PartialCompactionRules,
    ProjectDirRules,
    PromptRules,
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


def assumed(row: ModelRow) -> ModelRow:
    """A 2.1.88 row carried over to a newer release without having been observed there."""
    return ModelRow(
        row.match,
        row.window,
        row.default_output,
        row.upper_output,
        known_from="assumed",
        note=_ASSUMED,
    )


OBSERVED_ROWS = {
    "opus-4-6": ModelRow("opus-4-6", WINDOW_200K, 64_000, 128_000, known_from="observed"),
    "sonnet-4-6": ModelRow("sonnet-4-6", WINDOW_200K, 32_000, 128_000, known_from="observed"),
    "opus-4-5": _no_threshold("opus-4-5", 32_000, 64_000),
    "sonnet-4-5": _no_threshold("sonnet-4-5", 32_000, 64_000),
    "haiku-4-5": _no_threshold("haiku-4-5", 32_000, 64_000),
    "3-5-haiku": _no_threshold("3-5-haiku", 8_192, 8_192),
}
"""2.1.88's rows as observed on 2.1.332 (from 2.1.153 the 4-5 models lost their threshold)."""

UNCHANGED_ROWS = (
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
"""2.1.88 rows nobody observed on a newer release (kept, marked assumed)."""


def _newer(match: str, default: int, upper: int, note: str | None = None) -> ModelRow:
    return ModelRow(match, WINDOW_1M, default, upper, known_from="observed", note=note)


NEWER_ORDER = ("sonnet-5-5", "haiku-5-5", "opus-4-7", "opus-4-8", "opus-5", "sonnet-5")
"""Checked in this order, after claude-opus-5-5 (`opus-5` is a prefix of `opus-5-5`)."""
NEWER_ROWS = {
    "sonnet-5-5": _newer("sonnet-5-5", 128_000, 128_000, "its upper output limit was not observed"),
    "haiku-5-5": _newer("haiku-5-5", 128_000, 128_000, "its upper output limit was not observed"),
    "opus-4-7": _newer("opus-4-7", 64_000, 128_000, "its upper output limit was not observed"),
    "opus-4-8": _newer("opus-4-8", 64_000, 128_000, "its upper output limit was not observed"),
    "opus-5": _newer("opus-5", 64_000, 128_000, "its upper output limit was not observed"),
    "sonnet-5": ModelRow(
        "sonnet-5",
        WINDOW_1M,
        128_000,
        128_000,
        known_from="assumed",
        note="not observed: assumed to behave like claude-sonnet-5-5",
    ),
}
"""Models newer than 2.1.88, as observed on 2.1.332: a 1M window, compaction by threshold at
967,000 (the windows in the releases between were probed for claude-opus-5-5 only)."""
NEWER_NAMES = (
    "claude-opus-5-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-5",
    "claude-sonnet-5",
)
"""Canonical names the newer releases add (specific names before their prefixes)."""


def newer_row(match: str, window: str) -> ModelRow:
    """A newer model's row with a `1m` window, a `200k` one, or `none` (not compacted by
    threshold), as the default model of the release showed when named."""
    row = NEWER_ROWS[match]
    if window == "1m":
        return row
    return ModelRow(
        match,
        WINDOW_200K,
        row.default_output,
        row.upper_output,
        threshold_compaction=window != "none",
        known_from="assumed",
        note="probed on this release's default model only: assumed alike",
    )


def opus_5_5_row(window: str) -> ModelRow:
    """claude-opus-5-5 with a `200k` (2.1.219–2.1.284) or a `1m` window (2.1.285 on)."""
    if window == "200k":
        return ModelRow(
            "opus-5-5",
            WINDOW_200K,
            64_000,
            64_000,
            known_from="observed",
            note="a 200,000 window in this release; its output limits were not observed",
        )
    return ModelRow(
        "opus-5-5",
        WINDOW_1M,
        128_000,
        128_000,
        known_from="observed",
        note="its upper output limit was not observed",
    )


def fallback_row(rule: str) -> ModelRow:
    """What a release does with a model it does not know: `200k` (compaction by threshold on
    the default window), `none` (2.1.153–2.1.222: no threshold compaction) or `1m`
    (2.1.323 on: the 1M window's threshold, observed at 967,000)."""
    if rule == "1m":
        return ModelRow(
            "",
            WINDOW_1M,
            32_000,
            64_000,
            known_from="observed",
            note="it gets a 1,000,000 window (observed)",
        )
    if rule == "none":
        return ModelRow(
            "",
            WINDOW_200K,
            32_000,
            64_000,
            threshold_compaction=False,
            known_from="observed",
            note="it is not compacted by threshold (observed)",
        )
    return ModelRow(
        "",
        WINDOW_200K,
        32_000,
        64_000,
        note="it gets the default window and output limits",
    )


PARTIAL = PartialCompactionRules(
    keeps_recent_messages=True,
    manual_writes_summary_transcript=False,
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
    cleans_text=True,
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
