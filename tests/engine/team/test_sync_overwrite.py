"""Local wins on push, but overwriting a teammate's newer version is never silent: it is in
the result and the saved status, and their version is kept in local history."""

from __future__ import annotations

from tests.engine.team.test_sync_loopback import Machine, alice, bob, server  # noqa: F401


async def _teammate_changed_shared(server, alice, bob) -> None:  # noqa: F811
    alice.write("shared.md", "v1\n")
    async with alice.client(server) as client:
        await client.push()
    async with bob.client(server) as client:
        await client.pull()
    bob.write("shared.md", "bob's v2\n")
    async with bob.client(server) as client:
        assert (await client.push()).status == "ok"


async def test_a_push_over_a_teammates_change_says_so_and_keeps_theirs(server, alice, bob):  # noqa: F811
    await _teammate_changed_shared(server, alice, bob)
    alice.write("shared.md", "alice's v2\n")
    async with alice.client(server) as client:
        result = await client.push()
        status = client.status()
    assert result.status == "ok" and result.conflict_retries == 1  # 412, probe, PUT
    (overwrite,) = result.overwritten
    assert overwrite.key == "shared.md" and overwrite.history_id
    assert [o.key for o in status.overwrites] == ["shared.md"]
    assert status.to_json()["overwrites"][0]["history_id"] == overwrite.history_id
    # Local won on the server ...
    async with bob.client(server) as client:
        await client.pull()
    assert bob.read("shared.md") == "alice's v2\n"
    # ... and Alice can bring Bob's version back from her history.
    restored = alice.engine.team.restore_overwritten(overwrite.history_id)
    assert [e.effect for e in restored.entries] == ["reverted"]
    assert alice.read("shared.md") == "bob's v2\n"


async def test_a_stale_copy_pushed_over_a_teammates_change_is_reported(server, alice, bob):  # noqa: F811
    # Alice never touched shared.md, but after the probe local wins for every differing key.
    await _teammate_changed_shared(server, alice, bob)
    alice.write("mine.md", "only alice\n")
    async with alice.client(server) as client:
        result = await client.push()
    assert result.status == "ok" and result.conflict_retries == 1
    assert [o.key for o in result.overwritten] == ["shared.md"]


async def test_a_teammates_new_file_is_not_an_overwrite(server, alice, bob):  # noqa: F811
    alice.write("shared.md", "v1\n")
    async with alice.client(server) as client:
        await client.push()
    bob.write("bob.md", "from bob\n")
    async with bob.client(server) as client:
        await client.push()
    alice.write("shared.md", "alice's v2\n")
    async with alice.client(server) as client:
        result = await client.push()
    assert result.status == "ok" and result.conflict_retries == 1
    assert result.overwritten == ()
    assert [e.action for e in alice.engine.history.entries()] == []  # nothing kept for nothing


async def test_each_replaced_version_is_restored_on_its_own(server, alice, bob):  # noqa: F811
    for key in ("one.md", "two.md"):
        alice.write(key, "v1\n")
    async with alice.client(server) as client:
        await client.push()
    async with bob.client(server) as client:
        await client.pull()
    for key in ("one.md", "two.md"):
        bob.write(key, f"bob's {key}\n")
    async with bob.client(server) as client:
        await client.push()
    for key in ("one.md", "two.md"):
        alice.write(key, f"alice's {key}\n")
    async with alice.client(server) as client:
        result = await client.push()
    by_key = {o.key: o.history_id for o in result.overwritten}
    assert sorted(by_key) == ["one.md", "two.md"]
    alice.engine.team.restore_overwritten(by_key["two.md"])
    assert alice.read("two.md") == "bob's two.md\n" and alice.read("one.md") == "alice's one.md\n"
