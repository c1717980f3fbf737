"""The team sync panel: where team memory syncs to, what a push would send, and how syncs went.

The status is computed offline (no request) in a thread worker and arrives as
`TeamSyncPane.ReportLoaded`. Push, pull and watch are async workers in the exclusive group
"sync"; their results come back as messages and the status is read again. Pulled overwrites go
through the engine's history, so the main screen's undo reverts them. Secrets are shown by
path, rule and position only; the redaction preview is the file with each secret replaced by
`[REDACTED]`, computed in the worker so the secret's text never reaches the pane's state.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from workbench.engine.errors import OperationCancelled, UserInputError, WorkbenchError
from workbench.engine.progress import Progress
from workbench.engine.team.sync.models import PushResult
from workbench.ui.actions import ActionSpec
from workbench.ui.messages import ChangeApplied, ChangeOutcome
from workbench.ui.panes.base import Pane
from workbench.ui.panes.review import age_text, plural

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from workbench.engine import Engine
    from workbench.engine.team.secrets.scanner import SecretFinding
    from workbench.engine.team.sync.models import PullResult, SyncStatus

PANE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "pull-team",
        "p",
        "pull_team",
        "Pull",
        "Sync: Pull team memory",
        "Fetch the team memory; the server wins per file (u undoes the overwrites)",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "push-team",
        "P",
        "push_team",
        "Push",
        "Sync: Push team memory",
        "Upload the team files that changed; files holding a secret never leave",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "toggle-watch",
        "w",
        "toggle_watch",
        "Watch",
        "Sync: Toggle watch",
        "Pull once, then push the team folder after each change settles; again to stop",
        show=True,
        scope="pane",
    ),
    ActionSpec(
        "force-push-team",
        "F",
        "force_push_team",
        "Force push",
        "Sync: Force push",
        "Push even though an earlier permanent failure suppressed pushes",
        scope="pane",
    ),
    ActionSpec(
        "cancel-push",
        "escape",
        "cancel_push",
        "Cancel",
        "Sync: Cancel the push or pull",
        "Stop a running push after the batch in flight (what went up stays recorded), or a "
        "pull before its next file",
        scope="pane",
    ),
    ActionSpec(
        "refresh-sync",
        "f5",
        "refresh_sync",
        "Refresh",
        "Sync: Refresh status",
        "Read the team folder and the saved sync state again (no request)",
        scope="pane",
    ),
)

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
class SyncProblem:
    """Why sync cannot run, and what to set."""

    problem: str
    fix: str


@dataclass(frozen=True)
class SecretPreview:
    """A team file held back for a secret: where each secret is, and the file redacted."""

    path: str
    findings: tuple[SecretFinding, ...]
    redacted: str
    """The file with every secret replaced by `[REDACTED]`."""
    redactions: int


@dataclass(frozen=True)
class TeamSyncReport:
    """Everything the panel shows, computed without a network request."""

    status: SyncStatus
    problems: tuple[SyncProblem, ...] = ()
    previews: tuple[SecretPreview, ...] = ()
    over_limit: tuple[str, ...] = ()
    """Local files left out because the server's learned entry limit was reached."""

    @property
    def available(self) -> bool:
        """Whether push, pull and watch can run."""
        return not self.problems


@dataclass(frozen=True)
class LastSync:
    """The latest push, pull or watch event, in words."""

    text: str
    severity: SeverityLevel = "information"


