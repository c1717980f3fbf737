"""Where each rule changed, release by release: data, meant to be edited.

Every rule starts with the value 2.1.88 has (its source, specs 01–04) and lists each change
as the last release seen with the old value, the first seen with the new one, and the new
value. The releases come from bisecting the real CLI (`make oracle`; the findings are in
`tests/data/oracle/rule_changes.json` and docs/compatibility.md). A release between the two
numbers of a change gets the new value and is flagged as uncertain for that rule, so what
users see says so. `build.py` turns the values a release has into its families of rules;
nothing else compares release numbers.
"""

from __future__ import annotations

from typing import Any, NamedTuple

OLDEST = "2.1.88"
"""The release specs 01–04 describe: every rule's first value is its."""
NEWEST_RELEASE = "2.1.332"
"""The newest release observed; `auto` falls back to it when nothing says which is in use."""


class Change(NamedTuple):
    """One change of a rule: the last release seen before it, the first seen after it."""

    last_old: str
    first_new: str
    value: Any


class Timeline(NamedTuple):
    """A rule's value in 2.1.88 and every change since, oldest first."""

    family: str
    what: str
    """The rule in a few words (shown in notes and `workbench paths --json`)."""
    initial: Any
    changes: tuple[Change, ...]


def _t(family: str, what: str, initial: Any, *changes: tuple[str, str, Any]) -> Timeline:
    return Timeline(family, what, initial, tuple(Change(*c) for c in changes))


