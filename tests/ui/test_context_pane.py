"""The Context pane: categories per call with compactions marked, the largest items now,
and the sessions over time; the pure drawing functions and SVG snapshots fed the engine's
results for the warnings sample."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from textual.widgets import Static

from tests.ui.conftest import settle
from tests.ui.harness import PaneHarness
from tests.ui.test_gauge_pane import WARNINGS_COMPACTED, EngineHarness
from workbench.ui.panes.context import ContextPane, ContextView
from workbench.ui.panes.context_view import category_plot, history_plot, largest_content

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def view_for(engine, session: str | None = None) -> ContextView:  # type: ignore[no-untyped-def]
    context = engine.context
    sessions = tuple(context.sessions())
    path = context.resolve_transcript(session=session, latest=session is None)
    if session is not None:
        sessions = tuple(s for s in sessions if s.session_id == session) + tuple(
            s for s in sessions if s.session_id != session
        )
    return ContextView(sessions, context.attribution(path, now=NOW), context.session_history())


def fed(view: ContextView, theme: str = "workbench-dark") -> PaneHarness:
    return PaneHarness(
        lambda: ContextPane(autoload=False, id="context-pane"),
        lambda pane: pane.show_view(view),  # type: ignore[attr-defined]
        theme=theme,
    )


def test_the_plot_stacks_every_call_and_marks_the_compaction(sample_engine):
    view = view_for(sample_engine("warnings"), WARNINGS_COMPACTED)
    report = view.report
    assert report is not None and report.compactions
    plot = category_plot(report, width=80, height=8).plain.split("\n")
    columns = min(len(report.calls), 80 - 6)
    assert all(len(line) == 6 + columns for line in plot[:8])
    assert "◆" in plot[9] or "◇" in plot[9]
    # The column of the biggest call reaches the top row.
    assert plot[0].strip()
    items = largest_content(report).plain
    assert "at call" in items and "compaction:" in items
    history = history_plot(view.history, width=60).plain  # type: ignore[arg-type]
    assert "sessions" in history and "auto" in history


def test_an_empty_history_and_no_calls_say_so(tmp_path):
    from workbench.engine.context.session_history import SessionHistory

    assert "No sessions" in history_plot(SessionHistory(str(tmp_path), (), 0, 0), width=40).plain


class TestContextPaneSnapshots:
    @pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
    def test_warnings_newest(self, snap_compare, sample_engine, theme: str):
        view = view_for(sample_engine("warnings"))
        assert snap_compare(fed(view, theme), terminal_size=(110, 60))

    def test_compacted_session(self, snap_compare, sample_engine):
        view = view_for(sample_engine("warnings"), WARNINGS_COMPACTED)
        assert snap_compare(fed(view), terminal_size=(110, 60))

    def test_narrow(self, snap_compare, sample_engine):
        assert snap_compare(fed(view_for(sample_engine("warnings"))), terminal_size=(72, 40))


async def test_the_pane_attributes_the_newest_session_itself(sample_engine):
    engine = sample_engine("warnings")
    app = EngineHarness(engine, lambda: ContextPane(id="context-pane"))
    async with app.run_test(size=(110, 50)) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ContextPane)
        assert pane.has_content and pane.report is not None and pane.history is not None
        newest = engine.context.sessions()[0]
        assert pane.session_id == newest.session_id
        headline = str(pane.query_one(".ctx-headline", Static).render())
        assert f"{len(pane.report.calls):,} calls" in headline
        assert "difference" in headline


def test_an_item_added_after_the_last_call_is_not_said_to_be_at_a_call_that_never_ran(
    sample_engine,
):
    report = view_for(sample_engine("warnings")).report
    assert report is not None
    pending = [i for i in report.largest if i.call > len(report.calls)]
    assert pending, "the newest warnings session ends with a Read not yet sent"
    text = largest_content(report, limit=len(report.largest)).plain
    assert f"at call {len(report.calls) + 1}:" not in text
    assert f"after call {len(report.calls)}, sent with the next" in text
