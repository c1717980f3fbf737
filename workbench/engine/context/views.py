"""View models of the context area: what the Session and Gauge panes show for one session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.engine.context.gauge import GaugeReport
    from workbench.engine.context.replay import ReplayReport
    from workbench.engine.context.service import TokenMeasurements
    from workbench.engine.context.session_memory import SessionMemoryReport
    from workbench.engine.context.transcript import SessionInfo


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
