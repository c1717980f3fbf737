"""Team commands (spec 05): `scan-secrets` and `redact` here; `sync …` and `team-server`
live in `workbench/commands/team_sync.py` and are registered from here.

To add more team commands, give them their own `_register_…` function and call it from
`register`, as `_register_sync_commands` does for the sync half.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from workbench.commands.common import ExitCode, emit, open_engine, plain, wants_json, warn

if TYPE_CHECKING:
    from rich.console import Console

    from workbench.engine.team.secrets.report import SecretScanReport


def register(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add every team command to the CLI."""
    _register_secret_commands(subparsers, common)
    _register_sync_commands(subparsers, common)


def _register_sync_commands(
    subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser
) -> None:
    """`sync …` and `team-server`, when that module is present."""
    try:
        from workbench.commands.team_sync import register_sync_commands
    except ModuleNotFoundError as exc:
        if exc.name != "workbench.commands.team_sync":
            raise
        return
    register_sync_commands(subparsers, common)


def _register_secret_commands(
    subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser
) -> None:
    scan = subparsers.add_parser(
        "scan-secrets",
        parents=[common],
        help="look for credentials with Claude Code's 36 team-memory rules",
        description=(
            "Scan files and folders (default: the memory folder) with the rules Claude Code "
            "uses to keep secrets out of team memory. Exits 1 when a finding is not "
            "suppressed. Matched text is never printed. Suppress a finding with "
            "'workbench:allow-secret' on its line or with a baseline file of fingerprints."
        ),
    )
    scan.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to scan")
    scan.add_argument("--baseline", metavar="FILE", help="fingerprints to suppress (text or JSON)")
    scan.add_argument(
        "--write-baseline",
        metavar="FILE",
        help="write every current finding's fingerprint to FILE (then exit 0)",
    )
    scan.add_argument(
        "--engine",
        choices=("auto", "hyperscan", "re"),
        help="secret engine (default: $WORKBENCH_SECRET_ENGINE, else auto)",
    )
    scan.set_defaults(handler=run_scan_secrets)

    redact = subparsers.add_parser(
        "redact",
        parents=[common],
        help="print a file with every secret replaced by [REDACTED]",
        description="Print PATH with every secret replaced by [REDACTED]; the file is unchanged.",
    )
    redact.add_argument("path", metavar="PATH", help="the file to redact")
    redact.set_defaults(handler=run_redact)


def run_scan_secrets(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    report = engine.team.scan_paths(args.paths, baseline=args.baseline, backend=args.engine)
    for item in report.unreadable:
        warn(f"could not read {item.path}: {item.reason}")
    if args.write_baseline:
        from workbench.engine.team.secrets.suppression import Baseline

        findings = report.all_findings
        baseline = Baseline.from_findings(findings)
        baseline.write(args.write_baseline, findings)
        count = len(baseline.fingerprints)
        warn(
            f"wrote {count} fingerprint{'s' if count != 1 else ''} to {args.write_baseline} "
            f"({len(findings)} finding{'s' if len(findings) != 1 else ''})"
        )
        emit(args, report.to_json(), lambda con: _print_report(con, report))
        return ExitCode.OK
    emit(args, report.to_json(), lambda con: _print_report(con, report))
    return ExitCode.ACTION_REQUIRED if report.needs_action else ExitCode.OK


def _print_report(con: Console, report: SecretScanReport) -> None:
    if report.findings:
        from rich.table import Table

        table = Table(box=None, pad_edge=False, show_edge=False)
        for heading in ("where", "secret kind", "fingerprint", "note"):
            table.add_column(heading, overflow="fold")
        for finding in report.findings:
            note = (
                f"likely placeholder: {finding.placeholder_reason}"
                if finding.likely_placeholder
                else ""
            )
            table.add_row(
                plain(f"{finding.path}:{finding.line}:{finding.column}"),
                finding.label,
                finding.fingerprint[:12],
                plain(note),
            )
        con.print(table)
    files = f"{report.files_scanned} file{'s' if report.files_scanned != 1 else ''}"
    found = len(report.findings)
    summary = f"{found} finding{'s' if found != 1 else ''} in {files}"
    detail = []
    if report.suppressed_inline:
        detail.append(f"{report.suppressed_inline} by allow marker")
    if report.suppressed_baseline:
        detail.append(f"{report.suppressed_baseline} by baseline")
    summary += f"; {report.suppressed} suppressed" + (f" ({', '.join(detail)})" if detail else "")
    con.print(f"{summary} [{report.engine} engine]", markup=False)


def run_redact(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    result = engine.team.redact_file(args.path)
    if wants_json(args):
        emit(
            args,
            {
                "path": engine.team.display_path(engine.team.resolve_file(args.path)),
                "redactions": result.count,
                "text": result.text,
            },
        )
    else:
        sys.stdout.write(result.text)
        sys.stdout.flush()
    if result.count:
        warn(f"replaced {result.count} secret(s) with [REDACTED]")
    return ExitCode.OK
