"""How old a memory is and what the agent is told about it (spec 02 §3.5).

The day arithmetic is Claude Code's exactly (`floor((now - mtime) / 86_400_000)`, never
negative); the caution text carries the same facts in our own words.
"""

from __future__ import annotations

import math
import time

DAY_MS = 86_400_000


def now_ms() -> float:
    """The current time in epoch milliseconds, like `Date.now()`."""
    return time.time() * 1000


def memory_age_days(mtime_ms: float, now: float | None = None) -> int:
    """`memoryAgeDays`: whole days since the file was written, floored, never negative."""
    current = now_ms() if now is None else now
    return max(0, math.floor((current - mtime_ms) / DAY_MS))


def memory_age(days: int) -> str:
    """`memoryAge`: `today`, `yesterday` or `<d> days ago`."""
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    return f"{days} days ago"


def freshness_text(days: int) -> str:
    """The caution given with memories older than a day; empty for today and yesterday."""
    if days <= 1:
        return ""
    return (
        f"This memory was saved {days} days ago. A memory records one moment, not the live "
        "state of the project: what it says about how the code behaves, and any file:line "
        "it cites, may have changed since. Check it against the current code before "
        "presenting it as fact."
    )


def freshness_note(days: int) -> str:
    """`memoryFreshnessNote`: the caution as a system reminder (prepended to Read output)."""
    text = freshness_text(days)
    return f"<system-reminder>{text}</system-reminder>\n" if text else ""


def memory_header(path: str, days: int) -> str:
    """`memoryHeader`: the line introducing a surfaced memory, with the caution when old."""
    text = freshness_text(days)
    if text:
        return f"{text}\n\nMemory: {path}:"
    return f"Memory (saved {memory_age(days)}): {path}:"
