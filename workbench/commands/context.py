"""Context commands: transcripts, gauge, statusline, compact-preview, session-memory, replay."""

from __future__ import annotations

import functools
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from workbench.commands.common import (
    ExitCode,
    add_command,
    add_session_arguments,
    emit,
    escape,
    open_engine,
    plain,
    resolve_session,
    wants_json,
    warn,
    with_claude,
)
from workbench.engine.context.views import DEFAULT_FORMAT as STATUS_FORMAT
from workbench.engine.context.views import FIELDS as STATUS_FIELDS
from workbench.engine.errors import UserInputError
from workbench.engine.models import plural

if TYPE_CHECKING:
    import argparse

    from rich.console import Console, JustifyMethod

    from workbench.engine.context.gauge import GaugeReport


STATUSLINE_DEFAULTS: dict[str, Any] = {"format": None, "color": "auto", "no_badge": False}
"""`workbench statusline` with no options: what the CLI's fast path answers without a parser."""


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    import argparse

    add = functools.partial(add_command, subparsers, common)

    add("transcripts", run_transcripts, "list this project's sessions, newest first")

    gauge = add("gauge", run_gauge, "how full the context is, on Claude Code's threshold ladder")
    add_session_arguments(gauge)
    gauge.add_argument("--model", metavar="M", help="judge against this model's limits")
    gauge.add_argument("--follow", action="store_true", help="keep watching; one line per change")
    gauge.add_argument(
        "--beta",
        metavar="NAME",
        action="append",
        default=[],
        help="an API beta Claude Code runs with (context-1m-2025-08-07 gives 1M on Sonnet 4)",
    )
    gauge.add_argument(
        "--measure",
        action="store_true",
        help="also count the messages with cl100k and, when a key is set, the API",
    )
    gauge.add_argument("--updates", type=int, default=None, help=argparse.SUPPRESS)

    status = add(
        "statusline", run_statusline, "one gauge line for Claude Code's status line (JSON on stdin)"
    )
    status.add_argument(
        "--format",
        metavar="TEMPLATE",
        default=STATUSLINE_DEFAULTS["format"],
        help="fields in braces: "
        + ", ".join("{" + name + "}" for name in STATUS_FIELDS)
        + f" (default: {STATUS_FORMAT!r})",
    )
    status.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default=STATUSLINE_DEFAULTS["color"],
        help="ANSI colours at the warning, auto-compact and blocking thresholds "
        "(auto: on unless NO_COLOR is set)",
    )
    status.add_argument(
        "--no-badge", action="store_true", help="leave out the MEMORY.md truncation badge"
    )

    preview = add(
        "compact-preview", run_compact_preview, "what each kind of compaction would do, now"
    )
    add_session_arguments(preview)
    preview.add_argument(
        "--session-memory", metavar="FILE", help="session notes (default: the session's own)"
    )
    preview.add_argument(
        "--last-summarized", metavar="UUID", help="the last message the notes already cover"
    )
    preview.add_argument("--model", metavar="M")
    preview.add_argument(
        "--summary", metavar="FILE", help="a summary to check for lost paths, commands, numbers"
    )
    preview.add_argument(
        "--ptl-gap", metavar="TOKENS", type=int, help="preview the prompt-too-long retry's cut"
    )
    preview.add_argument(
        "--request", action="store_true", help="include the summary request body (JSON)"
    )

    notes = add("session-memory", run_session_memory, "a session's notes against their limits")
    notes.add_argument(
        "action",
        metavar="ACTION",
        nargs="?",
        choices=["show", "update"],
        default="show",
        help="show (default) or update",
    )
    notes.add_argument("--session", metavar="ID", help="a session of this project")
    notes.add_argument("--file", metavar="PATH", help="a summary.md file")
    notes.add_argument(
        "--trigger", metavar="TRANSCRIPT", help="show: where updates would fire over it"
    )
    notes.add_argument("--transcript", metavar="PATH", help="update: the session's transcript")
    notes.add_argument("--dry-run", action="store_true", help="update: show the request only")

    replay = add("replay", run_replay, "every API call's context size and where compaction fires")
    add_session_arguments(replay)
    replay.add_argument("--model", metavar="M")
    replay.add_argument("--no-turns", action="store_true", help="leave out the per-call list")


