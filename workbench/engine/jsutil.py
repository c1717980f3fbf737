"""JavaScript semantics that Claude Code's numbers depend on.

Claude Code measures strings with JS `.length` (UTF-16 code units), rounds with `Math.round`
(half up) and prints times with `Date.prototype.toISOString`. Python differs on all three, so
every limit and estimate in the engine goes through these helpers.
"""

from __future__ import annotations

import functools
import math
import time


def js_len(text: str) -> int:
    """Length of `text` as JavaScript counts it (UTF-16 code units)."""
    if text.isascii():
        return len(text)
    # JS strings may hold lone surrogates (a transcript's "\ud800"): one unit each.
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


def js_round(value: float) -> int:
    """`Math.round`: halves go up (towards +infinity), unlike Python's banker's rounding."""
    return math.floor(value + 0.5)


def js_slice(text: str, start: int, end: int | None = None) -> str:
    """`text.slice(start, end)` in UTF-16 units; a split surrogate pair becomes U+FFFD."""
    if text.isascii():
        return text[start:end]
    units = text.encode("utf-16-le", errors="surrogatepass")
    stop = None if end is None else end * 2
    return units[start * 2 : stop].decode("utf-16-le", errors="replace")


def js_last_index_of(text: str, needle: str, from_index: int) -> int:
    """`text.lastIndexOf(needle, fromIndex)` with both indexes in UTF-16 units."""
    if text.isascii():
        return text.rfind(needle, 0, from_index + len(needle))
    units = text.encode("utf-16-le", errors="surrogatepass")
    pattern = needle.encode("utf-16-le", errors="surrogatepass")
    limit = (from_index * 2) + len(pattern)
    pos = units.rfind(pattern, 0, limit)
    while pos != -1 and pos % 2:
        # A match at an odd byte offset straddles two code units; keep looking.
        pos = units.rfind(pattern, 0, pos + len(pattern) - 1)
    return -1 if pos == -1 else pos // 2


_YEAR_10000 = 253_402_300_800
"""Seconds from the epoch to 10000-01-01, where four-digit years end."""


@functools.lru_cache(maxsize=4096)
def _utc_date(day: int) -> str:
    """`YYYY-MM-DD` of the `day`th day after 1970-01-01 (UTC days are 86,400 s long)."""
    t = time.gmtime(day * 86_400)
    return f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"


def js_iso(mtime_ms: float) -> str:
    """`new Date(ms).toISOString()`: UTC; the time value is truncated toward zero (TimeClip)."""
    whole_ms = math.trunc(mtime_ms)
    seconds, millis = divmod(whole_ms, 1000)
    if 0 <= seconds < _YEAR_10000:
        # A listing formats every file's mtime: the date once a day, the time by division.
        day, second = divmod(seconds, 86_400)
        hour, second = divmod(second, 3600)
        minute, second = divmod(second, 60)
        return f"{_utc_date(day)}T{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"
    from datetime import UTC, datetime  # here: the status line and hooks never format a date

    stamp = datetime.fromtimestamp(seconds, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis:03d}Z"


def now_iso() -> str:
    """The current time formatted like `toISOString()`."""
    import time

    return js_iso(time.time() * 1000)


def js_to_fixed(value: float, digits: int) -> str:
    """`Number.prototype.toFixed`: exact binary value, ties rounded up (Python rounds to even)."""
    from decimal import ROUND_HALF_UP, Decimal

    quantum = Decimal(1).scaleb(-digits)
    return str(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP))


def format_file_size(size_in_bytes: int) -> str:
    """Claude Code's `formatFileSize`: bytes, then KB/MB/GB with one decimal, `.0` dropped."""
    kb = size_in_bytes / 1024
    if kb < 1:
        return f"{size_in_bytes} bytes"
    for value, unit in ((kb, "KB"), (kb / 1024, "MB")):
        if value < 1024:
            return _strip_point_zero(js_to_fixed(value, 1)) + unit
    return _strip_point_zero(js_to_fixed(kb / 1024 / 1024, 1)) + "GB"


def _strip_point_zero(text: str) -> str:
    return text[:-2] if text.endswith(".0") else text
