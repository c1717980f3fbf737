"""Descriptions recall can never match well (a lint the store's `lint` command can call).

The selector sees only each memory's file name and description, so a memory with no
description, a description made of filler ("misc notes"), or the same description as another
file is effectively invisible or indistinguishable to recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.engine.memories.models import LintFinding
from workbench.engine.recall.words import STOPWORDS, words

if TYPE_CHECKING:
    from workbench.engine.memories.scan import MemoryHeader

GENERIC_WORDS = frozenset(
    """note notes misc miscellaneous stuff info information thing things memory memories
    various todo general random etc details detail important update updates file files data
    context remember useful see tbd wip temp untitled new old stuff item items list""".split()
)
MIN_TOPIC_WORDS = 2


def topic_words(description: str) -> list[str]:
    """The words of a description that say what it is about (no filler, no stopwords)."""
    return [
        w
        for w in words(description)
        if w not in STOPWORDS and w not in GENERIC_WORDS and not w.isdigit()
    ]


def description_problem(description: str | None) -> tuple[str, str] | None:
    """`(rule, message)` when one description cannot serve recall, else None."""
    if not description or not description.strip():
        return (
            "recall-description-missing",
            "no description: recall's selector sees only the file name, so it can hardly "
            "ever pick this memory",
        )
    topic = topic_words(description)
    if len(topic) < MIN_TOPIC_WORDS:
        return (
            "recall-description-generic",
            f"the description {description.strip()!r} is too generic to match a request; "
            "say what the memory is about (the subject, the rule, the system)",
        )
    return None


def lint_descriptions(headers: Sequence[MemoryHeader], memory_dir: str) -> list[LintFinding]:
    """Findings for missing, generic and duplicated descriptions across a memory folder."""
    findings: list[LintFinding] = []
    seen: dict[str, str] = {}
    for header in sorted(headers, key=lambda h: h.filename):
        if header.filename.startswith("logs/"):
            continue  # daily logs have no frontmatter by design
        problem = description_problem(header.description)
        if problem is not None:
            rule, message = problem
            findings.append(LintFinding(header.filename, rule, "warning", message))
            continue
        normalized = " ".join(words(header.description or ""))
        first = seen.setdefault(normalized, header.filename)
        if first != header.filename:
            findings.append(
                LintFinding(
                    header.filename,
                    "recall-description-duplicate",
                    "warning",
                    f"same description as {first}: the selector cannot tell the two apart",
                )
            )
    return findings
