"""The compaction preview pane: Pilot tests of every flow on the `warnings` sample with a real
engine (list and preview, pick a session, paste or load a summary, back to the default,
refresh, errors, no sessions), helper tests, and SVG snapshots fed deterministic previews."""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.content import Content
from textual.widgets import Button, Input, Select, Static, TextArea

from tests.ui.conftest import TEST_SETTINGS, Toasts, build_project, settle
from tests.ui.harness import PaneHarness
from workbench.engine import Engine
from workbench.ui.panes.base import EmptyState
from workbench.ui.panes.compaction import PANE_ACTIONS, CompactionPane
from workbench.ui.panes.compaction_summary import SummaryChoice, SummaryModal
from workbench.ui.panes.compaction_view import common_root, short_path
from workbench.ui.widgets.split_bar import allocate, mark_column

NOW = 1_796_000_000.0
"""A fixed clock (2026-11-30): sample ages and micro-compaction gaps never drift."""
LONG = "1e3a91c0-5d42-4b8f-a6e1-93c2d0f8b4a6"
"""The big session: session-memory compaction, two cut notes sections, 19 clearable results."""
NO_NOTES = "a26c8b94-0e3f-4d71-95b8-c4e2f17d6a30"
"""A session without session notes: Claude Code would fall back to a full compaction."""
SIZE = (100, 50)
SUMMARY = (
    "Ported the rate lookup to billing-py/tax/rates.py and billing-py/tax/oss.py behind "
    "tax_v2. OssRules and CountryRates are done; `cd billing-py && pytest tests/tax -q` "
    "passes for 2026 rates."
)


class PaneApp(PaneHarness):
    """One pane with the app's stylesheet, an engine and a fixed clock."""

    def __init__(self, engine: Engine | None, make_pane, *, setup=None, theme="workbench-dark"):  # type: ignore[no-untyped-def]
        super().__init__(make_pane, setup, theme)
        self.engine = engine
        self.settings = TEST_SETTINGS

    def now_ms(self) -> float:
        return NOW * 1000


def text_of(widget: Static) -> str:
    content = widget.content
    return content.plain if isinstance(content, Content) else str(content)


def section(pane: CompactionPane, name: str) -> str:
    return text_of(pane.query_one(f".{name}", Static))


@pytest.fixture
def warnings_sample(install_sample):
    return install_sample("warnings", now=NOW)


@pytest.fixture
def warnings_app(warnings_sample):
    def build(**kw) -> PaneApp:  # type: ignore[no-untyped-def]
        engine = Engine.open(
            warnings_sample.project_root, config_home=str(warnings_sample.config_home)
        )
        return PaneApp(
            engine, lambda: CompactionPane(now_ms=lambda: NOW * 1000, id="compaction-pane"), **kw
        )

    return build


async def open_pane(app: PaneApp, pilot) -> CompactionPane:  # type: ignore[no-untyped-def]
    await settle(app, pilot)
    return app.query_one(CompactionPane)


# --- flows ----------------------------------------------------------------------------------


async def test_lists_sessions_and_previews_the_newest(warnings_app):
    app = warnings_app()
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        expected = [s.session_id for s in app.engine.context.sessions()]
        assert [s.session_id for s in pane.sessions] == expected
        assert expected[0] == LONG and pane.session_id == LONG
        assert pane.query_one("#compaction-session", Select).value == LONG
        preview = pane.preview
        assert preview is not None and preview.chosen == "session_memory"
        assert not pane.has_class("-empty")
        assert "153,946 tokens before compaction" in section(pane, "compaction-headline")
        assert "auto-compact at 167,000" in section(pane, "compaction-headline")
        assert "Auto-compact would not fire yet" in section(pane, "compaction-headline")
        sm = section(pane, "sm-body")
        assert "keeps the last 14 messages" in sm
        assert "cut to fit: Files and Functions, Worklog" in sm
        numbers = section(pane, "compaction-numbers")
        assert "14 msgs, 40,586" in numbers and "62 msgs, request ≈74,464" in numbers
        assert "5 files, 21,341" in numbers and "0 images" in numbers
        micro = section(pane, "micro-body")
        assert "19 of 24 tool results" in micro and "32,754 tokens" in micro
        files = section(pane, "files-body")
        assert "lib/Tax/CreditNoteExports.php" in files and "8 files left out" in files
        survival = section(pane, "survival-body")
        assert "4 lost" in survival and "checked against the session notes" in survival
        assert "✗ billing-py/tax/reverse_charge.py" in survival
        assert "paths are relative to /home/dev/projects/legacy-billing" in survival
        # The bars are drawn against the threshold.
        before = pane.query_one(".compaction-before")
        assert [p.value for p in before.parts] == [153_946 - 40_586, 40_586]


