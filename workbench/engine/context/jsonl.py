"""Lenient JSON Lines parsing shared by the transcript reader, the tail reader and the follower.

A transcript is written while Claude Code runs, so a half-written last line is normal, and
files in the wild hold broken lines, binary junk and non-UTF-8 bytes. Nothing here raises on
bad data: every line comes back as a dict or as a counted problem.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from workbench.engine.userfiles import TRANSCRIPT_LINE_LIMIT

_fast_loads: Callable[[bytes], Any] | None
try:  # jiter parses about three times faster than the json module on transcript lines
    from jiter import from_json as _fast_loads
except ImportError:  # pragma: no cover - jiter is a declared dependency
    _fast_loads = None


def parse_line(line: bytes, _limit: int = TRANSCRIPT_LINE_LIMIT) -> dict[str, Any] | None:
    """One JSONL line as a dict; None when it is not a JSON object (or is over the
    per-line limit: a runaway line would cost many times its size once parsed)."""
    if len(line) > _limit:
        return None
    if _fast_loads is not None:
        try:
            value = _fast_loads(line)
        except ValueError:
            value = _slow_loads(line)
    else:
        value = _slow_loads(line)
    return value if isinstance(value, dict) else None


_TYPE_KEY = b'"type":"'


def sniff_type(line: bytes) -> bytes | None:
    """The top-level `type` of a JSONL line without parsing it, or None when unsure.

    Inside a JSON string every quote is escaped, so the raw bytes `"type":"` only occur as
    a key; if nothing before it opens an object or array (apart from the line's own `{`),
    that key belongs to the top-level object. Any doubt returns None and the caller parses.
    """
    position = line.find(_TYPE_KEY)
    if position <= 0 or line.count(b"{", 0, position) != 1 or line.find(b"[", 0, position) != -1:
        return None
    start = position + len(_TYPE_KEY)
    end = line.find(b'"', start)
    return line[start:end] if end != -1 else None


def _slow_loads(line: bytes) -> Any:
    # Node decodes invalid UTF-8 as U+FFFD before JSON.parse, and accepts lone-surrogate
    # escapes that jiter refuses; the json module with a lenient decode does both.
    try:
        return json.loads(line.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None


def split_lines(data: bytes, base_offset: int = 0) -> Iterator[tuple[int, int, bytes]]:
    """(line number from 1, byte offset, line) for each line of `data`, blank ones skipped.

    The last element is yielded even without a trailing newline; callers decide whether a
    line that does not parse there is a half-written tail.
    """
    offset = base_offset
    for number, line in enumerate(data.split(b"\n"), 1):
        if line and not line.isspace():
            yield number, offset, line
        offset += len(line) + 1
