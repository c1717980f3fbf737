"""The two memory-file formats: reading the type from either, writing the user's own.

Claude Code 2.1.88 writes (and reads) a top-level `type:`; 2.1.332 writes the type nested,
`metadata:` then `  type: feedback`, a short kebab-case `name`, and links other memories in
bodies as `[[name]]` (spec 08). Both shapes occur in real folders, often side by side. This
module reads keys out of already-parsed frontmatter (YAML loading stays in `frontmatter.py`)
and edits a file's frontmatter line by line, so an edit keeps the file's format, its other
keys, their order and their quoting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from workbench.engine.memories.frontmatter import (
    FRONTMATTER_RE,
    MEMORY_TYPES,
    parse_frontmatter,
    parse_memory_type,
    render_frontmatter,
)
from workbench.engine.profiles.rules import TypeLocation

BOTH_LOCATIONS: tuple[TypeLocation, ...] = ("top-level", "metadata")
"""Where the workbench itself looks for a type (it shows what the file says)."""

_LINK = re.compile(r"\[\[([^\[\]\n|#]+?)(?:[|#][^\[\]\n]*)?\]\]")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_TOP_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(.*)$")


class TypeReading(NamedTuple):
    """What a file's frontmatter says about its type (a tuple: the scanner makes one per
    file, thousands at a time)."""

    type: str | None
    """One of the four types, or None."""
    location: TypeLocation | None
    """Where a `type` key was found (even an invalid one), or None when there is none."""
    raw: Any = None
    """The value as written (for `type-invalid` findings)."""


_NO_TYPE = TypeReading(None, None)


def read_type(
    data: Mapping[str, Any], locations: Iterable[TypeLocation] = BOTH_LOCATIONS
) -> TypeReading:
    """The type at the first of `locations` that has a `type` key."""
    for location in locations:
        if location == "top-level":
            if data.get("type") is not None:
                raw = data["type"]
                return TypeReading(parse_memory_type(raw), "top-level", raw)
        else:
            metadata = data.get("metadata")
            if isinstance(metadata, Mapping) and metadata.get("type") is not None:
                raw = metadata["type"]
                return TypeReading(parse_memory_type(raw), "metadata", raw)
    return _NO_TYPE


def memory_type_of(
    data: Mapping[str, Any], locations: Iterable[TypeLocation] = BOTH_LOCATIONS
) -> str | None:
    """The memory's type (one of the four), read from either format by default."""
    return read_type(data, locations).type


def type_location(data: Mapping[str, Any]) -> TypeLocation | None:
    """Which format the file uses for its type: `metadata` (nested) or `top-level`."""
    return read_type(data).location


# --- names and links ------------------------------------------------------------------------


