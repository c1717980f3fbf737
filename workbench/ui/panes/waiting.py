"""Panes whose engines land later: what each will show, as a tidy empty state."""

from __future__ import annotations

from workbench.ui.panes.base import PlaceholderPane

PURPOSES: dict[str, str] = {
    "session": (
        "Each session's notes file, section by section, with a token bar against the "
        "2,000-token section limit and the 12,000-token total, and where an update would fire."
    ),
    "gauge": (
        "The threshold ladder for the current transcript: warning, error, auto-compact and "
        "blocking against the effective window, estimated beside measured, followed live."
    ),
    "compaction": (
        "A dry run of compaction: what session-memory compaction keeps, what a full summary "
        "would replace, what micro-compaction clears, and which files come back."
    ),
    "recall": (
        "Type a query and see which memories would be recalled and why, the near misses, "
        "and whether the model or the offline ranker made the choice."
    ),
    "team": (
        "Team sync: server and repo, per-file local / server / last-synced state, pending "
        "changes, conflicts, and secrets held back from pushing."
    ),
    "review": ("Memory writes that extraction proposed, each with a diff to accept or reject."),
}


def waiting_pane(pane_id: str, title: str) -> PlaceholderPane:
    """The placeholder for one pane id."""
    return PlaceholderPane(pane_id, title, PURPOSES.get(pane_id, ""), id=f"{pane_id}-pane")
