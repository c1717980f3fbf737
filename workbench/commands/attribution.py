"""`workbench context` and `workbench sessions`: what a session's context is made of, and how
the project's sessions went over time."""

from __future__ import annotations

import argparse
import functools
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
)
from workbench.engine.errors import UserInputError
from workbench.engine.models import plural

if TYPE_CHECKING:
    from rich.console import Console, JustifyMethod

    from workbench.engine.context.attribution_models import AttributionReport
    from workbench.engine.context.session_history import SessionHistory


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    add = functools.partial(add_command, subparsers, common)
    context = add(
        "context",
        run_context,
        "what each API call's context is made of, reconciled with the recorded usage",
    )
    add_session_arguments(context)
    context.add_argument("--model", metavar="M", help="judge against this model's limits")
    context.add_argument("--no-calls", action="store_true", help="leave out the per-call list")
    context.add_argument(
        "--top", metavar="N", type=int, default=10, help="largest items to list (default 10)"
    )
    context.add_argument(
        "--call",
        metavar="N",
        type=int,
        help="the items call N sent, largest first (-1: the last call)",
    )
    sessions = add(
        "sessions",
        run_sessions,
        "this project's sessions over time: peaks, compactions, spend, thresholds reached",
    )
    sessions.add_argument(
        "--no-cache", action="store_true", help="summarise every session again (no cache)"
    )


# --- context ----------------------------------------------------------------------------


