"""Team commands (spec 05): `scan-secrets` and `redact` here; `sync …` and `team-server`
live in `workbench/commands/team_sync.py` and are registered from here.

To add more team commands, give them their own `_register_…` function and call it from
`register`, as `_register_sync_commands` does for the sync half.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.commands.common import (
    ExitCode,
    console,
    emit,
    open_engine,
    plain,
    wants_json,
    warn,
)
from workbench.commands.progress import progress_line
from workbench.engine.errors import UserInputError
from workbench.engine.models import plural, plural_noun

# The same as the engine's (`secrets.formats.FORMATS`, `secrets.report.STDIN_NAME`; a test
# checks): named here so that building the parser does not import the scanner.
FORMATS = ("table", "json", "sarif", "csv", "junit")
STDIN_NAME = "<stdin>"

if TYPE_CHECKING:
    from rich.console import Console

    from workbench.engine.team.secrets.audit import AuditItem
    from workbench.engine.team.secrets.report import SecretScanReport
    from workbench.engine.team.secrets.scanner import SecretFinding
    from workbench.engine.team.secrets.suppression import Baseline
    from workbench.engine.team.service import TeamService


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


def _size(text: str) -> int:
    """`--max-size` values: bytes, or with a K, M or G suffix (powers of 1024)."""
    value = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = 1
    if value[-1:] in _SIZE_SUFFIXES:
        scale = _SIZE_SUFFIXES[value[-1]]
        value = value[:-1]
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 250000, 500K, 1M)") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}")
    return int(number * scale)


_SIZE_SUFFIXES = {"K": 1024, "M": 1024**2, "G": 1024**3}


def _exit_code(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an exit code: {text!r}") from None
    if not 0 <= value <= 255:
        raise argparse.ArgumentTypeError(f"exit codes are 0 to 255, not {value}")
    return value


def _register_secret_commands(
    subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser
) -> None:
    scan = subparsers.add_parser(
        "scan-secrets",
        parents=[common],
        help="look for credentials with Claude Code's 36 team-memory rules",
        description=(
            "Scan files and folders (default: the memory folder; '-' reads standard input) "
            "with the rules Claude Code uses to keep secrets out of team memory. Exits 1 "
            "(or --exit-code) when a finding is not suppressed. Matched text is never printed "
            "or stored, not even in a baseline. Suppress a finding with "
            "'workbench:allow-secret' on its line, 'workbench:allow-secret-next-line' on the "
            "line above, an exclusion, or a baseline file of fingerprints."
        ),
    )
    scan.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders to scan; '-' for stdin"
    )
    out = scan.add_argument_group("output")
    out.add_argument(
        "--format",
        choices=FORMATS,
        help="report format (default: table; --json is --format json)",
    )
    out.add_argument("--output", metavar="FILE", help="write the report to FILE, not stdout")
    out.add_argument(
        "--exit-code",
        type=_exit_code,
        default=ExitCode.ACTION_REQUIRED,
        metavar="N",
        help="exit status when findings are left after suppression (default: 1)",
    )
    out.add_argument(
        "--list-suppressed",
        action="store_true",
        help="also list what allow markers, exclusions and the baseline suppressed",
    )
    what = scan.add_argument_group("what to scan")
    what.add_argument(
        "--stdin-name",
        metavar="NAME",
        default=STDIN_NAME,
        help=f"how findings on standard input are named (default: {STDIN_NAME})",
    )
    what.add_argument(
        "--exclude-path",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files whose path under the scanned folder, a parent folder or name "
        "matches GLOB (repeatable)",
    )
    what.add_argument(
        "--exclude-line",
        action="append",
        default=[],
        metavar="REGEX",
        help="suppress findings on lines matching REGEX (repeatable)",
    )
    what.add_argument(
        "--exclude-fingerprint",
        action="append",
        default=[],
        metavar="FP",
        help="suppress the finding with this fingerprint (8+ leading digits; repeatable)",
    )
    what.add_argument(
        "--exclude-rule",
        action="append",
        default=[],
        metavar="RULE",
        help="suppress findings of this rule id (repeatable)",
    )
    what.add_argument(
        "--max-size",
        type=_size,
        metavar="SIZE",
        help="skip files larger than SIZE bytes (K, M, G suffixes; listed as skipped)",
    )
    what.add_argument(
        "--engine",
        choices=("auto", "hyperscan", "re"),
        help="secret engine (default: $WORKBENCH_SECRET_ENGINE, else auto)",
    )
    base = scan.add_argument_group("baselines")
    base.add_argument("--baseline", metavar="FILE", help="fingerprints to suppress (text or JSON)")
    modes = base.add_mutually_exclusive_group()
    modes.add_argument(
        "--write-baseline",
        metavar="FILE",
        help="write every current finding's fingerprint to FILE (then exit 0)",
    )
    modes.add_argument(
        "--update-baseline",
        metavar="FILE",
        help="bring FILE up to date in place: add new findings, drop those gone, keep labels",
    )
    modes.add_argument(
        "--audit",
        metavar="FILE",
        help="label FILE's entries real / false-positive / placeholder (asks on a terminal; "
        "else use --mark) and print the counts",
    )
    base.add_argument(
        "--mark",
        action="append",
        default=[],
        metavar="FP=LABEL",
        help="with --audit: label an entry (FP: 8+ leading digits, or '*' for every "
        "entry not audited yet; LABEL: real, false-positive, placeholder)",
    )
    scan.set_defaults(handler=run_scan_secrets)

    redact = subparsers.add_parser(
        "redact",
        parents=[common],
        help="print a file with every secret replaced by [REDACTED]",
        description=(
            "Print PATH ('-' for standard input) with every secret replaced by [REDACTED]; "
            "the file is unchanged."
        ),
    )
    redact.add_argument("path", metavar="PATH", help="the file to redact ('-' for stdin)")
    redact.set_defaults(handler=run_redact)


def _read_stdin() -> str:
    return sys.stdin.buffer.read().decode("utf-8", errors="replace")


def run_scan_secrets(args: argparse.Namespace) -> int:
    if args.mark and not args.audit:
        raise UserInputError("--mark labels baseline entries; use it with --audit FILE")
    own = args.update_baseline or args.audit
    if own and args.baseline:
        flag = "--update-baseline" if args.update_baseline else "--audit"
        raise UserInputError(f"{flag} {own} is the baseline this run uses; drop --baseline")
    fmt = "json" if wants_json(args) else (args.format or "table")
    engine = open_engine(args)
    team = engine.team
    exclusions = team.exclusions(
        paths=args.exclude_path,
        lines=args.exclude_line,
        fingerprints=args.exclude_fingerprint,
        rules=args.exclude_rule,
    )
    paths = [p for p in args.paths if p != "-"]
    texts = [(args.stdin_name, _read_stdin())] if "-" in args.paths else []
    baseline_file = args.baseline or args.audit
    baseline: Baseline | None
    if args.update_baseline:
        baseline = team.load_baseline(args.update_baseline, missing_ok=True)
    else:
        baseline = team.load_baseline(baseline_file) if baseline_file else None
    with progress_line(args) as on_progress:
        report = team.scan_paths(
            paths,
            baseline=baseline,
            backend=args.engine,
            exclusions=exclusions or None,
            max_size=args.max_size,
            texts=texts,
            on_progress=on_progress,
        )
    for item in report.unreadable:
        warn(f"could not read {item.path}: {item.reason}")
    for item in report.skipped:
        warn(f"skipped {item.path}: {item.reason}")
    if args.audit:
        assert baseline is not None
        return _run_audit(team, args, report, baseline)
    if args.write_baseline:
        written = team.baseline_of(report.all_findings)
        written.write(args.write_baseline)
        count, findings = len(written.fingerprints), len(report.all_findings)
        warn(
            f"wrote {count} {plural_noun(count, 'fingerprint')} to {args.write_baseline} "
            f"({findings} {plural_noun(findings, 'finding')})"
        )
        report = report.with_baseline(written)
        _emit_report(team, args, fmt, report)
        return ExitCode.OK
    if args.update_baseline:
        previous = baseline or team.baseline_of(())
        updated, change = previous.updated(report.all_findings)
        updated.write(args.update_baseline)
        warn(
            f"updated {args.update_baseline}: {change.added} added, {change.removed} removed, "
            f"{change.kept} kept ({len(updated.fingerprints)} fingerprints; labels kept)"
        )
        report = report.with_baseline(updated)
    _emit_report(team, args, fmt, report)
    return args.exit_code if report.needs_action else ExitCode.OK


def _emit_report(
    team: TeamService, args: argparse.Namespace, fmt: str, report: SecretScanReport
) -> None:
    if fmt == "table":
        if args.output:
            from rich.console import Console

            buffer = io.StringIO()
            print_report(Console(file=buffer, width=100, no_color=True), report, args)
            team.write_report(args.output, buffer.getvalue())
        else:
            print_report(console(), report, args)
        return
    text = team.render_report(report, fmt, list_suppressed=args.list_suppressed)
    if args.output:
        team.write_report(args.output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


# --- the table ------------------------------------------------------------------------------

_FINGERPRINT_SHOWN = 12
_GAPS = 3  # one space between each of the four columns


def _where(finding: SecretFinding) -> str:
    return f"{finding.path}:{finding.line}:{finding.column}"


def _note(report: SecretScanReport, finding: SecretFinding) -> str:
    notes = []
    if report.verdicts.get(finding.fingerprint) == "real":
        notes.append("labelled real in the baseline: remove and rotate it")
    if finding.likely_placeholder:
        notes.append(f"likely placeholder: {finding.placeholder_reason}")
    return "; ".join(notes)


def _findings_table(
    con: Console, rows: Sequence[tuple[str, str, str, str]], headings: Sequence[str]
) -> None:
    """Rows of (where, kind, fingerprint, note). `where` is never broken: when it cannot fit
    beside the other columns, each finding gets its own block of lines instead."""
    where_width = max(len(row[0]) for row in rows)
    kind_min, note_min = 10, 12
    if where_width + kind_min + _FINGERPRINT_SHOWN + note_min + _GAPS > con.width:
        for where, kind, fingerprint, note in rows:
            con.print(plain(where), no_wrap=True, overflow="ignore", crop=False)
            details = f"  {kind}  {fingerprint}" + (f"  {note}" if note else "")
            con.print(plain(details))
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False, show_header=True)
    table.add_column(headings[0], no_wrap=True, min_width=where_width)
    table.add_column(headings[1], min_width=kind_min, ratio=1)
    table.add_column(headings[2], no_wrap=True, min_width=_FINGERPRINT_SHOWN)
    table.add_column(headings[3], min_width=note_min, ratio=2)
    for where, kind, fingerprint, note in rows:
        table.add_row(plain(where), plain(kind), plain(fingerprint), plain(note))
    con.print(table)


def print_report(
    con: Console, report: SecretScanReport, args: argparse.Namespace | None = None
) -> None:
    """The human report: a table of findings (readable at 80 columns) and a summary."""
    if report.findings:
        rows = [
            (_where(f), f.label, f.fingerprint[:_FINGERPRINT_SHOWN], _note(report, f))
            for f in report.findings
        ]
        _findings_table(con, rows, ("where", "secret kind", "fingerprint", "note"))
    list_suppressed = bool(args is not None and getattr(args, "list_suppressed", False))
    if list_suppressed and report.suppressed_findings:
        con.print("suppressed:", markup=False)
        rows = [
            (
                _where(s.finding),
                s.finding.label,
                s.finding.fingerprint[:_FINGERPRINT_SHOWN],
                s.by + (f" ({s.detail})" if s.detail else ""),
            )
            for s in report.suppressed_findings
        ]
        _findings_table(con, rows, ("where", "secret kind", "fingerprint", "suppressed by"))
    files = f"{report.files_scanned} {plural_noun(report.files_scanned, 'file')}"
    found = len(report.findings)
    summary = f"{found} {plural_noun(found, 'finding')} in {files}"
    detail = []
    if report.suppressed_inline:
        detail.append(f"{report.suppressed_inline} by allow marker")
    if report.suppressed_excluded:
        detail.append(f"{report.suppressed_excluded} by exclusion")
    if report.suppressed_baseline:
        detail.append(f"{report.suppressed_baseline} by baseline")
    summary += f"; {report.suppressed} suppressed" + (f" ({', '.join(detail)})" if detail else "")
    if report.files_excluded:
        summary += f"; {report.files_excluded} excluded"
    if report.skipped:
        summary += f"; {len(report.skipped)} skipped"
    con.print(f"{summary} [{report.engine} engine]", markup=False)


# --- audit ----------------------------------------------------------------------------------


def _run_audit(
    team: TeamService, args: argparse.Namespace, report: SecretScanReport, baseline: Baseline
) -> int:
    if args.mark:
        baseline = team.mark_baseline(baseline, args.mark)
        baseline.write(args.audit)
    elif _interactive():
        baseline = _ask_labels(args.audit, baseline, team.audit_items(baseline, report))
    items = team.audit_items(baseline, report)
    if wants_json(args):
        emit(
            args,
            {
                "baseline": args.audit,
                "counts": baseline.counts(),
                "entries": [
                    item.entry.to_json() | {"where": item.where, "found": item.finding is not None}
                    for item in items
                ],
            },
        )
    else:
        con = console()
        for item in items:
            label = item.entry.verdict or "not audited"
            gone = "" if item.finding is not None else "  (no longer found)"
            kind = item.finding.label if item.finding is not None else (item.entry.rule_id or "")
            con.print(
                plain(
                    f"{item.entry.fingerprint[:_FINGERPRINT_SHOWN]}  {label:<14} {kind}  "
                    f"{item.where}{gone}"
                )
            )
    warn(f"{args.audit}: {team.audit_counts(baseline)}")
    return ExitCode.OK


def _interactive() -> bool:
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


_ANSWERS = {"r": "real", "f": "false-positive", "p": "placeholder"}


def _ask_labels(path: str, baseline: Baseline, items: Sequence[AuditItem]) -> Baseline:
    """Ask about each entry not audited yet; the file is saved after every answer, so
    quitting (q, ctrl+d, ctrl+c) keeps what was labelled."""
    todo = [item for item in items if item.entry.verdict is None]
    out = sys.stdout
    for number, item in enumerate(todo, 1):
        kind = item.finding.label if item.finding is not None else (item.entry.rule_id or "?")
        out.write(f"\n[{number}/{len(todo)}] {kind} at {item.where}\n")
        out.write(f"  fingerprint {item.entry.fingerprint}\n")
        if item.finding is None:
            out.write("  (no longer found by this scan)\n")
        elif item.finding.likely_placeholder:
            out.write(f"  likely placeholder: {item.finding.placeholder_reason}\n")
        for line_number, text in item.context:
            mark = ">" if item.finding and line_number == item.finding.line else " "
            out.write(f"  {mark}{line_number:>5} | {text}\n")
        while True:
            try:
                answer = input("  (r)eal, (f)alse positive, (p)laceholder, (s)kip, (q)uit? ")
            except EOFError:
                answer = "q"
            answer = answer.strip().lower()[:1]
            if answer in _ANSWERS or answer in ("s", "q"):
                break
        if answer == "q":
            break
        if answer == "s":
            continue
        baseline = baseline.with_verdict(item.entry.fingerprint, _ANSWERS[answer])
        baseline.write(path)
    return baseline


def run_redact(args: argparse.Namespace) -> int:
    engine = open_engine(args)
    if args.path == "-":
        result = engine.team.redact_text(_read_stdin())
        shown = STDIN_NAME
    else:
        result = engine.team.redact_file(args.path)
        shown = engine.team.display_path(engine.team.resolve_file(args.path))
    if wants_json(args):
        emit(
            args,
            {
                "path": shown,
                "redactions": result.count,
                "text": result.text,
            },
        )
    else:
        sys.stdout.write(result.text)
        sys.stdout.flush()
    if result.count:
        warn(f"replaced {plural(result.count, 'secret')} with [REDACTED]")
    return ExitCode.OK
