"""Concurrent pushers against the team server: 1, 2 and 4 workers, on SQLite and PostgreSQL.

Each run starts the real `workbench team-server --workers N` and lets P pushers (8, then 32)
run the sync protocol for a fixed time: probe `?view=hashes` for the ETag, PUT one new entry
with If-Match, probe again after a 412. Pushers share four repos, so a quarter of them race on
each. Per run: acknowledged PUTs per second, p50 / p99 latency of every PUT (200 and 412),
the number of 412s, lost updates (acknowledged entries missing afterwards, or versions that do
not match the acknowledged count: must be 0), and the ratio of PUTs per second against the
single-process SQLite server with the same number of pushers in the same run. Each figure is
the median of three runs of two seconds (lost updates: the sum over them).

PostgreSQL is a throwaway server on loopback started from Debian's binaries (as the tests do,
without fsync); without them its rows say why they were skipped. SQLite runs with
synchronous=FULL as it ships. Rate limits are off: they would measure the limit.
"""

from __future__ import annotations

import http.client
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
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from benchmarks._common import REPO, line  # noqa: E402

TOKEN = "bench-" + "load-token"
PATH = "/api/claude_code/team_memory"
REPOS = 4
WORKERS = (1, 2, 4)
PUSHERS = (8, 32)
DURATION_S = float(os.environ.get("BENCH_LOAD_SECONDS", "2"))
RUNS = 3


