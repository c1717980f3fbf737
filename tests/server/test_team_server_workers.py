"""Several worker processes on one socket, both stores: `team-server --workers`,
`uvicorn --factory --workers` and gunicorn with uvicorn workers. A worker killed with SIGKILL
in the middle of a PUT loses no acknowledged update and the others keep serving."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

TOKEN = "-".join(["workers", "test", "token"])
PATH = "/api/claude_code/team_memory"
REPO = {"repo": "acme/widgets"}
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DEADLINE_S = 60


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "WORKBENCH_TEAM_TOKEN": TOKEN, **extra}


@pytest.fixture
def processes():
    # stderr goes to files: a full pipe nobody reads would block the workers' log writes.
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        proc.communicate(timeout=20)


def start_team_server(
    db: str, workers: int, processes: list, log: Path, *extra: str
) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "team-server", "--port", "0", "--db", db,
         "--workers", str(workers), "--json", "--rate-limit", "0", *extra],
        stdout=subprocess.PIPE, stderr=log.open("w"), text=True, env=_env(),
    )  # fmt: skip
    processes.append(proc)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line:
        proc.kill()
        proc.communicate(timeout=20)
        raise AssertionError(f"team-server did not start: {log.read_text()[-3000:]}")
    return proc, json.loads(line)["url"]


def worker_pids(parent: int) -> list[int]:
    """The serving children of a supervisor (multiprocessing's helpers left out)."""
    found = []
    for task in Path(f"/proc/{parent}/task").iterdir():
        for pid in (task / "children").read_text().split():
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            if b"resource_tracker" not in cmdline:
                found.append(int(pid))
    return found


def wait_for_workers(parent: int, count: int, gone: int | None = None) -> list[int]:
    """The parent's `count` workers, once there are that many (and `gone`, a worker just
    killed, is no longer among them: until the supervisor reaps it, it is still listed)."""
    deadline = time.monotonic() + DEADLINE_S
    while len(pids := worker_pids(parent)) != count or gone in pids:
        assert time.monotonic() < deadline, f"{pids}: not {count} workers without {gone}"
        time.sleep(0.1)
    return pids


def owner_of_connection(server_port: int, client_port: int, pids: list[int]) -> int | None:
    """The worker holding the accepted end of the loopback connection client_port → server."""
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if (
            int(local.split(":")[1], 16) == server_port
            and int(remote.split(":")[1], 16) == client_port
        ):
            inode = fields[9]
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return pid
        except OSError:
            continue
    return None


def metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


class Pusher(threading.Thread):
    """The sync protocol's loop: probe hashes, PUT with If-Match, again on 412 or a dropped
    connection. Records only what the server acknowledged with a 200."""

    def __init__(self, url: str, name: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.url, self.prefix, self.stop = url, name, stop
        self.acknowledged: dict[str, str] = {}
        self.dropped = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # reported by the test
            self.error = exc

    def _run(self) -> None:
        n = 0
        client = httpx.Client(base_url=self.url, headers=AUTH, timeout=30)
        while not self.stop.is_set():
            key, content = f"{self.prefix}-{n}.md", f"{self.prefix} note {n}\n"
            try:
                probe = client.get(PATH, params={**REPO, "view": "hashes"})
                headers = {"If-Match": probe.headers["etag"]} if probe.status_code == 200 else {}
                response = client.put(
                    PATH, params=REPO, json={"entries": {key: content}}, headers=headers
                )
            except httpx.TransportError:
                self.dropped += 1
                client.close()
                client = httpx.Client(base_url=self.url, headers=AUTH, timeout=30)
                continue
            if response.status_code == 200:
                self.acknowledged[key] = content
                n += 1
            else:
                assert response.status_code == 412, response.text
        client.close()


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("workers", [2])
def test_a_worker_killed_mid_put_loses_no_acknowledged_update(
    team_db, processes, workers, tmp_path
):
    proc, url = start_team_server(team_db("kill"), workers, processes, tmp_path / "log")
    pids = wait_for_workers(proc.pid, workers)
    stop = threading.Event()
    pushers = [Pusher(url, f"p{i}", stop) for i in range(6)]
    for pusher in pushers:
        pusher.start()
    try:
        deadline = time.monotonic() + DEADLINE_S
        while sum(len(p.acknowledged) for p in pushers) < 30:
            assert time.monotonic() < deadline and all(p.error is None for p in pushers)
            time.sleep(0.05)

        # A PUT whose body is half sent: find the worker that accepted it and kill that one.
        host, port = url.removeprefix("http://").rsplit(":", 1)
        victim_conn = socket.create_connection((host, int(port)), timeout=30)
        body = json.dumps({"entries": {"victim.md": "never acknowledged"}}).encode()
        head = (
            f"PUT {PATH}?repo=acme%2Fwidgets HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        victim_conn.sendall(head + body[: len(body) // 2])
        owner = None
        while owner is None:
            assert time.monotonic() < deadline, "no worker accepted the connection"
            owner = owner_of_connection(int(port), victim_conn.getsockname()[1], pids)
            time.sleep(0.02)
        acknowledged_before = sum(len(p.acknowledged) for p in pushers)
        os.kill(owner, signal.SIGKILL)
        try:
            assert victim_conn.recv(1024) == b"", "the cut PUT got no answer"
        except ConnectionResetError:
            pass
        victim_conn.close()

        # The other worker serves at once; the supervisor replaces the dead one.
        fresh = httpx.get(url + PATH, params=REPO, headers=AUTH, timeout=30)
        assert fresh.status_code == 200
        while sum(len(p.acknowledged) for p in pushers) < acknowledged_before + 30:
            assert time.monotonic() < deadline and all(p.error is None for p in pushers)
            time.sleep(0.05)
        replaced = wait_for_workers(proc.pid, workers, gone=owner)
        assert owner not in replaced and proc.poll() is None
    finally:
        stop.set()
        for pusher in pushers:
            pusher.join(timeout=DEADLINE_S)
    assert all(p.error is None for p in pushers), [p.error for p in pushers]

    stored = httpx.get(url + PATH, params=REPO, headers=AUTH, timeout=30).json()
    entries = stored["content"]["entries"]
    for pusher in pushers:
        for key, content in pusher.acknowledged.items():
            assert entries.get(key) == content, f"acknowledged {key} was lost"
    assert "victim.md" not in entries
    applied = sum(len(p.acknowledged) for p in pushers)
    # Each applied PUT bumped the version once; a PUT cut after its commit adds at most one.
    assert applied <= stored["version"] <= applied + sum(p.dropped for p in pushers)


def test_workers_share_etags_metrics_and_the_listening_line_waits_for_all(
    team_db, processes, tmp_path
):
    log = tmp_path / "log"
    proc, url = start_team_server(team_db("share"), 3, processes, log)
    assert len(worker_pids(proc.pid)) == 3, "the line came before every worker was started"
    for n in range(12):  # a new connection each time, so the workers take turns
        assert httpx.put(url + PATH, params=REPO, json={"entries": {f"{n}.md": str(n)}},
                         headers=AUTH).status_code == 200  # fmt: skip
    etags = {httpx.get(url + PATH, params=REPO, headers=AUTH).headers["etag"] for _ in range(12)}
    assert len(etags) == 1, "every worker answers the same ETag for the same entries"
    route = "/api/claude_code/team_memory"
    for _ in range(4):  # whichever worker answers, the totals are every worker's
        text = httpx.get(url + "/metrics").text
        assert (
            metric(text, "workbench_team_requests_total", route=route, method="PUT", status="200")
            == 12
        )
        assert metric(text, "workbench_team_put_seconds_count") == 12
        assert metric(text, "workbench_team_repo_entries", org="default", repo="acme/widgets") == 12
    assert httpx.get(url + "/readyz").status_code == 200
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=DEADLINE_S) is not None
    assert "Traceback" not in log.read_text()


def _wait_ready(url: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while True:
        assert proc.poll() is None, "the server exited before it was ready"
        assert time.monotonic() < deadline, "the server never became ready"
        try:
            if httpx.get(url + "/readyz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


LAUNCHERS = {
    "uvicorn": lambda port: [
        sys.executable, "-m", "uvicorn", "--factory", "workbench.server.app:create_app",
        "--host", "127.0.0.1", "--port", str(port), "--workers", "2", "--no-access-log",
    ],
    "gunicorn": lambda port: [
        sys.executable, "-m", "gunicorn", "-k", "uvicorn_worker.UvicornWorker", "-w", "2",
        "-b", f"127.0.0.1:{port}", "-c", "deploy/gunicorn.conf.py",
        "workbench.server.app:create_app()",
    ],
}  # fmt: skip


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_the_app_factory_serves_under_uvicorn_and_gunicorn(team_db, processes, tmp_path, launcher):
    if (
        launcher == "gunicorn"
        and shutil.which("gunicorn", path=str(Path(sys.executable).parent)) is None
    ):
        pytest.skip("gunicorn is not installed (pip install '.[server]')")
    port = _free_port()
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    env = _env(
        WORKBENCH_SERVER_DB=team_db("factory"),
        WORKBENCH_SERVER_RATE_LIMIT="0",
        PROMETHEUS_MULTIPROC_DIR=str(metrics_dir),
    )
    repo_root = Path(__file__).resolve().parents[2]
    log = tmp_path / "log"
    proc = subprocess.Popen(
        LAUNCHERS[launcher](port), stdout=subprocess.DEVNULL, stderr=log.open("w"), text=True,
        env=env, cwd=repo_root,
    )  # fmt: skip
    processes.append(proc)
    url = f"http://127.0.0.1:{port}"
    _wait_ready(url, proc)
    for n in range(6):
        put = httpx.put(url + PATH, params=REPO, json={"entries": {f"{n}.md": "x"}}, headers=AUTH,
                        timeout=30)  # fmt: skip
        assert put.status_code == 200
    body = httpx.get(url + PATH, params=REPO, headers=AUTH, timeout=30).json()
    assert len(body["content"]["entries"]) == 6 and body["version"] == 6
    text = httpx.get(url + "/metrics", timeout=30).text
    assert metric(text, "workbench_team_put_seconds_count") == 6
    proc.terminate()
    proc.wait(timeout=DEADLINE_S)
    err = log.read_text()
    logs = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert any(entry.get("msg") == "request" and entry.get("status") == 200 for entry in logs)
    assert TOKEN not in err
