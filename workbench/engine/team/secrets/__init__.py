"""Claude Code's secret scanner for team memory, with a fast engine, redaction and suppression.

The stable entry points other areas import:
- `scan_for_secrets(text) -> list[SecretMatch]` (rule_id and label, never the matched text);
- `team_write_refusal_message(labels) -> str` and `check_team_mem_secrets(path, content,
  locations) -> str | None` for the write-time guard.
"""

from __future__ import annotations

from workbench.engine.team.secrets.guard import check_team_mem_secrets, team_write_refusal_message
from workbench.engine.team.secrets.rules import RULE_IDS, RULES, SecretRule, label_for
from workbench.engine.team.secrets.scanner import SecretMatch, scan_for_secrets

__all__ = [
    "RULES",
    "RULE_IDS",
    "SecretMatch",
    "SecretRule",
    "check_team_mem_secrets",
    "label_for",
    "scan_for_secrets",
    "team_write_refusal_message",
]