def build_team_report(engine: Engine) -> TeamSyncReport:
    """The offline status plus why sync is unavailable and the secret previews (blocking I/O)."""
    from workbench.engine.team.repo import resolve_repo
    from workbench.engine.team.sync.config import SERVER_ENV, TOKEN_ENV, check_server_url
    from workbench.engine.team.sync.local import read_local_entries

    problems: list[SyncProblem] = []
    repo: str | None = None
    try:
        repo = resolve_repo(engine.locations.project_root, None)
    except UserInputError:
        problems.append(
            SyncProblem(
                "No github.com remote",
                "Team memory belongs to a GitHub repo: add a github.com remote to the project "
                "(git remote add origin git@github.com:OWNER/NAME.git).",
            )
        )
    server_ok = True
    raw_server = (engine.env.get(SERVER_ENV) or "").strip()
    if not raw_server:
        problems.append(
            SyncProblem(
                "No team server",
                f"Set {SERVER_ENV} to the server's URL (`workbench team-server` runs one), "
                "then start the workbench again.",
            )
        )
    else:
        try:
            check_server_url(raw_server)
        except UserInputError as exc:
            server_ok = False
            problems.append(SyncProblem("Unusable team server URL", f"{exc}; fix {SERVER_ENV}."))
    if not (engine.env.get(TOKEN_ENV) or "").strip():
        problems.append(
            SyncProblem(
                "No team token",
                f"Set {TOKEN_ENV} to the bearer token the server accepts, "
                "then start the workbench again.",
            )
        )
    scanner = engine.team.scan_for_secrets
    if repo is not None and server_ok:
        status = engine.team.sync_status()
    else:
        from workbench.engine.team.sync.client import build_status
        from workbench.engine.team.sync.state import SyncState

        team_dir = engine.locations.team_dir
        local = read_local_entries(team_dir, scanner=scanner)
        state = SyncState(server="", repo=repo or "", team_dir=team_dir)
        status = build_status(None, repo or "", team_dir, state, local)
    over_limit: tuple[str, ...] = ()
    if status.max_entries is not None:
        over_limit = read_local_entries(
            status.team_dir, status.max_entries, scanner=scanner
        ).over_limit
    return TeamSyncReport(
        status=status,
        problems=tuple(problems),
        previews=tuple(secret_previews(engine, status)),
        over_limit=over_limit,
    )


def secret_previews(engine: Engine, status: SyncStatus) -> list[SecretPreview]:
    """Located findings and a redacted copy of every file held back for a secret."""
    from workbench.engine.team.secrets.report import read_text

    previews = []
    for skipped in status.skipped_secrets:
        try:
            text = read_text(Path(status.team_dir, skipped.path))
        except OSError:
            continue
        findings = engine.team.find_secrets(text, path=skipped.path)
        redaction = engine.team.redact_text(text)
        del text  # only the redacted copy leaves this function
        previews.append(
            SecretPreview(skipped.path, tuple(findings), redaction.text, redaction.count)
        )
    return previews


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
    rows = status.keys
    if not rows:
        return Content.assemble(
            section_title("Files"),
            "\n",
            ("The team folder is empty and the server has sent nothing yet.", "$foreground-muted"),
        )
    width = min(36, max(12, *(len(row.key) for row in rows)))
    header = Content.styled(
        f"{'file':<{width}}  {'state':<19} {'local':<8} {'server':<8} {'synced':<8}",
        "$foreground-muted",
    )
    lines = [section_title("Files", plural(len(rows), "file")), header]
    for row in rows:
        mark, words, style = KEY_STATES.get(row.state, ("?", row.state, "$foreground-muted"))
        key = row.key if len(row.key) <= width else row.key[: width - 1] + "…"

        def cell(value: str | None, row=row) -> tuple[str, str]:  # type: ignore[no-untyped-def]
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
    return Content("\n").join(lines)


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


def held_back_content(report: TeamSyncReport) -> Content:
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


def secrets_content(report: TeamSyncReport) -> Content:
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


def engine_label(report: TeamSyncReport, *, watching: bool = False) -> str:
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
    if result.status == "ok" and result.uploaded == 0:
        return LastSync(f"Nothing to push: {repo} already has every local file.")
    if result.status == "ok":
        retries = (
            f" after {plural(result.conflict_retries, 'conflict retry')}"
            if result.conflict_retries
            else ""
        )
        return LastSync(f"Pushed {plural(result.uploaded, 'entry')} to {repo}{retries}.")
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
    return LastSync(
        f"Pulled {repo}: {len(result.written)} written, {result.unchanged} already up to date"
        f"{skipped}."
    )


# --- the pane ----------------------------------------------------------------------------


