"""What the Session pane shows, as pure functions of the engine's `SessionNotes` and sessions.

No I/O and no widgets: the pane (`session.py`) feeds these and lays the results out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from workbench.engine.context.views import (
    MINIMUM_MESSAGE_TOKENS_TO_INIT,
    MINIMUM_TOKENS_BETWEEN_UPDATE,
    TOOL_CALLS_BETWEEN_UPDATES,
)
from workbench.engine.models import format_file_size
from workbench.ui.formatting import plural

if TYPE_CHECKING:
    from workbench.engine.context.session_list import SessionInfo
    from workbench.engine.context.session_memory import SessionMemoryReport, TriggerReport
    from workbench.engine.context.views import SessionNotes


# --- display helpers ------------------------------------------------------------------------


def session_title(session: SessionInfo, width: int = 60) -> str:
    """The session's title on one line, cut to `width`."""
    title = " ".join((session.title or "(untitled session)").split())
    return title if len(title) <= width else title[: width - 1] + "…"


def session_when(session: SessionInfo) -> str:
    """Last activity as `2026-11-29 08:33` (transcript time, UTC), else the file's mtime."""
    stamp = session.last_timestamp or session.mtime or ""
    return stamp[:16].replace("T", " ")


def session_prompt(session: SessionInfo) -> Content:
    """A session in the list: title, then time, size and whether it has notes (the time tells
    sessions apart; an id prefix would not)."""
    notes = (
        Content.styled("notes", "$text-success")
        if session.has_session_memory
        else Content.styled("no notes", "$foreground-muted")
    )
    return Content.assemble(
        (session_title(session), "bold"),
        "\n",
        (
            f"{session_when(session)} · {format_file_size(session.size_bytes)} · ",
            "$foreground-muted",
        ),
        notes,
    )


def notes_location(report: SessionMemoryReport, session_id: str) -> str:
    """Where the notes live, without the absolute path: `<session>/session-memory/summary.md`."""
    marker = f"/{session_id}/session-memory/summary.md"
    if report.path.endswith(marker):
        return f"<session {session_id[:8]}>/session-memory/summary.md"
    return report.path.rsplit("/", 1)[-1]


def header_content(notes: SessionNotes) -> Content:
    """Title, facts and the notes' state."""
    session, report = notes.session, notes.report
    facts = " · ".join(
        part
        for part in (
            session.session_id,
            plural(session.messages, "message"),
            session_when(session),
            format_file_size(session.size_bytes),
            session.model or "",
        )
        if part
    )
    if not report.exists:
        state = Content.styled("no notes yet", "bold $foreground-muted")
    elif report.is_empty:
        state = Content.styled("still the empty template", "bold $text-warning")
    else:
        state = Content.styled("written", "bold $text-success")
    template = (
        Content.styled("custom template", "$text-secondary")
        if report.template_source == "custom"
        else Content.styled("default template", "$foreground-muted")
    )
    lines = [
        Content.styled(session_title(session, 200), "bold"),
        Content.styled(facts, "$foreground-muted"),
        Content.assemble(
            ("Notes ", "bold"),
            (notes_location(report, session.session_id), "$foreground-muted"),
            "  ",
            state,
            ("  ·  ", "$foreground-muted"),
            template,
        ),
    ]
    if report.template_error:
        lines.append(
            Content.styled(
                f"The custom template could not be read ({report.template_error}); "
                "Claude Code falls back to the default.",
                "$text-warning",
            )
        )
    return Content("\n").join(lines)


def trigger_heading(notes: SessionNotes) -> Content:
    """Whether and how often Claude Code would update the notes over this transcript."""
    trigger = notes.report.trigger
    if trigger is None:
        return Content.styled("The update trigger was not evaluated.", "$foreground-muted")
    points = trigger.points
    count = len(points)
    lines = [
        Content.assemble(
            ("Update trigger", "bold"),
            "  ",
            (
                f"fires after {plural(count, 'response')}"
                if points
                else "would not fire over this transcript",
                "bold $text-accent" if points else "bold $foreground-muted",
            ),
        ),
        Content.styled(
            f"first at {MINIMUM_MESSAGE_TOKENS_TO_INIT:,} tokens of context, then after every "
            f"{MINIMUM_TOKENS_BETWEEN_UPDATE:,} new tokens with {TOOL_CALLS_BETWEEN_UPDATES} "
            "tool calls, or with a turn that ends without tools",
            "$foreground-muted",
        ),
    ]
    if not points:
        lines.append(
            Content.styled(
                f"The context never reached {MINIMUM_MESSAGE_TOKENS_TO_INIT:,} tokens."
                if not trigger.initialized
                else "No response met the token and tool-call conditions.",
                "$foreground-muted",
            )
        )
    return Content("\n").join(lines)


def trigger_table(trigger: TriggerReport | None) -> Content:
    """One row per update: the message it follows, the context then, and why it fired."""
    if trigger is None or not trigger.points:
        return Content("")
    lines = [
        Content.styled(
            f"{'#':>3}  {'line':>6}  {'context':>8}  {'new':>8}  why", "$foreground-muted"
        )
    ]
    for number, point in enumerate(trigger.points, 1):
        why = (
            f"{point.tool_calls_since_last} tool calls"
            if point.tool_calls_since_last >= TOOL_CALLS_BETWEEN_UPDATES
            else "turn ended without tools"
        )
        lines.append(
            Content.assemble(
                (f"{number:>3}", "bold $text-accent"),
                f"  {point.line:>6,}  {point.tokens:>8,}  ",
                (f"{'+' + format(point.tokens_since_last, ','):>8}", "$foreground-muted"),
                f"  {why}",
            )
        )
    if trigger.last_summarized_uuid:
        lines.append(
            Content.styled(
                f"The notes would cover messages up to {trigger.last_summarized_uuid[:8]}… "
                "(updates after a turn without tools move that mark).",
                "$foreground-muted",
            )
        )
    return Content("\n").join(lines)
