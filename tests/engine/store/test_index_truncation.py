"""MEMORY.md truncation: line gate first, then the length gate, both on UTF-16 lengths."""

from __future__ import annotations

from workbench.engine.jsutil import js_len
from workbench.engine.memories.index import (
    format_index_line,
    parse_index_line,
    strip_for_loading,
    truncate_entrypoint,
    truncation_warning,
)


def test_under_both_limits_is_returned_trimmed_and_unchanged():
    text = "\n\n" + "\n".join(f"- line {i}" for i in range(200)) + "\n\n"
    result = truncate_entrypoint(text)
    assert not result.truncated and result.reason is None
    assert result.content == text.strip() and result.kept_lines == 200
    assert truncation_warning(result) is None


def test_201_lines_keeps_the_first_200():
    lines = [f"- entry {i}" for i in range(201)]
    result = truncate_entrypoint("\n".join(lines))
    assert result.line_truncated and not result.length_truncated
    assert result.content == "\n".join(lines[:200])
    assert result.reason == "201 lines (limit: 200)"
    assert result.kept_lines == 200


def test_exactly_25000_units_is_not_truncated():
    text = "x" * 24_000 + "\n" + "y" * 999
    assert js_len(text) == 25_000
    assert not truncate_entrypoint(text).truncated


def test_length_gate_cuts_at_the_last_newline_at_or_before_25000():
    text = "x" * 24_999 + "\n" + "yy"
    result = truncate_entrypoint(text)
    assert result.length_truncated and not result.line_truncated
    assert result.content == "x" * 24_999
    assert result.kept_lines == 1
    assert result.reason == "24.4KB (limit: 24.4KB) — index entries are too long"


def test_newline_exactly_at_index_25000_is_kept_whole():
    text = "x" * 25_000 + "\n" + "tail"
    result = truncate_entrypoint(text)
    assert result.content == "x" * 25_000 and result.kept_lines == 1


def test_astral_characters_count_twice():
    line = "😀" * 6_000  # 12,000 UTF-16 units, 6,000 code points
    text = "\n".join([line] * 3)
    result = truncate_entrypoint(text)
    assert result.length == 36_002
    assert result.length_truncated  # Python's len() would say 18,002 and keep everything
    assert result.content == line + "\n" + line
    assert result.kept_lines == 2


def test_single_long_line_falls_back_to_a_hard_cut():
    result = truncate_entrypoint("z" * 30_000)
    assert js_len(result.content) == 25_000
    assert result.kept_lines == 0


def test_hard_cut_through_a_surrogate_pair_matches_js_slice():
    text = "a" * 24_999 + "😀" + "b" * 10
    result = truncate_entrypoint(text)
    assert result.content == "a" * 24_999 + "\ufffd"


def test_both_limits_report_lines_and_size():
    lines = ["w" * 150] * 250
    result = truncate_entrypoint("\n".join(lines))
    assert result.line_truncated and result.length_truncated
    assert result.reason == "250 lines and 36.9KB"
    assert result.kept_lines == 165  # 165 × 151 − 1 = 24,914 ≤ 25,000 < 166 × 151 − 1
    assert result.content == "\n".join(lines[:165])
    warning = truncation_warning(result)
    assert warning and "250 lines and 36.9KB" in warning and "165" in warning


def test_flags_are_measured_on_the_original_text():
    # 201 short lines: line-truncated; the kept part is short, but the flag for length stays off.
    result = truncate_entrypoint("\n".join(["a"] * 201))
    assert result.line_truncated and not result.length_truncated


def test_frontmatter_and_block_comments_are_stripped_before_truncation():
    text = "---\ntitle: index\n---\n<!-- maintained by hand\nacross lines -->\n- [A](a.md) — hook\n"
    assert strip_for_loading(text).strip() == "- [A](a.md) — hook"
    fenced = "```\n<!-- keep me -->\n```\n"
    assert "keep me" in strip_for_loading(fenced)


def test_index_line_parsing():
    parsed = parse_index_line("- [Role and ownership](user_role.md) — owns checkout")
    assert (parsed.title, parsed.target, parsed.hook) == (
        "Role and ownership",
        "user_role.md",
        "owns checkout",
    )
    assert parse_index_line("# Heading").target is None
    assert parse_index_line("* [T](<dir/a b.md>): hook").target == "dir/a b.md"


def test_index_lines_are_kept_near_150_characters():
    line = format_index_line("Title", "feedback_x.md", "word " * 80)
    assert js_len(line) <= 150 and line.endswith("…")
    assert format_index_line("T", "t.md", "short") == "- [T](t.md) — short"
