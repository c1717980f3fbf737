"""The team overview: the offline sync status plus every reason sync cannot run.

Unlike `sync_status`, which stops at the first missing piece, this collects every problem
with its fix, so the pane and `workbench sync status` can list them all at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.engine.errors import UserInputError
from workbench.engine.team.models import SecretPreview, SyncProblem, TeamOverview

if TYPE_CHECKING:
    from workbench.engine.claude_paths import Locations
    from workbench.engine.team.secrets.redaction import Redaction
    from workbench.engine.team.secrets.scanner import SecretFinding, SecretMatch
    from workbench.engine.team.sync.models import SyncStatus


def team_overview(
    locations: Locations,
    env: Mapping[str, str],
    *,
    status: Callable[[str | None, str | None], SyncStatus],
    scanner: Callable[[str], list[SecretMatch]],
    find_secrets: Callable[[str, str], list[SecretFinding]],
    redact: Callable[[str], Redaction],
    in_effect: Callable[[str], bool],
    server: str | None = None,
    repo: str | None = None,
) -> TeamOverview:
    """The overview (blocking I/O: the team folder, the git config and the saved state).
    `status(server, repo)` reads the offline status once repo and server are usable;
    `in_effect(history_id)` says whether a kept change is still in effect in history."""
    from workbench.engine.team.repo import resolve_repo
    from workbench.engine.team.sync.config import SERVER_ENV, TOKEN_ENV, check_server_url
    from workbench.engine.team.sync.local import read_local_entries

    problems: list[SyncProblem] = []
    bad_input = False
    slug: str | None = None
    try:
        slug = resolve_repo(locations.project_root, repo)
    except UserInputError as exc:
        bad_input = True
        if repo:
            problems.append(SyncProblem("Unusable repo", f"{exc}."))
        else:
            problems.append(
                SyncProblem(
                    "No github.com remote",
                    "Team memory belongs to a GitHub repo: add a github.com remote to the "
                    "project (git remote add origin git@github.com:OWNER/NAME.git).",
                )
            )
    server_ok = True
    raw_server = (server or env.get(SERVER_ENV) or "").strip()
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
            server_ok, bad_input = False, True
            problems.append(SyncProblem("Unusable team server URL", f"{exc}; fix {SERVER_ENV}."))
    if not (env.get(TOKEN_ENV) or "").strip():
        problems.append(
            SyncProblem(
                "No team token",
                f"Set {TOKEN_ENV} to the bearer token the server accepts, "
                "then start the workbench again.",
            )
        )
    if slug is not None and server_ok:
        current = status(server, slug)
    else:
        from workbench.engine.team.sync.client import build_status
        from workbench.engine.team.sync.state import SyncState

        team_dir = locations.team_dir
        local = read_local_entries(team_dir, scanner=scanner)
        state = SyncState(server="", repo=slug or "", team_dir=team_dir)
        current = build_status(None, slug or "", team_dir, state, local)
    over_limit: tuple[str, ...] = ()
    if current.max_entries is not None:
        over_limit = read_local_entries(
            current.team_dir, current.max_entries, scanner=scanner
        ).over_limit
    return TeamOverview(
        status=current,
        problems=tuple(problems),
        previews=tuple(secret_previews(current, find_secrets, redact)),
        over_limit=over_limit,
        bad_input=bad_input,
        restorable=restorable(current, in_effect),
    )


def restorable(status: SyncStatus, in_effect: Callable[[str], bool]) -> tuple[str, ...]:
    """The replaced teammate versions whose history entry can still be undone."""
    from workbench.engine.errors import NotFoundError

    ids = []
    for overwrite in status.overwrites:
        if overwrite.history_id is None:
            continue
        try:
            if in_effect(overwrite.history_id):
                ids.append(overwrite.history_id)
        except NotFoundError:
            continue  # the history was cleared: nothing left to restore
    return tuple(ids)


def secret_previews(
    status: SyncStatus,
    find_secrets: Callable[[str, str], list[SecretFinding]],
    redact: Callable[[str], Redaction],
) -> list[SecretPreview]:
    """Located findings and a redacted copy of every file held back for a secret."""
    from workbench.engine.team.secrets.report import read_text

    previews = []
    for skipped in status.skipped_secrets:
        try:
            text = read_text(Path(status.team_dir, skipped.path))
        except OSError:
            continue
        findings = find_secrets(text, skipped.path)
        redaction = redact(text)
        del text  # only the redacted copy leaves this function
        previews.append(
            SecretPreview(skipped.path, tuple(findings), redaction.text, redaction.count)
        )
    return previews
