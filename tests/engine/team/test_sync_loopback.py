"""The sync client against the real team server on loopback (spec 03 §6)."""

from __future__ import annotations

import json
import os
import random
import string
from pathlib import Path

import pytest
from pgserver import stored_texts

from workbench.engine import Engine
from workbench.engine.team.sync.client import TeamSyncClient
from workbench.engine.team.sync.protocol import entry_hash
from workbench.engine.team.sync.state import SyncStateStore
from workbench.server import TeamServer

REPO = "acme/widgets"
TOKEN = "-".join(["loopback", "team", "token"])
OTHER_TOKEN = "-".join(["loopback", "other", "token"])


@pytest.fixture
def server(team_db):
    # Every sync test here runs against both stores (team_db is parametrized).
    with TeamServer(team_db("server"), {TOKEN: "acme"}, max_entries=50) as srv:
        yield srv


class Machine:
    """One developer's checkout: its own memory folder, history and sync state."""

    def __init__(self, root: Path, name: str) -> None:
        project = root / name / "project"
        project.mkdir(parents=True)
        self.engine = Engine.open(project, memory_dir=str(root / name / "memory"))
        self.team = Path(self.engine.locations.team_dir)
        self.team.mkdir(parents=True)
        self.state_root = root / name / "state"

    def client(self, server: TeamServer, token: str = TOKEN, **options) -> TeamSyncClient:
        return TeamSyncClient(
            server=server.url,
            repo=REPO,
            token=token,
            team_dir=self.engine.locations.team_dir,
            history=self.engine.history,
            state_store=SyncStateStore(self.state_root),
            **options,
        )

    def write(self, key: str, text: str) -> Path:
        path = self.team / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def read(self, key: str) -> str:
        return (self.team / key).read_text(encoding="utf-8")


@pytest.fixture
def alice(tmp_path: Path) -> Machine:
    return Machine(tmp_path, "alice")


@pytest.fixture
def bob(tmp_path: Path) -> Machine:
    return Machine(tmp_path, "bob")


def github_pat() -> str:
    rng = random.Random(7)
    return "gh" + "p_" + "".join(rng.choices(string.ascii_letters + string.digits, k=36))


async def test_first_push_uploads_every_regular_file(server, alice, bob):
    alice.write("MEMORY.md", "- [Deploys](deploys.md) how we ship\n")
    alice.write("deploys.md", "---\nname: deploys\n---\nShip on Tuesdays.\n")
    alice.write("notes/ci.txt", "CI runs on every push.\n")
    async with alice.client(server) as client:
        result = await client.push()
    assert result.status == "ok"
    assert result.uploaded == 3 and result.batches == 1 and result.conflict_retries == 0
    assert server.stats.puts == 1 and server.stats.put_entries == 3

    async with bob.client(server) as client:
        pulled = await client.pull()
    assert pulled.status == "ok"
    assert sorted(pulled.written) == ["MEMORY.md", "deploys.md", "notes/ci.txt"]
    assert bob.read("notes/ci.txt") == "CI runs on every push.\n"
    assert pulled.checksum and pulled.checksum.startswith("sha256:")


async def test_delta_push_sends_only_changed_entries(server, alice):
    for i in range(20):
        alice.write(f"topic-{i:02}.md", f"fact number {i}\n")
    async with alice.client(server) as client:
        assert (await client.push()).uploaded == 20
    server.stats.reset()
    alice.write("topic-07.md", "fact number 7, revised\n")
    async with alice.client(server) as client:  # a new process: state comes from disk
        result = await client.push()
        again = await client.push()
    assert result.status == "ok" and result.uploaded_keys == ("topic-07.md",)
    assert server.stats.puts == 1 and server.stats.put_entries == 1
    assert again.status == "ok" and again.uploaded == 0
    assert server.stats.puts == 1, "an empty delta must not send a PUT"


