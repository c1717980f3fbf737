"""`workbench sync status|pull|push|watch` and `workbench team-server` (spec 05).

Registered from `workbench/commands/team.py`. Network work is async in the engine; these
handlers run it with `asyncio.run`. Exit codes: 0 ok; 1 a sync the server failed, that
conflicted or was suppressed; 2 a setting to fix: bad usage, a server that cannot be reached,
or a token the server refused (401/403).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from workbench.commands.common import (
    ExitCode,
    add_command,
    emit,
    escape,
    open_engine,
    plain,
    wants_json,
    warn,
)
from workbench.engine.errors import UserInputError

if TYPE_CHECKING:
    from rich.console import Console

    from workbench.engine.team.models import TeamOverview
    from workbench.engine.team.sync_client import TeamSyncClient
    from workbench.engine.team.sync_models import (
        Overwrite,
        PullResult,
        PushResult,
        SkippedSecret,
        SyncError,
    )


def register_sync_commands(
    subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser
) -> None:
    """Add `sync …` and `team-server` to the CLI."""
    sync = subparsers.add_parser(
        "sync",
        parents=[common],
        help="team-memory sync with a team server: status, pull, push, watch",
    )
    actions = sync.add_subparsers(dest="sync_action", metavar="ACTION", required=True)
    specs = (
        ("status", run_status, "local entries, the pending delta and sync history (offline)"),
        ("pull", run_pull, "fetch the team memory; the server wins per key"),
        ("push", run_push, "upload changed entries; local wins"),
        ("watch", run_watch, "pull once, then push after each change settles"),
    )
    for name, handler, summary in specs:
        action = add_command(actions, common, name, handler, summary)
        action.add_argument(
            "--server", metavar="URL", help="team server (default: $TEAM_MEMORY_SYNC_URL)"
        )
        action.add_argument(
            "--repo",
            metavar="OWNER/NAME",
            help="GitHub repo the team memory belongs to (default: the github.com remote)",
        )
        if name == "push":
            action.add_argument(
                "--force",
                action="store_true",
                help="push even though an earlier permanent failure suppressed pushes",
            )
        if name == "watch":
            action.add_argument(
                "--debounce",
                metavar="SECONDS",
                type=float,
                default=2.0,
                help="quiet time after the last change before pushing (default: 2)",
            )

    server = subparsers.add_parser(
        "team-server",
        parents=[common],
        help="serve team memory to teammates from a SQLite file",
        description=(
            "Serve the team-memory sync protocol. Each --token is a bearer token; write it as "
            "ORG=TOKEN to put its holders in their own organization (plain tokens share the "
            "'default' one). Without --token, $WORKBENCH_TEAM_TOKEN is used."
        ),
    )
    server.add_argument("--host", default="127.0.0.1", help="address to listen on")
    server.add_argument("--port", type=int, default=8765, help="port (0 picks a free one)")
    server.add_argument("--db", metavar="FILE", help="SQLite database (default: in WORKBENCH_HOME)")
    server.add_argument(
        "--token", metavar="T", action="append", default=[], help="accepted bearer token"
    )
    server.add_argument(
        "--max-entries", metavar="N", type=int, default=None, help="entries allowed per repo"
    )
    server.add_argument(
        "--max-body-bytes", metavar="N", type=int, default=None, help="largest PUT body accepted"
    )
    server.set_defaults(handler=run_team_server)


# --- sync ------------------------------------------------------------------------------------


def _exit_code(ok: bool, error: SyncError | None) -> int:
    if ok:
        return ExitCode.OK
    if error is not None and error.kind in ("network", "auth"):
        # Spec 05: an unreachable server is bad input; so is a token it refuses. Both are
        # fixed in the settings, not by running the sync again.
        return ExitCode.BAD_INPUT
    return ExitCode.ACTION_REQUIRED


def _client(args: argparse.Namespace) -> TeamSyncClient:
    engine = open_engine(args)
    return engine.team.sync_client(server=args.server, repo=args.repo)


def run_status(args: argparse.Namespace) -> int:
    """`sync status`: what a push would send and how the last syncs went, without a request."""
    engine = open_engine(args)
    overview = engine.team.overview(server=args.server, repo=args.repo)
    emit(args, overview.to_json(), lambda con: _print_status(con, overview))
    # Every problem is listed; a repo or server URL that cannot be used is bad input.
    if overview.bad_input:
        warn("sync is unavailable: " + "; ".join(p.problem for p in overview.problems))
        return ExitCode.BAD_INPUT
    return ExitCode.OK


def run_pull(args: argparse.Namespace) -> int:
    """`sync pull`."""
    import asyncio

    client = _client(args)

    async def go() -> PullResult:
        async with client:
            return await client.pull()

    result = asyncio.run(go())
    emit(args, result.to_json(), _pull_text(result, client.repo))
    if result.error is not None:
        warn(result.error.message)
    return _exit_code(result.ok, result.error)


def run_push(args: argparse.Namespace) -> int:
    """`sync push`."""
    import asyncio

    from workbench.commands.progress import progress_line

    client = _client(args)

    async def go() -> PushResult:
        with progress_line(args) as on_progress:
            async with client:
                return await client.push(force=args.force, on_progress=on_progress)

    result = asyncio.run(go())
    emit(args, result.to_json(), _push_text(result, client.repo))
    if result.error is not None:
        warn(result.error.message)
    elif result.status == "suppressed":
        warn(
            f"pushes are suppressed after a permanent failure ({result.suppressed_reason}); "
            "delete a team file or pass --force once the cause is fixed"
        )
    return _exit_code(result.ok, result.error)


def run_watch(args: argparse.Namespace) -> int:
    """`sync watch`: runs until Ctrl-C or SIGTERM, then flushes pending changes."""
    import asyncio

    if args.debounce < 0:
        raise UserInputError("--debounce must be zero or more seconds")
    client = _client(args)
    as_json = wants_json(args)

    def report(operation: str, result: Any) -> None:
        if as_json:
            payload = {"event": operation}
            payload.update(result.to_json() if hasattr(result, "to_json") else {"path": result})
            sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
        elif operation == "watching":
            warn(f"watching {result} for {client.repo}; Ctrl-C to stop")
        elif operation == "pull":
            sys.stdout.write(_pull_text(result, client.repo) + "\n")
        elif operation == "push":
            sys.stdout.write(_push_text(result, client.repo) + "\n")
        else:
            sys.stdout.write("A team file was deleted: pushes are allowed again.\n")
        sys.stdout.flush()
        error = getattr(result, "error", None)
        if error is not None:
            warn(error.message)

    async def go() -> None:
        from workbench.engine.team.watcher import TeamWatcher

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        watcher = TeamWatcher(client, debounce=args.debounce, report=report)
        async with client:
            await watcher.run(stop)

    asyncio.run(go())
    return ExitCode.OK


def _pull_text(result: PullResult, repo: str) -> str:
    if result.status == "not_modified":
        return f"Team memory for {repo} is unchanged since the last pull."
    if result.status == "empty":
        return f"The server holds no team memory for {repo} yet."
    if result.status == "error":
        return f"Pull from {repo} failed."
    lines = [
        f"Pulled {repo}: {len(result.written)} written, {result.unchanged} already up to date."
    ]
    lines += [f"  wrote {key}" for key in result.written]
    lines += [f"  skipped {s.key!r}: {s.reason}" for s in result.skipped]
    return "\n".join(lines)


def _push_text(result: PushResult, repo: str) -> str:
    if result.status == "suppressed":
        return f"Push to {repo} skipped: suppressed ({result.suppressed_reason})."
    if result.status == "ok" and result.uploaded == 0:
        head = f"Nothing to push: {repo} already has every local entry."
    elif result.status == "ok":
        noun = "entry" if result.uploaded == 1 else "entries"
        head = f"Pushed {result.uploaded} {noun} to {repo} in {result.batches} request(s)."
    elif result.status == "conflict":
        head = f"Push to {repo} gave up after {result.conflict_retries} conflict retries."
    else:
        head = f"Push to {repo} failed after {result.uploaded} entries."
    lines = [head]
    lines += [_overwrite_line(o) for o in result.overwritten]
    lines += [
        f"  not pushed, {_holds(s)} a secret: {s.path} ({', '.join(s.all_labels)})"
        for s in result.skipped_secrets
    ]
    lines += [f"  not pushed, over 250,000 bytes: {path}" for path in result.skipped_too_large]
    if result.max_entries is not None:
        lines.append(f"  the server allows {result.max_entries} entries for this repo")
    return "\n".join(lines)


def _overwrite_line(overwrite: Overwrite) -> str:
    """One line saying a push replaced a teammate's version, and how to get theirs back."""
    line = f"  overwrote a teammate's newer version of {overwrite.key}"
    if overwrite.history_id:
        return line + f"; theirs is kept: `workbench undo {overwrite.history_id}` restores it"
    return line + " (their version could not be fetched to keep a copy)"