async def test_pick_session_switches_to_the_full_path(warnings_app):
    app = warnings_app()
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        picker = pane.query_one("#compaction-session", Select)
        picker.focus()
        await pilot.press("s")
        await pilot.pause()
        assert picker.expanded
        order = [s.session_id for s in pane.sessions]
        for _ in range(order.index(NO_NOTES)):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(app, pilot)
        assert pane.session_id == NO_NOTES
        assert pane.preview is not None and pane.preview.chosen == "full"
        assert "there is no session-memory file for this session" in section(pane, "sm-body")
        assert "● would be used" in section(pane, "full-title")
        assert "the model summarises all 8 messages" in section(pane, "full-body")
        assert "no summary to check yet" in section(pane, "survival-body")


async def test_pasted_summary_marks_what_it_lost(warnings_app, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    app = warnings_app()
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        pane.query_one("#compaction-session", Select).focus()
        await pilot.press("c")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, SummaryModal)
        modal.query_one("#summary-text", TextArea).load_text(SUMMARY)
        await pilot.click("#summary-check")
        await settle(app, pilot)
        assert not isinstance(app.screen, SummaryModal)
        assert pane.summary == SummaryChoice(text=SUMMARY)
        survival = pane.preview.survival
        assert survival.summary_given
        assert survival.summary_source == f"the pasted summary ({len(SUMMARY)} characters)"
        lost = survival.lost()
        assert "24%" in lost["numbers"] and "2026" not in lost["numbers"]
        assert lost["commands"] == [] and lost["identifiers"] == []
        assert "/home/dev/projects/legacy-billing/billing-py/tax/rates.py" not in lost["paths"]
        assert "/home/dev/projects/legacy-billing/lib/Tax/RateTable.php" in lost["paths"]
        text = section(pane, "survival-body")
        assert "checked against the pasted summary" in text
        assert "checked against the pasted summary" in section(pane, "compaction-status")
        # The temporary file the engine read the text from is gone.
        assert list(scratch.iterdir()) == []


async def test_summary_file_then_back_to_default(warnings_app, warnings_sample):
    notes = warnings_sample.project_root / "notes"
    notes.mkdir()
    (notes / "summary.md").write_text("Nothing concrete survived.\n", encoding="utf-8")
    app = warnings_app()
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        pane.query_one("#compaction-session", Select).focus()
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, SummaryModal)
        app.screen.query_one("#summary-file", Input).value = "notes/summary.md"
        await pilot.press("enter")
        await settle(app, pilot)
        survival = pane.preview.survival
        assert survival.summary_source == "the summary file summary.md"
        assert len(survival.lost()["paths"]) == len(survival.paths)
        assert "checked against the summary file summary.md" in section(pane, "survival-body")

        await pilot.press("c")
        await pilot.pause()
        assert app.screen.query_one("#summary-file", Input).value == "notes/summary.md"
        await pilot.click("#summary-default")
        await settle(app, pilot)
        assert pane.summary is None
        assert pane.preview.survival.summary_source == "session notes"
        assert "check a summary" in section(pane, "compaction-status")


