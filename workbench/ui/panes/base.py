"""The pane base class: a titled area that shows an empty state until it has something."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ClassVar, TypeVar

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import OptionList, Static

from workbench.ui.host import app_engine, app_settings, read_in_thread
from workbench.ui.messages import EngineReported

if TYPE_CHECKING:
    from textual.message import Message
    from textual.worker import Worker

    from workbench.config import Settings
    from workbench.engine import Engine
    from workbench.engine.context.session_list import SessionInfo

T = TypeVar("T")


def freeze_long_lived() -> None:
    """Leave what is alive now out of later garbage collections.

    What a pane shows the first time (a session model, a 1,000-row table and the widgets
    drawing it) mostly lives as long as the app, yet each full collection walked it all
    again with the GIL held: 50-230 ms frozen frames while the next pane opened. Young
    garbage is collected first, so little is frozen that was about to go; what is frozen
    and later dropped is still freed by reference counting (only cycles among it are not).
    """
    gc.collect(1)
    gc.freeze()


_FROZEN_FOR: set[type[Pane]] = set()


def _hidden(widget: Widget) -> bool:
    """Whether the widget or one of its ancestors is not displayed."""
    return any(not node.display for node in widget.ancestors_with_self if isinstance(node, Widget))


class EmptyState(Static):
    """A centred explanation shown when a pane has nothing to show.

    It can take the focus while it is shown (the pane turns that on), so the pane's keys
    (refresh, for one) still work when there is nothing else in the pane to focus.
    """

    DEFAULT_CSS = """
    EmptyState {
        width: 1fr;
        height: 1fr;
        content-align: center middle;
        text-align: center;
        padding: 1 4;
    }
    """


class Pane(Vertical):
    """Base class for the right-hand panes.

    Subclasses set `pane_id` and `title`, yield their body from `compose_body()`, and flip
    `has_content`; while it is False the pane shows `empty_message` instead of the body.
    """

    pane_id = "pane"
    title = "Pane"
    empty_title = "Nothing to show yet"
    empty_message = ""
    focus_target: ClassVar[str] = ""
    """Selector of the widget that takes focus when the pane is brought forward (its main
    list or scroll); "" focuses the first focusable widget in the pane."""

    has_content: reactive[bool] = reactive(False)
    """Whether the body is shown (True) or the empty state (False)."""
    engine_label: str = ""
    """Which engine path produced what the pane shows, in a few words ("" until it knows)."""
    _refocus_on_content = False
    _focus_from: Widget | None = None
    _session_path: str | None = None

    @property
    def engine(self) -> Engine:
        """The app's engine."""
        return app_engine(self)

    @property
    def settings(self) -> Settings | None:
        """The app's settings (None in a harness without them: every default applies)."""
        return app_settings(self)

    def read_in_thread(
        self,
        read: Callable[[], T],
        loaded: Callable[[T], Message],
        failed: Callable[[str], Message],
        *,
        group: str,
        name: str = "",
    ) -> Worker[None]:
        """Read off the UI thread and post the result (see `workbench.ui.host`)."""
        return read_in_thread(self, read, loaded, failed, group=group, name=name)

    def hold_session(self, sessions: Iterable[SessionInfo], session_id: str | None) -> None:
        """Say which session the pane is on now (None, or one not in `sessions`: none). The
        one it was on before is let go: the engine drops the shared session model it keeps
        for it (a long session's is tens of MB) unless that model is by now another's."""
        path = next((s.path for s in sessions if s.session_id == session_id), None)
        held, self._session_path = self._session_path, path
        if held is not None and held != self._session_path:
            self._release_session(held)

    def on_unmount(self) -> None:
        # The pane (or the app) is closing: it is done with its transcript.
        if self._session_path is not None:
            self._release_session(self._session_path)
            self._session_path = None

    def _release_session(self, path: str) -> None:
        # A harness app may have no engine; the panes that hold sessions run with one.
        engine = getattr(self.app, "engine", None)
        if engine is not None:
            engine.context.release_session(path)

    def compose(self) -> ComposeResult:
        yield EmptyState(self.empty_content(), classes="pane-empty")
        yield from self.compose_body()

    def compose_body(self) -> ComposeResult:
        """The pane's own widgets (hidden while the pane is empty)."""
        yield from ()

    def empty_content(self) -> Content:
        """What the empty state says."""
        return Content.assemble(
            (self.empty_title, "bold"), "\n\n", (self.empty_message, "$foreground-muted")
        )

    def set_empty(self, title: str, message: str) -> None:
        """Show the empty state with a different explanation."""
        self.empty_title, self.empty_message = title, message
        # Composed children exist before the pane's own mount finishes (which is when fed
        # results may land), so update whatever is there; compose picks the text up otherwise.
        for empty in self.query_children(EmptyState):
            empty.update(self.empty_content())
        self.has_content = False

    def watch_has_content(self, has_content: bool) -> None:
        # The class hides the pane's own children while it is empty (app.tcss: `Pane.-empty >
        # *`), so only they need restyling; Textual would restyle every widget in the pane
        # (100-200 ms for the larger panes, on the UI thread, as their first result lands).
        if self.has_class("-empty") == has_content:
            self.set_class(not has_content, "-empty", update=False)
            if self.is_attached:
                self.app.stylesheet.update_nodes([self, *self.children], animate=True)
        for empty in self.query_children(EmptyState):
            empty.can_focus = not has_content
        if has_content and type(self) not in _FROZEN_FOR:
            # Once per kind of pane and process, after its first content is drawn (see
            # `freeze_long_lived`): the app builds each pane once, and a process that builds
            # many (the test suite) freezes what it no longer needs a bounded number of times.
            _FROZEN_FOR.add(type(self))
            self.call_after_refresh(freeze_long_lived)
        if has_content and self._refocus_on_content:
            # The result arrived while the empty state had (or was getting) the focus.
            self._refocus_on_content = False
            self.call_after_refresh(self._refocus)

    def _refocus(self) -> None:
        # Only if the pane is still on show, and the focus still where the empty state found
        # it (or lost, or on it).
        if _hidden(self):
            return
        focused = self.screen.focused
        unmoved = focused is None or focused is self._focus_from or _hidden(focused)
        if unmoved or (isinstance(focused, EmptyState) and focused.parent is self):
            self.focus_default()

    EXPLAINED_ACTIONS: ClassVar[frozenset[str]] = frozenset()
    """Actions whose key, pressed while they cannot run, says why (`why_disabled`)."""

    def why_disabled(self, action: str) -> str | None:
        """Why one of the pane's actions cannot run now (None: nothing to say)."""
        return None

    def on_key(self, event: events.Key) -> None:
        # A key whose action is disabled does nothing in Textual; for the pane's verbs that
        # users reach for (push, pull), say why instead of staying silent.
        if not self.EXPLAINED_ACTIONS:
            return
        active = self.screen.active_bindings.get(event.key)
        if active is None or active.node is not self or active.enabled:
            return
        reason = self.why_disabled(active.binding.action)
        if reason:
            self.notify(reason, title=self.title, severity="warning")

    def report_engine(self, label: str) -> None:
        """Say which engine path produced the result on show (the status line shows it)."""
        if label == self.engine_label:
            return
        self.engine_label = label
        self.post_message(EngineReported(self.pane_id, label))

    def focus_default(self) -> bool:
        """Move focus into the pane (its main widget, else the empty state); False if nothing
        in it can take focus."""
        candidates: list[Widget] = []
        if self.has_content and self.focus_target:
            candidates.extend(self.query(self.focus_target))
        candidates.extend(self.query_children(EmptyState) if not self.has_content else ())
        candidates.extend(widget for widget in self.query("*") if widget.can_focus)
        for widget in candidates:
            if widget.focusable and self._displayed(widget):
                self._refocus_on_content = isinstance(widget, EmptyState)
                self._focus_from = self.screen.focused
                # At once, not on the next message as `widget.focus()` would: by then another
                # pane may have come forward, and the tabs follow the focus back here. Textual
                # would scroll the widget into view on its next message, measured against a
                # layout that may still have the empty state in it (how far the body scrolled
                # depended on timing); after the refresh the layout is the one on screen.
                self.screen.set_focus(widget, scroll_visible=False)
                self.call_after_refresh(self._reveal, widget)
                return True
        return False

    def _reveal(self, widget: Widget) -> None:
        # Scroll only to bring a focused widget that is wholly out of view into it.
        screen = self.screen
        if screen.focused is widget and not screen.can_view_partial(widget):
            widget.scroll_visible(animate=False)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # A list that takes the focus shows where its cursor is.
        widget = event.widget
        if isinstance(widget, OptionList) and widget.highlighted is None:
            widget.action_first()

    def _displayed(self, widget: Widget) -> bool:
        node: Widget | None = widget
        while node is not None and node is not self:
            if not node.display:
                return False
            parent = node.parent
            node = parent if isinstance(parent, Widget) else None
        return True
