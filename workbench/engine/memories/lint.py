"""Lint rules for memory files and the MEMORY.md index.

Each rule names something that makes Claude Code see less than the author meant: frontmatter
it cannot read, a type it will not recognise, an index line past the cut, a feedback memory
without its reason. Rule ids are part of the CLI contract (spec 05).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from workbench.engine.memories.file_format import BOTH_LOCATIONS, TypeReading, read_type
from workbench.engine.memories.frontmatter import (
    FRONTMATTER_MAX_LINES,
    MEMORY_TYPES,
    ParsedFrontmatter,
    parse_frontmatter,
)
from workbench.engine.memories.models import LintFinding
from workbench.engine.memories.staleness import STALE_AFTER_DAYS, stale_message
from workbench.engine.recall.description_lint import description_problem

# Recall surfaces at most this much of a file (readFileInRange with a line and byte cap).
SURFACE_MAX_LINES = 200
SURFACE_MAX_BYTES = 4096
LARGE_FILE_BYTES = 1_000_000

# `**Why:**` in bold anywhere, or `Why:` opening a line; likewise `How to apply:`. Two
# patterns each, not one alternation: sre finds a bold one by its `**` at once, but tries an
# alternation at every character.
_WHY = (
    re.compile(r"\*\*\s*why\s*:?\s*\*\*", re.IGNORECASE),
    re.compile(r"^\s*why\s*:", re.IGNORECASE | re.MULTILINE),
)
_HOW = (
    re.compile(r"\*\*\s*how\s+to\s+apply\s*:?\s*\*\*", re.IGNORECASE),
    re.compile(r"^\s*how\s+to\s+apply\s*:", re.IGNORECASE | re.MULTILINE),
)


def _says(marker: tuple[re.Pattern[str], re.Pattern[str]], body: str) -> bool:
    bold, opening = marker
    return bold.search(body) is not None or opening.search(body) is not None


_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# Phrases whose meaning depends on the day they were written ("next Friday"), not recurring
# schedules ("every Tuesday").
_RELATIVE_DATE = re.compile(
    r"\b(?:today|tomorrow|yesterday|tonight"
    rf"|(?:this|next|last|coming)\s+(?:week|month|quarter|year|sprint|weekend|{_WEEKDAY})"
    r"|in\s+(?:a|one|two|three|a\s+few|\d+)\s+(?:days?|weeks?|months?)"
    r"|(?:a|one|two|three|a\s+few|\d+)\s+(?:days?|weeks?|months?)\s+ago)\b",
    re.IGNORECASE,
)
# Every relative date above holds one of these words (weekdays, today and yesterday end in
# "day"), so ASCII text with none of them cannot match: most files skip the costly search.
_RELATIVE_DATE_WORDS = ("day", "tonight", "tomorrow", "week", "month", "quarter", "year", "sprint")


def _may_hold_relative_date(text: str) -> bool:
    if not text.isascii():
        return True  # case-insensitive matching folds some non-ASCII letters: search
    lowered = text.lower()
    for word in _RELATIVE_DATE_WORDS:  # a loop: a third cheaper than any() on a generator
        if word in lowered:
            return True
    return False


class FileFacts(NamedTuple):
    """What the linter needs to know about one memory file (a tuple, not a `Record`: a
    listing makes one a file, and a tuple is built in a fifth of the time)."""

    path: str
    text: str
    """Whole text, normalised (BOM stripped, CRLF folded)."""
    size_bytes: int
    age_days: int | None
    """None skips `memory-stale` (the caller adds it with `stale_finding`)."""
    team: bool
    binary: bool = False
    not_utf8: bool = False
    truncated_read: bool = False
    reads_type_at: tuple[str, ...] = BOTH_LOCATIONS
    """Where the release in use looks for the type (2.1.88: top level only)."""
    claude_version: str | None = None


def lint_file(facts: FileFacts) -> list[LintFinding]:
    """Every finding for one memory file."""
    return lint_and_frontmatter(facts)[0]


def lint_and_frontmatter(facts: FileFacts) -> tuple[list[LintFinding], ParsedFrontmatter | None]:
    """Every finding for one memory file, and its frontmatter as Claude Code sees it (the
    first 30 lines; None for a binary file), so a lister need not parse it again."""
    path = facts.path
    if facts.binary:
        return [
            _finding(
                path, "file-binary", "error", "not a text file: Claude Code will read it as garbage"
            )
        ], None
    findings: list[LintFinding] = []
    if facts.not_utf8:
        findings.append(
            _finding(
                path,
                "file-not-utf8",
                "warning",
                "contains bytes that are not UTF-8; they read as \ufffd",
            )
        )
    if facts.size_bytes > LARGE_FILE_BYTES:
        findings.append(
            _finding(
                path,
                "file-too-large",
                "warning",
                f"{facts.size_bytes:,} bytes: far beyond what recall can show",
            )
        )

    newlines = facts.text.count("\n")
    head = facts.text
    if newlines >= FRONTMATTER_MAX_LINES:
        lines = facts.text.split("\n", FRONTMATTER_MAX_LINES)
        head = "\n".join(lines[:FRONTMATTER_MAX_LINES]) + "\n"
    seen = parse_frontmatter(head)
    # A short file is its own head: one parse serves both.
    whole = seen if head == facts.text else parse_frontmatter(facts.text)
    stated = read_type(seen.data)
    findings.extend(_frontmatter_findings(path, seen, whole, stated, facts))

    memory_type = stated.type
    body = facts.text[whole.body_offset :] if whole.present else facts.text
    if memory_type in ("feedback", "project"):
        if not _says(_WHY, body):
            findings.append(
                _finding(
                    path,
                    "why-missing",
                    "warning",
                    f"a {memory_type} memory needs a **Why:** line: the reason it holds",
                )
            )
        if not _says(_HOW, body):
            findings.append(
                _finding(
                    path,
                    "how-to-apply-missing",
                    "warning",
                    f"a {memory_type} memory needs a **How to apply:** line: when it applies",
                )
            )
    # One search of the whole text first: a match on a line is a match in the text (line
    # ends are word boundaries too), and most files have none.
    dated = _may_hold_relative_date(facts.text) and _RELATIVE_DATE.search(facts.text)
    dated_lines = facts.text.split("\n") if dated else []
    for number, line in enumerate(dated_lines, 1):
        match = _RELATIVE_DATE.search(line)
        if match:
            findings.append(
                _finding(
                    path,
                    "relative-date",
                    "warning",
                    f"relative date '{match.group(0)}' loses its meaning later; write the date (YYYY-MM-DD)",
                    number,
                )
            )
    line_total = newlines + (0 if facts.text.endswith("\n") else 1)
    encoded = len(facts.text) if facts.text.isascii() else len(facts.text.encode("utf-8"))
    if line_total > SURFACE_MAX_LINES or encoded > SURFACE_MAX_BYTES:
        limit = (
            f"{SURFACE_MAX_LINES} lines"
            if line_total > SURFACE_MAX_LINES
            else f"{SURFACE_MAX_BYTES:,} bytes"
        )
        findings.append(
            _finding(
                path,
                "memory-truncated-on-recall",
                "warning",
                f"recall shows only the first {limit} of this file ({line_total} lines, {encoded:,} bytes)",
            )
        )
    stale = stale_finding(path, facts.age_days) if facts.age_days is not None else None
    if stale is not None:
        findings.append(stale)
    return findings, seen


def stale_finding(path: str, age_days: int) -> LintFinding | None:
    """`memory-stale` for a file last changed over 30 days ago (the only rule that depends
    on today's date, so a cached lint adds it afresh)."""
    if age_days <= STALE_AFTER_DAYS:
        return None
    return _finding(path, "memory-stale", "info", stale_message(age_days))


def _frontmatter_findings(
    path: str,
    seen: ParsedFrontmatter,
    whole: ParsedFrontmatter,
    stated: TypeReading,
    facts: FileFacts,
) -> list[LintFinding]:
    if not seen.present:
        if seen.starts_with_fence:
            where = (
                f"closes after line {FRONTMATTER_MAX_LINES}, where Claude Code stops reading"
                if whole.present
                else "never closes"
            )
            return [
                _finding(path, "frontmatter-unclosed", "error", f"the frontmatter block {where}", 1)
            ]
        return [
            _finding(
                path,
                "frontmatter-missing",
                "warning",
                "no frontmatter: recall sees no description or type",
                1,
            )
        ]
    if seen.limit:
        outcome = (
            "so all of it is ignored"
            if seen.error
            else "so it was read with each value as plain text"
        )
        return [
            _finding(
                path,
                "frontmatter-too-complex",
                "error",
                f"frontmatter is refused as YAML ({seen.limit}), {outcome}",
                1,
            )
        ]
    if seen.error:
        return [
            _finding(
                path,
                "frontmatter-invalid-yaml",
                "error",
                f"frontmatter is not valid YAML, so Claude Code ignores all of it ({seen.error})",
                1,
            )
        ]
    findings = []
    data = seen.data
    description = data.get("description")
    if not description:
        findings.append(
            _finding(
                path,
                "description-missing",
                "warning",
                "no description: recall can only go by the file name",
            )
        )
    else:
        # Per file, so the tree, `ls`, the editor and `lint` count the same findings.
        problem = description_problem(str(description))
        if problem is not None:
            findings.append(_finding(path, problem[0], "warning", problem[1]))
    if stated.location is None:
        findings.append(
            _finding(path, "type-missing", "warning", "no type: the manifest shows it untyped")
        )
    elif stated.type is None:
        where = "metadata.type" if stated.location == "metadata" else "type"
        findings.append(
            _finding(
                path,
                "type-invalid",
                "error",
                f"{where} {stated.raw!r} is not exactly one of {', '.join(MEMORY_TYPES)} (case matters)",
            )
        )
    elif stated.location not in facts.reads_type_at:
        release = f"Claude Code {facts.claude_version}" if facts.claude_version else "Claude Code"
        where = "nested under metadata:" if stated.location == "metadata" else "at the top level"
        findings.append(
            _finding(
                path,
                "type-unread",
                "warning",
                f"the type is {where}, where {release} does not look: it sees this memory untyped",
            )
        )
    return findings


def _finding(
    path: str, rule: str, severity: str, message: str, line: int | None = None
) -> LintFinding:
    return LintFinding(path=path, rule=rule, severity=severity, message=message, line=line)  # type: ignore[arg-type]
