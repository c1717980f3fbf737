"""Secret scanning with Claude Code's semantics: one match per rule, in rule order."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.engine.team.secrets.rules import RULES


@dataclass(frozen=True)
class SecretMatch:
    """A rule that matched somewhere in a text. Deliberately holds no matched text."""

    rule_id: str
    label: str

    def to_json(self) -> dict[str, str]:
        return {"rule_id": self.rule_id, "label": self.label}


def scan_for_secrets(text: str) -> list[SecretMatch]:
    """Every rule that matches `text`, at most once each, in rule order."""
    return [SecretMatch(rule.id, rule.label) for rule in RULES if rule.regex.search(text)]
