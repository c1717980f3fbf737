"""View models of the context area: what the Session and Gauge panes show for one session,
the constants they name, and the status line's fields and fallback (front ends import this
module at run time, so it stays light)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.engine.records import Record

if TYPE_CHECKING:
    from workbench.engine.context.gauge import GaugeReport
    from workbench.engine.context.replay import ReplayReport
    from workbench.engine.context.service import TokenMeasurements
    from workbench.engine.context.session_list import SessionInfo
    from workbench.engine.context.session_memory import SessionMemoryReport

# Claude Code's session-memory limits and trigger: the Session pane shows them.
MAX_SECTION_LENGTH = 2_000
"""Tokens per section before Claude Code asks for it to be condensed."""
MAX_TOTAL_SESSION_MEMORY_TOKENS = 12_000
MINIMUM_MESSAGE_TOKENS_TO_INIT = 10_000
MINIMUM_TOKENS_BETWEEN_UPDATE = 5_000
TOOL_CALLS_BETWEEN_UPDATES = 3

NO_THRESHOLD = "no-threshold-for-model"
"""`auto_compact_disabled_by` when the release never compacts the model by threshold."""


class SessionNotes(Record):
    """One session's notes report, with the trigger evaluated over its transcript."""

    session: SessionInfo
    report: SessionMemoryReport
    messages: int
    """Main-chain messages the trigger walked (the timeline's length)."""


class GaugeView(Record):
    """Everything the Gauge pane shows for one session, in one object."""

    sessions: tuple[SessionInfo, ...]
    report: GaugeReport
    replay: ReplayReport | None = None
    measurements: TokenMeasurements | None = None


# --- the status line: what the CLI needs before (or without) an engine --------------------

FIELDS: dict[str, str] = {
    "model": "the model's display name (else its id)",
    "tokens": "tokens in the context now, short (72k)",
    "auto_compact": "where auto-compaction fires (the effective window when it is off)",
    "window": "the context window",
    "percent": "the context as a share of the auto-compact point (43%)",
    "left": "Claude Code's own 'percent left' figure (57%)",
    "to_go": "tokens still to go before auto-compaction (95k)",
    "state": "in words: '57% left', '12% until auto-compact', 'auto-compact due', 'blocking', "
    "'new session'",
    "badge": "a MEMORY.md badge when the index does not load whole (else nothing)",
    "source": "where the count came from: payload, transcript or new",
}
"""Every field a `--format` may name, with what it shows."""

DEFAULT_FORMAT = "{model} · ctx {tokens}/{auto_compact} ({percent}) · {state} {badge}"


def fallback_line(model: str | None = None) -> str:
    """What shows when the input cannot be read: short, never blank."""
    return f"{model} · ctx ?" if model else "ctx ?"


def payload_project(payload: Mapping[str, Any]) -> str | None:
    """The project a status-line payload names (`workspace.project_dir`, else `cwd`)."""
    workspace = payload.get("workspace")
    project = workspace.get("project_dir") if isinstance(workspace, Mapping) else None
    if not isinstance(project, str) or not project:
        cwd = payload.get("cwd")
        project = cwd if isinstance(cwd, str) and cwd else None
    return project
