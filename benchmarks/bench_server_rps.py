"""Requests per second of the shipped team server, on kept-alive connections.

The server runs in a child process (so the client's threads never share its GIL) and answers a
full GET of a small repo (20 entries of about 1 KB), the request a pull makes. Figures (medians
of 5 runs):
- one kept-alive connection, requests one after another;
- 8 kept-alive connections at once, each on its own thread (total requests per second);
each measured twice in the same run: with Nagle's algorithm left on, as the server shipped
before (every request after the first on a connection waited ~40 ms for a delayed ACK), and
with TCP_NODELAY as it ships now; the ratio is after / before.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import REPO, line  # noqa: E402

TOKEN = "bench-" + "token"
REPO_SLUG = "acme/widgets"
PATH = "/api/claude_code/team_memory"
RUNS = 5
PER_CONNECTION = 40
CONNECTIONS = 8


def serve(db: str, nodelay: bool) -> None:
    """Child: serve until stdin closes, after printing the URL."""
    import socket

    from workbench.server import TeamServer

    sock = None
    if not nodelay:
        # The socket as the server made it before: protocol 0, so asyncio never set
        # TCP_NODELAY on the connections it accepted.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen()
    with TeamServer(db, [TOKEN], sock=sock, tcp_nodelay=nodelay) as server:
        print(json.dumps({"url": server.url}), flush=True)
        sys.stdin.read()


def start_child(root: Path, nodelay: bool) -> tuple[subprocess.Popen[str], str]:
    db = root / f"server-{'nodelay' if nodelay else 'nagle'}.sqlite3"
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(db), "1" if nodelay else "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "WORKBENCH_HOME": str(root / "home")},
    )
    assert child.stdout is not None
    url = json.loads(child.stdout.readline())["url"]
    return child, url


def seed(url: str) -> None:
    import httpx

    entries = {
        f"topic-{i:02}.md": f"note {i}\n" + "a line of team memory\n" * 48 for i in range(20)
    }
    headers = {"Authorization": f"Bearer {TOKEN}"}
    response = httpx.put(
        url + PATH, params={"repo": REPO_SLUG}, json={"entries": entries}, headers=headers
    )
    response.raise_for_status()


def requests_on_one_connection(url: str, count: int) -> None:
    import httpx

    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, headers=headers) as http:
        for _ in range(count):
            response = http.get(PATH, params={"repo": REPO_SLUG})
            if response.status_code != 200:
                raise SystemExit(f"unexpected HTTP {response.status_code}")


def rps(url: str, connections: int) -> float:
    """Median requests per second over RUNS runs with `connections` kept-alive connections."""
    samples = []
    for _ in range(RUNS):
        threads = [
            threading.Thread(target=requests_on_one_connection, args=(url, PER_CONNECTION))
            for _ in range(connections)
        ]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        samples.append(connections * PER_CONNECTION / (time.perf_counter() - start))
    return statistics.median(samples)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-server-rps-") as tmp:
        root = Path(tmp)
        figures: dict[tuple[bool, int], float] = {}
        for nodelay in (False, True):
            child, url = start_child(root, nodelay)
            try:
                seed(url)
                requests_on_one_connection(url, 5)  # warm-up: thread pool, SQLite pages
                for connections in (1, CONNECTIONS):
                    figures[nodelay, connections] = rps(url, connections)
            finally:
                assert child.stdin is not None
                child.stdin.close()
                child.wait(timeout=30)
        for connections, name in ((1, "one kept-alive connection"), (CONNECTIONS, "8 concurrent")):
            before, after = figures[False, connections], figures[True, connections]
            line(
                f"team server GET, {name}",
                f"{after:.0f} req/s median",
                "over 100 req/s on one connection" if connections == 1 else "",
                f"(Nagle on, as before: {before:.0f} req/s; {after / before:.1f}x)",
            )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3] == "1")
    else:
        main()
