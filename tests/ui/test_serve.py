"""`workbench serve` without a browser: listening, the token, the origin check, the page.

The server runs as a real process on loopback; requests go through httpx. (The browser test,
`test_browser.py`, drives the app itself.)"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from workbench.cli import main
from workbench.webserve import FOCUS_SCRIPT, TOKEN_COOKIE, app_command, is_loopback, token_for

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0


def start(tmp_path: Path, *flags: str, env: dict[str, str] | None = None):
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench", "serve", "--demo", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(tmp_path), **(env or {})},
    )
    assert process.stdout is not None
    printed = []
    for line in process.stdout:
        printed.append(line)
        if found := re.search(r"listening on (http://\S+)", line):
            return process, found.group(1), printed
    process.wait(timeout=TIMEOUT)
    raise AssertionError(f"no 'listening' line; printed {printed}, stderr {process.stderr.read()}")


def stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()


def test_listening_means_accepting_and_the_page_focuses_the_terminal(tmp_path: Path):
    process, url, _ = start(tmp_path)
    try:
        assert url.startswith("http://127.0.0.1:")
        # The very first request after the line succeeds: no retry loop here.
        page = httpx.get(url, timeout=TIMEOUT)
        assert page.status_code == 200
        assert FOCUS_SCRIPT.strip() in page.text
        assert 'data-session-websocket-url="ws://127.0.0.1:' in page.text
        assert httpx.get(url + "static/js/textual.js", timeout=TIMEOUT).status_code == 200
        # A page of another origin cannot open the app's websocket.
        evil = httpx.get(
            url + "ws",
            headers={
                "Origin": "http://evil.example",
                "Connection": "Upgrade",
                "Upgrade": "websocket",
            },
            timeout=TIMEOUT,
        )
        assert evil.status_code == 403
    finally:
        assert stop(process) == 0
    # No tab ever opened, so no demo folder was made.
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("workbench-demo-")]


def test_a_token_guards_every_request(tmp_path: Path):
    token = "t0ken-for-this-test"
    process, url, printed = start(tmp_path, env={"WORKBENCH_SERVE_TOKEN": token})
    try:
        assert f"?token={token}" in url
        base = url.split("?", 1)[0]
        for path in ("", "static/js/textual.js", "ws"):
            refused = httpx.get(base + path, timeout=TIMEOUT)
            assert refused.status_code == 403 and token not in refused.text
        wrong = httpx.get(base + "?token=nope", timeout=TIMEOUT)
        assert wrong.status_code == 403
        with httpx.Client(timeout=TIMEOUT, follow_redirects=True) as client:
            first = client.get(url)  # follows the redirect that drops the token from the URL
            assert first.status_code == 200 and FOCUS_SCRIPT.strip() in first.text
            assert str(first.url) == base
            assert client.cookies.get(TOKEN_COOKIE) == token
            assert client.get(base + "static/js/textual.js").status_code == 200
        cookie = first.history[0].headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
    finally:
        stop(process)


def test_off_loopback_a_token_is_required():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.7")
    assert token_for("127.0.0.1", None) is None
    made = token_for("0.0.0.0", None)
    assert made and len(made) >= 24 and made != token_for("0.0.0.0", None)
    assert token_for("192.0.2.7", "mine") == "mine"


def test_usage_errors(capsys, tmp_path: Path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["serve", "--port", str(port)])
    _, err = capsys.readouterr()
    assert code == 2 and "cannot listen" in err and err.count("\n") == 1
    code = main(["serve", "--sample", "healthy"])
    _, err = capsys.readouterr()
    assert code == 2 and "--demo" in err
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--port", "many"])
    assert exc.value.code == 2


def test_each_tab_runs_the_app_itself_not_a_shell_in_front_of_it():
    # Killing the process textual-serve holds must kill the app (see end_session).
    assert app_command(["demo"]).startswith("exec ")


async def test_an_app_that_will_not_quit_is_killed_and_its_session_still_ends(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """A tab closed while its app was starting once left the app running for good, its pipes
    (and so the session, and the server's shutdown) open."""
    from textual_serve.app_service import AppService
    from textual_serve.download_manager import DownloadManager

    from workbench import webserve

    monkeypatch.setattr(webserve, "APP_EXIT_TIMEOUT", 1.0)
    pid_file = tmp_path / "pid"
    # Says it is a Textual app, then ignores the quit packet on its stdin.
    script = (
        "import os, sys, time; "
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
        "sys.stdout.write('__GANGLION__\\n'); sys.stdout.flush(); time.sleep(600)"
    )
    command = "exec " + shlex.join([sys.executable, "-c", script])

    async def ignore(_data: object) -> None:
        return None

    service = AppService(
        command,
        write_bytes=ignore,
        write_str=ignore,
        close=lambda: ignore(None),
        download_manager=DownloadManager(),
    )
    await service.start(80, 24)
    deadline = time.monotonic() + TIMEOUT
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the stand-in app never started"
        await asyncio.sleep(0.05)
    app_pid = int(pid_file.read_text())

    code = await asyncio.wait_for(webserve.end_session(service), TIMEOUT)

    assert code == -signal.SIGKILL
    with pytest.raises(ProcessLookupError):
        os.kill(app_pid, 0)
