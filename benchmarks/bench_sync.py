"""Team sync against the real team server on loopback.

Figures (medians of several runs):
- a push of 1,000 entries with one changed: PUTs and entries counted at the server (bar:
  exactly one PUT carrying one entry) and its wall time;
- 10 concurrent pushers racing on one repo: lost updates (bar: none), 412s and PUTs;
- reading and hashing a 50 MB team folder (bar: under 0.5 s), against a bare read+sha256 loop
  measured in the same run, and the full push read including the secret scan.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import line, median_and_result  # noqa: E402

REPO = "acme/widgets"
TOKEN = "bench-" + "token"
WORDS = (
    "deploy staging review migration schema rollback cache index latency budget owner "
    "incident runbook flag canary release pipeline config secret rotation quota retry "
    "the a of to and for with when before after always never check"
).split()


def memory_text(rng: random.Random, size: int) -> str:
    out, total = [], 0
    while total < size:
        sentence = " ".join(rng.choices(WORDS, k=12)).capitalize() + ".\n"
        out.append(sentence)
        total += len(sentence)
    return "---\nname: note\ndescription: bench\ntype: project\n---\n" + "".join(out)[:size]


def client_for(team_dir: Path, state_root: Path, url: str):
    from workbench.engine.team.sync.client import TeamSyncClient
    from workbench.engine.team.sync.state import SyncStateStore

    return TeamSyncClient(
        server=url,
        repo=REPO,
        token=TOKEN,
        team_dir=str(team_dir),
        state_store=SyncStateStore(state_root),
    )


def bench_delta_push(root: Path) -> None:
    from workbench.server import TeamServer

    rng = random.Random(1)
    team = root / "delta" / "team"
    team.mkdir(parents=True)
    for i in range(1_000):
        (team / f"topic-{i:04}.md").write_text(memory_text(rng, 1_200))
    with TeamServer(root / "delta.sqlite3", [TOKEN], max_entries=5_000) as server:

        async def push():
            async with client_for(team, root / "delta" / "state", server.url) as client:
                return await client.push()

        first = asyncio.run(push())
        line(
            "first push of 1,000 entries",
            f"{first.uploaded} entries in {server.stats.puts} PUTs",
            extra=f"({first.batches} batches)",
        )
        counts = []

        def change_one_and_push():
            target = team / f"topic-{rng.randrange(1_000):04}.md"
            target.write_text(target.read_text() + f"edit {time.time_ns()}\n")
            server.stats.reset()
            result = asyncio.run(push())
            counts.append((server.stats.puts, server.stats.put_entries, result.uploaded))

        seconds, _ = median_and_result(change_one_and_push, runs=7)
        puts = {c[0] for c in counts}
        entries = {c[1] for c in counts}
        ok = puts == {1} and entries == {1}
        line(
            "push of 1,000 entries with 1 changed",
            f"{max(puts)} PUT carrying {max(entries)} entry (counted at the server, 7 runs)",
            "exactly 1 PUT with 1 entry",
            "OK" if ok else "FAILED",
        )
        line("  its wall time (read, hash, diff, PUT)", f"{seconds * 1000:.1f} ms median")


def bench_concurrent_pushers(root: Path) -> None:
    from workbench.server import TeamServer

    pushers, per_pusher = 10, 20
    with TeamServer(root / "race.sqlite3", [TOKEN], max_entries=5_000) as server:
        seed_dir = root / "race" / "seed"
        seed_dir.mkdir(parents=True)
        (seed_dir / "seed.md").write_text("seed\n")

        async def race() -> tuple[int, int]:
            async with client_for(seed_dir, root / "race" / "seed-state", server.url) as seed:
                await seed.push()
                base = seed.state.last_known_checksum
            clients = []
            for p in range(pushers):
                team = root / "race" / f"dev{p}"
                team.mkdir(parents=True)
                for n in range(per_pusher):
                    (team / f"dev{p}-note{n}.md").write_text(f"pusher {p} note {n}\n")
                client = client_for(team, root / "race" / f"state{p}", server.url)
                client.state.last_known_checksum = base  # everyone starts from the same base
                clients.append(client)
            rounds = 0

            async def until_ok(client) -> int:
                # What a watcher does: a conflicted push is tried again on the next change.
                for attempt in range(1, 30):
                    if (await client.push()).status == "ok":
                        return attempt
                raise RuntimeError("pusher never succeeded")

            attempts = await asyncio.gather(*(until_ok(c) for c in clients))
            for client in clients:
                await client.aclose()
            rounds = max(attempts)
            async with client_for(seed_dir, root / "race" / "check", server.url) as check:
                hashes = await check.fetch_hashes()
            expected = {f"dev{p}-note{n}.md" for p in range(pushers) for n in range(per_pusher)}
            lost = len(expected - set(hashes.entry_checksums))
            return lost, rounds

        start = time.perf_counter()
        lost, rounds = asyncio.run(race())
        elapsed = time.perf_counter() - start
        line(
            "10 concurrent pushers x 20 entries",
            f"{lost} lost updates",
            "0 lost",
            f"{'OK' if lost == 0 else 'FAILED'}; {server.stats.puts} PUTs, "
            f"{server.stats.preconditions_failed} x 412, {server.stats.hash_probes} hash probes, "
            f"at most {rounds} push calls per pusher, {elapsed:.2f} s",
        )


def bench_hashing(root: Path) -> None:
    import hashlib

    from workbench.engine.team.sync.local import read_local_entries

    rng = random.Random(2)
    team = root / "big" / "team"
    total = 0
    for i in range(500):
        folder = team / f"area{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        text = memory_text(rng, 100_000)
        (folder / f"note-{i:03}.md").write_text(text)
        total += len(text.encode())
    mb = total / 1_000_000

    def bare() -> int:
        count = 0
        for folder, _, files in os.walk(team):
            for name in files:
                with open(os.path.join(folder, name), "rb") as handle:
                    hashlib.sha256(handle.read()).hexdigest()
                count += 1
        return count

    def ours() -> int:
        return len(read_local_entries(str(team), scanner=lambda _text: ()).hashes)

    def with_scan() -> int:
        return len(read_local_entries(str(team)).hashes)

    bare()  # warm the page cache once, so every variant reads from memory
    base_s, _ = median_and_result(bare, runs=7)
    ours_s, n = median_and_result(ours, runs=7)
    line(
        f"hash a {mb:.1f} MB team folder ({n} files, warm cache)",
        f"{ours_s:.3f} s median",
        "< 0.5 s",
        f"{'OK' if ours_s < 0.5 else 'FAILED'}; bare read+sha256 loop {base_s:.3f} s, "
        f"ratio {ours_s / base_s:.2f}x",
    )
    scan_s, _ = median_and_result(with_scan, runs=5)
    line(
        "  full push read of the same folder incl. secret scan",
        f"{scan_s:.3f} s median",
        extra=f"({mb / scan_s:.0f} MB/s)",
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        root = Path(tmp)
        os.environ["WORKBENCH_HOME"] = str(root / "workbench-home")
        bench_delta_push(root)
        bench_concurrent_pushers(root)
        bench_hashing(root)


if __name__ == "__main__":
    main()
