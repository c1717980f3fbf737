"""Frontmatter read with limits: aliases that expand too far, deep nesting and oversized
blocks are refused before PyYAML builds them; below the limits the result is PyYAML's."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import yaml
from hostile import alias_bomb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.engine.memories.frontmatter import (
    FRONTMATTER_MAX_BYTES,
    YAML_MAX_DEPTH,
    YAML_MAX_NODES,
    parse_frontmatter,
    read_head,
)
from workbench.engine.memories.lint import FileFacts, lint_file


def test_alias_bomb_is_refused_and_read_as_plain_text():
    parsed = parse_frontmatter(alias_bomb())
    assert parsed.limit and "aliases expand" in parsed.limit
    # The quoting retry reads each simple line as text, as for any YAML the parser refuses.
    assert parsed.used_quote_retry and parsed.data["description"] == "*i"
    assert all(isinstance(v, str) for v in parsed.data.values())
    findings = lint_file(FileFacts("bomb.md", alias_bomb(), 600, 0, False))
    assert [f.rule for f in findings if "frontmatter" in f.rule] == ["frontmatter-too-complex"]


def test_block_style_bomb_is_one_error_not_an_expansion():
    lines = ["---", "a: &a", *["  - lol"] * 9]
    for name, prev in zip("bcdefgh", "abcdefg", strict=True):
        lines += [f"{name}: &{name}", *[f"  - *{prev}"] * 9]
    text = "\n".join([*lines, "description: *h", "---", ""])
    parsed = parse_frontmatter(text)
    assert parsed.limit and parsed.data == {} and parsed.error


def test_self_referring_alias_is_refused():
    parsed = parse_frontmatter("---\nloop: &x [1, *x]\ntype: user\n---\n")
    assert parsed.limit == "frontmatter has an alias that refers to itself"
    assert parsed.data == {"loop": "&x [1, *x]", "type": "user"}


def test_nesting_and_size_limits():
    shallow = "[" * 10 + "]" * 10
    deep = "[" * (YAML_MAX_DEPTH + 1) + "]" * (YAML_MAX_DEPTH + 1)
    assert parse_frontmatter(f"---\na: {shallow}\n---\n").limit is None
    assert "nests deeper" in parse_frontmatter(f"---\na: {deep}\n---\n").limit
    big = "---\ndescription: [" + "x, " * (FRONTMATTER_MAX_BYTES // 3) + "x]\n---\n"
    assert "over 64 KB" in parse_frontmatter(big).limit


def test_read_head_holds_at_most_the_byte_cap(tmp_path: Path):
    huge = tmp_path / "huge.md"
    with open(huge, "wb") as handle:
        handle.write(b"---\ndescription: " + b"y" * (4 * 1024 * 1024) + b"\n---\n")
    tracemalloc.start()
    head = read_head(huge)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(head) == FRONTMATTER_MAX_BYTES and peak < 4 * FRONTMATTER_MAX_BYTES


_scalars = st.one_of(
    st.integers(-1000, 1000),
    st.booleans(),
    st.none(),
    # No "-": a value holding "---" would close the block (Claude Code's regex), not a limit.
    st.text(alphabet="abc xyz:#'\"[]{}&*!|>", max_size=12),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text("abc", max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@st.composite
def _documents(draw) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    """A frontmatter block, sometimes with an anchor aliased `uses` times; and how many
    values it holds once the aliases are expanded."""
    data = draw(st.dictionaries(st.sampled_from(["name", "description", "type", "x"]), _values))
    uses = draw(st.sampled_from([0, 0, 1, 3, 20]))
    flow = not uses and draw(st.booleans())  # more keys follow a block-style mapping only
    body = yaml.safe_dump(data, default_flow_style=flow) if data else ""
    fanout = draw(st.sampled_from([1, 2, 10, 30]))
    levels = draw(st.integers(1, 4))
    expansion = 0
    if uses:
        body += "base: &l0 [" + ", ".join(["v"] * fanout) + "]\n"
        sizes = [fanout + 1]
        for n in range(1, levels):
            body += f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * fanout) + "]\n"
            sizes.append(1 + fanout * sizes[-1])
        body += "uses: [" + ", ".join([f"*l{levels - 1}"] * uses) + "]\n"
        expansion = sum(sizes) + 1 + uses * sizes[-1]
    return f"---\n{body}---\n", expansion


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_pyyaml_below_the_limits_refused_above(document: tuple[str, int]):
    text, expansion = document
    parsed = parse_frontmatter(text)
    if expansion > 4 * YAML_MAX_NODES:
        assert parsed.limit is not None
    elif expansion < YAML_MAX_NODES // 4:
        block = text[4:-4]
        expected = yaml.safe_load(block) or {}
        assert parsed.limit is None and parsed.error is None
        assert parsed.data == {str(k): v for k, v in expected.items()}