async def test_cancelled_dialog_and_missing_file(warnings_app):
    toasts = Toasts()
    app = warnings_app()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        pane = await open_pane(app, pilot)
        before = pane.preview
        pane.query_one("#compaction-session", Select).focus()
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("escape")
        await settle(app, pilot)
        assert pane.summary is None and pane.preview is before

        await pilot.press("c")
        await pilot.pause()
        await pilot.click("#summary-check")  # nothing given: the dialog says so and stays
        await pilot.pause()
        assert isinstance(app.screen, SummaryModal)
        assert "first" in text_of(app.screen.query_one(".summary-hint", Static))
        box = app.screen.query_one("#summary-file", Input)
        box.value = "no/such/summary.md"
        box.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        # A wrong path is said in the dialog, which stays open with what was typed.
        assert isinstance(app.screen, SummaryModal)
        hint = text_of(app.screen.query_one(".summary-hint", Static))
        assert "no/such/summary.md is no file" in hint
        assert app.screen.query_one("#summary-file", Input).value == "no/such/summary.md"
        assert pane.preview is before and pane.summary is None  # the earlier preview stays
        assert not [t for t in toasts if t.severity == "error"]


async def test_escape_keeps_a_pasted_summary_for_next_time(warnings_app):
    app = warnings_app()
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        before = pane.preview
        pane.query_one("#compaction-session", Select).focus()
        await pilot.press("c")
        await pilot.pause()
        app.screen.query_one("#summary-text", TextArea).load_text(SUMMARY)
        app.screen.query_one("#summary-text", TextArea).focus()
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, SummaryModal)
        assert pane.summary is None and pane.preview is before  # cancelled: nothing ran
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, SummaryModal)
        assert app.screen.query_one("#summary-text", TextArea).text == SUMMARY


async def test_refresh_reads_the_disk_again(warnings_app, warnings_sample):
    app = warnings_app()
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        assert pane.preview.chosen == "session_memory"
        notes = Path(app.engine.context.session_memory_path(LONG))
        notes.unlink()
        pane.query_one("#compaction-session", Select).focus()
        await pilot.press("f5")
        await settle(app, pilot)
        assert pane.session_id == LONG
        assert pane.preview.chosen == "full"
        assert "there is no session-memory file" in section(pane, "sm-body")


async def test_project_without_sessions(tmp_path):
    project = build_project(tmp_path)
    app = PaneApp(project.engine(), lambda: CompactionPane(id="compaction-pane"))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        assert pane.has_class("-empty") and pane.sessions == ()
        assert "No sessions yet" in text_of(pane.query_one(EmptyState))
        await pilot.press("s")  # nothing to pick: no crash