def _print_status(con: Console, overview: TeamOverview) -> None:
    from rich.table import Table

    status = overview.status
    con.print(
        f"[b]Team sync[/b] {escape(status.repo)} on "
        f"{escape(status.server or '(no server configured)')}"
    )
    con.print(
        f"{status.local_entries} local entries, {len(status.pending)} to push"
        + (f", pushes suppressed ({status.suppressed_reason})" if status.suppressed_reason else "")
        + (f", server limit {status.max_entries}" if status.max_entries else "")
    )
    if status.keys:
        table = Table("key", "state", "local", "server", box=None, pad_edge=False)
        for row in status.keys:
            table.add_row(
                plain(row.key), row.state, _short_hash(row.local), _short_hash(row.server)
            )
        con.print(table)
    for secret in status.skipped_secrets:
        labels = ", ".join(secret.all_labels)
        con.print(f"not pushed, {_holds(secret)} a secret: {secret.path} ({labels})", markup=False)
    for preview in overview.previews:
        for finding in preview.findings:
            con.print(
                f"  {preview.path} line {finding.line}, col {finding.column}: "
                f"{finding.rule_id} ({finding.label})",
                markup=False,
            )
    for path in status.skipped_too_large:
        con.print(f"not pushed, over 250,000 bytes: {path}", markup=False)
    if overview.over_limit:
        con.print(
            f"not pushed, past the server's limit of {status.max_entries} entries: "
            + ", ".join(overview.over_limit),
            markup=False,
        )
    if status.conflicts:
        latest = status.conflicts[-1]
        outcome = {True: "resolved", False: "gave up"}.get(latest.get("resolved"), "unresolved")
        con.print(
            f"conflicts (HTTP 412): {len(status.conflicts)}; latest {latest.get('time')}, "
            f"{outcome}, {latest.get('pending_count', '?')} file(s) pending",
            markup=False,
        )
    for overwrite in status.overwrites[:10]:
        restored = overwrite.history_id and overwrite.history_id not in overview.restorable
        line = (
            f"  overwrote a teammate's newer version of {overwrite.key}; theirs was restored"
            if restored
            else _overwrite_line(overwrite)
        )
        con.print(f"{overwrite.time}{line}", markup=False)
    for item in status.history[:5]:
        con.print(f"{item.get('time')} {item.get('operation')} {item.get('status')}", markup=False)
    if overview.problems:
        con.print("Sync is unavailable:", style="bold")
        for problem in overview.problems:
            con.print(f"  ✖ {problem.problem}: {problem.fix}", markup=False, soft_wrap=True)


