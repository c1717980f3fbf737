"""A team server for `workbench demo`: on loopback, seeded as if a teammate had synced.

`demo_team(...)` starts the server with a fresh random token, stores the demo project's team
files as a teammate pushed them (one of them edited, one extra file), and yields a handle whose
`env()` points the engine at it. `teammate_edit()` later plays the teammate again, so the
app's next push meets a 412 and the conflict history has something to show.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench.server.runner import TeamServer
from workbench.server.store import TeamStore

DEMO_ORGANIZATION = "demo"
TEAMMATE_NOTE_KEY = "project_teammate_handover.md"
TEAMMATE_NOTE = """---
name: Handover notes from a teammate
description: Written on another machine and pushed to the team server; a pull brings it here
type: project
---

This memory reached you through team sync: a teammate saved it on their machine, their
workbench pushed it, and your pull wrote it into the team folder.

**Why:** team memory is how shared rules travel between everyone working in the repo.

**How to apply:** edit it and watch the sync pane show the change as pending until it is pushed.
"""


@dataclass
class DemoTeam:
    """The running demo server and what a client needs to reach it."""

    server: TeamServer
    token: str
    repo: str

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def db_path(self) -> Path:
        """The server's SQLite file: the demo always runs on SQLite."""
        path = self.server.db_path
        if path is None:
            raise RuntimeError("the demo team server is not on SQLite")
        return path

    def env(self) -> dict[str, str]:
        """The variables that point the sync client at this server."""
        return {"TEAM_MEMORY_SYNC_URL": self.server.url, "WORKBENCH_TEAM_TOKEN": self.token}

    def teammate_edit(self, key: str, content: str) -> None:
        """Store an entry as another teammate would push it (no If-Match: it always lands)."""
        store = TeamStore(self.db_path)
        try:
            store.upsert(
                DEMO_ORGANIZATION,
                self.repo,
                {key: content},
                if_match=None,
                max_entries=self.server.max_entries,
            )
        finally:
            store.close()


def _read_team_files(team_dir: Path) -> dict[str, str]:
    """The team files a teammate's client would have pushed: never one holding a secret."""
    from workbench.engine.team.secrets import scan_for_secrets

    entries: dict[str, str] = {}
    if not team_dir.is_dir():
        return entries
    for path in sorted(team_dir.rglob("*")):
        if path.is_file() and not path.is_symlink():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not scan_for_secrets(text):
                entries[path.relative_to(team_dir).as_posix()] = text
    return entries


@contextlib.contextmanager
def demo_team(
    folder: str | os.PathLike[str],
    team_dir: str | os.PathLike[str],
    repo: str,
    *,
    token: str | None = None,
    sock: socket.socket | None = None,
) -> Iterator[DemoTeam]:
    """Run a seeded team server on loopback for as long as the block runs."""
    folder_path = Path(folder)
    folder_path.mkdir(parents=True, exist_ok=True)
    token = token or secrets.token_urlsafe(24)
    database = folder_path / "team-server.sqlite3"
    with TeamServer(database, {token: DEMO_ORGANIZATION}, sock=sock) as server:
        demo = DemoTeam(server, token, repo)
        seeded = _read_team_files(Path(team_dir))
        seeded[TEAMMATE_NOTE_KEY] = TEAMMATE_NOTE
        index = seeded.get("MEMORY.md")
        if index is not None:
            line = f"- [Handover notes]({TEAMMATE_NOTE_KEY}) — pushed by a teammate\n"
            seeded["MEMORY.md"] = index.rstrip("\n") + "\n" + line
        store = TeamStore(demo.db_path)
        try:
            store.upsert(
                DEMO_ORGANIZATION, repo, seeded, if_match=None, max_entries=server.max_entries
            )
        finally:
            store.close()
        yield demo
