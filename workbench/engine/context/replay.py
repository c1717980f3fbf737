"""Turn-by-turn replay: the context size before every API call, where auto-compaction would
fire, and how that compares with the compactions the transcript recorded.

Claude Code checks the threshold at the start of each loop iteration, that is before each API
call, with `tokenCountWithEstimation` over the messages since the last boundary. The replay
walks the main chain once, keeping that count with the incremental meter, and records it at
every new response and at every recorded compact boundary.
"""

from __future__ import annotations

import itertools
import operator
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from workbench.engine.context.gc_pause import collection_paused
from workbench.engine.context.meter import ContextMeter
from workbench.engine.context.meter_lines import (
    MeterLine,
    is_compact_command,
    lean_meter_line,
    meter_line,
)
from workbench.engine.context.thresholds import Thresholds
from workbench.engine.context.tokens import (
    context_tokens_from_usage,
)
from workbench.engine.context.transcript import Entry, Transcript
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.progress import ProgressCallback, Reporter
from workbench.engine.userfiles import (
    TRANSCRIPT_LINE_LIMIT,
    line_pieces,
    open_stream,
    skip_rest_of_line,
)
from workbench.engine.wording import plural

# Transcripts parse to plain dicts: testing `dict` first skips the slow ABC check.
_MAP = (dict, Mapping)

if TYPE_CHECKING:
    from workbench.engine.profiles.detect import ResolvedVersion

# A recorded preTokens and our estimate "agree" within this fraction (the transcript lacks
# hook attachments that were in memory, so an exact match is not expected).
AGREEMENT_TOLERANCE = 0.02
# A firing decision this close to the threshold (as a fraction of it) is called a close call.
CLOSE_CALL = 0.01


class TurnPoint(msgspec.Struct, frozen=True, gc=False):
    """One API call of the main chain (a frozen Struct, not a dataclass: a long session has
    thousands, and a frozen dataclass's `__init__` cost a tenth of the replay's own time)."""

    index: int
    line: int
    uuid: str | None
    timestamp: str | None
    message_id: str
    model: str | None
    segment: int
    """How many compact boundaries precede this call."""
    estimated_before: int
    """`tokenCountWithEstimation` when Claude Code checked, just before the call."""
    context_tokens: int
    """The prompt size the API reported for the call (input + cache creation + cache read)."""
    output_tokens: int
    above_warning: bool
    above_autocompact: bool
    """The rebuilt estimate reaches the auto-compact threshold before this call."""

    @property
    def recorded_total(self) -> int:
        """What the context held after the call, as measured: prompt plus output."""
        return self.context_tokens + self.output_tokens

    threshold: int | None = None
    """The auto-compact threshold in force for this call (None: the release does not compact
    this model by threshold)."""

    @property
    def confirmed_fire(self) -> bool:
        """The estimate crosses the threshold and the prompt the API measured for the call
        does too: only then does the replay claim Claude Code would have compacted here."""
        return (
            self.above_autocompact
            and self.threshold is not None
            and self.context_tokens >= self.threshold
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "line": self.line,
            "uuid": self.uuid,
            "timestamp": self.timestamp,
            "message_id": self.message_id,
            "model": self.model,
            "segment": self.segment,
            "estimated_before": self.estimated_before,
            "context_tokens": self.context_tokens,
            "output_tokens": self.output_tokens,
            "above_warning": self.above_warning,
            "above_autocompact": self.above_autocompact,
            "threshold": self.threshold,
        }


@dataclass(frozen=True)
class ReplayCompaction:
    """A recorded compaction and what the replay says about it."""

    uuid: str | None
    line: int
    timestamp: str | None
    trigger: str | None
    recorded_pre_tokens: int | None
    estimated_pre_tokens: int
    threshold: int | None
    """The auto-compact threshold (None: the release does not compact this model by it)."""
    first_predicted_turn: int | None
    """Index into `turns` of the first call in this segment where both the estimate and the
    measured prompt reach the threshold (a fire the record does not show)."""
    agrees: bool | None
    """For auto compactions: the replay fires at this very point (None for manual ones)."""
    note: str
    decided_by: str = "estimate"
    """`recorded` (the boundary's preTokens decides) or `estimate` (the replay's count)."""
    margin: int | None = None
    """How far over (positive) or under the threshold the deciding count is."""
    close_call: bool = False
    """The deciding count is within 1% of the threshold."""

    @property
    def difference(self) -> int | None:
        if self.recorded_pre_tokens is None:
            return None
        return self.estimated_pre_tokens - self.recorded_pre_tokens

    def to_json(self) -> dict[str, Any]:
        return {
            "uuid": self.uuid,
            "line": self.line,
            "timestamp": self.timestamp,
            "trigger": self.trigger,
            "recorded_pre_tokens": self.recorded_pre_tokens,
            "estimated_pre_tokens": self.estimated_pre_tokens,
            "difference": self.difference,
            "threshold": self.threshold,
            "first_predicted_turn": self.first_predicted_turn,
            "agrees": self.agrees,
            "decided_by": self.decided_by,
            "margin": self.margin,
            "close_call": self.close_call,
            "note": self.note,
        }


