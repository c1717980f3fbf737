"""Counted nouns, for every message the engine and the front ends write ("1 file",
"3 files"), so no message says "file(s)"."""

from __future__ import annotations


def plural_noun(count: int, word: str, many: str | None = None) -> str:
    """`word` for one, its plural otherwise: `many` where the English rule below is wrong."""
    if count == 1:
        return word
    if many is not None:
        return many
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u"):
        return word[:-1] + "ies"
    return word + "s"


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 file`, `3 files`, `2 entries`, `1,200 memories`; `many` where the rule is wrong."""
    return f"{count:,} {plural_noun(count, word, many)}"
