"""Small pure helpers that turn engine values into short display strings."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from workbench.engine.memories.models import LintFinding, MemoryEntry

# Counted nouns are the engine's (its messages use them too); the panes take them from here.
from workbench.engine.models import plural as plural
from workbench.engine.models import plural_noun as plural_noun

if TYPE_CHECKING:
    from workbench.engine.claude_paths import Locations

DAY_MS = 86_400_000
TYPE_BADGES: dict[str | None, str] = {
    "user": "U",
    "feedback": "F",
    "project": "P",
    "reference": "R",
    None: "·",
}
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
SEVERITY_MARKS = {"error": "✖", "warning": "▲", "info": "·"}


def age_days(mtime_ms: float, now_ms: float) -> int:
    """Whole days since `mtime_ms`, never negative (Claude Code's memoryAgeDays)."""
    return max(0, math.floor((now_ms - mtime_ms) / DAY_MS))


def age_short(days: int) -> str:
    """A tree-column age: `today`, `12d`, `5mo`, `2y`."""
    if days <= 0:
        return "today"
    if days < 100:
        return f"{days}d"
    if days < 730:
        return f"{days // 30}mo"
    return f"{days // 365}y"


def age_long(days: int) -> str:
    """An age for sentences: `today`, `yesterday`, `47 days ago`."""
    if days <= 0:
        return "today"
    if days == 1:
        return "yesterday"
    return f"{days} days ago"


def tokens_short(tokens: int) -> str:
    """`312`, `1.2k`, `48k`."""
    if tokens < 1000:
        return str(tokens)
    if tokens < 10_000:
        return f"{tokens / 1000:.1f}k"
    return f"{round(tokens / 1000)}k"


def worst_severity(findings: Iterable[LintFinding]) -> str | None:
    """The most serious severity among `findings`, or None."""
    worst: str | None = None
    for finding in findings:
        if worst is None or SEVERITY_ORDER[finding.severity] < SEVERITY_ORDER[worst]:
            worst = finding.severity
    return worst


def filter_terms(text: str) -> tuple[str, ...]:
    """Lower-cased, whitespace-separated filter terms."""
    return tuple(term for term in text.lower().split() if term)


def entry_matches(entry: MemoryEntry, terms: tuple[str, ...]) -> bool:
    """Every term appears in the name, path, description or type (`type:feedback` also works)."""
    if not terms:
        return True
    haystack = " ".join(
        part
        for part in (
            entry.name,
            entry.path,
            entry.description or "",
            f"type:{entry.type or 'none'}",
        )
        if part
    ).lower()
    return all(term in haystack for term in terms)


def display_memory_dir(locations: Locations) -> str:
    """The memory folder for the status line: the default layout shown symbolically.

    The default folder is `<config home>/projects/<sanitised root>/memory/`; spelling out the
    sanitised root adds nothing, so it reads `<project>` (the full path is in the help screen).
    """
    config = locations.config_home.rstrip("/")
    home = locations.home.rstrip("/")
    config_label = "~/.claude" if config == f"{home}/.claude" else "$CLAUDE_CONFIG_DIR"
    default = f"{config}/projects/{locations.sanitized_project}/memory/"
    if locations.memory_dir == default:
        return f"{config_label}/projects/<project>/memory/"
    memory_dir = locations.memory_dir
    if home and memory_dir.startswith(home + "/"):
        return "~" + memory_dir[len(home) :]
    return memory_dir


def memory_dir_label(locations: Locations) -> str:
    """The memory folder as it is on disk, the home folder written `~`."""
    home = locations.home.rstrip("/")
    memory_dir = locations.memory_dir
    if home and memory_dir.startswith(home + "/"):
        return "~" + memory_dir[len(home) :]
    return memory_dir


def duration_words(minutes: float) -> str:
    """A span of time as people say it: `under a minute`, `12 minutes`, `5 hours`, `3 days`."""
    minutes = max(0.0, minutes)
    if minutes < 1:
        return "under a minute"
    for size, unit in ((1440, "day"), (60, "hour"), (1, "minute")):
        # Hours from two hours on, days from two days on: "90 minutes", "36 hours".
        if minutes >= 2 * size or size == 1:
            count = int(minutes // size)
            return plural(count, unit)
    raise AssertionError("unreachable")


def project_name(locations: Locations) -> str:
    """The project's folder name."""
    return os.path.basename(locations.project_root.rstrip("/")) or locations.project_root
