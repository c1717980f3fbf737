"""Pilot tests of the memory flows: browse, filter, view, index report, edit, new, rename,
delete, undo, conflicts and live refresh. Each asserts widget state and the files on disk."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Input, OptionList, Select, Static, TextArea

from tests.ui.conftest import build_project, long_index, settle, type_text
from workbench.ui.messages import OpenMemoryRequested
from workbench.ui.panes.index import IndexPane
from workbench.ui.panes.memory import MemoryPane
from workbench.ui.screens.confirm import ConfirmModal, ConflictModal
from workbench.ui.screens.editor import MemoryEditorScreen
from workbench.ui.screens.main import MainScreen
from workbench.ui.screens.prompt import TextPromptModal
from workbench.ui.widgets.memory_tree import MemoryTree
from workbench.ui.widgets.status_line import StatusLine

SIZE = (130, 40)


def tree_groups(tree: MemoryTree) -> list[str]:
    return [str(group.label) for group in tree.root.children]


async def open_memory(app, pilot, path: str) -> MainScreen:  # type: ignore[no-untyped-def]
    screen = app.screen
    assert isinstance(screen, MainScreen)
    screen.post_message(OpenMemoryRequested(path))
    await settle(app, pilot)
    assert screen.memory_tree.selected_path == path
    return screen


async def test_start_up_lists_every_scope_newest_first(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one(MemoryTree)
        assert tree_groups(tree) == ["Private (5)", "Team (1)", "Daily logs (1)"]
        private = [node.data.path for node in tree.root.children[0].children]
        assert private == [
            "notes_unindexed.md",
            "user_role.md",
            "feedback_testing.md",
            "reference_dashboards.md",
            "project_freeze.md",
        ]
        # The cursor starts on the newest memory and the viewer shows it.
        assert tree.selected_path == "notes_unindexed.md"
        pane = app.screen.query_one(MemoryPane)
        assert pane.document is not None and pane.document.entry.path == "notes_unindexed.md"
        status = app.screen.query_one(StatusLine)
        assert status.project == "checkout-service"
        assert status.memory_dir == "$CLAUDE_CONFIG_DIR/projects/<project>/memory/"
        assert status.counts.startswith("5 private · 1 team · 1 log · index 5/200 lines")


async def test_viewer_follows_the_cursor_and_toggles_source(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("down")
        await settle(app, pilot)
        pane = app.screen.query_one(MemoryPane)
        assert pane.document.entry.path == "user_role.md"
        assert pane.document.frontmatter["type"] == "user"
        assert not pane.show_source
        await pilot.press("v")
        await settle(app, pilot)
        assert pane.show_source
        assert pane.query_one(".memory-source").display
        assert not pane.query_one(".memory-body").display


async def test_filter_narrows_the_tree_and_escape_clears_it(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        await type_text(pilot, "grafana")
        tree = app.screen.query_one(MemoryTree)
        assert tree.shown_count == 1
        assert tree.root.children[0].children[0].data.path == "reference_dashboards.md"
        assert "1 shown" in app.screen.query_one(StatusLine).counts
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen.query_one("#memory-filter", Input).value == ""
        assert tree.shown_count == 7
        assert tree.has_focus


async def test_filter_by_type(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        await type_text(pilot, "type:project")
        paths = sorted(e.path for e in app.screen.query_one(MemoryTree).entries)
        shown = sorted(
            node.data.path
            for group in app.screen.query_one(MemoryTree).root.children
            for node in group.children
        )
        assert len(paths) == 7
        assert shown == ["notes_unindexed.md", "project_freeze.md", "team/project_deploy.md"]


async def test_index_pane_marks_dangling_and_orphans(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("alt+2")
        await settle(app, pilot)
        assert app.screen.active_pane == "index"
        pane = app.screen.query_one(IndexPane)
        assert pane.report is not None
        assert pane.report.dangling == ("runbook_old.md",)
        assert "notes_unindexed.md" in pane.report.orphans
        options = pane.query_one(OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert len(prompts) == 5  # no cut: everything loads
        assert "missing file" in prompts[4] and "▲" in prompts[4]
        assert all("✓" in p for p in prompts[:4])


async def test_index_cut_is_drawn_after_line_200(tmp_path: Path, app_factory):
    project = build_project(tmp_path, index=long_index(230))
    app = app_factory(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("alt+2")
        await settle(app, pilot)
        pane = app.screen.query_one(IndexPane)
        report = pane.report
        assert report.line_truncated and report.loaded_lines == 200
        options = pane.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        cut = ids.index("cut")
        assert ids[cut - 1] == "line-200" and ids[cut + 1] == "line-201"
        assert options.get_option_at_index(cut).disabled
        assert "✗" in str(options.get_option_at_index(cut + 1).prompt)
        assert pane.query_one(".index-warning").display


async def test_selecting_an_index_line_opens_its_memory(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("alt+2")
        await settle(app, pilot)
        options = app.screen.query_one(IndexPane).query_one(OptionList)
        options.focus()
        options.highlighted = 2  # project_freeze.md
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen.active_pane == "memory"
        assert app.screen.query_one(MemoryPane).document.entry.path == "project_freeze.md"


async def test_team_index_toggle(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "t")  # t works in the MEMORY.md pane
        await settle(app, pilot)
        pane = app.screen.query_one(IndexPane)
        assert pane.team and pane.report.path.endswith("team/MEMORY.md")
        assert pane.report.entries[0].target == "project_deploy.md"


async def test_fix_dangling_shows_the_change_first_then_undo(memory_project, app_factory):
    from workbench.ui.screens.confirm import DiffConfirmModal
    from workbench.ui.widgets.diff_view import DiffView

    index = memory_project.memory_dir / "MEMORY.md"
    original = index.read_text()
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "alt+d")
        await settle(app, pilot)
        # The rewrite is shown as a diff and waits for a yes: nothing written yet.
        modal = app.screen
        assert isinstance(modal, DiffConfirmModal)
        assert modal.question == "Remove 1 dangling line from MEMORY.md?"
        removed = [line.text for line in modal.query_one(DiffView).lines if line.kind == "removed"]
        assert removed == ["- [Old runbook](runbook_old.md) — this file was deleted"]
        assert index.read_text() == original
        await pilot.press("n")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen) and index.read_text() == original
        await pilot.press("alt+d")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert "runbook_old.md" not in index.read_text()
        assert app.screen.query_one(IndexPane).report.dangling == ()
        assert "removed 1 dangling line" in app.screen.query_one(StatusLine).last_action
        await pilot.press("u")
        await settle(app, pilot)
        assert "runbook_old.md" in index.read_text()
        assert app.screen.query_one(IndexPane).report.dangling == ("runbook_old.md",)


async def test_fix_orphans_indexes_the_loose_note(memory_project, app_factory):
    index = memory_project.memory_dir / "MEMORY.md"
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "alt+o")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert "(notes_unindexed.md)" in index.read_text()
        assert app.screen.query_one(IndexPane).report.orphans == ()


async def test_fix_orphans_past_the_cut_says_the_new_line_will_not_load(
    tmp_path: Path, app_factory
):
    project = build_project(tmp_path, index=long_index(230))
    index = project.memory_dir / "MEMORY.md"
    app = app_factory(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "alt+o")
        await settle(app, pilot)
        modal = app.screen
        assert "reaches its cut, so the last new line will not load" in str(
            modal.query_one(".dialog-detail", Static).render()
        )
        await pilot.press("y")
        await settle(app, pilot)
        assert "(notes_unindexed.md)" in index.read_text()
        status = app.screen.query_one(StatusLine).last_action
        assert "the last new line is past the cut and does not load" in status
        app.screen.post_message(OpenMemoryRequested("notes_unindexed.md"))
        await settle(app, pilot)
        header = str(app.screen.query_one(".memory-header", Static).render())
        assert "in MEMORY.md, past the cut" in header


async def test_new_memory_is_written_with_its_index_line(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, MemoryEditorScreen) and editor.is_new
        editor.query_one("#field-type", Select).value = "reference"
        editor.query_one("#field-name", Input).value = "Pager rota"
        editor.query_one("#field-description", Input).value = "Who is on call for checkout"
        editor.query_one("#field-body", TextArea).load_text("The rota lives in PagerDuty.\n")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        # In the newest release's format: a kebab-case name (and file), the type nested.
        written = memory_project.memory_dir / "pager-rota.md"
        text = written.read_text()
        assert text.startswith(
            "---\nname: pager-rota\ndescription: Who is on call for checkout\n"
            "metadata:\n  type: reference\n---\n"
        )
        assert "The rota lives in PagerDuty." in text
        index = (memory_project.memory_dir / "MEMORY.md").read_text()
        assert "[Pager rota](pager-rota.md)" in index
        assert app.screen.memory_tree.selected_path == "pager-rota.md"
        assert "saved pager-rota.md" in app.screen.query_one(StatusLine).last_action


async def test_new_memory_validates_live_and_refuses_an_incomplete_save(
    memory_project, app_factory
):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        editor = app.screen
        editor.query_one("#field-type", Select).value = "feedback"
        editor.query_one("#field-body", TextArea).load_text("Use tabs.\n")
        await settle(app, pilot)
        rules = {f.rule for f in editor.findings}
        assert {
            "why-missing",
            "how-to-apply-missing",
            "name-missing",
            "description-missing",
        } <= rules
        assert editor.query_one("#field-name").has_class("-invalid")
        assert editor.query_one("#field-description").has_class("-invalid")
        assert not editor.query_one("#field-type").has_class("-invalid")
        before = sorted(p.name for p in memory_project.memory_dir.iterdir())
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, MemoryEditorScreen)  # refused, still editing
        assert sorted(p.name for p in memory_project.memory_dir.iterdir()) == before


async def test_the_editor_flags_a_description_recall_cannot_match(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        editor = app.screen
        editor.query_one("#field-type", Select).value = "user"
        editor.query_one("#field-name", Input).value = "Notes"
        editor.query_one("#field-description", Input).value = "misc notes"
        await settle(app, pilot)
        assert "recall-description-generic" in {f.rule for f in editor.findings}
        assert editor.query_one("#field-description").has_class("-invalid")
        editor.query_one("#field-description", Input).value = "Works from Lisbon, UTC+0"
        await settle(app, pilot)
        assert "recall-description-generic" not in {f.rule for f in editor.findings}
        assert not editor.query_one("#field-description").has_class("-invalid")


async def test_new_memory_shows_index_headroom_projection(tmp_path: Path, app_factory):
    project = build_project(tmp_path, index=long_index(200))
    app = app_factory(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        editor = app.screen
        editor.query_one("#field-type", Select).value = "user"
        editor.query_one("#field-name", Input).value = "Timezone"
        editor.query_one("#field-description", Input).value = "Works from Lisbon"
        await settle(app, pilot)
        assert editor.projection is not None and "201/200 lines" in editor.projection


async def test_edit_keeps_the_rest_of_the_file(memory_project, app_factory):
    path = memory_project.memory_dir / "feedback_testing.md"
    original = path.read_text()
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_memory(app, pilot, "feedback_testing.md")
        await pilot.press("e")
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, MemoryEditorScreen) and not editor.raw
        assert (
            editor.query_one("#field-name", Input).value == "Integration tests hit a real database"
        )
        editor.query_one(
            "#field-description", Input
        ).value = "Integration tests use the real Postgres"
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        text = path.read_text()
        assert "description: Integration tests use the real Postgres" in text
        assert text.split("---\n", 2)[2] == original.split("---\n", 2)[2]  # body untouched
        assert app.screen.query_one(MemoryPane).document.entry.description == (
            "Integration tests use the real Postgres"
        )


async def test_an_unchanged_edit_leaves_the_file_and_its_age_alone(memory_project, app_factory):
    # Saving without a change used to rewrite the same bytes: the memory looked new to
    # Claude Code (its mtime is the age recall sorts and warns by) and `u` undid nothing.
    path = memory_project.memory_dir / "user_role.md"
    original, age = path.read_bytes(), path.stat().st_mtime_ns
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        before = len(app.engine.history.entries())
        await open_memory(app, pilot, "user_role.md")
        await pilot.press("e")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        assert path.read_bytes() == original and path.stat().st_mtime_ns == age
        assert len(app.engine.history.entries()) == before
        said = app.screen.query_one(StatusLine).last_action
        assert "no changes to save" in said and "undoes" not in said


async def test_conflict_dialog_keep_then_overwrite(memory_project, app_factory):
    path = memory_project.memory_dir / "user_role.md"
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_memory(app, pilot, "user_role.md")
        await pilot.press("e")
        await settle(app, pilot)
        editor = app.screen
        editor.query_one("#field-body", TextArea).load_text("Mine.\n")
        path.write_text(path.read_text() + "Theirs.\n")  # someone else edits meanwhile
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, ConflictModal)
        assert "Theirs." in path.read_text()  # nothing overwritten silently
        await pilot.press("k")
        await settle(app, pilot)
        assert app.screen is editor
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, ConflictModal)
        await pilot.press("o")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        text = path.read_text()
        assert text.endswith("Mine.\n") and "Theirs." not in text
        # The overwritten version is one undo away.
        await pilot.press("u")
        await settle(app, pilot)
        assert "Theirs." in path.read_text()


async def test_conflict_dialog_reload_takes_the_disk_version(memory_project, app_factory):
    path = memory_project.memory_dir / "user_role.md"
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_memory(app, pilot, "user_role.md")
        await pilot.press("e")
        await settle(app, pilot)
        editor = app.screen
        editor.query_one("#field-body", TextArea).load_text("Mine.\n")
        path.write_text(path.read_text().replace("staff engineer", "principal engineer"))
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        await pilot.press("r")
        await settle(app, pilot)
        assert app.screen is editor
        assert "principal engineer" in editor.query_one("#field-body", TextArea).text
        await pilot.press("ctrl+s")  # now based on the disk version: no conflict
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        assert "principal engineer" in path.read_text()


async def test_broken_frontmatter_opens_as_raw_text(memory_project, app_factory):
    broken = memory_project.memory_dir / "broken.md"
    broken.write_text("---\nname: never closed\ndescription: x\nbody\n")
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_memory(app, pilot, "broken.md")
        await pilot.press("e")
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, MemoryEditorScreen) and editor.raw
        assert editor.query_one("#field-body", TextArea).text == broken.read_text()
        assert not editor.query_one(".editor-form").display


async def test_delete_asks_first_then_undo_restores(memory_project, app_factory):
    path = memory_project.memory_dir / "project_freeze.md"
    index = memory_project.memory_dir / "MEMORY.md"
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_memory(app, pilot, "project_freeze.md")
        await pilot.press("d")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        await settle(app, pilot)
        assert path.exists()
        await pilot.press("d")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert not path.exists()
        assert "project_freeze.md" not in index.read_text()
        assert app.screen.query_one(MemoryTree).shown_count == 6
        await pilot.press("u")
        await settle(app, pilot)
        assert path.exists() and "(project_freeze.md)" in index.read_text()
        assert app.screen.query_one(MemoryTree).shown_count == 7


async def test_rename_moves_the_file_and_its_index_link(memory_project, app_factory):
    index = memory_project.memory_dir / "MEMORY.md"
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await open_memory(app, pilot, "reference_dashboards.md")
        await pilot.press("r")
        await settle(app, pilot)
        prompt = app.screen
        assert isinstance(prompt, TextPromptModal)
        field = prompt.query_one(Input)
        field.value = "reference_grafana"
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TextPromptModal)  # refused: not a .md name
        field.value = "../reference_grafana.md"
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TextPromptModal)  # refused in the dialog, text kept
        hint = str(prompt.query_one(".prompt-hint", Static).render())
        assert hint == "Just a file name: the memory stays in its folder"
        assert field.value == "../reference_grafana.md"
        field.value = "reference grafana.md"
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TextPromptModal)  # the index link cannot carry a space
        hint = str(prompt.query_one(".prompt-hint", Static).render())
        assert "a space" in hint
        field.value = "reference_grafana.md"
        await pilot.press("enter")
        await settle(app, pilot)
        assert not (memory_project.memory_dir / "reference_dashboards.md").exists()
        assert (memory_project.memory_dir / "reference_grafana.md").exists()
        assert "(reference_grafana.md)" in index.read_text()
        assert app.screen.memory_tree.selected_path == "reference_grafana.md"


async def test_missing_memory_folder_shows_an_empty_state(tmp_path: Path, app_factory):
    project = build_project(tmp_path)
    for path in sorted(project.memory_dir.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    project.memory_dir.rmdir()
    app = app_factory(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.screen.query_one(MemoryPane)
        assert not pane.has_content and pane.empty_title == "No memory folder yet"
        assert app.screen.query_one(MemoryTree).shown_count == 0


async def test_watcher_picks_up_files_written_outside(memory_project, app_factory):
    app = app_factory(memory_project, watch_files=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        (memory_project.memory_dir / "user_new.md").write_text(
            "---\nname: New\ndescription: written by Claude Code\ntype: user\n---\nhi\n"
        )
        tree = app.screen.query_one(MemoryTree)
        for _ in range(60):
            await asyncio.sleep(0.1)
            await pilot.pause()
            if any(e.path == "user_new.md" for e in tree.entries):
                break
        assert any(e.path == "user_new.md" for e in tree.entries)


async def test_warm_view_is_on_the_first_frame_and_first_paint_hook_runs_once(
    memory_project, monkeypatch
):
    # The front ends warm the store while the UI imports; the main screen applies that view
    # while mounting (no scan worker, no message round trip), so the first frame holds the
    # tree and the first memory; then it runs the after-first-paint hook exactly once.
    import functools

    from tests.ui.conftest import TEST_SETTINGS
    from workbench.ui.app import make_app

    at_mount: list[tuple[bool, bool]] = []
    original = MainScreen.on_mount

    @functools.wraps(original)
    def on_mount(self: MainScreen) -> None:
        original(self)
        at_mount.append((self.memory_tree.filled, self.query_one(MemoryPane).document is not None))

    monkeypatch.setattr(MainScreen, "on_mount", on_mount)
    at_ready: list[tuple[str | None, str | None, bool]] = []
    first_frame = MainScreen.first_frame_shown

    def first_frame_shown(self: MainScreen) -> None:
        # Textual's Ready: the first frame is on the terminal. The cursor is on the newest
        # memory already (placed before that frame), and the hook fires from here.
        document = self.query_one(MemoryPane).document
        shown = document.entry.path if document is not None else None
        at_ready.append((self.memory_tree.selected_path, shown, bool(calls)))
        first_frame(self)

    monkeypatch.setattr(MainScreen, "first_frame_shown", first_frame_shown)

    import os

    # The newest memory is a team one; the tree lists private memories first, so the first
    # memory shown (and read by the warm-up) is the newest private one, not the newest overall.
    team_file = memory_project.memory_dir / "team" / "project_deploy.md"
    os.utime(team_file, (memory_project.now, memory_project.now))
    engine = memory_project.engine()
    engine.memories.warm_up()
    engine.memories.wait_warm()
    calls: list[int] = []
    app = make_app(
        engine, TEST_SETTINGS, now=memory_project.now, after_first_paint=lambda: calls.append(1)
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        assert at_mount == [(True, True)]
        assert not [w for w in app.workers if w.group == "scan"]
        await settle(app, pilot)
        assert calls == [1]
        first = screen.memory_tree.selected_path
        assert first is not None and not first.startswith("team/")
        assert at_ready == [(first, first, False)]
        assert screen.memory_tree.selected_path == first
        assert screen.query_one(MemoryPane).document.entry.path == first


def shown_path(app) -> str | None:  # type: ignore[no-untyped-def]
    document = app.screen.query_one(MemoryPane).document
    return document.entry.path if document is not None else None


async def test_viewer_shows_a_new_memory_and_the_verbs_act_on_it(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        editor = app.screen
        editor.query_one("#field-type", Select).value = "reference"
        editor.query_one("#field-name", Input).value = "Pager rota"
        editor.query_one("#field-description", Input).value = "Who is on call for checkout"
        editor.query_one("#field-body", TextArea).load_text("The rota lives in PagerDuty.\n")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        # The new file took the line the previous newest memory had: the viewer follows.
        assert screen.memory_tree.selected_path == "pager-rota.md"
        assert shown_path(app) == "pager-rota.md"
        await pilot.press("d")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)
        assert app.screen.question == "Delete pager-rota.md?"
        await pilot.press("n", "e")
        await settle(app, pilot)
        assert isinstance(app.screen, MemoryEditorScreen)
        assert app.screen.document.entry.path == "pager-rota.md"


async def test_viewer_shows_the_renamed_file_even_after_a_rescan(memory_project, app_factory):
    from workbench.ui.messages import MemoryFilesChanged

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = await open_memory(app, pilot, "reference_dashboards.md")
        await pilot.press("r")
        await settle(app, pilot)
        app.screen.query_one(Input).value = "reference_grafana.md"
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.memory_tree.selected_path == "reference_grafana.md"
        assert shown_path(app) == "reference_grafana.md"
        # What the file watcher posts after the rename: the viewer must not go back to the
        # old name (and say it cannot show it).
        screen.post_message(MemoryFilesChanged(()))
        await settle(app, pilot)
        pane = screen.query_one(MemoryPane)
        assert pane.has_content and shown_path(app) == "reference_grafana.md"
        # Renamed by another process (the CLI, Claude Code): the tree moves on, and the viewer
        # shows the row it highlights, not "cannot show reference_grafana.md".
        app.engine.memories.rename("reference_grafana.md", "reference_boards.md")
        screen.post_message(MemoryFilesChanged(()))
        await settle(app, pilot)
        assert screen.memory_tree.selected_path is not None
        assert pane.has_content and shown_path(app) == screen.memory_tree.selected_path


async def test_after_a_delete_the_viewer_shows_the_row_then_highlighted(
    memory_project, app_factory
):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert screen.memory_tree.selected_path == "notes_unindexed.md"
        await pilot.press("d")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert not (memory_project.memory_dir / "notes_unindexed.md").exists()
        # The next row in the group takes the deleted one's place, and the viewer shows it.
        assert screen.memory_tree.selected_path == "user_role.md"
        pane = screen.query_one(MemoryPane)
        assert pane.has_content and shown_path(app) == "user_role.md"
        await pilot.press("d")
        await settle(app, pilot)
        assert app.screen.question == "Delete user_role.md?"


async def test_a_rescan_keeps_the_viewers_place_in_the_same_memory(memory_project, app_factory):
    from textual.containers import VerticalScroll

    from workbench.ui.messages import MemoryFilesChanged

    long_body = "".join(f"Line {n} of a long note.\n\n" for n in range(120))
    (memory_project.memory_dir / "user_role.md").write_text(
        "---\nname: User role\ndescription: Long\ntype: user\n---\n\n" + long_body
    )
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = await open_memory(app, pilot, "user_role.md")
        scroll = screen.query_one(MemoryPane).query_one(".memory-scroll", VerticalScroll)
        scroll.scroll_to(y=40, animate=False)
        await pilot.pause()
        assert scroll.scroll_y == 40
        # Claude Code appends to the file; the watcher posts this and the viewer re-reads it.
        path = memory_project.memory_dir / "user_role.md"
        path.write_text(path.read_text() + "One more line.\n")
        screen.post_message(MemoryFilesChanged(()))
        await settle(app, pilot)
        assert "One more line." in screen.query_one(MemoryPane).document.text
        assert scroll.scroll_y == 40
        await pilot.press("down")  # another memory starts at its top
        await settle(app, pilot)
        assert scroll.scroll_y == 0
