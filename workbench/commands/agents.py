"""Commands over the model-facing parts of the engine: `recall` and `prompt` (spec 05).

This module is shared: `_register_recall_commands` (recall and the memory prompt) lives at
the top; the agent commands (extract, session-memory update, log, dream, review) are added
by `_register_agent_commands` further down, and `register` wires in whichever exist.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from workbench.commands.common import (
    ExitCode,
    emit,
    open_engine,
    option,
    wants_json,
    warn,
    with_claude,
)
from workbench.engine.errors import UserInputError
from workbench.engine.models import plural

if TYPE_CHECKING:
    from rich.console import Console

    from workbench.engine.recall.models import RecallResult


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add this module's commands to the CLI."""
    _register_recall_commands(subparsers, common)
    # The agent commands are defined further down this module by their own owner; register
    # them when present so either half can land first.
    agent_commands = globals().get("_register_agent_commands")
    if agent_commands is None:
        return
    try:
        agent_commands(subparsers, common)
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("workbench.commands."):
            raise
        # The module holding the agent commands has not landed yet; recall still works.


# --- recall and prompt ------------------------------------------------------------------


def _register_recall_commands(
    subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser
) -> None:
    recall = subparsers.add_parser(
        "recall",
        parents=[common],
        help="which memories the agent would be shown for a prompt, and why",
        description=(
            "Simulate Claude Code's recall for QUERY: the candidates, the selection with "
            "reasons, near misses, freshness, and exactly what would be injected."
        ),
    )
    recall.add_argument(
        "query",
        metavar="QUERY",
        nargs="?",
        help="the prompt to recall for (default with --transcript: its last prompt)",
    )
    recall.add_argument(
        "--engine",
        choices=("auto", "llm", "offline"),
        default="auto",
        help="llm asks the model, offline ranks locally; auto uses the model when "
        "ANTHROPIC_API_KEY is set (default)",
    )
    recall.add_argument(
        "--recent-tools",
        metavar="A,B",
        default="",
        help="tools the agent used successfully since the previous prompt",
    )
    recall.add_argument(
        "--surfaced",
        metavar="P1,P2",
        default="",
        help="memory files already surfaced in this session (never offered again)",
    )
    recall.add_argument(
        "--transcript",
        metavar="FILE",
        help="take recent tools, surfaced memories and read files from this session",
    )
    recall.add_argument(
        "--show-injected",
        action="store_true",
        help="print the exact text that would be injected for each selected memory",
    )
    recall.set_defaults(handler=run_recall)

    prompt = subparsers.add_parser(
        "prompt",
        parents=[common],
        help="the memory instructions the agent would receive",
        description="Print the memory prompt Claude Code would build for this project.",
    )
    prompt.add_argument(
        "--mode",
        choices=("auto", "individual", "combined", "daily-log"),
        default="auto",
        help="auto picks combined when a team folder exists, else individual",
    )
    prompt.add_argument(
        "--skip-index",
        action="store_true",
        help="the variant without the MEMORY.md step (recall by relevance instead)",
    )
    prompt.set_defaults(handler=run_prompt)


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def run_recall(args: argparse.Namespace) -> int:
    """`workbench recall`: print the recall simulation."""
    import asyncio

    engine = open_engine(args)
    query = args.query
    recent_tools = _split(args.recent_tools)
    surfaced = _split(args.surfaced)
    read_files: list[str] = []
    session_bytes = None
    if args.transcript:
        signals = engine.recall.signals(args.transcript)
        query = query or signals.query
        recent_tools = list(dict.fromkeys([*signals.recent_tools, *recent_tools]))
        surfaced = list(dict.fromkeys([*signals.surfaced.paths, *surfaced]))
        read_files = list(signals.read_files)
        if not _split(args.surfaced):
            session_bytes = signals.surfaced.total_bytes
    if not query or not query.strip():
        raise UserInputError("give a QUERY (or a --transcript that ends with a prompt)")
    result = asyncio.run(
        engine.recall.recall(
            query,
            engine=args.engine,
            recent_tools=recent_tools,
            surfaced=surfaced,
            read_files=read_files,
            session_bytes=session_bytes,
        )
    )
    if result.error is not None:
        warn(f"the model call failed ({result.error['message']}); showed the offline ranking")
    data = with_claude(result.to_json(), engine.claude)
    if wants_json(args):
        emit(args, data)
    else:
        emit(args, data, lambda out: _print_recall(out, result, args.show_injected))
    return ExitCode.OK


