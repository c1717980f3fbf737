"""Bearer tokens and database passwords stay secret: never in a process's command line (what
`ps` shows), the request log, `/metrics`, a response or an error message, whether the server
runs one process or several workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from workbench.server.database import parse_database, scrub, secrets_in

PATH = "/api/claude_code/team_memory"
REPO = {"repo": "acme/widgets"}
DEADLINE_S = 60


def _piece(*parts: str) -> str:
    # secret-shaped strings are built at run time, never written whole in the repository
    return "-".join(parts)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_SERVER_")}
    env.pop("WORKBENCH_TEAM_TOKEN", None)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    return {**env, "PYTHONUNBUFFERED": "1", **extra}


def _team_server(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", "team-server", *args],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens there once the socket is closed


def _tree(root: int) -> list[int]:
    """`root` and every process below it."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo.extend(int(child) for child in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def _command_lines(root: int) -> list[str]:
    lines = []
    for pid in _tree(root):
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        lines.append(raw.replace(b"\0", b" ").decode("utf-8", "replace"))
    return lines


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux's /proc")
def test_no_secret_in_argv_logs_metrics_or_responses_with_several_workers(
    postgres_cluster, tmp_path: Path
):
    token = _piece("argv", "log", "metrics", "token")
    metrics_token = _piece("scrape", "only", "token")
    password = _piece("db", "pass", "word")  # trust authentication accepts any password
    url = postgres_cluster.url(postgres_cluster.new_schema()[0])
    url = url.replace("postgres@", f"postgres:{password}@")
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"acme={token}\n")
    tokens.chmod(0o600)
    env = _env(
        WORKBENCH_SERVER_DB=url,
        WORKBENCH_SERVER_TOKEN_FILE=str(tokens),
        WORKBENCH_SERVER_METRICS_TOKEN=metrics_token,
        WORKBENCH_HOME=str(tmp_path / "home"),
    )
    log = tmp_path / "stderr.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "team-server", "--port", "0", "--json",
         "--workers", "2", "--rate-limit", "0"],
        stdout=subprocess.PIPE, stderr=log.open("w"), text=True, env=env,
    )  # fmt: skip
    secrets = (token, metrics_token, password)
    seen: list[str] = []
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        assert first, f"team-server did not start: {log.read_text()[-3000:]}"
        seen.append(first)
        base = json.loads(first)["url"]
        deadline = time.monotonic() + DEADLINE_S
        while len(_tree(proc.pid)) < 3:  # the supervisor and its two workers
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)
        command_lines = _command_lines(proc.pid)
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, timeout=30) as http:
            answers = [
                http.put(PATH, params=REPO, headers=auth, json={"entries": {"a.md": "A\n"}}),
                http.put(
                    PATH,
                    params=REPO,
                    headers={**auth, "If-Match": '"stale"'},
                    json={"entries": {"b.md": "B\n"}},
                ),  # fmt: skip
                http.get(PATH, params=REPO, headers={"Authorization": f"Bearer {token}x"}),
                http.get(PATH, params=REPO, headers={"Authorization": f"Bearer {metrics_token}"}),
                http.get("/metrics"),
                http.get("/metrics", headers={"Authorization": f"Bearer {token}"}),
                http.get("/readyz"),
            ]
            scraped = http.get("/metrics", headers={"Authorization": f"Bearer {metrics_token}"})
        assert [a.status_code for a in answers] == [200, 412, 401, 401, 401, 401, 200]
        assert scraped.status_code == 200 and "workbench_team_requests" in scraped.text
        seen += [scraped.text, *command_lines]
        seen += [f"{a.headers}\n{a.text}" for a in answers]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    logged = log.read_text()
    assert '"route": "/api/claude_code/team_memory"' in logged  # the requests were logged
    seen.append(logged)
    for text in seen:
        for secret in secrets:
            assert secret not in text, f"a secret in: {text[:300]}"


