"""A memory's age in days and the `memory-stale` finding: the only facts of a listing that
depend on today (apart, so the kept listing's patching loads nothing else)."""

from __future__ import annotations

import math

DAY_MS = 86_400_000
STALE_AFTER_DAYS = 30


def age_days(now_ms: float, mtime_ms: float) -> int:
    """Whole days since `mtime_ms`, never negative (memoryAgeDays)."""
    return max(0, math.floor((now_ms - mtime_ms) / DAY_MS))


def stale_message(age_days: int) -> str:
    """What `memory-stale` says of a file last changed `age_days` ago."""
    return f"last changed {age_days} days ago: check it still holds"
