"""`workbench team-server` as a real process: acknowledged data survives SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

TOKEN = "-".join(["process", "test", "token"])
PATH = "/api/claude_code/team_memory"
REPO = {"repo": "acme/widgets"}


def _start(db: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench",
            "team-server",
            "--port",
            "0",
            "--db",
            str(db),
            "--token",
            TOKEN,
            "--json",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise AssertionError(f"team-server did not start: {err}")
    return proc, json.loads(line)["url"]


@pytest.fixture
def processes():
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def test_acknowledged_puts_survive_a_killed_server(tmp_path: Path, processes):
    db = tmp_path / "team.sqlite3"
    proc, url = _start(db)
    processes.append(proc)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, headers=headers) as http:
        for i in range(30):
            response = http.put(PATH, params=REPO, json={"entries": {f"n{i}.md": f"note {i}"}})
            assert response.status_code == 200
        before = http.get(PATH, params=REPO).json()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    assert proc.stdout is not None and proc.stdout.read() == "", "stdout carries data only"

    again, url2 = _start(db)
    processes.append(again)
    with httpx.Client(base_url=url2, headers=headers) as http:
        after = http.get(PATH, params=REPO).json()
    assert after == before
    assert len(after["content"]["entries"]) == 30 and after["version"] == 30


def test_sigterm_stops_the_server_cleanly(tmp_path: Path, processes):
    proc, url = _start(tmp_path / "team.sqlite3")
    processes.append(proc)
    assert httpx.get(url + PATH, params=REPO).status_code == 401
    proc.send_signal(signal.SIGTERM)
    # uvicorn shuts down gracefully, then re-raises the signal so the exit status reports it.
    assert proc.wait(timeout=15) == -signal.SIGTERM
    assert "Traceback" not in proc.stderr.read()


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "WORKBENCH_TEAM_TOKEN"}
    return subprocess.run(
        [sys.executable, "-m", "workbench", "team-server", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.parametrize(
    "args",
    [
        (),  # no token at all
        ("--token", "t", "--max-entries", "0"),
        ("--token", "t", "--port", "70000"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, tmp_path: Path):
    done = _run("--db", str(tmp_path / "x.sqlite3"), *args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_busy_port_is_a_clear_error(tmp_path: Path, processes):
    proc, url = _start(tmp_path / "a.sqlite3")
    processes.append(proc)
    port = url.rsplit(":", 1)[1]
    done = _run("--db", str(tmp_path / "b.sqlite3"), "--token", "t", "--port", port)
    assert done.returncode == 2
    assert "cannot listen" in done.stderr and "Traceback" not in done.stderr


def test_an_unusable_database_path_is_a_clear_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    done = _run("--db", str(blocker / "db.sqlite3"), "--token", "t", "--port", "0")
    assert done.returncode == 2 and "Traceback" not in done.stderr


def _connect_right_after_the_line(db: Path) -> bool:
    """Start the real command; connect the instant its first line arrives; True if accepted."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "team-server", "--port", "0", "--db", str(db)]
        + ["--token", TOKEN, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, "team-server printed nothing"
        host, port = json.loads(line)["url"].removeprefix("http://").rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=10).close()
        except ConnectionRefusedError:
            return False
        return True
    finally:
        proc.kill()
        proc.communicate(timeout=10)


def test_the_listening_line_comes_only_once_connections_are_accepted(tmp_path: Path):
    # 50 real starts, four at a time to keep the test quick on a 2-core machine.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(
            pool.map(_connect_right_after_the_line, [tmp_path / f"{n}.sqlite3" for n in range(50)])
        )
    assert outcomes.count(False) == 0, f"{outcomes.count(False)} of 50 connections were refused"
