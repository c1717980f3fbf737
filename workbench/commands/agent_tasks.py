"""The agent commands: `extract`, `log`, `dream`, `review` and `session-memory update`.

`workbench/commands/agents.py` registers these through `_register_agent_commands`. Commands
that need the model fall back to a dry run when no API key is set, and say so on stderr (exit
0); asking to `--apply` without a key is a usage error (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from workbench.commands.common import (
    ExitCode,
    add_session_arguments,
    emit,
    open_engine,
    resolve_session,
    wants_json,
    warn,
    with_claude,
)
from workbench.engine.errors import UserInputError, WorkbenchError
from workbench.engine.models import plural

if TYPE_CHECKING:
    from rich.console import Console

    from workbench.engine import Engine
    from workbench.engine.agents.fork import FileChange, WriteMode

NO_KEY_NOTICE = (
    "ANTHROPIC_API_KEY is not set, so nothing was sent: this is a dry run showing the exact "
    "request the model would receive"
)


def register_agent_commands(
    subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser
) -> None:
    """Add extract, log, dream and review to the CLI."""
    extract = subparsers.add_parser(
        "extract",
        parents=[common],
        help="run the memory extraction agent over a session transcript",
        description=(
            "Run Claude Code's memory extraction agent over TRANSCRIPT (a .jsonl path or a "
            "session id or prefix; default: the newest session). Proposed memory writes go to "
            "the review queue unless --apply."
        ),
    )
    add_session_arguments(extract)
    _add_run_flags(extract)
    extract.set_defaults(handler=run_extract)

    log = subparsers.add_parser(
        "log",
        parents=[common],
        help="append a timestamped entry to today's daily log",
        description="Append one bullet to <memory>/logs/YYYY/MM/YYYY-MM-DD.md (local date).",
    )
    log.add_argument("text", metavar="TEXT", nargs="+", help="the entry ('-' reads stdin)")
    log.set_defaults(handler=run_log)

    dream = subparsers.add_parser(
        "dream",
        parents=[common],
        help="consolidate the memory folder from recent sessions",
        description=(
            "Run the dream consolidation agent. Its changes go to the review queue unless "
            "--apply; --dry-run runs it and only shows the diff (without a key: the request)."
        ),
    )
    _add_run_flags(dream)
    dream.add_argument(
        "--request-only",
        action="store_true",
        help="only build and show the request, even when a key is set",
    )
    dream.set_defaults(handler=run_dream)

    review = subparsers.add_parser(
        "review",
        parents=[common],
        help="list, show, accept or reject memory writes proposed by the agents",
        description="The review queue of writes proposed by extract and dream.",
    )
    review.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=("list", "show", "accept", "reject"),
        help="list (the default), show, accept or reject",
    )
    review.add_argument("ids", metavar="ID", nargs="*", help="proposal id (a unique prefix)")
    review.add_argument("--all", action="store_true", help="accept or reject every proposal")
    review.set_defaults(handler=run_review)


def _add_run_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--dry-run", action="store_true", help="do not write anything")
    group.add_argument(
        "--apply",
        action="store_true",
        help="write the changes to the memory folder now (undoable) instead of queueing them",
    )


def _has_key(engine: Engine) -> bool:
    return engine.agents.has_api_key()


def _refuse_apply_without_key(engine: Engine, apply: bool) -> None:
    if apply and not _has_key(engine):
        raise UserInputError(
            "--apply needs the model, but ANTHROPIC_API_KEY is not set "
            "(run without --apply for a dry run)"
        )


# --- extract ---------------------------------------------------------------------------------


def run_extract(args: argparse.Namespace) -> int:
    """`workbench extract TRANSCRIPT [--dry-run] [--apply]`."""
    import asyncio

    engine = open_engine(args)
    _refuse_apply_without_key(engine, args.apply)
    agent = engine.agents.extraction
    transcript = resolve_session(engine, args)
    plan = agent.plan(str(transcript))
    notice = ""
    if args.dry_run or not _has_key(engine) or not plan.step.should_run:
        if not args.dry_run and plan.step.should_run:
            notice = NO_KEY_NOTICE
        result = agent.result_without_run(plan, dry_run=args.dry_run or bool(notice))
        if notice:
            from dataclasses import replace

            result = replace(result, notice=notice)
            warn(notice)
    else:
        result = asyncio.run(agent.run(plan, mode="apply" if args.apply else "propose"))
    claude = engine.claude_for(transcript)
    note = claude.profile.unobserved("extraction")
    if note and not wants_json(args):
        warn(f"note: {note}")
    data = with_claude(result.to_json(), claude)
    emit(args, data, None if wants_json(args) else _extract_printer(result))
    return ExitCode.ACTION_REQUIRED if result.refused else ExitCode.OK


def _extract_printer(result: Any) -> Callable[[Console], None]:
    def show(out: Console) -> None:
        from rich.markup import escape

        out.print(f"[bold]extract[/bold] {escape(result.transcript)}: {escape(result.reason)}")
        out.print(
            f"  new messages: {result.new_messages}, existing memories: {result.manifest_count}"
        )
        _print_agent_run(out, result)

    return show


# --- dream -----------------------------------------------------------------------------------


def run_dream(args: argparse.Namespace) -> int:
    """`workbench dream [--dry-run] [--apply] [--request-only]`."""
    import asyncio

    engine = open_engine(args)
    _refuse_apply_without_key(engine, args.apply)
    agent = engine.agents.dream
    if args.request_only or not _has_key(engine):
        notice = "" if args.request_only else NO_KEY_NOTICE
        if notice:
            warn(notice)
        result = agent.dry_run(notice=notice)
    else:
        mode: WriteMode = "apply" if args.apply else "show" if args.dry_run else "propose"
        result = asyncio.run(agent.run(mode=mode))
    data = with_claude(result.to_json(), engine.claude)
    emit(args, data, None if wants_json(args) else _dream_printer(result))
    return ExitCode.ACTION_REQUIRED if result.refused else ExitCode.OK


def _dream_printer(result: Any) -> Callable[[Console], None]:
    def show(out: Console) -> None:
        from rich.markup import escape

        gates = result.gates
        out.print(f"[bold]dream[/bold]: {escape(result.reason)}")
        fire = "would fire now" if gates.would_fire else "would not fire now"
        why = "; ".join(gates.reasons())
        out.print(f"  automatic dream {fire}" + (f" ({escape(why)})" if why else ""))
        for note in gates.notes:
            out.print(f"  note: {escape(note)}")
        _print_agent_run(out, result)

    return show


# --- log -------------------------------------------------------------------------------------


def run_log(args: argparse.Namespace) -> int:
    """`workbench log TEXT`."""
    text = " ".join(args.text)
    if text == "-":
        text = sys.stdin.read()
    engine = open_engine(args)
    entry = engine.agents.log(text)
    emit(args, entry.to_json(), f"{entry.path}: {entry.line}")
    if entry.redacted:
        warn(
            f"replaced {plural(entry.redacted, 'secret')} with [REDACTED] before writing: "
            "a daily log is read back into Claude Code's context"
        )
    return ExitCode.OK


# --- review ----------------------------------------------------------------------------------


def run_review(args: argparse.Namespace) -> int:
    """`workbench review list|show|accept|reject [ID...] [--all]`."""
    engine = open_engine(args)
    queue = engine.agents.review
    _ = queue.folder  # an unusable WORKBENCH_HOME is one error, before any proposal is touched
    if args.action == "list":
        # The same items the Review pane shows: diffs redacted, checked against the files now.
        items = engine.agents.review_items()
        data = [item.to_json() for item in items]
        emit(args, data, None if wants_json(args) else _list_printer(data))
        return ExitCode.OK
    ids = _review_ids(queue, args)
    if args.action == "show":
        shown = [queue.get(i).to_json(with_content=True) for i in ids]
        human = "".join(p["diff"] or f"(no change to {p['path']})\n" for p in shown)
        emit(args, shown if len(shown) > 1 else shown[0], human)
        return ExitCode.OK
    if args.action == "reject":
        rejected = [queue.reject(i).to_json() for i in ids]
        said = f"rejected {plural(len(rejected), 'proposal')}" if ids else _EMPTY_QUEUE
        emit(args, {"rejected": rejected}, said)
        return ExitCode.OK
    accepted: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for proposal_id in ids:
        try:
            accepted.append(queue.accept(proposal_id).to_json())
        except WorkbenchError as exc:  # report each failure and keep going
            failed.append({"id": proposal_id, "error": str(exc), "exit_code": exc.exit_code})
            warn(f"{proposal_id}: {exc}")
    lines = [f"accepted {a['accepted']}: {a['path']}" for a in accepted]
    said = "\n".join(lines) or ("nothing accepted" if ids else _EMPTY_QUEUE)
    emit(args, {"accepted": accepted, "failed": failed}, said)
    if failed:
        return max(f["exit_code"] for f in failed)
    return ExitCode.OK


_EMPTY_QUEUE = "The review queue is empty: nothing to do."


def _review_ids(queue: Any, args: argparse.Namespace) -> list[str]:
    if args.all:
        if args.action == "show":
            raise UserInputError("--all works with accept and reject")
        # Oldest first; none at all is not a mistake (a script clearing up after a run).
        return [p.id for p in reversed(queue.list())]
    if not args.ids:
        raise UserInputError(f"review {args.action} needs a proposal ID (or --all)")
    return list(args.ids)


def _list_printer(data: Sequence[dict[str, Any]]) -> Callable[[Console], None]:
    def show(out: Console) -> None:
        from rich.markup import escape

        if not data:
            out.print("The review queue is empty.")
            return
        for item in data:
            out.print(
                f"{item['id']}  {item['kind']:<6} {escape(item['path'])}  "
                f"+{item['added_lines']} -{item['removed_lines']}  ({item['source']}, "
                f"{item['created']})"
            )
            if item["changed_since"]:
                out.print(
                    "    ▲ changed since: the file changed after this was proposed; "
                    "accepting is refused so nothing is overwritten"
                )
            if item["unindexed"]:
                out.print(
                    "    ▲ no index line: nothing in MEMORY.md or the queue points at it, so "
                    "accepted alone it is not in the index Claude Code loads"
                )
            if item["secret_refusal"]:
                out.print(f"    ✖ secret refusal: {escape(item['secret_refusal'])}")
            if item["hidden_secrets"]:
                hidden = plural(item["hidden_secrets"], "secret")
                out.print(f"    {hidden} in the diff shown as [REDACTED]")

    return show


# --- session-memory update -----------------------------------------------------------------------


def run_session_memory_update(args: argparse.Namespace) -> int:
    """`workbench session-memory update [--session ID | --file PATH] [--transcript PATH]
    [--dry-run]`, called by the context commands."""
    import asyncio

    engine = open_engine(args)
    updater = engine.agents.session_memory
    target = updater.target(
        session=getattr(args, "session", None),
        file=getattr(args, "file", None),
        transcript=getattr(args, "transcript", None),
    )
    if getattr(args, "dry_run", False) or not _has_key(engine):
        notice = "" if getattr(args, "dry_run", False) else NO_KEY_NOTICE
        if notice:
            warn(notice)
        result = updater.dry_run(target, notice=notice)
    else:
        result = asyncio.run(updater.update(target))
    emit(args, result.to_json(), None if wants_json(args) else _session_printer(result))
    return ExitCode.OK


def _session_printer(result: Any) -> Callable[[Console], None]:
    def show(out: Console) -> None:
        from rich.markup import escape

        out.print(
            f"[bold]session memory[/bold] {escape(result.path)}: {result.status} "
            f"(~{result.total_tokens:,} of {12_000:,} tokens)"
        )
        if result.created:
            out.print("  the notes file was created from the template")
        for header, tokens in result.oversized_sections:
            out.print(f"  over the section limit: {escape(header)} (~{tokens:,} tokens)")
        if result.change is not None:
            out.print(result.change.diff, markup=False, highlight=False)
        if result.request is not None:
            _print_request(out, result.request)

    return show


# --- shared printing -----------------------------------------------------------------------------


def _print_agent_run(out: Console, result: Any) -> None:
    """What an extract or dream run did: its turns, its changes, the request it built."""
    if result.run is not None:
        _print_run(out, result.to_json())
    _print_changes(out, result.changes)
    if result.request is not None:
        _print_request(out, result.request)


def _print_run(out: Console, data: dict[str, Any]) -> None:
    from rich.markup import escape

    out.print(f"  turns: {data['turns']} of {data['max_turns']} ({data['stopped']})")
    if data["summary"]:
        out.print(f"  {escape(data['summary'])}")
    for call in data["denied_calls"]:
        out.print(f"  refused {escape(call['call']['name'])}: {escape(str(call['content']))}")
    # A call that ran and failed (a write the secret guard refused, an edit that did not
    # match): the model was told, and so is the user.
    for call in data["tool_calls"]:
        if call["is_error"] and not call["denied"]:
            out.print(f"  failed {escape(call['call']['name'])}: {escape(str(call['content']))}")


def _print_changes(out: Console, changes: Sequence[FileChange]) -> None:
    from rich.markup import escape

    for change in changes:
        detail = change.proposal_id or change.history_id or change.message
        out.print(f"  {change.outcome}: {escape(change.path)} ({escape(detail or '')})")
        out.print(change.diff, markup=False, highlight=False)
    if any(c.outcome == "proposed" for c in changes):
        out.print("  review with `workbench review list`, then accept or reject")


def _print_request(out: Console, request: dict[str, Any]) -> None:
    from workbench.engine.agents.models import request_summary

    summary = request_summary(request) or {}
    out.print(
        f"[bold]request[/bold]: model {summary.get('model')}, max_tokens "
        f"{summary.get('max_tokens')}, {_messages(summary.get('messages'))}, tools "
        f"{', '.join(summary.get('tools') or []) or 'none'}, {summary.get('bytes', 0):,} bytes "
        "(--json prints the whole body)"
    )
    out.print("[bold]final user message[/bold]:")
    out.print(summary.get("prompt", ""), markup=False, highlight=False)


def _messages(count: object) -> str:
    """`3 messages`, or `messages` where the summary gives no count."""
    return plural(count, "message") if isinstance(count, int) else "messages"
