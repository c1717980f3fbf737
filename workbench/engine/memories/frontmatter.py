"""Memory-file frontmatter, read and written the way Claude Code does (spec 01 §2.2).

Claude Code reads only the first 30 lines of a memory file (BOM stripped, CRLF folded), matches
`^---\\s*\\n([\\s\\S]*?)---\\s*\\n?`, parses the block as YAML and, when that fails, retries once
after double-quoting simple values holding YAML punctuation. Anything still broken yields `{}`.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from workbench.engine.memories.models import MEMORY_TYPES  # public: the editor offers them
from workbench.engine.userfiles import open_regular

FRONTMATTER_MAX_LINES = 30
FRONTMATTER_MAX_BYTES = 64 * 1024
"""The most of a file read for its frontmatter (Claude Code reads 30 lines of any length)."""
YAML_MAX_DEPTH = 64
YAML_MAX_NODES = 10_000
"""Values a frontmatter block may hold once its aliases are expanded (real ones hold ~5)."""

FRONTMATTER_RE = re.compile(r"^---\s*\n([\s\S]*?)---\s*\n?")
# The same match in two steps (`_block_span`): the opening line, then the first `---` after
# it with the whitespace that follows.
_OPENING_FENCE = re.compile(r"---\s*\n")
_CLOSING_FENCE = re.compile(r"---\s*")
_SIMPLE_LINE = re.compile(r"^([a-zA-Z_-]+):\s+(.+)$")
_YAML_SPECIAL = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
# A line the fast path may read without YAML: `key: plain words` with no YAML punctuation.
# The value's trailing spaces are left to `rstrip` (a lazy `*?` before `[ ]*$` tries the end
# of the line at every character).
_FAST_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):[ ]+([^\s'\"{}\[\]*&#!|>%@`,?:~=<-][^:#\t]*)$")
# `key: "text"` or `key: 'text'` with no escape or quote inside: the text, whatever it spells
# (Claude Code's writer and ours quote a description such as `ON` or `a: b` this way).
_FAST_QUOTED = re.compile(r"""^([A-Za-z_][A-Za-z0-9_-]*):[ ]+(?:"([^"\\]*)"|'([^']*)')[ ]*$""")
# `key:` alone on its line, opening a block of indented `key: plain text` lines (the
# `metadata:` block Claude Code 2.1.332 writes the type in).
_FAST_PARENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):[ ]*$")
# Characters YAML refuses to read; such a block must go through YAML to fail the same way.
# Compiled when first used: a negated class this wide costs ~8 ms to compile, which every
# hook and command that imported this module used to pay; an ASCII block (nearly every one)
# needs only the ASCII ones.
_NON_PRINTABLE_CLASS = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
_NON_PRINTABLE_ASCII = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Plain scalars YAML (1.1, as PyYAML reads it) turns into something other than a string.
_YAML_WORDS = frozenset(
    "y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF "
    "null Null NULL".split()
)
_NUMBER_LIKE = re.compile(
    r"""^(?:
        [-+]?(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][-+]?\d+)?   # numbers
      | 0[xob][0-9a-fA-F_]+
      | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
      | \d{4}-\d\d?-\d\d?.*                            # dates and timestamps
    )$""",
    re.VERBOSE,
)


@functools.cache
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _is_non_string(value: str) -> bool:
    first = value[0]
    if first.isdigit() or first in "+.":
        return bool(_NUMBER_LIKE.match(value))
    return value in _YAML_WORDS


class ParsedFrontmatter(NamedTuple):
    """The outcome of reading a frontmatter block (a tuple, not a `Record`: a listing parses
    one or two a file, and a tuple is built in a fifth of the time)."""

    data: dict[str, Any]
    """The parsed mapping; `{}` when missing, unclosed or unparseable."""
    present: bool
    """The text starts with a `---` block that closes within the lines read."""
    starts_with_fence: bool
    """The first line is `---` (so an unclosed block is a likely mistake)."""
    error: str | None = None
    """Why the YAML could not be parsed, even after the quoting retry."""
    used_quote_retry: bool = False
    body_offset: int = 0
    """Where the body starts in the text that was parsed."""
    limit: str | None = None
    """Why the YAML was refused before parsing (too big, too deep, aliases expanding too far)."""


