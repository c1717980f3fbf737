"""Behaviour profiles: what each Claude Code release does, in the places the workbench measures.

One place says, for any release number, which rules apply: the model table and thresholds,
how `CLAUDE_CODE_AUTO_COMPACT_WINDOW` is read, path and settings rules, how MEMORY.md loads,
the memory-file format, the memory prompt's shape, which transcript records are context,
partial and reactive compaction, the automatic dream, and what could not be observed.
Everything that computes one of these asks a `BehaviourProfile`; nothing else compares
release numbers. Where each rule changed is data (`ranges.RULE_CHANGES`).

    profile = profile_for("2.1.332")
    profile.models.lookup("claude-sonnet-4-5").row.threshold_compaction   # False
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from workbench.engine.profiles import current, legacy
from workbench.engine.profiles.instruction_rules import InstructionRules
from workbench.engine.profiles.ranges import (
    NEW_BEHAVIOUR,
    NEWEST_RELEASE,
    OLD_BEHAVIOUR,
    RULE_CHANGES,
)
from workbench.engine.profiles.rules import (
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
from workbench.engine.profiles.versions import format_version, parse_version

__all__ = [
    "BehaviourProfile",
    "NEWEST_RELEASE",
    "newest_profile",
    "parse_version",
    "profile_for",
]

_BEHAVIOURS = {OLD_BEHAVIOUR: legacy.FAMILIES, NEW_BEHAVIOUR: current.FAMILIES}


@dataclass(frozen=True, eq=False)
class BehaviourProfile:
    """The rules of one Claude Code release, family by family."""

    version: str
    """The release these rules are for."""
    behaviours: tuple[tuple[str, str], ...]
    """(family, behaviour label) for every family: `2.1.88` or `2.1.332`."""
    uncertain: tuple[str, ...]
    """Families whose change point is not pinned down for this release (it lies between the
    last release seen with the old behaviour and the first seen with the new one)."""
    models: ModelRules
    compact_window: CompactWindowRules
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
                + "; ".join(RULE_CHANGES[f].what for f in self.uncertain)
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
            "notes": self.notes(),
        }


def _key(version: str) -> tuple[int, int, int]:
    parsed = parse_version(version)
    if parsed is None:
        raise ValueError(f"not a Claude Code version: {version!r}")
    return parsed


@lru_cache(maxsize=64)
def profile_for(version: str) -> BehaviourProfile:
    """The rules of Claude Code `version` (X.Y.Z), family by family."""
    release = _key(version)
    behaviours: list[tuple[str, str]] = []
    uncertain: list[str] = []
    for family, change in RULE_CHANGES.items():
        if release <= _key(change.last_old):
            behaviours.append((family, OLD_BEHAVIOUR))
        else:
            behaviours.append((family, NEW_BEHAVIOUR))
            if release < _key(change.first_new):
                uncertain.append(family)
    rules = {family: _BEHAVIOURS[label][family] for family, label in behaviours}
    return BehaviourProfile(
        version=format_version(release),
        behaviours=tuple(behaviours),
        uncertain=tuple(uncertain),
        models=rules["models"],  # type: ignore[arg-type]
        compact_window=rules["compact-window"],  # type: ignore[arg-type]
        reactive=rules["reactive-compaction"],  # type: ignore[arg-type]
        partial=rules["partial-compaction"],  # type: ignore[arg-type]
        settings=rules["settings"],  # type: ignore[arg-type]
        project_dir=rules["project-dir-name"],  # type: ignore[arg-type]
        unicode=rules["unicode-paths"],  # type: ignore[arg-type]
        index=rules["index-loading"],  # type: ignore[arg-type]
        memory_files=rules["memory-files"],  # type: ignore[arg-type]
        prompt=rules["memory-prompt"],  # type: ignore[arg-type]
        records=rules["transcript-records"],  # type: ignore[arg-type]
        dream=rules["auto-dream"],  # type: ignore[arg-type]
        observability=rules["observability"],  # type: ignore[arg-type]
        instructions=rules["instruction-files"],  # type: ignore[arg-type]
    )


def newest_profile() -> BehaviourProfile:
    """The rules of the newest profiled release (what `auto` falls back to)."""
    return profile_for(NEWEST_RELEASE)
