"""SVG snapshots: the whole app in its meaningful states and on every pane, each pane alone,
every theme.

Review changes with `snapshot_report.html`, then `make snap-update`. Nothing rendered here
depends on the clock or on absolute paths: ages are measured against the fixture's fixed
"now", the status line shows the memory folder symbolically, and the help screen hides paths.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Select, TextArea

from tests.conftest import fixed_length_dir
from tests.ui.conftest import (
    TEST_SETTINGS,
    build_project,
    fixed_now,
    long_index,
    settle,
    type_text,
)
from tests.ui.harness import PaneHarness
from workbench.engine import Engine
from workbench.engine.agents.tools import StagedFile
from workbench.engine.memories.models import (
    Headroom,
    IndexEntry,
    IndexReport,
    LintFinding,
    MemoryDocument,
    MemoryEntry,
)
from workbench.engine.samples import install_sample
from workbench.paths import bundled_dir
from workbench.ui.actions import PANES
from workbench.ui.app import make_app
from workbench.ui.messages import OpenMemoryRequested
from workbench.ui.panes.index import IndexPane
from workbench.ui.panes.memory import MemoryPane
from workbench.ui.themes import BUILTIN_THEMES, ThemeSpec

SIZE = (120, 36)
SAMPLE_NOW = 1_796_000_000.0
"""A fixed "now" (2026-11-30) after the sample transcripts' last turns: the panes that measure
time against transcript timestamps (compaction's last-reply age) never drift."""
THEME_NAMES = sorted(BUILTIN_THEMES) + sorted(
    ThemeSpec.from_file(p).name for p in bundled_dir("themes").glob("*.yaml")
)


def settled(*steps: str | tuple[str, ...], after=None):  # type: ignore[no-untyped-def]
    """A run_before that lets the scan finish, presses keys, and settles after each step.

    A step is a key, or a tuple of characters typed in one go (only the end result is
    pictured)."""

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot.app, pilot)
        if after is not None:
            await after(pilot)
            await settle(pilot.app, pilot)
        for step in steps:
            if isinstance(step, str):
                await pilot.press(step)
                await settle(pilot.app, pilot)
            else:
                await type_text(pilot, "".join(step))

    return run_before


def open_memory(path: str):  # type: ignore[no-untyped-def]
    async def go(pilot) -> None:  # type: ignore[no-untyped-def]
        pilot.app.screen.post_message(OpenMemoryRequested(path))

    return go


@pytest.fixture
def fixture_app(memory_project, app_factory):
    return app_factory(memory_project)


@pytest.fixture
def warnings_app(tmp_path: Path):
    """The `warnings` sample project, as the demo opens it (with a fixed clock); `prepare` gets
    the engine first (to stage proposals, say)."""

    def build(theme: str = "workbench-dark", prepare=None, now=None):  # type: ignore[no-untyped-def]
        now = now or fixed_now()
        base = fixed_length_dir(tmp_path, project="sample/legacy-billing")
        sample = install_sample("warnings", base / "sample", now=now)
        engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
        engine.memories.now_ms = now * 1000
        if prepare is not None:
            prepare(engine)
        return make_app(engine, TEST_SETTINGS.replace(theme=theme), now=now)

    return build


def stage_proposals(engine: Engine) -> None:
    """What an extraction run would queue: an edit of a memory and its index line."""
    memory = Path(engine.locations.memory_dir)
    target = memory / "feedback_no_friday_deploys.md"
    before = target.read_bytes()
    after = before.decode() + (
        "\nThe freeze also covers the last business day of the month (month-end billing run).\n"
    )
    engine.agents.review.propose(
        [StagedFile(path=str(target), original=before, content=after)],
        source="extract",
        note="The user said the month-end run is as risky as Fridays.",
        group="3f9a2c1b",
    )


