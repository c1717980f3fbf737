"""Edit one top-level key of a JSON object file and leave every other byte where it was.

Settings files are the user's: their key order, indentation and spacing stay as they are.
Only the value of the key being set is serialised anew, in the file's own indentation; a
new key goes after the last one; a removed key takes its separating comma with it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from workbench.engine.errors import UserInputError

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Member:
    """One `"key": value` of the top-level object, by character offsets."""

    key: str
    key_start: int
    value_start: int
    value_end: int
    value: Any


@dataclass(frozen=True)
class JsonObjectText:
    """A JSON object's text with the positions of its top-level members."""

    text: str
    open_at: int
    close_at: int
    members: tuple[Member, ...]

    def get(self, key: str) -> Member | None:
        for member in self.members:
            if member.key == key:
                return member
        return None

    def value(self) -> dict[str, Any]:
        return {m.key: m.value for m in self.members}


def _skip(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def parse_object(text: str, *, name: str = "the file") -> JsonObjectText:
    """Locate the top-level members; a one-line error when `text` is not a JSON object."""
    try:
        pos = _skip(text, 0)
        if pos >= len(text) or text[pos] != "{":
            raise ValueError("does not hold a JSON object")
        open_at = pos
        pos = _skip(text, pos + 1)
        members: list[Member] = []
        if text[pos : pos + 1] == "}":
            close_at = pos
        else:
            while True:
                if text[pos : pos + 1] != '"':
                    raise ValueError(f"expected a key at character {pos}")
                key_start = pos
                key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
                pos = _skip(text, pos)
                if text[pos : pos + 1] != ":":
                    raise ValueError(f"expected ':' at character {pos}")
                value_start = _skip(text, pos + 1)
                value, value_end = _DECODER.raw_decode(text, value_start)
                members.append(Member(key, key_start, value_start, value_end, value))
                pos = _skip(text, value_end)
                if text[pos : pos + 1] == ",":
                    pos = _skip(text, pos + 1)
                    continue
                if text[pos : pos + 1] == "}":
                    close_at = pos
                    break
                raise ValueError(f"expected ',' or '}}' at character {pos}")
        if text[_skip(text, close_at + 1) :].strip():
            raise ValueError("has text after the closing brace")
    except (ValueError, IndexError) as exc:
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise UserInputError(f"{name} is not valid JSON ({message}); nothing was changed") from None
    keys = [m.key for m in members]
    if len(keys) != len(set(keys)):
        raise UserInputError(f"{name} repeats a top-level key; nothing was changed")
    return JsonObjectText(text, open_at, close_at, tuple(members))


def indent_unit(doc: JsonObjectText) -> str:
    """The file's indentation step (two spaces when it cannot tell)."""
    if doc.members:
        first = doc.members[0].key_start
        line_start = doc.text.rfind("\n", 0, first) + 1
        lead = doc.text[line_start:first]
        if lead and not lead.strip():
            return lead
    return "  "


def _dump(value: Any, unit: str, depth: int = 1) -> str:
    text = json.dumps(value, indent=unit, ensure_ascii=False)
    return text.replace("\n", "\n" + unit * depth)


def set_member(
    text: str,
    key: str,
    value: Any,
    *,
    name: str = "the file",
    unit: str | None = None,
    depth: int = 1,
) -> str:
    """`text` (an object) with `key` set to `value`, added last when absent. `depth` is how
    deep this object sits in the file, so nested edits indent like their neighbours."""
    doc = parse_object(text, name=name)
    unit = unit or indent_unit(doc)
    existing = doc.get(key)
    if existing is not None:
        if existing.value == value:
            return text
        return text[: existing.value_start] + _dump(value, unit, depth) + text[existing.value_end :]
    entry = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, unit, depth)}"
    if not doc.members:
        inner = text[doc.open_at + 1 : doc.close_at]
        if inner and "\n" not in inner:
            return text[: doc.open_at + 1] + entry + text[doc.close_at :]
        closing = "\n" + unit * (depth - 1)
        return (
            text[: doc.open_at + 1] + "\n" + unit * depth + entry + closing + text[doc.close_at :]
        )
    last = doc.members[-1]
    line_start = text.rfind("\n", 0, last.key_start) + 1
    lead = text[line_start : last.key_start]
    separator = ",\n" + lead if lead and not lead.strip() else ", "
    return text[: last.value_end] + separator + entry + text[last.value_end :]


def remove_member(text: str, key: str, *, name: str = "the file") -> str:
    """`text` (an object) without `key` (unchanged when it is absent)."""
    doc = parse_object(text, name=name)
    members = list(doc.members)
    index = next((i for i, m in enumerate(members) if m.key == key), None)
    if index is None:
        return text
    member = members[index]
    if index > 0:
        return text[: members[index - 1].value_end] + text[member.value_end :]
    if len(members) > 1:
        return text[: member.key_start] + text[members[1].key_start :]
    return text[: doc.open_at + 1] + text[doc.close_at :]


def set_path(text: str, path: tuple[str, ...], value: Any, *, name: str = "the file") -> str:
    """`text` with the member at `path` (top-level key, then keys inside it) set to `value`.

    Only the innermost value is written anew; the objects around it keep their text."""
    doc = parse_object(text, name=name)
    unit = indent_unit(doc)
    return _set_in(text, path, value, name=name, unit=unit, depth=1)


def _set_in(
    text: str, path: tuple[str, ...], value: Any, *, name: str, unit: str, depth: int
) -> str:
    head, rest = path[0], path[1:]
    if not rest:
        return set_member(text, head, value, name=name, unit=unit, depth=depth)
    doc = parse_object(text, name=name)
    member = doc.get(head)
    if member is None or not isinstance(member.value, dict):
        nested: Any = value
        for key in reversed(rest):
            nested = {key: nested}
        return set_member(text, head, nested, name=name, unit=unit, depth=depth)
    inner = text[member.value_start : member.value_end]
    updated = _set_in(inner, rest, value, name=name, unit=unit, depth=depth + 1)
    return text[: member.value_start] + updated + text[member.value_end :]


def remove_path(text: str, path: tuple[str, ...], *, name: str = "the file") -> str:
    """`text` without the member at `path` (unchanged when it is absent)."""
    head, rest = path[0], path[1:]
    if not rest:
        return remove_member(text, head, name=name)
    doc = parse_object(text, name=name)
    member = doc.get(head)
    if member is None or not isinstance(member.value, dict):
        return text
    inner = text[member.value_start : member.value_end]
    updated = remove_path(inner, rest, name=name)
    return text[: member.value_start] + updated + text[member.value_end :]


def new_object_text(values: dict[str, Any]) -> str:
    """A fresh file in Claude Code's own style: two-space indentation and a final newline."""
    return json.dumps(values, indent=2, ensure_ascii=False) + "\n"
