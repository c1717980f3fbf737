"""What the Team sync pane shows, as pure functions of the engine's `TeamOverview`.

No I/O and no widgets here: the pane (`team.py`) feeds these the overview and its own state
(busy, watching, the latest event) and puts the results into its Statics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.content import Content

from workbench.engine.team.sync.models import PushResult
from workbench.ui.formatting import plural
from workbench.ui.panes.review_view import age_text

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from workbench.engine.team.models import SecretPreview, TeamOverview
    from workbench.engine.team.sync.models import KeyState, PullResult, SyncStatus

# Display of each per-key state: mark, words, style. The order is the legend's.
KEY_STATES: dict[str, tuple[str, str, str]] = {
    "in_sync": ("✓", "in sync", "$text-success"),
    "local_changed": ("↑", "changed here", "$text-primary"),
    "local_only": ("↑", "new here", "$text-primary"),
    "server_changed": ("↓", "changed on server", "$text-secondary"),
    "server_only": ("↓", "only on server", "$text-secondary"),
    "both_changed": ("⇅", "changed on both", "$text-warning"),
    "deleted_locally": ("✗", "deleted here", "$text-warning"),
    "secret_blocked": ("✖", "holds a secret", "$text-error"),
    "too_large": ("✖", "over 250 KB", "$text-error"),
}
SUPPRESSION_CAUSES: dict[str, str] = {
    "http_401": "the server refused the token",
    "http_403": "the server refused the token for this repo",
    "http_404": "the server has no team-memory endpoint at this address",
    "http_413": "the server refused the push as too large (too many entries)",
    "no_token": "there is no token",
    "no_repo": "there is no github.com repo",
}
KEYS_LEGEND = Content.styled(
    "↑ the next push sends it · ↓ the next pull brings it · ⇅ a push overwrites the teammate's "
    "edit (local wins) · hashes that moved since the last sync are bright",
    "$foreground-muted italic",
)
PREVIEW_LINES = 60
HISTORY_ROWS = 15


# --- what the pane shows -----------------------------------------------------------------


@dataclass(frozen=True)
class LastSync:
    """The latest push, pull or watch event, in words."""

    text: str
    severity: SeverityLevel = "information"


# --- rendering helpers (pure) ------------------------------------------------------------


def short_hash(value: str | None) -> str:
    """The first 8 hex digits of a `sha256:` hash, or a dash."""
    return "—" if value is None else value.removeprefix("sha256:")[:8]


def section_title(title: str, detail: str = "") -> Content:
    """A section heading with an optional muted count."""
    return Content.assemble(
        (title, "bold $text-primary"), (f"  {detail}" if detail else "", "$foreground-muted")
    )


def keys_content(status: SyncStatus) -> Content:
    """The per-key table: state, then local / server / last-synced hashes."""
    return Content("\n").join(keys_rows(status))


def keys_rows(status: SyncStatus) -> list[Content]:
    """The per-key table, one `Content` per row (what `keys_content` joins)."""
    rows = status.keys
    if not rows:
        return [
            section_title("Files"),
            Content.styled(
                "The team folder is empty and the server has sent nothing yet.",
                "$foreground-muted",
            ),
        ]
    width = min(36, max(12, *(len(row.key) for row in rows)))
    header = Content.styled(
        f"{'file':<{width}}  {'state':<19} {'local':<8} {'server':<8} {'synced':<8}",
        "$foreground-muted",
    )
    lines = [section_title("Files", plural(len(rows), "file")), header]
    for row in rows:
        mark, words, style = KEY_STATES.get(row.state, ("?", row.state, "$foreground-muted"))
        key = row.key if len(row.key) <= width else row.key[: width - 1] + "…"

        def cell(value: str | None, row: KeyState = row) -> tuple[str, str]:
            moved = value is not None and value != row.last_synced
            return (f"{short_hash(value):<8} ", "" if moved else "$foreground-muted")

        lines.append(
            Content.assemble(
                (f"{key:<{width}}  ", ""),
                (f"{mark} {words:<17} ", style),
                cell(row.local),
                cell(row.server),
                (short_hash(row.last_synced), "$foreground-muted"),
            )
        )
    return lines


def conflicts_content(status: SyncStatus, now_ms: float) -> Content:
    """The 412 conflict history, newest first."""
    if not status.conflicts:
        return Content.assemble(
            section_title("Conflicts (HTTP 412)"),
            "\n",
            ("None yet: every push so far met the server state it expected.", "$foreground-muted"),
        )
    lines = [section_title("Conflicts (HTTP 412)", plural(len(status.conflicts), "conflict"))]
    for conflict in reversed(status.conflicts[-10:]):
        resolved = conflict.get("resolved")
        if resolved is True:
            mark, outcome = "✓", "resolved: re-read the server's hashes and pushed again"
            style = "$text-success"
        elif resolved is False:
            mark, outcome, style = "✖", "gave up: the team memory kept changing", "$text-error"
        else:
            mark, outcome, style = "▲", "not resolved yet", "$text-warning"
        keys = [str(k) for k in conflict.get("pending_keys") or []]
        count = int(conflict.get("pending_count") or len(keys))
        shown = ", ".join(keys[:3]) + (f" and {count - 3} more" if count > 3 else "")
        lines.append(
            Content.assemble(
                (f"{mark} ", style),
                (f"{age_text(str(conflict.get('time', '')), now_ms):<13}", "$foreground-muted"),
                (outcome, style),
            )
        )
        lines.append(
            Content.assemble(
                " " * 15,
                (f"attempt {conflict.get('attempt', '?')} · {plural(count, 'file')} pending", ""),
                (f": {shown}" if shown else "", "$foreground-muted"),
            )
        )
    return Content("\n").join(lines)


def overwrites_content(report: TeamOverview, now_ms: float) -> Content:
    """Teammates' versions our pushes replaced (local wins), each named, and which can be
    restored from history with `o` (the newest restorable first)."""
    overwrites = report.status.overwrites
    lines = [
        section_title(
            "Overwritten teammate changes", plural(len(overwrites), "file") + " · local won"
        )
    ]
    next_id = report.restorable[0] if report.restorable else None
    for overwrite in overwrites:
        when = f"{age_text(overwrite.time, now_ms):<13}"
        if overwrite.history_id is None:
            mark, note, style = "✖", "their version could not be fetched to keep", "$text-error"
        elif overwrite.history_id not in report.restorable:
            mark, note, style = "✓", "their version was restored", "$text-success"
        elif overwrite.history_id == next_id:
            mark, note, style = "▲", "their version is in history · o restores it", "$text-warning"
        else:
            mark, note, style = "▲", "their version is in history", "$text-warning"
        lines.append(
            Content.assemble(
                (f"{mark} ", style),
                (when, "$foreground-muted"),
                (overwrite.key, "bold"),
                ("  a push replaced a teammate's newer version; ", ""),
                (note, style),
            )
        )
    return Content("\n").join(lines)


def held_back_content(report: TeamOverview) -> Content:
    """Files a push leaves out: secrets (path, rule, label), too large, over the limit."""
    status = report.status
    lines: list[Content] = []
    for secret in status.skipped_secrets:
        lines.append(
            Content.assemble(
                ("✖ ", "$text-error"),
                (secret.path, "bold"),
                "  ",
                (", ".join(secret.rule_ids or (secret.rule_id,)), "$text-error"),
                (
                    f"  {', '.join(secret.all_labels)}: holds a secret, never pushed",
                    "$foreground-muted",
                ),
            )
        )
    for path in status.skipped_too_large:
        lines.append(
            Content.assemble(
                ("✖ ", "$text-error"),
                (path, "bold"),
                ("  over 250,000 bytes: the server would refuse it", "$foreground-muted"),
            )
        )
    if report.over_limit:
        limit = status.max_entries
        lines.append(
            Content.assemble(
                ("▲ ", "$text-warning"),
                (", ".join(report.over_limit[:6]), "bold"),
                (" and more" if len(report.over_limit) > 6 else "", ""),
                (f"  past the server's limit of {limit} entries: not pushed", "$foreground-muted"),
            )
        )
    if not lines:
        return Content.assemble(
            section_title("Held back"),
            "\n",
            ("Nothing: every team file can be pushed.", "$foreground-muted"),
        )
    count = len(status.skipped_secrets) + len(status.skipped_too_large) + len(report.over_limit)
    return Content("\n").join([section_title("Held back", plural(count, "file")), *lines])


def preview_content(preview: SecretPreview) -> Content:
    """Findings by position, then the file with each secret replaced by [REDACTED]."""
    lines = [
        Content.assemble(
            (preview.path, "bold"),
            (
                f"  {plural(len(preview.findings), 'finding')}, "
                f"{plural(preview.redactions, 'redaction')}",
                "$foreground-muted",
            ),
        )
    ]
    flagged: set[int] = set()
    for finding in preview.findings:
        flagged.update(range(finding.line, finding.end_line + 1))
        placeholder = (
            f"  (looks like a placeholder: {finding.placeholder_reason})"
            if finding.likely_placeholder
            else ""
        )
        lines.append(
            Content.assemble(
                ("  ✖ ", "$text-error"),
                (f"line {finding.line}, col {finding.column}", ""),
                "  ",
                (finding.rule_id, "$text-error"),
                (f"  {finding.label}", "$foreground-muted"),
                (placeholder, "$foreground-muted italic"),
            )
        )
    text_lines = preview.redacted.splitlines()
    width = len(str(min(len(text_lines), PREVIEW_LINES)))
    for number, text in enumerate(text_lines[:PREVIEW_LINES], start=1):
        pieces: list[Content | tuple[str, str] | str] = [
            (f"  {number:>{width}} ", "$text-error" if number in flagged else "$foreground-muted"),
            ("│ ", "$foreground-muted"),
        ]
        for index, part in enumerate(text.split("[REDACTED]")):
            if index:
                pieces.append(("[REDACTED]", "bold $text-warning on $warning-muted"))
            pieces.append(part)
        lines.append(Content.assemble(*pieces))
    if len(text_lines) > PREVIEW_LINES:
        lines.append(
            Content.styled(f"  … {len(text_lines) - PREVIEW_LINES} more lines", "$foreground-muted")
        )
    return Content("\n").join(lines)


def secrets_content(report: TeamOverview) -> Content:
    """Every held-back file's findings and redaction preview."""
    if not report.previews:
        return Content.assemble(
            section_title("Secret findings"),
            "\n",
            ("No team file holds a secret.", "$foreground-muted"),
        )
    parts = [
        section_title(
            "Secret findings · redaction preview",
            "the secret text itself is never shown",
        )
    ]
    parts += [preview_content(preview) for preview in report.previews]
    return Content("\n").join(parts)


