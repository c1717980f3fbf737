"""Turning the editor's fields back into a memory file's text, without needless churn.

Pure functions: the editor screen calls them, tests pin them down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.engine.frontmatter import parse_frontmatter, render_frontmatter
from workbench.engine.memory_models import MemoryDocument

FORM_KEYS = ("name", "description", "type")


@dataclass(frozen=True)
class EditableMemory:
    """What the editor form shows for one document."""

    name: str
    description: str
    type: str | None
    body: str
    raw: bool
    """True when the form cannot represent the file (broken or unclosed frontmatter, binary):
    the editor then edits the whole text."""


def editable_from(document: MemoryDocument) -> EditableMemory:
    """Split a document into form fields and a body, or fall back to raw text."""
    parsed = parse_frontmatter(document.text)
    if document.binary or document.frontmatter_error or not parsed.present:
        return EditableMemory("", "", None, document.text, raw=True)
    data = parsed.data
    body = document.text[parsed.body_offset :].lstrip("\n")
    memory_type = data.get("type")
    return EditableMemory(
        name=_text(data.get("name")),
        description=_text(data.get("description")),
        type=memory_type if isinstance(memory_type, str) else None,
        body=body,
        raw=False,
    )


def compose_edit(
    document: MemoryDocument, *, name: str, description: str, memory_type: str | None, body: str
) -> str:
    """The file text after a form edit.

    The original frontmatter block is kept byte for byte when the three form fields did not
    change, and other frontmatter keys keep their order and values when they did.
    """
    parsed = parse_frontmatter(document.text)
    if not parsed.present:
        fields: dict[str, Any] = {"name": name, "description": description, "type": memory_type}
        return render_frontmatter(fields) + "\n" + body
    original = editable_from(document)
    head = document.text[: parsed.body_offset]
    old_body = document.text[parsed.body_offset :]
    leading = old_body[: len(old_body) - len(old_body.lstrip("\n"))]
    if (name, description, memory_type) != (original.name, original.description, original.type):
        fields = dict(parsed.data)
        for key, value in (("name", name), ("description", description), ("type", memory_type)):
            if value or key in fields:
                fields[key] = value or None
        head = render_frontmatter(fields)
        leading = leading or "\n"
    return head + leading + body


def _text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)
