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
from workbench.ui.panes.context_view import (
    breakdown_content,
    category_plot,
    history_plot,
    largest_content,
)

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

    def test_a_call_on_show_lists_its_items(self, snap_compare, sample_engine):
        view = view_for(sample_engine("warnings"), WARNINGS_COMPACTED)
        assert view.report is not None
        # The last call before the compaction: its items were summarised, some new with it.
        number = next(c.number for c in view.report.calls if c.segment == 1) - 1

        def feed(pane: ContextPane) -> None:
            pane.show_view(view)
            pane.call = number

        harness = PaneHarness(lambda: ContextPane(autoload=False, id="context-pane"), feed)
        assert snap_compare(harness, terminal_size=(110, 70))


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


def test_a_chosen_call_shows_what_it_sent_reconciled_with_its_usage(sample_engine):
    report = view_for(sample_engine("warnings"), WARNINGS_COMPACTED).report
    assert report is not None
    after = next(c for c in report.calls if c.segment == 1)
    text = breakdown_content(report, call=after.number).plain
    assert text.startswith(f"Call {after.number} of {len(report.calls)}")
    assert f"measured {after.recorded:,}, difference {after.difference:+,}" in text
    assert "Compaction summary" in text and "Tool results: Read" not in text
    before = breakdown_content(report, call=after.number - 1).plain
    assert "Tool results: Read" in before and "Compaction summary" not in before
    assert breakdown_content(report).plain.startswith("In context now")


def test_the_history_says_when_the_sessions_ran_and_which_reached_the_thresholds(
    sample_engine,
):
    history = sample_engine("warnings").context.session_history()
    days = sorted(s.first_timestamp[:10] for s in history.sessions if s.first_timestamp)
    warned = sum(1 for s in history.sessions if s.first_crossings.get("warning") is not None)
    text = history_plot(history, width=60).plain
    assert f"{days[0]} to {days[-1]}" in text
    assert f"reached the warning threshold: {warned}" in text


async def test_comma_and_full_stop_step_through_the_calls(sample_engine):
    engine = sample_engine("warnings")
    app = EngineHarness(engine, lambda: ContextPane(id="context-pane"))
    async with app.run_test(size=(110, 50)) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ContextPane)
        assert pane.report is not None
        last = len(pane.report.calls)
        pane.query_one(".ctx-body").focus()
        await pilot.press("comma")
        assert pane.call == last
        breakdown = str(pane.query_one(".ctx-breakdown", Static).render())
        assert breakdown.startswith(f"Call {last} of {last}")
        await pilot.press("comma", "comma", "full_stop")
        assert pane.call == last - 1
        await pilot.press("full_stop", "full_stop")
        assert pane.call is None
        assert str(pane.query_one(".ctx-breakdown", Static).render()).startswith("In context")


def test_a_chosen_call_says_what_it_added_since_the_call_before(sample_engine):
    from workbench.ui.panes.context_view import added_by_call

    report = view_for(sample_engine("warnings"), WARNINGS_COMPACTED).report
    assert report is not None
    grown = next(
        n
        for n in range(2, len(report.calls) + 1)
        if report.calls[n - 1].segment == report.calls[n - 2].segment
        and report.calls[n - 1].categories.get("tool_result:Read", 0)
        > report.calls[n - 2].categories.get("tool_result:Read", 0)
    )
    now, before = report.calls[grown - 1].categories, report.calls[grown - 2].categories
    added = added_by_call(report, grown)
    assert added["tool_result:Read"] == now["tool_result:Read"] - before.get("tool_result:Read", 0)
    assert "overhead" not in added
    assert f"+{added['tool_result:Read']:,}" in breakdown_content(report, call=grown).plain
    # After the compaction everything the call sent is new.
    first_after = next(c for c in report.calls if c.segment == 1)
    assert sum(added_by_call(report, first_after.number).values()) == first_after.estimate


def test_a_chosen_call_lists_its_items_largest_first_capped(sample_engine):
    from workbench.ui.panes.context_view import call_items_content

    report = view_for(sample_engine("warnings"), WARNINGS_COMPACTED).report
    assert report is not None
    number = max(range(1, len(report.calls) + 1), key=lambda n: report.calls[n - 1].items_held)
    items = report.call_items(number)
    assert len(items) > 4
    text = call_items_content(report, number, limit=4).plain.split("\n")
    assert text[0].startswith(f"Items call {number} sent")
    assert f"{len(items):,} items" in text[0]
    assert [line.strip() for line in text[1:9:2]] == [
        i.describe(len(report.calls)) + ("  new" if i.call == number else "") for i in items[:4]
    ]
    assert text[-1].strip() == f"… and {len(items) - 4:,} more"
    assert call_items_content(report, None).plain == ""


async def test_stepping_to_a_call_shows_its_items_and_back_hides_them(sample_engine):
    engine = sample_engine("warnings")
    app = EngineHarness(engine, lambda: ContextPane(id="context-pane"))
    async with app.run_test(size=(110, 50)) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ContextPane)
        assert pane.report is not None
        items = pane.query_one(".ctx-call-items", Static)
        assert not items.display
        pane.query_one(".ctx-body").focus()
        await pilot.press("comma", "comma")
        last = len(pane.report.calls)
        assert items.display
        biggest = pane.report.call_items(last - 1)[0]
        shown = str(items.render())
        assert shown.startswith(f"Items call {last - 1} sent")
        assert biggest.describe(last) in shown.split("\n")[1]
        await pilot.press("full_stop", "full_stop")
        assert pane.call is None and not items.display


def test_the_gauge_and_this_pane_name_the_two_measured_figures_apart(sample_engine):
    # The last call's usage is 149,209 tokens in and 21 out: the gauge counts both (as Claude
    # Code does), this pane reconciles the input. Each says which it shows, so the two
    # "measured" figures for one call are not read as a disagreement.
    from workbench.ui.panes.context_view import headline_content
    from workbench.ui.panes.gauge_view import counts_content

    engine = sample_engine("warnings")
    report = view_for(engine).report
    assert report is not None
    headline = headline_content(report).plain
    assert "last call's input measured 149,209" in headline
    counts = counts_content(engine.context.gauge_view(None).report, None).plain
    assert "149,230  API usage, last call, input + output" in counts
