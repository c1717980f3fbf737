"""The recall simulator pane: Pilot tests of every flow on the `healthy` sample with a real
engine (offline ranking, options, engine cycling, the model path and its fallback against the
loopback fake Messages API, opening a result, the surfacing budgets), and SVG snapshots fed a
real result for a realistic query."""

from __future__ import annotations

import pytest
from textual.content import Content
from textual.widgets import Input, OptionList, Select, Static, TabbedContent

from tests.ui.conftest import TEST_SETTINGS, Toasts, settle
from tests.ui.harness import PaneHarness
from workbench.engine import Engine
from workbench.ui.messages import OpenMemoryRequested
from workbench.ui.panes.recall import PANE_ACTIONS, RecallPane
from workbench.ui.panes.recall_view import engine_reason, hanging
from workbench.ui.panes.recall_workers import RecallRequest, split_list

NOW = 1_796_000_000.0
"""A fixed clock (2026-11-30): the sample's ages, freshness notes and manifest dates hold."""
SIZE = (100, 44)
QUERY = "add a retry when Stripe returns 429 during checkout capture"
PICKS = ["project_provider_rate_limits.md", "project_stripe_migration.md"]


class PaneApp(PaneHarness):
    """One pane with the app's stylesheet, an engine, settings and a fixed clock."""

    def __init__(self, engine: Engine, make_pane, *, setup=None, theme="workbench-dark"):  # type: ignore[no-untyped-def]
        super().__init__(make_pane, setup, theme)
        self.engine = engine
        self.settings = TEST_SETTINGS
        self.opened: list[str] = []

    def now_ms(self) -> float:
        return NOW * 1000

    def on_open_memory_requested(self, message: OpenMemoryRequested) -> None:
        self.opened.append(message.path)


def text_of(widget: Static) -> str:
    content = widget.content
    return content.plain if isinstance(content, Content) else str(content)


@pytest.fixture
def healthy(install_sample):
    return install_sample("healthy", now=NOW)


@pytest.fixture
def recall_app(healthy):
    """The app on the healthy sample; the engine reads the environment when it is built, so
    a test that wants the fake API requests its fixture first."""

    def build(**kw) -> PaneApp:  # type: ignore[no-untyped-def]
        engine = Engine.open(healthy.project_root, config_home=str(healthy.config_home))
        return PaneApp(
            engine, lambda: RecallPane(now_ms=lambda: NOW * 1000, id="recall-pane"), **kw
        )

    return build


async def run_query(
    app: PaneApp, pilot, query: str = QUERY, *, tools: str = "", surfaced: str = ""
) -> RecallPane:  # type: ignore[no-untyped-def]
    pane = app.query_one(RecallPane)
    pane.query_one("#recall-tools", Input).value = tools
    pane.query_one("#recall-surfaced", Input).value = surfaced
    box = pane.query_one("#recall-query", Input)
    box.value = query
    box.focus()
    await pilot.press("enter")
    await settle(app, pilot)
    return pane


def banner(pane: RecallPane) -> str:
    return text_of(pane.query_one(".recall-banner", Static))


# --- flows ----------------------------------------------------------------------------------


async def test_manifest_is_ready_before_any_query(recall_app):
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(RecallPane)
        assert pane.result is None and not pane.has_class("-empty")
        assert "Type a prompt and press Enter" in banner(pane)
        manifest = text_of(pane.query_one(".recall-manifest", Static))
        assert manifest.startswith("20 candidates offered to the selector")
        assert "[project] project_stripe_migration.md" in manifest
        assert app.focused is pane.query_one("#recall-query", Input)


async def test_offline_recall_explains_the_pick(recall_app, tmp_path):
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = await run_query(app, pilot, tools="Bash")
        result = pane.result
        assert result is not None
        assert result.engine == "offline" and result.requested_engine == "auto"
        assert [s.path for s in result.selected] == PICKS
        assert result.recent_tools == ("Bash",)
        text = banner(pane)
        assert "Ran: the offline ranker" in text and "auto, and no API key is set" in text
        assert "2 selected of 20 candidates" in text and "recent tools: Bash" in text
        # Picks and near misses, with scores, reasons, age and the freshness note.
        options = pane.query_one("#recall-results", OptionList)
        prompts = [options.get_option_at_index(i).prompt for i in range(options.option_count)]
        plain = "\n".join(p.plain for p in prompts if isinstance(p, Content))
        assert "Selected (2) by the offline ranker" in plain
        assert "1.  P  project_provider_rate_limits.md  4.41" in plain
        assert "saved 2 days ago" in plain and "freshness note: This memory was saved" in plain
        assert "description matches 'retry', 'stripe'" in plain
        assert "Near misses (5)" in plain and "under the cut-off" in plain
        # What would be injected: one block per pick, exact text, no absolute paths.
        blocks = pane.query(".recall-reminder").results(Static)
        reminders = [text_of(b) for b in blocks]
        assert len(reminders) == 2
        assert reminders[0].startswith("<system-reminder>\nThis memory was saved 2 days ago.")
        assert (
            "$CLAUDE_CONFIG_DIR/projects/<project>/memory/project_provider_rate_limits.md"
            in (reminders[0])
        )
        assert str(tmp_path) not in "".join(reminders)
        budget = text_of(pane.query_one(".recall-budget", Static))
        assert "Would inject 2 memories (at most 5 per turn)" in budget
        assert f"{result.surfacing.turn_bytes:,} / 61,440" in text_of(
            pane.query_one(".recall-bar-value", Static)
        )
        assert "No request: the offline ranker ran locally" in text_of(
            pane.query_one(".recall-request", Static)
        )