@dataclass(frozen=True)
class PredictedFire:
    """A point where auto-compaction would fire but the transcript records none."""

    turn: int
    uuid: str | None
    estimated_before: int
    threshold: int
    measured: int = 0
    """The prompt size the API measured for that call."""

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "uuid": self.uuid,
            "estimated_before": self.estimated_before,
            "measured": self.measured,
            "threshold": self.threshold,
        }


@dataclass(frozen=True)
class ReplayReport:
    """The whole session, call by call."""

    transcript: str
    model: str
    thresholds: Thresholds
    turns: tuple[TurnPoint, ...]
    compactions: tuple[ReplayCompaction, ...]
    unrecorded_fires: tuple[PredictedFire, ...]
    final_tokens: int
    final_method: str
    messages: int
    notes: tuple[str, ...] = field(default_factory=tuple)
    claude: ResolvedVersion | None = None

    @property
    def peak(self) -> int:
        """The largest context the session held: the largest measured one (prompt plus
        output of a call), an estimate where nothing was measured, and never below now."""
        measured = max((t.recorded_total for t in self.turns), default=0)
        return max(measured, self.final_tokens)

    @property
    def peak_source(self) -> str:
        """`recorded` (a call's measured usage), `now` (the current count) or `estimate`."""
        measured = max((t.recorded_total for t in self.turns), default=None)
        if measured is None:
            return "estimate"
        return "recorded" if measured >= self.final_tokens else "now"

    def to_json(self, *, include_turns: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            **(self.claude.to_json() if self.claude else {}),
            "transcript": self.transcript,
            "model": self.model,
            "thresholds": self.thresholds.thresholds_json(),
            "threshold_compaction": self.thresholds.threshold_compaction,
            "effective_window": self.thresholds.effective_window,
            "turn_count": len(self.turns),
            "messages": self.messages,
            "compactions": [c.to_json() for c in self.compactions],
            "unrecorded_fires": [p.to_json() for p in self.unrecorded_fires],
            "final_tokens": self.final_tokens,
            "final_method": self.final_method,
            "peak": self.peak,
            "peak_source": self.peak_source,
            "notes": list(self.notes),
        }
        if include_turns:
            data["turns"] = [t.to_json() for t in self.turns]
        return data


def replay_messages(
    messages: Sequence[Entry],
    *,
    thresholds_for: Callable[[str | None], Thresholds],
    default_model: str,
    transcript: str = "<memory>",
    sidechain: bool = False,
    claude: ResolvedVersion | None = None,
) -> ReplayReport:
    """Replay main-chain `messages` in order (see module docstring)."""
    return replay_rows(
        ((e.line, e.raw) for e in messages),
        thresholds_for=thresholds_for,
        default_model=default_model,
        transcript=transcript,
        sidechain=sidechain,
        claude=claude,
    )


def replay_rows(
    rows: Iterable[tuple[int, dict[str, Any]]],
    *,
    thresholds_for: Callable[[str | None], Thresholds],
    default_model: str,
    transcript: str = "<memory>",
    sidechain: bool = False,
    claude: ResolvedVersion | None = None,
) -> ReplayReport:
    """Replay (line number, entry dict) pairs of the main chain, in order."""
    return replay_lines(
        (meter_line(raw, line_no) for line_no, raw in rows),
        thresholds_for=thresholds_for,
        default_model=default_model,
        transcript=transcript,
        sidechain=sidechain,
        claude=claude,
    )