async def test_two_clients_racing_get_412_then_retry_successfully(server, alice, bob):
    alice.write("shared.md", "v1\n")
    async with alice.client(server) as client:
        await client.push()
    async with bob.client(server) as client:
        await client.pull()
    # Both now hold the same checksum; Alice moves the server forward first.
    alice.write("alice.md", "from alice\n")
    async with alice.client(server) as client:
        assert (await client.push()).status == "ok"
    bob.write("bob.md", "from bob\n")
    bob.write("shared.md", "v2 by bob\n")
    async with bob.client(server) as client:
        result = await client.push()
        status = client.status()
    assert result.status == "ok"
    assert result.conflict_retries == 1
    assert server.stats.preconditions_failed == 1
    assert set(result.uploaded_keys) == {"bob.md", "shared.md"}
    assert status.conflicts and status.conflicts[-1]["resolved"] is True

    async with alice.client(server) as client:
        await client.pull()
    assert alice.read("bob.md") == "from bob\n"
    assert alice.read("shared.md") == "v2 by bob\n", "local wins on push"
    assert alice.read("alice.md") == "from alice\n", "no update may be lost"


async def test_keys_a_teammate_pushed_identically_drop_out_after_a_conflict(server, alice, bob):
    alice.write("a.md", "same\n")
    async with alice.client(server) as client:
        await client.push()
    async with bob.client(server) as client:
        await client.pull()
    alice.write("b.md", "identical on both\n")
    async with alice.client(server) as client:
        await client.push()
    bob.write("b.md", "identical on both\n")
    bob.write("c.md", "only bob\n")
    server.stats.reset()
    async with bob.client(server) as client:
        result = await client.push()
    assert result.status == "ok" and result.conflict_retries == 1
    assert result.uploaded_keys == ("c.md",)
    assert server.stats.put_entries == 3  # the refused PUT carried both, the retry only c.md


async def test_413_teaches_max_entries_and_suppresses_until_a_delete(team_db, alice):
    with TeamServer(team_db("small"), {TOKEN: "acme"}, max_entries=5) as small:
        for i in range(7):
            alice.write(f"m{i}.md", f"memory {i}\n")
        async with alice.client(small) as client:
            first = await client.push()
            assert first.status == "error"
            assert first.error is not None and first.error.http_status == 413
            assert first.max_entries == 5 and client.state.server_max_entries == 5
            assert first.suppressed_reason == "http_413"
            blocked = await client.push()
            assert blocked.status == "suppressed"
        assert small.stats.too_many_entries == 1 and small.stats.puts == 1

        (alice.team / "m6.md").unlink()  # deleting a file lifts the suppression
        async with alice.client(small) as client:
            result = await client.push()
            status = client.status()
        assert result.status == "ok"
        assert result.uploaded_keys == ("m0.md", "m1.md", "m2.md", "m3.md", "m4.md")
        assert status.max_entries == 5 and status.suppressed_reason is None


async def test_pull_304_when_unchanged_and_404_clears_server_checksums(server, alice, bob):
    async with bob.client(server) as client:
        client.state.server_checksums["stale.md"] = entry_hash("stale")
        client.state.last_known_checksum = "sha256:" + "0" * 64
        empty = await client.pull()
        assert empty.status == "empty"
        assert client.state.server_checksums == {} and client.state.last_known_checksum is None

    alice.write("a.md", "hello\n")
    async with alice.client(server) as client:
        await client.push()
    async with bob.client(server) as client:
        assert (await client.pull()).status == "ok"
        gets_before = server.stats.gets
        again = await client.pull()
    assert again.status == "not_modified" and again.written == ()
    assert server.stats.gets == gets_before + 1


async def test_auth_failure_suppresses_pushes_until_a_file_is_deleted(server, alice):
    alice.write("one.md", "1\n")
    alice.write("two.md", "2\n")
    async with alice.client(server, token=OTHER_TOKEN) as client:
        failed = await client.push()
    assert failed.status == "error"
    assert failed.error is not None and failed.error.kind == "auth"
    assert failed.error.http_status == 401 and failed.suppressed_reason == "http_401"
    refused_before = server.stats.unauthorized

    async with alice.client(server) as client:  # even the right token waits for a delete
        blocked = await client.push()
        assert blocked.status == "suppressed" and blocked.suppressed_reason == "http_401"
    assert server.stats.unauthorized == refused_before, "a suppressed push sends nothing"

    (alice.team / "two.md").unlink()
    async with alice.client(server) as client:
        result = await client.push()
    assert result.status == "ok" and result.uploaded_keys == ("one.md",)


