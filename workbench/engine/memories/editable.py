"""A memory file split into the editor's form fields and its body (pure functions).

The other way, fields back to text without needless churn, is `file_format.edit_memory_text`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.engine.memories.file_format import memory_type_of
from workbench.engine.memories.frontmatter import parse_frontmatter
from workbench.engine.memories.models import EditableMemory

if TYPE_CHECKING:
    from workbench.engine.memories.models import MemoryDocument


def editable_from(document: MemoryDocument) -> EditableMemory:
    """Split a document into form fields and a body, or fall back to raw text."""
    form = form_of(document.text)
    if document.binary or document.frontmatter_error or form is None:
        return EditableMemory("", "", None, document.text, raw=True)
    return form


def form_of(text: str) -> EditableMemory | None:
    """The form fields and body of a file's text, or None when it has no frontmatter block
    (text typed in the editor's raw mode goes back to the form this way)."""
    parsed = parse_frontmatter(text)
    if not parsed.present:
        return None
    data = parsed.data
    return EditableMemory(
        name=_text(data.get("name")),
        description=_text(data.get("description")),
        type=memory_type_of(data),
        body=text[parsed.body_offset :].lstrip("\n"),
        raw=False,
    )


def _text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)
