"""Suppressing known findings in reports: allow markers, exclusions and a baseline file.

Suppression changes what a scan *reports* (and its exit code), never what is blocked: Claude
Code's own guard has no opt-out, so the team write guard and the push still refuse every match.
Reports always say how many findings were suppressed, and by which means, and
`--list-suppressed` shows each one.

Markers, in the scanned text itself:
- `workbench:allow-secret` anywhere on a line that a finding touches, e.g. in a markdown
  comment `<!-- workbench:allow-secret -->` or after a `#` in code;
- `workbench:allow-secret-next-line` on the line just above a finding's first line (the
  marker's own line is not allowed by it).

Exclusions, from the command line: files by glob (never read), findings by rule id, by
fingerprint (or a unique prefix of at least 8 digits) and by a regex over the finding's line.

Baseline file: fingerprints of findings to ignore. Either plain text, one fingerprint per line
(blank lines and `#` comments allowed, anything after the fingerprint ignored), or JSON: a
list of fingerprints, `{"fingerprints": [...]}`, the JSON output of `workbench scan-secrets
--json` itself (its `findings[].fingerprint`), or the workbench's own baseline, whose entries
say where each finding was (path, line, rule; never the secret) and how an audit labelled it.
An entry labelled `real` is not suppressed: a real secret stays reported until it is removed.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from workbench.engine.atomic import atomic_write_bytes
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.team.secrets.rules import RULE_IDS
from workbench.engine.team.secrets.scanner import SecretFinding
from workbench.engine.userfiles import (
    BASELINE_LIMIT,
    JSON_MAX_DEPTH,
    UnreadableFileError,
    json_too_deep,
    read_bytes,
)

ALLOW_MARKER = "workbench:allow-secret"
ALLOW_NEXT_LINE_MARKER = "workbench:allow-secret-next-line"
_SAME_LINE_MARKER = re.compile(re.escape(ALLOW_MARKER) + r"(?!-next-line)")
_FINGERPRINT = re.compile(r"[0-9a-f]{32}")
_FINGERPRINT_PREFIX = re.compile(r"[0-9a-f]{8,32}")
BASELINE_VERSION = 2

VERDICTS = ("real", "false-positive", "placeholder")
"""Audit labels: a live secret to rotate, not a secret at all, an example value."""

# Why a finding was suppressed (the `by` of `Suppressed`), in the order they are checked.
BY_MARKER = "allow-marker"
BY_NEXT_LINE = "allow-next-line"
BY_RULE = "excluded-rule"
BY_FINGERPRINT = "excluded-fingerprint"
BY_LINE = "excluded-line"
BY_BASELINE = "baseline"
INLINE_REASONS = frozenset({BY_MARKER, BY_NEXT_LINE})
EXCLUSION_REASONS = frozenset({BY_RULE, BY_FINGERPRINT, BY_LINE})


@dataclass(frozen=True)
class BaselineEntry:
    """One baselined finding: where it was and how an audit labelled it, never the secret."""

    fingerprint: str
    rule_id: str | None = None
    path: str | None = None
    line: int | None = None
    verdict: str | None = None
    """One of `VERDICTS`, or None until audited."""

    def to_json(self) -> dict[str, object]:
        return {
            "fingerprint": self.fingerprint,
            "rule_id": self.rule_id,
            "path": self.path,
            "line": self.line,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class BaselineChange:
    """What `Baseline.updated` changed."""

    added: int
    removed: int
    kept: int


@dataclass(frozen=True)
class Baseline:
    """Fingerprints of findings that reports leave out (unless labelled real)."""

    fingerprints: frozenset[str] = frozenset()
    source: str | None = None
    entries: Mapping[str, BaselineEntry] = field(default_factory=dict, compare=False)

    def __contains__(self, fingerprint: object) -> bool:
        return fingerprint in self.fingerprints

    def verdict(self, fingerprint: str) -> str | None:
        entry = self.entries.get(fingerprint)
        return entry.verdict if entry is not None else None

    def suppresses(self, fingerprint: str) -> bool:
        """Whether a finding with this fingerprint is left out of reports."""
        return fingerprint in self.fingerprints and self.verdict(fingerprint) != "real"

    def entry(self, fingerprint: str) -> BaselineEntry:
        return self.entries.get(fingerprint) or BaselineEntry(fingerprint)

    def sorted_entries(self) -> list[BaselineEntry]:
        return [self.entry(fp) for fp in sorted(self.fingerprints)]

    def counts(self) -> dict[str, int]:
        """How many entries carry each verdict, and how many are not audited yet."""
        counts = dict.fromkeys((*VERDICTS, "unaudited"), 0)
        for entry in self.sorted_entries():
            counts[entry.verdict or "unaudited"] += 1
        return counts

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Baseline:
        """Read a baseline file in any of the accepted formats."""
        file = Path(path)
        try:
            raw = read_bytes(file, BASELINE_LIMIT, "a baseline file")
            text = raw.decode("utf-8")
        except FileNotFoundError:
            raise NotFoundError(f"baseline file not found: {file}") from None
        except UnreadableFileError as exc:
            raise UserInputError(f"cannot read baseline file {exc}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UserInputError(f"cannot read baseline file {file}: {exc}") from None
        stripped = text.lstrip()
        if stripped.startswith(("{", "[")):
            entries = _from_json(text, file)
        else:
            entries = {fp: BaselineEntry(fp) for fp in _from_lines(text, file)}
        return cls(frozenset(entries), str(file), entries)

    @classmethod
    def load_or_empty(cls, path: str | Path) -> Baseline:
        """The baseline at `path`, or an empty one to be written there."""
        if not Path(path).exists():
            return cls(frozenset(), str(path), {})
        return cls.load(path)

    @classmethod
    def from_findings(
        cls, findings: Iterable[SecretFinding], previous: Baseline | None = None
    ) -> Baseline:
        """A baseline of `findings`; verdicts of fingerprints `previous` knew are kept."""
        entries: dict[str, BaselineEntry] = {}
        for finding in findings:
            if finding.fingerprint in entries:
                continue  # one secret twice in a file: one fingerprint, its first place
            verdict = previous.verdict(finding.fingerprint) if previous is not None else None
            entries[finding.fingerprint] = BaselineEntry(
                finding.fingerprint, finding.rule_id, finding.path, finding.line, verdict
            )
        source = previous.source if previous is not None else None
        return cls(frozenset(entries), source, entries)

    def updated(self, findings: Sequence[SecretFinding]) -> tuple[Baseline, BaselineChange]:
        """This baseline brought up to date with a scan: new findings added, entries no
        longer found dropped, verdicts kept."""
        new = Baseline.from_findings(findings, previous=self)
        kept = len(new.fingerprints & self.fingerprints)
        change = BaselineChange(
            added=len(new.fingerprints - self.fingerprints),
            removed=len(self.fingerprints - new.fingerprints),
            kept=kept,
        )
        return new, change

    def with_verdict(self, fingerprint: str, verdict: str | None) -> Baseline:
        if verdict is not None and verdict not in VERDICTS:
            raise UserInputError(f"unknown label {verdict!r}; use one of {', '.join(VERDICTS)}")
        if fingerprint not in self.fingerprints:
            raise NotFoundError(f"fingerprint {fingerprint} is not in the baseline")
        entries = dict(self.entries)
        entries[fingerprint] = replace(self.entry(fingerprint), verdict=verdict)
        return replace(self, entries=entries)

    def resolve(self, prefix: str) -> str:
        """The one fingerprint of this baseline that starts with `prefix`."""
        return resolve_fingerprint(prefix, self.fingerprints, where="the baseline")

    def dump(self) -> str:
        """The baseline as JSON: fingerprints, then where each came from (no secrets)."""
        body = {
            "version": BASELINE_VERSION,
            "fingerprints": sorted(self.fingerprints),
            "entries": [entry.to_json() for entry in self.sorted_entries()],
        }
        return json.dumps(body, indent=2) + "\n"

    def write(self, path: str | Path) -> None:
        atomic_write_bytes(Path(path), self.dump().encode("utf-8"))


def resolve_fingerprint(prefix: str, fingerprints: Iterable[str], *, where: str) -> str:
    """The single fingerprint starting with `prefix` (8 to 32 hex digits)."""
    prefix = prefix.strip().lower()
    if not _FINGERPRINT_PREFIX.fullmatch(prefix):
        raise UserInputError(f"{prefix!r} is not a fingerprint (8 to 32 hex digits)")
    matches = [fp for fp in fingerprints if fp.startswith(prefix)]
    if not matches:
        raise NotFoundError(f"no fingerprint starting with {prefix} in {where}")
    if len(matches) > 1:
        raise UserInputError(f"{prefix} names {len(matches)} fingerprints in {where}; give more")
    return matches[0]


def _from_lines(text: str, file: Path) -> set[str]:
    found: set[str] = set()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        token = line.split()[0]
        if not _FINGERPRINT.fullmatch(token):
            raise UserInputError(f"{file}:{number}: not a secret fingerprint (32 hex digits)")
        found.add(token)
    return found


def _from_json(text: str, file: Path) -> dict[str, BaselineEntry]:
    if json_too_deep(text):
        raise UserInputError(f"{file}: the baseline nests deeper than {JSON_MAX_DEPTH} levels")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserInputError(
            f"{file}: invalid JSON baseline ({exc.msg}, line {exc.lineno})"
        ) from None
    details: list[object] = []
    if isinstance(data, dict):
        items = data.get("fingerprints")
        if items is None:
            items = data.get("findings", [])
        details = data.get("entries") or data.get("notes") or []
    else:
        items = data
    if not isinstance(items, list) or not isinstance(details, list):
        raise UserInputError(f"{file}: expected a list of fingerprints")
    entries: dict[str, BaselineEntry] = {}
    for item in items:
        value = item.get("fingerprint") if isinstance(item, dict) else item
        if not isinstance(value, str) or not _FINGERPRINT.fullmatch(value):
            raise UserInputError(f"{file}: {value!r} is not a secret fingerprint")
        entries[value] = _entry(value, item if isinstance(item, dict) else {}, file)
    for item in details:
        if isinstance(item, dict) and item.get("fingerprint") in entries:
            entries[item["fingerprint"]] = _entry(item["fingerprint"], item, file)
    return entries


def _entry(fingerprint: str, item: Mapping[str, object], file: Path) -> BaselineEntry:
    verdict = item.get("verdict")
    if verdict is not None and verdict not in VERDICTS:
        raise UserInputError(f"{file}: unknown label {verdict!r} for {fingerprint}")
    rule_id, path, line = item.get("rule_id"), item.get("path"), item.get("line")
    return BaselineEntry(
        fingerprint,
        rule_id if isinstance(rule_id, str) else None,
        path if isinstance(path, str) else None,
        line if isinstance(line, int) else None,
        verdict if isinstance(verdict, str) else None,
    )


# --- exclusions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Exclusions:
    """What the user asked to leave out of a scan."""

    paths: tuple[str, ...] = ()
    """Globs (fnmatch: `*` also crosses `/`) over a file's path relative to the scanned
    folder, over each of its parent folders, and over its name."""
    lines: tuple[re.Pattern[str], ...] = ()
    fingerprints: tuple[str, ...] = ()
    """Full fingerprints or prefixes of at least 8 hex digits."""
    rules: frozenset[str] = frozenset()

    @classmethod
    def build(
        cls,
        *,
        paths: Sequence[str] = (),
        lines: Sequence[str] = (),
        fingerprints: Sequence[str] = (),
        rules: Sequence[str] = (),
    ) -> Exclusions:
        """Exclusions from flag values, each checked (a bad one is a usage error)."""
        compiled = []
        for pattern in lines:
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise UserInputError(
                    f"--exclude-line {pattern!r}: not a valid regex ({exc})"
                ) from None
        prefixes = []
        for value in fingerprints:
            value = value.strip().lower()
            if not _FINGERPRINT_PREFIX.fullmatch(value):
                raise UserInputError(
                    f"--exclude-fingerprint {value!r}: not a fingerprint (8 to 32 hex digits)"
                )
            prefixes.append(value)
        unknown = sorted(set(rules) - set(RULE_IDS))
        if unknown:
            raise UserInputError(
                f"--exclude-rule {unknown[0]}: no such rule (see `workbench scan-secrets --help`)"
            )
        return cls(tuple(paths), tuple(compiled), tuple(prefixes), frozenset(rules))

    def __bool__(self) -> bool:
        return bool(self.paths or self.lines or self.fingerprints or self.rules)

    def excludes_path(self, key: str) -> bool:
        """Whether the file (named relative to the scanned folder) is left out."""
        if not self.paths:
            return False
        parts = key.split("/")
        names = {key, parts[-1], *("/".join(parts[:n]) for n in range(1, len(parts)))}
        return any(fnmatch.fnmatchcase(name, glob) for glob in self.paths for name in names)

    def finding_reason(self, finding: SecretFinding, lines: Sequence[str]) -> tuple[str, str]:
        """(`by`, detail) when the finding is excluded, else ("", "")."""
        if finding.rule_id in self.rules:
            return BY_RULE, finding.rule_id
        for prefix in self.fingerprints:
            if finding.fingerprint.startswith(prefix):
                return BY_FINGERPRINT, prefix
        if self.lines:
            touched = lines[finding.line - 1 : finding.end_line]
            for pattern in self.lines:
                if any(pattern.search(line) for line in touched):
                    return BY_LINE, pattern.pattern
        return "", ""


# --- applying them --------------------------------------------------------------------------


@dataclass(frozen=True)
class Suppressed:
    """A finding left out of the report, and what left it out."""

    finding: SecretFinding
    by: str
    detail: str = ""

    def to_json(self) -> dict[str, object]:
        return self.finding.to_json() | {"suppressed_by": self.by, "suppressed_detail": self.detail}


@dataclass(frozen=True)
class SuppressionResult:
    """Findings left to report, and those suppressed with their reasons."""

    kept: tuple[SecretFinding, ...]
    suppressed_findings: tuple[Suppressed, ...] = ()

    @property
    def inline(self) -> int:
        return sum(1 for s in self.suppressed_findings if s.by in INLINE_REASONS)

    @property
    def baseline(self) -> int:
        return sum(1 for s in self.suppressed_findings if s.by == BY_BASELINE)

    @property
    def excluded(self) -> int:
        return sum(1 for s in self.suppressed_findings if s.by in EXCLUSION_REASONS)

    @property
    def suppressed(self) -> int:
        return len(self.suppressed_findings)


def has_allow_marker(lines: Sequence[str], finding: SecretFinding) -> bool:
    """Whether any line the finding touches carries the same-line allow marker."""
    return any(
        _SAME_LINE_MARKER.search(lines[n - 1]) for n in range(finding.line, finding.end_line + 1)
    )


def has_next_line_marker(lines: Sequence[str], finding: SecretFinding) -> bool:
    """Whether the line above the finding's first line carries the next-line marker."""
    return finding.line >= 2 and ALLOW_NEXT_LINE_MARKER in lines[finding.line - 2]


