"""The Recall pane's parts: the options row, the list of picks and near misses, and the
Injected tab.

The result views fill themselves from the engine's result through the pure functions in
`recall_view`; the pane (`recall.py`) decides when.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, OptionList, Select, Static

from workbench.engine.recall.models import ENGINE_CHOICES
from workbench.ui.host import app_settings
from workbench.ui.panes.recall_view import (
    budget_bar,
    budget_content,
    budget_value,
    memory_title,
    reminder_content,
    result_options,
)
from workbench.ui.widgets.split_bar import SplitBar

if TYPE_CHECKING:
    from workbench.engine.recall.models import RecallResult
    from workbench.engine.recall.surfacing import SurfacingView


NARROW_OPTIONS = 75
"""Below this width the options take two rows: on one, the two boxes would be too narrow
for their examples, and their labels squeezed out. The labels always show: without them an
example in a box reads as a setting."""


class RecallOptions(Horizontal):
    """The options beside the query: the engine, the tools used recently and the memories
    already surfaced (the last two comma-separated). The boxes' placeholders say "e.g.", so
    an empty box never looks as if it held tools or files."""

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_OPTIONS, "-narrow")

    def compose(self) -> ComposeResult:
        yield Static("engine", classes="recall-label")
        yield Select[str](
            [(name, name) for name in ENGINE_CHOICES],
            value="auto",
            allow_blank=False,
            compact=True,
            id="recall-engine",
            tooltip="auto asks the model when ANTHROPIC_API_KEY is set, else ranks offline",
        )
        yield Static("tools", classes="recall-label -option-label")
        yield Input(
            placeholder="e.g. Bash, Read",
            id="recall-tools",
            classes="recall-option",
            compact=True,
            tooltip="Tools used recently in the session, comma-separated",
        )
        yield Static("surfaced", classes="recall-label -option-label")
        yield Input(
            placeholder="e.g. a.md, b.md",
            id="recall-surfaced",
            classes="recall-option",
            compact=True,
            tooltip="Memories already surfaced this session, comma-separated",
        )


class ResultList(OptionList):
    """The picks and near misses, wrapped by hand to the list's width (for hanging indents);
    says when its size changes, so the pane can wrap them again."""

    class Resized(Message):
        """The list has a new size."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.wrapped_at = 0
        """The text width the options were last wrapped to."""
        self._option_paths: dict[str, str] = {}

    def on_resize(self) -> None:
        self.post_message(self.Resized())

    @property
    def text_width(self) -> int:
        """Text width inside the list (its padding and scrollbar taken off)."""
        width = self.size.width
        return width - 3 if width > 20 else 80

    def show_result(self, result: RecallResult) -> None:
        """List a result's picks and near misses, the highlight kept where it was."""
        width = self.wrapped_at = self.text_width
        highlighted = self.highlighted
        self.clear_options()
        prompts, self._option_paths = result_options(result, width)
        self.add_options(prompts)
        if highlighted is not None and highlighted < len(prompts):
            self.highlighted = highlighted

    def path_of(self, option_id: str | None) -> str | None:
        """The memory behind an option (None for a heading)."""
        return self._option_paths.get(option_id or "")


class InjectedView(VerticalScroll):
    """What this turn would inject: the verdict and limits, the session budget as a bar, and
    each memory as the agent would see it."""

    def compose(self) -> ComposeResult:
        yield Static(classes="recall-budget")
        with Horizontal(classes="recall-bar-row"):
            yield Static("session", classes="recall-bar-label")
            yield SplitBar(classes="recall-budget-bar")
            yield Static(classes="recall-bar-value")

    def say(self, note: Content) -> None:
        """Put a note where the verdict goes (nothing has run, or the run failed)."""
        self.query_one(".recall-budget", Static).update(note)

    def show_view(self, view: SurfacingView) -> None:
        """Show a result's surfacing: verdict, budget bar and the injected memories."""
        self.say(budget_content(view))
        parts, marks = budget_bar(view)
        self.query_one(SplitBar).update_bar(parts, scale=view.session_budget, marks=marks)
        self.query_one(".recall-bar-value", Static).update(budget_value(view))
        self.show_memories(view)

    def clear(self, note: Content) -> None:
        """Nothing to show (recall did not run): the note, an empty bar, no memories."""
        self.say(note)
        self.query_one(SplitBar).update_bar(())
        self.query_one(".recall-bar-value", Static).update("")
        self.show_memories(None)

    def show_memories(self, view: SurfacingView | None) -> None:
        """One titled block per injected memory (replacing the previous ones)."""
        self.remove_children(".recall-memory, .recall-reminder")
        blocks: list[Static] = []
        for memory in view.memories if view is not None else ():
            blocks.append(Static(memory_title(memory), classes="recall-memory"))
            blocks.append(
                Static(reminder_content(memory, self._shown_path), classes="recall-reminder")
            )
        if blocks:
            self.mount_all(blocks)

    def _shown_path(self, abs_path: str) -> str:
        """A memory path for display: the memory folder shown symbolically (no absolute
        paths unless the settings ask for them)."""
        engine = getattr(self.app, "engine", None)  # a snapshot harness may have none
        settings = app_settings(self)
        if engine is None or (settings is not None and settings.show_full_paths):
            return abs_path
        from workbench.ui.formatting import display_memory_dir

        folder = engine.locations.memory_dir
        if abs_path.startswith(folder):
            return display_memory_dir(engine.locations) + abs_path[len(folder) :].lstrip("/")
        return abs_path
