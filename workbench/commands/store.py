"""Memory-store commands: paths, index, ls, show, manifest, lint, save, rm, history, undo."""

from __future__ import annotations

import argparse
import functools
import gc
import os
import sys
from typing import TYPE_CHECKING, Any

from workbench.commands.common import (
    ExitCode,
    add_command,
    emit,
    open_engine,
    plain,
    wants_json,
    warn,
    with_claude,
    write_bytes,
)
from workbench.engine.errors import UserInputError
from workbench.engine.models import plural

if TYPE_CHECKING:
    from rich.console import Console

    from workbench.engine import Engine


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    add = functools.partial(add_command, subparsers, common)

    add("paths", run_paths, "show where Claude Code keeps this project's memory and transcripts")
    index = add("index", run_index, "the MEMORY.md load report: what loads and what falls off")
    index.add_argument("--team", action="store_true", help="report on team/MEMORY.md")
    ls = add("ls", run_ls, "list memory files, newest first")
    ls.add_argument("--scope", choices=["private", "team", "log", "all"], default="all")
    show = add("show", run_show, "show one memory file")
    show.add_argument("path", metavar="PATH", help="path relative to the memory folder")
    add("manifest", run_manifest, "the manifest recall sends (newest first, at most 200)")
    add("lint", run_lint, "check memory files and indexes")
    save = add(
        "save",
        run_save,
        "save a memory (body on stdin) in the Claude Code release's format, then its index line",
    )
    save.add_argument(
        "--type", required=True, dest="memory_type", help="user, feedback, project or reference"
    )
    save.add_argument(
        "--name", required=True, help="the memory's name (2.1.332 writes it in kebab case)"
    )
    save.add_argument("--description", required=True, help="one line; recall decides by it")
    save.add_argument(
        "--file",
        metavar="NAME.md",
        help="file name (default: the kebab-case name, or TYPE_NAME.md under 2.1.88's rules)",
    )
    save.add_argument("--team", action="store_true", help="save to team memory (secret-checked)")
    save.add_argument(
        "--no-index", action="store_true", help="skip the index line (skip-index mode)"
    )
    save.add_argument("--hook", metavar="TEXT", help="index hook (default: the description)")
    save.add_argument(
        "--replace",
        action="store_true",
        help="overwrite the file (--file, else the default name) and its index line",
    )
    rm = add("rm", run_rm, "delete a memory and every index line linking to it")
    rm.add_argument("path", metavar="PATH")
    history = add("history", run_history, "list changes the workbench made")
    history.add_argument("path", metavar="PATH", nargs="?")
    undo = add(
        "undo", run_undo, "undo a change (the newest still in effect; again to go further back)"
    )
    undo.add_argument("entry_id", metavar="ID", nargs="?")
    undo.add_argument("--force", action="store_true", help="undo even if the file changed since")
    redo = add("redo", run_redo, "redo the change the last undo reversed")
    redo.add_argument("entry_id", metavar="ID", nargs="?")
    redo.add_argument("--force", action="store_true", help="redo even if the file changed since")


# --- paths -----------------------------------------------------------------------------


