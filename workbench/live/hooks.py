"""Claude Code's hook events, answered from the engine.

`workbench hook EVENT` gets Claude Code's hook JSON on stdin and answers on stdout in Claude
Code's hook output format. What each event does:

- SessionStart: what of MEMORY.md loaded, what fell off, dangling and stale entries, as a
  message to the user (`systemMessage`); the model sees it only with `--context`.
- PreCompact: a snapshot of the span about to be compacted (the engine's dry run).
- PostCompact: the survival check of the summary Claude Code wrote against that snapshot,
  kept as the compaction's loss report.
- Stop / SessionEnd: nothing, unless `--propose`: then the extraction agent runs with its
  writes queued for review (in the background unless `--foreground`).

A hook must never get in the user's way: bad input is a one-line message on stderr with
exit code 1, which Claude Code reports without blocking anything (exit code 2 would block
compaction or stopping, so it is never used).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.errors import UserInputError
from workbench.engine.records import Record
from workbench.engine.wording import plural

if TYPE_CHECKING:
    from workbench.engine import Engine
    from workbench.engine.context.compaction_log import CompactionRecord
    from workbench.engine.memories.models import IndexReport

EVENTS = ("SessionStart", "PreCompact", "PostCompact", "Stop", "SessionEnd")
PREFIX = "Memory Workbench"
MAX_NAMED = 3
"""How many entries, files or facts a message names before it says "and N more"."""
MAX_NAME_CHARS = 80
"""A name (an entry's title, a file, a fact) is shown up to this many characters: an index
line alone can be 25,000 characters long."""
CONTEXT_BUDGET = 3_000
"""The most characters `--context` adds to the model's context. It is added at the start of
every session, before the user says anything, so it stays a small fixed cost (under 1,000
tokens): a few dozen names tell the model what kind of memory it is missing, and the rest are
counted ("and N more"), since their files are still in the memory folder to be read."""


class HookOptions(Record):
    """How the hook was configured (flags on its command line)."""

    context: bool = False
    """SessionStart: also hand the report to the model as additional context."""
    quiet: bool = False
    """SessionStart: say nothing when MEMORY.md loads whole and nothing is wrong."""
    propose: bool = False
    """Stop / SessionEnd: run extraction with its writes queued for review."""
    foreground: bool = False
    """Stop / SessionEnd with `propose`: wait for the extraction instead of detaching it."""
    wait_seconds: float = 2.0
    """How long to wait for Claude Code's transcript to catch up: PostCompact, for the summary
    record when the hook input has none; an automatic PreCompact, for the reply that crossed
    the threshold."""


DEFAULT_OPTIONS = HookOptions()


class HookInput(Record):
    """The fields of Claude Code's hook JSON the workbench uses."""

    event: str
    session_id: str | None
    transcript_path: str | None
    cwd: str | None
    raw: Mapping[str, Any]

    def text(self, key: str) -> str | None:
        value = self.raw.get(key)
        return value if isinstance(value, str) else None

    def require_transcript(self) -> str:
        if not self.transcript_path:
            raise UserInputError(f"the {self.event} hook input has no transcript_path")
        return self.transcript_path


def parse_hook_input(event: str, payload: object) -> HookInput:
    """Check the hook JSON against the event it was configured for."""
    if event not in EVENTS:
        raise UserInputError(f"unknown hook event {event!r} (one of {', '.join(EVENTS)})")
    if not isinstance(payload, Mapping):
        raise UserInputError("the hook input must be a JSON object")
    named = payload.get("hook_event_name")
    if isinstance(named, str) and named and named != event:
        raise UserInputError(f"the hook input is for {named}, but this hook handles {event}")

    def text(key: str) -> str | None:
        value = payload.get(key)
        return value if isinstance(value, str) and value else None

    return HookInput(event, text("session_id"), text("transcript_path"), text("cwd"), payload)


def answer(
    event: str,
    hook: HookInput,
    open_engine: Callable[[str | None], Engine],
    options: HookOptions = DEFAULT_OPTIONS,
) -> dict[str, Any] | None:
    """The JSON to print for one hook call (None: print nothing)."""
    if event == "SessionStart":
        return session_start(open_engine(hook.cwd), hook, options)
    if event == "PreCompact":
        return pre_compact(open_engine(hook.cwd), hook, options)
    if event == "PostCompact":
        return post_compact(open_engine(hook.cwd), hook, options)
    return turn_end(open_engine, hook, options)


def _shown(name: str) -> str:
    """`name` as a message shows it: secrets redacted (Claude Code's rules), then cut short.

    Redaction is imported here, when there is a name to show, so a session whose index loads
    whole never pays for it.
    """
    from workbench.engine.team.secrets.redaction import redact_secrets

    text = redact_secrets(name)  # before the cut, which could leave a secret no rule matches
    return text if len(text) <= MAX_NAME_CHARS else text[: MAX_NAME_CHARS - 1] + "…"


def _more(names: Sequence[str], limit: int = MAX_NAMED, *, total: int | None = None) -> str:
    """The first `limit` names, then "and N more" out of `total` (default: all of `names`)."""
    total = len(names) if total is None else total
    shown = [_shown(n) for n in names[:limit]]
    rest = total - len(shown)
    return ", ".join(shown) + (f" and {rest:,} more" if rest > 0 else "")


def _fit(names: Sequence[str], room: int, *, total: int, sep: str = ", ") -> str:
    """As many names as fit in `room` characters, then "and N more" out of `total`."""
    shown: list[str] = []
    used = 0
    tail = len(f" and {total:,} more")
    for name in names:
        text = _shown(name)
        if used + len(sep) + len(text) + tail > room:
            break
        shown.append(text)
        used += len(sep) + len(text)
    rest = total - len(shown)
    return sep.join(shown) + (f" and {rest:,} more" if rest > 0 else "")


# --- SessionStart -----------------------------------------------------------------------


class LoadSummary(Record):
    """What of one MEMORY.md loads, in the terms the messages use."""

    name: str
    exists: bool
    entries: int
    loaded: int
    dropped: tuple[str, ...]
    """Titles (or text) of the entries past the cut."""
    reason: str | None
    dangling: tuple[str, ...]
    stale: tuple[tuple[str, int], ...]
    """Loaded entries whose memory file has not changed for a long time: (target, days)."""
    length: int
    lines: int
    max_lines: int = 200
    max_length: int = 25_000
    dropped_lines: int = 0
    """Lines past the cut, entries or not."""
    loaded_lines: int = 0
    unlisted_lines: int = 0
    """Lines past the ones the report itemises: entries there are counted as lines."""

    @property
    def dropped_total(self) -> int:
        """How many fell off: entries when every line was itemised, else lines."""
        return self.dropped_lines if self.unlisted_lines else len(self.dropped)

    @property
    def problems(self) -> bool:
        # A cut index is one even when every entry is above the cut: its text below is lost.
        return bool(self.dropped or self.dangling or self.stale or self.reason)


def load_summary(
    report: IndexReport, name: str, folder: str, *, now: float, stale_days: int
) -> LoadSummary:
    """Sum up a load report: dropped entries, dangling links, stale loaded entries."""
    entries = [e for e in report.entries if e.target or e.title]
    dropped = tuple((e.title or e.text).strip() for e in entries if not e.loaded)
    stale: list[tuple[str, int]] = []
    for entry in entries:
        if not entry.loaded or not entry.target_exists or not entry.target:
            continue
        try:
            mtime = (Path(folder) / entry.target.strip("<>")).stat().st_mtime
        except (OSError, ValueError):
            continue
        days = int((now - mtime) // 86_400)
        if days > stale_days:
            stale.append((entry.target.strip("<>"), days))
    reason = None
    # The character limit is checked on the whole file, but applied after the line cut: it
    # did the cut only when fewer lines load than the line limit alone would keep.
    whole = min(report.line_count, report.max_lines)
    if report.length_truncated and report.loaded_lines < whole:
        reason = f"at the {report.max_length:,}-character limit, after line {report.loaded_lines}"
    elif report.line_truncated:
        reason = f"past line {report.max_lines}"
    return LoadSummary(
        name=name,
        exists=report.exists,
        entries=len(entries),
        loaded=sum(1 for e in entries if e.loaded),
        dropped=dropped,
        reason=reason,
        dangling=tuple(report.dangling),
        stale=tuple(sorted(stale, key=lambda s: -s[1])),
        length=report.length,
        lines=report.line_count,
        max_lines=report.max_lines,
        max_length=report.max_length,
        dropped_lines=report.dropped_lines,
        loaded_lines=report.loaded_lines,
        unlisted_lines=report.unlisted_lines,
    )


def describe_load(summary: LoadSummary) -> list[str]:
    """The lines that tell the user how one index loaded."""
    if not summary.exists:
        return [f"{summary.name}: none yet, so no memory index is loaded"]
    if summary.dropped:
        if summary.unlisted_lines:
            loaded = f"{summary.loaded_lines:,} of {plural(summary.lines, 'line')}"
        else:
            loaded = f"{summary.loaded:,} of {plural(summary.entries, 'entry')}"
        head = (
            f"{summary.name}: {loaded} loaded; {summary.dropped_total:,} fell off "
            f"{summary.reason}: {_more(summary.dropped, total=summary.dropped_total)}"
        )
    else:
        size = (
            f"({summary.lines} of {summary.max_lines} lines, "
            f"{summary.length:,} of {summary.max_length:,} characters)"
        )
        head = f"{summary.name}: all {plural(summary.entries, 'entry')} loaded"
        if summary.reason:
            # Every entry is above the cut, but the text below it (notes pasted into the
            # index) never reaches the model: say so rather than "all loaded".
            head += (
                f", but {plural(summary.dropped_lines, 'line')} below them fell off "
                f"{summary.reason}"
            )
        head += f" {size}"
    lines = [head]
    if summary.dangling:
        lines.append(
            f"  {plural(len(summary.dangling), 'link')} to missing files: {_more(summary.dangling)}"
        )
    if summary.stale:
        named = [f"{_shown(target)} ({days} days)" for target, days in summary.stale[:MAX_NAMED]]
        more = len(summary.stale) - len(named)
        lines.append(
            f"  {plural(len(summary.stale), 'loaded entry')} not updated "
            f"for over a month: {', '.join(named)}" + (f" and {more:,} more" if more else "")
        )
    return lines


def model_context(summaries: Sequence[LoadSummary]) -> str | None:
    """What the model is told with `--context`: the memories it will not see in the index."""
    parts: list[tuple[str, Sequence[str], int, str]] = []
    for summary in summaries:
        if summary.dropped:
            head = (
                f"{summary.name} was cut {summary.reason}, so these entries are not in the "
                "loaded index; their memory files still exist and can be read when relevant: "
            )
            parts.append((head, summary.dropped, summary.dropped_total, "; "))
        if summary.dangling:
            head = f"{summary.name} links to files that do not exist: "
            parts.append((head, summary.dangling, len(summary.dangling), ", "))
    if not parts:
        return None
    # Each note gets an equal share of the budget (a newline between them).
    share = (CONTEXT_BUDGET - len(parts) + 1) // len(parts)
    notes = [
        head + _fit(names, share - len(head), total=total, sep=sep)
        for head, names, total, sep in parts
    ]
    return "\n".join(notes)


def session_start(engine: Engine, hook: HookInput, options: HookOptions) -> dict[str, Any] | None:
    """Report what of MEMORY.md (and the team index) Claude Code loaded for this session."""
    from workbench.engine.memories.lint import STALE_AFTER_DAYS

    locations = engine.locations
    if not locations.auto_memory_enabled:
        if options.quiet:
            return None
        return {"systemMessage": f"{PREFIX}: auto memory is off for this project"}
    now = time.time()
    summaries = [
        load_summary(
            engine.memories.index(False),
            "MEMORY.md",
            locations.memory_dir,
            now=now,
            stale_days=STALE_AFTER_DAYS,
        )
    ]
    if os.path.isfile(locations.team_entrypoint):
        summaries.append(
            load_summary(
                engine.memories.index(True),
                "team MEMORY.md",
                locations.team_dir,
                now=now,
                stale_days=STALE_AFTER_DAYS,
            )
        )
    if options.quiet and not any(s.problems for s in summaries):
        return None
    lines = [line for s in summaries for line in describe_load(s)]
    out: dict[str, Any] = {"systemMessage": f"{PREFIX}: " + "\n".join(lines)}
    context = model_context(summaries) if options.context else None
    if context:
        out["hookSpecificOutput"] = {"hookEventName": "SessionStart", "additionalContext": context}
    return out


# --- PreCompact and PostCompact ---------------------------------------------------------


def pre_compact(engine: Engine, hook: HookInput, options: HookOptions) -> dict[str, Any]:
    """Snapshot the span Claude Code is about to compact."""
    record = engine.context.compaction_log.snapshot(
        hook.require_transcript(),
        session_id=hook.session_id,
        trigger=hook.text("trigger"),
        custom_instructions=hook.text("custom_instructions"),
        wait_seconds=options.wait_seconds,
    )
    snap = record.snapshot
    assert snap is not None
    return {
        "systemMessage": (
            f"{PREFIX}: saved what this compaction replaces ("
            f"{plural(snap.summarised_messages, 'message')}, "
            f"{plural(snap.fact_count, 'fact')} to check against the summary)"
        ),
        "suppressOutput": True,
    }


def describe_loss(record: CompactionRecord) -> str:
    """One message: how much of the span the summary kept, and what it lost."""
    report = record.report
    if report is None or not report.checked:
        why = report.note if report else "no loss report"
        return f"{PREFIX}: this compaction could not be checked: {why}"
    snap = record.snapshot
    total = snap.fact_count if snap else 0
    if not report.lost_count:
        return f"{PREFIX}: the summary kept all {plural(total, 'fact')} of the compacted span"
    parts = [f"{kind} {_more(list(values))}" for kind, values in report.lost.items() if values]
    return (
        f"{PREFIX}: the summary lost {report.lost_count} of {plural(total, 'fact')}: "
        + " · ".join(parts)
    )


def post_compact(engine: Engine, hook: HookInput, options: HookOptions) -> dict[str, Any]:
    """Check the summary Claude Code wrote against the PreCompact snapshot."""
    record = engine.context.compaction_log.finish(
        hook.require_transcript(),
        session_id=hook.session_id,
        trigger=hook.text("trigger"),
        hook_summary=hook.text("compact_summary"),
        wait_seconds=options.wait_seconds,
    )
    return {"systemMessage": describe_loss(record), "suppressOutput": True}


# --- Stop and SessionEnd ----------------------------------------------------------------


def turn_end(
    open_engine: Callable[[str | None], Engine], hook: HookInput, options: HookOptions
) -> dict[str, Any] | None:
    """With `--propose`, run extraction with its writes queued for review."""
    if not options.propose:
        return None
    transcript = hook.require_transcript()
    if hook.raw.get("stop_hook_active") is True:
        return None  # a Stop hook already continued this turn once
    if not options.foreground:
        _detach_extraction(transcript, hook.cwd)
        return None
    return _extract_now(open_engine(hook.cwd), transcript)


def _extract_now(engine: Engine, transcript: str) -> dict[str, Any] | None:
    import asyncio

    agent = engine.agents.extraction
    plan = agent.plan(transcript)
    if not plan.step.should_run or plan.request is None:
        return None
    if not engine.env.get("ANTHROPIC_API_KEY"):
        return {
            "systemMessage": f"{PREFIX}: extraction needs ANTHROPIC_API_KEY; nothing proposed",
            "suppressOutput": True,
        }
    result = asyncio.run(agent.run(plan, mode="propose"))
    if not result.changes:
        return None
    return {
        "systemMessage": (
            f"{PREFIX}: extraction proposed {plural(len(result.changes), 'memory change')} "
            "for review (workbench review list)"
        ),
        "suppressOutput": True,
    }


def _detach_extraction(transcript: str, cwd: str | None) -> None:
    """Start `workbench extract` on its own, so the session never waits for the model."""
    import subprocess

    from workbench.paths import state_dir

    command = [sys.executable, "-m", "workbench", "extract", transcript]
    if cwd:
        command += ["--project", cwd]
    log = state_dir("logs") / "extract-hook.log"
    with open(log, "ab") as out:
        subprocess.Popen(  # noqa: S603 - our own interpreter and module
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
        )