class TestMainScreen:
    def test_start_up(self, snap_compare, fixture_app):
        assert snap_compare(fixture_app, terminal_size=SIZE, run_before=settled())

    def test_viewer_source_view(self, snap_compare, fixture_app):
        run = settled("v", after=open_memory("feedback_testing.md"))
        assert snap_compare(fixture_app, terminal_size=SIZE, run_before=run)

    def test_filtered_tree(self, snap_compare, fixture_app):
        assert snap_compare(
            fixture_app, terminal_size=SIZE, run_before=settled("slash", tuple("deploy"))
        )

    def test_index_pane(self, snap_compare, fixture_app):
        assert snap_compare(fixture_app, terminal_size=SIZE, run_before=settled("alt+2"))

    def test_team_index(self, snap_compare, fixture_app):
        assert snap_compare(fixture_app, terminal_size=SIZE, run_before=settled("2", "t"))

    def test_index_cut(self, snap_compare, tmp_path: Path, app_factory):
        app = app_factory(build_project(tmp_path, index=long_index(230)))

        async def scroll_to_cut(pilot) -> None:  # type: ignore[no-untyped-def]
            from textual.widgets import OptionList

            options = pilot.app.screen.query_one(IndexPane).query_one(OptionList)
            options.focus()
            options.highlighted = 204  # a few lines past the cut, which sits at option 200

        run = settled(after=None)

        async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
            await run(pilot)
            await pilot.press("alt+2")
            await settle(pilot.app, pilot)
            await scroll_to_cut(pilot)
            await settle(pilot.app, pilot)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

    def test_help_screen(self, snap_compare, fixture_app):
        assert snap_compare(fixture_app, terminal_size=SIZE, run_before=settled("f1"))

    def test_command_palette(self, snap_compare, fixture_app):
        run = settled("ctrl+p", tuple("index"))
        assert snap_compare(fixture_app, terminal_size=SIZE, run_before=run)

    def test_help_screen_pane_actions(self, snap_compare, fixture_app):
        async def scroll_to_panes(pilot) -> None:  # type: ignore[no-untyped-def]
            await pilot.press("f1")
            await settle(pilot.app, pilot)
            screen = pilot.app.screen
            lines = str(screen.query_one(".help-bindings").render()).splitlines()
            first = next(n for n, line in enumerate(lines) if line.startswith("Session"))
            screen.query_one(".help-body").scroll_to(y=first, animate=False)

        assert snap_compare(
            fixture_app, terminal_size=SIZE, run_before=settled(after=scroll_to_panes)
        )

    def test_palette_pane_actions(self, snap_compare, warnings_app):
        # On the gauge (which has sessions to follow and pick from), its verbs are offered.
        run = settled("4", "ctrl+p", tuple("gauge"))
        app = warnings_app(now=SAMPLE_NOW)
        assert snap_compare(app, terminal_size=SIZE, run_before=run)

    def test_delete_confirmation(self, snap_compare, fixture_app):
        run = settled("d", after=open_memory("project_freeze.md"))
        assert snap_compare(fixture_app, terminal_size=SIZE, run_before=run)

    def test_rename_prompt(self, snap_compare, fixture_app):
        run = settled("r", after=open_memory("user_role.md"))
        assert snap_compare(fixture_app, terminal_size=SIZE, run_before=run)

    def test_empty_memory_folder(self, snap_compare, tmp_path: Path, app_factory):
        project = build_project(tmp_path)
        for path in sorted(project.memory_dir.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        project.memory_dir.rmdir()
        assert snap_compare(app_factory(project), terminal_size=SIZE, run_before=settled())


class TestEditor:
    def test_new_memory_with_live_findings(self, snap_compare, fixture_app):
        async def fill(pilot) -> None:  # type: ignore[no-untyped-def]
            await pilot.press("n")
            await settle(pilot.app, pilot)
            screen = pilot.app.screen
            screen.query_one("#field-type", Select).value = "feedback"
            screen.query_one("#field-name", Input).value = "Tabs not spaces"
            screen.query_one("#field-body", TextArea).load_text("Indent with tabs in Go files.\n")

        assert snap_compare(fixture_app, terminal_size=SIZE, run_before=settled(after=fill))

    def test_edit_memory(self, snap_compare, fixture_app):
        run = settled("e", after=open_memory("feedback_testing.md"))
        assert snap_compare(fixture_app, terminal_size=SIZE, run_before=run)

    def test_conflict_dialog(self, snap_compare, memory_project, app_factory):
        app = app_factory(memory_project)
        target = memory_project.memory_dir / "user_role.md"

        async def conflict(pilot) -> None:  # type: ignore[no-untyped-def]
            pilot.app.screen.post_message(OpenMemoryRequested("user_role.md"))
            await settle(pilot.app, pilot)
            await pilot.press("e")
            await settle(pilot.app, pilot)
            target.write_text(target.read_text() + "Changed elsewhere.\n")
            await pilot.press("ctrl+s")

        assert snap_compare(app, terminal_size=SIZE, run_before=settled(after=conflict))


PANE_SIZE = (130, 40)
RECALL_QUERY = "can I renumber an invoice after a rollback"


class TestEveryPane:
    """The whole app on each pane, brought forward with its digit key: the real panes, fed by
    their workers from the installed `warnings` sample (the demo's project), with a fixed clock.
    """

    @staticmethod
    def keys_for(pane: str) -> tuple[str | tuple[str, ...], ...]:
        number = str(([p for p, _t, _f in PANES].index(pane) + 1) % 10)
        keys: tuple[str | tuple[str, ...], ...] = (number,)
        if pane == "recall":
            # i puts the cursor in the query box; Enter runs it; Esc goes back to the results.
            keys += ("i", tuple(RECALL_QUERY), "enter", "escape")
        return keys

    @pytest.mark.parametrize("pane", [pane for pane, _tab, _title in PANES])
    def test_pane(self, snap_compare, warnings_app, pane: str):
        prepare = stage_proposals if pane == "review" else None
        app = warnings_app(prepare=prepare, now=SAMPLE_NOW)
        run = settled(*self.keys_for(pane))
        assert snap_compare(app, terminal_size=PANE_SIZE, run_before=run)

    @pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=["80x24", "100x30"])
    @pytest.mark.parametrize("pane", [pane for pane, _tab, _title in PANES])
    def test_pane_small_screen(self, snap_compare, warnings_app, pane: str, size):
        # The sidebar narrows, the tab strip tightens: every pane stays usable.
        prepare = stage_proposals if pane == "review" else None
        app = warnings_app(prepare=prepare, now=SAMPLE_NOW)
        run = settled(*self.keys_for(pane))
        assert snap_compare(app, terminal_size=size, run_before=run)

    @pytest.mark.parametrize("pane", ["gauge", "team"])
    def test_pane_light(self, snap_compare, warnings_app, pane: str):
        number = str(([p for p, _t, _f in PANES].index(pane) + 1) % 10)
        app = warnings_app(theme="workbench-light", now=SAMPLE_NOW)
        assert snap_compare(app, terminal_size=PANE_SIZE, run_before=settled(number))