def _print_recall(out: Console, result: RecallResult, show_injected: bool) -> None:
    from rich.markup import escape

    engine_label = "the model" if result.engine == "llm" else "the offline ranker"
    out.print(
        f"[bold]Recall[/bold] for {escape(repr(result.query))}: "
        f"{len(result.selected)} selected by {engine_label} from "
        f"{plural(len(result.candidates), 'candidate')}"
    )
    for note in result.notes:
        out.print(f"  note: {escape(note)}")
    if not result.selected:
        out.print("  nothing selected")
    for number, item in enumerate(result.selected, 1):
        score = "" if item.score is None else f", score {item.score:.2f}"
        out.print(
            f"{number}. [bold]{escape(item.path)}[/bold] "
            f"({item.type or 'no type'}, saved {item.age}{score})"
        )
        for reason in item.reasons:
            out.print(f"     - {escape(reason)}")
        if item.freshness_note:
            out.print(f"     ! {escape(item.freshness_note)}")
    if result.near_misses:
        out.print("[bold]Near misses[/bold]")
        for miss in result.near_misses:
            out.print(f"  {escape(miss.path)}: {escape(miss.why_not)}")
    view = result.surfacing
    out.print(
        f"[bold]Injected[/bold]: {plural(len(view.memories), 'memory file')}, "
        f"{view.turn_bytes:,} characters this turn; session budget "
        f"{view.session_bytes_before:,} → {view.session_bytes_after:,} of "
        f"{view.session_budget:,}"
    )
    if view.skipped_reason:
        out.print(f"  recall would not run: {escape(view.skipped_reason)}")
    for memory in view.memories:
        cut = (
            f", cut after {memory.kept_lines} of {memory.total_lines} lines "
            f"({memory.truncated} limit)"
            if memory.truncated
            else ""
        )
        out.print(f"  {escape(memory.path)}: {memory.length:,} characters{cut}")
        if show_injected:
            out.print(memory.injected, markup=False, highlight=False)


def run_prompt(args: argparse.Namespace) -> int:
    """`workbench prompt`: the memory instructions, with their size."""
    engine = open_engine(args)
    result = engine.agents.prompt(mode=args.mode, skip_index=args.skip_index)
    data: dict[str, Any] = with_claude(result.to_json(), engine.claude)
    if wants_json(args):
        emit(args, data)
        return ExitCode.OK
    if result.mode == "disabled":
        warn(result.reason)
        return ExitCode.OK
    emit(args, data, result.text)
    if not option(args, "json", False):
        warn(
            f"{result.mode} prompt ({result.style}, {engine.claude.describe()}), about "
            f"{result.tokens:,} tokens ({result.reason})"
        )
        for note in result.notes:
            warn(f"note: {note}")
    return ExitCode.OK


# --- agent commands: extract, log, dream, review, session-memory update -----------------------
# Implemented in workbench/commands/agent_tasks.py; these two names are the stable entry points.


def _register_agent_commands(
    subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser
) -> None:
    from workbench.commands.agent_tasks import register_agent_commands

    register_agent_commands(subparsers, common)


def run_session_memory_update(args: argparse.Namespace) -> int:
    """`workbench session-memory update` (called from the context commands)."""
    from workbench.commands.agent_tasks import run_session_memory_update as run

    return run(args)