async def test_forced_push_lifts_a_suppression(server, alice):
    alice.write("one.md", "1\n")
    async with alice.client(server, token=OTHER_TOKEN) as client:
        await client.push()
    async with alice.client(server) as client:
        assert (await client.push()).status == "suppressed"
        assert (await client.push(force=True)).status == "ok"


async def test_pull_overwrite_is_undoable_and_identical_files_keep_their_mtime(server, alice, bob):
    alice.write("changed.md", "server version\n")
    alice.write("same.md", "identical\n")
    async with alice.client(server) as client:
        await client.push()
    bob.write("changed.md", "bob's unsynced edit\n")
    same = bob.write("same.md", "identical\n")
    os.utime(same, (1_000_000_000, 1_000_000_000))

    async with bob.client(server) as client:
        result = await client.pull()
    assert result.written == ("changed.md",) and result.unchanged == 1
    assert bob.read("changed.md") == "server version\n"
    assert same.stat().st_mtime == 1_000_000_000

    [entry] = [e for e in bob.engine.history.entries() if e.action == "sync-pull"]
    assert entry.path == str(bob.team / "changed.md")
    bob.engine.history.undo()
    assert bob.read("changed.md") == "bob's unsynced edit\n"


async def test_push_skips_secrets_and_files_over_250000_bytes(server, alice, tmp_path):
    token = github_pat()
    alice.write("creds.md", f"The deploy bot uses {token} for releases.\n")
    alice.write("big.log", "x" * 250_001)
    alice.write("edge.txt", "y" * 250_000)
    alice.write("fine.md", "no secrets here\n")
    async with alice.client(server) as client:
        result = await client.push()
        state_file = client.state_store.path_for(client.server, REPO, client.team_dir)
    assert result.status == "ok"
    assert set(result.uploaded_keys) == {"edge.txt", "fine.md"}
    assert [s.to_json() for s in result.skipped_secrets] == [
        {
            "path": "creds.md",
            "rule_id": "github-pat",
            "label": "GitHub PAT",
            "rule_ids": ["github-pat"],
            "labels": ["GitHub PAT"],
        }
    ]
    assert result.skipped_too_large == ("big.log",)

    payload = json.dumps(result.to_json())
    assert token not in payload
    assert token not in state_file.read_text(encoding="utf-8")
    server.stop()
    stored = " ".join(stored_texts(server.database.location))
    assert token not in stored and "creds.md" not in stored


async def test_entries_over_200000_bytes_of_body_go_in_several_puts(server, alice):
    for name in ("a.md", "b.md", "c.md"):
        alice.write(name, name[0] * 90_000)
    async with alice.client(server) as client:
        result = await client.push()
    assert result.status == "ok" and result.batches == 2 and result.uploaded == 3
    assert server.stats.puts == 2


async def test_status_shows_per_key_state_and_pending_delta(server, alice, bob):
    alice.write("same.md", "same\n")
    alice.write("theirs.md", "v1\n")
    alice.write("mine.md", "v1\n")
    async with alice.client(server) as client:
        await client.push()
    async with bob.client(server) as client:
        await client.pull()
    alice.write("theirs.md", "v2 from alice\n")
    async with alice.client(server) as client:
        await client.push()
    bob.write("mine.md", "v2 from bob\n")
    bob.write("new.md", "brand new\n")
    async with bob.client(server) as client:
        probe = await client.fetch_hashes()  # status is offline: refresh the server view
        client.state.server_checksums = dict(probe.entry_checksums)
        status = client.status()
    states = {row.key: row.state for row in status.keys}
    assert states == {
        "same.md": "in_sync",
        "theirs.md": "server_changed",
        "mine.md": "local_changed",
        "new.md": "local_only",
    }
    assert status.pending == ("mine.md", "new.md", "theirs.md")
    assert status.local_entries == 4
    assert [h["operation"] for h in status.history][:1] == ["pull"]


async def test_sync_pulls_then_pushes(server, alice, bob):
    alice.write("a.md", "from alice\n")
    async with alice.client(server) as client:
        await client.push()
    bob.write("b.md", "from bob\n")
    async with bob.client(server) as client:
        pulled, pushed = await client.sync()
    assert pulled.status == "ok" and pulled.written == ("a.md",)
    assert pushed is not None and pushed.status == "ok" and pushed.uploaded_keys == ("b.md",)
