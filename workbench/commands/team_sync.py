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
from workbench.engine.models import plural, plural_noun

if TYPE_CHECKING:
    from rich.console import Console

    from workbench.engine.team.models import TeamOverview
    from workbench.engine.team.sync.client import TeamSyncClient
    from workbench.engine.team.sync.models import (
        Overwrite,
        PullResult,
        PushResult,
        SkippedSecret,
        SyncError,
    )
    from workbench.server.config import ServerConfig
    from workbench.server.migrations import MigrationReport


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

    _register_team_server(subparsers, common)


def _register_team_server(
    subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser
) -> None:
    from workbench.server import config as c

    server = subparsers.add_parser(
        "team-server",
        parents=[common],
        help="serve team memory to teammates (SQLite or PostgreSQL)",
        description=(
            "Serve the team-memory sync protocol, with /healthz, /readyz and /metrics beside "
            "it. Tokens come from --token-file, $WORKBENCH_TEAM_TOKEN (several separated by "
            "commas) or $WORKBENCH_SERVER_TOKEN_FILE; write each as ORG=TOKEN to put its "
            "holders in their own organization (plain tokens share the 'default' one). "
            "Set $WORKBENCH_SERVER_METRICS_TOKEN to require that bearer token on /metrics. "
            "`team-server migrate` only applies schema migrations."
        ),
    )
    server.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    server.add_argument(
        "--port", type=int, default=8765, help="port; 0 picks a free one (default: 8765)"
    )
    _add_db_option(server)
    server.add_argument(
        "--token-file",
        metavar="FILE",
        help="bearer tokens, one ORG=TOKEN or TOKEN per line, # comments "
        "(default: $WORKBENCH_SERVER_TOKEN_FILE, else none)",
    )
    server.add_argument(
        "--token",
        metavar="T",
        action="append",
        default=[],
        help="an accepted bearer token, for loopback use only: other users of this machine "
        "can read a command line (default: none)",
    )
    server.add_argument(
        "--workers",
        metavar="N",
        type=int,
        default=1,
        help="worker processes sharing the socket (default: 1)",
    )
    server.add_argument(
        "--max-entries",
        metavar="N",
        type=int,
        default=None,
        help=f"entries allowed per repo (default: $WORKBENCH_SERVER_MAX_ENTRIES, else "
        f"{c.DEFAULT_MAX_ENTRIES})",
    )
    server.add_argument(
        "--max-body-bytes",
        metavar="N",
        type=int,
        default=None,
        help=f"largest PUT body accepted (default: $WORKBENCH_SERVER_MAX_BODY_BYTES, else "
        f"{c.DEFAULT_MAX_BODY_BYTES})",
    )
    server.add_argument(
        "--rate-limit",
        metavar="PER_S",
        type=float,
        default=None,
        help=f"requests per second per token, shared by all workers; 0 turns limits off "
        f"(default: $WORKBENCH_SERVER_RATE_LIMIT, else {c.DEFAULT_RATE_LIMIT:g})",
    )
    server.add_argument(
        "--rate-burst",
        metavar="N",
        type=int,
        default=None,
        help=f"requests a token may make at once (default: $WORKBENCH_SERVER_RATE_BURST, "
        f"else {c.DEFAULT_RATE_BURST})",
    )
    server.add_argument(
        "--pool-size",
        metavar="N",
        type=int,
        default=None,
        help=f"PostgreSQL connections per worker (default: $WORKBENCH_SERVER_POOL_SIZE, else "
        f"{c.DEFAULT_POOL_SIZE})",
    )
    server.add_argument(
        "--log-format",
        choices=c.LOG_FORMATS,
        default=None,
        help="request log on stderr: one JSON object per line, text, or off "
        "(default: $WORKBENCH_SERVER_LOG, else json)",
    )
    server.add_argument(
        "--no-migrate",
        action="store_true",
        help="refuse to start on an older schema instead of migrating it (default: migrate)",
    )
    server.set_defaults(handler=run_team_server)
    actions = server.add_subparsers(dest="server_action", metavar="ACTION")
    migrate = actions.add_parser(
        "migrate",
        parents=[common],
        help="apply the database's schema migrations, then exit",
        description="Apply the schema migrations the database lacks (each in one transaction).",
    )
    _add_db_option(migrate, suppress=True)
    migrate.set_defaults(handler=run_team_server_migrate)


