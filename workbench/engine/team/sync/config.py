"""Where to sync: the server, the repo and the token, from flags and the engine's environment.

The server comes from `--server` or `TEAM_MEMORY_SYNC_URL`; the bearer token from
`WORKBENCH_TEAM_TOKEN`; the repo from `--repo` or the project's github.com remote. Anything
missing is a usage error with a message saying how to supply it. `WORKBENCH_SYNC_TIMEOUT`
(seconds) replaces the 30 s deadline of each request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from workbench.engine.errors import UserInputError
from workbench.engine.team.repo import resolve_repo
from workbench.engine.team.sync.state import SyncState, SyncStateStore, normalize_server

if TYPE_CHECKING:
    from workbench.engine.engine import Engine
    from workbench.engine.team.sync.client import TeamSyncClient
    from workbench.engine.team.sync.models import SyncStatus

TOKEN_ENV = "WORKBENCH_TEAM_TOKEN"
SERVER_ENV = "TEAM_MEMORY_SYNC_URL"
TIMEOUT_ENV = "WORKBENCH_SYNC_TIMEOUT"
MAX_TIMEOUT_SECONDS = 3600.0


@dataclass(frozen=True)
class SyncTarget:
    """A resolved (server, repo, token) triple for one project's team folder."""

    server: str | None
    repo: str
    token: str | None
    team_dir: str


def check_server_url(url: str) -> str:
    """The URL normalised, or UserInputError when it is not an http(s) address."""
    try:
        parts = urlsplit(url.strip())
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        valid = False
    if not valid or parts.query or parts.fragment:
        raise UserInputError(f"the team server must be an http(s) URL, got {url!r}")
    return normalize_server(url)


def request_timeout(env: Mapping[str, str]) -> float | None:
    """The per-request deadline from WORKBENCH_SYNC_TIMEOUT, or None when it is not set."""
    raw = (env.get(TIMEOUT_ENV) or "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= MAX_TIMEOUT_SECONDS:  # also refuses nan and inf
        raise UserInputError(
            f"{TIMEOUT_ENV} must be a number of seconds above 0 and at most "
            f"{MAX_TIMEOUT_SECONDS:g}, got {raw!r}"
        )
    return seconds


def resolve_target(
    engine: Engine,
    *,
    server: str | None = None,
    repo: str | None = None,
    token: str | None = None,
    need_server: bool = True,
    need_token: bool = True,
) -> SyncTarget:
    """Fill in what flags left out from the environment and the git remote."""
    slug = resolve_repo(engine.locations.project_root, repo)
    raw_server = server or engine.env.get(SERVER_ENV) or None
    if raw_server is None and need_server:
        raise UserInputError(f"no team server: pass --server URL or set {SERVER_ENV}")
    token = token or engine.env.get(TOKEN_ENV) or None
    if token is not None:
        token = token.strip() or None
    if token is None and need_token:
        raise UserInputError(f"no team token: set {TOKEN_ENV} to the bearer token for the server")
    return SyncTarget(
        server=None if raw_server is None else check_server_url(raw_server),
        repo=slug,
        token=token,
        team_dir=engine.locations.team_dir,
    )


def open_sync_client(
    engine: Engine,
    *,
    server: str | None = None,
    repo: str | None = None,
    token: str | None = None,
    state_store: SyncStateStore | None = None,
    **options: Any,
) -> TeamSyncClient:
    """A sync client for the engine's team folder; `options` go to TeamSyncClient."""
    from workbench.engine.team.sync.client import TeamSyncClient

    target = resolve_target(engine, server=server, repo=repo, token=token)
    assert target.server is not None and target.token is not None
    timeout = request_timeout(engine.env)
    if timeout is not None:
        options.setdefault("timeout", timeout)
    return TeamSyncClient(
        server=target.server,
        repo=target.repo,
        token=target.token,
        team_dir=target.team_dir,
        history=engine.history,
        state_store=state_store,
        **options,
    )


def sync_status(
    engine: Engine,
    *,
    server: str | None = None,
    repo: str | None = None,
    state_store: SyncStateStore | None = None,
    scanner: Any = None,
) -> SyncStatus:
    """The offline status; works without a token, and without a server (no saved state)."""
    from workbench.engine.team.sync.client import build_status
    from workbench.engine.team.sync.local import read_local_entries

    target = resolve_target(engine, server=server, repo=repo, need_server=False, need_token=False)
    store = state_store if state_store is not None else SyncStateStore()
    if target.server is None:
        state = SyncState(server="", repo=target.repo, team_dir=target.team_dir)
    else:
        state = store.load(target.server, target.repo, target.team_dir)
    local = read_local_entries(target.team_dir, state.server_max_entries, scanner=scanner)
    return build_status(target.server, target.repo, target.team_dir, state, local)