async def test_surfaced_files_are_left_out_and_options_go_stale(recall_app):
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = await run_query(app, pilot, surfaced="project_provider_rate_limits.md, ")
        result = pane.result
        assert result.surfaced == ("project_provider_rate_limits.md",)
        assert "project_provider_rate_limits.md" not in [s.path for s in result.selected]
        assert len(result.candidates) == 19
        assert "1 file already surfaced (not offered)" in banner(pane)
        manifest = text_of(pane.query_one(".recall-manifest", Static))
        assert "left out, already surfaced this session: project_provider_rate_limits.md" in (
            manifest
        )
        # Changing an option after a run says the result is stale; F5 runs it again.
        pane.query_one("#recall-surfaced", Input).value = ""
        await pilot.pause()
        assert "options changed since this ran" in banner(pane)
        await pilot.press("f5")
        await settle(app, pilot)
        assert [s.path for s in pane.result.selected] == PICKS
        assert "options changed" not in banner(pane)


async def test_cycle_engine_then_llm_without_a_key_fails_clearly(recall_app):
    toasts = Toasts()
    app = recall_app()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        pane = app.query_one(RecallPane)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert pane.engine_choice == "llm"
        assert pane.query_one("#recall-engine", Select).value == "llm"
        assert any("Recall engine: llm" in t.message for t in toasts)
        pane = await run_query(app, pilot)
        assert pane.result is None
        text = banner(pane)
        assert "Recall did not run (llm)" in text and "ANTHROPIC_API_KEY is not set" in text
        assert pane.query_one("#recall-results", OptionList).option_count == 0

        await pilot.press("ctrl+o")
        await pilot.pause()
        assert pane.engine_choice == "offline"
        await pilot.press("f5")
        await settle(app, pilot)
        assert pane.result.engine == "offline" and pane.result.requested_engine == "offline"
        assert "chosen in the options" in banner(pane)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert pane.engine_choice == "auto"


async def test_engine_picked_with_the_select(recall_app):
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(RecallPane)
        pane.query_one("#recall-engine", Select).value = "offline"
        await pilot.pause()
        assert pane.engine_choice == "offline"


