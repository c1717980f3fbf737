"""The Instructions pane: the warnings sample's CLAUDE.md tree in load order, its rules and
lint, fed the engine's report (snapshots) and read by its own worker in a real app."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from textual.widgets import OptionList, Static

from tests.ui.conftest import settle
from tests.ui.harness import PaneHarness
from tests.ui.test_gauge_pane import EngineHarness
from workbench.ui.panes.instructions import InstructionsPane
from workbench.ui.panes.instructions_view import display_path, summary_content

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def fed(report, theme: str = "workbench-dark") -> PaneHarness:  # type: ignore[no-untyped-def]
    return PaneHarness(
        lambda: InstructionsPane(autoload=False, id="instructions-pane"),
        lambda pane: pane.show_report(report),  # type: ignore[attr-defined]
        theme=theme,
    )


@pytest.fixture
def warnings_report(sample_engine):  # type: ignore[no-untyped-def]
    return sample_engine("warnings").instructions.report()


def test_the_sample_tree_loads_in_order_with_its_lint(warnings_report):
    shown = [display_path(f.path, warnings_report) for f in warnings_report.files]
    assert shown == [
        "CLAUDE.md",
        "docs/conventions.md",
        "docs/style/naming.md",
        "$CLAUDE_CONFIG_DIR/projects/<project>/memory/MEMORY.md",
    ]
    codes = {f.code for f in warnings_report.findings}
    assert {"import-missing", "glob-matches-nothing"} <= codes
    matched = {
        display_path(r.path, warnings_report): r.matches for r in warnings_report.conditional
    }
    assert matched == {
        ".claude/rules/python.md": 1,
        ".claude/rules/migrations.md": 0,
    } or matched == {
        ".claude/rules/migrations.md": 0,
        ".claude/rules/python.md": 1,
    }


class TestInstructionsPaneSnapshots:
    @pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
    def test_warnings_sample(self, snap_compare, warnings_report, theme: str):
        assert snap_compare(fed(warnings_report, theme), terminal_size=(110, 40))

    def test_narrow(self, snap_compare, warnings_report):
        assert snap_compare(fed(warnings_report), terminal_size=(80, 30))


async def test_the_pane_reads_the_files_itself_and_follows_the_highlight(sample_engine):
    engine = sample_engine("warnings")
    app = EngineHarness(engine, lambda: InstructionsPane(id="instructions-pane"))
    async with app.run_test(size=(110, 40)) as pilot:
        await settle(app, pilot)
        pane = app.query_one(InstructionsPane)
        assert pane.has_content and pane.report is not None
        options = pane.query_one(".instr-files", OptionList)
        assert options.option_count == len(pane.report.files)
        options.focus()
        options.highlighted = 1
        await pilot.pause()
        preview = str(pane.query_one(".instr-preview", Static).render())
        assert preview.startswith("docs/conventions.md") and "imported by CLAUDE.md" in preview


def test_one_loaded_file_is_counted_in_the_singular(warnings_report):
    one = replace(warnings_report, files=warnings_report.files[:1])
    text = summary_content(one).plain
    assert text.startswith("1 file ·"), text
