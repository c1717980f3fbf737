"""Turning the editor's fields back into a memory file's text, without needless churn.

Pure functions: the editor screen calls them, tests pin them down.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.engine.memories.file_format import edit_memory_text, memory_type_of
from workbench.engine.memories.frontmatter import parse_frontmatter
from workbench.engine.memories.models import MemoryDocument
from workbench.engine.profiles.rules import TypeLocation

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
    return EditableMemory(
        name=_text(data.get("name")),
        description=_text(data.get("description")),
        type=memory_type_of(data),
        body=body,
        raw=False,
    )


def compose_edit(
    document: MemoryDocument,
    *,
    name: str,
    description: str,
    memory_type: str | None,
    body: str,
    new_style: TypeLocation = "top-level",
) -> str:
    """The file text after a form edit, in the file's own format.

    The original frontmatter block is kept byte for byte when the three form fields did not
    change; when they did, only their lines change (a nested `metadata.type` stays nested),
    and other frontmatter keys keep their order and values. `new_style` is the format for a
    file that has no type yet (the engine's `memories.edit_text` passes the release's).
    """
    return edit_memory_text(
        document.text,
        name=name,
        description=description,
        memory_type=memory_type,
        body=body,
        new_style=new_style,
    )


def _text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)
