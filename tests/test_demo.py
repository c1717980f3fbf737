"""`workbench demo`'s services: a live team server, a staged conflict, a held-back secret."""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

import pytest

from workbench.demo import SECRET_FILE, demo_session


def _port_open(url: str) -> bool:
    parts = urlsplit(url)
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((parts.hostname, parts.port)) == 0


@pytest.mark.parametrize("sample", ["warnings", "healthy"])
def test_demo_stages_a_real_conflict_and_cleans_up(sample: str):
    home_before = os.environ.get("WORKBENCH_HOME")
    with demo_session(sample) as session:
        folder, url, child = session.folder, session.server_url, session.child
        notes = session.wait_ready()
        conflict_key = next(n.split(": ", 1)[1] for n in notes if n.startswith("conflict: "))
        assert "pushed: ok after 1 conflict retries" in notes
        assert url and _port_open(url)
        status = session.engine.team.sync_status()
        assert [c["resolved"] for c in status.conflicts] == [True]
        assert status.conflicts[0]["pending_keys"] == [conflict_key]
        assert {h["operation"] for h in status.history} >= {"pull", "push"}
        assert [(s.path, s.rule_id) for s in status.skipped_secrets] == [
            (SECRET_FILE, "slack-bot-token")
        ]
        team_dir = session.sample.memory_dir / "team"
        assert (team_dir / "project_teammate_handover.md").exists()
        assert "Edited on this machine" in (team_dir / conflict_key).read_text(encoding="utf-8")
        assert os.environ["WORKBENCH_HOME"].startswith(str(folder))
        assert {p.source for p in session.engine.agents.review.list()} == {"demo"}
    assert child is not None and child.returncode is not None
    assert not folder.exists()
    assert not _port_open(url)
    assert os.environ.get("WORKBENCH_HOME") == home_before


def test_demo_pull_brings_the_teammates_latest_edit(tmp_path):
    with demo_session("healthy", folder=tmp_path / "demo") as session:
        session.wait_ready()
        import asyncio

        async def pull():
            async with session.engine.team.sync_client() as client:
                return await client.pull()

        result = asyncio.run(pull())
        assert result.status == "ok" and "project_teammate_handover.md" in result.written
        note = session.sample.memory_dir / "team" / "project_teammate_handover.md"
        assert "Updated again by the teammate" in note.read_text(encoding="utf-8")


def test_demo_secret_is_never_in_sync_state(tmp_path):
    with demo_session("warnings", folder=tmp_path / "demo") as session:
        session.wait_ready()
        token_piece = "DEMO" + "demo"
        state_files = [p for p in (session.folder / "workbench-home").rglob("*") if p.is_file()]
        assert state_files
        for path in state_files:
            if "history" not in path.parts:
                assert token_piece not in path.read_text(encoding="utf-8", errors="replace")


def test_demo_without_team_starts_nothing(tmp_path):
    with demo_session("healthy", folder=tmp_path / "demo", with_team=False) as session:
        assert session.child is None and session.server_url is None
        assert session.engine.memories.list()


def test_demo_server_never_receives_the_secret_file(tmp_path):
    import asyncio

    with demo_session("warnings", folder=tmp_path / "demo") as session:
        session.wait_ready()

        async def hashes():
            async with session.engine.team.sync_client() as client:
                return await client.fetch_hashes()

        probe = asyncio.run(hashes())
        assert SECRET_FILE not in probe.entry_checksums
        assert "project_teammate_handover.md" in probe.entry_checksums


def test_demo_review_queue_has_proposals(tmp_path):
    with demo_session("healthy", folder=tmp_path / "demo", with_team=False) as session:
        proposals = session.engine.agents.review.list()
        assert {p.kind for p in proposals} == {"create", "modify"}
        assert all(p.source == "demo" for p in proposals)
        result = session.engine.agents.review.accept(proposals[0].id)
        assert result is not None


def test_demo_team_later_waits_for_start_and_never_refuses_early_requests(tmp_path):
    # The app spawns the server after its first frame; a request made before then waits in
    # the listening socket's backlog instead of being refused.
    with demo_session("healthy", folder=tmp_path / "demo", team_later=True) as session:
        assert session.child is None
        assert session.server_url and _port_open(session.server_url)
        session.start_team()
        child = session.child
        assert child is not None
        session.start_team()  # a second call starts nothing new
        assert session.child is child
        assert "pushed: ok after 1 conflict retries" in session.wait_ready()
    assert child.returncode is not None


def test_demo_team_later_never_started_stops_cleanly(tmp_path):
    with demo_session("healthy", folder=tmp_path / "demo", team_later=True) as session:
        url = session.server_url
        assert session.child is None
    assert url and not _port_open(url)


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGHUP"])
def test_a_killed_or_hung_up_demo_still_removes_everything(tmp_path, signal_name: str):
    # `kill` or a closed terminal quits the app the way `q` does: the demo's folder is
    # removed and its team server stops.
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "WORKBENCH_"))},
        "TMPDIR": str(temp),
        "WORKBENCH_CONFIG": str(tmp_path / "config.toml"),
        "TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver",
        "TEXTUAL_ANIMATIONS": "none",
    }
    repo = Path(__file__).resolve().parent.parent
    app = subprocess.Popen(
        [sys.executable, "-m", "workbench", "demo"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        # The demo's sync state appears once the team server has played its opening script.
        while not list(temp.glob("workbench-demo-*/workbench-home/*")):
            assert app.poll() is None, app.stderr.read() if app.stderr else b""
            assert time.monotonic() < deadline, "the demo did not start"
            time.sleep(0.1)
        app.send_signal(getattr(signal, signal_name))
        assert app.wait(timeout=20) == 0
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    assert not list(temp.iterdir())  # the demo folder is gone
