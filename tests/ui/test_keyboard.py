"""Bindings with ids, the keymap from config, the palette and the help screen (the panes'
actions included)."""

from __future__ import annotations

from textual.app import SystemCommand

from tests.ui.conftest import Toasts, settle, type_text
from workbench.ui.actions import ACTIONS, PANES, specs, unknown_keymap_ids
from workbench.ui.panes.registry import every_action, pane_actions
from workbench.ui.screens.editor import MemoryEditorScreen
from workbench.ui.screens.help import HelpScreen
from workbench.ui.screens.main import MainScreen

SIZE = (130, 40)


def test_every_action_is_declared_once_with_a_kebab_id_and_a_category():
    ids = [spec.id for spec in every_action()]
    assert len(ids) == len(set(ids))
    assert {spec.id for spec in ACTIONS} < set(ids)
    for spec in every_action():
        assert spec.id == spec.id.lower() and " " not in spec.id and "_" not in spec.id
        category, _, action = spec.title.partition(": ")
        assert category and action, spec.title
    from workbench.ui.actions import INDEX_VERBS, MEMORY_VERBS

    # The footer stays short wherever the focus is: memory verbs show in the tree and the
    # viewer, index verbs in the MEMORY.md pane, the rest everywhere.
    shown = [s for s in (*specs("main"), *specs("app")) if s.show]
    name = lambda spec: spec.action.split("(", 1)[0]  # noqa: E731
    everywhere = [s for s in shown if name(s) not in MEMORY_VERBS | INDEX_VERBS]
    assert len([s for s in shown if name(s) in MEMORY_VERBS]) + len(everywhere) <= 7
    assert len([s for s in shown if name(s) in INDEX_VERBS]) + len(everywhere) <= 7
    assert unknown_keymap_ids({"new-memory": "x", "nwe-memory": "y"}) == ["nwe-memory"]
    assert unknown_keymap_ids({"toggle-follow": "g"}, every_action()) == []


def test_pane_actions_come_from_each_pane_module_and_bind_on_the_pane():
    owners = {info.id for info, _spec in pane_actions()}
    assert owners == {
        "session",
        "gauge",
        "compaction",
        "recall",
        "team",
        "review",
        "instructions",
        "context",
    }
    for info, spec in pane_actions():
        assert spec.scope == "pane", spec
        assert spec.title.split(":")[0] not in ("App", "Pane", "Memory", "Index", "Editor")
        cls = info.pane_class()
        assert spec.id in {binding.id for binding in cls.BINDINGS}, spec  # type: ignore[union-attr]
        assert hasattr(cls, f"action_{spec.action}"), spec


def test_every_pane_has_a_jump_action():
    assert {
        spec.id for spec in ACTIONS if spec.id.startswith("show-") and spec.id != "show-help"
    } == {f"show-{pane}" for pane, _, _ in PANES}


def test_every_action_method_exists():
    from workbench.ui.app import WorkbenchApp

    owners = {"app": WorkbenchApp, "main": MainScreen, "editor": MemoryEditorScreen}
    for spec in ACTIONS:
        assert spec.scope != "pane", spec  # pane verbs live in their pane module
        name = spec.action.split("(", 1)[0]
        owner = owners[spec.scope]
        assert hasattr(owner, f"action_{name}") or name == "quit", spec


