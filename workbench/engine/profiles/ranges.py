"""Where each rule changed between Claude Code releases: data, meant to be edited.

Every family of rules (see `rules.py`) has two known behaviours: the one of 2.1.88, the release
specs 01–04 were written from, and the one observed on 2.1.332 (spec 08). A release at or
before `last_old` behaves the old way, one at or after `first_new` the new way. In between,
nobody has looked yet: the profile takes the new behaviour and lists the family as uncertain,
so what users see says so. Bisecting releases against the real CLI (`make oracle`) narrows a
range by moving these two numbers; nothing else needs to change.
"""

from __future__ import annotations

from dataclasses import dataclass

OLD_BEHAVIOUR = "2.1.88"
"""The label of the older behaviour of every family (specs 01–04)."""
NEW_BEHAVIOUR = "2.1.332"
"""The label of the newer behaviour of every family (spec 08)."""
OBSERVED_RELEASES = (OLD_BEHAVIOUR, NEW_BEHAVIOUR)
"""Releases the rules were observed on (2.1.88 also from its source)."""
NEWEST_RELEASE = NEW_BEHAVIOUR
"""What `auto` falls back to when neither a transcript nor `claude --version` says."""


@dataclass(frozen=True)
class RuleChange:
    """The releases either side of one change: the last seen old, the first seen new."""

    last_old: str
    first_new: str
    what: str
    """The change in a few words (shown in `workbench paths --json` and the compatibility
    notes)."""


RULE_CHANGES: dict[str, RuleChange] = {
    "models": RuleChange(
        "2.1.88",
        "2.1.332",
        "model table: claude-opus-5-5 default with a 1M window; sonnet-4-5, haiku-4-5, "
        "opus-4-5 and 3-5-haiku no longer compact by threshold",
    ),
    "compact-window": RuleChange(
        "2.1.88",
        "2.1.332",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW takes k/m suffixes and has a 100,000 floor",
    ),
    "reactive-compaction": RuleChange(
        "2.1.88", "2.1.332", "a prompt-too-long refusal compacts and retries instead of stopping"
    ),
    "partial-compaction": RuleChange(
        "2.1.88", "2.1.332", "compaction keeps the latest messages verbatim after the summary"
    ),
    "settings": RuleChange(
        "2.1.88",
        "2.1.332",
        "autoMemoryDirectory is honoured from trusted project settings",
    ),
    "project-dir-name": RuleChange(
        "2.1.88", "2.1.332", "CLAUDE_CODE_PROJECT_DIR_NAME names the folder under projects/"
    ),
    "unicode-paths": RuleChange(
        "2.1.88", "2.1.332", "a project folder in NFD runs, keyed on its raw name"
    ),
    "index-loading": RuleChange(
        "2.1.88",
        "2.1.332",
        "MEMORY.md: CRLF folded and a trailing U+001F trimmed in what loads; the warning "
        "quotes where the cut falls",
    ),
    "memory-files": RuleChange(
        "2.1.88", "2.1.332", "memory files nest the type under metadata and use kebab-case names"
    ),
    "memory-prompt": RuleChange(
        "2.1.88", "2.1.332", "the memory prompt is one flat text instead of six sections"
    ),
    "transcript-records": RuleChange(
        "2.1.88", "2.1.332", "transcripts gain bookkeeping records (prompt snapshots, requests)"
    ),
    "auto-dream": RuleChange(
        "2.1.88", "2.1.332", "the automatic dream did not run where 2.1.88 ran it"
    ),
    "instruction-files": RuleChange(
        "2.1.88",
        "2.1.332",
        "rules folders load in directory order; managed CLAUDE.md files get their own "
        "description; files loaded for a Read are sent as separate blocks",
    ),
    "observability": RuleChange(
        "2.1.88",
        "2.1.332",
        "recall, extraction and session memory could not be observed on the newer release",
    ),
}
"""Family name → where its rules changed. Keys match the fields of `BehaviourProfile`."""
