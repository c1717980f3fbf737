"""JavaScript semantics the engine's numbers depend on, checked against values node printed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.engine.jsutil import (
    format_file_size,
    js_iso,
    js_last_index_of,
    js_len,
    js_round,
    js_slice,
)
from workbench.engine.memories.index import js_trim


def test_js_len_counts_utf16_units():
    assert js_len("abc") == 3
    assert js_len("é") == 1
    assert js_len("😀") == 2  # an astral character is a surrogate pair
    assert js_len("a😀b") == 4


@pytest.mark.parametrize(
    ("value", "expected"), [(0.5, 1), (1.5, 2), (2.5, 3), (-0.5, 0), (-2.5, -2), (2.4999, 2)]
)
def test_js_round_rounds_halves_up(value: float, expected: int):
    assert js_round(value) == expected


def test_js_slice_and_last_index_of_use_utf16_indexes():
    text = "😀\n😀\nx"
    assert js_slice(text, 0, 3) == "😀\n"
    assert js_last_index_of(text, "\n", 5) == 5
    assert js_last_index_of(text, "\n", 4) == 2
    assert js_last_index_of("abc", "\n", 2) == -1


@pytest.mark.parametrize(
    ("ms", "iso"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (1772713496789.9, "2026-03-05T12:24:56.789Z"),
        (1772713496789.0005, "2026-03-05T12:24:56.789Z"),
        (-1.5, "1969-12-31T23:59:59.999Z"),  # TimeClip truncates toward zero
        (1000000000000.999, "2001-09-09T01:46:40.000Z"),
    ],
)
def test_js_iso_matches_to_iso_string(ms: float, iso: str):
    assert js_iso(ms) == iso


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1024, "1KB"),
        (25000, "24.4KB"),
        (24832, "24.3KB"),  # 24.25 exactly: toFixed rounds the tie up, Python would round to even
        (25600, "25KB"),
        (39906, "39KB"),
        (1048576, "1MB"),
        (1572864, "1.5MB"),
        (5 * 1024**3, "5GB"),
    ],
)
def test_format_file_size_matches_claude_code(size: int, text: str):
    assert format_file_size(size) == text


def test_js_trim_uses_the_javascript_whitespace_set():
    # JS trims U+FEFF but keeps U+001C and U+0085, the opposite of Python's str.strip.
    assert js_trim(" \u001c a \u0085 \ufeff") == "\u001c a \u0085"


@given(st.floats(min_value=-1e15, max_value=2.6e14, allow_nan=False))
def test_js_iso_fast_path_agrees_with_datetime(ms: float):
    from datetime import UTC, datetime

    seconds, millis = divmod(int(ms), 1000)
    try:
        stamp = datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return  # out of datetime's range: the fast path never answers there
    assert js_iso(ms) == stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis:03d}Z"