def run_paths(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    loc = engine.locations
    claude = engine.claude
    data = {
        **claude.to_json(),
        "config_home": loc.config_home,
        "project_root": loc.project_root,
        "canonical_root": loc.canonical_root,
        "sanitized_project": loc.sanitized_project,
        "project_dir_name": loc.project_dir_name,
        "project_dir_name_source": loc.project_dir_name_source,
        "memory_dir": loc.memory_dir,
        "memory_dir_source": loc.memory_dir_source,
        "entrypoint": loc.entrypoint,
        "team_dir": loc.team_dir,
        "logs_dir": loc.logs_dir,
        "transcripts_dir": loc.transcripts_dir,
        "auto_memory_enabled": loc.auto_memory_enabled,
        "rejected": [
            {"source": r.source, "value": r.value, "reason": r.reason} for r in loc.rejected
        ],
        "settings_errors": [{"source": s, "error": e} for s, e in loc.settings_errors],
        "notes": list(loc.notes),
    }

    def human(con: Console) -> None:
        from rich.table import Table

        con.print(f"paths under the rules of {claude.describe()}")
        table = Table(show_header=False, box=None, pad_edge=False)
        table.add_column("key", no_wrap=True)
        table.add_column("value", overflow="fold")
        for key in (
            "config_home",
            "project_root",
            "canonical_root",
            "memory_dir",
            "memory_dir_source",
            "team_dir",
            "logs_dir",
            "transcripts_dir",
            "auto_memory_enabled",
        ):
            table.add_row(key, plain(data[key]))
        con.print(table)
        for rejected in loc.rejected:
            con.print(
                f"refused {rejected.source} = {rejected.value!r}: {rejected.reason}", markup=False
            )
        for source, error in loc.settings_errors:
            con.print(f"unreadable settings {source}: {error}", markup=False)
        for note in [*loc.notes, *claude.profile.notes(unobserved=False)]:
            con.print(f"note: {note}", markup=False)

    emit(args, data, human)
    return ExitCode.OK


# --- index -----------------------------------------------------------------------------


def run_index(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    report = engine.memories.index(team=args.team)
    if report.unreadable:
        raise UserInputError(f"{engine.locations.relative(report.path)}: {report.unreadable}")

    def human(con: Console) -> None:
        from rich.markup import escape

        if not report.exists:
            con.print(f"{report.path} does not exist yet.", markup=False)
            if report.orphans:
                con.print(
                    f"No index line links to {plural(len(report.orphans), 'memory file')}: "
                    f"{', '.join(report.orphans)}. A session starts with the index, so the "
                    f"agent meets {'it' if len(report.orphans) == 1 else 'them'} only through "
                    "recall.",
                    markup=False,
                )
            return
        con.print(report.path, markup=False)
        con.print(
            f"{report.line_count}/{report.max_lines} lines, {report.length:,}/{report.max_length:,} "
            f"characters; headroom {plural(report.headroom.lines, 'line')}, {report.headroom.length:,} characters"
        )
        for entry in report.entries:
            if entry.line == report.loaded_lines + 1:
                con.print("[red]──── Claude Code stops loading here ────[/]")
            mark = "  " if entry.loaded else "✗ "
            suffix = "  [red](missing)[/]" if entry.target_exists is False else ""
            con.print(f"{mark}{entry.line:>4}  {escape(entry.text)}{suffix}")
        if report.warning:
            con.print(f"[yellow]warning:[/] {escape(report.warning)}")
        if report.dangling:
            con.print(f"dangling links: {', '.join(report.dangling)}", markup=False)
        if report.orphans:
            con.print(f"orphans (not in the index): {', '.join(report.orphans)}", markup=False)

    emit(args, with_claude(report.to_json(), engine.claude), human)
    return ExitCode.OK


# --- ls / show / manifest --------------------------------------------------------------


def run_ls(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    if wants_json(args) and not sys.stdout.isatty():
        # A listing builds a few containers per file and frees them only at exit, with no
        # cycles among them: the collector would walk them over and over (a twentieth of a
        # cold 10,000-file listing) and find nothing to free.
        gc.disable()
        # Piped: one line, and from the last run's output while nothing it shows changed.
        write_bytes(engine.memory_listing_json(args.scope) + b"\n")
        return ExitCode.OK
    rows = engine.memories.listing(scope=args.scope)

    def human(con: Console) -> None:
        from rich.table import Table

        if not rows:  # a sentence, not a table with nothing under its header
            con.print(_nothing_listed(engine, args.scope), markup=False, highlight=False)
            return
        table = Table(box=None, pad_edge=False)
        for column in ("path", "type", "age", "tokens", "indexed", "lints", "description"):
            table.add_column(column)
        for row in rows:
            table.add_row(
                plain(row["path"]),
                row["type"] or "-",
                f"{row['age_days']}d",
                str(row["tokens"]),
                ("yes" if row["index_loads"] else "cut") if row["indexed"] else "no",
                str(len(row["lints"])) if row["lints"] else "",
                plain(_fit(row["description"] or "", 60 if con.is_terminal else None)),
            )
        con.print(table)

    emit(args, rows, human, compact_when_piped=True)
    return ExitCode.OK


def _nothing_listed(engine: Engine, scope: str) -> str:
    folder = engine.memories.root
    if not folder.is_dir():
        return f"no memory folder yet: Claude Code has saved no memory for this project ({folder})"
    kinds = {"private": "private memory files", "team": "team memory files", "log": "daily logs"}
    return f"no {kinds.get(scope, 'memory files')} in {folder}"


def _fit(text: str, width: int | None) -> str:
    """`text` cut to `width` with an ellipsis; uncut when `width` is None (output piped)."""
    if width is None or len(text) <= width:
        return text
    return text[: width - 1] + "…"


def run_show(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    doc = engine.memories.read(args.path)
    data = with_claude(doc.to_json(), engine.claude)

    def human(con: Console) -> None:
        if doc.binary:
            con.print(
                f"{doc.entry.path}: binary file ({doc.entry.size_bytes:,} bytes), not shown",
                markup=False,
            )
            return
        sys.stdout.write(doc.text if doc.text.endswith("\n") else doc.text + "\n")
        for finding in doc.entry.lints:
            warn(f"{finding.rule}: {finding.message}")

    emit(args, data, human)
    return ExitCode.OK


def run_manifest(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    manifest = engine.memories.manifest()
    emit(args, with_claude(manifest.to_json(), engine.claude), manifest.text)
    return ExitCode.OK


# --- lint ------------------------------------------------------------------------------


def run_lint(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    findings = engine.memories.lint()
    errors = sum(1 for f in findings if f.severity == "error")

    def human(con: Console) -> None:
        from rich.markup import escape

        colours = {"error": "red", "warning": "yellow", "info": "blue"}
        for f in findings:
            where = f"{f.path}:{f.line}" if f.line else f.path
            con.print(
                f"[{colours[f.severity]}]{f.severity:<7}[/] {escape(where)}  {escape(f.rule)}  "
                f"{escape(f.message)}"
            )
        con.print(f"{plural(len(findings), 'finding')}, {plural(errors, 'error')}")

    data = with_claude({"findings": [f.to_json() for f in findings]}, engine.claude)
    emit(args, data, human)
    return ExitCode.ACTION_REQUIRED if errors else ExitCode.OK


# --- save / rm -------------------------------------------------------------------------


def run_save(args: argparse.Namespace) -> int:
    if sys.stdin.isatty():
        warn("reading the memory body from stdin (end with Ctrl-D)")
    from workbench.engine import Engine

    stdin = getattr(sys.stdin, "buffer", sys.stdin)
    raw = Engine.read_memory_input(stdin, "the memory body on stdin")
    try:
        body = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserInputError("the memory body on stdin is not UTF-8 text") from None
    if "\0" in body:
        raise UserInputError("the memory body on stdin is binary, not text")
    engine = open_engine(args)
    store = engine.memories
    result = store.save(
        type=args.memory_type,
        name=args.name,
        description=args.description,
        body=body,
        file=args.file,
        team=args.team,
        index=not args.no_index,
        hook=args.hook,
        replace=args.replace,
    )
    for note in result.notes:
        warn(note)
    if result.projection and result.projection.message:
        warn(result.projection.message)

    def human(con: Console) -> None:
        verb = "unchanged" if result.unchanged else "saved"
        con.print(f"{verb} {result.path}", markup=False)
        if result.index_line:
            con.print(f"index: {result.index_line}", markup=False)
        con.print(f"headroom: {result.headroom.lines} lines, {result.headroom.length:,} characters")

    emit(args, with_claude(result.to_json(), engine.claude), human)
    return ExitCode.OK


def run_rm(args: argparse.Namespace) -> int:
    result = open_engine(args).memories.remove(args.path)
    emit(
        args,
        result.to_json(),
        f"deleted {result.removed} and "
        f"{plural(result.index_lines_removed, 'index line')} linking to it; `workbench undo` "
        "restores them",
    )
    return ExitCode.OK


# --- history / undo --------------------------------------------------------------------


def run_history(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    path = str(engine.memories.resolve(args.path)) if args.path else None
    entries = engine.history.entries(path)
    _warn_history_problems(engine)
    data = [_entry_json(engine, e) for e in entries]

    def human(con: Console) -> None:
        from rich.text import Text

        if not entries:
            con.print("no changes recorded")
        for e in entries:
            con.print(
                Text(f"{e.id}  {e.time}  {e.action:<12} {_rel_or_abs(engine, e.path)}  {e.note}")
            )

    emit(args, data, human)
    return ExitCode.OK


def run_undo(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    try:
        result = engine.history.undo(args.entry_id, force=args.force)
    finally:
        _warn_history_problems(engine)
    return _print_undo(args, engine, result, "undone")


def run_redo(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    try:
        result = engine.history.redo(args.entry_id, force=args.force)
    finally:
        _warn_history_problems(engine)
    return _print_undo(args, engine, result, "redone")


def _print_undo(args: argparse.Namespace, engine: Any, result: Any, key: str) -> int:
    data = {
        key: [_entry_json(engine, e) | {"effect": e.effect} for e in result.entries],
        "change": result.change,
        "change_action": result.action,
    }
    lines = result.lines(lambda p: _rel_or_abs(engine, p))
    if not lines:
        lines = [f"nothing to change: the files already match ({key} {result.action})"]
    emit(args, data, "\n".join(lines))
    return ExitCode.OK


def _warn_history_problems(engine: Any) -> None:
    for message in engine.history.recovered:
        warn(message)
    summary = engine.history.problem_summary()
    if summary:
        warn(summary)


def _entry_json(engine: Any, entry: Any) -> dict[str, object]:
    """A history entry as spec 05 gives paths: `path` relative to the memory folder (`/`
    separators; `..` for a file outside it, such as a session's notes), `abs_path` absolute.
    `rel_path` stays as it was (relative inside the folder, else absolute)."""
    rel_path = _rel_or_abs(engine, entry.path)
    if rel_path != entry.path:
        path = rel_path.replace(os.sep, "/")
    else:
        try:
            path = os.path.relpath(entry.path, engine.locations.memory_dir).replace(os.sep, "/")
        except ValueError:  # another drive (Windows): no relative path exists
            path = entry.path
    return entry.to_json() | {"path": path, "abs_path": entry.path, "rel_path": rel_path}


def _rel_or_abs(engine: Any, path: str) -> str:
    memory_dir = engine.locations.memory_dir
    return path[len(memory_dir) :] if path.startswith(memory_dir) else path
