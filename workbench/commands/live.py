"""Commands Claude Code runs, or that wire the workbench into it: `hook`, `compactions`,
`mcp` and `integrate`.

`hook` runs inside every session, so this module imports nothing heavy at the top; each
command imports what it needs when it runs (the `mcp` SDK only in `mcp`).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from workbench.commands.common import (
    ExitCode,
    add_command,
    emit,
    open_engine,
    option,
    wants_json,
    warn,
)
from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.models import plural

if TYPE_CHECKING:
    import argparse

    from rich.console import Console

    from workbench.engine import Engine

HOOK_EVENTS = ("SessionStart", "PreCompact", "PostCompact", "Stop", "SessionEnd")
HOOK_DEFAULTS: dict[str, Any] = {
    "context": False,
    "quiet": False,
    "propose": False,
    "foreground": False,
    "wait": 2.0,
}
"""`workbench hook EVENT` with no options: what the CLI's fast path answers without a parser."""


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    add = functools.partial(add_command, subparsers, common)

    hook = add(
        "hook",
        run_hook,
        "answer one of Claude Code's hook events (hook JSON on stdin, hook JSON on stdout)",
    )
    # A free word, checked by the command: argparse would exit 2, which blocks in Claude Code.
    hook.add_argument("event", metavar="EVENT", help="one of " + ", ".join(HOOK_EVENTS))
    hook.add_argument(
        "--context",
        action="store_true",
        help="SessionStart: also tell the model which index entries did not load",
    )
    hook.add_argument(
        "--quiet",
        action="store_true",
        help="SessionStart: say nothing when MEMORY.md loads whole and nothing is wrong",
    )
    hook.add_argument(
        "--propose",
        action="store_true",
        help="Stop/SessionEnd: run extraction with its writes queued for review",
    )
    hook.add_argument(
        "--foreground",
        action="store_true",
        help="Stop/SessionEnd with --propose: wait for the extraction instead of detaching it",
    )
    hook.add_argument(
        "--wait",
        metavar="SECONDS",
        type=float,
        default=HOOK_DEFAULTS["wait"],
        help="how long to wait for the transcript to catch up: PostCompact, for the summary "
        "record when the hook input has none; an automatic PreCompact, for the reply that "
        "crossed the threshold (default 2)",
    )

    mcp = add(
        "mcp",
        run_mcp,
        "serve the memory engine to Claude Code (or any MCP client): stdio, or HTTP on loopback",
    )
    mcp.add_argument(
        "--http",
        metavar="PORT",
        type=int,
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (0: a free port)",
    )
    mcp.add_argument(
        "--host",
        default="127.0.0.1",
        help="with --http: the address to bind (anything but loopback needs a token)",
    )
    mcp.add_argument(
        "--token",
        metavar="TOKEN",
        help="with --http: clients must send 'Authorization: Bearer TOKEN' "
        "(default: $WORKBENCH_MCP_TOKEN)",
    )
    mcp.add_argument(
        "--allow-writes",
        action="store_true",
        help="let save/update/delete write memory files (undoable) instead of queueing them "
        "for review",
    )

    integrate = add(
        "integrate",
        run_integrate,
        "add the status line, hooks and MCP server to Claude Code's settings (or --remove them)",
    )
    integrate.add_argument("tool", metavar="TOOL", choices=["claude"], help="claude")
    integrate.add_argument(
        "--remove",
        action="store_true",
        help="take the workbench out again (the original bytes come back if nothing else "
        "changed since)",
    )
    integrate.add_argument(
        "--scope",
        choices=("user", "project"),
        default="user",
        help="user: <config home>/settings.json and the global .claude.json (default); "
        "project: the project's .claude/settings.json and .mcp.json",
    )
    integrate.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    integrate.add_argument(
        "--dry-run", action="store_true", help="show the diff and change nothing"
    )
    integrate.add_argument(
        "--command",
        metavar="CMD",
        help="how Claude Code should run the workbench (default: this installation's "
        "`workbench`; `workbench` for --scope project)",
    )
    integrate.add_argument("--no-statusline", action="store_true", help="leave the status line")
    integrate.add_argument("--no-hooks", action="store_true", help="leave the hooks")
    integrate.add_argument("--no-mcp", action="store_true", help="leave the MCP server")
    integrate.add_argument(
        "--replace-statusline",
        action="store_true",
        help="use the workbench's status line even if another one is configured",
    )
    integrate.add_argument(
        "--extract-on-stop",
        action="store_true",
        help="also add a Stop hook that queues extraction proposals for review",
    )

    history = add(
        "compactions",
        run_compactions,
        "real compactions of a session: the PreCompact snapshot and what the summary lost",
    )
    history.add_argument(
        "--session", metavar="ID", help="a session of this project (default: the newest)"
    )


