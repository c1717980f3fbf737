"""The editor's form from a memory file, and its fields back into file text without needless
churn."""

from __future__ import annotations

from workbench.engine.memories.editable import editable_from, form_of
from workbench.engine.memories.file_format import edit_memory_text
from workbench.engine.memories.models import MemoryDocument, MemoryEntry
from workbench.engine.records import replace


def compose_edit(
    document: MemoryDocument, *, name: str, description: str, memory_type: str | None, body: str
) -> str:
    return edit_memory_text(
        document.text,
        name=name,
        description=description,
        memory_type=memory_type,
        body=body,
        new_style="top-level",
    )


def document(text: str, *, error: str | None = None, binary: bool = False) -> MemoryDocument:
    entry = MemoryEntry(
        path="a.md",
        abs_path="/m/a.md",
        name="a",
        description=None,
        type=None,
        scope="private",
        mtime_ms=0,
        mtime="1970-01-01T00:00:00.000Z",
        age_days=0,
        size_bytes=len(text),
        tokens=1,
        indexed=False,
    )
    return MemoryDocument(entry, {}, True, "", text, "fp", frontmatter_error=error, binary=binary)


ORIGINAL = (
    "---\nname: Deploys\ndescription: 'When: mornings'\ntype: project\nowner: ana\n---\n\n"
    "Deploy in the morning.\n"
)


def test_form_fields_come_from_the_frontmatter():
    editable = editable_from(document(ORIGINAL))
    assert (editable.name, editable.description, editable.type) == (
        "Deploys",
        "When: mornings",
        "project",
    )
    assert editable.body == "Deploy in the morning.\n"
    assert not editable.raw


def test_unchanged_fields_keep_the_frontmatter_byte_for_byte():
    doc = document(ORIGINAL)
    text = compose_edit(
        doc,
        name="Deploys",
        description="When: mornings",
        memory_type="project",
        body="Deploy after lunch.\n",
    )
    assert text == ORIGINAL.replace("in the morning", "after lunch")


def test_changed_fields_keep_other_keys_and_their_order():
    text = compose_edit(
        document(ORIGINAL),
        name="Deploy windows",
        description="When: mornings",
        memory_type="project",
        body="Deploy in the morning.\n",
    )
    head = text.split("---\n")[1]
    # Only the changed line is rewritten: the description keeps its own quotes.
    assert head.splitlines() == [
        "name: Deploy windows",
        "description: 'When: mornings'",
        "type: project",
        "owner: ana",
    ]
    assert text.endswith("---\n\nDeploy in the morning.\n")


def test_clearing_a_field_removes_it():
    text = compose_edit(
        document(ORIGINAL),
        name="Deploys",
        description="",
        memory_type="project",
        body="x\n",
    )
    assert "description" not in text


def test_unreadable_files_are_edited_as_raw_text():
    unclosed = "---\nname: x\nno closing fence\n"
    assert editable_from(document(unclosed)).raw
    assert editable_from(document("---\nname: [\n---\n", error="bad yaml")).raw
    assert editable_from(replace(document("\x00\x01"), binary=True)).raw
    assert editable_from(document("no frontmatter at all\n")).raw


def test_text_typed_in_raw_mode_goes_back_to_the_form():
    form = form_of(ORIGINAL)
    assert form is not None and not form.raw
    assert (form.name, form.type, form.body) == ("Deploys", "project", "Deploy in the morning.\n")
    assert form_of("no frontmatter at all\n") is None