def replay_lines(
    lines: Iterable[MeterLine],
    *,
    thresholds_for: Callable[[str | None], Thresholds],
    default_model: str,
    transcript: str = "<memory>",
    sidechain: bool = False,
    claude: ResolvedVersion | None = None,
) -> ReplayReport:
    """Replay the main chain's lines, read to the facts the meter needs, in order."""
    meter = ContextMeter(sidechain=sidechain)
    turns: list[TurnPoint] = []
    compactions: list[ReplayCompaction] = []
    unrecorded: list[PredictedFire] = []
    segment = 0
    segment_fire: int | None = None
    current_id: str | None = None
    current_turn: TurnPoint | None = None
    model = default_model
    # From 2.1.153 no auto-compaction follows a session's first reply (the check runs from
    # the second on); 2.1.88 checks before every call.
    first_reply_fires = claude.profile.auto_compact.checks_after_first_reply if claude else True

    def close_turn() -> None:
        nonlocal current_turn, segment_fire
        if current_turn is not None:
            if current_turn.confirmed_fire and segment_fire is None:
                segment_fire = len(turns)
            turns.append(current_turn)
            current_turn = None

    ladders: dict[str | None, Thresholds] = {}

    def ladder_for(name: str | None) -> Thresholds:
        # One ladder per model for the whole replay (a session has a few models at most).
        found = ladders.get(name)
        if found is None:
            found = ladders[name] = thresholds_for(name)
        return found

    index = -1
    # A recorded compaction's facts, judged once the turns after it are known (`_judge`).
    pending: list[tuple[MeterLine, int, Thresholds, int | None, int]] = []
    command_after: list[bool] = []
    lookahead = 0
    add = meter.add_line
    for index, row in enumerate(lines):  # noqa: B007 - index is used after the loop
        kind = row.kind
        if lookahead and kind == "user":
            # A `/compact` typed by the user leaves its command lines right after the summary.
            lookahead -= 1
            if is_compact_command(row):
                command_after[-1] = True
        if row.boundary:
            close_turn()
            ladder = ladder_for(model)
            estimate = meter.count
            slack = meter.padded_count - estimate if ladder.estimate_padding else 0
            pending.append((row, estimate, ladder, segment_fire, slack))
            command_after.append(False)
            lookahead = _COMMAND_LOOKAHEAD
            add(row)
            segment += 1
            segment_fire = None
            current_id = None
            continue
        usage = row.usage
        if usage is not None and kind == "assistant":
            response_id = row.response_id
            if response_id is not None and response_id != current_id:
                # A new API call: Claude Code checked the threshold just before it.
                close_turn()
                current_id = response_id
                if row.model is not None:
                    model = row.model
                ladder = ladder_for(model)
                before = meter.count
                checked = meter.padded_count if ladder.estimate_padding else before
                fires = (
                    ladder.auto_compact_enabled
                    and checked >= ladder.autocompact
                    and (first_reply_fires or len(turns) >= 2)
                )
                current_turn = TurnPoint(
                    index=index,
                    line=row.line,
                    uuid=row.uuid,
                    timestamp=row.timestamp,
                    message_id=response_id,
                    model=model,
                    segment=segment,
                    estimated_before=before,
                    context_tokens=context_tokens_from_usage(usage),
                    output_tokens=_output(usage),
                    above_warning=before >= ladder.warning,
                    above_autocompact=fires,
                    threshold=ladder.autocompact if ladder.auto_compact_enabled else None,
                )
            elif current_turn is not None and response_id == current_id:
                # Later records of one response carry its growing output count.
                output = _output(usage)
                if output > current_turn.output_tokens:
                    current_turn = msgspec.structs.replace(current_turn, output_tokens=output)
        add(row)
    close_turn()
    for inputs, by_command in zip(pending, command_after, strict=True):
        boundary, estimate, ladder, segment_fire, slack = inputs
        compactions.append(
            _judge(
                boundary,
                estimate,
                ladder,
                segment_fire,
                turns,
                by_command=by_command,
                slack=slack,
            )
        )

    # Crossings in segments that no recorded auto-compaction closed.
    recorded_segments = {
        i for i, c in enumerate(compactions) if c.trigger == "auto" and c.agrees is not None
    }
    seen_segments: set[int] = set()
    for turn_index, turn in enumerate(turns):
        if turn.confirmed_fire and turn.segment not in seen_segments:
            seen_segments.add(turn.segment)
            if turn.segment not in recorded_segments:
                assert turn.threshold is not None
                unrecorded.append(
                    PredictedFire(
                        turn_index,
                        turn.uuid,
                        turn.estimated_before,
                        turn.threshold,
                        measured=turn.context_tokens,
                    )
                )
    ladder = ladder_for(model)
    notes: list[str] = []
    if not turns:
        notes.append("no API response with usage in this transcript")
    notes.extend(ladder.notes)
    return ReplayReport(
        transcript=transcript,
        model=model,
        thresholds=ladder,
        turns=tuple(turns),
        compactions=tuple(compactions),
        unrecorded_fires=tuple(unrecorded),
        final_tokens=meter.count,
        final_method=meter.method,
        messages=index + 1,
        notes=tuple(notes),
        claude=claude,
    )


