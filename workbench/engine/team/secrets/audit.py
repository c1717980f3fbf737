"""Auditing a baseline: labelling each entry real, false positive or placeholder.

An audit shows each entry where it was found, with the lines around it and every secret in
them replaced by `[REDACTED]` (the audit never shows a secret either), and records the label
in the baseline file. Labels change what a scan reports: an entry labelled `real` is reported
again (a real secret must be removed and rotated, not baselined away); the others stay
suppressed. The front end asks (interactively, or from flags); this module only computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.engine.errors import UserInputError
from workbench.engine.team.secrets.redaction import REDACTED
from workbench.engine.team.secrets.report import SecretScanReport, read_text
from workbench.engine.team.secrets.scanner import SecretFinding, find_secrets
from workbench.engine.team.secrets.suppression import VERDICTS, Baseline, BaselineEntry

CONTEXT_LINES = 2
VERDICT_NAMES = {"real": "real", "false-positive": "false positive", "placeholder": "placeholder"}


@dataclass(frozen=True)
class AuditItem:
    """One baseline entry as the audit shows it."""

    entry: BaselineEntry
    finding: SecretFinding | None
    """The finding with this fingerprint in the current scan, or None when it is gone."""
    context: tuple[tuple[int, str], ...] = ()
    """(line number, text) around the finding, every secret replaced by `[REDACTED]`."""

    @property
    def where(self) -> str:
        if self.finding is not None:
            return f"{self.finding.path}:{self.finding.line}:{self.finding.column}"
        if self.entry.path:
            return f"{self.entry.path}:{self.entry.line or '?'}"
        return "(place unknown)"


def masked_lines(text: str, findings: Sequence[SecretFinding]) -> list[str]:
    """The lines of `text` with every finding's text replaced by `[REDACTED]` (line count
    kept: a secret spanning lines leaves `[REDACTED]` on each of them)."""
    pieces: list[str] = []
    at = 0
    for finding in sorted(findings, key=lambda f: f.start):
        if finding.start < at:
            continue
        pieces.append(text[at : finding.start])
        segment = text[finding.start : finding.end]
        pieces.append("\n".join(REDACTED if part else "" for part in segment.split("\n")))
        at = finding.end
    pieces.append(text[at:])
    return "".join(pieces).split("\n")


def _context(file: str, finding: SecretFinding, radius: int) -> tuple[tuple[int, str], ...]:
    try:
        text = read_text(Path(file))
    except OSError:
        return ()
    lines = masked_lines(text, find_secrets(text))
    first = max(1, finding.line - radius)
    last = min(len(lines), finding.end_line + radius)
    return tuple((n, lines[n - 1]) for n in range(first, last + 1))


def audit_items(
    baseline: Baseline, report: SecretScanReport, *, radius: int = CONTEXT_LINES
) -> list[AuditItem]:
    """Every baseline entry with its current finding (if any) and redacted context."""
    found: dict[str, SecretFinding] = {}
    for finding in report.all_findings:
        found.setdefault(finding.fingerprint, finding)
    items = []
    for entry in baseline.sorted_entries():
        current = found.get(entry.fingerprint)
        context: tuple[tuple[int, str], ...] = ()
        if current is not None and current.path in report.abs_paths:
            context = _context(report.abs_paths[current.path], current, radius)
        items.append(AuditItem(entry, current, context))
    return items


def parse_verdict(word: str) -> str:
    """A label as typed: `real`, `false-positive` (or `fp`, `false`), `placeholder` (or `ph`)."""
    value = word.strip().lower().replace("_", "-").replace(" ", "-")
    aliases = {"fp": "false-positive", "false": "false-positive", "ph": "placeholder"}
    value = aliases.get(value, value)
    if value not in VERDICTS:
        raise UserInputError(f"unknown label {word!r}; use one of {', '.join(VERDICTS)}")
    return value


def apply_marks(baseline: Baseline, marks: Sequence[str]) -> Baseline:
    """Apply `FINGERPRINT=LABEL` marks (a unique prefix of 8+ digits is enough; `*` labels
    every entry not audited yet)."""
    for mark in marks:
        target, sep, word = mark.partition("=")
        if not sep:
            raise UserInputError(f"--mark {mark!r}: expected FINGERPRINT=LABEL")
        verdict = parse_verdict(word)
        if target.strip() == "*":
            for entry in baseline.sorted_entries():
                if entry.verdict is None:
                    baseline = baseline.with_verdict(entry.fingerprint, verdict)
            continue
        baseline = baseline.with_verdict(baseline.resolve(target), verdict)
    return baseline


def counts_line(baseline: Baseline) -> str:
    """`2 real, 1 false positive, 0 placeholder, 3 not audited` for a baseline."""
    counts = baseline.counts()
    parts = [f"{counts[v]} {VERDICT_NAMES[v]}" for v in VERDICTS]
    parts.append(f"{counts['unaudited']} not audited")
    return ", ".join(parts)