def history_entry_content(entry: dict[str, Any], now_ms: float) -> Content:
    """One line of the sync history."""
    status = str(entry.get("status", "?"))
    operation = str(entry.get("operation", "?"))
    style = {
        "ok": "$text-success",
        "not_modified": "$text-success",
        "empty": "$foreground-muted",
        "suppressed": "$text-warning",
        "conflict": "$text-error",
        "error": "$text-error",
    }.get(status, "")
    details: list[str] = []
    if operation == "push":
        if "uploaded" in entry:
            details.append(f"{entry['uploaded']} uploaded")
        if entry.get("batches"):
            details.append(plural(int(entry["batches"]), "request"))
        if entry.get("conflict_retries"):
            details.append(plural(int(entry["conflict_retries"]), "conflict retry"))
    elif operation == "pull" and "written" in entry:
        details.append(f"{entry['written']} written")
    error = entry.get("error")
    message = error.get("message", "") if isinstance(error, dict) else ""
    return Content.assemble(
        (f"{age_text(str(entry.get('time', '')), now_ms):<12} ", "$foreground-muted"),
        (f"{operation:<5} ", "bold"),
        (f"{status.replace('_', ' '):<13}", style),
        (" · ".join(details), "$foreground-muted"),
        (f"  {message}" if message else "", "$text-error"),
    )


