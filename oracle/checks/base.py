"""What every check returns, and helpers they share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from oracle.releases import Release
from oracle.sanitize import sanitize_ascii, scrub  # noqa: F401 - re-exported for checks

AGREE = "agree"
DIFFER = "differ"
ERROR = "error"
"""The harness could not decide (the CLI crashed, timed out, or sent nothing to read)."""


@dataclass
class Outcome:
    """One check case on one release: agree or differ, why, and what each side said."""

    check: str
    case: str
    release: str
    verdict: str
    reason: str = ""
    rule: str | None = None
    """The rule (see `oracle.rules`) a difference comes from, when it is a known change."""
    observed: dict[str, Any] = field(default_factory=dict)
    """What Claude Code did, sanitised (sandbox paths as `<sandbox>`)."""
    workbench: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    """What the case set up, so a recorded test can set it up again."""
    raw: dict[str, Any] = field(default_factory=dict)
    """Unscrubbed facts a recorded test needs verbatim (a long path's hash depends on it)."""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "case": self.case,
            "release": self.release,
            "verdict": self.verdict,
            "reason": self.reason,
            "rule": self.rule,
            "inputs": self.inputs,
            "observed": self.observed,
            "workbench": self.workbench,
            "raw": self.raw,
            "seconds": round(self.seconds, 1),
        }


@dataclass(frozen=True)
class Case:
    """One thing to try; `data` is whatever the check needs."""

    name: str
    title: str
    data: dict[str, Any] = field(default_factory=dict)
    rule: str | None = None
    min_release: str | None = None
    """Skip releases before this one (a setting they do not have)."""


@dataclass(frozen=True)
class Check:
    name: str
    title: str
    cases: Callable[[], list[Case]]
    run: Callable[[Release, Case], Outcome]
    weight: float = 1.0
    """Rough seconds per case, to schedule the slow ones first."""
    notes: tuple[str, ...] = ()
    """What the real CLI was seen to do that the check relies on, shown under its table."""


def tail(text: str, lines: int = 3) -> str:
    got = [line for line in text.strip().splitlines() if line.strip()]
    return " / ".join(got[-lines:])[:300]
