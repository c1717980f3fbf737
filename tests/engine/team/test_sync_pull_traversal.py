"""A hostile server cannot make a pull write outside the team folder (spec 03 §1.6, §6.5)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from workbench.engine import Engine
from workbench.engine.team.sync.client import TeamSyncClient
from workbench.engine.team.sync.keys import display_key
from workbench.engine.team.sync.state import SyncStateStore

HOSTILE_KEYS = [
    "../escape.md",
    "../../escape.md",
    "a/../../escape.md",
    "../team-evil/prefix-attack.md",
    "%2e%2e%2fescape.md",
    "%2E%2E%2Fescape.md",
    "%2e%2e/escape.md",
    "..%2fescape.md",
    "sub%2f..%2f..%2fescape.md",
    "\uff0e\uff0e\uff0fescape.md",  # full-width ．．／
    "\uff0e\uff0e/escape.md",
    "sub\uff0f..\uff0f..\uff0fescape.md",
    "..\\escape.md",
    "sub\\..\\..\\escape.md",
    "/tmp/escape.md",
    "/etc/escape.md",
    "escape.md\x00",
    "a\x00/../../escape.md",
    "",
    ".",
    "..",
    "sub/..",
]


def _tree(root: Path, skip: Path) -> dict[str, bytes | str]:
    """Every file and link under root (except `skip`, the sync state and the workbench's
    write lock beside MEMORY.md), with contents or link targets."""
    out: dict[str, bytes | str] = {}
    skipped = (skip, root / "state")
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if any(here == s or s in here.parents for s in skipped):
            dirs[:] = []
            continue
        for name in dirs + files:
            path = Path(folder, name)
            if name == ".workbench.lock":
                continue
            if path.is_symlink():
                out[str(path)] = "-> " + os.readlink(path)
            elif path.is_file():
                out[str(path)] = path.read_bytes()
    return out


@pytest.fixture
def setup(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    engine = Engine.open(project, memory_dir=str(tmp_path / "memory"))
    team = Path(engine.locations.team_dir)
    team.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.md").write_text("outside file\n")
    (tmp_path / "memory" / "team-evil").mkdir()
    os.symlink(outside, team / "linked-dir")
    os.symlink(outside / "target.md", team / "linked-file.md")
    os.symlink(outside / "missing", team / "dangling")
    os.symlink(outside / "missing-dir", team / "dangling-dir")
    return engine, team, tmp_path


def _hostile_client(engine: Engine, tmp_path: Path, entries: dict[str, str]) -> TeamSyncClient:
    body = {
        "organizationId": "evil",
        "repo": "acme/widgets",
        "version": 1,
        "lastModified": "2025-01-01T00:00:00.000Z",
        "checksum": "sha256:" + "ab" * 32,
        "content": {"entries": entries},
    }

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=body)

    return TeamSyncClient(
        server="http://hostile.invalid",
        repo="acme/widgets",
        token="t",
        team_dir=engine.locations.team_dir,
        history=engine.history,
        state_store=SyncStateStore(tmp_path / "state"),
        transport=httpx.MockTransport(handler),
    )


async def test_traversal_corpus_writes_nothing_outside_the_team_folder(setup):
    engine, team, root = setup
    symlink_keys = [
        "linked-dir/pwned.md",
        "linked-dir/deeper/pwned.md",
        "linked-file.md",
        "dangling",
        "dangling/pwned.md",
        "dangling-dir/pwned.md",
    ]
    entries = {key: "pwned\n" for key in HOSTILE_KEYS + symlink_keys}
    entries["ok.md"] = "fine\n"
    entries["sub/dir/ok.md"] = "also fine\n"
    before = _tree(root, skip=team)

    async with _hostile_client(engine, root, entries) as client:
        result = await client.pull()

    assert result.status == "ok"
    assert sorted(result.written) == ["ok.md", "sub/dir/ok.md"]
    skipped = {s.key: s.reason for s in result.skipped}
    # Keys are reported escaped to one line (a NUL shows as \x00).
    assert set(skipped) == {display_key(k) for k in HOSTILE_KEYS + symlink_keys}
    assert set(skipped.values()) == {"unsafe_key"}
    assert _tree(root, skip=team) == before, "nothing outside the team folder may change"
    assert (root / "outside" / "target.md").read_text() == "outside file\n"
    assert not (root / "outside" / "missing").exists()
    assert not list((root / "memory" / "team-evil").iterdir())


async def test_oversized_entries_are_skipped_and_the_rest_written(setup):
    engine, team, root = setup
    entries = {"big.md": "x" * 250_001, "edge.md": "y" * 250_000, "multi.md": "é" * 125_001}
    async with _hostile_client(engine, root, entries) as client:
        result = await client.pull()
    assert result.written == ("edge.md",)
    assert {s.key: s.reason for s in result.skipped} == {
        "big.md": "too_large",
        "multi.md": "too_large",
    }
    assert not (team / "big.md").exists()


async def test_a_key_naming_an_existing_folder_is_skipped_not_fatal(setup):
    engine, team, root = setup
    (team / "folder").mkdir()
    async with _hostile_client(engine, root, {"folder": "x", "fine.md": "y"}) as client:
        result = await client.pull()
    assert result.written == ("fine.md",)
    assert [(s.key, s.reason) for s in result.skipped] == [("folder", "write_failed")]
    assert (team / "folder").is_dir()