def history_content(status: SyncStatus, now_ms: float) -> Content:
    """The latest syncs, newest first."""
    if not status.history:
        return Content.assemble(
            section_title("History"), "\n", ("No sync has run yet.", "$foreground-muted")
        )
    shown = status.history[:HISTORY_ROWS]
    detail = f"latest {len(shown)} of {len(status.history)}"
    return Content("\n").join(
        [section_title("History", detail), *(history_entry_content(e, now_ms) for e in shown)]
    )


def engine_label(report: TeamOverview, *, watching: bool = False) -> str:
    """For the status line: which server push and pull talk to, or why there is none."""
    status = report.status
    if not report.available:
        return f"sync: offline ({report.problems[0].problem.lower()})"
    return f"sync: server {status.server}{', watching' if watching else ''}"


def suppression_lines(reason: str) -> list[Content]:
    """Why pushes are suppressed and how that lifts."""
    cause = SUPPRESSION_CAUSES.get(reason)
    if cause is None and reason.startswith("http_"):
        cause = (
            f"the server rejected a push with HTTP {reason[5:]}; a retry would fail the same way"
        )
    return [
        Content.assemble(
            ("Pushes are suppressed ", "bold $text-warning"),
            (f"({reason})", "$text-warning"),
            f": {cause or 'an earlier push failed permanently'}.",
        ),
        Content.styled(
            "They resume when a team file is deleted (as in Claude Code), when watch starts a "
            "new session, or with a forced push (F) once the cause is fixed.",
            "$foreground-muted",
        ),
    ]


