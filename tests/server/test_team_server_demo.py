"""The demo's team server: seeded like a teammate synced, and able to play that teammate."""

from __future__ import annotations

from pathlib import Path

from workbench.engine import Engine
from workbench.engine.team.sync.state import SyncStateStore
from workbench.server.demo import TEAMMATE_NOTE_KEY, demo_team


async def test_demo_team_serves_a_teammate_and_produces_a_conflict(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    engine = Engine.open(project, memory_dir=str(tmp_path / "memory"))
    team = Path(engine.locations.team_dir)
    team.mkdir(parents=True)
    (team / "MEMORY.md").write_text("# Team memory\n- [A](a.md) — a\n")
    (team / "a.md").write_text("a\n")

    with demo_team(tmp_path / "demo", team, "acme-demo/app") as demo:
        assert set(demo.env()) == {"TEAM_MEMORY_SYNC_URL", "WORKBENCH_TEAM_TOKEN"}
        client = engine.team.sync_client(
            server=demo.url,
            repo=demo.repo,
            token=demo.token,
            state_store=SyncStateStore(tmp_path / "state"),
        )
        async with client:
            pulled = await client.pull()
            assert set(pulled.written) == {"MEMORY.md", TEAMMATE_NOTE_KEY}
            assert TEAMMATE_NOTE_KEY in (team / "MEMORY.md").read_text()
            assert pulled.unchanged == 1  # a.md was already identical

            demo.teammate_edit("b.md", "the teammate again\n")
            (team / "a.md").write_text("a, edited here\n")
            pushed = await client.push()
        assert pushed.status == "ok" and pushed.conflict_retries == 1
        assert pushed.uploaded_keys == ("a.md",)