# --- transcripts ------------------------------------------------------------------------


def run_transcripts(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    sessions = engine.context.sessions()
    data = [s.to_json() for s in sessions]

    def human(con: Console) -> None:
        from rich.table import Table

        if not sessions:
            con.print(f"No sessions in {engine.context.transcripts_dir}", markup=False)
            return
        table = Table(box=None, pad_edge=False)
        table.add_column("session", no_wrap=True, min_width=8)
        table.add_column("last activity", no_wrap=True, min_width=16)
        table.add_column("msgs", justify="right", no_wrap=True, min_width=5)
        table.add_column("context", justify="right", no_wrap=True, min_width=7)
        table.add_column("cmp", justify="right", no_wrap=True, min_width=3)
        table.add_column("title", no_wrap=True)
        # Rich drops whole columns when a row is too wide, so the title is cut to fit here.
        room = max(20, con.width - 51)
        for s in sessions:
            table.add_row(
                s.session_id[:8],
                (s.last_timestamp or s.mtime)[:16].replace("T", " "),
                f"{s.messages:,}",
                f"{s.context_tokens:,}",
                str(s.compactions),
                plain(_cut(s.title or "", room)),
            )
        con.print(table)

    emit(args, data, human)
    return ExitCode.OK


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# --- gauge ------------------------------------------------------------------------------


def run_gauge(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    service = engine.context
    path = resolve_session(engine, args)
    if args.follow:
        return _follow(args, engine, path)
    report = service.gauge(str(path), model=args.model, betas=tuple(args.beta))
    data = report.to_json()
    if args.measure:
        measured = service.measure(
            report.transcript or "",
            api=bool(engine.env.get("ANTHROPIC_API_KEY")),
            model=report.model,
        )
        data["measurements"] = measured.to_json()
    emit(args, data, lambda con: _render_gauge(con, report, data.get("measurements")))
    return ExitCode.OK


def _follow(args: argparse.Namespace, engine: Any, path: Any) -> int:
    follower = engine.context.follower(str(path), model=args.model)
    limit = args.updates  # hidden: stop after N readings (tests, scripts)
    printed = [0]

    def done() -> bool:
        return limit is not None and printed[0] >= limit

    for report in follower.watch(stop=done if limit is not None else None):
        if wants_json(args):
            line = json.dumps(report.to_json(), separators=(",", ":"), ensure_ascii=False)
        else:
            line = report.status_line()
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        printed[0] += 1
        if done():
            break
    return ExitCode.OK


def _render_gauge(con: Console, report: GaugeReport, measurements: Any = None) -> None:
    from rich.table import Table

    t = report.thresholds
    con.print(f"[bold]{escape(str(report.transcript))}[/bold]")
    if report.claude is not None:
        con.print(f"rules of {report.claude.describe()}", markup=False)
    con.print(
        f"model {report.model} ({report.model_source}) · window {t.context_window:,} "
        f"({t.context_window_source}) · max output {t.max_output_tokens:,} · "
        f"reserved {t.reserved:,} · effective {t.effective_window:,}"
    )
    width = 50
    top = max(t.effective_window, report.used, 1)
    filled = min(width, round(report.used / top * width))
    rungs = [t.warning]
    rungs += [t.autocompact] if t.threshold_compaction else []
    rungs += [t.blocking] if t.blocking_enabled else []
    marks = {round(v / top * width) for v in rungs if v <= top}
    bar = "".join(
        "│" if i in marks and i >= filled else ("█" if i < filled else "░") for i in range(width)
    )
    con.print(f"[{bar}] {report.used:,} used ({report.used_method})")
    table = Table(box=None, pad_edge=False, show_header=False)
    table.add_column("rung")
    table.add_column("tokens", justify="right")
    table.add_column("state")
    state = report.state
    rows = [("warning / error", t.warning, state.above_warning)]
    if t.threshold_compaction:
        rows.append(
            (
                "auto-compact"
                + ("" if t.auto_compact_enabled else f" (off: {t.auto_compact_disabled_by})"),
                t.autocompact,
                state.above_autocompact,
            )
        )
    if t.blocking_enabled:
        rows.append(("blocking", t.blocking, state.at_blocking))
    rows.append(("effective window", t.effective_window, report.used >= t.effective_window))
    for name, value, reached in rows:
        table.add_row(
            name, f"{value:,}", "reached" if reached else f"{value - report.used:,} to go"
        )
    con.print(table)
    con.print(
        f"{state.percent_left}% left"
        + (f" · Claude Code shows: {state.label}" if state.label else "")
    )
    if report.last_usage:
        con.print(f"last API-measured context: {report.last_usage.context_tokens:,}")
    if report.compactions:
        listed = ", ".join(
            f"{c.trigger} at {c.pre_tokens:,}" if c.pre_tokens else str(c.trigger)
            for c in report.compactions
        )
        con.print(f"compactions: {listed}")
    for override in t.overrides:
        con.print(
            f"env {override.name}={override.value}: {override.effect or 'no effect'}", markup=False
        )
    if measurements:
        con.print(
            "measured: "
            + ", ".join(f"{k} {v:,}" for k, v in measurements.items() if isinstance(v, int))
        )
    for note in report.notes:
        con.print(f"note: {note}")
    for problem in report.problems:
        con.print(f"note: {problem}", markup=False)
    if report.claude is not None:
        for note in report.claude.profile.notes(unobserved=False):
            con.print(f"note: {note}", markup=False)


# --- statusline -------------------------------------------------------------------------


def run_statusline(args: argparse.Namespace) -> int:
    # Claude Code blanks the status line on a non-zero exit or an empty line, so every
    # problem still prints a short fallback and exits 0; the reason goes to stderr.
    from workbench.engine import Engine

    model = None
    try:
        # Bounded and depth-checked: stdin may be /dev/zero or a 100,000-deep array.
        stdin = getattr(sys.stdin, "buffer", sys.stdin)
        payload = Engine.read_json_input(stdin, "the status-line input")
        if not isinstance(payload, dict):
            raise UserInputError("the status-line input must be a JSON object")
        model = _payload_model(payload)
        engine = open_engine(_with_payload_project(args, payload))
        result = engine.context.statusline(
            payload, fmt=args.format, color=_wants_colour(args), badge=not args.no_badge
        )
    except Exception as exc:  # noqa: BLE001 - the line must never go blank
        from workbench.commands.common import fail
        from workbench.engine.context.views import fallback_line

        fail(exc)
        sys.stdout.write(fallback_line(model) + "\n")
        return ExitCode.OK
    if wants_json(args):
        emit(args, result.to_json())
    else:
        sys.stdout.write(result.line + "\n")
    return ExitCode.OK


def _payload_model(payload: dict[str, Any]) -> str | None:
    model = payload.get("model")
    if isinstance(model, dict):
        name = model.get("display_name") or model.get("id")
        return name if isinstance(name, str) and name else None
    return model if isinstance(model, str) and model else None


def _with_payload_project(args: argparse.Namespace, payload: dict[str, Any]) -> argparse.Namespace:
    """Without --project, the project is the one Claude Code names in the payload."""
    from workbench.commands.common import option
    from workbench.engine.context.views import payload_project

    if option(args, "project"):
        return args
    project = payload_project(payload)
    if project and os.path.isdir(project):
        return type(args)(**{**vars(args), "project": project})
    return args


def _wants_colour(args: argparse.Namespace) -> bool:
    """Colour unless told not to: Claude Code reads the line through a pipe and renders
    ANSI, so a TTY check would always say no; NO_COLOR turns it off."""
    if args.color == "always":
        return True
    if args.color == "never":
        return False
    return not os.environ.get("NO_COLOR")


# --- compact-preview --------------------------------------------------------------------


def run_compact_preview(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    service = engine.context
    path = resolve_session(engine, args)
    preview = service.compact_preview(
        str(path),
        session_memory_file=args.session_memory,
        last_summarized=args.last_summarized,
        model=args.model,
        summary_file=args.summary,
        ptl_gap=args.ptl_gap,
        include_request=args.request,
    )
    data = preview.to_json()

    def human(con: Console) -> None:
        sm = preview.session_memory
        full = preview.full
        micro = preview.microcompact
        con.print(
            f"[bold]{escape(str(path))}[/bold]  ({preview.messages:,} messages since the "
            "last boundary)"
        )
        if preview.claude is not None:
            con.print(f"rules of {preview.claude.describe()}", markup=False)
        threshold = (
            f"auto-compact threshold {preview.threshold:,}"
            if preview.threshold_compaction
            else "no threshold compaction"
        )
        con.print(
            f"pre-compaction tokens {preview.pre_tokens:,} · {threshold} · "
            f"{'would' if preview.would_autocompact else 'would not'} "
            f"auto-compact now ({preview.autocompact_reason})"
        )
        for note in preview.notes:
            con.print(f"note: {note}", markup=False)
        con.print(
            f"Claude Code would use: [bold]{preview.chosen.replace('_', '-')}[/bold] compaction"
        )
        con.print("\n[bold]Session-memory compaction[/bold]")
        con.print(f"  {sm.reason}", markup=False)
        if sm.keep_start_index is not None:
            con.print(
                f"  keeps {plural(sm.kept_messages, 'message')} from {sm.keep_start_uuid} · "
                f"{sm.kept_tokens:,} tokens kept + notes ≈{sm.summary_tokens:,} = "
                f"≈{sm.context_after_tokens:,} in context after"
            )
            con.print(
                f"  Claude Code's post-compact count: {sm.post_compact_tokens:,} (the kept "
                "messages only), checked against the auto-compact threshold",
                markup=False,
            )
        for note in sm.adjustments:
            con.print(f"  {note}", markup=False)
        if sm.truncated_sections:
            con.print("  sections cut: " + ", ".join(sm.truncated_sections), markup=False)
        con.print("\n[bold]Full compaction[/bold]")
        con.print(
            f"  summarises {plural(full.summarized_messages, 'message')} · request ≈ "
            f"{full.request_tokens:,} tokens · {plural(full.images_stripped, 'image')} stripped · "
            f"summary up to {full.max_output_tokens:,} tokens"
        )
        if full.ptl:
            con.print(
                f"  prompt-too-long retry: drops {full.ptl.dropped_groups} of {full.ptl.groups} "
                f"rounds ({full.ptl.dropped_tokens:,} tokens)"
            )
        for f in preview.files.files:
            mark = "+" if f.included else "-"
            figure = f"≈{f.tokens:,}" if f.size_note else f"{f.tokens:,}"
            why = ", ".join(note for note in (f.reason, f.size_note or f.source) if note)
            con.print(f"  {mark} {f.path}  {figure} tokens  ({why})", markup=False)
        for s in preview.skills:
            con.print(
                f"  {'+' if s.included else '-'} skill {s.name}  {s.tokens:,} tokens", markup=False
            )
        con.print("\n[bold]Time-based micro-compaction[/bold]")
        con.print(
            f"  would clear {plural(micro.tool_results_cleared, 'tool result')}, saving "
            f"{micro.tokens_saved:,} tokens · {micro.reason}",
            markup=False,
        )
        survival = preview.survival
        kinds = ("paths", "commands", "numbers", "identifiers")
        facts = sum(len(getattr(survival, kind)) for kind in kinds)
        con.print(
            f"\n[bold]Survival check[/bold]  {plural(facts, 'fact')} in the "
            f"{plural(survival.span_messages, 'message')} a summary replaces",
            highlight=False,
        )
        if survival.summary_given:
            lost = sum(len(v) for v in survival.lost().values())
            verdict = f"✗ {lost} lost" if lost else "✓ nothing lost"
            source = survival.summary_source or "the summary"
            con.print(f"  {verdict}, checked against {source}", markup=False, highlight=False)
        elif facts:
            con.print("  no summary to check (--summary FILE checks one); the facts it must keep:")
        for kind in kinds:
            items = getattr(survival, kind)
            if not items:
                continue
            shown = ", ".join(
                i.value + ("" if i.kept is None else (" ✓" if i.kept else " ✗")) for i in items[:8]
            )
            more = f" (+{len(items) - 8} more)" if len(items) > 8 else ""
            con.print(f"  {kind}: {shown}{more}", markup=False)

    emit(args, data, human)
    return ExitCode.OK


# --- session-memory ---------------------------------------------------------------------


def run_session_memory(args: argparse.Namespace) -> int:
    if args.action == "update":
        try:
            from workbench.commands.agents import run_session_memory_update
        except ImportError:
            warn("session-memory update is not available yet in this build")
            return ExitCode.BAD_INPUT
        return int(run_session_memory_update(args))
    if args.transcript or args.dry_run:
        raise UserInputError("--transcript and --dry-run belong to `session-memory update`")
    engine = open_engine(args)
    report = engine.context.session_memory(
        session=args.session, file=args.file, trigger=args.trigger
    )
    claude = (
        engine.claude_for(engine.context.resolve_transcript(args.trigger))
        if args.trigger
        else engine.claude
    )
    note = claude.profile.unobserved("session memory")
    data = with_claude(report.to_json(), claude)
    if note:
        data.setdefault("notes", []).append(note)

    def human(con: Console) -> None:
        from rich.table import Table

        con.print(f"[bold]{escape(str(report.path))}[/bold]")
        if note:
            con.print(f"note: {note}", markup=False)
        if not report.exists:
            con.print("no session notes yet")
            return
        state = "empty (still the template)" if report.is_empty else "written"
        con.print(
            f"{state} · {report.total_tokens:,} of 12,000 tokens"
            + (" · OVER the total" if report.over_total else "")
            + f" · template: {report.template_source}"
        )
        table = Table(box=None, pad_edge=False)
        table.add_column("section")
        table.add_column("tokens", justify="right")
        table.add_column("")
        for s in report.sections:
            table.add_row(plain(s.header), f"{s.tokens:,}", "over 2,000" if s.over_limit else "")
        con.print(table)
        if report.trigger is not None:
            points = report.trigger.points
            con.print(f"updates would fire after {plural(len(points), 'response')}")
            for p in points:
                con.print(f"  {p.uuid}  {p.tokens:,} tokens  ({p.reason})", markup=False)

    emit(args, data, human)
    return ExitCode.OK


# --- replay -----------------------------------------------------------------------------


def run_replay(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    service = engine.context
    path = resolve_session(engine, args)
    from workbench.commands.progress import progress_line

    with progress_line(args) as on_progress:
        report = service.replay(path, model=args.model, on_progress=on_progress)
    data = report.to_json(include_turns=not args.no_turns)

    def human(con: Console) -> None:
        from rich.table import Table

        con.print(f"[bold]{escape(str(path))}[/bold]")
        if report.claude is not None:
            con.print(f"rules of {report.claude.describe()}", markup=False)
        t = report.thresholds
        threshold = (
            f"auto-compact at {t.autocompact:,}"
            if t.threshold_compaction
            else "no threshold compaction"
        )
        con.print(
            f"{len(report.turns)} API calls · peak {report.peak:,} · now {report.final_tokens:,} "
            f"· {threshold} ({report.model})",
            markup=False,
        )
        if report.turns and not args.no_turns:
            table = Table(box=None, pad_edge=False)
            for heading in ("call", "line", "time", "estimated", "reported", "output", "marks"):
                justify: JustifyMethod = "right" if heading not in ("time", "marks") else "left"
                table.add_column(heading, justify=justify, no_wrap=True)
            segment = 0
            for number, turn in enumerate(report.turns, 1):
                marks = []
                if turn.segment != segment:
                    marks.append("after a compaction")
                    segment = turn.segment
                if turn.above_autocompact:
                    marks.append("past auto-compact")
                elif turn.above_warning:
                    marks.append("past warning")
                table.add_row(
                    str(number),
                    str(turn.line),
                    (turn.timestamp or "")[:19].replace("T", " "),
                    f"{turn.estimated_before:,}",
                    f"{turn.context_tokens:,}",
                    f"{turn.output_tokens:,}",
                    ", ".join(marks),
                )
            con.print(table)
        for c in report.compactions:
            verdict = {True: "agrees", False: "disagrees", None: "-"}[c.agrees]
            recorded = f"{c.recorded_pre_tokens:,}" if c.recorded_pre_tokens is not None else "?"
            con.print(
                f"  {c.trigger} compaction at line {c.line}: recorded {recorded}, replay "
                f"{c.estimated_pre_tokens:,} → {verdict}: {c.note}",
                markup=False,
            )
        for p in report.unrecorded_fires:
            con.print(
                f"  would auto-compact before call {p.turn} ({p.estimated_before:,} ≥ "
                f"{p.threshold:,}; measured {p.measured:,}); the transcript shows none"
            )
        for note in report.notes:
            con.print(f"note: {note}")

    emit(args, data, human, compact_when_piped=True)
    return ExitCode.OK