TIMELINE: dict[str, Timeline] = {
    # --- models ---------------------------------------------------------------------------
    "default-model": _t(
        "models",
        "the default model",
        "claude-sonnet-4-6",
        ("2.1.128", "2.1.129", "claude-opus-4-7"),
        ("2.1.153", "2.1.154", "claude-opus-4-8"),
        ("2.1.218", "2.1.219", "claude-opus-5"),
        ("2.1.278", "2.1.280", "claude-opus-5-5"),
    ),
    "alias-opus": _t(
        "models",
        "the model `opus` names",
        "claude-opus-4-6",
        ("2.1.110", "2.1.111", "claude-opus-4-7"),
        ("2.1.153", "2.1.154", "claude-opus-4-8"),
        ("2.1.218", "2.1.219", "claude-opus-5"),
        ("2.1.278", "2.1.280", "claude-opus-5-5"),
    ),
    "alias-sonnet": _t(
        "models",
        "the model `sonnet` names",
        "claude-sonnet-4-6",
        ("2.1.196", "2.1.197", "claude-sonnet-5"),
        ("2.1.283", "2.1.284", "claude-sonnet-5-5"),
    ),
    "alias-haiku": _t(
        "models",
        "the model `haiku` names",
        "claude-haiku-4-5-20251001",
        ("2.1.292", "2.1.293", "claude-haiku-5-5"),
    ),
    "newer-models": _t(
        "models",
        "models newer than 2.1.88 in the table (from the release that first names them as "
        "default or alias; their rows were observed on 2.1.332)",
        (),
        ("2.1.110", "2.1.111", ("opus-4-7",)),
        ("2.1.153", "2.1.154", ("opus-4-7", "opus-4-8")),
        ("2.1.196", "2.1.197", ("opus-4-7", "opus-4-8", "sonnet-5")),
        ("2.1.218", "2.1.219", ("opus-4-7", "opus-4-8", "sonnet-5", "opus-5")),
        ("2.1.283", "2.1.284", ("opus-4-7", "opus-4-8", "sonnet-5", "opus-5", "sonnet-5-5")),
        (
            "2.1.292",
            "2.1.293",
            ("opus-4-7", "opus-4-8", "sonnet-5", "opus-5", "sonnet-5-5", "haiku-5-5"),
        ),
    ),
    "no-threshold-models": _t(
        "models",
        "claude-sonnet-4-5, haiku-4-5, opus-4-5 and 3-5-haiku are not compacted by threshold",
        False,
        ("2.1.152", "2.1.153", True),
    ),
    "opus-5-5-window": _t(
        "models",
        "claude-opus-5-5: `unlisted` (the rule for unknown models applies), a `200k` or a "
        "`1m` window",
        "unlisted",
        ("2.1.218", "2.1.219", "200k"),
        ("2.1.284", "2.1.285", "1m"),
    ),
    "newer-model-window": _t(
        "models",
        "the other models newer than 2.1.88, named with --model (probed on the default model "
        "of each release): `unlisted`, a `1m` or `200k` window, or `none` (no threshold "
        "compaction); the default model left unnamed differs in 2.1.144–2.1.152 and "
        "2.1.217–2.1.284 (not modelled)",
        "unlisted",
        ("2.1.128", "2.1.129", "1m"),
        ("2.1.143", "2.1.144", "200k"),
        ("2.1.152", "2.1.153", "none"),
        ("2.1.216", "2.1.217", "200k"),
        ("2.1.284", "2.1.285", "1m"),
    ),
    "unknown-model": _t(
        "models",
        "a model the release does not know: `200k` (compacts by threshold), `none` (no "
        "threshold compaction) or `1m`",
        "200k",
        ("2.1.152", "2.1.153", "none"),
        ("2.1.222", "2.1.223", "200k"),
        ("2.1.322", "2.1.323", "1m"),
    ),
    "estimate-padding": _t(
        "models",
        "the auto-compact check pads the estimate after the last usage by 4/3 (models newer "
        "than 2.1.88 and unknown ones)",
        False,
        ("2.1.139", "2.1.140", True),
    ),
    # --- thresholds -----------------------------------------------------------------------
    "k-suffix": _t(
        "compact-window",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW takes k and m suffixes",
        False,
        ("2.1.88", "2.1.89", True),
    ),
    "window-floor": _t(
        "compact-window",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW below 100,000 counts as 100,000",
        None,
        ("2.1.88", "2.1.89", 100_000),
    ),
    "first-response": _t(
        "auto-compact",
        "auto-compaction can follow a session's first reply",
        True,
        ("2.1.152", "2.1.153", False),
    ),
    "blocking-override": _t(
        "auto-compact",
        "with auto-compact on, CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE `blocks` at its value, "
        "`compacts` there, or is `ignored`",
        "blocks",
        ("2.1.121", "2.1.122", "compacts"),
        ("2.1.152", "2.1.153", "ignored"),
        ("2.1.162", "2.1.163", "compacts"),
    ),
    "reactive-compaction": _t(
        "reactive-compaction",
        "a prompt-too-long refusal compacts and retries instead of stopping",
        False,
        ("2.1.152", "2.1.153", True),
    ),
    "partial-compaction": _t(
        "partial-compaction",
        "compaction keeps the latest messages verbatim after the summary",
        False,
        ("2.1.152", "2.1.153", True),
    ),
    # --- paths and settings ---------------------------------------------------------------
    "project-auto-memory-directory": _t(
        "settings",
        "autoMemoryDirectory is honoured from trusted project settings",
        False,
        ("2.1.156", "2.1.157", True),
    ),
    "project-dir-name": _t(
        "project-dir-name",
        "CLAUDE_CODE_PROJECT_DIR_NAME names the folder under projects/",
        False,
        ("2.1.233", "2.1.234", True),
    ),
    "nfd-project-folder": _t(
        "unicode-paths",
        "a project folder in NFD runs, keyed on its raw name",
        False,
        ("2.1.159", "2.1.160", True),
    ),
    # --- MEMORY.md, memory files, the prompt ----------------------------------------------
    "index-cleaning": _t(
        "index-loading",
        "MEMORY.md: CR folded to LF, invisible characters removed and the trim widened in "
        "what loads",
        False,
        ("2.1.283", "2.1.284", True),
    ),
    "truncation-warning-detail": _t(
        "index-loading",
        "the MEMORY.md truncation warning quotes where the cut falls",
        False,
        ("2.1.267", "2.1.268", True),
    ),
    "memory-file-format": _t(
        "memory-files",
        "memory files nest the type under metadata and use kebab-case names and [[links]]",
        False,
        ("2.1.138", "2.1.139", True),
    ),
    "memory-prompt-shape": _t(
        "memory-prompt",
        "the memory prompt is one flat text instead of six sections",
        False,
        ("2.1.153", "2.1.154", True),
    ),
    # --- transcripts, dream, what could be observed ---------------------------------------
    "record-kinds-attachment": _t(
        "transcript-records",
        "transcripts gain the newer attachment subtypes",
        False,
        ("2.1.92", "2.1.94", True),
    ),
    "record-kinds-prompt-snapshot": _t(
        "transcript-records",
        "transcripts gain prompt_snapshot attachments",
        False,
        ("2.1.267", "2.1.268", True),
    ),
    "record-kinds-api-request": _t(
        "transcript-records",
        "transcripts gain api-request records",
        False,
        ("2.1.299", "2.1.300", True),
    ),
    "auto-dream": _t(
        "auto-dream",
        "the automatic dream did not run where 2.1.88 ran it",
        True,
        ("2.1.88", "2.1.332", False),
    ),
    "observability": _t(
        "observability",
        "recall, extraction and session memory could not be observed on the newer release",
        False,
        ("2.1.88", "2.1.332", True),
    ),
}
"""Rule → its timeline. Adjacent `last_old`/`first_new` pairs were pinned by bisection; the
dream and observability changes were not bisected (nothing a `claude -p` run shows)."""
