"""What the Review pane shows, as pure functions of the engine's `ReviewItem`s.

No I/O and no widgets: the pane (`review.py`) passes the items, the refusals it met on accept
(`Failure`) and the clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from textual.content import Content

from workbench.ui.formatting import plural

if TYPE_CHECKING:
    from workbench.engine.agents.models import ReviewItem


def age_text(iso: str, now_ms: float) -> str:
    """`just now`, `5 min ago`, `3 h ago`, `2 days ago` for an ISO time."""
    try:
        then = datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return iso
    minutes = max(0, int((now_ms - then) // 60_000))
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{minutes} min ago"
    if minutes < 48 * 60:
        return f"{minutes // 60} h ago"
    return f"{minutes // 1440} days ago"


@dataclass(frozen=True)
class Failure:
    """A proposal the engine refused to accept, and why."""

    id: str
    path: str
    reason: Literal["changed", "secret", "error"]
    message: str


def summary_content(proposals: tuple[ReviewItem, ...]) -> Content:
    """How many proposals wait, from which agents, and how many cannot be accepted as is."""
    sources: dict[str, int] = {}
    for proposal in proposals:
        sources[proposal.source] = sources.get(proposal.source, 0) + 1
    by_source = " · ".join(f"{count} from {source}" for source, count in sources.items())
    blocked = sum(1 for p in proposals if p.changed_since or p.refusal)
    return Content.assemble(
        (plural(len(proposals), "proposal"), "bold"),
        " waiting",
        ("  ·  " + by_source, "$foreground-muted"),
        (f"  ·  {blocked} cannot be accepted as is", "$text-warning") if blocked else "",
    )


def prompt_content(proposal: ReviewItem, failure: Failure | None, now_ms: float) -> Content:
    """One row of the list: kind, size, path, scope, what blocks it, source and age."""
    badge = (" new ", "bold $text-success reverse") if proposal.kind == "create" else None
    if proposal.kind == "delete":
        badge = (" del ", "bold $text-error reverse")
    badge = badge or (" edit", "bold $text-primary reverse")
    parts: list[Content | tuple[str, str] | str] = [
        badge,
        " ",
        (f"+{proposal.added}", "$text-success"),
        " ",
        (f"−{proposal.removed}", "$text-error"),
        "  ",
        (proposal.path, "bold"),
    ]
    if proposal.scope == "team":
        parts += ["  ", ("team", "$text-accent")]
    if proposal.changed_since or (failure and failure.reason == "changed"):
        parts += ["  ", ("▲ changed since", "$text-warning")]
    if proposal.refusal or (failure and failure.reason == "secret"):
        parts += ["  ", ("✖ holds a secret", "$text-error")]
    parts.append(
        (
            f"  {proposal.source} · {age_text(proposal.created, now_ms)}",
            "$foreground-muted",
        )
    )
    return Content.assemble(*parts)


def detail_content(proposal: ReviewItem, failure: Failure | None, now_ms: float) -> Content:
    """What accepting the selected proposal would do, and what stops it."""
    what = {"create": "a new file", "delete": "the removal of a file"}.get(
        proposal.kind, "an edit of an existing file"
    )
    where = (
        "team memory: it syncs to every teammate on the next push"
        if proposal.scope == "team"
        else {"log": "a daily log", "private": "private memory (this machine only)"}.get(
            proposal.scope, proposal.scope
        )
    )
    lines = [
        Content.assemble(
            ("→ ", "$foreground-muted"),
            (proposal.path, "bold"),
            ("  ", ""),
            (where, "$text-accent" if proposal.scope == "team" else "$foreground-muted"),
        ),
        Content.styled(
            f"{what} (+{proposal.added} −{proposal.removed}), proposed by {proposal.source} "
            f"{age_text(proposal.created, now_ms)}",
            "$foreground-muted",
        ),
    ]
    if proposal.note:
        lines.append(Content.styled(proposal.note, "italic"))
    if proposal.changed_since or (failure and failure.reason == "changed"):
        lines.append(
            Content.styled(
                "▲ The file changed after this was proposed: accepting is refused so "
                "nothing is overwritten. Reject it (x) and run the agent again.",
                "$text-warning",
            )
        )
    if proposal.unindexed:
        lines.append(
            Content.styled(
                "▲ No MEMORY.md line points at it, here or in a queued index edit: accepted "
                "alone it is not in the index Claude Code loads (recall can still pick it)",
                "$text-warning",
            )
        )
    if proposal.refusal:
        lines.append(Content.styled(f"✖ {proposal.refusal}", "$text-error"))
    if failure and failure.reason == "error":
        lines.append(Content.styled(f"✖ {failure.message}", "$text-error"))
    if proposal.hidden_secrets:
        lines.append(
            Content.styled(
                f"{plural(proposal.hidden_secrets, 'secret')} in this diff shown as [REDACTED]",
                "$text-warning",
            )
        )
    return Content("\n").join(lines)
