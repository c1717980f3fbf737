"""The families of rules a Claude Code release is made of, one small class each.

`timeline.py` says which value each rule has in which releases; `profile_for` builds these
objects from those values. Where a fact could not be observed, the field says so
(`known_from`, `notes`) instead of pretending; the front ends show those notes.

Plain classes with slots rather than dataclasses: every command imports this module, and a
dataclass compiles its methods at import time (a dozen of them cost more than the rest of the
package). Build them with keywords; treat them as read-only. Families are interned by
`profile_for` (equal values, one object), so comparing them by identity is comparing rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

KnownFrom = Literal["source", "observed", "assumed"]
"""Where a fact comes from: 2.1.88's source, an observation of the real CLI, or carried over
without having been observed."""
TypeLocation = Literal["top-level", "metadata"]
BlockingOverride = Literal["blocks", "compacts", "ignored"]


class _Rules:
    """Read-only attribute holder: keyword construction, a readable repr."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values().items())
        return f"{type(self).__name__}({inner})"


# --- models -------------------------------------------------------------------------------


class ModelRow(_Rules):
    """What one release does with the models whose canonical name contains `match`."""

    __slots__ = (
        "match",
        "window",
        "default_output",
        "upper_output",
        "threshold_compaction",
        "estimate_padding",
        "known_from",
        "note",
    )

    def __init__(
        self,
        match: str,
        window: int,
        default_output: int,
        upper_output: int,
        *,
        threshold_compaction: bool = True,
        estimate_padding: bool = False,
        known_from: KnownFrom = "source",
        note: str | None = None,
    ) -> None:
        self.match = match
        self.window = window
        self.default_output = default_output
        self.upper_output = upper_output
        self.threshold_compaction = threshold_compaction
        """Whether the release auto-compacts this model when the count reaches a threshold."""
        self.estimate_padding = estimate_padding
        """The auto-compact check pads the estimate after the last usage by 4/3, rounded up
        (the boundary's `preTokens` records it unpadded)."""
        self.known_from = known_from
        self.note = note
        """What is not known about this row, in a few words."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelRow) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(tuple(self._values().values()))


class ModelFacts(_Rules):
    """A model looked up in a release's table."""

    __slots__ = ("model", "canonical", "row", "listed")

    def __init__(self, model: str, canonical: str, row: ModelRow, listed: bool) -> None:
        self.model = model
        self.canonical = canonical
        self.row = row
        self.listed = listed
        """A row of the table matched (False: the release's rule for models it does not
        know)."""


class ModelRules(_Rules):
    """The model table and the rules around it."""

    __slots__ = (
        "default_model",
        "aliases",
        "canonical_names",
        "rows",
        "fallback",
        "window_override_enables_threshold",
        "blocking_without_threshold",
        "aliases_known_from",
        "default_model_known_from",
    )

    def __init__(
        self,
        *,
        default_model: str,
        aliases: Mapping[str, str],
        canonical_names: tuple[str, ...],
        rows: tuple[ModelRow, ...],
        fallback: ModelRow,
        window_override_enables_threshold: bool = False,
        blocking_without_threshold: bool = True,
        aliases_known_from: KnownFrom = "source",
        default_model_known_from: KnownFrom = "source",
    ) -> None:
        self.default_model = default_model
        self.aliases = aliases
        self.canonical_names = canonical_names
        """First substring match wins, so specific names come before their prefixes."""
        self.rows = rows
        """Checked in order against the canonical name; the first row whose `match` it
        contains applies."""
        self.fallback = fallback
        """What the release does with a model no row matches."""
        self.window_override_enables_threshold = window_override_enables_threshold
        """`CLAUDE_CODE_AUTO_COMPACT_WINDOW` turns threshold compaction on for models
        without it."""
        self.blocking_without_threshold = blocking_without_threshold
        """Client-side blocking applies while auto-compact is on for a model with no
        threshold."""
        self.aliases_known_from = aliases_known_from
        self.default_model_known_from = default_model_known_from

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


class CompactWindowRules(_Rules):
    """How `CLAUDE_CODE_AUTO_COMPACT_WINDOW` is read."""

    __slots__ = ("suffixes", "floor")

    def __init__(self, *, suffixes: bool, floor: int | None) -> None:
        self.suffixes = suffixes
        """`150k` means 150,000 (and `1m` 1,000,000); without, `parseInt` reads `150k` as
        150."""
        self.floor = floor
        """Smaller values count as this."""


class AutoCompactRules(_Rules):
    """When the auto-compact check runs, and what the blocking override does beside it."""

    __slots__ = ("checks_after_first_reply", "blocking_override", "notes")

    def __init__(
        self,
        *,
        checks_after_first_reply: bool,
        blocking_override: BlockingOverride,
        notes: tuple[str, ...] = (),
    ) -> None:
        self.checks_after_first_reply = checks_after_first_reply
        """False: a session's first reply is never followed by an auto-compaction, however
        large its count (the check runs from the second reply on)."""
        self.blocking_override = blocking_override
        """With auto-compact on, `CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE` `blocks` prompts at its
        value, `compacts` there instead, or is `ignored` (no block, no compaction at it)."""
        self.notes = notes


class ReactiveRules(_Rules):
    """What happens when the API refuses a prompt as too long."""

    __slots__ = ("compacts_on_prompt_too_long",)

    def __init__(self, *, compacts_on_prompt_too_long: bool) -> None:
        self.compacts_on_prompt_too_long = compacts_on_prompt_too_long
        """True: compact (the trigger is recorded in the boundary) and retry; False: an error
        message and the turn stops."""