class Pusher(threading.Thread):
    def __init__(self, host: str, port: int, index: int, start: threading.Event, run: str):
        super().__init__(daemon=True)
        self.host, self.port, self.index, self.start_event = host, port, index, start
        self.repo = f"bench/{run}-r{index % REPOS}"
        self.latencies: list[float] = []
        self.acknowledged: dict[str, str] = {}
        self.conflicts = 0
        self.deadline = 0.0
        self.failure: str | None = None

    def request(self, conn, method: str, query: str, body: bytes | None, etag: str | None):
        headers = {"Authorization": f"Bearer {TOKEN}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if etag:
            headers["If-Match"] = etag
        conn.request(method, f"{PATH}?repo={self.repo}{query}", body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("etag")

    def run(self) -> None:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        self.start_event.wait()
        n = 0
        try:
            status, etag = self.request(conn, "GET", "&view=hashes", None, None)
            while time.perf_counter() < self.deadline:
                key = f"p{self.index}-{n}.md"
                content = f"pusher {self.index} note {n}\n" + "team memory line\n" * 20
                body = json.dumps({"entries": {key: content}}).encode()
                started = time.perf_counter()
                status, new_etag = self.request(conn, "PUT", "", body, etag)
                self.latencies.append(time.perf_counter() - started)
                if status == 200:
                    self.acknowledged[key] = content
                    etag = new_etag
                    n += 1
                elif status == 412:
                    self.conflicts += 1
                    status, etag = self.request(conn, "GET", "&view=hashes", None, None)
                else:
                    self.failure = f"HTTP {status}"
                    return
        except OSError as exc:
            self.failure = f"{type(exc).__name__}: {exc}"
        finally:
            conn.close()


def start_server(db: str, workers: int, home: Path) -> tuple[subprocess.Popen[str], str, int]:
    env = {**os.environ, "WORKBENCH_HOME": str(home), "WORKBENCH_TEAM_TOKEN": TOKEN}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "team-server", "--port", "0", "--db", db,
         "--workers", str(workers), "--rate-limit", "0", "--log-format", "off", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if not first:
        raise SystemExit(f"team-server --workers {workers} on {db} did not start")
    url = json.loads(first)["url"]
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return proc, host, int(port)


def lost_updates(host: str, port: int, pushers: list[Pusher]) -> int:
    """Acknowledged entries the server no longer has, plus version mismatches per repo."""
    conn = http.client.HTTPConnection(host, port, timeout=60)
    lost = 0
    try:
        for repo in sorted({p.repo for p in pushers}):
            conn.request("GET", f"{PATH}?repo={repo}", headers={"Authorization": f"Bearer {TOKEN}"})
            response = conn.getresponse()
            data = json.loads(response.read() or b"{}") if response.status == 200 else {}
            stored = data.get("content", {}).get("entries", {})
            acked = {k: v for p in pushers if p.repo == repo for k, v in p.acknowledged.items()}
            lost += sum(1 for key, value in acked.items() if stored.get(key) != value)
            if data.get("version", 0) != len(acked):
                lost += abs(data.get("version", 0) - len(acked))
    finally:
        conn.close()
    return lost


def run_load(host: str, port: int, count: int, run: str) -> dict[str, float]:
    start = threading.Event()
    pushers = [Pusher(host, port, i, start, run) for i in range(count)]
    for pusher in pushers:
        pusher.start()
    began = time.perf_counter()
    for pusher in pushers:
        pusher.deadline = began + DURATION_S
    start.set()
    for pusher in pushers:
        pusher.join(timeout=DURATION_S + 120)
    elapsed = time.perf_counter() - began
    failures = [p.failure for p in pushers if p.failure]
    if failures:
        raise SystemExit(f"pushers failed: {failures[:3]}")
    latencies = sorted(x for p in pushers for x in p.latencies)
    acked = sum(len(p.acknowledged) for p in pushers)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else 0.0
    return {
        "puts_per_s": acked / elapsed,
        "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "p99_ms": p99 * 1000,
        "conflicts": sum(p.conflicts for p in pushers),
        "lost": lost_updates(host, port, pushers),
    }


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    """The median of each figure over the runs; lost updates are added up instead."""
    merged = {name: statistics.median(r[name] for r in runs) for name in runs[0]}
    merged["lost"] = sum(r["lost"] for r in runs)
    return merged


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def main() -> None:
    from pgserver import PgCluster, unavailable_reason

    results: dict[tuple[str, int, int], dict[str, float]] = {}
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-server-load-") as tmp:
        root = Path(tmp)
        cluster = None
        reason = unavailable_reason()
        if reason is None:
            cluster = PgCluster.create()
        else:
            skipped["postgresql"] = reason
        try:
            for store in ("sqlite", "postgresql"):
                if store in skipped:
                    continue
                for workers in WORKERS:
                    if store == "sqlite":
                        db = str(root / f"w{workers}.sqlite3")
                    else:
                        assert cluster is not None
                        db = cluster.new_schema()[1]
                    proc, host, port = start_server(db, workers, root / "home")
                    try:
                        run_load(host, port, 4, f"warm{workers}")  # pools, caches, pages
                        for count in PUSHERS:
                            runs = [
                                run_load(host, port, count, f"w{workers}p{count}n{n}")
                                for n in range(RUNS)
                            ]
                            results[store, workers, count] = medians(runs)
                    finally:
                        stop_server(proc)
        finally:
            if cluster is not None:
                cluster.remove()

    for store in ("sqlite", "postgresql"):
        if store in skipped:
            line(f"team server load, {store}", "skipped", extra=f"({skipped[store]})")
            continue
        for count in PUSHERS:
            for workers in WORKERS:
                r = results[store, workers, count]
                base = results["sqlite", 1, count]["puts_per_s"]
                line(
                    f"team server load, {store}, {workers} worker{'s' if workers > 1 else ''}, "
                    f"{count} pushers",
                    f"{r['puts_per_s']:.0f} PUTs/s",
                    "lost updates 0",
                    f"(p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms, "
                    f"{r['conflicts']:.0f} x 412, lost {r['lost']:.0f}, "
                    f"{r['puts_per_s'] / base:.2f}x the single-process SQLite server)",
                )
    if any(r["lost"] for r in results.values()):
        raise SystemExit("lost updates: an acknowledged PUT is missing")


if __name__ == "__main__":
    main()