def run_context(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    path = resolve_session(engine, args)
    report = engine.context.attribution(path, model=args.model)
    if args.call is not None:
        number = call_number(report, args.call)
        emit(
            args, call_json(report, number), lambda con: render_call(con, report, number, args.top)
        )
        return ExitCode.OK
    data = report.to_json(include_calls=not args.no_calls)
    data["largest"] = data["largest"][: max(0, args.top)]
    emit(args, data, lambda con: render_context(con, report, calls=not args.no_calls, top=args.top))
    return ExitCode.OK


def render_context(con: Console, report: AttributionReport, *, calls: bool, top: int) -> None:
    from rich.table import Table

    from workbench.engine.context.attribution_models import (
        PLOT_GROUPS,
        category_label,
        condensed,
    )

    con.print(f"[bold]{escape(report.transcript)}[/bold]")
    if report.claude is not None:
        con.print(f"rules of {report.claude.describe()}", markup=False)
    con.print(
        f"{len(report.calls):,} API calls · {plural(len(report.compactions), 'compaction')} · "
        f"model {report.model} · overhead {report.overhead:,} (system prompt, tools, "
        "instructions)",
        markup=False,
    )
    last = report.calls[-1] if report.calls else None
    con.print("\n[bold]In context now[/bold] (messages since the last compaction)")
    total = report.current_total
    for category, tokens in sorted(report.current.items(), key=lambda kv: -kv[1]):
        share = tokens / total if total else 0
        bar = "█" * max(1, round(share * 30)) if tokens else ""
        con.print(f"  {category_label(category):<40} {tokens:>9,}  {bar}", markup=False)
    con.print(f"  {'estimate':<40} {total:>9,}", markup=False)
    if last is not None and last.recorded is not None:
        con.print(
            f"  last call (call {last.number}): measured {last.recorded:,}, estimated "
            f"{last.estimate:,}, difference {last.difference:+,}",
            markup=False,
        )
    if calls and report.calls:
        con.print(
            "\n[bold]Per call[/bold] (estimate = the columns summed; difference = measured − estimate)"
        )
        table = Table(box=None, pad_edge=False)
        table.add_column("call", justify="right")
        table.add_column("line", justify="right")
        for _key, name in PLOT_GROUPS:
            table.add_column(name.split(",")[0], justify="right")
        for heading in ("estimate", "measured", "difference"):
            table.add_column(heading, justify="right")
        segment = 0
        for call in report.calls:
            if call.segment != segment:
                segment = call.segment
                table.add_row("—", "", *(["compacted"] + [""] * (len(PLOT_GROUPS) + 2)))
            groups = condensed(call.categories)
            table.add_row(
                str(call.number),
                str(call.line),
                *(f"{groups[key]:,}" for key, _name in PLOT_GROUPS),
                f"{call.estimate:,}",
                "?" if call.recorded is None else f"{call.recorded:,}",
                "?" if call.difference is None else f"{call.difference:+,}",
            )
        con.print(table)
    if report.largest and top > 0:
        con.print("\n[bold]Largest items now[/bold] (all still in context)")
        for item in report.largest[:top]:
            con.print(f"  {item.describe(len(report.calls))}", markup=False)
            if item.fates_text():
                con.print("      " + item.fates_text(), markup=False)
    if report.files_read:
        con.print("\n[bold]Files read into the context now[/bold]")
        for read in report.files_read[:top]:
            back = " · a compaction now would re-attach it" if read.restored else ""
            con.print(
                f"  {read.tokens:>8,}  {read.path}  ({plural(read.reads, 'read')}, last at call "
                f"{read.last_call}){back}",
                markup=False,
            )
    for mark in report.compactions:
        pre = f"{mark.pre_tokens:,}" if mark.pre_tokens is not None else "?"
        con.print(
            f"  {mark.trigger} compaction after call {mark.after_call} (line {mark.line}): "
            f"{pre} tokens before, {plural(mark.restored_files, 'file')} re-attached",
            markup=False,
        )
    for note in report.notes:
        con.print(f"note: {note}", markup=False)


def call_number(report: AttributionReport, given: int) -> int:
    """`--call N` as a 1-based call number (negative counts from the end)."""
    count = len(report.calls)
    number = count + 1 + given if given < 0 else given
    if not 0 < number <= count:
        raise UserInputError(
            f"--call {given}: the session has {plural(count, 'API call')}"
            + (f", give 1 to {count:,} or -1 for the last" if count else "")
        )
    return number


def call_json(report: AttributionReport, number: int) -> dict[str, Any]:
    point = report.calls[number - 1]
    return {
        **(report.claude.to_json() if report.claude else {}),
        "transcript": report.transcript,
        "model": report.model,
        "call_count": len(report.calls),
        "call": {
            **point.to_json(),
            "added_since_previous": report.added_since_previous(number),
            "items": [item.to_json() for item in report.call_items(number)],
        },
    }


def render_call(con: Console, report: AttributionReport, number: int, top: int) -> None:
    from workbench.engine.context.attribution_models import category_label

    point = report.calls[number - 1]
    con.print(f"[bold]{escape(report.transcript)}[/bold]")
    measured = (
        f", measured {point.recorded:,}, difference {point.difference:+,}"
        if point.recorded is not None and point.difference is not None
        else " (no recorded usage)"
    )
    con.print(
        f"Call {number:,} of {len(report.calls):,} (line {point.line:,}): estimated "
        f"{point.estimate:,}{measured}",
        markup=False,
    )
    added = report.added_since_previous(number)
    con.print("\n[bold]By category[/bold] (+ what the call before it did not send)")
    for category, tokens in sorted(point.categories.items(), key=lambda kv: -kv[1]):
        grew = f"+{added[category]:,}" if added.get(category) else ""
        con.print(f"  {category_label(category):<40} {tokens:>9,} {grew:>9}", markup=False)
    items = report.call_items(number)
    new = sum(1 for item in items if item.call == number)
    con.print(
        f"\n[bold]Items it sent[/bold], largest first ({len(items):,}, {new:,} new with it; "
        "the system prompt, tools and instructions are not items)"
    )
    for item in items[: max(0, top)]:
        mark = " · new" if item.call == number else ""
        con.print(f"  {item.describe(len(report.calls))}{mark}", markup=False)
        con.print("      " + (item.fates_text() or "still in context"), markup=False)
    if len(items) > max(0, top):
        con.print(f"  … and {len(items) - max(0, top):,} more (--top to list more)", markup=False)


# --- sessions ---------------------------------------------------------------------------


def run_sessions(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    history = engine.context.session_history(cache=not args.no_cache)
    data = history.to_json()
    emit(args, data, lambda con: render_sessions(con, history))
    return ExitCode.OK


SPARK = " ▁▂▃▄▅▆▇█"


def peak_spark(history: SessionHistory) -> str:
    """One character per session: its peak against its auto-compact threshold."""
    out = []
    for s in history.sessions:
        share = s.peak_share or 0.0
        out.append(SPARK[min(len(SPARK) - 1, round(min(share, 1.0) * (len(SPARK) - 1)))])
    return "".join(out)


def render_sessions(con: Console, history: SessionHistory) -> None:
    from rich.table import Table

    if not history.sessions:
        con.print(f"No sessions in {history.transcripts_dir}", markup=False)
        return
    totals = history.totals()
    con.print(
        f"{plural(totals['sessions'], 'session')} · {totals['calls']:,} calls · "
        f"compactions: {totals['auto']} auto, {totals['manual']} manual, "
        f"{totals['reactive']} reactive · {plural(totals['restored_files'], 'file')} re-attached · "
        f"{totals['tokens_in']:,} in, {totals['tokens_out']:,} out",
        markup=False,
    )
    con.print(f"peaks, oldest first (█ = at the auto-compact threshold): {peak_spark(history)}")
    table = Table(box=None, pad_edge=False)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("started", "left"),
        ("session", "left"),
        ("calls", "right"),
        ("peak", "right"),
        ("of auto", "right"),
        ("a/m/r", "right"),
        ("restored", "right"),
        ("in", "right"),
        ("out", "right"),
        ("warning at", "right"),
        ("auto at", "right"),
        ("title", "left"),
    )
    for heading, justify in columns:
        table.add_column(heading, justify=justify, no_wrap=True)
    for s in history.sessions:
        share = s.peak_share
        c = s.compactions
        table.add_row(
            (s.first_timestamp or "")[:16].replace("T", " "),
            s.session_id[:8],
            f"{s.calls:,}",
            f"{s.peak:,}",
            "—" if share is None else f"{share:.0%}",
            f"{c.get('auto', 0)}/{c.get('manual', 0)}/{c.get('reactive', 0)}",
            str(s.restored_files),
            f"{s.tokens_in:,}",
            f"{s.tokens_out:,}",
            _call(s.first_crossings.get("warning")),
            _call(s.first_crossings.get("autocompact")),
            plain((s.title or "")[:40]),
        )
    con.print(table)
    if history.cached:
        con.print(f"{history.cached} summarised from the cache, {history.read} read now")
    for problem in history.problems:
        con.print(f"note: {problem}", markup=False)


def _call(number: int | None) -> str:
    return "—" if number is None else f"call {number}"
