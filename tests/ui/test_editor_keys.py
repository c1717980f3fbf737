"""The editor's keys do what its footer says: Esc cancels (in the form and in raw mode), Tab
and Shift+Tab move between fields, and a blank new memory is not shown as wrong."""

from __future__ import annotations

from textual.widgets import Input, Select, Static, TextArea

from tests.ui.conftest import Toasts, key_name, settle, type_text
from workbench.engine.memories.models import DraftForm
from workbench.ui.messages import OpenMemoryRequested
from workbench.ui.screens.confirm import ConfirmModal
from workbench.ui.screens.editor import MemoryEditorScreen
from workbench.ui.screens.main import MainScreen

SIZE = (120, 36)


async def open_editor(app, pilot, path: str | None = None) -> MemoryEditorScreen:  # type: ignore[no-untyped-def]
    await settle(app, pilot)
    if path is not None:
        app.screen.post_message(OpenMemoryRequested(path))
        await settle(app, pilot)
    await pilot.press("e" if path else "n")
    await settle(app, pilot)
    editor = app.screen
    assert isinstance(editor, MemoryEditorScreen)
    return editor


async def test_escape_leaves_the_editor_in_raw_mode(memory_project, app_factory):
    (memory_project.memory_dir / "broken.md").write_text("---\nname: never closed\nbody\n")
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot, "broken.md")
        assert editor.raw and editor.query_one("#field-body", TextArea).has_focus
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)


async def test_first_escape_in_the_form_cancels_from_any_field(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot, "user_role.md")
        editor.query_one("#field-body", TextArea).focus()
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)  # nothing changed: gone at once
        editor = await open_editor(app, pilot, "user_role.md")
        body = editor.query_one("#field-body", TextArea)
        body.focus()
        await pilot.press("x", "escape")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)  # a change: asked first
        assert app.screen.question == "Discard your changes?"


async def test_tab_moves_out_of_the_body_and_shift_tab_back(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot, "user_role.md")
        body = editor.query_one("#field-body", TextArea)
        text = body.text
        body.focus()
        await pilot.press("tab")
        await pilot.pause()
        assert body.text == text and not body.has_focus  # no spaces inserted
        body.focus()
        await pilot.press("shift+tab")
        await pilot.pause()
        assert editor.focused is editor.query_one("#field-description", Input)
        assert body.border_subtitle == "tab / shift+tab: next / previous field"


async def test_a_blank_new_memory_shows_no_errors_until_something_is_typed(
    memory_project, app_factory
):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        findings = str(editor.query_one(".editor-findings", Static).render())
        assert "name-missing" not in findings and "type-missing" not in findings
        assert "Choose a type" in findings
        assert not editor.query("Input.-invalid, Select.-invalid")
        assert {f.rule for f in editor.findings} >= {"name-missing", "type-missing"}
        editor.query_one("#field-name", Input).focus()
        await type_text(pilot, "Pager")
        findings = str(editor.query_one(".editor-findings", Static).render())
        assert "type-missing" in findings and "name-missing" not in findings
        assert editor.query_one("#field-type", Select).has_class("-invalid")


async def test_saving_without_a_type_says_so_and_goes_to_the_type(memory_project, app_factory):
    app = app_factory(memory_project)
    toasts = Toasts()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        editor = await open_editor(app, pilot)
        await type_text(pilot, "Pager")
        await pilot.press("tab")
        await type_text(pilot, "who holds the pager")
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert app.screen is editor
        assert editor.query_one("#field-type", Select).has_focus
        (toast,) = [n for n in toasts if n.title == "Not saved"]
        assert toast.message.startswith("a memory needs a type: one of user, feedback")


async def test_the_file_field_says_which_file_the_save_writes(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        file_field = editor.query_one("#field-file", Input)
        assert file_field.placeholder == "optional; by default it is made from the name"
        editor.query_one("#field-type", Select).value = "project"
        await type_text(pilot, "Deploy window")
        await settle(app, pilot)
        expected = app.engine.memories.check_draft(
            "",
            path="new memory",
            team=False,
            form=DraftForm("project", "Deploy window", ""),
            new=True,
        ).default_file
        assert expected in ("deploy-window.md", "project_deploy_window.md")
        assert file_field.placeholder == f"optional; by default {expected}"


async def test_text_typed_right_after_tab_lands_in_the_next_field(memory_project, app_factory):
    # Textual hands each key to the widget focused when the key is dispatched: typed (or
    # pasted) back to back, the description followed the name into the name box, because the
    # tab had not moved the focus yet when the next keys were handed out.
    from textual import events

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        assert editor.query_one("#field-name", Input).has_focus
        for key, character in [
            *[(key_name(c), c) for c in "Pager"],
            ("tab", "\t"),
            *[(key_name(c), c) for c in "who holds it"],
            ("tab", "\t"),
            *[(key_name(c), c) for c in "user_pager.md"],
            ("shift+tab", None),
        ]:
            event = events.Key(key, character)
            event.set_sender(app)
            app.post_message(event)
        await settle(app, pilot)
        assert editor.query_one("#field-name", Input).value == "Pager"
        assert editor.query_one("#field-description", Input).value == "who holds it"
        assert editor.query_one("#field-file", Input).value == "user_pager.md"
        assert editor.query_one("#field-description", Input).has_focus


async def test_cursor_keys_typed_right_after_tab_keep_their_place(memory_project, app_factory):
    # A box's own bindings (End, Home, the arrows) ran only once the key had bubbled back up
    # to the app, after the text typed behind it: `Tab Tab End ' QQ'` in one burst put "QQ"
    # at the start of the body, as if the End had been dropped.
    from textual import events

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot, "feedback_testing.md")
        assert editor.query_one("#field-name", Input).has_focus
        for key, character in [
            ("tab", "\t"),
            ("home", None),
            *[(key_name(c), c) for c in "QQ "],
            ("tab", "\t"),
            ("down", None),
            ("down", None),
            ("end", None),
            *[(key_name(c), c) for c in " QQ"],
        ]:
            event = events.Key(key, character)
            event.set_sender(app)
            app.post_message(event)
        await settle(app, pilot)
        description = editor.query_one("#field-description", Input).value
        assert description == "QQ Never mock the database in integration tests"
        body = editor.query_one("#field-body", TextArea)
        assert body.text.splitlines()[2] == (
            "**Why:** a mocked migration hid a broken schema in 2025-11. QQ"
        )
        assert body.cursor_location == (2, len(body.text.splitlines()[2]))


