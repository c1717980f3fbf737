"""Redaction with Claude Code's semantics: each rule in turn replaces its secrets.

For every rule, in rule order, over the text as the earlier rules left it: each match has its
capture group 1 (or, without one, the whole match) replaced by `[REDACTED]`. The prefilter runs
once on the original text to skip rules that cannot match; a replacement cannot create a match
for a later rule, because no rule's token can contain `[`, `]` or lie inside `REDACTED`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.engine.team.secrets.prefilter import get_prefilter
from workbench.engine.team.secrets.rules import RULES
from workbench.engine.team.secrets.scanner import js_view

REDACTED = "[REDACTED]"


@dataclass(frozen=True)
class Redaction:
    """A redacted text and how many secrets were replaced."""

    text: str
    count: int

    def to_json(self) -> dict[str, object]:
        return {"redactions": self.count, "text": self.text}


def _replacement(match: re.Match[str]) -> str:
    if match.re.groups:
        secret = match.group(1)
        if secret is not None:
            # As Claude Code does: the first occurrence of the group inside the match.
            return match.group(0).replace(secret, REDACTED, 1)
    return REDACTED


def redact(text: str, *, backend: str | None = None) -> Redaction:
    """`text` with every secret replaced by `[REDACTED]`, and the number replaced."""
    candidates = get_prefilter(backend).candidates(text)
    count = 0
    for index in sorted(candidates):
        rule = RULES[index]
        if rule.multiline and not text.isascii():
            # The private-key body is counted in UTF-16 units, as JavaScript counts it.
            view = js_view(text)
            redacted, replaced = rule.regex.subn(_replacement, view.text)
            text = view.restore(redacted)
        else:
            text, replaced = rule.regex.subn(_replacement, text)
        count += replaced
    return Redaction(text, count)


def redact_secrets(text: str, *, backend: str | None = None) -> str:
    """`text` with every secret replaced by `[REDACTED]` (Claude Code's `redactSecrets`)."""
    return redact(text, backend=backend).text
