"""Frontmatter as Claude Code reads it: 30 lines, BOM and CRLF, the quoting retry, exact types."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.engine.memories.frontmatter import (
    _NON_PRINTABLE_CLASS,
    FRONTMATTER_RE,
    _block_span,
    _fast_parse,
    _has_non_printable,
    _load_yaml,
    _pattern,
    description_of,
    parse_frontmatter,
    parse_memory_type,
    quote_problematic_values,
    read_head,
    render_frontmatter,
)


def test_reads_bom_and_crlf_files(tmp_path: Path):
    path = tmp_path / "m.md"
    path.write_bytes(b"\xef\xbb\xbf---\r\ndescription: hello\r\ntype: user\r\n---\r\nbody\r\n")
    parsed = parse_frontmatter(read_head(path))
    assert parsed.data == {"description": "hello", "type": "user"}


def test_only_the_first_30_lines_are_read(tmp_path: Path):
    path = tmp_path / "m.md"
    fields = "\n".join(f"k{i}: v" for i in range(30))
    path.write_text(f"---\n{fields}\ndescription: late\n---\nbody\n", encoding="utf-8")
    head = read_head(path)
    assert head.count("\n") == 30
    parsed = parse_frontmatter(head)
    assert not parsed.present and parsed.data == {} and parsed.starts_with_fence


def test_unclosed_block_gives_empty_frontmatter():
    parsed = parse_frontmatter("---\ndescription: x\ntype: user\n\nbody text\n")
    assert parsed.data == {} and not parsed.present and parsed.starts_with_fence


def test_must_start_with_the_fence():
    assert parse_frontmatter("\n---\ndescription: x\n---\n").data == {}


def test_quote_retry_rescues_values_with_yaml_punctuation():
    text = "---\ndescription: Use: the [v2] API & retry @ 5%\ntype: feedback\n---\n"
    parsed = parse_frontmatter(text)
    assert parsed.used_quote_retry
    assert parsed.data == {"description": "Use: the [v2] API & retry @ 5%", "type": "feedback"}


def test_quote_retry_escapes_quotes_and_backslashes():
    assert (
        quote_problematic_values('description: say "hi" \\ [x]')
        == 'description: "say \\"hi\\" \\\\ [x]"'
    )
    assert (
        quote_problematic_values("description: 'already [quoted]'")
        == "description: 'already [quoted]'"
    )


def test_still_broken_yaml_gives_empty_frontmatter_with_the_reason():
    parsed = parse_frontmatter("---\ndescription: ok\n  tags: [a, b\n---\n")
    assert parsed.data == {} and parsed.present and parsed.error


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("user", "user"),
        ("feedback", "feedback"),
        ("Feedback", None),
        (" user", None),
        ("users", None),
        (1, None),
        (None, None),
    ],
)
def test_types_match_exactly(raw: object, expected: str | None):
    assert parse_memory_type(raw) == expected


def test_description_falsy_values_become_none():
    assert description_of({"description": ""}) is None
    assert description_of({}) is None
    assert description_of({"description": 0}) is None
    assert description_of({"description": 12}) == "12"


def test_rendered_frontmatter_reads_back():
    fields = {"name": "A: b", "description": "Use [x] & y # z", "type": "project"}
    parsed = parse_frontmatter(render_frontmatter(fields) + "\nbody\n")
    assert parsed.data == fields


_plain = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\n\r\x85\u2028\u2029"), max_size=40
)


@given(st.lists(st.tuples(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), _plain), max_size=5))
def test_fast_path_agrees_with_yaml_whenever_it_answers(pairs: list[tuple[str, str]]):
    block = "\n".join(f"{k}: {v}" for k, v in pairs)
    fast = _fast_parse(block)
    if fast is None:
        return
    assert fast == _load_yaml(block)


_keys = st.sampled_from(["name", "description", "type", "metadata", "x-y", "_k", "Type"])
_indent = st.sampled_from(["", " ", "  ", "   ", "    ", "\t", " \t", "  # c"])
_hostile_values = st.one_of(
    _plain,
    st.sampled_from(
        ["user", "yes", "No", "null", "~", "1.5", "0x1f", "2026-01-02", ".inf", "a: b", "a #b"]
    ),
    st.sampled_from(["'q'", '"q"', "[a]", "{a: b}", "&a x", "*a", "!!str x", "|", ">", "- a"]),
    # Quoted forms: the fast path reads those with no escape or quote inside.
    st.sampled_from(['"ON"', "'a: b'", '" lead"', '"x" # c', '"a\\tb"', "'it''s'", '"q\\""']),
    _plain.map(lambda v: f'"{v}"'),
    _plain.map(lambda v: f"'{v}'"),
)
# A line: `key: value`, `key:` alone (opening a block), blank, or a comment, each indented.
_line = st.tuples(
    _indent,
    st.one_of(
        st.tuples(_keys, _hostile_values).map(lambda kv: f"{kv[0]}: {kv[1]}"),
        _keys.map(lambda k: f"{k}:"),
        st.sampled_from(["", " ", "\t", "# note", "-", "---x", "key :v"]),
        _keys.map(lambda k: f"{k}:   "),
    ),
).map("".join)


_pair = st.tuples(
    _keys,
    st.one_of(_hostile_values, st.from_regex(r"[A-Za-z][A-Za-z0-9 .,()/-]{0,20}", fullmatch=True)),
).map(lambda kv: f"{kv[0]}: {kv[1]}")
# Blocks shaped like real frontmatter (`key: value` lines, `key:` opening an indented block),
# with the indents, blank lines and values varied: most are what the fast path answers.
_shaped = st.lists(
    st.one_of(
        _pair,
        st.tuples(_keys, _indent, st.lists(st.tuples(_indent, _pair), max_size=3)).map(
            lambda b: f"{b[0]}:{b[1]}\n" + "\n".join(f"{i}{p}" for i, p in b[2])
        ),
        st.sampled_from(["", "  ", "\t", " \t "]),
    ),
    max_size=6,
).map("\n".join)


@given(st.one_of(st.lists(_line, max_size=8).map("\n".join), _shaped))
def test_fast_path_agrees_with_yaml_on_nested_and_hostile_blocks(block: str):
    fast = _fast_parse(block)
    if fast is None:
        return
    assert fast == _load_yaml(block)  # and YAML reads it without error


@given(
    st.from_regex(r"[A-Za-z][A-Za-z0-9 ]{0,30}[A-Za-z0-9]", fullmatch=True),
    st.from_regex(r"[A-Za-z][A-Za-z0-9 ,.]{0,60}[A-Za-z0-9]", fullmatch=True),
    st.sampled_from(["user", "feedback", "project", "reference"]),
    st.sampled_from(["top-level", "metadata"]),
)
def test_what_claude_code_writes_takes_the_fast_path(name, description, kind, style):
    from workbench.engine.memories.file_format import new_frontmatter

    text = new_frontmatter(name, description, kind, style) + "\nbody\n"
    block = text.split("---\n")[1]
    expected = _load_yaml(block)
    if any(isinstance(v, str) and v != v.strip() for v in expected.values()):
        return
    assert _fast_parse(block) == expected


def test_quoted_words_that_yaml_would_read_as_booleans_stay_on_the_fast_path():
    # What the writer quotes ("ON", "a: b") is text; found by the property above.
    block = 'name: A0\ndescription: "ON"\ntype: user\n'
    assert _fast_parse(block) == {"name": "A0", "description": "ON", "type": "user"}
    assert _fast_parse("a: 'x: y'") == {"a": "x: y"} == _load_yaml("a: 'x: y'")
    assert _fast_parse('a: "q\\"x"') is None  # an escape: YAML decides


# Runs of dashes, line breaks, the whitespace `\s` takes (and YAML does not) and text, so that
# fences open, close, overlap and trail whitespace in every way.
_fenced = st.lists(
    st.sampled_from(
        ["-", "---", "\n", " ", "\t", "\r", "\x0b", "\x0c", "\x85", "\u2028", "\xa0", "a", "k: v"]
    ),
    max_size=30,
).map("".join)


@given(_fenced)
def test_the_block_is_where_the_frontmatter_regex_finds_it(text: str):
    match = FRONTMATTER_RE.match(text)
    expected = (match.start(1), match.end(1), match.end()) if match else None
    assert _block_span(text) == expected


def test_trailing_spaces_are_not_part_of_a_plain_value():
    assert _fast_parse("name: a b   \ntype: user ") == {"name": "a b", "type": "user"}


@given(st.one_of(st.text(), st.text(alphabet=st.characters(max_codepoint=0x7F))))
def test_the_ascii_check_for_characters_yaml_refuses_is_the_whole_one(text: str):
    assert _has_non_printable(text) == bool(_pattern(_NON_PRINTABLE_CLASS).search(text))
