"""`workbench demo`: a sample project with every pane alive, torn down on exit.

The demo installs a sample project into a temporary folder and starts the bundled team server
on loopback, seeded as a teammate left it. Then it plays a short script:

1. the workbench pulls the team folder (the teammate's handover note arrives);
2. the user edits a shared memory locally;
3. the teammate pushes a different edit of the same file;
4. the workbench pushes: the server answers 412, the client probes the hashes and retries,
   and local wins — so the sync pane has a real conflict in its history;
5. the teammate edits their note once more, so a pull is waiting.

It also drops a team file holding a credential-shaped token (built here at run time, never
committed) so the secret guard and the redaction preview have something to show.

The server and the script run in a child process (`python -m workbench.demo --serve …`) on a
socket the parent binds and listens on, so the URL is known at once and the app's first paint
does not wait for uvicorn, starlette or httpx to import. With `team_later=True` the child is
spawned only when `DemoSession.start_team()` is called (the app does so once its first frame
is painted), so on a two-core machine it does not compete with the app's start-up; requests
made before then wait in the socket's backlog. The child exits when the parent closes its
stdin. No front-end code here: the CLI's `demo` command opens the app inside `demo_session()`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.engine import Engine
from workbench.engine.models import plural
from workbench.engine.samples import InstalledSample, install_sample

if TYPE_CHECKING:
    from workbench.server.demo import DemoTeam

SECRET_FILE = "reference_ci_bot.md"
DEMO_REPO_FALLBACK = "acme-demo/sample"
READY = "demo-ready"


class _TeamChild:
    """The demo's team server process: its socket is bound at once, the process spawned on
    `start()` (once; thread-safe)."""

    def __init__(self, root: Path, sample: InstalledSample) -> None:
        self._root, self._sample = root, sample
        self._sock: socket.socket | None = _listening_socket()
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self.token = secrets.token_urlsafe(24)
        self.child: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._sock is not None:
                self.child = _start_child(
                    self._root, self._sample, self._sock, self.url, self.token
                )
                self._sock.close()  # the child holds its own copy of the listening socket
                self._sock = None

    def stop(self) -> None:
        with self._lock:
            if self._sock is not None:  # never started
                self._sock.close()
                self._sock = None
            if self.child is not None:
                _stop_child(self.child)


@dataclass
class DemoSession:
    """What the demo started, for the app and for tests."""

    sample: InstalledSample
    engine: Engine
    folder: Path
    server_url: str | None = None
    notes: list[str] = field(default_factory=list)
    """What the opening script did, once the child reported it (see `wait_ready`)."""
    _team: _TeamChild | None = None

    @property
    def child(self) -> subprocess.Popen[str] | None:
        """The team server process, once started."""
        return self._team.child if self._team is not None else None

    def start_team(self) -> None:
        """Spawn the team server process now if it waits for this (`team_later`); no-op
        otherwise, and when it is already running."""
        if self._team is not None:
            self._team.start()

    def wait_ready(self, timeout: float = 30.0) -> list[str]:
        """Block until the child has played the opening script (starting it first if it
        waits); returns its notes."""
        self.start_team()
        stdout = self.child.stdout if self.child is not None else None
        if stdout is None:
            return self.notes
        ready = threading.Event()

        def read() -> None:
            for line in stdout:
                if line.startswith(READY):
                    ready.set()
                    return
                self.notes.append(line.rstrip("\n"))

        reader = threading.Thread(target=read, name="demo-ready", daemon=True)
        reader.start()
        reader.join(timeout)
        if reader.is_alive():
            raise TimeoutError("the demo's team server did not get ready in time")
        if not ready.is_set():
            raise RuntimeError("the demo's team server stopped before it was ready")
        return self.notes


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


@contextlib.contextmanager
def demo_session(
    sample_name: str,
    *,
    folder: str | os.PathLike[str] | None = None,
    with_team: bool = True,
    team_later: bool = False,
    claude_version: str | None = None,
) -> Iterator[DemoSession]:
    """Install `sample_name`, start the demo services, and stop and remove everything after.

    With `team_later` the team server's process is spawned by `DemoSession.start_team()`
    (its URL and token are set up at once either way). `claude_version` is the release
    whose rules apply (auto when None; `claude --version` is never run on the way in)."""
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="workbench-demo-"))
        root = Path(folder)
        sample = install_sample(sample_name, root)
        team_dir = sample.memory_dir / "team"
        team_dir.mkdir(parents=True, exist_ok=True)
        (team_dir / SECRET_FILE).write_text(_secret_memory(), encoding="utf-8")
        # Demo changes, their undo history and sync state stay inside the temporary folder.
        stack.enter_context(_environ("WORKBENCH_HOME", str(root / "workbench-home")))
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_")}
        team = None
        if with_team:
            team = _TeamChild(root, sample)
            stack.callback(team.stop)
            env.update({"TEAM_MEMORY_SYNC_URL": team.url, "WORKBENCH_TEAM_TOKEN": team.token})
            if not team_later:
                team.start()
        engine = Engine.open(
            sample.project_root,
            config_home=str(sample.config_home),
            env=env,
            claude_version=claude_version,
            ask_claude=False,
        )
        if team is None:
            _stage_proposals(engine)  # otherwise the child stages them, off the start-up path
        yield DemoSession(sample, engine, root, server_url=team.url if team else None, _team=team)


def _stage_proposals(engine: Engine) -> None:
    """Queue two memory writes as an extraction run would, so the review pane has work.

    Labelled `demo` as their source: no model wrote them. One fixes an existing memory (the
    diff shows what changes), the other is a new memory.
    """
    from workbench.engine.agents.tools import StagedFile

    memory = Path(engine.locations.memory_dir)
    staged = []
    existing = sorted(p for p in memory.glob("project_*.md") if p.is_file())
    if existing:
        original = existing[0].read_bytes()
        text = original.decode("utf-8", "replace").rstrip("\n")
        staged.append(
            StagedFile(
                str(existing[0]),
                original,
                text + "\n\nConfirmed again in the latest session; still current.\n",
            )
        )
    new = memory / "feedback_ask_before_schema_changes.md"
    staged.append(
        StagedFile(
            str(new),
            None,
            "---\nname: Ask before schema changes\ndescription: Ask before changing a table's "
            "schema; migrations run in a separate release\ntype: feedback\n---\n\n"
            "Ask before changing any table's schema.\n\n**Why:** migrations ship in their own "
            "release, reviewed by the database owner.\n\n**How to apply:** propose the change "
            "and its migration plan first; write code only once it is agreed.\n",
        )
    )
    engine.agents.review.propose(staged, source="demo", note="staged by the demo, not by a model")


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening already: a request made before the child serves waits instead of being refused.
    sock.listen()
    sock.set_inheritable(True)
    return sock


def _start_child(
    root: Path, sample: InstalledSample, sock: socket.socket, url: str, token: str
) -> subprocess.Popen[str]:
    command = [
        sys.executable, "-m", "workbench.demo", "--serve",
        "--fd", str(sock.fileno()),
        "--folder", str(root / "server"),
        "--project", str(sample.project_root),
        "--config-home", str(sample.config_home),
        "--remote", sample.remote or "",
    ]  # fmt: skip
    child_env = dict(os.environ, WORKBENCH_DEMO_TOKEN=token, TEAM_MEMORY_SYNC_URL=url)
    child = subprocess.Popen(
        command,
        pass_fds=(sock.fileno(),),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None if os.environ.get("WORKBENCH_DEBUG") else subprocess.DEVNULL,
        text=True,
        env=child_env,
    )
    return child


def _stop_child(child: subprocess.Popen[str]) -> None:
    if child.stdin is not None:
        with contextlib.suppress(OSError):
            child.stdin.close()  # EOF tells the child to stop serving
    try:
        child.wait(timeout=10)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    if child.stdout is not None:
        child.stdout.close()


# --- the child process ------------------------------------------------------------------


def _repo_slug(remote: str | None) -> str:
    from workbench.engine.team.repo import parse_github_repo

    return (parse_github_repo(remote) if remote else None) or DEMO_REPO_FALLBACK


def _serve(args: argparse.Namespace) -> int:
    from workbench.server.demo import demo_team

    token = os.environ["WORKBENCH_DEMO_TOKEN"]
    sock = socket.socket(fileno=args.fd)
    engine = Engine.open(
        args.project,
        config_home=args.config_home,
        env={**os.environ, "WORKBENCH_TEAM_TOKEN": token},
        ask_claude=False,
    )
    team_dir = Path(engine.locations.team_dir)
    with demo_team(args.folder, team_dir, _repo_slug(args.remote), token=token, sock=sock) as team:
        import asyncio

        for note in asyncio.run(_play_opening(engine, team, team_dir)):
            print(note, flush=True)
        _stage_proposals(engine)
        print(READY, flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin (or exits)
    return 0


async def _play_opening(engine: Engine, team: DemoTeam, team_dir: Path) -> list[str]:
    """Pull, edit, let the teammate race us, push through the 412 (see the module docstring)."""
    from workbench.server.demo import TEAMMATE_NOTE, TEAMMATE_NOTE_KEY

    notes = []
    async with engine.team.sync_client() as client:
        pulled = await client.pull(skip_etag_cache=True)
        notes.append(f"pulled: {pulled.status}, {plural(len(pulled.written), 'file')} written")
        candidates = sorted(
            p for p in team_dir.glob("*.md") if p.name not in ("MEMORY.md", SECRET_FILE)
        )
        if not candidates:
            return notes
        target = candidates[0]
        key = target.relative_to(team_dir).as_posix()
        mine = (
            target.read_text(encoding="utf-8").rstrip("\n")
            + "\n\nEdited on this machine during the demo.\n"
        )
        target.write_text(mine, encoding="utf-8")
        theirs = mine.replace("on this machine during the demo", "by a teammate on another machine")
        team.teammate_edit(key, theirs)
        pushed = await client.push()
        notes.append(f"conflict: {key}")
        notes.append(f"pushed: {pushed.status} after {pushed.conflict_retries} conflict retries")
        team.teammate_edit(
            TEAMMATE_NOTE_KEY, TEAMMATE_NOTE + "\nUpdated again by the teammate: pull to see it.\n"
        )
    return notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workbench.demo", description="demo services")
    parser.add_argument("--serve", action="store_true", required=True)
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--folder", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--config-home", required=True)
    parser.add_argument("--remote", default="")
    return _serve(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
