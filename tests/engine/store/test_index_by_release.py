"""MEMORY.md loading under both releases: CRLF, a trailing U+001F, the warning (spec 08)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.engine import Engine
from workbench.engine.memories.index import (
    strip_for_loading,
    truncate_entrypoint,
    truncation_warning,
)
from workbench.engine.profiles import profile_for

CURRENT = profile_for("2.1.332")
LEGACY = profile_for("2.1.88")


def _lines(count: int, width: int) -> list[str]:
    """`count` index lines, each exactly `width` characters."""
    out = []
    for i in range(count):
        head = f"- [Entry {i}](e{i}.md) — "
        out.append(head + "x" * (width - len(head)))
    return out


def _index_of_length(total: int, count: int = 150) -> list[str]:
    # count lines joined with LF come to `total` units.
    width = (total - (count - 1)) // count
    lines = _lines(count, width)
    lines[-1] += "y" * (total - len("\n".join(lines)))
    assert len("\n".join(lines)) == total
    return lines


@pytest.mark.parametrize("profile", [LEGACY, CURRENT])
def test_crlf_counts_toward_the_limit_in_both_releases(profile):
    lines = _index_of_length(24_939)
    lf = truncate_entrypoint("\n".join(lines), profile.index)
    crlf = truncate_entrypoint("\r\n".join(lines), profile.index)
    assert not lf.truncated and lf.length == 24_939
    assert crlf.length == 25_088 and crlf.length_truncated  # 149 more units


def test_the_loaded_text_keeps_cr_only_under_2_1_88():
    text = "\r\n".join(["- [A](a.md) — one", "- [B](b.md) — two"])
    old = truncate_entrypoint(text, LEGACY.index)
    new = truncate_entrypoint(text, CURRENT.index)
    assert "\r" in old.loaded and "\r" not in new.loaded
    assert new.loaded == "- [A](a.md) — one\n- [B](b.md) — two"


def test_a_trailing_unit_separator_is_trimmed_only_by_the_current_release():
    text = "- [A](a.md) — one\x1f"
    assert truncate_entrypoint(text, LEGACY.index).loaded.endswith("\x1f")
    assert truncate_entrypoint(text, CURRENT.index).loaded == "- [A](a.md) — one"


def test_the_current_warning_says_where_the_cut_falls():
    lines = _lines(230, 60)
    text = "\n".join(lines)
    old = truncation_warning(truncate_entrypoint(text, LEGACY.index))
    new = truncation_warning(truncate_entrypoint(text, CURRENT.index))
    assert old is not None and new is not None
    assert "30 lines after the cut" in new and "line 201" in new and "- [Entry 200](e200.md)" in new
    assert "line 201" not in old


def test_a_single_overlong_line_is_cut_after_25000_characters():
    warning = truncation_warning(truncate_entrypoint("z" * 30_000, CURRENT.index))
    assert warning is not None and "first 25,000 characters of line 1" in warning


def test_strip_for_loading_keeps_line_endings():
    assert strip_for_loading("\ufeff---\r\nx: 1\r\n---\r\n- [A](a.md)\r\n") == "- [A](a.md)\r\n"


def test_the_index_report_follows_the_release(tmp_path: Path):
    memory = tmp_path / "memory"
    memory.mkdir()
    lines = _index_of_length(24_939)
    (memory / "MEMORY.md").write_bytes("\r\n".join(lines).encode("utf-8"))
    (tmp_path / "p").mkdir()
    reports = {}
    for version in ("2.1.88", "2.1.332"):
        engine = Engine.open(
            tmp_path / "p",
            config_home=str(tmp_path / "c"),
            memory_dir=str(memory),
            claude_version=version,
        )
        reports[version] = engine.memories.index()
    for report in reports.values():
        assert report.length == 25_088 and report.length_truncated
        assert all("\r" not in e.text for e in report.entries)
    assert "\r" in reports["2.1.88"].loaded_content
    assert "\r" not in reports["2.1.332"].loaded_content
    assert "The cut falls at line" in (reports["2.1.332"].warning or "")


# --- cleaning after the cut (2.1.284 on) -------------------------------------------------------


def test_cleaning_starts_in_the_release_the_bisection_found():
    text = "- [A](a.md) — one\u200b\n- [B](b.md) — two\x1f"
    before = truncate_entrypoint(text, profile_for("2.1.283").index)
    after = truncate_entrypoint(text, profile_for("2.1.284").index)
    assert before.loaded == text
    assert after.loaded == "- [A](a.md) — one\n- [B](b.md) — two"


def test_invisible_characters_count_toward_the_limit_then_go():
    # 150 lines of 24,939 units; a U+0001 at the end of each makes them 25,089.
    lines = [line + "\x01" for line in _index_of_length(24_939)]
    cut = truncate_entrypoint("\n".join(lines), CURRENT.index)
    assert cut.length == 25_089 and cut.length_truncated and cut.kept_lines == 149
    assert "\x01" not in cut.loaded and cut.loaded.count("\n") == 148


def test_line_separators_become_line_breaks_after_the_line_gate():
    lines = [f"- [E{i}](e{i}.md) — part one\u2028part two" for i in range(150)]
    cut = truncate_entrypoint("\n".join(lines), CURRENT.index)
    assert not cut.truncated  # 150 lines as written, under the 200-line gate
    assert cut.loaded.count("\n") == 299 and "\u2028" not in cut.loaded


def test_a_lone_cr_ends_a_line_and_the_trim_runs_again():
    text = "\x01\u200b  \n- [A](a.md) — one\r- [B](b.md) — two\u00a0\u2028\u0085"
    loaded = truncate_entrypoint(text, CURRENT.index).loaded
    assert loaded == "- [A](a.md) — one\n- [B](b.md) — two"
    kept = "tab\there, joiners a\u200db\u200cc, emoji \u2764\ufe0f, accent e\u0301"
    assert truncate_entrypoint(kept, CURRENT.index).loaded == kept