# --- hook -------------------------------------------------------------------------------


def run_hook(args: argparse.Namespace) -> int:
    """`workbench hook EVENT`: exit 0 with JSON (or nothing), or 1 with one line on stderr.

    Never 2, and never a traceback: Claude Code treats exit code 2 as "block" for several
    events, and a hook must not stop a session because of its own trouble."""
    from workbench.live.hooks import HookOptions, answer, parse_hook_input

    try:
        from workbench.engine import Engine

        # Bounded and depth-checked, like the status line's payload.
        stdin = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin
        payload = Engine.read_json_input(
            getattr(stdin, "buffer", stdin),
            "the hook input",
            missing="no hook input on stdin (Claude Code sends a JSON object)",
        )
        hook = parse_hook_input(args.event, payload)
        options = HookOptions(
            context=args.context,
            quiet=args.quiet,
            propose=args.propose,
            foreground=args.foreground,
            wait_seconds=max(0.0, min(args.wait, 30.0)),
        )
        out = answer(args.event, hook, functools.partial(_hook_engine, args), options)
    except KeyboardInterrupt:
        return ExitCode.ACTION_REQUIRED
    except Exception as exc:  # noqa: BLE001 - a hook answers every failure with one line
        _hook_failed(args.event, exc)
        return ExitCode.ACTION_REQUIRED
    if out is not None:
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return ExitCode.OK


def _hook_failed(event: str, exc: BaseException) -> None:
    from workbench.engine.errors import WorkbenchError

    if isinstance(exc, WorkbenchError):
        message = str(exc)
    elif isinstance(exc, OSError):
        message = f"{exc.strerror or exc.__class__.__name__}: {exc.filename or ''}".strip(": ")
    else:
        message = f"internal error ({exc.__class__.__name__}); set WORKBENCH_DEBUG=1 for details"
        if os.environ.get("WORKBENCH_DEBUG"):
            import traceback

            traceback.print_exception(exc, file=sys.stderr)
    warn(f"hook {event}: {message}")


def _hook_engine(args: argparse.Namespace, cwd: str | None) -> Engine:
    """The engine for the session's project: --project, else the cwd Claude Code sends."""
    project = option(args, "project")
    if not project:
        for candidate in (cwd, os.environ.get("CLAUDE_PROJECT_DIR")):
            if candidate and os.path.isdir(candidate):
                project = candidate
                break
    if project:
        args = type(args)(**{**vars(args), "project": project})
    return open_engine(args)


# --- mcp --------------------------------------------------------------------------------


def run_mcp(args: argparse.Namespace) -> int:
    """`workbench mcp`: serve until the client hangs up (stdio) or Ctrl-C (HTTP)."""
    token = args.token or os.environ.get("WORKBENCH_MCP_TOKEN") or None
    if args.http is None and (args.token or args.host != "127.0.0.1"):
        raise UserInputError("--host and --token go with --http PORT")
    if args.http is not None and not 0 <= args.http <= 65535:
        raise UserInputError(f"not a port: {args.http}")
    try:
        from workbench.live import mcp_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "mcp":
            raise
        raise UserInputError("the mcp package is not installed (pip install 'mcp>=2,<3')") from None
    if args.http is not None:
        mcp_server.check_bind(args.host, token)
    engine = open_engine(args)
    server = mcp_server.build_server(engine, allow_writes=args.allow_writes)
    if args.http is None:
        mcp_server.serve_stdio(server)
        return ExitCode.OK

    def listening(url: str) -> None:
        sys.stdout.write(url + "\n")
        sys.stdout.flush()
        warn(
            f"MCP server on {url}"
            + (" (bearer token required)" if token else "")
            + ("; writes go straight to disk" if args.allow_writes else "; writes are queued")
        )

    try:
        mcp_server.serve_http(
            server, host=args.host, port=args.http, token=token, on_listening=listening
        )
    except OSError as exc:
        raise UserInputError(f"cannot serve on {args.host}:{args.http}: {exc.strerror}") from None
    return ExitCode.OK


