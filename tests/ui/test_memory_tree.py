"""The memory tree at scale: capped groups, batched filling, the filter reaching everything."""

from __future__ import annotations

from tests.ui.conftest import build_project, settle
from tests.ui.harness import TEST_SETTINGS, PaneHarness
from workbench.engine.memories.models import MemoryEntry
from workbench.ui.app import make_app
from workbench.ui.widgets.memory_tree import MAX_PER_GROUP, MORE, MemoryTree

NOW_MS = 1_800_000_000_000


def entries(count: int) -> list[MemoryEntry]:
    return [
        MemoryEntry(
            path=f"user_topic_{i:05d}.md",
            abs_path=f"/m/user_topic_{i:05d}.md",
            name=f"Topic {i}",
            description=f"topic number {i}",
            type="user",
            scope="private",
            mtime_ms=NOW_MS - i * 60_000,
            mtime="",
            age_days=0,
            size_bytes=100,
            tokens=25,
            indexed=True,
        )
        for i in range(count)
    ]


async def test_a_big_group_shows_the_newest_and_says_how_many_more():
    app = PaneHarness(lambda: MemoryTree(now_ms=lambda: NOW_MS))
    async with app.run_test(size=(80, 30)) as pilot:
        tree = app.query_one(MemoryTree)
        tree.set_entries(entries(2_500))
        await settle(app, pilot)
        group = tree.root.children[0]
        assert str(group.label) == "Private (2500)"
        leaves = [n for n in group.children if n.data != MORE]
        assert len(leaves) == MAX_PER_GROUP
        assert leaves[0].data.path == "user_topic_00000.md"  # newest first
        assert group.children[-1].data == MORE
        assert "1,500 older" in str(group.children[-1].label)
        assert tree.selected_path == "user_topic_00000.md"
        assert tree.shown_count == 2_500


async def test_the_note_rows_fit_so_the_tree_never_scrolls_sideways():
    # A note wider than the tree gave it a horizontal scrollbar, redrawn on every move.
    app = PaneHarness(lambda: MemoryTree(now_ms=lambda: NOW_MS))
    async with app.run_test(size=(40, 20)) as pilot:
        tree = app.query_one(MemoryTree)
        tree.set_entries(entries(2_500))
        await settle(app, pilot)
        assert tree.virtual_size.width <= tree.scrollable_content_region.width
        assert not tree.show_horizontal_scrollbar
        tree.set_filter("no such memory anywhere in this long filter text")
        await settle(app, pilot)
        assert tree.virtual_size.width <= tree.scrollable_content_region.width
        assert not tree.show_horizontal_scrollbar


async def test_the_filter_reaches_memories_past_the_cap():
    app = PaneHarness(lambda: MemoryTree(now_ms=lambda: NOW_MS))
    async with app.run_test(size=(80, 30)) as pilot:
        tree = app.query_one(MemoryTree)
        tree.set_entries(entries(2_500))
        await settle(app, pilot)
        tree.set_filter("topic number 2345")
        await settle(app, pilot)
        paths = [n.data.path for n in tree.root.children[0].children]
        assert paths == ["user_topic_02345.md"]
        assert tree.selected_path == "user_topic_02345.md"


async def test_a_rescan_keeps_the_cursor_on_the_same_memory():
    app = PaneHarness(lambda: MemoryTree(now_ms=lambda: NOW_MS))
    async with app.run_test(size=(80, 30)) as pilot:
        tree = app.query_one(MemoryTree)
        tree.set_entries(entries(900))
        await settle(app, pilot)
        assert tree.select_path("user_topic_00750.md")
        await settle(app, pilot)
        tree.set_entries(entries(901), keep=tree.selected_path)
        await settle(app, pilot)
        # The tree fills in timed batches, which `settle` (workers only) does not wait for:
        # on a loaded machine the kept memory's batch may not be in yet.
        for _ in range(200):
            if tree.filled:
                break
            await pilot.pause(0.05)
        assert tree.filled
        assert tree.selected_path == "user_topic_00750.md"


