"""Counted nouns: every message says "1 file" or "3 files", never "file(s)"."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

import workbench
from workbench.engine.wording import plural, plural_noun


@pytest.mark.parametrize(
    ("count", "word", "many", "expected"),
    [
        (0, "file", None, "0 files"),
        (1, "file", None, "1 file"),
        (2, "entry", None, "2 entries"),
        (2, "day", None, "2 days"),
        (1, "memory", None, "1 memory"),
        (1_200, "memory", None, "1,200 memories"),
        (3, "team memory", None, "3 team memories"),
        (2, "index", "indexes", "2 indexes"),
    ],
)
def test_plural(count: int, word: str, many: str | None, expected: str) -> None:
    assert plural(count, word, many) == expected


def test_plural_noun_alone() -> None:
    assert plural_noun(1, "key") == "key"
    assert plural_noun(2, "key") == "keys"


_FIELD = re.compile(r"\{[^{}]*\}")
_THING_S = re.compile(r"[A-Za-z]\(s\)(?![A-Za-z])")


def _literals_with_a_parenthesised_s(path: Path) -> list[str]:
    found = []
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for token in tokens:
        if token.type != tokenize.STRING:
            continue
        # The text a reader sees: f-string fields (`{title(s)}`) and http(s) left out.
        text = _FIELD.sub("", token.string).replace("http(s)", "")
        if _THING_S.search(text) and not text.lstrip("rbuRBUfF").startswith(('"""', "'''")):
            found.append(f"{path.name}:{token.start[0]}: {token.string[:60]}")
    return found


def test_no_message_says_thing_s() -> None:
    # The engine's and the front ends' messages count with `plural`; docstrings may say what
    # they like.
    package = Path(workbench.__file__).parent
    found = [
        hit for path in package.rglob("*.py") for hit in _literals_with_a_parenthesised_s(path)
    ]
    assert found == []