@pytest.mark.parametrize(
    "template",
    [
        "postgresql://u:pa%zz{pw}@127.0.0.1:{port}/db",  # libpq quotes the unreadable token
        "postgresql://u:{pw}@127.0.0.1:{port}/db?bogus=1",
        "postgresql://127.0.0.1:{port}/db?password=%zz{pw}",
        "postgresql://u:{pw}@127.0.0.1:{port}/db",  # readable, but nothing listens there
    ],
)
@pytest.mark.parametrize("command", [[], ["migrate"]])
def test_a_database_url_that_cannot_be_used_is_refused_without_its_password(
    tmp_path: Path, template: str, command: list[str]
):
    password = _piece("never", "quoted")
    url = template.format(pw=password, port=_closed_port())
    env = _env(WORKBENCH_SERVER_DB=url, WORKBENCH_TEAM_TOKEN=_piece("some", "token"))
    done = _team_server(*(command or ["--port", "0"]), env=env)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0], done.stderr
    assert "database" in lines[0].lower() or "postgresql" in lines[0].lower()
    assert password not in done.stderr + done.stdout


def test_a_password_in_db_on_the_command_line_is_warned_about_and_not_repeated(tmp_path):
    password = _piece("visible", "in", "ps")
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(_piece("file", "token") + "\n")
    tokens.chmod(0o600)
    url = f"postgresql://u:{password}@127.0.0.1:{_closed_port()}/db"
    done = _team_server("--port", "0", "--db", url, "--token-file", str(tokens), env=_env())
    assert done.returncode == 2
    assert "--db puts the database password on the command line" in done.stderr
    assert "WORKBENCH_SERVER_DB" in done.stderr
    assert password not in done.stderr + done.stdout
    # the same URL from the environment is no command line: no warning
    env = _env(WORKBENCH_SERVER_DB=url)
    done = _team_server("--port", "0", "--token-file", str(tokens), env=env)
    assert done.returncode == 2 and "command line" not in done.stderr


def test_scrub_removes_every_form_of_the_password():
    password = _piece("p", "a+b")
    quoted = password.replace("+", "%2B")
    url = f"postgresql://u:{quoted}@h/db?sslmode=require&password={quoted}"
    assert set(secrets_in(url)) == {password, quoted}
    assert scrub(f"bad token {quoted!r} or {password}", url) == "bad token '***' or ***"
    assert secrets_in("postgresql://u@h/db") == []
    with pytest.raises(ValueError) as refused:
        parse_database(f"postgresql://u:%zz{password}@h/db")
    assert password not in str(refused.value) and "***" in str(refused.value)


def test_client_supplied_text_is_logged_and_measured_without_its_secrets(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    import logging

    from secretgen import make_token

    from workbench.server import TeamServer
    from workbench.server.observability import JsonFormatter

    token = make_token("github-pat", seed="server-log")
    auth = {"Authorization": "Bearer " + _piece("log", "test", "token")}
    caplog.set_level(logging.INFO, logger="workbench.server")
    with (
        TeamServer(tmp_path / "db.sqlite3", [auth["Authorization"][7:]]) as server,
        httpx.Client(base_url=server.url, headers=auth) as http,
    ):
        secret_repo = {"repo": f"acme/{token}"}
        stored = http.put(PATH, params=secret_repo, json={"entries": {"a.md": "A\n"}})
        assert stored.status_code == 200  # served as before: only what is shown changes
        assert http.get(PATH, params=secret_repo).status_code == 200
        named = http.get("/x", headers={"X-Request-Id": token})
        # The id comes back as it is logged: a new one, as for an id that is not plain.
        assert named.headers["x-request-id"] != token
        assert len(named.headers["x-request-id"]) == 32
        odd = http.request(token, PATH, params=REPO)
        plain = http.get(PATH, params=REPO, headers={"X-Request-Id": "trace-7"})
        assert plain.headers["x-request-id"] == "trace-7"
        metrics = http.get("/metrics").text
    records = [r for r in caplog.records if r.name == "workbench.server" and hasattr(r, "fields")]
    logged = "\n".join(JsonFormatter().format(r) for r in records)
    assert token not in logged and token not in metrics
    fields = [r.fields for r in records]  # type: ignore[attr-defined]
    assert {"acme/[REDACTED]"} == {f["repo"] for f in fields if "REDACTED" in f.get("repo", "")}
    assert named.headers["x-request-id"] in {f["request_id"] for f in fields}
    assert "trace-7" in {f["request_id"] for f in fields}
    assert odd.headers["x-request-id"] in {f["request_id"] for f in fields}
    assert 'repo="acme/[REDACTED]"' in metrics