class PartialCompactionRules(_Rules):
    """How a compaction is written."""

    __slots__ = ("keeps_recent_messages", "manual_writes_summary_transcript", "notes")

    def __init__(
        self,
        *,
        keeps_recent_messages: bool,
        manual_writes_summary_transcript: bool,
        notes: tuple[str, ...] = (),
    ) -> None:
        self.keeps_recent_messages = keeps_recent_messages
        """The latest messages stay verbatim after the summary (a preserved segment)."""
        self.manual_writes_summary_transcript = manual_writes_summary_transcript
        """A manual `/compact` writes the summarising call as
        `subagents/agent-acompact-*.jsonl`."""
        self.notes = notes


# --- paths and settings ---------------------------------------------------------------------


class SettingsRules(_Rules):
    """Where `autoMemoryDirectory` may come from."""

    __slots__ = ("memory_dir_sources", "notes")

    def __init__(self, *, memory_dir_sources: tuple[str, ...], notes: tuple[str, ...] = ()):
        self.memory_dir_sources = memory_dir_sources
        """Settings sources honoured, first defined value wins."""
        self.notes = notes


class ProjectDirRules(_Rules):
    """How the folder under `projects/` is named."""

    __slots__ = ("name_env", "name_pattern", "notes")

    def __init__(
        self,
        *,
        name_env: str | None,
        name_pattern: str = r"[A-Za-z0-9_-]{1,64}",
        notes: tuple[str, ...] = (),
    ) -> None:
        self.name_env = name_env
        """The variable that replaces `sanitizePath(...)` as the folder name, if any."""
        self.name_pattern = name_pattern
        self.notes = notes


class UnicodePathRules(_Rules):
    """Project folders whose path is not in NFC."""

    __slots__ = ("nfc_project_root", "runs_in_non_nfc_folder")

    def __init__(self, *, nfc_project_root: bool, runs_in_non_nfc_folder: bool) -> None:
        self.nfc_project_root = nfc_project_root
        """The project root is NFC-normalised before it is sanitised."""
        self.runs_in_non_nfc_folder = runs_in_non_nfc_folder
        """False: the release exits without doing anything in such a folder."""


# --- MEMORY.md, memory files, the prompt ------------------------------------------------------


class IndexLoadRules(_Rules):
    """How MEMORY.md is loaded (every release cuts at 200 lines, then 25,000 UTF-16 units,
    counted on the text as written)."""

    __slots__ = ("cleans_text", "warning_quotes_cut", "notes")

    def __init__(
        self, *, cleans_text: bool, warning_quotes_cut: bool, notes: tuple[str, ...] = ()
    ) -> None:
        self.cleans_text = cleans_text
        """What loads is cleaned after the cut: CR (alone or before LF), U+2028 and U+2029
        become LF, invisible characters (controls, formats, private use, unassigned,
        default-ignorables but ZWJ, ZWNJ and the emoji selectors) are removed, and the
        result is trimmed again (see `index_chars.py`)."""
        self.warning_quotes_cut = warning_quotes_cut
        """The warning says how many lines were cut and quotes the start of the first one."""
        self.notes = notes


class MemoryFileRules(_Rules):
    """The memory-file format a release reads and writes."""

    __slots__ = ("reads_type_at", "writes_type_at", "kebab_names", "body_links", "notes")

    def __init__(
        self,
        *,
        reads_type_at: tuple[TypeLocation, ...],
        writes_type_at: TypeLocation,
        kebab_names: bool,
        body_links: bool,
        notes: tuple[str, ...] = (),
    ) -> None:
        self.reads_type_at = reads_type_at
        self.writes_type_at = writes_type_at
        self.kebab_names = kebab_names
        """`name` is written as a short kebab-case slug (and names the file)."""
        self.body_links = body_links
        """Bodies link other memories as `[[name]]`."""
        self.notes = notes


class PromptRules(_Rules):
    """The shape of the memory instructions the agent receives."""

    __slots__ = ("style", "notes")

    def __init__(self, *, style: Literal["sectioned", "flat"], notes: tuple[str, ...] = ()):
        self.style = style
        self.notes = notes


# --- transcripts, dream, what could be observed ------------------------------------------------


class RecordRules(_Rules):
    """The record types a release writes into transcripts (see `records.py` for which of
    them the model reads)."""

    __slots__ = ("record_types", "attachment_types")

    def __init__(self, *, record_types: frozenset[str], attachment_types: frozenset[str]):
        self.record_types = record_types
        self.attachment_types = attachment_types


class DreamRules(_Rules):
    """The automatic background consolidation."""

    __slots__ = ("gates_known", "notes")

    def __init__(self, *, gates_known: bool, notes: tuple[str, ...] = ()) -> None:
        self.gates_known = gates_known
        """False: the release did not run it where 2.1.88's gates say it would (reason
        unknown)."""
        self.notes = notes


class ObservabilityRules(_Rules):
    """Features whose behaviour in this release is not known first hand."""

    __slots__ = ("not_observed",)

    def __init__(self, *, not_observed: Mapping[str, str] | None = None) -> None:
        self.not_observed: Mapping[str, str] = not_observed or {}
        """Feature → what the workbench assumes instead."""