def _judge(
    boundary: MeterLine,
    estimate: int,
    ladder: Thresholds,
    segment_fire: int | None,
    turns: Sequence[TurnPoint],
    *,
    by_command: bool = False,
    slack: int = 0,
) -> ReplayCompaction:
    """What the replay makes of one recorded compaction.

    Where the boundary records `preTokens`, that count decides whether the threshold was
    reached (the transcript lacks some of what Claude Code counted, so the rebuilt estimate
    can sit a little either side); otherwise the estimate decides. Either way the note says
    how close the call was.
    """
    trigger, recorded = boundary.trigger, boundary.pre_tokens
    threshold = ladder.autocompact if ladder.threshold_compaction else None
    agrees: bool | None = None
    decided_by = "recorded" if recorded is not None else "estimate"
    deciding = recorded if recorded is not None else estimate
    margin = deciding - threshold if threshold is not None else None
    close = margin is not None and threshold is not None and abs(margin) <= CLOSE_CALL * threshold
    if by_command:
        note = (
            "the user ran /compact (session-memory compaction records it as auto): "
            "no threshold involved"
            if trigger == "auto"
            else "a manual /compact: no threshold involved"
        )
        close = False
    elif trigger not in (None, "auto", "manual"):
        note = f"a {trigger} compaction: not triggered by the threshold"
        close = False
    elif trigger == "auto" and threshold is None:
        note = (
            f"Claude Code {ladder.claude_version} does not compact {ladder.model} by threshold: "
            + (
                "this compaction came when the API refused the prompt as too long (reactive), "
                "unless CLAUDE_CODE_AUTO_COMPACT_WINDOW was set for the session"
                if ladder.reactive_compaction
                else "it was set off some other way"
            )
        )
    elif trigger == "auto":
        assert threshold is not None and margin is not None
        fires_here = margin >= -slack
        earlier = segment_fire is not None
        matches = recorded is None or abs(estimate - recorded) <= AGREEMENT_TOLERANCE * recorded
        agrees = fires_here and not earlier and matches
        note = _auto_note(recorded, estimate, threshold, margin, slack, close, fires_here, matches)
        if earlier:
            assert segment_fire is not None
            fire = turns[segment_fire]
            note = (
                f"the replay would have fired {plural(len(turns) - segment_fire, 'call')} earlier, at "
                f"{fire.estimated_before:,} tokens (measured {fire.context_tokens:,}); " + note
            )
    elif trigger == "manual":
        note = "a manual /compact: no threshold involved"
        close = False
    else:
        note = "boundary without a trigger"
        close = False
    return ReplayCompaction(
        uuid=boundary.uuid,
        line=boundary.line,
        timestamp=boundary.timestamp,
        trigger=trigger,
        recorded_pre_tokens=recorded,
        estimated_pre_tokens=estimate,
        threshold=threshold,
        first_predicted_turn=segment_fire,
        agrees=agrees,
        note=note,
        decided_by=decided_by,
        margin=margin,
        close_call=close,
    )