# --- integrate --------------------------------------------------------------------------


def run_integrate(args: argparse.Namespace) -> int:
    from workbench.live import claude_settings as cs

    engine = open_engine(args)
    project = option(args, "project") or os.getcwd()
    files = cs.targets_for(
        args.scope,
        config_home=engine.locations.config_home,
        project=os.path.abspath(project),
        env=engine.env,
    )
    states = cs.StateStore()
    if args.remove:
        targets = [files["settings"], files["mcp"]]
        changes = cs.plan_remove(targets, states)
    else:
        launcher = cs.default_launcher(args.scope)
        if args.command:
            launcher = _split_command(args.command)
        events = (
            () if args.no_hooks else cs.DEFAULT_EVENTS + (("Stop",) if args.extract_on_stop else ())
        )
        wanted = cs.Wanted(
            launcher=tuple(launcher),
            statusline=not args.no_statusline,
            events=events,
            mcp=not args.no_mcp,
            replace_statusline=args.replace_statusline,
            hook_flags={"Stop": ("--propose",)},
        )
        targets = []
        if wanted.statusline or wanted.events:
            targets.append(files["settings"])
        if wanted.mcp:
            targets.append(files["mcp"])
        changes = cs.plan_install(targets, wanted, states)
    pending = [c for c in changes if c.changed]
    data: dict[str, Any] = {
        "scope": args.scope,
        "remove": args.remove,
        "files": [c.to_json() for c in changes],
        "applied": False,
        "backups": [],
    }
    if not wants_json(args):
        for line in cs.summary(changes):
            sys.stdout.write(line + "\n")
        for change in pending:
            sys.stdout.write(change.diff())
    if not pending:
        return _integrate_done(
            args, data, "nothing to do: already " + ("removed" if args.remove else "in place")
        )
    if args.dry_run:
        return _integrate_done(args, data, "dry run: nothing was changed")
    if not args.yes and not _confirm("Apply these changes? [y/N] "):
        _integrate_done(args, data, None)
        warn("nothing was changed (answer y, or pass --yes)")
        return ExitCode.ACTION_REQUIRED
    data["backups"] = cs.apply(changes, states)
    data["applied"] = True
    done = "removed from Claude Code's settings" if args.remove else "added to Claude Code"
    extra = f"; backups: {', '.join(data['backups'])}" if data["backups"] else ""
    return _integrate_done(args, data, done + extra)


def _split_command(command: str) -> list[str]:
    import shlex

    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise UserInputError(f"--command is not a command line ({exc})") from None
    if not words:
        raise UserInputError("--command is empty")
    return words


def _confirm(question: str) -> bool:
    if sys.stdin is None or not sys.stdin.isatty():
        return False
    sys.stderr.write(question)
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _integrate_done(args: argparse.Namespace, data: dict[str, Any], message: str | None) -> int:
    if wants_json(args):
        emit(args, data)
    elif message:
        sys.stdout.write(message + "\n")
    return ExitCode.OK


# --- compactions ------------------------------------------------------------------------


def run_compactions(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    session = args.session
    if not session:
        session = engine.context.resolve_transcript(latest=True).stem
    else:
        try:
            session = engine.context.resolve_transcript(session=session).stem
        except NotFoundError:
            pass  # records outlive a deleted transcript; the id is checked when read
    records = engine.context.compaction_log.records(session)
    data = {"session_id": session, "compactions": [r.to_json() for r in records]}

    def human(con: Console) -> None:
        from rich.markup import escape

        from workbench.live.hooks import describe_loss

        if not records:
            con.print(
                f"No compactions recorded for session {session[:8]} (the PreCompact and "
                "PostCompact hooks record them: `workbench integrate claude`)"
            )
            return
        for record in records:
            snap = record.snapshot
            head = record.created[:19].replace("T", " ")
            if snap is not None:
                head += (
                    f"  {snap.trigger or '?'}  {snap.pre_tokens:,} tokens  "
                    f"{plural(snap.summarised_messages, 'message')} summarised"
                )
            con.print(f"[bold]{escape(head)}[/bold]")
            con.print("  " + escape(describe_loss(record)))

    emit(args, data, human)
    return ExitCode.OK
