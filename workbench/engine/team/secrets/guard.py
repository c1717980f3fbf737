"""The write-time guard: secrets never go into team memory (spec 03 §6.7)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.engine.team.secrets.scanner import scan_for_secrets

if TYPE_CHECKING:
    from workbench.engine.claude_paths import Locations


def team_write_refusal_message(labels: Sequence[str]) -> str:
    """Our refusal for a team write whose content looks like it holds secrets."""
    found = ", ".join(labels)
    return (
        f"Refused: the content appears to hold secrets ({found}), so it was not written to "
        "team memory. Everything in team memory is shared with every collaborator on this "
        "repository. Take the sensitive values out, then write it again."
    )


def check_team_mem_secrets(path: str, content: str, locations: Locations) -> str | None:
    """The refusal message when `path` is in the team folder and `content` holds a secret."""
    if not locations.is_team_path(path):
        return None
    matches = scan_for_secrets(content)
    if not matches:
        return None
    return team_write_refusal_message([match.label for match in matches])
