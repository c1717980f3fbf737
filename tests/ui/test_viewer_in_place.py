"""The viewer on a cursor move: the markdown blocks on show are kept and refilled where the
new memory has a block of the same kind at the same place, and whatever the moves, the
viewer ends up showing the highlighted memory."""

from __future__ import annotations

import os
from pathlib import Path

from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownParagraph

from tests.ui.conftest import TEST_SETTINGS, fixed_now, settle
from workbench.engine import Engine
from workbench.ui.app import make_app
from workbench.ui.panes.memory import MemoryPane
from workbench.ui.widgets.memory_tree import MemoryTree

SIZE = (130, 40)
DAY = 86_400
MEMORIES = {  # newest first, as the tree lists them
    "alpha.md": "Alpha sees the first fact.\n\nAlpha sees the second fact.\n",
    "bravo.md": "Bravo holds another fact.\n\nBravo holds one more.\n",
    "charlie.md": "# Steps\n\n- first step\n- second step\n\nCharlie closes here.\n",
    "delta.md": "Delta has a single paragraph.\n",
}


def write_project(base: Path) -> tuple[Engine, float]:
    root = base / "project"
    (root / ".git").mkdir(parents=True)
    engine = Engine.open(root, config_home=str(base / "claude"))
    memory_dir = Path(engine.locations.memory_dir)
    memory_dir.mkdir(parents=True)
    now = fixed_now()
    for age, (name, body) in enumerate(MEMORIES.items()):
        path = memory_dir / name
        stem = name.removesuffix(".md")
        path.write_text(
            f"---\nname: {stem}\ndescription: {stem} memory\ntype: user\n---\n\n{body}",
            encoding="utf-8",
        )
        os.utime(path, (now - (age + 1) * DAY, now - (age + 1) * DAY))
    engine.memories.now_ms = now * 1000
    return engine, now


def paragraphs(body: Markdown) -> list[str]:
    return [block._content.plain for block in body.query(MarkdownParagraph)]


def texts(body: Markdown) -> list[str]:
    return [block._content.plain for block in body.query(MarkdownBlock) if block._content]


async def test_a_move_between_memories_of_the_same_shape_keeps_the_blocks(tmp_path):
    engine, now = write_project(tmp_path)
    app = make_app(engine, TEST_SETTINGS, now=now)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.screen.query_one(MemoryPane)
        body = pane.query_one(".memory-body", Markdown)
        assert paragraphs(body) == ["Alpha sees the first fact.", "Alpha sees the second fact."]
        shown = list(body.children)
        await pilot.press("down")
        await settle(app, pilot)
        assert pane.document is not None and pane.document.entry.path == "bravo.md"
        # The same two paragraph widgets, now holding Bravo's text: nothing was remounted.
        assert list(body.children) == shown
        assert all(a is b for a, b in zip(body.children, shown, strict=True))
        assert paragraphs(body) == ["Bravo holds another fact.", "Bravo holds one more."]
        assert body.source == MEMORIES["bravo.md"]


async def test_moves_across_different_shapes_show_the_highlighted_memory(tmp_path):
    engine, now = write_project(tmp_path)
    app = make_app(engine, TEST_SETTINGS, now=now)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.screen.query_one(MemoryPane)
        body = pane.query_one(".memory-body", Markdown)
        tree = app.screen.query_one(MemoryTree)
        # One move at a time: a heading and a list after paragraphs, then fewer blocks.
        for path in ("bravo.md", "charlie.md", "delta.md"):
            await pilot.press("down")
            await settle(app, pilot)
            assert tree.selected_path == path
            assert pane.document is not None and pane.document.entry.path == path
        assert texts(body) == ["Delta has a single paragraph."]
        # A burst of keys with no pause between them, ending on the memory with the list.
        await pilot.press("up", "up", "down", "up", "down")
        await settle(app, pilot)
        assert tree.selected_path == "charlie.md"
        assert pane.document is not None and pane.document.entry.path == "charlie.md"
        assert body.source == MEMORIES["charlie.md"]
        assert texts(body) == ["Steps", "first step", "second step", "Charlie closes here."]
        await pilot.press("up", "up")
        await settle(app, pilot)
        assert texts(body) == ["Alpha sees the first fact.", "Alpha sees the second fact."]


def test_a_nested_frontmatter_value_reads_as_yaml_not_a_python_repr():
    from workbench.ui.panes.memory import frontmatter_value

    assert frontmatter_value({"type": "reference"}) == "type: reference"
    assert frontmatter_value({"tags": ["a", "b"], "n": 2}) == "tags: a, b, n: 2"
