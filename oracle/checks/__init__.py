"""The checks the oracle runs, by name, in the order the table lists them."""

from __future__ import annotations

from oracle.checks import compaction, index_chars, live, memory_md, models, paths, prompt
from oracle.checks.base import Check

CHECKS: dict[str, Check] = {
    check.name: check
    for check in (
        paths.CHECK,
        memory_md.CHECK,
        index_chars.CHECK,
        prompt.CHECK,
        models.CHECK,
        compaction.CHECK_AUTOCOMPACT,
        compaction.CHECK_TRANSCRIPTS,
        live.CHECK,
    )
}
