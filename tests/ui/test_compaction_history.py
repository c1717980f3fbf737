"""The compaction pane's history of real compactions (recorded by the PreCompact and
PostCompact hooks), each with what its summary lost: Pilot on the `warnings` sample and an
SVG snapshot fed fixed records."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.ui.test_compaction_pane import (
    LONG,
    NOW,
    SIZE,
    PaneApp,
    fixed_preview,
    open_pane,
    section,
    warnings_app,  # noqa: F401 - fixture
    warnings_sample,  # noqa: F401 - fixture
)
from workbench.engine import Engine
from workbench.engine.context.compaction_log import (
    CompactionRecord,
    CompactionSnapshot,
    Fact,
    LossReport,
)
from workbench.ui.panes.compaction import CompactionPane

SUMMARY = (
    "<analysis>ignored</analysis><summary>Ported the rate lookup to billing-py/tax/rates.py "
    "behind tax_v2; OssRules is done.</summary>"
)


async def test_no_history_section_until_the_hooks_recorded_one(warnings_app) -> None:  # noqa: F811
    app = warnings_app()
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        assert pane.preview is not None and pane.history == ()
        assert not pane.query_one(".history-title", Static).display
        assert not pane.query_one(".history-body", Static).display


async def test_recorded_compactions_show_with_their_losses(
    warnings_app,  # noqa: F811
    warnings_sample,  # noqa: F811
) -> None:
    engine = Engine.open(warnings_sample.project_root, config_home=str(warnings_sample.config_home))
    transcript = Path(engine.context.resolve_transcript(session=LONG))
    log = engine.context.compaction_log
    log.snapshot(transcript, session_id=LONG, trigger="auto", now_ms=NOW * 1000)
    finished = log.finish(
        transcript, session_id=LONG, hook_summary=SUMMARY, trigger="auto", now_ms=NOW * 1000
    )
    assert finished.report is not None and finished.report.lost_count > 0
    app = warnings_app()
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        assert [r.id for r in pane.history] == [finished.id]
        assert pane.query_one(".history-title", Static).display
        title = section(pane, "history-title")
        assert "Real compactions of this session" in title and "1 compaction recorded" in title
        body = section(pane, "history-body")
        assert "2026-11-30" in body and "auto" in body and "messages summarised" in body
        assert f"✗ {finished.report.lost_count} of" in body
        assert "checked against the summary the hook received" in body
        assert "Paths:" in body and "billing-py/tax/rates.py" not in body.split("Paths:")[1]


def fixed_records() -> tuple[CompactionRecord, ...]:
    def snap(created: str, trigger: str, tokens: int) -> CompactionSnapshot:
        return CompactionSnapshot(
            created=created,
            session_id=LONG,
            transcript=f"{LONG}.jsonl",
            transcript_bytes=1000,
            trigger=trigger,
            has_custom_instructions=False,
            model="claude-sonnet-4-6",
            messages=76,
            pre_tokens=tokens,
            threshold=167_000,
            chosen="full",
            summarised_messages=76,
            kept_messages=0,
            kept_tokens=0,
            restored_files=(),
            facts={
                "paths": (Fact("billing-py/tax/rates.py", 3), Fact("billing-py/tax/oss.py", 2)),
                "commands": (Fact("cd billing-py && pytest tests/tax -q", 2),),
                "numbers": (Fact("2026", 4), Fact("19.5", 1)),
                "identifiers": (Fact("OssRules", 2), Fact("tax_v2", 1)),
            },
        )

    def report(created: str, lost: dict[str, tuple[str, ...]], source: str) -> LossReport:
        kinds = ("paths", "commands", "numbers", "identifiers")
        return LossReport(
            created=created,
            summary_source=source,
            summary_chars=900,
            boundary_uuid=None,
            trigger="auto",
            pre_tokens=None,
            post_tokens=None,
            kept=dict.fromkeys(kinds, 1),
            lost={k: lost.get(k, ()) for k in kinds},
        )

    first = "2026-11-30T09:12:40.000Z"
    second = "2026-11-30T11:47:05.000Z"
    return (
        CompactionRecord(
            "a",
            "",
            snap(first, "auto", 168_204),
            report(
                first,
                {"commands": ("cd billing-py && pytest tests/tax -q",), "numbers": ("19.5",)},
                "transcript",
            ),
        ),
        CompactionRecord(
            "b", "", snap(second, "manual", 121_880), report(second, {}, "hook input")
        ),
    )


def test_snapshot_compaction_history(snap_compare, warnings_sample, monkeypatch) -> None:  # noqa: F811
    engine, sessions, preview = fixed_preview(warnings_sample, monkeypatch)

    async def to_history(pilot) -> None:  # type: ignore[no-untyped-def]
        pane = pilot.app.query_one(CompactionPane)
        pane.query_one(".history-title", Static).scroll_visible(top=True, animate=False)
        await pilot.pause()

    def setup(pane: CompactionPane) -> None:
        pane.show_sessions(sessions, selected=LONG)
        pane.show_preview(preview, session_id=LONG, history=fixed_records())

    app = PaneApp(engine, lambda: CompactionPane(autoload=False, id="compaction-pane"), setup=setup)
    assert snap_compare(app, terminal_size=(92, 30), run_before=to_history)