async def test_palette_offers_every_applicable_action(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        expected = {spec.title for spec in ACTIONS if spec.scope in ("app", "main")}
        # The fixture index has a dangling link and an orphan but no long line.
        expected.discard("Index: Shorten long lines")
        assert expected <= titles
        assert "Index: Shorten long lines" not in titles
        # Textual's own stay, titled like ours (its Quit is "App: Quit").
        assert {"App: Change theme", "App: Keys panel", "App: Save a screenshot (SVG)"} <= titles
        # Panes are built when first shown: until then the palette offers all their verbs.
        assert app.screen.pane("session") is None
        assert {spec.title for _info, spec in pane_actions()} <= titles
        for info, _spec in pane_actions():
            await app.screen.built_pane(info.id)
        await settle(app, pilot)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        # Built, every pane verb whose pane says it applies (its check_action), and no other.
        for info, spec in pane_actions():
            pane = app.screen.pane(info.id)
            assert pane is not None, info.id
            applies = bool(pane.check_action(spec.action, ()))
            assert (spec.title in titles) == applies, spec.title
        # Refresh always applies; accepting needs a proposal, and the queue is empty.
        assert "Review: Refresh queue" in titles
        assert "Review: Accept proposal" not in titles


async def test_palette_runs_a_pane_jump(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        await type_text(pilot, "Show MEMORY.md load")  # settles: the search is a worker
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.screen.active_pane == "index"


async def test_palette_opens_a_memory_by_name(memory_project, app_factory):
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        await type_text(pilot, "grafana boards")  # settles: the search is a worker
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen.memory_tree.selected_path == "reference_dashboards.md"


async def test_keymap_from_config_rebinds_by_id(memory_project, app_factory):
    app = app_factory(memory_project, keymap={"new-memory": "ctrl+n", "show-index": "f6"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        await pilot.press("f6")
        await settle(app, pilot)
        assert app.screen.active_pane == "index"
        await pilot.press("escape", "ctrl+n")  # memory verbs work in the tree
        await settle(app, pilot)
        assert isinstance(app.screen, MemoryEditorScreen)


async def test_unknown_keymap_ids_are_reported(memory_project, app_factory):
    app = app_factory(memory_project, keymap={"nwe-memory": "ctrl+n"})
    toasts = Toasts()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
    assert any("nwe-memory" in toast.message for toast in toasts)


async def test_help_lists_every_binding_id_with_its_current_keys(memory_project, app_factory):
    app = app_factory(memory_project, keymap={"undo-change": "z"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one(".help-bindings").render())
        for spec in every_action():
            assert spec.id in text
        undo_row = next(line for line in text.splitlines() if "undo-change" in line)
        assert undo_row.split()[0] == "z"
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)


async def test_edit_actions_are_disabled_without_a_selection(tmp_path, app_factory):
    from tests.ui.conftest import build_project

    project = build_project(tmp_path)
    for path in project.memory_dir.rglob("*.md"):
        if path.name != "MEMORY.md":
            path.unlink()
    app = app_factory(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert screen.check_action("delete_memory", ()) is None
        assert screen.check_action("new_memory", ()) is True
        commands: list[SystemCommand] = list(app.get_system_commands(screen))
        assert "Memory: Delete memory" not in {c.title for c in commands}


async def test_palette_runs_a_pane_action_on_its_pane(memory_project, app_factory):
    from workbench.ui.panes.session import SessionPane

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        await type_text(pilot, "Sync: Refresh status")  # settles: the search is a worker
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        # The pane came forward with the focus in it, and the action ran there.
        assert app.screen.active_pane == "team"
        pane = app.screen.pane("team")
        assert pane is not None and pane.report is not None  # type: ignore[attr-defined]
        assert pane in app.focused.ancestors_with_self  # type: ignore[union-attr]
        # A pane action that does not apply yet is not offered once its pane is built (no
        # session notes on show).
        session = await app.screen.built_pane("session")
        await settle(app, pilot)
        assert isinstance(session, SessionPane) and session.notes is None
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert "Session: Toggle notes text" not in titles


async def test_keymap_rebinds_a_pane_action_by_id(memory_project, app_factory):
    app = app_factory(memory_project, keymap={"refresh-sync": "g"})
    toasts = Toasts()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        pane = app.screen.pane("team")
        assert pane is not None
        calls: list[str] = []
        pane.action_refresh_sync = lambda: calls.append("refresh")  # type: ignore[method-assign]
        await pilot.press("f5")
        await pilot.press("g")
        await settle(app, pilot)
        assert calls == ["refresh"]
    assert not [t for t in toasts if t.title == "Keymap"]  # a pane id is a known id


async def test_footer_shows_the_focused_panes_keys_and_the_palette_last(
    memory_project, app_factory
):
    from workbench.ui.widgets.footer import KeyHints

    app = app_factory(memory_project, keymap={"new-memory": "ctrl+n"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        hints = app.screen.query_one(KeyHints).hints
        assert ("^n", "New") in hints and ("n", "New") not in hints  # the keymap's key shows
        assert hints[-1] == ("^p", "palette")
        assert ("f1", "Help") in hints
        await pilot.press("4")  # the gauge pane, with the focus in it
        await settle(app, pilot)
        gauge_hints = app.screen.query_one(KeyHints).hints
        # The focused pane's own keys come first; the screen's stay after them.
        assert gauge_hints[:2] == [("f5", "Refresh"), ("f", "Follow")]
        assert ("f", "Follow") not in hints
        # The memory verbs work (and show) only in the tree and the viewer.
        assert ("^n", "New") not in gauge_hints and ("f1", "Help") in gauge_hints
        assert gauge_hints[-1] == ("^p", "palette")


async def test_clicking_a_footer_key_presses_it(memory_project, app_factory):
    from workbench.ui.widgets.footer import KeyHints

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        footer = app.screen.query_one(KeyHints)
        assert footer.hints[0] == ("n", "New")
        await pilot.click(KeyHints, offset=(1, 0))  # on the key of the first hint
        await settle(app, pilot)
        assert isinstance(app.screen, MemoryEditorScreen)
        await pilot.press("escape")
        await settle(app, pilot)
        # The palette's hint sits at the right edge: "│ ^p palette ".
        await pilot.click(KeyHints, offset=(SIZE[0] - len(" palette ") - 2, 0))
        await settle(app, pilot)
        assert type(app.screen).__name__ == "CommandPalette"


async def test_typed_text_outside_an_input_opens_nothing_and_deletes_nothing(
    memory_project, app_factory
):
    from workbench.ui.screens.confirm import ConfirmModal

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        before = sorted(p.name for p in memory_project.memory_dir.iterdir())
        await pilot.press("7")  # the Team pane, with the focus in it
        await settle(app, pilot)
        # Text typed at a pane that has no box: no editor, no new-memory screen, no filter,
        # and `d` then `y` does not delete the memory the (unfocused) tree highlights.
        await pilot.press(*"need a verbose / edit", "d", "y", "r", "delete")
        await settle(app, pilot)
        assert app.screen is screen and not isinstance(app.screen, ConfirmModal)
        assert not screen.query_one("#memory-filter").has_focus
        assert sorted(p.name for p in memory_project.memory_dir.iterdir()) == before
        assert screen.active_pane == "team"
        # In the tree the same keys work.
        await pilot.press("escape", "d")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)


async def test_escape_always_returns_to_the_tree_and_focus_is_always_shown(
    memory_project, app_factory
):
    from textual.color import Color

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        sidebar, panes = screen.query_one("#sidebar"), screen.query_one("#panes")
        primary = Color.parse(app.theme_variables["primary"])
        for keys in (("4",), ("6", "i", *"deploy", "escape"), ("8",), ("2",), ("slash", "x")):
            await pilot.press(*keys)
            await settle(app, pilot)
            focused = app.focused
            assert focused is not None, keys
            in_sidebar = sidebar in focused.ancestors_with_self
            # The area holding the focus wears the ring (the sidebar by its :focus-within
            # rule, the panes' box painted by the screen).
            if in_sidebar:
                assert sidebar.styles.border_top[1] == primary, keys
            else:
                assert panes in focused.ancestors and panes.styles.border_top[1] == primary, keys
            await pilot.press("escape")
            await settle(app, pilot)
            assert app.focused is screen.memory_tree, keys
            assert sidebar.styles.border_top[1] == primary
        # Esc in the filter box also clears it.
        assert screen.query_one("#memory-filter").value == ""


async def test_index_pane_footer_shows_its_own_keys_when_focused(memory_project, app_factory):
    from workbench.ui.widgets.footer import KeyHints

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        footer = app.screen.query_one(KeyHints)
        tree_hints = [key for key, _label in footer.hints]
        assert "t" not in tree_hints and "alt+d" not in " ".join(tree_hints)
        await pilot.press("2")
        await settle(app, pilot)
        labels = [label for _key, label in footer.hints]
        # The pane's own verbs, and not the memory verbs that would act on the tree.
        assert {"Team index", "Fix dangling", "Index orphans", "Shorten lines"} <= set(labels)
        assert "Delete" not in labels and "Edit" not in labels and "New" not in labels
        enabled = {binding.description: on for binding, _display, on in footer._hints}
        assert enabled["Fix dangling"] and enabled["Index orphans"]
        assert not enabled["Shorten lines"]  # the fixture index has no long line: dimmed


async def test_palette_runs_a_memory_verb_on_the_tree_from_another_pane(
    memory_project, app_factory
):
    from workbench.ui.screens.confirm import ConfirmModal

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        await type_text(pilot, "Memory: Delete memory")  # settles: the search is a worker
        await pilot.press("enter")
        await settle(app, pilot)
        # The memory the verb acts on is brought forward first.
        assert isinstance(app.screen, ConfirmModal)
        assert app.screen.question == "Delete notes_unindexed.md?"
        await pilot.press("n")
        await settle(app, pilot)
        assert app.screen.active_pane == "memory" and app.focused is app.screen.memory_tree


async def test_undo_key_acts_only_where_memories_are_on_show(memory_project, app_factory):
    target = memory_project.memory_dir / "notes_unindexed.md"
    before = target.read_bytes()
    engine = memory_project.engine()
    engine.history.write(target, before + b"\nan edit to undo\n", "save")
    edited = target.read_bytes()
    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for pane in ("7", "4", "8"):  # Team, Recall, Review: `u` and ctrl+z do nothing there
            await pilot.press(pane)
            await settle(app, pilot)
            await pilot.press("u", "ctrl+z", "U")
            await settle(app, pilot)
            assert target.read_bytes() == edited, pane
            assert app.screen.check_action("undo_change", ()) is False
        await pilot.press("escape")  # back to the tree: the same key undoes
        await settle(app, pilot)
        await pilot.press("u")
        await settle(app, pilot)
        assert target.read_bytes() == before
        await pilot.press("2", "U")  # the MEMORY.md pane is a place for it too (redo here)
        await settle(app, pilot)
        assert target.read_bytes() == edited


async def test_text_typed_right_after_a_focus_key_lands_in_the_box(memory_project, app_factory):
    """A fast typist (or a browser sending keys back to back) types the key that focuses a
    box and the text at once: every character must land in the box, none before it."""
    from textual.widgets import Input

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await type_text(pilot, "/deploy")
        assert screen.query_one("#memory-filter", Input).value == "deploy"
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        await type_text(pilot, "ihow do we deploy")
        assert screen.query_one("#recall-query", Input).value == "how do we deploy"


async def test_palette_finds_an_action_by_its_footer_label_and_its_id(memory_project, app_factory):
    # The footer said "alt+d Fix dangling" and help `fix-dangling`, but the palette searched
    # only the title, "Index: Remove dangling lines": "fix" found nothing.
    from textual.command import CommandList, CommandPalette
    from textual.widgets import Input

    from workbench.ui.screens.confirm import DiffConfirmModal

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        assert app.screen.active_pane == "index"
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        for query in ("fix", "Fix dangling", "fix-dangling"):
            palette.query_one(Input).value = ""
            await type_text(pilot, query)  # settles: the search is a worker
            found = [str(option.prompt) for option in palette.query_one(CommandList).options]
            assert any("Index: Remove dangling lines" in text for text in found), (query, found)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, DiffConfirmModal)


async def test_palette_finds_every_offered_action_by_its_footer_label_and_id(
    memory_project, app_factory
):
    from workbench.ui.commands import ActionsProvider

    app = app_factory(memory_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        offered = {command.title for command in app.get_system_commands(app.screen)}
        provider = ActionsProvider(app.screen)
        for spec in every_action():
            if spec.title not in offered:
                continue
            for name in (spec.label, spec.id):
                found = [hit.text async for hit in provider.search(name)]
                assert spec.title in found, (name, spec.title)