async def test_model_path_against_the_fake_api(fake_messages_api, recall_app, monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    fake_messages_api.reply_json({"selected_memories": ["project_provider_rate_limits.md"]})
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = await run_query(app, pilot, tools="Bash, Read")
        result = pane.result
        assert result.engine == "llm" and result.requested_engine == "auto"
        assert [s.path for s in result.selected] == ["project_provider_rate_limits.md"]
        (sent,) = fake_messages_api.message_requests
        assert sent.body == result.request
        assert sent.body["messages"][0]["content"].endswith("Recently used tools: Bash, Read")
        text = banner(pane)
        assert "Ran: the model (claude-sonnet-4-6)" in text
        assert "auto, and ANTHROPIC_API_KEY is set" in text
        request = text_of(pane.query_one(".recall-request", Static))
        assert request.startswith("Request sent to the model")
        assert '"max_tokens": 256' in request and "The model answered" in request
        options = pane.query_one("#recall-results", OptionList)
        first = options.get_option("selected-1").prompt
        assert "chosen by the model (pick 1 of 1)" in first.plain


async def test_api_error_falls_back_to_offline_and_says_so(
    fake_messages_api, recall_app, monkeypatch
):
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    fake_messages_api.reply_error(529, "overloaded_error", "busy")
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = await run_query(app, pilot)
        result = pane.result
        assert result.engine == "offline" and result.error is not None
        assert [s.path for s in result.selected] == PICKS
        text = banner(pane)
        assert "Ran: the offline ranker" in text
        assert "auto fell back after an API error" in text


async def test_choosing_a_result_opens_the_memory(recall_app):
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = await run_query(app, pilot)
        options = pane.query_one("#recall-results", OptionList)
        options.focus()
        options.highlighted = options.get_option_index("selected-2")
        await pilot.press("enter")
        options.highlighted = options.get_option_index("miss-1")
        await pilot.press("enter")
        await pilot.pause()
        assert app.opened == ["project_stripe_migration.md", pane.result.near_misses[0].path]


async def test_single_word_prompt_would_not_trigger_recall(recall_app):
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = await run_query(app, pilot, "stripe")
        view = pane.result.surfacing
        assert view.skipped_reason and not view.would_inject
        budget = text_of(pane.query_one(".recall-budget", Static))
        assert "Recall would not run for this prompt" in budget
        assert "single-word prompts" in budget


async def test_a_long_memory_is_cut_with_the_notice(recall_app, healthy, tmp_path):
    body = "".join(
        f"- step {n}: retry the Stripe capture with the same idempotency key\n" for n in range(120)
    )
    (healthy.memory_dir / "project_retry_runbook.md").write_text(
        "---\nname: Retry runbook\ndescription: How to retry a Stripe capture after a 429\n"
        f"type: project\n---\n\n{body}",
        encoding="utf-8",
    )
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = await run_query(app, pilot)
        memory = next(
            m for m in pane.result.surfacing.memories if m.path == "project_retry_runbook.md"
        )
        assert memory.truncated == "bytes"
        titles = [text_of(t) for t in pane.query(".recall-memory").results(Static)]
        assert any(
            t.startswith("project_retry_runbook.md") and "(bytes limit)" in t for t in titles
        )
        reminders = "".join(text_of(r) for r in pane.query(".recall-reminder").results(Static))
        assert "> Only part of this memory file is shown here" in reminders
        assert "$CLAUDE_CONFIG_DIR/projects/<project>/memory/project_retry_runbook.md" in reminders
        assert str(tmp_path) not in reminders


async def test_an_unexpected_error_is_shown_not_swallowed(recall_app):
    app = recall_app()

    async def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.engine.recall.recall = broken  # type: ignore[method-assign]
        pane = await run_query(app, pilot)
        assert not pane.running and pane.result is None
        assert "RuntimeError('boom')" in banner(pane)


async def test_empty_query_asks_for_one(recall_app):
    toasts = Toasts()
    app = recall_app()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        pane = app.query_one(RecallPane)
        pane.query_one("#recall-tools", Input).focus()
        await pilot.press("f5")
        await settle(app, pilot)
        assert pane.result is None
        banner = str(pane.query_one(".recall-banner", Static).render())
        assert banner.startswith("Nothing to recall for: the query is empty.")
        assert app.focused is pane.query_one("#recall-query", Input)
        pane.query_one(".recall-option", Input).focus()
        await pilot.press("i")  # typed into the tools box, not the focus-query action
        assert pane.query_one("#recall-tools", Input).value == "i"
        pane.query_one("#recall-results", OptionList).focus()
        await pilot.press("i")
        assert app.focused is pane.query_one("#recall-query", Input)


async def test_an_emptied_query_clears_the_previous_results(recall_app):
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = await run_query(app, pilot, "when can we deploy billing on friday")
        results = pane.query_one("#recall-results", OptionList)
        assert pane.result is not None and results.option_count > 0
        assert pane.query(".recall-reminder")
        await pilot.press("ctrl+u", "enter")
        await settle(app, pilot)
        assert pane.query_one("#recall-query", Input).value == ""
        assert banner(pane).startswith("Nothing to recall for: the query is empty.")
        # Nothing of the earlier query stays under that banner: no picks, no near misses,
        # nothing said to be injected, no request.
        assert pane.result is None and results.option_count == 0
        assert not pane.query(".recall-reminder")
        assert text_of(pane.query_one(".recall-budget", Static)).startswith(
            "Nothing injected: recall did not run."
        )
        assert text_of(pane.query_one(".recall-bar-value", Static)) == ""
        assert text_of(pane.query_one(".recall-request", Static)) == ""
        assert app.focused is pane.query_one("#recall-query", Input)


async def test_in_the_app_a_result_opens_the_memory_viewer(healthy):
    """Inside the real main screen, choosing a result shows the memory (the tree takes the
    focus, with the memory selected)."""
    from workbench.ui.app import make_app
    from workbench.ui.panes.memory import MemoryPane

    engine = Engine.open(healthy.project_root, config_home=str(healthy.config_home))
    app = make_app(engine, TEST_SETTINGS, now=NOW)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        app.screen.show_pane("recall")
        await settle(app, pilot)
        pane = await run_query(app, pilot)
        assert [s.path for s in pane.result.selected] == PICKS
        options = pane.query_one("#recall-results", OptionList)
        options.focus()
        options.highlighted = options.get_option_index("selected-1")
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen.active_pane == "memory"
        viewer = app.screen.query_one(MemoryPane)
        assert viewer.document is not None
        assert viewer.document.entry.path == "project_provider_rate_limits.md"
        assert app.focused is app.screen.memory_tree
        assert app.screen.memory_tree.selected_path == "project_provider_rate_limits.md"


def test_actions_are_declared_once():
    ids = [spec.id for spec in PANE_ACTIONS]
    assert ids == [
        "focus-query",
        "run-recall",
        "cycle-engine",
        "next-recall-tab",
        "previous-recall-tab",
        "cancel-recall",
    ]
    assert [b.id for b in RecallPane.BINDINGS if b.id] == ids  # type: ignore[union-attr]
    assert all(spec.title.startswith("Recall: ") for spec in PANE_ACTIONS)
    for spec in PANE_ACTIONS:
        assert hasattr(RecallPane, f"action_{spec.action}")


def test_helpers():
    assert split_list(" Bash, ,Read,Bash ") == ("Bash", "Read")
    wrapped = hanging("alpha beta gamma delta epsilon zeta eta theta", 28, "  · ")
    assert wrapped.plain.split("\n") == ["  · alpha beta gamma delta", "    epsilon zeta eta theta"]


async def test_reasons_follow_the_ranker_and_the_key(recall_app):
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        result = await app.engine.recall.recall(QUERY, engine="offline", now=NOW * 1000)
        assert engine_reason(result) == "chosen in the options"


# --- snapshots ------------------------------------------------------------------------------


@pytest.fixture
def fixed_result(healthy):
    """A real result for a realistic query, computed with the fixed clock."""
    engine = Engine.open(healthy.project_root, config_home=str(healthy.config_home))
    request = RecallRequest(QUERY, "auto", ("Bash",))
    result = engine.recall.run(QUERY, engine="auto", recent_tools=["Bash"], now=NOW * 1000)
    return engine, request, result


def snapshot_app(fixed_result, theme: str, tab: str | None = None) -> PaneApp:
    engine, request, result = fixed_result

    def setup(pane: RecallPane) -> None:
        pane.set_request(request)
        pane.show_result(result, request)
        if tab:
            pane.query_one("#recall-tabs", TabbedContent).active = tab

    return PaneApp(
        engine, lambda: RecallPane(autoload=False, id="recall-pane"), setup=setup, theme=theme
    )


@pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
def test_snapshot_realistic_query(snap_compare, fixed_result, theme):
    assert snap_compare(snapshot_app(fixed_result, theme), terminal_size=(92, 44))


def test_snapshot_injected_tab(snap_compare, fixed_result):
    app = snapshot_app(fixed_result, "workbench-dark", "recall-tab-injected")
    assert snap_compare(app, terminal_size=(92, 44))


def test_snapshot_manifest_tab_light(snap_compare, fixed_result):
    app = snapshot_app(fixed_result, "workbench-light", "recall-tab-manifest")
    assert snap_compare(app, terminal_size=(92, 30))


async def test_a_slow_recall_shows_its_step_and_escape_cancels_it(recall_app, monkeypatch):
    import time

    from workbench.engine.errors import OperationCancelled
    from workbench.engine.recall.service import RecallService

    real_scan, real_recall = RecallService.scan, RecallService.recall
    outcome: list[str] = []
    slow = [True]

    def slow_scan(self):  # type: ignore[no-untyped-def]
        if slow[0]:
            time.sleep(0.5)  # a big memory folder on a slow disk
        return real_scan(self)

    async def watched(self, query, **kw):  # type: ignore[no-untyped-def]
        try:
            result = await real_recall(self, query, **kw)
        except OperationCancelled:
            outcome.append("cancelled")
            raise
        outcome.append("finished")
        return result

    monkeypatch.setattr(RecallService, "scan", slow_scan)
    monkeypatch.setattr(RecallService, "recall", watched)
    app = recall_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(RecallPane)
        box = pane.query_one("#recall-query", Input)
        box.value = QUERY
        box.focus()
        await pilot.press("enter")
        for _ in range(300):  # the run reports its step on the banner
            await pilot.pause(0.05)
            if "scanning the memory folder" in banner(pane):
                break
        assert "esc cancels" in banner(pane) and pane.running
        assert pane.check_action("cancel_recall", ()) is True
        await pilot.press("escape")
        await pilot.pause()
        assert not pane.running and "Recall cancelled" in banner(pane)  # free at once
        for _ in range(300):
            await pilot.pause(0.05)
            if outcome:
                break
        assert outcome == ["cancelled"] and pane.result is None
        assert pane.check_action("cancel_recall", ()) is None
        slow[0] = False
        await pilot.press("f5")  # runs again, to the end
        await settle(app, pilot)
        assert outcome == ["cancelled", "finished"] and pane.result is not None
