"""Behaviour profiles: what each Claude Code release does, in the places the workbench measures.

One place says, for any release number, which rules apply: the model table and thresholds,
how `CLAUDE_CODE_AUTO_COMPACT_WINDOW` is read, path and settings rules, how MEMORY.md loads,
the memory-file format, the memory prompt's shape, which transcript records are context,
partial and reactive compaction, the automatic dream, and what could not be observed.
Everything that computes one of these asks a `BehaviourProfile`; nothing else compares
release numbers. Where each rule changed is data (`timeline.TIMELINE`).

    profile = profile_for("2.1.332")
    profile.models.lookup("claude-sonnet-4-5").row.threshold_compaction   # False
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from workbench.engine.profiles import build
from workbench.engine.profiles.instruction_rules import InstructionRules
from workbench.engine.profiles.rules import (
    AutoCompactRules,
    CompactWindowRules,
    DreamRules,
    IndexLoadRules,
    MemoryFileRules,
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
from workbench.engine.profiles.timeline import NEWEST_RELEASE, OLDEST, TIMELINE, Timeline
from workbench.engine.profiles.versions import format_version, parse_version
from workbench.engine.records import Record

__all__ = [
    "BehaviourProfile",
    "NEWEST_RELEASE",
    "newest_profile",
    "parse_version",
    "profile_for",
]

OLD_BEHAVIOUR = OLDEST
NEW_BEHAVIOUR = NEWEST_RELEASE


class BehaviourProfile(Record, eq=False):
    """The rules of one Claude Code release, family by family."""

    version: str
    """The release these rules are for."""
    behaviours: tuple[tuple[str, str], ...]
    """(family, behaviour label) for every family: `2.1.88` or `2.1.332` when all its rules
    have that release's values, else `as of X` (the last change it has)."""
    uncertain: tuple[str, ...]
    """Rules whose change point is not pinned down for this release (it lies between the
    last release seen with the old value and the first seen with the new one)."""
    values: tuple[tuple[str, object], ...]
    """(rule, value) for every rule of the timeline."""
    models: ModelRules
    compact_window: CompactWindowRules
    auto_compact: AutoCompactRules
    reactive: ReactiveRules
    partial: PartialCompactionRules
    settings: SettingsRules
    project_dir: ProjectDirRules
    unicode: UnicodePathRules
    index: IndexLoadRules
    memory_files: MemoryFileRules
    prompt: PromptRules
    records: RecordRules
    dream: DreamRules
    observability: ObservabilityRules
    instructions: InstructionRules

    @property
    def name(self) -> str:
        """`2.1.88` or `2.1.332` when every family behaves like that release, else `mixed`."""
        labels = {label for _, label in self.behaviours}
        return labels.pop() if len(labels) == 1 else "mixed"

    @property
    def newer_than_observed(self) -> bool:
        """The release is newer than any the rules were observed on."""
        return _key(self.version) > _key(NEWEST_RELEASE)

    def notes(self, *, unobserved: bool = True) -> list[str]:
        """What users should know about this profile, in a few lines (`unobserved=False`
        leaves out the features that could not be observed, for answers not about them)."""
        out: list[str] = []
        if self.newer_than_observed:
            out.append(
                f"Claude Code {self.version} is newer than the newest release profiled "
                f"({NEWEST_RELEASE}); its rules are assumed to be {NEWEST_RELEASE}'s"
            )
        if self.uncertain:
            out.append(
                f"for Claude Code {self.version} it is not known yet whether these changed: "
                + "; ".join(TIMELINE[r].what for r in self.uncertain)
                + f" (the {NEW_BEHAVIOUR} rules are assumed)"
            )
        if unobserved and self.observability.not_observed:
            names = ", ".join(self.observability.not_observed)
            out.append(
                f"{names} could not be observed on Claude Code {NEW_BEHAVIOUR}; "
                f"{OLD_BEHAVIOUR}'s rules are shown for them"
            )
        return out

    def unobserved(self, feature: str) -> str | None:
        """A note for a feature that could not be observed in this release, else None."""
        assumed = self.observability.not_observed.get(feature)
        if assumed is None:
            return None
        return (
            f"{feature} could not be observed on Claude Code {NEW_BEHAVIOUR} (it stays behind "
            f"server-side flags): this shows {assumed}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "name": self.name,
            "behaviours": dict(self.behaviours),
            "uncertain": list(self.uncertain),
            "rules": {rule: _jsonable(value) for rule, value in self.values},
            "notes": self.notes(),
        }


def _key(version: str) -> tuple[int, int, int]:
    parsed = parse_version(version)
    if parsed is None:
        raise ValueError(f"not a Claude Code version: {version!r}")
    return parsed


def _jsonable(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def _value_at(rule: Timeline, release: tuple[int, int, int]) -> tuple[object, bool, str]:
    """The rule's value in `release`, whether that is uncertain, and the release it dates
    from (the first release seen with it)."""
    value, uncertain, since = rule.initial, False, OLDEST
    for change in rule.changes:
        if release <= _key(change.last_old):
            break
        value, since = change.value, change.first_new
        uncertain = release < _key(change.first_new)
    return value, uncertain, since


@lru_cache(maxsize=64)
def profile_for(version: str) -> BehaviourProfile:
    """The rules of Claude Code `version` (X.Y.Z), rule by rule from the timeline."""
    release = _key(version)
    values: dict[str, object] = {}
    since: dict[str, str] = {}
    uncertain: list[str] = []
    for name, rule in TIMELINE.items():
        values[name], unsure, since[name] = _value_at(rule, release)
        if unsure:
            uncertain.append(name)
    families: dict[str, object] = {}
    behaviours: list[tuple[str, str]] = []
    for family, (rules, make) in build.FAMILIES.items():
        families[family] = make(*(values[r] for r in rules))
        newest = {_value_at(TIMELINE[r], _key(NEWEST_RELEASE))[0] == values[r] for r in rules}
        oldest = {TIMELINE[r].initial == values[r] for r in rules}
        if oldest == {True}:
            label = OLD_BEHAVIOUR
        elif newest == {True}:
            label = NEW_BEHAVIOUR
        else:
            label = "as of " + max((since[r] for r in rules), key=_key)
        behaviours.append((family, label))
    return BehaviourProfile(
        version=format_version(release),
        behaviours=tuple(behaviours),
        uncertain=tuple(uncertain),
        values=tuple(values.items()),
        models=families["models"],  # type: ignore[arg-type]
        compact_window=families["compact-window"],  # type: ignore[arg-type]
        auto_compact=families["auto-compact"],  # type: ignore[arg-type]
        reactive=families["reactive-compaction"],  # type: ignore[arg-type]
        partial=families["partial-compaction"],  # type: ignore[arg-type]
        settings=families["settings"],  # type: ignore[arg-type]
        project_dir=families["project-dir-name"],  # type: ignore[arg-type]
        unicode=families["unicode-paths"],  # type: ignore[arg-type]
        index=families["index-loading"],  # type: ignore[arg-type]
        memory_files=families["memory-files"],  # type: ignore[arg-type]
        prompt=families["memory-prompt"],  # type: ignore[arg-type]
        records=families["transcript-records"],  # type: ignore[arg-type]
        dream=families["auto-dream"],  # type: ignore[arg-type]
        observability=families["observability"],  # type: ignore[arg-type]
        instructions=families["instruction-files"],  # type: ignore[arg-type]
    )


def newest_profile() -> BehaviourProfile:
    """The rules of the newest profiled release (what `auto` falls back to)."""
    return profile_for(NEWEST_RELEASE)
