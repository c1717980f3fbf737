"""Text read from a transcript, as a front end may show it: a credential replaced.

Sessions routinely hold pasted keys (a prompt, an `export TOKEN=…` command). Titles, item
labels and the facts a compaction check lists are printed, put in JSON and kept in state, so
each goes through Claude Code's secret rules first. The rules load on first use only: most
commands never show such text.
"""

from __future__ import annotations


def shown(text: str) -> str:
    """`text` with every secret Claude Code's rules find replaced by `[REDACTED]`."""
    from workbench.engine.team.secrets.redaction import redact_secrets

    return redact_secrets(text)