def kebab_name(name: str, limit: int = 60) -> str:
    """A short kebab-case slug of `name` (`Small PRs, please` → `small-prs-please`)."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[:limit].rstrip("-") or "memory"


def body_links(body: str) -> list[str]:
    """The `[[name]]` links of a body in order, once each (code blocks and spans skipped;
    `[[name|label]]` and `[[name#part]]` link to `name`)."""
    if "[[" not in body:
        return []  # most bodies: no line to walk
    found: list[str] = []
    in_fence = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or "[[" not in line:
            continue
        for match in _LINK.finditer(_INLINE_CODE.sub("", line)):
            name = match.group(1).strip()
            if name and name not in found:
                found.append(name)
    return found


def link_keys(name: str | None, stem: str) -> set[str]:
    """What a `[[…]]` link may use to reach a memory: its name and its file stem."""
    keys = {stem}
    if name:
        keys.add(name)
    return keys


# --- writing -----------------------------------------------------------------------------------


def new_frontmatter(name: str, description: str, memory_type: str, style: TypeLocation) -> str:
    """The frontmatter block of a new memory in `style` (`metadata` nests the type)."""
    if style == "top-level":
        return render_frontmatter({"name": name, "description": description, "type": memory_type})
    head = render_frontmatter({"name": name, "description": description})
    return head.removesuffix("---\n") + f"metadata:\n  type: {memory_type}\n---\n"


def edit_fields(
    text: str,
    *,
    name: str,
    description: str,
    memory_type: str | None,
    new_style: TypeLocation,
) -> str:
    """`text` with its name, description and type set, keeping the file's format.

    The frontmatter is edited line by line: a nested type stays nested (other `metadata`
    keys kept), a top-level type stays top-level, other keys keep their order and quoting.
    A file with no type yet gets one in `new_style` (the release's format), unless it already
    has a `metadata` block. Without frontmatter, a new block is written in `new_style`.
    """
    parsed = parse_frontmatter(text)
    if not parsed.present:
        if memory_type is None:
            head = render_frontmatter({"name": name or None, "description": description or None})
        else:
            head = new_frontmatter(name, description, memory_type, new_style)
        return head + "\n" + text.lstrip("\n")
    match = FRONTMATTER_RE.match(text)
    assert match is not None
    block = match.group(1)
    opening = text[: match.start(1)]
    closing = text[match.end(1) : match.end()]
    lines = block.split("\n")
    trailing = lines.pop() if lines and lines[-1] == "" else None
    data = parsed.data
    lines = _set_top(lines, "name", name, data)
    lines = _set_top(lines, "description", description, data)
    reading = read_type(data)
    location = reading.location
    if location is None:
        has_metadata = isinstance(data.get("metadata"), Mapping)
        location = "metadata" if has_metadata else new_style
    if location == "metadata":
        lines = _set_nested_type(lines, memory_type)
    else:
        lines = _set_top(lines, "type", memory_type, data)
    if trailing is not None:
        lines.append(trailing)
    edited = opening + "\n".join(lines) + closing + text[match.end() :]
    if _reads_back(edited, name, description, memory_type):
        return edited
    # Flow-style or otherwise unusual YAML: write the block anew (same keys, same format).
    fields = dict(data)
    for key, value in (("name", name), ("description", description)):
        if value:
            fields[key] = value
        else:
            fields.pop(key, None)
    if location == "metadata":
        metadata = dict(fields.get("metadata") or {})
        if memory_type:
            metadata["type"] = memory_type
        else:
            metadata.pop("type", None)
        fields["metadata"] = metadata
    elif memory_type:
        fields["type"] = memory_type
    else:
        fields.pop("type", None)
    return _block(fields) + text[match.end() :]


def edit_memory_text(
    text: str,
    *,
    name: str,
    description: str,
    memory_type: str | None,
    body: str,
    new_style: TypeLocation,
) -> str:
    """A whole memory file after a form edit of its three fields and its body.

    The frontmatter block is kept byte for byte when none of the three fields changed;
    otherwise only the changed lines are rewritten (`edit_fields`).
    """
    parsed = parse_frontmatter(text)
    if not parsed.present:
        return edit_fields(
            body, name=name, description=description, memory_type=memory_type, new_style=new_style
        )
    head = text[: parsed.body_offset]
    old_body = text[parsed.body_offset :]
    leading = old_body[: len(old_body) - len(old_body.lstrip("\n"))]
    edited = edit_fields(
        head, name=name, description=description, memory_type=memory_type, new_style=new_style
    )
    if edited != head and not edited.endswith("\n\n") and not leading:
        leading = "\n"  # a blank line between the block and the body
    return edited + leading + body


def _reads_back(text: str, name: str, description: str, memory_type: str | None) -> bool:
    parsed = parse_frontmatter(text)
    if not parsed.present or parsed.error:
        return False
    data = parsed.data
    return (
        str(data.get("name") or "") == (name or "")
        and str(data.get("description") or "") == (description or "")
        and read_type(data).type == memory_type
    )


def _block(fields: Mapping[str, Any]) -> str:
    import yaml

    dumped = yaml.safe_dump(
        dict(fields), sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000
    )
    return "---\n" + dumped + "---\n"


def _render_value(value: str) -> str:
    # One `key: value` line exactly as render_frontmatter writes it (quoted only if needed).
    return render_frontmatter({"k": value}).split("\n")[1][len("k: ") :]


def _key_span(lines: list[str], key: str) -> tuple[int, int] | None:
    """The lines of a top-level key: its own line plus any indented continuation lines."""
    for index, line in enumerate(lines):
        match = _TOP_KEY.match(line)
        if match and match.group(1) == key:
            end = index + 1
            while end < len(lines) and lines[end][:1] in (" ", "\t") and lines[end].strip():
                end += 1
            return index, end
    return None


def _set_top(lines: list[str], key: str, value: str | None, data: Mapping[str, Any]) -> list[str]:
    current = data.get(key)
    current_text = "" if current is None else str(current)
    wanted = value or ""
    if current_text == wanted:
        return lines
    span = _key_span(lines, key)
    out = list(lines)
    if not wanted:
        if span is not None:
            del out[span[0] : span[1]]
        return out
    line = f"{key}: {_render_value(wanted)}"
    if span is not None:
        out[span[0] : span[1]] = [line]
        return out
    # A new key goes after the keys it usually follows, else at the end.
    after = {"description": ("name",), "type": ("description", "name")}.get(key, ())
    for previous in after:
        prior = _key_span(out, previous)
        if prior is not None:
            out.insert(prior[1], line)
            return out
    insert_at = 0 if key == "name" else len(out)
    out.insert(insert_at, line)
    return out


def _set_nested_type(lines: list[str], value: str | None) -> list[str]:
    out = list(lines)
    span = _key_span(out, "metadata")
    if span is None:
        if value:
            out.extend(["metadata:", f"  type: {value}"])
        return out
    start, end = span
    indent = "  "
    for index in range(start + 1, end):
        stripped = out[index].lstrip()
        current_indent = out[index][: len(out[index]) - len(stripped)]
        if index == start + 1:
            indent = current_indent or indent
        if current_indent == indent and stripped.startswith("type:"):
            if value:
                out[index] = f"{indent}type: {value}"
            else:
                del out[index]
                if end - start == 2:  # the block held only the type: drop the empty block
                    del out[start]
            return out
    if value:
        out.insert(start + 1, f"{indent}type: {value}")
    return out


def is_memory_type(value: object) -> bool:
    """One of the four types, exactly."""
    return value in MEMORY_TYPES
