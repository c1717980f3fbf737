"""The families of rules a Claude Code release is made of, one frozen dataclass each.

`legacy.py` fills them in for 2.1.88 (from its source, specs 01–04) and `current.py` for
2.1.332 (observed on the real CLI, spec 08). Where a fact could not be observed, the field
says so (`known_from`, `notes`) instead of pretending; the front ends show those notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar, dataclass_transform

_T = TypeVar("_T")


# Families are singletons per release, compared by identity: leaving out the generated
# __eq__/__hash__/__repr__ halves what defining them costs every command at start-up.
# `dataclass_transform` tells the type checker this wrapper makes frozen dataclasses.
@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def _family(cls: type[_T]) -> type[_T]:
    return dataclass(frozen=True, eq=False, repr=False)(cls)


KnownFrom = Literal["source", "observed", "assumed"]
"""Where a fact comes from: 2.1.88's source, an observation of the real CLI, or carried over
from the older release without having been observed."""

# --- models -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelRow:
    """What one release does with the models whose canonical name contains `match`."""

    match: str
    window: int
    default_output: int
    upper_output: int
    threshold_compaction: bool = True
    """Whether the release auto-compacts this model when the count reaches a threshold."""
    known_from: KnownFrom = "source"
    note: str | None = None
    """What is not known about this row, in a few words."""


@dataclass(frozen=True)
class ModelFacts:
    """A model looked up in a release's table."""

    model: str
    canonical: str
    row: ModelRow
    listed: bool
    """A row of the table matched (False: the release's rule for models it does not know)."""


@_family
class ModelRules:
    """The model table and the rules around it."""

    default_model: str
    aliases: Mapping[str, str]
    canonical_names: tuple[str, ...]
    """First substring match wins, so specific names come before their prefixes."""
    rows: tuple[ModelRow, ...]
    """Checked in order against the canonical name; the first row whose `match` it contains
    applies."""
    fallback: ModelRow
    """What the release does with a model no row matches."""
    window_override_enables_threshold: bool = False
    """`CLAUDE_CODE_AUTO_COMPACT_WINDOW` turns threshold compaction on for models without it."""
    blocking_without_threshold: bool = True
    """Client-side blocking applies while auto-compact is on for a model with no threshold."""
    aliases_known_from: KnownFrom = "source"
    default_model_known_from: KnownFrom = "source"

    def resolve_alias(self, model: str) -> str:
        """`sonnet`, `opus`, `haiku` (and `[1m]` forms) as the full ids this release uses."""
        return self.aliases.get(model.strip().lower(), model.strip())

    def canonical_name(self, model: str) -> str:
        """The first known family name inside `model`, else the model string lower-cased."""
        lowered = self.resolve_alias(model).lower()
        for name in self.canonical_names:
            if name in lowered:
                return name
        return lowered

    def lookup(self, model: str) -> ModelFacts:
        """The row that applies to `model` (the fallback when none does)."""
        resolved = self.resolve_alias(model)
        canonical = self.canonical_name(resolved)
        for row in self.rows:
            if row.match in canonical:
                return ModelFacts(resolved, canonical, row, listed=True)
        return ModelFacts(resolved, canonical, self.fallback, listed=False)


# --- thresholds -----------------------------------------------------------------------------


@_family
class CompactWindowRules:
    """How `CLAUDE_CODE_AUTO_COMPACT_WINDOW` is read."""

    suffixes: bool
    """`150k` means 150,000 (and `1m` 1,000,000); without, `parseInt` reads `150k` as 150."""
    floor: int | None
    """Smaller values count as this."""


@_family
class ReactiveRules:
    """What happens when the API refuses a prompt as too long."""

    compacts_on_prompt_too_long: bool
    """True: compact (the trigger is recorded in the boundary) and retry; False: an error
    message and the turn stops."""


@_family
class PartialCompactionRules:
    """How a compaction is written."""

    keeps_recent_messages: bool
    """The latest messages stay verbatim after the summary (a preserved segment)."""
    manual_writes_summary_transcript: bool
    """A manual `/compact` writes the summarising call as `subagents/agent-acompact-*.jsonl`."""
    pre_tokens_below_trigger: int = 0
    """How far under the count that fired a recorded `preTokens` may sit (observed: 6 on
    claude-opus-5-5 in 2.1.332; 0 in 2.1.88, where both are the same count)."""
    notes: tuple[str, ...] = ()


# --- paths and settings ---------------------------------------------------------------------


@_family
class SettingsRules:
    """Where `autoMemoryDirectory` may come from."""

    memory_dir_sources: tuple[str, ...]
    """Settings sources honoured, first defined value wins."""
    notes: tuple[str, ...] = ()


@_family
class ProjectDirRules:
    """How the folder under `projects/` is named."""

    name_env: str | None
    """The variable that replaces `sanitizePath(...)` as the folder name, if any."""
    name_pattern: str = r"[A-Za-z0-9_-]{1,64}"
    notes: tuple[str, ...] = ()


@_family
class UnicodePathRules:
    """Project folders whose path is not in NFC."""

    nfc_project_root: bool
    """The project root is NFC-normalised before it is sanitised."""
    runs_in_non_nfc_folder: bool
    """False: the release exits without doing anything in such a folder."""


# --- MEMORY.md, memory files, the prompt ------------------------------------------------------


@_family
class IndexLoadRules:
    """How MEMORY.md is loaded (both releases cut at 200 lines, then 25,000 UTF-16 units)."""

    folds_crlf: bool
    """CRLF becomes LF in the loaded text (the `\\r` still counts toward the 25,000 limit)."""
    trims_unit_separator: bool
    """A trailing U+001F is trimmed with the whitespace."""
    warning_quotes_cut: bool
    """The warning says how many lines were cut and quotes the start of the first one."""
    notes: tuple[str, ...] = ()


TypeLocation = Literal["top-level", "metadata"]


@_family
class MemoryFileRules:
    """The memory-file format a release reads and writes."""

    reads_type_at: tuple[TypeLocation, ...]
    writes_type_at: TypeLocation
    kebab_names: bool
    """`name` is written as a short kebab-case slug (and names the file)."""
    body_links: bool
    """Bodies link other memories as `[[name]]`."""
    notes: tuple[str, ...] = ()


@_family
class PromptRules:
    """The shape of the memory instructions the agent receives."""

    style: Literal["sectioned", "flat"]
    notes: tuple[str, ...] = ()


# --- transcripts, dream, what could be observed ------------------------------------------------


@_family
class RecordRules:
    """The record types a release writes into transcripts (see `records.py` for which of
    them the model reads)."""

    record_types: frozenset[str]
    attachment_types: frozenset[str]


@_family
class DreamRules:
    """The automatic background consolidation."""

    gates_known: bool
    """False: the release did not run it where 2.1.88's gates say it would (reason unknown)."""
    notes: tuple[str, ...] = ()


@_family
class ObservabilityRules:
    """Features whose behaviour in this release is not known first hand."""

    not_observed: Mapping[str, str] = field(default_factory=dict)
    """Feature → what the workbench assumes instead."""
