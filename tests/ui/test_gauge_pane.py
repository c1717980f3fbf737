"""The token gauge pane: Pilot flows on a real engine over the sample projects (reading, the
session picker, refresh, live follow and its switches, env overrides), the drawing helpers,
and SVG snapshots fed the engine's result objects."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Select, Static

from tests.ui.conftest import TEST_SETTINGS, settle, wait_until
from tests.ui.harness import EngineHarness, PaneHarness
from workbench.engine import Engine
from workbench.engine.context.thresholds import compute_thresholds, token_warning_state
from workbench.engine.context.views import GaugeView
from workbench.ui.panes.gauge import PANE_ACTIONS, GaugePane
from workbench.ui.widgets.context_plot import (
    GUTTER,
    VERTICAL_EIGHTHS,
    ContextPlot,
    PlotSeries,
    _fit,
    _items,
    _line_rows,
    plot_lines,
    plot_top,
    threshold_lines,
)
from workbench.ui.widgets.threshold_ladder import ThresholdLadder, ladder_lines

SIZE = (110, 48)
NOW_MS = 1_800_000_000_000
WARNINGS_NEWEST = "1e3a91c0-5d42-4b8f-a6e1-93c2d0f8b4a6"
WARNINGS_COMPACTED = "5f7d3e21-8c64-4a19-b2d5-61e0a9c37f84"
HEALTHY_NEWEST = "2f9c1e4a-3b9d-4f0e-9a61-2d5c8e0b7f13"


def plain(widget: Static) -> str:
    return str(widget.render())


def pane_of(app: App[None]) -> GaugePane:
    return app.query_one(GaugePane)


def append_call(transcript: Path, extra_tokens: int, n: int = 1) -> None:
    """Append one more API response whose prompt is `extra_tokens` bigger than the last."""
    lines = transcript.read_text(encoding="utf-8").splitlines()
    last = next(
        record
        for record in map(json.loads, reversed(lines))
        if record.get("type") == "assistant" and "usage" in record.get("message", {})
    )
    record = json.loads(json.dumps(last))
    record["parentUuid"] = last["uuid"]
    record["uuid"] = f"00000000-0000-4000-8000-{n:012d}"
    record["message"]["id"] = f"msg_appended_{n}"
    record["message"]["content"] = [{"type": "text", "text": f"Appended reply {n}."}]
    record["message"]["usage"]["cache_read_input_tokens"] += extra_tokens
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def follow_workers(app: App[None]) -> list:  # type: ignore[type-arg]
    return [w for w in app.workers if w.group == "watch" and not w.is_finished]


# --- flows on the real engine ---------------------------------------------------------------


async def test_reads_the_newest_session_near_auto_compact(sample_engine):
    engine = sample_engine("warnings")
    expected = engine.context.gauge(latest=True)
    app = EngineHarness(engine, lambda: GaugePane(follow=False, id="gauge-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        assert pane.has_content
        assert pane.session_id == WARNINGS_NEWEST
        assert [s.session_id for s in pane.sessions][0] == WARNINGS_NEWEST
        assert pane.query_one(Select).value == WARNINGS_NEWEST
        report = pane.report
        assert report is not None
        assert report.used == expected.used == 153_946
        assert report.state.percent_left == 8
        assert report.state.label == "8% until auto-compact"
        reading = plain(pane.query_one(".gauge-reading", Static))
        assert "153,946 tokens used" in reading and "8% left" in reading
        assert "“8% until auto-compact”" in reading
        assert pane.query_one(ThresholdLadder).report is report
        ladder = str(pane.query_one(ThresholdLadder).render())
        assert "auto-compact 167,000 · 13,054 to go" in ladder
        assert "warning / error 147,000 · reached" in ladder
        # The replay and the token counts arrive from the analysis worker.
        replay = engine.context.replay(report.transcript or "")
        assert pane.replay is not None and len(pane.replay.turns) == len(replay.turns) == 28
        plot = pane.query_one(ContextPlot)
        assert plot.series is not None and len(plot.series.values) == 28
        assert plot.series.now == report.used
        assert pane.measurements is not None
        assert pane.measurements.tiktoken_cl100k is not None
        counts = plain(pane.query_one(".gauge-counts", Static))
        assert f"{pane.measurements.tiktoken_cl100k:,}" in counts
        assert f"{report.last_usage.total:,}" in counts  # type: ignore[union-attr]
        model = plain(pane.query_one(".gauge-model", Static))
        assert "claude-sonnet-4-6" in model and "effective 180,000" in model
        assert "none: Claude Code's defaults apply" in plain(
            pane.query_one(".gauge-overrides", Static)
        )
        assert not pane.following and not follow_workers(app)


async def test_the_picker_switches_sessions(sample_engine):
    engine = sample_engine("warnings")
    app = EngineHarness(engine, lambda: GaugePane(follow=False, id="gauge-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        await pilot.press("s")
        await pilot.pause()
        picker = pane.query_one(Select)
        assert picker.expanded and picker.has_focus_within
        await pilot.press("down", "enter")
        await settle(app, pilot)
        assert pane.session_id == WARNINGS_COMPACTED
        assert pane.report is not None and pane.report.session_id == WARNINGS_COMPACTED
        assert len(pane.report.compactions) == 1
        assert pane.replay is not None and len(pane.replay.compactions) == 1
        compactions = pane.query_one(".gauge-compactions", Static)
        assert compactions.display and "auto compaction at line" in plain(compactions)
        plot = pane.query_one(ContextPlot)
        assert plot.series is not None and plot.series.compactions == ("auto",)


async def test_refresh_reads_what_was_appended(sample_engine):
    engine = sample_engine("healthy")
    app = EngineHarness(engine, lambda: GaugePane(follow=False, id="gauge-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        before = pane.report
        assert before is not None and before.used == 41_822
        append_call(Path(before.transcript or ""), 30_000)
        await pilot.press("f5")
        await settle(app, pilot)
        expected = engine.context.gauge(session=HEALTHY_NEWEST)
        assert pane.report is not None and pane.report.used == expected.used
        assert expected.used > before.used + 29_000
        assert pane.replay is not None and len(pane.replay.turns) == 17


async def test_live_follow_updates_and_the_toggle_stops_it(sample_engine):
    engine = sample_engine("healthy")
    app = EngineHarness(engine, lambda: GaugePane(follow=True, id="gauge-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        assert pane.following and len(follow_workers(app)) == 1
        assert "following" in plain(pane.query_one(".gauge-follow", Static))
        assert await wait_until(pilot, lambda: pane.report is not None)
        transcript = Path(pane.report.transcript or "")  # type: ignore[union-attr]
        await pilot.pause(0.3)  # let the watcher settle in before writing
        append_call(transcript, 20_000, n=1)
        expected = engine.context.gauge(session=HEALTHY_NEWEST).used
        assert await wait_until(pilot, lambda: pane.report.used == expected)  # type: ignore[union-attr]
        assert pane.updates >= 1
        # The plot's last column follows the live reading straight away.
        assert pane.query_one(ContextPlot).series.now == expected  # type: ignore[union-attr]

        await pilot.press("f")
        await pilot.pause()
        assert not pane.following
        assert await wait_until(pilot, lambda: not follow_workers(app))
        assert "not following" in plain(pane.query_one(".gauge-follow", Static))
        append_call(transcript, 20_000, n=2)
        await pilot.pause(1.0)
        assert pane.report.used == expected  # type: ignore[union-attr]

        await pilot.press("f")
        assert await wait_until(pilot, lambda: pane.report.used > expected)  # type: ignore[union-attr]
        assert pane.report.used == engine.context.gauge(session=HEALTHY_NEWEST).used  # type: ignore[union-attr]


@pytest.mark.parametrize("watch_files", [False, True])
async def test_the_watch_files_setting_decides_follow(sample_engine, watch_files: bool):
    engine = sample_engine("healthy")
    settings = TEST_SETTINGS.replace(watch_files=watch_files)
    app = EngineHarness(
        engine, lambda: GaugePane(id="gauge-pane"), settings=settings, now_ms=NOW_MS
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        assert await wait_until(pilot, lambda: pane.report is not None)
        assert pane.following is watch_files
        assert bool(follow_workers(app)) is watch_files


async def test_env_overrides_are_listed(install_sample, monkeypatch):
    sample = install_sample("warnings")
    monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "50")
    monkeypatch.setenv("CLAUDE_CODE_MAX_OUTPUT_TOKENS", "not-a-number")
    monkeypatch.setenv("DISABLE_AUTO_COMPACT", "1")
    engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
    app = EngineHarness(engine, lambda: GaugePane(follow=False, id="gauge-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        report = pane.report
        assert report is not None
        t = report.thresholds
        assert not t.auto_compact_enabled and t.auto_compact_disabled_by == "DISABLE_AUTO_COMPACT"
        assert t.autocompact == 90_000
        overrides = plain(pane.query_one(".gauge-overrides", Static))
        assert "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50" in overrides
        assert "auto-compact at 90,000" in overrides
        assert "CLAUDE_CODE_MAX_OUTPUT_TOKENS=not-a-number" in overrides
        assert "invalid, ignored" in overrides
        assert "DISABLE_AUTO_COMPACT=1" in overrides and "auto-compact off" in overrides
        # Without auto-compact Claude Code counts down to the effective window instead.
        reading = plain(pane.query_one(".gauge-reading", Static))
        assert report.state.percent_left == 14  # (180,000 - 153,946) / 180,000
        assert "14% left" in reading and "counted down to the effective window" in reading


async def test_a_project_without_sessions_says_so(install_sample):
    sample = install_sample("healthy")
    for transcript in sample.transcripts_dir.glob("*.jsonl"):
        transcript.unlink()
    engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
    app = EngineHarness(engine, lambda: GaugePane(follow=True, id="gauge-pane"), now_ms=NOW_MS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = pane_of(app)
        assert not pane.has_content and pane.empty_title == "No sessions yet"
        assert not follow_workers(app)


def test_actions_are_declared_once_with_ids_and_titles():
    ids = [spec.id for spec in PANE_ACTIONS]
    assert ids == ["refresh-gauge", "toggle-follow", "pick-gauge-session", "cancel-replay"]
    for spec in PANE_ACTIONS:
        assert spec.title.startswith("Gauge: ")
        assert hasattr(GaugePane, f"action_{spec.action}")
    assert {b.id for b in GaugePane.BINDINGS} == set(ids)  # type: ignore[union-attr]


# --- the drawing helpers --------------------------------------------------------------------


def test_ladder_labels_every_rung_without_overprinting(sample_engine):
    report = sample_engine("warnings").context.gauge(latest=True)
    for width in (40, 66, 100, 160):
        lines = [line.plain for line in ladder_lines(report, width)]
        assert all(len(line) <= width for line in lines)
        text = "\n".join(lines)
        names = ("warning", "auto", "block", "window")
        assert all(name in text for name in names), text
        assert "▼" in lines[0]


def test_ladder_puts_labels_right_when_a_rung_is_near_the_start(sample_engine):
    report = sample_engine("warnings").context.gauge(latest=True)
    from workbench.engine.records import replace

    low = compute_thresholds("claude-sonnet-4-6", env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "5"})
    report = replace(report, thresholds=low, used=1_000, state=token_warning_state(1_000, low))
    lines = [line.plain for line in ladder_lines(report, 80)]
    assert any("└ auto-compact 9,000" in line for line in lines)


def test_plot_buckets_many_calls_and_keeps_compactions():
    values = tuple(range(1000, 401_000, 1000))  # 400 calls
    segments = tuple(0 if i < 200 else 1 for i in range(400))
    ladder = compute_thresholds("claude-sonnet-4-6", env={})
    series = PlotSeries(
        values=values,
        segments=segments,
        compactions=("auto",),
        now=1000,
        lines=threshold_lines(ladder),
        top=max(values),
    )
    columns, width = _fit(_items(series), 60)
    assert len(columns) <= 60 and width == 1
    assert [c.kind for c in columns].count("boundary") == 1
    assert columns[-1].kind == "now"
    assert max(c.value for c in columns if c.kind == "bar") == 400_000
    lines = plot_lines(series, 66, 12)
    assert len(lines) == 12 and all(line.cell_length <= 66 for line in lines)


def test_plot_spreads_lines_that_share_a_row():
    ladder = compute_thresholds("claude-sonnet-4-6", env={})
    rows = _line_rows(threshold_lines(ladder), ladder.effective_window, 6)
    assert [line.name for _row, line in sorted(rows.items())] == [
        "warning",
        "auto-compact",
        "blocking",
    ]


def test_plot_bars_stay_under_the_lines_they_have_not_reached():
    # On a short plot the three rungs share a row and are spread over neighbouring rows; a
    # bar below auto-compact must not climb into that line's row (it once drew 153,946
    # tokens through the 167k line on a 40-row terminal).
    ladder = compute_thresholds("claude-sonnet-4-6", env={})
    lines = threshold_lines(ladder)
    top = plot_top(ladder, [153_946])
    series = PlotSeries(values=(153_946,), segments=(0,), lines=lines, top=top)
    plot_rows = 7
    drawn = [line.plain for line in plot_lines(series, 40, plot_rows + 2)[:plot_rows]]
    rows = _line_rows(lines, top, plot_rows)
    row_of = {line.name: row for row, line in rows.items()}

    def has_bar(row: int) -> bool:
        text = drawn[plot_rows - 1 - row][GUTTER:]
        return any(block in text for block in VERTICAL_EIGHTHS[1:])

    assert has_bar(row_of["warning"]), drawn  # above warning: into its row
    assert not has_bar(row_of["auto-compact"]), drawn
    assert not has_bar(row_of["blocking"]), drawn
    # And a bar past auto-compact reaches its row, but not blocking's.
    over = replace(series, values=(170_000,))
    drawn = [line.plain for line in plot_lines(over, 40, plot_rows + 2)[:plot_rows]]
    assert has_bar(row_of["auto-compact"]), drawn
    assert not has_bar(row_of["blocking"]), drawn


# --- snapshots ------------------------------------------------------------------------------


@pytest.fixture
def view_for(install_sample, monkeypatch):
    """The engine's results for one session of a sample, as the pane's workers produce them."""

    def read(sample_name: str, session: str | None = None, **env: str) -> GaugeView:
        sample = install_sample(sample_name)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
        return engine.context.gauge_view(session)

    return read


def fed(view: GaugeView, theme: str = "workbench-dark") -> PaneHarness:
    return PaneHarness(
        lambda: GaugePane(autoload=False, follow=False, id="gauge-pane"),
        lambda pane: pane.show_view(view),  # type: ignore[attr-defined]
        theme=theme,
    )


class TestGaugePaneSnapshots:
    @pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
    def test_warnings_near_auto_compact(self, snap_compare, view_for, theme: str):
        assert snap_compare(fed(view_for("warnings"), theme), terminal_size=(100, 46))

    @pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
    def test_healthy(self, snap_compare, view_for, theme: str):
        assert snap_compare(fed(view_for("healthy"), theme), terminal_size=(100, 46))

    def test_compaction_marked_on_the_plot(self, snap_compare, view_for):
        view = view_for("warnings", WARNINGS_COMPACTED)
        assert snap_compare(fed(view), terminal_size=(100, 48))

    def test_env_overrides(self, snap_compare, view_for):
        view = view_for(
            "warnings",
            CLAUDE_AUTOCOMPACT_PCT_OVERRIDE="80",
            CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE="170000",
            CLAUDE_CODE_DISABLE_1M_CONTEXT="1",
        )
        assert snap_compare(fed(view), terminal_size=(100, 48))

    def test_narrow(self, snap_compare, view_for):
        assert snap_compare(fed(view_for("warnings")), terminal_size=(68, 30))
