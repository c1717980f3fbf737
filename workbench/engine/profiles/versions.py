"""Claude Code release numbers: parsing, comparing, finding one in a command's output."""

from __future__ import annotations

import re

Version = tuple[int, int, int]

_EXACT = re.compile(r"^\s*v?(\d{1,4})\.(\d{1,4})\.(\d{1,6})\s*$")
_ANYWHERE = re.compile(r"(?<![\d.])(\d{1,4})\.(\d{1,4})\.(\d{1,6})(?![\d])")


def parse_version(text: str | None) -> Version | None:
    """`2.1.332` as (2, 1, 332); None for anything that is not exactly X.Y.Z."""
    if not isinstance(text, str):
        return None
    match = _EXACT.match(text)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def format_version(version: Version) -> str:
    """(2, 1, 332) as `2.1.332`."""
    return ".".join(str(part) for part in version)


def find_version(text: str) -> str | None:
    """The first X.Y.Z in free text (`2.1.332 (Claude Code)` gives `2.1.332`)."""
    match = _ANYWHERE.search(text)
    return f"{match.group(1)}.{match.group(2)}.{match.group(3)}" if match else None