def _holds(secret: SkippedSecret) -> str:
    return "its name holds" if secret.found_in == "name" else "holds"


def _short_hash(value: str | None) -> str:
    return "-" if value is None else value.removeprefix("sha256:")[:10]


# --- team-server -----------------------------------------------------------------------------


def run_team_server(args: argparse.Namespace) -> int:
    """`team-server`: serve in the foreground until interrupted."""
    from workbench.server.app import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_ENTRIES
    from workbench.server.runner import parse_token_specs, serve_forever

    specs = list(args.token) or [os.environ.get("WORKBENCH_TEAM_TOKEN", "")]
    tokens = parse_token_specs(s for s in specs if s)
    if not tokens:
        raise UserInputError("give at least one --token (or set WORKBENCH_TEAM_TOKEN)")
    max_entries = DEFAULT_MAX_ENTRIES if args.max_entries is None else args.max_entries
    max_body = DEFAULT_MAX_BODY_BYTES if args.max_body_bytes is None else args.max_body_bytes
    if max_entries < 1 or max_body < 1024:
        raise UserInputError("--max-entries must be at least 1 and --max-body-bytes at least 1024")
    if not 0 <= args.port <= 65535:
        raise UserInputError(f"--port must be between 0 and 65535, got {args.port}")
    if args.db:
        db_path = os.path.abspath(args.db)
    else:
        from workbench.paths import state_dir

        db_path = str(state_dir("server") / "team-memory.sqlite3")
    _check_database(db_path)

    def listening(url: str) -> None:
        info = {
            "url": url,
            "db": db_path,
            "organizations": sorted(set(tokens.values())),
            "max_entries": max_entries,
        }
        if wants_json(args):
            sys.stdout.write(json.dumps(info) + "\n")
        else:
            sys.stdout.write(f"Team server listening on {url} (database {db_path})\n")
        sys.stdout.flush()

    try:
        serve_forever(
            db_path,
            tokens,
            host=args.host,
            port=args.port,
            max_entries=max_entries,
            max_body_bytes=max_body,
            on_listening=listening,
        )
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UserInputError(f"cannot listen on {args.host}:{args.port}: {reason}") from None
    return ExitCode.OK


def _check_database(db_path: str) -> None:
    """Open (creating if needed) the database now, so a bad path fails before serving."""
    import sqlite3

    from workbench.server.store import TeamStore

    store = TeamStore(db_path)
    try:
        store.initialize()
    except (OSError, sqlite3.Error) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UserInputError(f"cannot use the database {db_path}: {reason}") from None
    finally:
        store.close()
