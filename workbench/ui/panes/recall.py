"""The recall simulator: type a prompt, see which memories Claude Code would surface and why.

The query runs in a thread worker (`engine.recall.run`, which drives the engine's coroutine on
the thread's own event loop): both paths scan the memory folder first, which on a large folder
is disk and CPU work that must stay off the UI's event loop; the model path then awaits the API
there too.
The result always names the engine that ran and why; it lists the picks with scores,
reasons, age and freshness, the near misses with what kept them out, exactly what would be
injected (against the 5-per-turn and 60 KB session budgets), and the candidate manifest.

What it shows is built by the pure functions in `recall_view`, laid out by the widgets in
`recall_widgets`; the workers' thread work and their messages are in `recall_workers`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Input, Select, Static, TabbedContent, TabPane, TextArea
from textual.worker import Worker, WorkerState, get_current_worker

from workbench.engine.recall.models import ENGINE_CHOICES, EngineChoice
from workbench.ui.actions import ActionSpec
from workbench.ui.messages import OpenMemoryRequested
from workbench.ui.panes.base import Pane
from workbench.ui.panes.recall_view import (
    CANCELLED_BANNER,
    EMPTY_QUERY_BANNER,
    ENGINE_LABELS,
    IDLE_BANNER,
    NOTHING_INJECTED,
    NOTHING_INJECTED_YET,
    banner_content,
    engine_label,
    failed_banner,
    manifest_content,
    request_content,
    running_banner,
)
from workbench.ui.panes.recall_widgets import InjectedView, RecallOptions, ResultList
from workbench.ui.panes.recall_workers import (
    Completed,
    Failed,
    ManifestLoaded,
    Progressed,
    RecallRequest,
    read_manifest,
    run_recall,
    split_list,
)

if TYPE_CHECKING:
    from textual.content import Content

    from workbench.engine.recall.models import RecallResult

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "focus-query",
        "i",
        "focus_query",
        "Query",
        "Recall: Focus query",
        "Put the cursor in the recall query box",
        scope="pane",
        priority=True,
    ),
    ActionSpec(
        "run-recall",
        "f5",
        "run_recall",
        "Run",
        "Recall: Run recall",
        "Simulate recall for the query with the chosen engine and options",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "cycle-engine",
        "ctrl+o",
        "cycle_engine",
        "Engine",
        "Recall: Cycle engine",
        "Switch the recall engine between auto, llm (the model) and offline (local ranker)",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "next-recall-tab",
        "right_square_bracket",
        "next_tab",
        "Next tab",
        "Recall: Next tab (results, injected, manifest)",
        "Show the next of the results, what would be injected, and the manifest",
        scope="pane",
    ),
    ActionSpec(
        "previous-recall-tab",
        "left_square_bracket",
        "previous_tab",
        "Previous tab",
        "Recall: Previous tab",
        "Show the previous of the results, what would be injected, and the manifest",
        scope="pane",
    ),
    ActionSpec(
        "cancel-recall",
        "escape",
        "cancel_recall",
        "Cancel",
        "Recall: Cancel the run",
        "Stop a running recall (a slow model call or a big folder); what was on show stays",
        scope="pane",
    ),
)
"""The pane's verbs (binding id, keys, palette title and help line)."""
RECALL_TABS = ("recall-tab-results", "recall-tab-injected", "recall-tab-manifest")


