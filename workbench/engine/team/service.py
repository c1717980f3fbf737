"""`engine.team`: secret scanning and redaction now; team sync methods are added alongside.

The secret engine (`auto`, `hyperscan` or `re`) comes from `WORKBENCH_SECRET_ENGINE` in the
engine's environment unless a call names one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.errors import NotFoundError, UserInputError
from workbench.engine.progress import ProgressCallback
from workbench.engine.team.secrets.guard import check_team_mem_secrets
from workbench.engine.team.secrets.prefilter import backend_from_env, get_prefilter
from workbench.engine.team.secrets.redaction import Redaction, redact
from workbench.engine.team.secrets.report import SecretScanReport, read_text, scan_files
from workbench.engine.team.secrets.scanner import (
    SecretFinding,
    SecretMatch,
    find_secrets,
    scan_for_secrets,
)
from workbench.engine.team.secrets.suppression import Baseline, Exclusions
from workbench.engine.userfiles import read_start

if TYPE_CHECKING:
    from workbench.engine.engine import Engine
    from workbench.engine.history import History, UndoResult
    from workbench.engine.team.models import TeamOverview
    from workbench.engine.team.secrets.audit import AuditItem
    from workbench.engine.team.sync.client import TeamSyncClient
    from workbench.engine.team.sync.models import Overwrite, SyncStatus
    from workbench.engine.team.watcher import TeamWatcher


class TeamService:
    """Team memory for one project: the secret scanner, redaction and the write guard."""

    def __init__(self, engine: Engine, history: History) -> None:
        self.engine = engine
        self.history = history
        """Where pulls and replaced teammate versions are recorded (passed in by the facade)."""

    # --- secrets ---------------------------------------------------------------------------

    @property
    def secret_engine(self) -> str:
        """The configured secret engine: `auto`, `hyperscan` or `re`."""
        return backend_from_env(self.engine.env)

    def secret_engine_in_use(self, backend: str | None = None) -> str:
        """Which prefilter actually runs: `hyperscan` or `re`."""
        return get_prefilter(backend or self.secret_engine).name

    def scan_for_secrets(self, text: str) -> list[SecretMatch]:
        """Claude Code's verdict on `text`: matching rules, once each, in rule order."""
        return scan_for_secrets(text, backend=self.secret_engine)

    def find_secrets(self, text: str, path: str = "") -> list[SecretFinding]:
        """Every secret in `text`, located (no suppression applied)."""
        return find_secrets(text, path=path, backend=self.secret_engine)

    def check_team_write(self, path: str, content: str) -> str | None:
        """The refusal message if writing `content` to `path` would put a secret in team memory."""
        return check_team_mem_secrets(path, content, self.engine.locations)

    def display_path(self, path: str | os.PathLike[str]) -> str:
        """How reports name a file: relative to the memory folder, else to the current
        folder, else absolute; always with `/` separators."""
        absolute = os.path.abspath(path)
        for base in (self.engine.locations.memory_dir, os.getcwd() + os.sep):
            if absolute.startswith(base):
                return absolute[len(base) :].replace(os.sep, "/")
        return absolute.replace(os.sep, "/")

    def scan_paths(
        self,
        paths: Sequence[str | os.PathLike[str]] | None = None,
        *,
        baseline: str | os.PathLike[str] | Baseline | None = None,
        backend: str | None = None,
        exclusions: Exclusions | None = None,
        max_size: int | None = None,
        texts: Sequence[tuple[str, str]] = (),
        on_progress: ProgressCallback | None = None,
    ) -> SecretScanReport:
        """Scan files and folders (default: the memory folder, unless only `texts` are given)
        with suppressions applied; see `scan_files`."""
        if not paths and texts:
            paths = []
        elif not paths:
            folder = Path(self.engine.locations.memory_dir)
            if not folder.is_dir():
                raise NotFoundError(f"the memory folder does not exist yet: {folder}")
            paths = [folder]
        if baseline is not None and not isinstance(baseline, Baseline):
            baseline = Baseline.load(baseline)
        return scan_files(
            [Path(p) for p in paths],
            display=lambda file: self.display_path(file),
            baseline=baseline,
            backend=backend or self.secret_engine,
            exclusions=exclusions,
            max_size=max_size,
            texts=texts,
            on_progress=on_progress,
        )

    def redact_text(self, text: str) -> Redaction:
        """`text` with every secret replaced by `[REDACTED]`."""
        return redact(text, backend=self.secret_engine)

    def resolve_file(self, path: str | os.PathLike[str]) -> Path:
        """A file named as given (from the current folder), else relative to the memory
        folder, as `show` names memories."""
        file = Path(path)
        if not file.exists() and not file.is_absolute():
            in_memory = Path(self.engine.locations.memory_dir) / file
            if in_memory.exists() or in_memory.is_symlink():
                file = self.engine.memories.resolve(os.fspath(path))
        if not file.exists():
            raise NotFoundError(f"no such file: {path} (nor in the memory folder)")
        if file.is_dir():
            raise UserInputError(f"{path} is a folder; redact one file at a time")
        if not file.is_file():
            raise UserInputError(f"{path} is not a regular file")
        return file

    def redact_file(self, path: str | os.PathLike[str]) -> Redaction:
        """A file's text with every secret replaced (the file itself is not changed).
        Binary files are refused: their bytes are never echoed."""
        file = self.resolve_file(path)
        head, _ = read_start(file, 8192)  # a regular file only, even if swapped since
        if b"\0" in head:
            raise UserInputError(f"{path} is a binary file; redact prints text files only")
        return self.redact_text(read_text(file))

    # --- baselines, exclusions and reports: the pieces of `scan-secrets` --------------------

    @staticmethod
    def exclusions(
        *,
        paths: Sequence[str] = (),
        lines: Sequence[str] = (),
        fingerprints: Sequence[str] = (),
        rules: Sequence[str] = (),
    ) -> Exclusions:
        """What a scan leaves out, from the `--exclude-*` flag values (a bad one is a usage
        error)."""
        return Exclusions.build(paths=paths, lines=lines, fingerprints=fingerprints, rules=rules)

    @staticmethod
    def load_baseline(path: str | os.PathLike[str], *, missing_ok: bool = False) -> Baseline:
        """The baseline file at `path`; with `missing_ok`, an empty one to be written there
        when there is no file yet."""
        return Baseline.load_or_empty(os.fspath(path)) if missing_ok else Baseline.load(path)

    @staticmethod
    def baseline_of(findings: Sequence[SecretFinding]) -> Baseline:
        """A new baseline holding `findings` (none: an empty baseline)."""
        return Baseline.from_findings(findings)

    @staticmethod
    def render_report(report: SecretScanReport, fmt: str, *, list_suppressed: bool = False) -> str:
        """A scan report as `json`, `sarif`, `csv` or another of the report formats."""
        from workbench.engine.team.secrets.formats import render

        return render(report, fmt, list_suppressed=list_suppressed)

    @staticmethod
    def write_report(path: str | os.PathLike[str], text: str) -> None:
        """Write a report to the file the user named, whole or not at all."""
        from workbench.engine.atomic import atomic_write_bytes

        atomic_write_bytes(Path(path), text.encode("utf-8"))

    @staticmethod
    def audit_items(baseline: Baseline, report: SecretScanReport) -> list[AuditItem]:
        """Every baseline entry with its current finding (if any) and redacted context."""
        from workbench.engine.team.secrets.audit import audit_items

        return audit_items(baseline, report)

    @staticmethod
    def mark_baseline(baseline: Baseline, marks: Sequence[str]) -> Baseline:
        """`baseline` with `FINGERPRINT=LABEL` marks applied (`*` labels every entry not
        audited yet)."""
        from workbench.engine.team.secrets.audit import apply_marks

        return apply_marks(baseline, marks)

    @staticmethod
    def audit_counts(baseline: Baseline) -> str:
        """`2 real, 1 false positive, 0 placeholder, 3 not audited` for a baseline."""
        from workbench.engine.team.secrets.audit import counts_line

        return counts_line(baseline)

    # --- sync ------------------------------------------------------------------------------

    def sync_client(
        self, *, server: str | None = None, repo: str | None = None, **options: Any
    ) -> TeamSyncClient:
        """A sync client for the team folder; server, token and repo come from the flags,
        the engine's environment and the git remote (usage errors when missing)."""
        from workbench.engine.team.sync.config import open_sync_client

        options.setdefault("scanner", self.scan_for_secrets)
        return open_sync_client(self.engine, server=server, repo=repo, **options)

    def sync_status(self, *, server: str | None = None, repo: str | None = None) -> SyncStatus:
        """Local entries against the last known server state, with no network request."""
        from workbench.engine.team.sync.config import sync_status

        return sync_status(self.engine, server=server, repo=repo, scanner=self.scan_for_secrets)

    def overview(self, *, server: str | None = None, repo: str | None = None) -> TeamOverview:
        """The offline status with every problem that keeps sync from running (each with its
        fix) and a redacted preview of each file held back for a secret: what the Team pane and
        `workbench sync status` show."""
        from workbench.engine.team.overview import team_overview

        return team_overview(
            self.engine.locations,
            self.engine.env,
            status=lambda server, repo: self.sync_status(server=server, repo=repo),
            scanner=self.scan_for_secrets,
            find_secrets=lambda text, path: self.find_secrets(text, path=path),
            redact=self.redact_text,
            in_effect=self.history.in_effect,
            server=server,
            repo=repo,
        )

    def overwrites(
        self, *, server: str | None = None, repo: str | None = None
    ) -> tuple[Overwrite, ...]:
        """Teammates' versions that pushes replaced (local wins), newest first."""
        return self.sync_status(server=server, repo=repo).overwrites

    def restore_overwritten(self, history_id: str) -> UndoResult:
        """Put a teammate's version that a push replaced back into the local file (from the
        history entry the push kept); the next push sends it. Undoable like any change."""
        entry = self.history.get(history_id)
        if entry.action != "sync-overwrite":
            raise UserInputError(f"history entry {history_id} is not a replaced team version")
        return self.history.undo(entry.id)

    def sync_watcher(
        self,
        client: TeamSyncClient,
        *,
        debounce: float | None = None,
        report: Callable[[str, Any], None] | None = None,
    ) -> TeamWatcher:
        """A watcher that pulls once, then pushes the team folder after edits settle;
        `report(event, result)` hears each pull, push and state change."""
        from workbench.engine.team.sync.protocol import DEBOUNCE_SECONDS
        from workbench.engine.team.watcher import TeamWatcher

        seconds = DEBOUNCE_SECONDS if debounce is None else debounce
        return TeamWatcher(client, debounce=seconds, report=report)