async def test_leaves_fit_the_width_once_the_scrollbar_appears():
    # Filled while the tree is short, then grown past its height: the vertical scrollbar
    # takes cells from the leaves, which must shrink with it (no horizontal overflow that
    # would push the lint column out of sight).
    app = PaneHarness(lambda: MemoryTree(now_ms=lambda: NOW_MS))
    async with app.run_test(size=(60, 20)) as pilot:
        tree = app.query_one(MemoryTree)
        tree.set_entries(entries(5))
        await settle(app, pilot)
        assert not tree.show_vertical_scrollbar
        tree.set_entries(entries(60))
        await settle(app, pilot)
        assert tree.show_vertical_scrollbar
        assert tree.virtual_size.width <= tree.scrollable_content_region.width
        assert not tree.show_horizontal_scrollbar


def test_the_tree_lists_scopes_in_the_order_the_warm_up_expects():
    # The warm-up reads the memory the tree opens on (`first_listed`); both must agree.
    from workbench.engine.memories.store import SCOPE_ORDER, first_listed
    from workbench.ui.widgets.memory_tree import GROUPS

    assert tuple(scope for scope, _title, _prefix in GROUPS) == SCOPE_ORDER
    team = entries(1)[0]
    team = MemoryEntry(**{**team.__dict__, "scope": "team", "path": "team/x.md"})
    private = entries(2)[1]
    assert first_listed([team, private]) is private
    assert first_listed([team]) is team
    assert first_listed([]) is None


async def test_a_long_name_never_runs_into_the_age_column():
    from rich.style import Style

    long_today = MemoryEntry(
        **{
            **entries(1)[0].__dict__,
            "path": "feedback_shared_conventions_for_everyone_on_the_team_" * 2 + ".md",
            "mtime_ms": NOW_MS,  # age "today", the widest age there is
        }
    )
    app = PaneHarness(lambda: MemoryTree(now_ms=lambda: NOW_MS))
    async with app.run_test(size=(60, 20)) as pilot:
        tree = app.query_one(MemoryTree)
        tree.set_entries([long_today])
        await settle(app, pilot)
        leaf = tree.root.children[0].children[0]
        plain = tree.render_label(leaf, Style(), Style()).plain
        assert "…" in plain  # the name was cut to fit
        at = plain.index("today")
        assert plain[at - 1] == " ", plain  # at least one space between name and age


async def test_a_cursor_move_repaints_only_what_changed(memory_project, app_factory):
    from workbench.ui.screens.main import MainScreen

    app = app_factory(memory_project)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        app.screen.set_focus(app.screen.query_one(MemoryTree))
        await settle(app, pilot)
        frames: list[str] = []
        display = app._display

        def record(screen, update):  # type: ignore[no-untyped-def]
            frames.append(type(update).__name__)
            return display(screen, update)

        app._display = record  # type: ignore[method-assign]
        first = app.screen.query_one(MemoryTree).selected_path
        for _ in range(3):
            await pilot.press("down")
            await settle(app, pilot)
        assert app.screen.query_one(MemoryTree).selected_path != first
        assert frames  # the moves were drawn
        # A full-screen frame means something refreshed the whole screen for a cursor move.
        assert "LayoutUpdate" not in frames, frames


async def test_a_folder_read_before_the_first_frame_shows_the_tree_from_its_top(tmp_path):
    # `workbench` reads the folder while the UI imports, so the tree gets its memories before
    # it has a size. Placing the cursor then scrolled it to the top row: on every start with
    # more memories than rows, the "Private (N)" title stayed hidden above the first memory.
    project = build_project(tmp_path)
    for n in range(40):
        text = f"---\nname: Extra {n}\ndescription: extra note {n}\ntype: user\n---\n\nNote {n}.\n"
        (project.memory_dir / f"user_extra_{n:02d}.md").write_text(text, encoding="utf-8")
    engine = project.engine()
    engine.memories.warm_up()
    engine.memories.wait_warm()  # the view is ready before the first layout, as when it wins
    app = make_app(engine, TEST_SETTINGS, now=project.now)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        tree = app.screen.query_one(MemoryTree)
        assert tree.last_line + 1 > tree.scrollable_content_region.height  # it overflows
        assert tree.scroll_y == 0
        assert str(tree.root.children[0].label).startswith("Private")
        assert tree.cursor_line == 1 and tree.selected_path is not None
