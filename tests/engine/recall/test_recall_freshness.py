"""Age and freshness (spec 02 §3.5): Claude Code's day arithmetic, our wording."""

from __future__ import annotations

import pytest

from workbench.engine.recall.freshness import (
    DAY_MS,
    freshness_note,
    freshness_text,
    memory_age,
    memory_age_days,
    memory_header,
)

NOW = 1_800_000_000_000.0


@pytest.mark.parametrize(
    ("delta_ms", "days"),
    [
        (0, 0),
        (DAY_MS - 1, 0),
        (DAY_MS, 1),
        (2 * DAY_MS - 1, 1),
        (2 * DAY_MS, 2),
        (45.9 * DAY_MS, 45),
        (-5 * DAY_MS, 0),  # a file from the future (clock skew) is "today", never negative
    ],
)
def test_age_days_floor_and_clamp(delta_ms: float, days: int):
    assert memory_age_days(NOW - delta_ms, NOW) == days


def test_age_words():
    assert [memory_age(d) for d in (0, 1, 2, 31)] == [
        "today",
        "yesterday",
        "2 days ago",
        "31 days ago",
    ]


def test_freshness_text_only_after_a_day():
    assert freshness_text(0) == freshness_text(1) == ""
    assert freshness_note(1) == ""
    text = freshness_text(2)
    assert "2 days" in text and "file:line" in text and "current code" in text
    assert freshness_note(9) == f"<system-reminder>{freshness_text(9)}</system-reminder>\n"
    # our own words, not Claude Code's sentence
    assert "Memories are point-in-time observations, not live state" not in text


def test_headers():
    assert memory_header("/m/a.md", 0) == "Memory (saved today): /m/a.md:"
    assert memory_header("/m/a.md", 1) == "Memory (saved yesterday): /m/a.md:"
    assert memory_header("/m/a.md", 7) == f"{freshness_text(7)}\n\nMemory: /m/a.md:"