class RecallPane(Pane):
    """Simulate recall for a typed prompt and explain the pick."""

    pane_id = "recall"
    title = "Recall simulator"
    # The results (or the open tab's text), not the query box: typed digits must still switch
    # panes. `i` puts the cursor in the box; Esc there comes back.
    focus_target = "#recall-results, .recall-scroll"

    BINDINGS: ClassVar[list[BindingType]] = [
        *(spec.binding() for spec in PANE_ACTIONS),
        # Esc in a box goes back to the results; from there, the screen's Esc goes to the tree.
        Binding("escape", "leave_box", "Results", show=False),
    ]
    DEFAULT_CSS = """
    RecallPane {
        & #recall-query { margin-top: 1; }
        & .recall-options { height: 1; margin: 0 0 1 0; }
        /* Too narrow for one row: the surfaced memories go on a second. The boxes end the
           rows, so they need no margin, and the picker sits 1 apart: at 80 columns the tools
           box then shows its whole example. */
        & .recall-options.-narrow {
            layout: grid;
            grid-size: 4;
            grid-columns: auto 14 auto 1fr;  /* the engine picker is 13 wide, then 1 apart */
            grid-rows: 1;
            height: 2;
            & #recall-engine { margin-right: 1; }
            & .recall-option { margin-right: 0; }
            & #recall-surfaced { column-span: 3; }
        }
        & .recall-label { width: auto; padding: 0 1 0 0; color: $text-muted; }
        & #recall-engine { width: 13; margin-right: 2; }
        & .recall-option { width: 1fr; height: 1; border: none; padding: 0 1; margin-right: 2; }
        & .recall-banner { height: auto; margin-bottom: 1; }
        & #recall-tabs { height: 1fr; }
        & #recall-results { height: 1fr; border: none; scrollbar-size-vertical: 1; }
        & .recall-scroll { height: 1fr; scrollbar-size-vertical: 1; }
        & .recall-bar-row { height: 1; margin-top: 1; }
        & .recall-bar-label { width: 8; color: $text-muted; }
        & .recall-bar-value { width: auto; min-width: 16; padding-left: 1; }
        & .recall-memory { margin-top: 1; }
        & .recall-reminder {
            padding: 0 1;
            border-left: outer $secondary;
            background: $surface;
        }
        & .recall-request { margin-top: 1; }
    }
    """

    engine_choice: reactive[EngineChoice] = reactive("auto", init=False)
    """The engine the next run uses."""
    result: reactive[RecallResult | None] = reactive(None, init=False)
    """The result on show."""
    running: reactive[bool] = reactive(False, init=False)
    """A query is being run."""

    def __init__(
        self,
        *,
        now_ms: Callable[[], float] | None = None,
        autoload: bool = True,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self._now_ms = now_ms or (lambda: time.time() * 1000)
        self._autoload = autoload
        self._loaded = False
        self._warm_lock = threading.Lock()
        self._last_request: RecallRequest | None = None
        self._step = ""
        """What the running recall is doing, for the banner."""

    # --- layout ------------------------------------------------------------------------

    def compose_body(self) -> ComposeResult:
        yield Input(
            placeholder="A prompt as the user would type it; Enter runs recall",
            id="recall-query",
        )
        yield RecallOptions(classes="recall-options")
        yield Static(classes="recall-banner")
        with TabbedContent(id="recall-tabs"):
            with TabPane("Results", id="recall-tab-results"):
                yield ResultList(id="recall-results")
            with TabPane("Injected", id="recall-tab-injected"):
                yield InjectedView(classes="recall-scroll recall-injected")
            with TabPane("Manifest", id="recall-tab-manifest"):
                with VerticalScroll(classes="recall-scroll"):
                    yield Static(classes="recall-manifest")
                    yield Static(classes="recall-request")

    def on_mount(self) -> None:
        self.border_title = self.title
        settings = self.settings
        blink = True if settings is None else settings.cursor_blink
        for box in self.query(Input):
            box.cursor_blink = blink
        self.has_content = True
        if self.result is not None:
            self._render_result(self.result)
        else:
            self._show_idle()

    def on_show(self) -> None:
        # The manifest is read the first time the pane is shown: start-up stays light.
        if self._autoload and not self._loaded:
            self._loaded = True
            self._load_manifest()

    # --- feeding the pane ----------------------------------------------------------------

    def show_result(self, result: RecallResult, request: RecallRequest | None = None) -> None:
        """Show a recall result (the worker's handler calls this; tests may too)."""
        self._last_request = request or RecallRequest(
            result.query,
            result.requested_engine,  # type: ignore[arg-type]
            result.recent_tools,
            result.surfaced,
        )
        self.result = result

    def set_request(self, request: RecallRequest) -> None:
        """Put a query and its options into the boxes (without running it)."""
        self.query_one("#recall-query", Input).value = request.query
        self.query_one("#recall-tools", Input).value = ", ".join(request.recent_tools)
        self.query_one("#recall-surfaced", Input).value = ", ".join(request.surfaced)
        self.engine_choice = request.engine

    def current_request(self) -> RecallRequest:
        """The query and options as they stand in the boxes."""
        return RecallRequest(
            self.query_one("#recall-query", Input).value.strip(),
            self.engine_choice,
            split_list(self.query_one("#recall-tools", Input).value),
            split_list(self.query_one("#recall-surfaced", Input).value),
        )

    def watch_result(self, result: RecallResult | None) -> None:
        if result is not None:
            self._render_result(result)

    def watch_engine_choice(self, choice: EngineChoice) -> None:
        picker = self.query_one("#recall-engine", Select)
        if picker.value != choice:
            picker.value = choice
        self._refresh_banner()

    def watch_running(self) -> None:
        self._refresh_banner()
        self.refresh_bindings()

    # --- rendering -----------------------------------------------------------------------

    def _show_idle(self) -> None:
        self.query_one(".recall-banner", Static).update(IDLE_BANNER)
        self.query_one(InjectedView).say(NOTHING_INJECTED_YET)
        self.query_one(".recall-request", Static).update("")

    def _refresh_banner(self) -> None:
        banner = next(iter(self.query(".recall-banner").results(Static)), None)
        if banner is None:
            return
        if self.running:
            banner.update(running_banner(self.engine_choice, self._step))
        elif self.result is not None:
            stale = self._last_request is not None and self.current_request() != self._last_request
            banner.update(banner_content(self.result, stale=stale))

    def _render_result(self, result: RecallResult) -> None:
        self._refresh_banner()
        self.query_one(ResultList).show_result(result)
        self.query_one(InjectedView).show_view(result.surfacing)
        self.query_one(".recall-manifest", Static).update(
            manifest_content(len(result.candidates), result.manifest, result.surfaced)
        )
        self.query_one(".recall-request", Static).update(request_content(result))

    def _clear_result(self, reason: Content) -> None:
        """Take the last result off the pane and say in the banner why nothing ran.

        A run that did not happen (no API key, an error, an empty query) leaves nothing of
        an older query on show: picks and near misses under a banner about another query
        read as its answer.
        """
        self.result = None
        self.query_one(ResultList).clear_options()
        self.query_one(".recall-banner", Static).update(reason)
        self.query_one(InjectedView).clear(NOTHING_INJECTED)
        self.query_one(".recall-request", Static).update("")

    @on(ResultList.Resized)
    def _results_resized(self, message: ResultList.Resized) -> None:
        message.stop()
        # The prompts are wrapped by hand (for hanging indents), so a new width re-wraps.
        results = self.query_one(ResultList)
        if self.result is not None and results.text_width != results.wrapped_at:
            results.show_result(self.result)

    # --- workers -------------------------------------------------------------------------

    def _load_manifest(self) -> None:
        engine, lock = self.engine, self._warm_lock
        self.read_in_thread(
            lambda: read_manifest(engine, lock),
            lambda loaded: loaded,
            lambda error: Failed(None, error),
            group="recall-manifest",
        )

    @on(ManifestLoaded)
    def _manifest_loaded(self, message: ManifestLoaded) -> None:
        message.stop()
        if self.result is None:
            self.query_one(".recall-manifest", Static).update(
                manifest_content(message.count, message.manifest)
            )
            if message.has_key is not None:
                engine = "the model (key set)" if message.has_key else "offline (no API key)"
                self.report_engine(f"recall: not run yet, auto would use {engine}")

    @work(
        thread=True,
        exclusive=True,
        group="recall",
        exit_on_error=False,
        description="Running recall",
    )
    def _run_recall(self, request: RecallRequest) -> None:
        worker = get_current_worker()
        run_recall(self.engine, self._warm_lock, request, self._now_ms, worker, self.post_message)

    @on(Completed)
    def _completed(self, message: Completed) -> None:
        message.stop()
        self.running = False
        self.show_result(message.result, message.request)
        self.report_engine(engine_label(message.result))

    @on(Progressed)
    def _progressed(self, message: Progressed) -> None:
        message.stop()
        if self.running:
            self._step = message.step
            self._refresh_banner()

    def action_cancel_recall(self) -> None:
        """Stop the running recall: the pane is free at once, the worker stops at its next
        step (a model call in flight is left to end, its answer dropped)."""
        if self.running:
            self.workers.cancel_group(self, "recall")
            self.running = False
            self.query_one(".recall-banner", Static).update(CANCELLED_BANNER)

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        message.stop()
        self.running = False
        if message.request is None:
            self.notify(message.error, title="Cannot scan the memory folder", severity="error")
            return
        self._last_request = message.request
        self.report_engine(f"recall: did not run ({message.request.engine})")
        self._clear_result(failed_banner(message.request.engine, message.error))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Expected failures arrive as Failed; anything else must not leave "Running…" up.
        if event.state != WorkerState.ERROR or not event.worker.group.startswith("recall"):
            return
        error = f"unexpected error: {event.worker.error!r}"
        if event.worker.group == "recall":
            self.post_message(Failed(self.current_request(), error))
        else:
            self.post_message(Failed(None, error))

    # --- events and actions --------------------------------------------------------------

    @on(Input.Submitted, "#recall-query")
    def _query_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_run_recall()

    @on(Input.Submitted, ".recall-option")
    def _option_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.current_request().query:
            self.action_run_recall()

    @on(Input.Changed, ".recall-option")
    def _option_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._refresh_banner()

    @on(Select.Changed, "#recall-engine")
    def _engine_picked(self, event: Select.Changed) -> None:
        event.stop()
        choice = next((engine for engine in ENGINE_CHOICES if engine == event.value), None)
        if choice is not None and choice != self.engine_choice:
            self.engine_choice = choice

    @on(ResultList.OptionSelected, "#recall-results")
    def _result_chosen(self, event: ResultList.OptionSelected) -> None:
        event.stop()
        path = self.query_one(ResultList).path_of(event.option.id)
        if path:
            self.post_message(OpenMemoryRequested(path))

    def action_focus_query(self) -> None:
        """Put the cursor in the query box (at once: the text typed right after `i` is
        already queued behind it)."""
        self.screen.set_focus(self.query_one("#recall-query", Input))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_query":  # a priority key: in a box, `i` is typed there
            return not isinstance(self.screen.focused, Input | TextArea)
        if action == "leave_box":
            focused = self.screen.focused
            return isinstance(focused, Input) and focused in self.query(Input)
        if action == "cancel_recall":
            return True if self.running else None  # otherwise escape goes back to the tree
        return True

    def action_leave_box(self) -> None:
        """Out of the query and option boxes, back to the results (where digits switch panes)."""
        self.focus_default()

    def action_run_recall(self) -> None:
        """Run recall for the query with the current options."""
        request = self.current_request()
        if not request.query:
            # Nothing is run for an empty query: the banner says so where the eye is, and
            # what an earlier query found (or is still finding) goes, as after a failed run.
            if self.running:
                self.workers.cancel_group(self, "recall")
                self.running = False
            self._clear_result(EMPTY_QUERY_BANNER)
            self.action_focus_query()
            return
        self._step = ""
        self.running = True
        self._run_recall(request)

    def _step_tab(self, step: int) -> None:
        tabs = self.query_one("#recall-tabs", TabbedContent)
        position = RECALL_TABS.index(tabs.active) if tabs.active in RECALL_TABS else 0
        tabs.active = RECALL_TABS[(position + step) % len(RECALL_TABS)]
        # The focus follows into the tab shown, so its keys (scrolling, Enter) work at once.
        self.call_after_refresh(self.focus_default)

    def action_next_tab(self) -> None:
        """Results → Injected → Manifest, one key from anywhere in the pane but the boxes."""
        self._step_tab(1)

    def action_previous_tab(self) -> None:
        """Manifest → Injected → Results."""
        self._step_tab(-1)

    def action_cycle_engine(self) -> None:
        """auto → llm → offline → auto."""
        position = ENGINE_CHOICES.index(self.engine_choice)
        self.engine_choice = ENGINE_CHOICES[(position + 1) % len(ENGINE_CHOICES)]
        self.notify(f"Recall engine: {ENGINE_LABELS[self.engine_choice]}", title="Recall")
