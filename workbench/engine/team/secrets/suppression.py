"""Suppressing known findings in reports: an inline allow marker and a baseline file.

Suppression changes what a scan *reports* (and its exit code), never what is blocked: Claude
Code's own guard has no opt-out, so the team write guard and the push still refuse every match.
Reports always say how many findings were suppressed, and by which means.

Inline marker: put `workbench:allow-secret` anywhere on a line that a finding touches, e.g.
in a markdown comment `<!-- workbench:allow-secret -->` or after a `#` in code.

Baseline file: fingerprints of findings to ignore. Either plain text, one fingerprint per line
(blank lines and `#` comments allowed, anything after the fingerprint ignored), or JSON: a
list of fingerprints, `{"fingerprints": [...]}`, or the JSON output of `workbench scan-secrets
--json` itself (its `findings[].fingerprint`). `scan-secrets --write-baseline FILE` writes one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.engine.atomic import atomic_write_bytes
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.team.secrets.scanner import SecretFinding
from workbench.engine.userfiles import (
    BASELINE_LIMIT,
    JSON_MAX_DEPTH,
    UnreadableFileError,
    json_too_deep,
    read_bytes,
)

ALLOW_MARKER = "workbench:allow-secret"
_FINGERPRINT = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class Baseline:
    """Fingerprints of findings that reports leave out."""

    fingerprints: frozenset[str] = frozenset()
    source: str | None = None

    def __contains__(self, fingerprint: object) -> bool:
        return fingerprint in self.fingerprints

    @classmethod
    def load(cls, path: str | Path) -> Baseline:
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
            found = _from_json(text, file)
        else:
            found = _from_lines(text, file)
        return cls(frozenset(found), str(file))

    @classmethod
    def from_findings(cls, findings: Iterable[SecretFinding]) -> Baseline:
        return cls(frozenset(f.fingerprint for f in findings))

    def dump(self, findings: Sequence[SecretFinding] = ()) -> str:
        """The baseline as JSON; `findings` add where each fingerprint came from (no secrets)."""
        notes = {
            f.fingerprint: {"path": f.path, "line": f.line, "rule_id": f.rule_id} for f in findings
        }
        body = {
            "version": 1,
            "fingerprints": sorted(self.fingerprints),
            "notes": [notes[fp] | {"fingerprint": fp} for fp in sorted(notes)],
        }
        return json.dumps(body, indent=2) + "\n"

    def write(self, path: str | Path, findings: Sequence[SecretFinding] = ()) -> None:
        atomic_write_bytes(Path(path), self.dump(findings).encode("utf-8"))


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


def _from_json(text: str, file: Path) -> set[str]:
    if json_too_deep(text):
        raise UserInputError(f"{file}: the baseline nests deeper than {JSON_MAX_DEPTH} levels")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserInputError(
            f"{file}: invalid JSON baseline ({exc.msg}, line {exc.lineno})"
        ) from None
    if isinstance(data, dict):
        items = data.get("fingerprints")
        if items is None:
            items = data.get("findings", [])
    else:
        items = data
    if not isinstance(items, list):
        raise UserInputError(f"{file}: expected a list of fingerprints")
    found: set[str] = set()
    for item in items:
        value = item.get("fingerprint") if isinstance(item, dict) else item
        if not isinstance(value, str) or not _FINGERPRINT.fullmatch(value):
            raise UserInputError(f"{file}: {value!r} is not a secret fingerprint")
        found.add(value)
    return found


@dataclass(frozen=True)
class SuppressionResult:
    """Findings left to report, and how many each means suppressed."""

    kept: tuple[SecretFinding, ...]
    inline: int
    baseline: int

    @property
    def suppressed(self) -> int:
        return self.inline + self.baseline


def has_allow_marker(lines: Sequence[str], finding: SecretFinding) -> bool:
    """Whether any line the finding touches carries the allow marker."""
    return any(ALLOW_MARKER in lines[n - 1] for n in range(finding.line, finding.end_line + 1))


def suppress(
    text: str, findings: Sequence[SecretFinding], baseline: Baseline | None = None
) -> SuppressionResult:
    """Split `findings` of `text` into those to report and the suppressed counts."""
    if not findings:
        return SuppressionResult((), 0, 0)
    lines = text.split("\n") if ALLOW_MARKER in text else []
    kept: list[SecretFinding] = []
    inline = by_baseline = 0
    for finding in findings:
        if lines and has_allow_marker(lines, finding):
            inline += 1
        elif baseline is not None and finding.fingerprint in baseline:
            by_baseline += 1
        else:
            kept.append(finding)
    return SuppressionResult(tuple(kept), inline, by_baseline)