async def test_an_empty_transcript_is_said_not_previewed(warnings_sample):
    engine = Engine.open(warnings_sample.project_root, config_home=str(warnings_sample.config_home))
    transcript = engine.context.resolve_transcript(session=LONG)
    stat = transcript.stat()
    transcript.write_bytes(b"")
    os.utime(transcript, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # still the newest session
    app = PaneApp(engine, lambda: CompactionPane(now_ms=lambda: NOW * 1000, id="compaction-pane"))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        assert pane.session_id == LONG and pane.preview is None and pane.has_class("-empty")
        said = text_of(pane.query_one(EmptyState))
        assert "nothing to compact" in said and "holds no conversation messages" in said


async def test_an_unexpected_error_is_shown(warnings_sample, monkeypatch):
    from workbench.engine.context.service import ContextService

    def broken(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise ValueError("boom")

    monkeypatch.setattr(ContextService, "compact_preview", broken)
    engine = Engine.open(warnings_sample.project_root, config_home=str(warnings_sample.config_home))
    app = PaneApp(engine, lambda: CompactionPane(id="compaction-pane"))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        assert not pane.busy and pane.has_class("-empty")
        assert "ValueError('boom')" in text_of(pane.query_one(EmptyState))


async def test_in_the_app_the_keys_work_once_focus_is_in_the_pane(warnings_sample):
    """Inside the real main screen: the jump key moves the focus into the pane, so its own
    keys work at once."""
    from workbench.ui.app import make_app

    engine = Engine.open(warnings_sample.project_root, config_home=str(warnings_sample.config_home))
    app = make_app(engine, TEST_SETTINGS, now=NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("alt+5")
        await settle(app, pilot)
        assert app.screen.active_pane == "compaction"
        pane = app.screen.query_one(CompactionPane)
        assert pane.preview is not None and pane.session_id == LONG
        assert app.focused is pane.query_one(".compaction-scroll")
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, SummaryModal)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SummaryModal)


def test_actions_are_declared_once():
    ids = [spec.id for spec in PANE_ACTIONS]
    assert ids == ["refresh-compaction", "pick-session", "load-summary", "cancel-preview"]
    assert [b.id for b in CompactionPane.BINDINGS] == ids  # type: ignore[union-attr]
    assert all(spec.title.startswith("Compaction: ") for spec in PANE_ACTIONS)
    for spec in PANE_ACTIONS:
        assert hasattr(CompactionPane, f"action_{spec.action}")


# --- helpers --------------------------------------------------------------------------------


def test_paths_shown_relative_to_the_shared_folder():
    paths = ["/home/dev/app/lib/a.py", "/home/dev/app/config/b.yaml", "relative/c.py"]
    root = common_root(paths)
    assert root == "/home/dev/app"
    assert short_path(paths[0], root) == "lib/a.py" and short_path(paths[2], root) == paths[2]
    assert common_root(["/home/dev/app/only.py"]) is None  # one file: keep it whole
    assert common_root(["/a/x.py", "/b/y.py"]) is None  # nothing useful in common


def test_restored_files_say_what_their_figure_was_sized_from(tmp_path):
    """A file on disk shows its figure alone; one known only from the transcript carries
    "≈" and where the figure came from, and a partial read claims nothing more."""
    from tests.engine.context.test_ctx_restore_sizes import WHOLE, read
    from workbench.devtools.synth import SessionBuilder
    from workbench.ui.panes.compaction_view import files_section

    (tmp_path / "proj").mkdir()
    on_disk = tmp_path / "proj" / "now.py"
    on_disk.write_text(WHOLE, encoding="utf-8")
    b = SessionBuilder(seed=4, cwd=str(tmp_path / "proj"))
    b.prompt("Fix the rounding")
    read(b, "/nowhere/billing.py", WHOLE)
    read(b, "/nowhere/billing.py", WHOLE, offset=22, limit=10)
    read(b, "/nowhere/rates.py", WHOLE, offset=100, limit=20)
    read(b, str(on_disk), WHOLE, offset=1, limit=5)
    transcript = b.write(tmp_path / "s.jsonl")
    engine = Engine.open(tmp_path / "proj", config_home=str(tmp_path / "claude"))
    preview = engine.context.compact_preview(transcript, now=datetime.fromtimestamp(NOW, tz=UTC))
    sized = {os.path.basename(f.path): f for f in preview.files.files}
    _, body = files_section(preview, None)
    lines = {line.split()[1]: line for line in body.plain.splitlines() if line.startswith("+")}
    assert lines["/nowhere/billing.py"].endswith(
        f"≈{sized['billing.py'].tokens:,}  sized from its last full read"
    )
    assert lines["/nowhere/rates.py"].endswith(
        f"≈{sized['rates.py'].tokens:,}  sized from a partial read; the whole file is larger"
    )
    assert lines[str(on_disk)].endswith(f"  {sized['now.py'].tokens:,}")


def test_bar_allocation_is_exact_and_keeps_small_parts_visible():
    assert allocate([50, 50], 100, 10) == [5, 5]
    cells = allocate([990, 10], 1000, 20)
    assert cells == [19, 1]
    assert sum(allocate([1, 2, 3], 6, 7)) == 7
    assert allocate([200], 100, 10) == [10]  # clipped to the scale
    assert allocate([5], 0, 10) == [0]
    assert mark_column(100, 100, 10) == 9 and mark_column(101, 100, 10) is None


# --- snapshots ------------------------------------------------------------------------------


def fixed_preview(sample, monkeypatch, summary: str | None = None):  # type: ignore[no-untyped-def]
    """The big session's dry run, computed so nothing depends on where it was installed: the
    summary message embeds the transcript path, so the transcript is named relatively."""
    engine = Engine.open(sample.project_root, config_home=str(sample.config_home))
    sessions = engine.context.sessions()
    monkeypatch.chdir(sample.transcripts_dir)
    summary_file = None
    if summary is not None:
        Path("summary-to-check.md").write_text(summary, encoding="utf-8")
        summary_file = "summary-to-check.md"
    preview = engine.context.compact_preview(
        f"{LONG}.jsonl",
        summary_file=summary_file,
        now=datetime.fromtimestamp(NOW, tz=UTC),
    )
    assert not os.path.isabs(preview.transcript or "")
    return engine, sessions, preview


@pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
def test_snapshot_warnings_session(snap_compare, warnings_sample, monkeypatch, theme):
    engine, sessions, preview = fixed_preview(warnings_sample, monkeypatch)

    def setup(pane: CompactionPane) -> None:
        pane.show_sessions(sessions, selected=LONG)
        pane.show_preview(preview, session_id=LONG)

    app = PaneApp(
        engine,
        lambda: CompactionPane(autoload=False, id="compaction-pane"),
        setup=setup,
        theme=theme,
    )
    assert snap_compare(app, terminal_size=(92, 62))


def test_snapshot_summary_checked(snap_compare, warnings_sample, monkeypatch):
    from dataclasses import replace

    engine, sessions, preview = fixed_preview(warnings_sample, monkeypatch, SUMMARY)
    choice = SummaryChoice(text=SUMMARY)
    preview = replace(preview, survival=replace(preview.survival, summary_source=choice.label))

    async def to_survival(pilot) -> None:  # type: ignore[no-untyped-def]
        pane = pilot.app.query_one(CompactionPane)
        pane.query_one(".survival-title", Static).scroll_visible(top=True, animate=False)
        await pilot.pause()

    def setup(pane: CompactionPane) -> None:
        pane.show_sessions(sessions, selected=LONG)
        pane.summary = choice
        pane.show_preview(preview, session_id=LONG)

    app = PaneApp(engine, lambda: CompactionPane(autoload=False, id="compaction-pane"), setup=setup)
    assert snap_compare(app, terminal_size=(92, 36), run_before=to_survival)


def test_snapshot_summary_dialog(snap_compare, warnings_sample, monkeypatch):
    engine, sessions, preview = fixed_preview(warnings_sample, monkeypatch)

    async def open_dialog(pilot) -> None:  # type: ignore[no-untyped-def]
        pane = pilot.app.query_one(CompactionPane)
        pilot.app.push_screen(SummaryModal(SummaryChoice(path="notes/summary.md")))
        await pilot.pause()
        assert pane.preview is preview
        pilot.app.screen.query_one("#summary-text", TextArea).load_text(SUMMARY)
        pilot.app.screen.query_one("#summary-check", Button).focus()
        await pilot.pause()

    def setup(pane: CompactionPane) -> None:
        pane.show_sessions(sessions, selected=LONG)
        pane.show_preview(preview, session_id=LONG)

    app = PaneApp(
        engine,
        lambda: CompactionPane(autoload=False, id="compaction-pane"),
        setup=setup,
        theme="workbench-light",
    )
    assert snap_compare(app, terminal_size=(92, 36), run_before=open_dialog)


async def test_the_gap_since_the_last_reply_reads_naturally(warnings_app):
    app = warnings_app()
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_pane(app, pilot)
        gap = pane.preview.microcompact.gap_minutes
        assert gap is not None and 2 * 60 < gap < 2 * 1440  # hours, not "980 minutes"
        micro = section(pane, "micro-body")
        assert f"last reply {int(gap // 60)} hours before now" in micro
        assert "minutes" not in micro