def _add_db_option(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    parser.add_argument(
        "--db",
        metavar="DB",
        default=argparse.SUPPRESS if suppress else None,
        help="postgresql://USER:PASSWORD@HOST/NAME, sqlite:///PATH or a file path "
        "(default: $WORKBENCH_SERVER_DB, else team-memory.sqlite3 in WORKBENCH_HOME)",
    )


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

    from workbench.commands.progress import progress_line

    client = _client(args)

    async def go() -> PullResult:
        # ctrl+c: the files being written finish (each whole, through history), no new one
        # starts, and the state is left as it was, so the next pull picks up the rest.
        with progress_line(args) as on_progress:
            async with client:
                return await client.pull(on_progress=on_progress)

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
    code = _exit_code(result.ok, result.error)
    held_back = _held_back(result)
    if held_back:
        warn(held_back)
        if code == ExitCode.OK:
            # Spec 05: a file teammates never get until the user fixes it is found work.
            return ExitCode.ACTION_REQUIRED
    return code


def _held_back(result: PushResult) -> str | None:
    """The one line saying which files a push held back and what to do, or None."""
    secrets, too_large = len(result.skipped_secrets), len(result.skipped_too_large)
    over = len(result.skipped_over_limit)
    parts, fixes = [], []
    if secrets:
        parts.append(f"{_files(secrets)} holding a secret")
        fixes.append("the secret is taken out (`workbench redact PATH` prints it without)")
    if too_large:
        parts.append(f"{_files(too_large)} over 250,000 bytes")
        fixes.append("the file is shortened or split")
    if over:
        limit = f"limit of {result.max_entries} entries" if result.max_entries else "entry limit"
        parts.append(
            f"{_files(over)} past the server's {limit} ({', '.join(result.skipped_over_limit[:5])})"
        )
        fixes.append("other team files are removed or merged")
    if not parts:
        return None
    them = "it" if secrets + too_large + over == 1 else "them"
    return f"held back {' and '.join(parts)}: teammates get {them} once {' or '.join(fixes)}"


def run_watch(args: argparse.Namespace) -> int:
    """`sync watch`: runs until Ctrl-C or SIGTERM, then flushes pending changes."""
    import asyncio

    if args.debounce < 0:
        raise UserInputError("--debounce must be zero or more seconds")
    team = open_engine(args).team
    client = team.sync_client(server=args.server, repo=args.repo)
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
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        watcher = team.sync_watcher(client, debounce=args.debounce, report=report)
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
    replaced = {r.key: r for r in result.replaced_local}
    lines += [f"  wrote {key}" for key in result.written if key not in replaced]
    for r in result.replaced_local:
        undo = f": `workbench undo {r.history_id}` brings yours back" if r.history_id else ""
        lines.append(f"  replaced your unpushed change to {r.key} with the team's version{undo}")
    lines += [f"  skipped {s.key!r}: {s.reason}" for s in result.skipped]
    return "\n".join(lines)


def _push_text(result: PushResult, repo: str) -> str:
    if result.status == "suppressed":
        return f"Push to {repo} skipped: suppressed ({result.suppressed_reason})."
    if result.status == "ok" and result.uploaded == 0:
        held = result.skipped_secrets or result.skipped_too_large or result.skipped_over_limit
        every = "every entry it can push" if held else "every local entry"
        head = f"Nothing to push: {repo} already has {every}."
    elif result.status == "ok":
        pushed = plural(result.uploaded, "entry")
        head = f"Pushed {pushed} to {repo} in {plural(result.batches, 'request')}."
    elif result.status == "conflict":
        head = f"Push to {repo} gave up after {result.conflict_retries} conflict retries."
    else:
        head = f"Push to {repo} failed after {plural(result.uploaded, 'entry')}."
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
        f"{plural(status.local_entries, 'local entry', 'local entries')}, {len(status.pending)} to push"
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
        outcomes = {True: "resolved", False: "gave up", None: "unresolved"}
        outcome = outcomes.get(latest.get("resolved"), "unresolved")
        con.print(
            f"conflicts (HTTP 412): {len(status.conflicts)}; latest {latest.get('time')}, "
            f"{outcome}, {_files(latest.get('pending_count'))} pending",
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


def _server_config(args: argparse.Namespace) -> ServerConfig:
    """The environment's settings with the command line's options over them."""
    from workbench.server.config import (
        ConfigError,
        ServerConfig,
        parse_token_specs,
        read_token_file,
    )
    from workbench.server.database import parse_database

    try:
        config = ServerConfig.from_env(_env_without_invalid_config(args), check=False)
        if getattr(args, "db", None):
            config.db = parse_database(args.db)
        if getattr(args, "token_file", None):
            found, warning = read_token_file(args.token_file)
            config.tokens.update(found)
            if warning:
                config.warnings.append(warning)
        config.tokens.update(parse_token_specs(getattr(args, "token", [])))
        for name in ("max_entries", "max_body_bytes", "rate_limit", "rate_burst", "pool_size"):
            value = getattr(args, name, None)
            if value is not None:
                setattr(config, name, value)
        if getattr(args, "log_format", None):
            config.log_format = args.log_format
        if getattr(args, "no_migrate", False):
            config.migrate = False
        return config
    except ConfigError as exc:
        raise UserInputError(str(exc)) from None
    except ValueError as exc:
        raise UserInputError(f"--db: {exc}") from None


def _env_without_invalid_config(args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    # A --db option replaces the variable, so an unusable value there does not matter.
    if getattr(args, "db", None):
        env.pop("WORKBENCH_SERVER_DB", None)
    return env


def _open_checked(config: ServerConfig) -> MigrationReport:
    """Migrate (or check) the database now, so a bad --db fails before serving."""
    import sqlite3

    from workbench.server.database import open_store
    from workbench.server.store import SchemaError, StoreUnavailable

    store = open_store(config.db, pool_size=1)
    try:
        return store.migrate(apply=config.migrate)
    except (OSError, sqlite3.Error, StoreUnavailable, SchemaError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UserInputError(f"cannot use the database {config.db.shown}: {reason}") from None
    finally:
        store.close()


def _warn_password_in_argv(args: argparse.Namespace) -> None:
    from workbench.server.database import has_password

    if getattr(args, "db", None) and has_password(args.db):
        warn(
            "--db puts the database password on the command line, which other users of this "
            "machine can read; set WORKBENCH_SERVER_DB or use PGPASSFILE / ~/.pgpass instead"
        )


def run_team_server_migrate(args: argparse.Namespace) -> int:
    """`team-server migrate`: apply pending migrations and say what changed."""
    config = _server_config(args)
    _warn_password_in_argv(args)
    config.migrate = True
    report = _open_checked(config)
    data = {"db": config.db.shown, **report.to_json()}
    if report.applied:
        applied = ", ".join(str(v) for v in report.applied)
        text = (
            f"Migrated {config.db.shown} from schema version {report.before} to "
            f"{report.after} (applied {applied})"
        )
    else:
        text = f"{config.db.shown} is at schema version {report.after}; nothing to do"
    emit(args, data, text)
    return ExitCode.OK


def run_team_server(args: argparse.Namespace) -> int:
    """`team-server`: serve in the foreground until interrupted."""
    from workbench.server.config import ConfigError
    from workbench.server.runner import ServerStartError, serve_forever

    config = _server_config(args)
    try:
        config.check()
    except ConfigError as exc:
        raise UserInputError(str(exc)) from None
    if not 0 <= args.port <= 65535:
        raise UserInputError(f"--port must be between 0 and 65535, got {args.port}")
    if not 1 <= args.workers <= 256:
        raise UserInputError(f"--workers must be between 1 and 256, got {args.workers}")
    _warn_password_in_argv(args)
    _open_checked(config)
    if args.token:
        warn(
            "--token puts the token on the command line, which other users of this machine "
            "can read; use --token-file or WORKBENCH_TEAM_TOKEN beyond loopback tests"
        )
    for warning in config.warnings:
        warn(warning)

    def listening(url: str) -> None:
        info = {
            "url": url,
            "db": config.db.shown,
            "store": config.db.kind,
            "organizations": sorted(set(config.tokens.values())),
            "max_entries": config.max_entries,
            "workers": args.workers,
        }
        if wants_json(args):
            sys.stdout.write(json.dumps(info) + "\n")
        else:
            sys.stdout.write(
                f"Team server listening on {url} (database {config.db.shown}, "
                f"{args.workers} {plural_noun(args.workers, 'worker')})\n"
            )
        sys.stdout.flush()

    try:
        serve_forever(
            config,
            host=args.host,
            port=args.port,
            workers=args.workers,
            on_listening=listening,
        )
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UserInputError(f"cannot listen on {args.host}:{args.port}: {reason}") from None
    except ServerStartError as exc:
        warn(str(exc))
        return ExitCode.ACTION_REQUIRED
    except ConfigError as exc:
        raise UserInputError(str(exc)) from None
    return ExitCode.OK


def _files(count: object) -> str:
    """`3 files`, or `some files` where the server's record gives no count."""
    return plural(count, "file") if isinstance(count, int) else "some files"
