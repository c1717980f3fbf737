"""`workbench demo`: a sample project with every pane alive, torn down on exit.

The demo installs a sample project into a temporary folder, starts the bundled team server on
loopback seeded as a teammate left it, and plays a short script before the app opens:

1. the workbench pulls the team folder (the teammate's handover note arrives);
2. the user edits a shared memory locally;
3. the teammate pushes a different edit of the same file;
4. the workbench pushes: the server answers 412, the client probes the hashes and retries,
   and local wins — so the sync pane has a real conflict in its history;
5. the teammate edits their note once more, so a pull is waiting.

It also drops a team file holding a credential-shaped token (built here at run time, never
committed) so the secret guard and the redaction preview have something to show.

No front-end code here: the CLI's `demo` command opens the app inside `demo_session()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from workbench.engine import Engine
from workbench.engine.samples import InstalledSample, install_sample

SECRET_FILE = "reference_ci_bot.md"
DEMO_REPO_FALLBACK = "acme-demo/sample"


@dataclass
class DemoSession:
    """What the demo started, for the app and for tests."""

    sample: InstalledSample
    engine: Engine
    folder: Path
    server_url: str | None = None
    conflict_key: str | None = None
    notes: list[str] = field(default_factory=list)
    """What the opening script did, in order (shown nowhere secret-bearing)."""


def _demo_token() -> str:
    # A Slack-bot-shaped placeholder assembled at run time so the repository never holds one.
    prefix = "xo" + "xb"
    return "-".join((prefix, "1" * 10, "2" * 10, "DEMO" + "demo" * 5 + "ONLY"))


def _secret_memory() -> str:
    return (
        "---\nname: CI bot\ndescription: The billing CI bot posts build results to #billing-ci\n"
        "type: reference\n---\n\nThe CI bot posts every build result to #billing-ci.\n"
        f"Its token (pasted here by mistake): {_demo_token()}\n"
    )


def _shared_memory_to_edit(team_dir: Path) -> Path | None:
    candidates = sorted(p for p in team_dir.glob("*.md") if p.name != "MEMORY.md")
    return candidates[0] if candidates else None


@contextlib.contextmanager
def demo_session(
    sample_name: str, *, folder: str | os.PathLike[str] | None = None, with_team: bool = True
) -> Iterator[DemoSession]:
    """Install `sample_name`, start the demo services, and stop and remove everything after."""
    with contextlib.ExitStack() as stack:
        root = (
            Path(folder)
            if folder
            else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="workbench-demo-")))
        )
        sample = install_sample(sample_name, root)
        team_dir = sample.memory_dir / "team"
        team_dir.mkdir(parents=True, exist_ok=True)
        (team_dir / SECRET_FILE).write_text(_secret_memory(), encoding="utf-8")

        # Demo changes, their undo history and sync state stay inside the temporary folder.
        stack.enter_context(_environ("WORKBENCH_HOME", str(root / "workbench-home")))
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_")}
        team = None
        if with_team:
            from workbench.server.demo import demo_team

            repo = _repo_slug(sample.remote)
            team = stack.enter_context(demo_team(root / "server", team_dir, repo))
            env.update(team.env())
        engine = Engine.open(sample.project_root, config_home=str(sample.config_home), env=env)
        session = DemoSession(sample, engine, root, server_url=team.url if team else None)
        if team is not None:
            _play_opening(session, team, team_dir)
        yield session


@contextlib.contextmanager
def _environ(name: str, value: str) -> Iterator[None]:
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


def _repo_slug(remote: str | None) -> str:
    from workbench.engine.team.repo import parse_github_repo

    return (parse_github_repo(remote) if remote else None) or DEMO_REPO_FALLBACK


def _play_opening(session: DemoSession, team: object, team_dir: Path) -> None:
    """Pull, edit, let the teammate race us, push through the 412 (see the module docstring)."""
    from workbench.server.demo import TEAMMATE_NOTE, TEAMMATE_NOTE_KEY

    async def script() -> None:
        client = session.engine.team.sync_client()
        async with client:
            pulled = await client.pull(skip_etag_cache=True)
            session.notes.append(f"pulled: {pulled.status}, {len(pulled.written)} file(s) written")
            target = _shared_memory_to_edit(team_dir)
            if target is None:
                return
            key = target.relative_to(team_dir).as_posix()
            session.conflict_key = key
            target.write_text(
                target.read_text(encoding="utf-8").rstrip("\n")
                + "\n\nEdited on this machine during the demo.\n",
                encoding="utf-8",
            )
            team.teammate_edit(  # type: ignore[attr-defined]
                key,
                target.read_text(encoding="utf-8").replace(
                    "Edited on this machine during the demo.",
                    "Edited by a teammate on another machine.",
                ),
            )
            pushed = await client.push()
            session.notes.append(
                f"pushed: {pushed.status} after {pushed.conflict_retries} conflict retr"
                f"{'y' if pushed.conflict_retries == 1 else 'ies'}"
            )
            team.teammate_edit(  # type: ignore[attr-defined]
                TEAMMATE_NOTE_KEY,
                TEAMMATE_NOTE + "\nUpdated again by the teammate: pull to see it.\n",
            )

    asyncio.run(script())
