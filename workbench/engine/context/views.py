"""View models of the context area: what the Session and Gauge panes show for one session,
and the constants they name (front ends import this module at run time)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.engine.context.gauge import GaugeReport
    from workbench.engine.context.replay import ReplayReport
    from workbench.engine.context.service import TokenMeasurements
    from workbench.engine.context.session_memory import SessionMemoryReport
    from workbench.engine.context.transcript import SessionInfo

# Claude Code's session-memory limits and trigger: the Session pane shows them.
MAX_SECTION_LENGTH = 2_000
"""Tokens per section before Claude Code asks for it to be condensed."""
MAX_TOTAL_SESSION_MEMORY_TOKENS = 12_000
MINIMUM_MESSAGE_TOKENS_TO_INIT = 10_000
MINIMUM_TOKENS_BETWEEN_UPDATE = 5_000
TOOL_CALLS_BETWEEN_UPDATES = 3

NO_THRESHOLD = "no-threshold-for-model"
"""`auto_compact_disabled_by` when the release never compacts the model by threshold."""


@dataclass(frozen=True)
class SessionNotes:
    """One session's notes report, with the trigger evaluated over its transcript."""

    session: SessionInfo
    report: SessionMemoryReport
    messages: int
    """Main-chain messages the trigger walked (the timeline's length)."""


@dataclass(frozen=True)
class GaugeView:
    """Everything the Gauge pane shows for one session, in one object."""

    sessions: tuple[SessionInfo, ...]
    report: GaugeReport
    replay: ReplayReport | None = None
    measurements: TokenMeasurements | None = None
