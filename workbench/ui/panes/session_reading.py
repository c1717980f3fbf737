"""What the panes that pick a session (Session, Context, Gauge) share: the session list read in
a thread, and the two messages their reads come back as."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from workbench.engine.context.session_list import SessionInfo
    from workbench.ui.panes.base import Pane


class SessionsListed(Message):
    """The project's sessions were read, newest first."""

    def __init__(self, sessions: tuple[SessionInfo, ...]) -> None:
        super().__init__()
        self.sessions = sessions


class ReadFailed(Message):
    """A pane's read failed; `what` says which part, `session_id` which session if one."""

    def __init__(self, what: str, error: str, session_id: str | None = None) -> None:
        super().__init__()
        self.what = what
        self.error = error
        self.session_id = session_id


def list_sessions(pane: Pane, *, group: str) -> None:
    """Read the project's sessions off the UI thread; `pane` gets `SessionsListed`, or
    `ReadFailed("sessions", …)`. Each pane handles and stops its own, so the three never
    see each other's."""
    engine = pane.engine
    pane.read_in_thread(
        # The context area is reached in the thread: opening it may import and build it.
        lambda: tuple(engine.context.sessions()),
        SessionsListed,
        lambda error: ReadFailed("sessions", error),
        group=group,
    )
