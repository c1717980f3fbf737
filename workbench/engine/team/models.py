"""View models of the team area: what the Team pane and `workbench sync status` both show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.engine.team.secrets.scanner import SecretFinding
    from workbench.engine.team.sync.models import SyncStatus


@dataclass(frozen=True)
class SyncProblem:
    """Why sync cannot run, and what to set."""

    problem: str
    fix: str

    def to_json(self) -> dict[str, str]:
        return {"problem": self.problem, "fix": self.fix}


@dataclass(frozen=True)
class SecretPreview:
    """A team file held back for a secret: where each secret is, and the file redacted."""

    path: str
    findings: tuple[SecretFinding, ...]
    redacted: str
    """The file with every secret replaced by `[REDACTED]`."""
    redactions: int


@dataclass(frozen=True)
class TeamOverview:
    """Everything known about team sync without a network request: the status, every
    problem that keeps sync from running (each with its fix), and what a push holds back."""

    status: SyncStatus
    problems: tuple[SyncProblem, ...] = ()
    previews: tuple[SecretPreview, ...] = ()
    over_limit: tuple[str, ...] = ()
    """Local files left out because the server's learned entry limit was reached."""
    bad_input: bool = False
    """A problem is in what was given (no usable repo or server URL), not just unset."""
    restorable: tuple[str, ...] = ()
    """History ids of replaced teammate versions that can still be put back (not restored
    yet), newest first."""

    @property
    def available(self) -> bool:
        """Whether push, pull and watch can run."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        out = self.status.to_json()
        out["available"] = self.available
        out["problems"] = [p.to_json() for p in self.problems]
        out["over_limit"] = list(self.over_limit)
        for overwrite in out["overwrites"]:
            overwrite["restorable"] = overwrite["history_id"] in self.restorable
        return out
