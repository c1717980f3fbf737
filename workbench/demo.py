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
socket the parent binds, so the URL is known at once and the app's first paint does not wait
for uvicorn, starlette or httpx to import. The child exits when the parent closes its stdin.
No front-end code here: the CLI's `demo` command opens the app inside `demo_session()`.
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

from workbench.engine import Engine
from workbench.engine.samples import InstalledSample, install_sample

SECRET_FILE = "reference_ci_bot.md"
DEMO_REPO_FALLBACK = "acme-demo/sample"
READY = "demo-ready"


@dataclass
class DemoSession:
    """What the demo started, for the app and for tests."""

    sample: InstalledSample
    engine: Engine
    folder: Path
    server_url: str | None = None
    child: subprocess.Popen[str] | None = None
    notes: list[str] = field(default_factory=list)
    """What the opening script did, once the child reported it (see `wait_ready`)."""

    def wait_ready(self, timeout: float = 30.0) -> list[str]:
        """Block until the child has played the opening script; returns its notes."""
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
    sample_name: str, *, folder: str | os.PathLike[str] | None = None, with_team: bool = True
) -> Iterator[DemoSession]:
    """Install `sample_name`, start the demo services, and stop and remove everything after."""
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
        url = child = None
        if with_team:
            url, token, child = _start_child(root, sample)
            stack.callback(_stop_child, child)
            env.update({"TEAM_MEMORY_SYNC_URL": url, "WORKBENCH_TEAM_TOKEN": token})
        engine = Engine.open(sample.project_root, config_home=str(sample.config_home), env=env)
        if child is None:
            _stage_proposals(engine)  # otherwise the child stages them, off the start-up path
        yield DemoSession(sample, engine, root, server_url=url, child=child)


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


def _start_child(root: Path, sample: InstalledSample) -> tuple[str, str, subprocess.Popen[str]]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.set_inheritable(True)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    token = secrets.token_urlsafe(24)
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
    sock.close()  # the child holds its own copy of the listening socket
    return url, token, child


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


async def _play_opening(engine: Engine, team: object, team_dir: Path) -> list[str]:
    """Pull, edit, let the teammate race us, push through the 412 (see the module docstring)."""
    from workbench.server.demo import TEAMMATE_NOTE, TEAMMATE_NOTE_KEY

    notes = []
    async with engine.team.sync_client() as client:
        pulled = await client.pull(skip_etag_cache=True)
        notes.append(f"pulled: {pulled.status}, {len(pulled.written)} file(s) written")
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
        team.teammate_edit(key, theirs)  # type: ignore[attr-defined]
        pushed = await client.push()
        notes.append(f"conflict: {key}")
        notes.append(f"pushed: {pushed.status} after {pushed.conflict_retries} conflict retries")
        team.teammate_edit(  # type: ignore[attr-defined]
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
