"""In the app, `u u` walks back through history and `U` redoes; every message names what
happened to which file, and names are never read as markup."""

from __future__ import annotations

from tests.ui.conftest import Toasts, settle
from tests.ui.test_memory_flows import SIZE, open_memory
from workbench.ui.widgets.status_line import StatusLine


async def _delete(app, pilot, path: str) -> None:  # type: ignore[no-untyped-def]
    await open_memory(app, pilot, path)
    await pilot.press("d")
    await settle(app, pilot)
    await pilot.press("y")
    await settle(app, pilot)


async def test_undo_walks_back_and_redo_walks_forward(memory_project, app_factory):
    memory = memory_project.memory_dir
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await _delete(app, pilot, "project_freeze.md")
        await _delete(app, pilot, "reference_dashboards.md")
        assert not (memory / "project_freeze.md").exists()
        status = app.screen.query_one(StatusLine)

        await pilot.press("u")
        await settle(app, pilot)
        assert (memory / "reference_dashboards.md").exists()
        assert not (memory / "project_freeze.md").exists()
        assert status.last_action == (
            "undo of a delete: reverted MEMORY.md, restored reference_dashboards.md"
        )

        await pilot.press("u")  # further back, not the undo undone
        await settle(app, pilot)
        assert (memory / "project_freeze.md").exists()
        assert (memory / "reference_dashboards.md").exists()

        await pilot.press("U")
        await settle(app, pilot)
        assert not (memory / "project_freeze.md").exists()
        assert status.last_action == (
            "redo of a delete: deleted project_freeze.md, re-applied MEMORY.md"
        )
        assert (memory / "reference_dashboards.md").exists()


async def test_names_in_toasts_are_not_markup(memory_project, app_factory):
    odd = memory_project.memory_dir / "note[n0].md"
    odd.write_text(
        "---\nname: odd\ndescription: use [/] between sections\ntype: user\n---\n\nbody\n",
        encoding="utf-8",
    )
    toasts = Toasts()
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        await _delete(app, pilot, "note[n0].md")
        await pilot.press("u")
        await settle(app, pilot)
    said = [t for t in toasts if "note[n0].md" in t.message]
    assert len(said) == 2 and all(t.markup is False for t in said)
    assert odd.exists()
