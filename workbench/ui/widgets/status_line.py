"""The one-line status bar: project, memory folder, counts, last action, engine path."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget


class StatusLine(Widget):
    """Shows where the workbench is looking and what it last did."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        width: 1fr;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    project: reactive[str] = reactive("")
    """The project folder's name."""
    memory_dir: reactive[str] = reactive("")
    """The memory folder, abbreviated."""
    counts: reactive[str] = reactive("")
    """Memories per scope and the index size."""
    last_action: reactive[str] = reactive("")
    """What the workbench last did, in a few words."""
    engine_path: reactive[str] = reactive("")
    """Which engine path produced what is on screen (local store, offline ranker, model…)."""

    MESSAGE_SECONDS = 15.0
    """How long `say` keeps a message on the line."""
    _expiry: Timer | None = None

    def say(self, message: str) -> None:
        """Show what the workbench just did, for a while (an old message reads as news)."""
        self.last_action = message
        if self._expiry is not None:
            self._expiry.stop()
        self._expiry = self.set_timer(self.MESSAGE_SECONDS, self._expire)

    def _expire(self) -> None:
        self._expiry = None
        self.last_action = ""

    def render(self) -> Content:
        parts: list[Content] = [Content.styled(f" {self.project} ", "bold $text-primary")]
        # The folder goes last: on a narrow terminal it is the part worth losing.
        for value, style in (
            (self.counts, ""),
            (self.last_action, "$text-accent"),
            (self.engine_path, "$foreground-muted"),
            (self.memory_dir, "$foreground-muted"),
        ):
            if value:
                parts.append(Content.styled(" │ ", "$foreground-muted"))
                parts.append(Content.styled(value, style) if style else Content(value))
        return Content("").join(parts)