def normalize_text(text: str) -> str:
    """Strip a UTF-8 BOM and fold CRLF to LF, as Claude Code's range reader does."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n")


def read_head(
    path: str | Path, max_lines: int = FRONTMATTER_MAX_LINES, known: os.stat_result | None = None
) -> str:
    """The first `max_lines` lines of a file, decoded leniently and normalised.

    Only a regular file is read (see `userfiles`), and never more than
    `FRONTMATTER_MAX_BYTES`: a 500 MB one-line file costs one small read, not a slurp.
    """
    fd, _ = open_regular(path, known)
    try:
        data = os.read(fd, 8192)
        newlines = data.count(b"\n")
        if newlines < max_lines and len(data) == 8192:
            # Frontmatter is small; keep reading only when 30 lines have not arrived yet.
            chunks, total = [data], len(data)
            while newlines < max_lines and total < FRONTMATTER_MAX_BYTES:
                more = os.read(fd, min(65536, FRONTMATTER_MAX_BYTES - total))
                if not more:
                    break
                chunks.append(more)
                total += len(more)
                newlines += more.count(b"\n")
            data = b"".join(chunks)
    finally:
        os.close(fd)
    if newlines >= max_lines:  # most memories are shorter: nothing to cut
        cut = -1
        for _ in range(max_lines):
            cut = data.find(b"\n", cut + 1)
        data = data[: cut + 1]
    return normalize_text(data.decode("utf-8", errors="replace"))


def quote_problematic_values(block: str) -> str:
    """Double-quote simple `key: value` lines whose value holds YAML punctuation."""
    out = []
    for line in block.split("\n"):
        match = _SIMPLE_LINE.match(line)
        if match:
            key, value = match.groups()
            already_quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'"
            if not already_quoted and _YAML_SPECIAL.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                out.append(f'{key}: "{escaped}"')
                continue
        out.append(line)
    return "\n".join(out)


def _has_non_printable(text: str) -> bool:
    """Whether `text` holds a character YAML refuses to read."""
    if text.isascii():
        return _NON_PRINTABLE_ASCII.search(text) is not None
    return _pattern(_NON_PRINTABLE_CLASS).search(text) is not None


def _fast_parse(block: str) -> dict[str, Any] | None:
    """Parse blocks made only of `key: plain text` lines, and `key:` lines opening one level
    of such lines indented alike, without YAML; None if unsure (YAML then decides)."""
    if _has_non_printable(block):
        return None
    result: dict[str, Any] = {}
    nested: dict[str, Any] | None = None  # the block an indented line belongs to
    indent = ""
    for line in block.split("\n"):
        if line[:1] == " ":
            if not line.strip(" "):
                continue  # blank
            if nested is None:
                return None  # to YAML, a continuation of the value above
            stripped = line.lstrip(" ")
            lead = line[: len(line) - len(stripped)]
            if indent and lead != indent:
                return None
            indent = lead
            line = stripped
            target = nested
        elif not line:
            continue
        else:
            if nested is not None and not nested:
                return None  # `key:` with nothing under it is null: leave that to YAML
            nested, target = None, result
            # Only a line ending in `:` (and spaces) may open a block; most are `key: value`.
            opening = _FAST_PARENT.match(line) if line.rstrip(" ").endswith(":") else None
            if opening is not None:
                if opening.group(1) in result:
                    return None
                nested, indent = {}, ""
                result[opening.group(1)] = nested
                continue
        match = _FAST_LINE.match(line)
        if match is not None:
            key, value = match.group(1), match.group(2).rstrip(" ")
            if _is_non_string(value):
                return None
        else:
            quoted = _FAST_QUOTED.match(line)
            if quoted is None:
                return None
            key, double, single = quoted.groups()
            value = double if double is not None else single
        if key in target:
            return None
        target[key] = value
    if nested is not None and not nested:
        return None
    return result


class _YamlError(Exception):
    """Stands in for yaml.YAMLError so callers need not import yaml to catch it."""


class _YamlLimitError(_YamlError):
    """The block was refused for its size, depth or alias expansion, not its syntax."""


def _check_yaml_limits(yaml: Any, loader: type, block: str) -> None:
    """Refuse YAML whose aliases expand too far, that nests too deep or that is too big.

    PyYAML shares an aliased node instead of copying it, so a 15-line "billion laughs" loads
    at once; it is everything after (str(), JSON, a widget) that expands it. The event stream
    is flat, so walking it measures the expanded size without building or recursing.
    """
    if len(block) > FRONTMATTER_MAX_BYTES:
        raise _YamlLimitError(f"frontmatter is over {FRONTMATTER_MAX_BYTES // 1024} KB")
    if "&" not in block:
        # No anchors, so nothing to expand; and each level of nesting needs a new line, a
        # bracket, a dash, a colon or a question mark, so few of those bound the depth.
        marks = sum(block.count(c) for c in "\n[{-:?")
        if marks < YAML_MAX_DEPTH:
            return
    expanded = 0  # nodes, counting each alias as the whole node it names
    sizes: dict[str, int] = {}
    open_nodes: list[tuple[str | None, int]] = []
    collection_start = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    collection_end = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    for event in yaml.parse(block, Loader=loader):
        if isinstance(event, collection_start):
            open_nodes.append((event.anchor, expanded))
            expanded += 1
            if len(open_nodes) > YAML_MAX_DEPTH:
                raise _YamlLimitError(f"frontmatter nests deeper than {YAML_MAX_DEPTH} levels")
        elif isinstance(event, collection_end):
            anchor, start = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = expanded - start
        elif isinstance(event, yaml.ScalarEvent):
            expanded += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes:
                if any(anchor == event.anchor for anchor, _ in open_nodes):
                    raise _YamlLimitError("frontmatter has an alias that refers to itself")
                continue  # an unknown alias: loading reports it
            expanded += sizes[event.anchor]
        if expanded > YAML_MAX_NODES:
            raise _YamlLimitError(f"its YAML aliases expand to over {YAML_MAX_NODES:,} values")


def _load_yaml(block: str) -> dict[str, Any]:
    # PyYAML costs ~40 ms to import; most frontmatter takes the fast path and never needs it.
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_yaml_limits(yaml, loader, block)
        data = yaml.load(block, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise _YamlError(str(exc) or exc.__class__.__name__) from exc
    except RecursionError:
        raise _YamlLimitError("frontmatter nests too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _YamlError("frontmatter is not a mapping")
    return {str(k): v for k, v in data.items()}


def _block_span(text: str) -> tuple[int, int, int] | None:
    """Where `FRONTMATTER_RE`'s block starts and ends in `text`, and where its match ends;
    None when it does not match.

    The regex's lazy block tries for the closing `---` at every character, a third of the
    cost of parsing a short file's frontmatter. The block ends at the first `---` after the
    opening line, which `str.find` finds at once.
    """
    opening = _OPENING_FENCE.match(text)
    if opening is None:
        return None
    start = opening.end()
    close = text.find("---", start)
    if close == -1:
        return None
    closing = _CLOSING_FENCE.match(text, close)
    assert closing is not None  # `---` is there
    return start, close, closing.end()


def parse_frontmatter(text: str) -> ParsedFrontmatter:
    """Parse the frontmatter at the start of already-normalised `text`."""
    first_line_end = text.find("\n")
    first_line = text if first_line_end == -1 else text[:first_line_end]
    starts_with_fence = first_line.rstrip() == "---"
    span = _block_span(text)
    if span is None:
        return ParsedFrontmatter({}, present=False, starts_with_fence=starts_with_fence)
    start, close, body_offset = span
    block = text[start:close]
    fast = _fast_parse(block)
    if fast is not None:
        return ParsedFrontmatter(fast, True, starts_with_fence, body_offset=body_offset)
    limit = None
    try:
        return ParsedFrontmatter(
            _load_yaml(block), True, starts_with_fence, body_offset=body_offset
        )
    except _YamlLimitError as exc:
        limit = str(exc)
    except _YamlError:
        pass
    # A refused block gets the same quoting retry as a broken one, as Claude Code's own
    # parser (which caps aliases too) would give it; the limit is kept for lint to report.
    try:
        data = _load_yaml(quote_problematic_values(block))
        return ParsedFrontmatter(
            data,
            True,
            starts_with_fence,
            used_quote_retry=True,
            body_offset=body_offset,
            limit=limit,
        )
    except _YamlError as exc:
        message = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        return ParsedFrontmatter(
            {}, True, starts_with_fence, error=message, body_offset=body_offset, limit=limit
        )


def parse_memory_type(raw: object) -> str | None:
    """`parseMemoryType`: the value only if it is exactly one of the four types."""
    return raw if isinstance(raw, str) and raw in MEMORY_TYPES else None


def description_of(data: dict[str, Any]) -> str | None:
    """`frontmatter.description || null`: falsy values become None; others become text."""
    value = data.get("description")
    if not value:
        return None
    return value if isinstance(value, str) else str(value)


def render_frontmatter(fields: dict[str, Any]) -> str:
    """A `---` block for `fields`, quoting only where YAML needs it."""
    lines = ["---"]
    for key, value in fields.items():
        if value is None:
            continue
        lines.append(f"{key}: {_render_scalar(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def _render_scalar(value: Any) -> str:
    if not isinstance(value, str):
        import yaml

        return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
    if "\n" in value:
        value = " ".join(value.split())
    # `---` anywhere would end the block early (Claude Code's fence regex is not anchored to
    # a line); characters YAML cannot hold plainly (NEL is a line break to it) need escapes.
    plain = "---" not in value and not _pattern(_MUST_ESCAPE_CLASS).search(value)
    if plain and _fast_parse(f"k: {value}") == {"k": value}:
        return value
    return _double_quoted(value)


# Characters a double-quoted YAML scalar must spell as escapes: everything YAML cannot hold,
# the line breaks YAML folds (NEL, LS, PS) and the byte-order mark.
_MUST_ESCAPE_CLASS = (
    "[^\x09\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)


def _double_quoted(value: str) -> str:
    """`value` as a double-quoted YAML scalar that reads back exactly and never holds `---`."""
    must_escape = _pattern(_MUST_ESCAPE_CLASS)
    out = ['"']
    dashes = 0
    for char in value:
        if char == "-":
            dashes += 1
            out.append("\\x2d" if dashes == 3 else "-")
            dashes %= 3
            continue
        dashes = 0
        if char in '"\\':
            out.append("\\" + char)
        elif must_escape.match(char):
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def split_document(text: str) -> tuple[ParsedFrontmatter, str]:
    """Frontmatter and body of a whole memory file (body after the closing fence)."""
    text = normalize_text(text)
    parsed = parse_frontmatter(text)
    body = text[parsed.body_offset :] if parsed.present else text
    return parsed, body