def _auto_note(
    recorded: int | None,
    estimate: int,
    threshold: int,
    margin: int,
    slack: int,
    close: bool,
    fires_here: bool,
    matches: bool,
) -> str:
    """One sentence on an auto compaction: whether it fired at the threshold, by how much."""
    side = f"{abs(margin):,} {'over' if margin >= 0 else 'under'} the {threshold:,} threshold"
    if recorded is None:
        head = f"the replay's estimate, {estimate:,}, is {side}"
    else:
        head = f"the recorded {recorded:,} is {side}"
    if close:
        head += ": a close call"
    if recorded is not None:
        gap = estimate - recorded
        head += f" (the replay's estimate, {estimate:,}, is {gap:+,} from the record)"
    if not fires_here:
        return f"stays below the threshold here: {head}"
    if margin < 0:
        head += f", within the {slack:,} tokens Claude Code's padded check counts beyond its record"
    if not matches:
        return f"fires here, but the estimate is off: {head}"
    return f"fires here: {head}"


_COMMAND_LOOKAHEAD = 6


def replay_transcript(
    transcript: Transcript,
    *,
    thresholds_for: Callable[[str | None], Thresholds],
    default_model: str,
    claude: ResolvedVersion | None = None,
) -> ReplayReport:
    """Replay a loaded transcript's main chain."""
    return replay_messages(
        transcript.messages,
        thresholds_for=thresholds_for,
        default_model=default_model,
        transcript=transcript.path,
        sidechain=transcript.is_subagent,
        claude=claude,
    )


def replay_file(
    path: str | os.PathLike[str],
    *,
    thresholds_for: Callable[[str | None], Thresholds],
    default_model: str,
    claude: ResolvedVersion | None = None,
    on_progress: ProgressCallback | None = None,
) -> ReplayReport:
    """Replay a transcript file in one streaming pass, without keeping its entries.

    This is the fast path for big files: each line is decoded as it is read, only to the
    fields the meter needs (`meter_lines.lean_meter_line`), and only main-chain messages
    (each uuid once) reach the meter. `on_progress` hears how many bytes were read (every
    few thousand lines; it may raise `OperationCancelled` to stop).
    """
    target = Path(path)
    try:
        # A regular file only (a FIFO would never end); lines are streamed, each bounded.
        handle = open_stream(target, buffering=1 << 20)
    except FileNotFoundError:
        raise NotFoundError(f"no transcript at {target}") from None
    except IsADirectoryError:
        raise UserInputError(f"{target} is a folder, not a transcript file") from None
    with handle, collection_paused():
        total = os.fstat(handle.fileno()).st_size
        reporter = Reporter(on_progress, "replaying", total, unit="bytes")
        reporter(0, force=True)
        lines = _main_chain_lines(handle, reporter if reporter.active else None)
        first = next(lines, None)
        # A subagent's own file holds only sidechain lines; its chain is the main one.
        sidechain = first is not None and first.sidechain
        # Lines of the other chain are dropped at C speed (no Python frame per line).
        keep = filter if sidechain else itertools.filterfalse
        stream = keep(_SIDECHAIN, itertools.chain([first] if first else [], lines))
        report = replay_lines(
            stream,
            thresholds_for=thresholds_for,
            default_model=default_model,
            transcript=str(target),
            sidechain=sidechain,
            claude=claude,
        )
        reporter.finish()
        return report


_SIDECHAIN = operator.attrgetter("sidechain")
_PROGRESS_EVERY = 4096
"""Lines between progress reports (a report reads the file position)."""


def _main_chain_lines(handle: Any, reporter: Reporter | None = None) -> Iterator[MeterLine]:
    """Each message line once (by uuid), read to its meter facts, in file order."""
    seen: set[str] = set()
    pieces = line_pieces(handle)  # bounded lines at C speed: this loop is the replay's cost
    drift = 0  # extra pieces runaway lines took, so numbers stay one per line
    # Locals, not globals, in the loop that runs once per line of a 100 MB file. Lines are
    # not sniffed for their type first: the lean decoder skips a progress line's fields
    # faster than the sniff reads its bytes.
    limit, read, remember = TRANSCRIPT_LINE_LIMIT, lean_meter_line, seen.add
    for number, line in enumerate(pieces, 1):
        if reporter is not None and number % _PROGRESS_EVERY == 0:
            reporter(handle.tell())
        if len(line) > limit and line[-1] != 10:
            drift += skip_rest_of_line(pieces)
            continue  # a runaway line: read past it, never parsed
        row = read(line, number - drift)
        if row is None:
            continue
        uuid = row.uuid
        if uuid is not None:
            if uuid in seen:
                continue
            remember(uuid)
        yield row


def _output(usage: Mapping[str, Any]) -> int:
    value = usage.get("output_tokens")
    return value if isinstance(value, int) else 0