def push_summary(result: PushResult, repo: str) -> LastSync:
    """A push result in one sentence."""
    if result.status == "suppressed":
        return LastSync(
            f"Push skipped: pushes are suppressed ({result.suppressed_reason}).", "warning"
        )
    held = (
        len(result.skipped_secrets) + len(result.skipped_too_large) + len(result.skipped_over_limit)
    )
    held_back = f" {plural(held, 'file')} held back: see the files below." if held else ""
    if result.status == "ok" and result.uploaded == 0:
        every = "every file it can push" if held else "every local file"
        return LastSync(
            f"Nothing to push: {repo} already has {every}.{held_back}",
            "warning" if held else "information",
        )
    if result.status == "ok":
        retries = (
            f" after {plural(result.conflict_retries, 'conflict retry')}"
            if result.conflict_retries
            else ""
        )
        names = ", ".join(result.uploaded_keys[:3])
        more = len(result.uploaded_keys) - 3
        named = f" ({names}{f' and {more} more' if more > 0 else ''})" if names else ""
        return LastSync(
            f"Pushed {plural(result.uploaded, 'entry')}{named} to {repo}{retries}.{held_back}",
            "warning" if held else "information",
        )
    message = result.error.message if result.error else result.status
    if result.status == "conflict":
        return LastSync(
            f"Push gave up after {result.conflict_retries} conflict retries: {message}.", "error"
        )
    return LastSync(f"Push failed: {message}.", "error")


def pull_summary(result: PullResult, repo: str) -> LastSync:
    """A pull result in one sentence."""
    if result.status == "not_modified":
        return LastSync(f"Pulled {repo}: unchanged since the last pull.")
    if result.status == "empty":
        return LastSync(f"The server holds no team memory for {repo} yet.")
    if result.status == "error":
        message = result.error.message if result.error else "unknown error"
        return LastSync(f"Pull failed: {message}.", "error")
    skipped = f", {len(result.skipped)} skipped" if result.skipped else ""
    replaced = ""
    if result.replaced_local:
        names = ", ".join(r.key for r in result.replaced_local[:3])
        more = len(result.replaced_local) - 3
        replaced = (
            f" Replaced your unpushed change to {names}{f' and {more} more' if more > 0 else ''}"
            " with the team's version; yours is kept in history (u in the tree undoes it)."
        )
    return LastSync(
        f"Pulled {repo}: {len(result.written)} written, {result.unchanged} already up to date"
        f"{skipped}.{replaced}",
        "warning" if replaced else "information",
    )


def header_content(report: TeamOverview, *, busy: str | None, watching: bool) -> Content:
    """Repo and server, what the pane is doing, and what a push would send."""
    status = report.status
    if busy:
        activity: tuple[str, str] = (f"◌ {busy}", "$text-accent")
    elif watching:
        activity = ("● watching", "bold $text-success")
    else:
        activity = ("○ not watching", "$foreground-muted")
    limit = (
        f"server limit {status.max_entries} entries"
        if status.max_entries is not None
        else "no entry limit learned"
    )
    pending = len(status.pending)
    lines = [
        Content.assemble(
            (status.repo or "no repo", "bold" if status.repo else "bold $text-warning"),
            ("  ⇄  ", "$foreground-muted"),
            (status.server or "no server", "" if status.server else "$text-warning"),
            "   ",
            activity,
        ),
        Content.assemble(
            (plural(status.local_entries, "local file"), ""),
            ("  ·  ", "$foreground-muted"),
            (f"{pending} to push", "bold $text-primary" if pending else "$foreground-muted"),
            ("  ·  ", "$foreground-muted"),
            (limit, "$foreground-muted"),
            ("  ·  ", "$foreground-muted"),
            (f"checksum {short_hash(status.last_checksum)}", "$foreground-muted"),
        ),
    ]
    if pending:
        shown = ", ".join(status.pending[:8]) + (" …" if pending > 8 else "")
        lines.append(Content.assemble(("pending: ", "$foreground-muted"), shown))
    return Content("\n").join(lines)


def notices_content(report: TeamOverview, last: LastSync | None) -> tuple[Content, str]:
    """Why sync is unavailable (every problem with its fix), a suppression, and the latest
    event; with the level the box shows (`info`, `warning` or `error`). Empty: no box."""
    lines: list[Content] = []
    level = "info"
    if report.problems:
        level = "error"
        lines.append(Content.styled("Sync is unavailable", "bold $text-error"))
        for problem in report.problems:
            lines.append(
                Content.assemble(
                    ("✖ ", "$text-error"), (problem.problem, "bold"), (": " + problem.fix, "")
                )
            )
    if report.status.suppressed_reason:
        level = "error" if level == "error" else "warning"
        lines += suppression_lines(report.status.suppressed_reason)
    if last is not None:
        severity = last.severity
        style = {"error": "$text-error", "warning": "$text-warning"}.get(severity, "")
        if severity == "error" or (severity == "warning" and level == "info"):
            level = severity
        lines.append(Content.styled(last.text, style))
    return (Content("\n").join(lines) if lines else Content()), level