class TeamSyncPane(Pane):
    """Team sync: server and repo, per-file state, conflicts, limits, secrets and history."""

    pane_id = "team"
    title = "Team sync"
    focus_target = ".team-scroll"
    empty_title = "Reading the team folder…"
    empty_message = "The sync status appears once the team folder and the saved state are read."

    BINDINGS: ClassVar[list[BindingType]] = [spec.binding() for spec in PANE_ACTIONS]

    DEFAULT_CSS = """
    TeamSyncPane {
        & .team-header { padding: 1 0 0 0; }
        & .team-notices {
            margin: 1 0 0 0; padding: 0 1; border-left: outer $primary; background: $surface;
            &.-warning { border-left: outer $warning; }
            &.-error { border-left: outer $error; }
        }
        & .team-scroll { height: 1fr; margin: 1 0 0 0; scrollbar-size-vertical: 1; }
        & .team-section { margin: 0 0 1 0; }
        & .team-keys { text-wrap: nowrap; text-overflow: ellipsis; }
    }
    """

    report: reactive[TeamSyncReport | None] = reactive(
        None, init=False, bindings=True, always_update=True
    )
    """The latest offline status (every read re-renders, so relative times stay fresh)."""
    watching: reactive[bool] = reactive(False, init=False, bindings=True)
    """The watcher is running (or starting)."""
    busy: reactive[str | None] = reactive(None, init=False, bindings=True)
    """What a sync worker is doing right now (`pushing…`), or None."""
    last: reactive[LastSync | None] = reactive(None, init=False)
    """The latest push, pull or watch event, in words."""

    class ReportLoaded(Message):
        """The offline status was read."""

        def __init__(self, report: TeamSyncReport) -> None:
            super().__init__()
            self.report = report

    class ReportFailed(Message):
        """The status could not be read."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    class SyncFinished(Message):
        """A push or pull finished (by hand or from the watcher)."""

        def __init__(
            self, operation: str, result: PushResult | PullResult, repo: str, *, watch: bool = False
        ) -> None:
            super().__init__()
            self.operation = operation
            self.result = result
            self.repo = repo
            self.watch = watch

    class SyncFailed(Message):
        """A sync could not start (no server, token or repo)."""

        def __init__(self, operation: str, error: str) -> None:
            super().__init__()
            self.operation = operation
            self.error = error

    class WatchEvent(Message):
        """The watcher is live, or lifted a suppression."""

        def __init__(self, event: str, detail: str) -> None:
            super().__init__()
            self.event = event
            self.detail = detail

    class WatchStopped(Message):
        """The watcher stopped (flushing pending changes first)."""

    class PushCancelled(Message):
        """A push stopped between batches because the user cancelled it."""

        def __init__(self, uploaded: int, total: int) -> None:
            super().__init__()
            self.uploaded = uploaded
            self.total = total

    class PullCancelled(Message):
        """A pull stopped between files because the user cancelled it."""

        def __init__(self, written: int, total: int) -> None:
            super().__init__()
            self.written = written
            self.total = total

    def __init__(
        self,
        *,
        report: TeamSyncReport | None = None,
        now_ms: Callable[[], float] | None = None,
        watch_debounce: float | None = None,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self._now_ms = now_ms or (lambda: time.time() * 1000)
        self._fed = report
        self._loaded = False
        self._watch_debounce = watch_debounce
        self._watch_stop: asyncio.Event | None = None
        self._pushing = False
        self._cancel_push = False
        self._pulling = False

    def compose_body(self) -> ComposeResult:
        yield Static(classes="team-header")
        yield Static(classes="team-notices")
        with VerticalScroll(classes="team-scroll"):
            yield Static(classes="team-keys")
            yield Static(KEYS_LEGEND, classes="team-section team-legend")
            yield Static(classes="team-section team-held")
            yield Static(classes="team-section team-secrets")
            yield Static(classes="team-section team-conflicts")
            yield Static(classes="team-section team-history")

    def on_mount(self) -> None:
        if self._fed is not None:
            self.show_report(self._fed)

    def on_show(self) -> None:
        # The status is read the first time the pane is shown: start-up stays light.
        if self._fed is None and not self._loaded:
            self._loaded = True
            self._load_report()

    def on_unmount(self) -> None:
        # Let the watcher flush and save its state; the worker is cancelled right after.
        if self._watch_stop is not None:
            self._watch_stop.set()

    # --- data in -----------------------------------------------------------------------

    def show_report(self, report: TeamSyncReport) -> None:
        """Show a status report (also how snapshot tests feed the pane)."""
        self.report = report

    @work(thread=True, exclusive=True, group="team-status", exit_on_error=False)
    def _load_report(self) -> None:
        engine: Engine = self.app.engine  # type: ignore[attr-defined]
        try:
            report = build_team_report(engine)
        except (WorkbenchError, OSError) as exc:
            self.post_message(self.ReportFailed(str(exc)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.ReportLoaded(report))

    @on(ReportLoaded)
    def _report_loaded(self, message: ReportLoaded) -> None:
        message.stop()
        self.show_report(message.report)

    @on(ReportFailed)
    def _report_failed(self, message: ReportFailed) -> None:
        message.stop()
        self.set_empty("Cannot read the team sync status", message.error)

    # --- rendering ---------------------------------------------------------------------

    def watch_report(self, report: TeamSyncReport | None) -> None:
        if report is None:
            return
        now = self._now_ms()
        status = report.status
        self.query_one(".team-keys", Static).update(keys_content(status))
        self.query_one(".team-legend").display = bool(status.keys)
        self.query_one(".team-held", Static).update(held_back_content(report))
        self.query_one(".team-secrets", Static).update(secrets_content(report))
        self.query_one(".team-conflicts", Static).update(conflicts_content(status, now))
        self.query_one(".team-history", Static).update(history_content(status, now))
        self._render_header()
        self._render_notices()
        self.has_content = True
        self.report_engine(engine_label(report, watching=self.watching))

    def watch_watching(self, watching: bool) -> None:
        self._render_header()
        if self.report is not None:
            self.report_engine(engine_label(self.report, watching=watching))

    def watch_busy(self) -> None:
        self._render_header()

    def watch_last(self) -> None:
        self._render_notices()

    def _render_header(self) -> None:
        report = self.report
        if report is None:
            return
        status = report.status
        if self.busy:
            activity: tuple[str, str] = (f"◌ {self.busy}", "$text-accent")
        elif self.watching:
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
        self.query_one(".team-header", Static).update(Content("\n").join(lines))

    def _render_notices(self) -> None:
        report = self.report
        if report is None:
            return
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
        if self.last is not None:
            severity = self.last.severity
            style = {"error": "$text-error", "warning": "$text-warning"}.get(severity, "")
            if severity == "error" or (severity == "warning" and level == "info"):
                level = severity
            lines.append(Content.styled(self.last.text, style))
        notices = self.query_one(".team-notices", Static)
        notices.display = bool(lines)
        notices.set_class(level == "warning", "-warning")
        notices.set_class(level == "error", "-error")
        notices.update(Content("\n").join(lines))

    # --- actions -----------------------------------------------------------------------

    def _can_sync(self) -> bool:
        return (
            not self.busy and not self.watching and (self.report is None or self.report.available)
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("push_team", "pull_team"):
            return True if self._can_sync() else None
        if action == "force_push_team":
            suppressed = self.report is not None and self.report.status.suppressed_reason
            return True if (self._can_sync() and suppressed) else None
        if action == "toggle_watch":
            return True if (self.watching or self._can_sync()) else None
        if action == "cancel_push":
            return True if (self._pushing or self._pulling) else None
        return True

    EXPLAINED_ACTIONS = frozenset({"push_team", "pull_team", "force_push_team", "toggle_watch"})

    def why_disabled(self, action: str) -> str | None:
        if action not in self.EXPLAINED_ACTIONS or self.check_action(action, ()):
            return None
        if self.busy:
            return f"Wait a moment: {self.busy}"
        if self.watching:
            return "The watcher is syncing: w stops it first."
        if self.report is not None and self.report.problems:
            problem = self.report.problems[0]
            return f"{problem.problem}. {problem.fix}"
        if action == "force_push_team":
            return "Pushes are not suppressed, so there is nothing to force: P pushes."
        return None

    def team_files_changed(self) -> None:
        """Team files changed on disk (the main screen's watcher saw it): read the status
        again, as the tree does, once it has been read at all and no sync is running (a sync
        reads it when it ends)."""
        if self._loaded and not self.busy:
            self._load_report()

    def action_refresh_sync(self) -> None:
        """Read the status again."""
        self._loaded = True
        self._load_report()

    def action_push_team(self) -> None:
        """Push the team folder."""
        if self._can_sync():
            self.busy = "pushing…"
            self._run_push(force=False)

    def action_force_push_team(self) -> None:
        """Push despite a suppression."""
        if self._can_sync():
            self.busy = "pushing (forced)…"
            self._run_push(force=True)

    def action_cancel_push(self) -> None:
        """Ask the running push to stop after the batch in flight (a pull, before its next
        file)."""
        if (self._pushing or self._pulling) and not self._cancel_push:
            self._cancel_push = True
            self.busy = "cancelling the pull…" if self._pulling else "cancelling the push…"

    def action_pull_team(self) -> None:
        """Pull the team memory."""
        if self._can_sync():
            self.busy = "pulling…"
            self._run_pull()

    def action_toggle_watch(self) -> None:
        """Start the watcher, or stop it (it flushes pending changes first)."""
        if self.watching:
            if self._watch_stop is not None:
                self.busy = "stopping watch…"
                self._watch_stop.set()
            return
        if self._can_sync():
            self.watching = True
            self.busy = "starting watch…"
            self._run_watch()

    # --- workers -----------------------------------------------------------------------

    async def _open_client(self, operation: str):  # type: ignore[no-untyped-def]
        engine: Engine = self.app.engine  # type: ignore[attr-defined]
        try:
            # Reading the git config and the saved state is disk work: keep it off the loop.
            return await asyncio.to_thread(engine.team.sync_client)
        except WorkbenchError as exc:
            self.post_message(self.SyncFailed(operation, str(exc)))
            return None

    @work(exclusive=True, group="sync", exit_on_error=False, description="Pushing team memory")
    async def _run_push(self, force: bool) -> None:
        client = await self._open_client("push")
        if client is None:
            return
        self._pushing, self._cancel_push = True, False
        self.refresh_bindings()
        seen = Progress("pushing", 0, 0)

        def progress(step: Progress) -> None:
            # Runs on the event loop between batches: show how far, or stop here.
            nonlocal seen
            seen = step
            if self._cancel_push:
                raise OperationCancelled("push cancelled")
            if step.total:
                self.busy = (
                    f"pushing {step.done:,}/{step.total:,} entries ({step.fraction:.0%}) "
                    "· esc cancels"
                )

        try:
            async with client:
                result = await client.push(force=force, on_progress=progress)
        except OperationCancelled:
            self.post_message(self.PushCancelled(seen.done, seen.total or 0))
            return
        finally:
            self._pushing = False
            self.refresh_bindings()
        self.post_message(self.SyncFinished("push", result, client.repo))

    @work(exclusive=True, group="sync", exit_on_error=False, description="Pulling team memory")
    async def _run_pull(self) -> None:
        client = await self._open_client("pull")
        if client is None:
            return
        self._pulling, self._cancel_push = True, False
        self.refresh_bindings()
        seen = Progress("pulling", 0, 0)

        def progress(step: Progress) -> None:
            # Runs on the event loop as each file is written: show how far, or stop here.
            nonlocal seen
            seen = step
            if self._cancel_push:
                raise OperationCancelled("pull cancelled")
            if step.total:
                self.busy = (
                    f"pulling {step.done:,}/{step.total:,} entries ({step.fraction:.0%}) "
                    "· esc cancels"
                )

        try:
            async with client:
                result = await client.pull(on_progress=progress)
        except OperationCancelled:
            self.post_message(self.PullCancelled(seen.done, seen.total or 0))
            return
        finally:
            self._pulling = False
            self.refresh_bindings()
        self.post_message(self.SyncFinished("pull", result, client.repo))

    @work(exclusive=True, group="sync", exit_on_error=False, description="Watching team memory")
    async def _run_watch(self) -> None:
        from workbench.engine.team.sync.protocol import DEBOUNCE_SECONDS
        from workbench.engine.team.watcher import TeamWatcher

        client = await self._open_client("watch")
        if client is None:
            return
        repo = client.repo

        def report(event: str, result: Any) -> None:
            # Called on the event loop by the watcher, so posting is safe.
            if event in ("push", "pull"):
                self.post_message(self.SyncFinished(event, result, repo, watch=True))
            else:
                self.post_message(self.WatchEvent(event, str(result)))

        stop = asyncio.Event()
        self._watch_stop = stop
        debounce = DEBOUNCE_SECONDS if self._watch_debounce is None else self._watch_debounce
        watcher = TeamWatcher(client, debounce=debounce, report=report)
        try:
            async with client:
                await watcher.run(stop)
        finally:
            self._watch_stop = None
            self.post_message(self.WatchStopped())

    # --- results -----------------------------------------------------------------------

    @on(SyncFinished)
    def _sync_finished(self, message: SyncFinished) -> None:
        message.stop()
        if not message.watch:
            self.busy = None
        result = message.result
        if isinstance(result, PushResult):
            summary = push_summary(result, message.repo)
            # The watcher pushes after every settled change; only news is worth a toast.
            if not (message.watch and summary.severity == "information" and not result.uploaded):
                self.notify(summary.text, title="Team sync", severity=summary.severity)
        else:
            summary = pull_summary(result, message.repo)
            if result.written:
                # The main screen reports it with the undo hint and re-scans the memory folder.
                written = result.written
                shown = ", ".join(written[:3]) + (" …" if len(written) > 3 else "")
                self.post_message(
                    ChangeApplied(
                        ChangeOutcome(
                            f"pulled {plural(len(written), 'team file')} from "
                            f"{message.repo} ({shown})"
                        )
                    )
                )
            elif not message.watch or summary.severity != "information":
                self.notify(summary.text, title="Team sync", severity=summary.severity)
        self.last = summary
        self._load_report()

    @on(SyncFailed)
    def _sync_failed(self, message: SyncFailed) -> None:
        message.stop()
        self.busy = None
        if message.operation == "watch":
            self.watching = False
        self.last = LastSync(f"Cannot {message.operation}: {message.error}.", "error")
        self.notify(message.error, title=f"Cannot {message.operation}", severity="error")

    @on(WatchEvent)
    def _watch_event(self, message: WatchEvent) -> None:
        message.stop()
        if message.event == "watching":
            self.busy = None
            self.last = LastSync("Watching the team folder: changes are pushed once they settle.")
        elif message.event == "unsuppressed":
            self.notify("A team file was deleted: pushes are allowed again.", title="Team sync")
            self._load_report()

    @on(PushCancelled)
    def _push_cancelled(self, message: PushCancelled) -> None:
        message.stop()
        self.busy = None
        text = (
            f"Push cancelled after {message.uploaded:,} of {message.total:,} changed "
            "entries; the next push sends the rest."
        )
        self.last = LastSync(text, "warning")
        self.notify(text, title="Team sync", severity="warning")
        self._load_report()

    @on(PullCancelled)
    def _pull_cancelled(self, message: PullCancelled) -> None:
        message.stop()
        self.busy = None
        text = (
            f"Pull cancelled after {message.written:,} of {message.total:,} entries; each "
            "file is whole, and the next pull fetches the rest."
        )
        self.last = LastSync(text, "warning")
        self.notify(text, title="Team sync", severity="warning")
        self._load_report()

    @on(WatchStopped)
    def _watch_stopped(self, message: WatchStopped) -> None:
        message.stop()
        self.watching = False
        self.busy = None
        self._load_report()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != "sync" or event.state != WorkerState.ERROR:
            return
        self.busy = None
        self.watching = False
        error = worker.error
        text = f"{type(error).__name__}: {error}" if error else "unknown error"
        self.last = LastSync(f"Sync stopped unexpectedly ({text}).", "error")
        self.notify(text, title="Team sync failed", severity="error")