def suppress_in_source(
    text: str, findings: Sequence[SecretFinding], exclusions: Exclusions | None = None
) -> SuppressionResult:
    """Apply the markers in `text` and the exclusions; the baseline comes after."""
    if not findings:
        return SuppressionResult(())
    has_marker = ALLOW_MARKER in text
    by_line = bool(exclusions and exclusions.lines)
    lines = text.split("\n") if has_marker or by_line else []
    kept: list[SecretFinding] = []
    dropped: list[Suppressed] = []
    for finding in findings:
        if has_marker and has_allow_marker(lines, finding):
            dropped.append(Suppressed(finding, BY_MARKER))
        elif has_marker and has_next_line_marker(lines, finding):
            dropped.append(Suppressed(finding, BY_NEXT_LINE))
        else:
            by, detail = exclusions.finding_reason(finding, lines) if exclusions else ("", "")
            if by:
                dropped.append(Suppressed(finding, by, detail))
            else:
                kept.append(finding)
    return SuppressionResult(tuple(kept), tuple(dropped))


def apply_baseline(
    findings: Sequence[SecretFinding], baseline: Baseline | None
) -> SuppressionResult:
    """Leave out the findings the baseline covers (not those it labels real)."""
    if baseline is None or not baseline.fingerprints:
        return SuppressionResult(tuple(findings))
    kept: list[SecretFinding] = []
    dropped: list[Suppressed] = []
    for finding in findings:
        if baseline.suppresses(finding.fingerprint):
            verdict = baseline.verdict(finding.fingerprint)
            dropped.append(Suppressed(finding, BY_BASELINE, verdict or "unaudited"))
        else:
            kept.append(finding)
    return SuppressionResult(tuple(kept), tuple(dropped))


def suppress(
    text: str,
    findings: Sequence[SecretFinding],
    baseline: Baseline | None = None,
    exclusions: Exclusions | None = None,
) -> SuppressionResult:
    """Split `findings` of `text` into those to report and those suppressed."""
    source = suppress_in_source(text, findings, exclusions)
    after = apply_baseline(source.kept, baseline)
    return SuppressionResult(after.kept, source.suppressed_findings + after.suppressed_findings)