class TestThemes:
    """The reference screen (the warnings sample's MEMORY.md report) under every theme."""

    @pytest.mark.parametrize("theme", THEME_NAMES)
    def test_reference_screen(self, snap_compare, warnings_app, theme: str):
        # A fixed clock: the sample's daily logs are named for the day their age gives them.
        app = warnings_app(theme, now=SAMPLE_NOW)
        assert snap_compare(app, terminal_size=SIZE, run_before=settled("alt+2"))


def entry(path: str, memory_type: str | None, *, age: int = 3, lints=()) -> MemoryEntry:  # type: ignore[no-untyped-def]
    now_ms = 1_800_000_000_000
    return MemoryEntry(
        path=path,
        abs_path=f"/m/{path}",
        name=path.removesuffix(".md").replace("_", " "),
        description=f"What {path} is about",
        type=memory_type,
        scope="private",
        mtime_ms=now_ms - age * 86_400_000,
        mtime="",
        age_days=age,
        size_bytes=412,
        tokens=103,
        indexed=True,
        lints=tuple(lints),
    )


class TestPanes:
    """Each pane alone in a harness, fed engine result objects."""

    def test_memory_pane_with_findings(self, snap_compare):
        found = (
            LintFinding("f.md", "why-missing", "warning", "a feedback memory should say **Why:**"),
            LintFinding("f.md", "relative-date", "warning", "relative date 'next week'", 7),
        )
        document = MemoryDocument(
            entry=entry("feedback_style.md", "feedback", lints=found),
            frontmatter={
                "name": "Review style",
                "description": "Short reviews",
                "type": "feedback",
            },
            visible_to_claude=True,
            body="# Review style\n\nKeep reviews short.\n\n- one point per comment\n- next week: revisit\n",
            text="",
            fingerprint="x",
        )

        def setup(pane) -> None:  # type: ignore[no-untyped-def]
            pane.document = document

        app = PaneHarness(lambda: MemoryPane(now_ms=lambda: 1_800_000_000_000), setup)
        assert snap_compare(app, terminal_size=(90, 26))

    def test_index_pane_over_both_limits(self, snap_compare):
        entries = tuple(
            IndexEntry(
                line=n,
                text=f"- [Note {n}](note_{n}.md) — a hook",
                title=f"Note {n}",
                target=f"note_{n}.md",
                hook="a hook",
                loaded=n <= 3,
                target_exists=n != 2,
            )
            for n in range(1, 6)
        )
        report = IndexReport(
            path="/m/MEMORY.md",
            exists=True,
            line_count=205,
            length=25_400,
            utf8_bytes=25_400,
            max_lines=200,
            max_length=25_000,
            line_truncated=True,
            length_truncated=True,
            loaded_content="",
            warning="MEMORY.md is over both limits; only part of it loads.",
            entries=entries,
            dropped_lines=2,
            dangling=("note_2.md",),
            orphans=("loose.md",),
            headroom=Headroom(lines=-5, length=-400),
            loaded_lines=3,
            long_lines=(4,),
        )

        def setup(pane) -> None:  # type: ignore[no-untyped-def]
            pane.show_report(report)

        app = PaneHarness(IndexPane, setup)
        assert snap_compare(app, terminal_size=(100, 24))

    def test_empty_state_light(self, snap_compare):
        def setup(pane) -> None:  # type: ignore[no-untyped-def]
            pane.set_empty("No team MEMORY.md", "This project has no team memory folder.")

        app = PaneHarness(IndexPane, setup, theme="workbench-light")
        assert snap_compare(app, terminal_size=(70, 14))