async def test_quitting_with_unsaved_edits_asks_first(memory_project, app_factory):
    # Ctrl+Q left the editor's unsaved text behind without a word, where Esc asks.
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot, "user_role.md")
        editor.query_one("#field-body", TextArea).focus()
        await type_text(pilot, "more")
        await pilot.press("ctrl+q")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)
        assert app.screen.question == "Discard your changes?"
        await pilot.press("ctrl+q")  # asked once, not a pile of the same question
        await settle(app, pilot)
        assert len(app.screen_stack) == 3
        await pilot.press("n")
        await settle(app, pilot)
        assert app.screen is editor and app.return_code is None
        # The palette's "App: Quit" asks the same.
        (quit_command,) = [
            command
            for command in app.get_system_commands(app.screen)
            if command.title == "App: Quit"
        ]
        app.call_later(quit_command.callback)  # as the palette runs it
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await settle(app, pilot)
        assert app.return_code == 0
    assert "more" not in (memory_project.memory_dir / "user_role.md").read_text()


async def test_quitting_with_nothing_changed_quits_at_once(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await open_editor(app, pilot, "user_role.md")
        await pilot.press("ctrl+q")
        await settle(app, pilot)
        assert app.return_code == 0


async def test_raw_mode_says_it_holds_the_whole_file_and_offers_the_way_back(
    memory_project, app_factory
):
    # In raw mode the box was still titled "Body (markdown)" and the footer still offered
    # "^t Raw text", the mode already on; for a file whose frontmatter cannot be read there is
    # no form to go back to.
    from workbench.ui.widgets.footer import KeyHints

    (memory_project.memory_dir / "broken.md").write_text("---\nname: never closed\nbody\n")
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:

        def labels(editor: MemoryEditorScreen) -> set[str]:
            return {label for _key, label in editor.query_one(KeyHints).hints}

        def palette(editor: MemoryEditorScreen) -> set[str]:
            return {command.title for command in app.get_system_commands(editor)}

        editor = await open_editor(app, pilot, "broken.md")
        body = editor.query_one("#field-body", TextArea)
        assert editor.raw
        assert body.border_title == "Whole file as text (its frontmatter cannot be read)"
        assert not labels(editor) & {"Raw text", "Form"}
        assert "Editor: Toggle raw text" not in palette(editor)
        await pilot.press("escape")
        await settle(app, pilot)

        editor = await open_editor(app, pilot, "user_role.md")
        body = editor.query_one("#field-body", TextArea)
        assert body.border_title == "Body (markdown)"
        assert "Raw text" in labels(editor) and "Form" not in labels(editor)
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        assert editor.raw
        assert body.border_title == "Whole file as text (frontmatter and body)"
        assert "Form" in labels(editor) and "Raw text" not in labels(editor)
        assert "Editor: Toggle raw text" in palette(editor)
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        assert not editor.raw and body.border_title == "Body (markdown)"
        assert "Raw text" in labels(editor)


async def test_switching_to_raw_text_is_no_change_and_takes_the_typing(memory_project, app_factory):
    # ctrl+t hid the focused field with the form, so what was typed next went nowhere; and
    # the switch alone made Esc (and ctrl+q) ask about unsaved changes.
    path = memory_project.memory_dir / "user_role.md"
    original = path.read_text()
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot, "user_role.md")
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        body = editor.query_one("#field-body", TextArea)
        assert editor.raw and app.focused is body and not editor.is_dirty
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, MemoryEditorScreen)  # left without asking
        editor = await open_editor(app, pilot, "user_role.md")
        await pilot.press("ctrl+t")
        await settle(app, pilot)
        await pilot.press("ctrl+end", *"Typed in raw.")
        await settle(app, pilot)
        assert editor.is_dirty and "Typed in raw." in editor.query_one("#field-body", TextArea).text
    assert path.read_text() == original


async def test_edit_keys_in_a_burst_keep_their_order_in_the_tree_filter(
    memory_project, app_factory
):
    # Outside the editor a box's own keys still ran after the text typed behind them: in the
    # tree's filter "ghi", then Backspace "ab" Home "Y" in one burst gave "ghiabY".
    from textual import events

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("/")
        await settle(app, pilot)
        box = app.screen.query_one("#memory-filter", Input)
        assert app.focused is box
        for key, character in [
            *[(key_name(c), c) for c in "ghi"],
            ("backspace", None),
            *[(key_name(c), c) for c in "ab"],
            ("home", None),
            ("Y", "Y"),
        ]:
            event = events.Key(key, character)
            event.set_sender(app)
            app.post_message(event)
        await settle(app, pilot)
        assert box.value == "Yghab"
