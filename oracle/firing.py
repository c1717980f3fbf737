"""Find the exact reported usage at which Claude Code compacts (or blocks), by search.

Every main-thread call is answered with a `tool_use` of a tool that does not exist, reporting
a chosen usage total U. Claude Code answers with a small error `tool_result` and, before its
next call, compares `U + (estimate of that result)` with its threshold: over it, the next
request is a summary request (auto-compaction) or none at all (the blocking limit stops the
turn); under it, the next request is another main call. Each probe therefore says "fires" or
"does not fire" for one U.

Compaction lets the session go on, so the search bisects inside one run: after a summary the
next probe is the midpoint again. Blocking ends the run, so those probes scan the bracket in
many ascending steps per run and a few runs narrow it to one token.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from oracle.extract import is_summary_request
from tests.fakes.messages_api import RecordedRequest, ScriptedReply, usage_total

MIN_MAIN_TOOLS = 3
"""Fewer tools than this: a side call (see `oracle.runner.is_main_thread`)."""

MISSING_TOOL = "oracle_probe_missing_tool"
QUIET_TOOLS = "TodoWrite,TaskCreate,TaskUpdate,TaskList,TaskGet"
"""Passed to `--disallowedTools`: the todo and task tools bring reminders every few turns
into the count; without them each probe's count is its usage plus one fixed tool exchange."""
COOLDOWN_CALLS = 3
FINAL_USAGE = 3_000
"""The closing reply's usage: small, as after a compaction, so the session ends calm."""
SEARCH_CEILING = 2_000_000
"""Spec 08: models without threshold compaction were climbed to 2,000,000 tokens."""


@dataclass
class Probe:
    usage: int
    outcome: str
    """`none`, `compact` or `stop` (no further request: blocked, or the run ended)."""
    run: int


@dataclass
class FiringSearch:
    """A search for the smallest usage total that makes Claude Code act, over several runs."""

    hints: tuple[int, ...] = ()
    """Expected firing points (the workbench's prediction): probed first, then bracketed."""
    ceiling: int = SEARCH_CEILING
    precision: int = 1
    lo: int = 0
    hi: int | None = None
    hi_outcome: str | None = None
    probes: list[Probe] = field(default_factory=list)
    anomalies: list[str] = field(default_factory=list)
    first_call_compacted: bool = False
    script: list[int] | None = None
    """Probe exactly these usages in order, then stop (a confirmation run, no search)."""
    _pending: int | None = None
    _main_tools: list[str] | None = None
    _run: int = 0
    _round: list[int] = field(default_factory=list)
    _cooldown: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def done(self) -> bool:
        if self.first_call_compacted:
            return True
        if self.hi is None:
            return self.lo >= self.ceiling
        return self.hi - self.lo <= self.precision

    @property
    def fired(self) -> bool:
        return self.hi is not None or self.first_call_compacted

    def start_run(self) -> None:
        with self._lock:
            self._run += 1
            self._pending = None
            self._main_tools = None
            self._round = []

    def end_run(self) -> None:
        """The run ended: a probe still waiting for its next request stopped the turn."""
        with self._lock:
            if self._pending is not None:
                self._settle(self._pending, "stop")
                self._pending = None

    # --- the responder -------------------------------------------------------------------

    def respond(self, request: RecordedRequest) -> ScriptedReply | None:
        with self._lock:
            if is_summary_request(request):
                if self._pending is not None:
                    self._settle(self._pending, "compact")
                    self._pending = None
                elif self._main_tools is None:
                    self.first_call_compacted = True
                    self._main_tools = []  # the session has started
                else:
                    self.anomalies.append(f"run {self._run}: a summary request without a probe")
                return ScriptedReply.text(
                    "<summary>Probe session: a tool that does not exist was called.</summary>",
                    usage=usage_total(2_000, output_tokens=40),
                )
            if len(request.tool_names) < MIN_MAIN_TOOLS:
                return None  # a side call (a title, a quota check): the default answer
            if self._main_tools is None:
                self._main_tools = request.tool_names
            elif request.tool_names != self._main_tools:
                return None
            if self._pending is not None:
                self._settle(self._pending, "none")
                self._pending = None
            usage = self._next_probe()
            if usage is None:
                return ScriptedReply.text("Search finished.", usage=usage_total(FINAL_USAGE))
            self._pending = usage
            # A line of text with each call: newer releases nudge a session whose replies show
            # the user nothing, and that nudge would change the count between probes.
            return ScriptedReply.tool_use(
                [(MISSING_TOOL, {"probe": len(self.probes)})],
                text="Probing.",
                usage=usage_total(usage),
            )

    # --- search --------------------------------------------------------------------------

    def _settle(self, usage: int, outcome: str) -> None:
        self.probes.append(Probe(usage, outcome, self._run))
        if outcome == "compact":
            # Newer releases stop a session that compacts again within three turns, three
            # times running; a few quiet calls after each compaction keep the search going.
            self._cooldown = COOLDOWN_CALLS
        if outcome == "none":
            self.lo = max(self.lo, usage)
        elif self.hi is None or usage < self.hi:
            self.hi, self.hi_outcome = usage, outcome
            self._round = []  # a new bracket: plan new probes
        if self.hi is not None and self.lo >= self.hi:
            self.anomalies.append(f"not monotonic: fired at {self.hi:,}, not at {self.lo:,}")
            self.lo = self.hi - 1

    def _next_probe(self) -> int | None:
        if self.script is not None:
            return self.script.pop(0) if self.script and not self._stopped_script() else None
        if self.done:
            return None
        if self._cooldown:
            self._cooldown -= 1
            return max(1_000, min(self.lo, 20_000))
        while self._round and (self._round[0] <= self.lo or self._bad(self._round[0])):
            self._round.pop(0)
        if not self._round:
            self._round = self._plan()
        return self._round.pop(0) if self._round else None

    def _stopped_script(self) -> bool:
        return self.first_call_compacted

    def _bad(self, usage: int) -> bool:
        return self.hi is not None and usage >= self.hi

    def _plan(self) -> list[int]:
        if self.hi is None:
            # Climb: the hints first (just under and over each), then geometric steps.
            points = set()
            for hint in self.hints:
                points.update({hint - 64, hint + 64})
            step = max(self.lo, 50_000)
            while step < self.ceiling:
                points.add(step)
                step = int(step * 1.5)
            points.add(self.ceiling)
            return sorted(p for p in points if self.lo < p <= self.ceiling)
        gap = self.hi - self.lo
        # Bisect while compaction keeps the run going; scan finely when a probe ends the run.
        parts = 2 if self.hi_outcome == "compact" else 64
        step = max(1, gap // parts)
        return [self.lo + step * i for i in range(1, parts) if self.lo + step * i < self.hi] or [
            self.lo + 1
        ]

    # --- report ---------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "fired": self.fired,
            "first_call_compacted": self.first_call_compacted,
            "outcome": self.hi_outcome,
            "last_quiet_usage": self.lo,
            "first_firing_usage": self.hi,
            "ceiling": self.ceiling,
            "probes": len(self.probes),
            "runs": self._run,
            "anomalies": list(self.anomalies),
        }
