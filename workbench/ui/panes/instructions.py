"""The Instructions pane: the CLAUDE.md files, rules and imports Claude Code loads, in order,
with the rules that wait for a matching file and the lint (rendering: `instructions_view`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.ui.actions import ActionSpec
from workbench.ui.formatting import plural
from workbench.ui.panes.base import Pane
from workbench.ui.panes.instructions_view import (
    conditional_content,
    file_prompt,
    findings_content,
    nested_content,
    preview_content,
    summary_content,
)

if TYPE_CHECKING:
    from workbench.engine.instructions.models import InstructionsReport

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "refresh-instructions",
        "f5",
        "refresh_instructions",
        "Refresh",
        "Instructions: Refresh",
        "Read the CLAUDE.md files, rules and imports again",
        show=True,
        scope="pane",
    ),
)


class InstructionsPane(Pane):
    """Every instruction file in load order, imports as a tree, rules that wait, the lint."""

    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in PANE_ACTIONS]
    DEFAULT_CSS = """
    InstructionsPane {
        .instr-body { height: 1fr; scrollbar-size-vertical: 1; }
        .instr-summary, .instr-conditional, .instr-nested, .instr-findings { margin-top: 1; }
        .instr-files { height: auto; max-height: 16; margin-top: 1; }
        .instr-preview { margin-top: 1; padding: 0 1; border-left: tall $primary; }
    }
    """

    pane_id = "instructions"
    title = "Instruction files"
    focus_target = ".instr-files"
    empty_title = "Reading the instruction files…"
    empty_message = "CLAUDE.md files, rules and imports appear once they have been read."

    report: reactive[InstructionsReport | None] = reactive(None, init=False)
    """The report on show."""

    class Loaded(Message):
        """The instruction files were read."""

        def __init__(self, report: InstructionsReport) -> None:
            super().__init__()
            self.report = report

    class Failed(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(self, *, autoload: bool = True, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._autoload = autoload
        self._loaded = False

    def compose_body(self) -> ComposeResult:
        # The file list takes the focus (its highlight drives the preview); the body scrolls
        # with the mouse, and follows the list's cursor.
        with VerticalScroll(classes="instr-body", can_focus=False):
            yield Static(classes="instr-summary")
            yield OptionList(classes="instr-files")
            yield Static(classes="instr-preview")
            yield Static(classes="instr-conditional")
            yield Static(classes="instr-nested")
            yield Static(classes="instr-findings")

    def on_show(self) -> None:
        if self._autoload and not self._loaded:
            self._loaded = True
            self._load()

    def _load(self) -> None:
        # The area is reached inside the read: opening it may import and build it.
        self.read_in_thread(
            lambda: self.engine.instructions.report(),
            self.Loaded,
            self.Failed,
            group="instructions",
        )

    @on(Loaded)
    def _loaded_report(self, message: Loaded) -> None:
        message.stop()
        self.show_report(message.report)

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        message.stop()
        self.set_empty("Cannot read the instruction files", message.error)

    def show_report(self, report: InstructionsReport) -> None:
        """Show a report (snapshots call this directly; no worker runs)."""
        self.report = report

    def watch_report(self, report: InstructionsReport | None) -> None:
        if report is None:
            return
        self.query_one(".instr-summary", Static).update(summary_content(report))
        options = self.query_one(".instr-files", OptionList)
        options.clear_options()
        width = len(str(len(report.files)))
        options.add_options(
            Option(file_prompt(n, item, report, width), id=f"file-{n}")
            for n, item in enumerate(report.files, 1)
        )
        preview = self.query_one(".instr-preview", Static)
        preview.update(preview_content(report.files[0] if report.files else None, report))
        preview.display = bool(report.files)
        for selector, content in (
            (".instr-conditional", conditional_content(report)),
            (".instr-nested", nested_content(report)),
            (".instr-findings", findings_content(report)),
        ):
            widget = self.query_one(selector, Static)
            widget.update(content)
            widget.display = bool(content.plain)
        self.has_content = True
        self.report_engine(
            f"instructions: {plural(len(report.files), 'file')}, {report.total_tokens:,} tokens"
        )

    @on(OptionList.OptionHighlighted, ".instr-files")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if self.report is None or event.option.id is None:
            return
        number = int(event.option.id.removeprefix("file-"))
        item = self.report.files[number - 1] if number <= len(self.report.files) else None
        self.query_one(".instr-preview", Static).update(preview_content(item, self.report))

    def action_refresh_instructions(self) -> None:
        """Read the instruction files again."""
        self._loaded = True
        self._load()
