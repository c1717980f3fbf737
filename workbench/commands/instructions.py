"""`workbench instructions`: the CLAUDE.md files, rules and imports Claude Code loads."""

from __future__ import annotations

import argparse
import functools
import os
from typing import TYPE_CHECKING

from workbench.commands.common import ExitCode, add_command, emit, escape, open_engine, plain
from workbench.engine.models import plural

if TYPE_CHECKING:
    from rich.console import Console

    from workbench.engine.instructions.models import InstructionsReport

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    add = functools.partial(add_command, subparsers, common)
    parser = add(
        "instructions",
        run_instructions,
        "the CLAUDE.md files, rules and imports Claude Code loads, in order, with their cost",
    )
    parser.add_argument(
        "--read",
        metavar="FILE",
        action="append",
        default=[],
        help="also show what Claude Code attaches when it reads FILE (repeatable, in order)",
    )
    parser.add_argument(
        "--no-content", action="store_true", help="JSON: leave out the text of each file"
    )


def run_instructions(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    report = engine.instructions.report(reading=args.read)
    data = report.to_json()
    if args.no_content:
        for key in ("files", "on_read"):
            for item in data[key]:
                item.pop("content", None)
    emit(args, data, lambda con: render_report(con, report))
    return ExitCode.ACTION_REQUIRED if report.errors else ExitCode.OK


def short_path(path: str, report: InstructionsReport) -> str:
    """A path relative to the working folder when inside it, `~` for the home folder."""
    cwd = report.working_dir.rstrip("/") + "/"
    if path.startswith(cwd):
        return path[len(cwd) :]
    home = (report.home or os.path.expanduser("~")).rstrip("/") + "/"
    if home != "/" and path.startswith(home):
        return "~/" + path[len(home) :]
    return path


def render_report(con: Console, report: InstructionsReport) -> None:
    from rich.table import Table

    con.print(f"[bold]Instructions for {escape(report.working_dir)}[/bold]")
    if report.claude is not None:
        con.print(f"rules of {report.claude.describe()}", markup=False)
    if not report.files:
        con.print("No instruction file loads in this folder.")
    else:
        table = Table(box=None, pad_edge=False)
        table.add_column("#", justify="right")
        table.add_column("tokens", justify="right")
        table.add_column("kind")
        table.add_column("file", no_wrap=True)
        for number, item in enumerate(report.files, 1):
            prefix = "  " * (item.depth - 1) + "└ @" if item.depth else ""
            table.add_row(
                str(number),
                f"{item.tokens:,}",
                item.kind,
                plain(prefix + short_path(item.path, report)),
            )
        con.print(table)
        con.print(
            f"{plural(len(report.files), 'file')}, {report.total_tokens:,} tokens at session start "
            "(characters ÷ 4)"
        )
    if report.conditional:
        con.print("\n[bold]Rules with paths[/bold] (load when Claude Code reads a matching file)")
        for rule in report.conditional:
            matched = (
                f"{plural(rule.matches, 'file')} {'matches' if rule.matches == 1 else 'match'}, e.g. {', '.join(rule.examples)}"
                if rule.matches
                else "nothing matches"
            )
            con.print(
                f"  {short_path(rule.path, report)}  {', '.join(rule.globs)}  → {matched}",
                markup=False,
            )
    if report.nested:
        con.print("\n[bold]Folders below[/bold] (their files load when a file in them is read)")
        for folder in report.nested:
            con.print(
                f"  {short_path(folder.folder, report)}/  {', '.join(folder.files)}", markup=False
            )
    if report.read_paths:
        con.print("\n[bold]Reading " + escape(", ".join(report.read_paths)) + " attaches[/bold]")
        if not report.on_read:
            con.print("  nothing more")
        for item in report.on_read:
            con.print(
                f"  {item.tokens:>6,}  {item.kind:<8} {short_path(item.path, report)}"
                f"  (on reading {short_path(item.trigger or '', report)})",
                markup=False,
            )
    if report.findings:
        con.print("\n[bold]Findings[/bold]")
        for finding in report.findings:
            where = short_path(finding.path, report)
            if finding.parent:
                line = f" line {finding.line}" if finding.line else ""
                where += f" (from {short_path(finding.parent, report)}{line})"
            elif finding.line:
                where += f" line {finding.line}"
            style = SEVERITY_STYLE.get(finding.severity, "")
            con.print(f"  [{style}]{finding.severity:<7}[/{style}] ", end="")
            con.print(f"{where}: {finding.message}", markup=False)
    for note in report.notes:
        con.print(f"note: {note}", markup=False)
