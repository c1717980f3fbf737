"""The compaction pane's summary dialog: paste a summary or name a file, and what it returns."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static, TextArea

from workbench.ui.widgets.text_fields import FieldInput


@dataclass(frozen=True)
class SummaryChoice:
    """A summary to check the span against: pasted text or a file (neither: the default)."""

    text: str | None = None
    path: str | None = None

    @property
    def is_default(self) -> bool:
        """No summary of the user's: the engine's default (the session notes, if used)."""
        return not self.text and not self.path

    @property
    def label(self) -> str:
        """How the survival check names it (never an absolute path)."""
        if self.text:
            return f"the pasted summary ({len(self.text):,} characters)"
        if self.path:
            return f"the summary file {os.path.basename(self.path.rstrip('/'))}"
        return "the default"


# --- pure helpers: preview → display ------------------------------------------------------


class SummaryModal(ModalScreen[SummaryChoice | None]):
    """Paste a summary or name a file; dismisses with the choice, or None to cancel.

    Cancelling keeps what was typed (`draft`): the pane offers it again next time, so a long
    paste is never lost to one Esc. A file that is not there is said in the dialog, which stays
    open.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]
    DEFAULT_CSS = """
    SummaryModal {
        & #summary-text { height: 10; margin-bottom: 1; }
        & #summary-file { margin-bottom: 1; }
    }
    """

    def __init__(
        self,
        current: SummaryChoice | None = None,
        *,
        draft: SummaryChoice | None = None,
        resolve: Callable[[str], Path] | None = None,
    ) -> None:
        super().__init__(classes="modal")
        self.current = current
        self._start = draft if draft is not None else current
        self._resolve = resolve
        self.draft: SummaryChoice | None = None
        """What the boxes held when the dialog was cancelled."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Check a summary", classes="dialog-title")
            yield Static(
                "Give the path of a file holding a summary, or paste one (for example what "
                "Claude Code wrote at /compact; pasted text wins over a file). The survival "
                "check marks which paths, commands, numbers and identifiers of the summarised "
                "span it lost. Enter or Check runs it; Esc closes and keeps what you typed.",
                classes="dialog-detail summary-hint",
            )
            yield FieldInput(
                (self._start.path or "") if self._start else "",
                placeholder="Summary file (relative to the project, or ~/…)",
                id="summary-file",
            )
            yield TextArea(
                (self._start.text or "") if self._start else "",
                id="summary-text",
                soft_wrap=True,
                placeholder="…or paste the summary text here",
            )
            with Horizontal(classes="dialog-buttons"):
                if self.current is not None and not self.current.is_default:
                    yield Button("Back to default", id="summary-default")
                yield Button("Cancel", id="summary-cancel")
                yield Button("Check", id="summary-check", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#summary-file", Input).focus()

    def action_cancel(self) -> None:
        text = self.query_one("#summary-text", TextArea).text
        path = self.query_one("#summary-file", Input).value.strip()
        self.draft = SummaryChoice(text=text or None, path=path or None)
        self.dismiss(None)

    def _choice(self) -> SummaryChoice | None:
        text = self.query_one("#summary-text", TextArea).text
        path = self.query_one("#summary-file", Input).value.strip()
        if text.strip():
            return SummaryChoice(text=text)
        if path:
            return SummaryChoice(path=path)
        return None

    @on(Input.Submitted, "#summary-file")
    def _file_submitted(self) -> None:
        self._check()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "summary-check":
            self._check()
        elif event.button.id == "summary-default":
            self.dismiss(SummaryChoice())
        else:
            self.action_cancel()

    def _say(self, problem: str) -> None:
        hint = self.query_one(".summary-hint", Static)
        hint.update(Content(problem))
        hint.add_class("-invalid")

    def _check(self) -> None:
        choice = self._choice()
        if choice is None:
            self._say("Paste a summary or give a file path first (Esc closes).")
            return
        if choice.path and self._resolve is not None:
            path = self._resolve(choice.path)
            if not path.is_file():
                what = "a folder" if path.is_dir() else "no file"
                self._say(
                    f"{choice.path} is {what}: give the path of a summary file, or paste one."
                )
                self.query_one("#summary-file", Input).focus()
                return
        self.dismiss(choice)


# --- the pane -----------------------------------------------------------------------------
