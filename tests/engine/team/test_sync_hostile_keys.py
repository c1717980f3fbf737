"""Keys no file can have, and keys that carry a credential, on pull and on push.

The shipped server refuses to store keys no client could write (a lone surrogate, a name over
255 bytes), so those are served by a loopback fault server. It does store a key holding a
credential (it does not scan), so that case runs through the real server, as a careless or
hostile client would have put it there.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from fakes.team_faults import Fault, FaultServer
from secretgen import make_token

from workbench.cli import main
from workbench.engine import Engine
from workbench.engine.team.sync.client import TeamSyncClient
from workbench.engine.team.sync.keys import display_key, redacted_key, secret_in_key
from workbench.engine.team.sync.state import SyncStateStore
from workbench.server import TeamServer

REPO = "acme/widgets"
TOKEN = "-".join(["hostile", "keys", "token"])
PATH = "/api/claude_code/team_memory"

UNWRITABLE_KEYS = {
    "lone\ud800surrogate.md": "not valid Unicode",
    "escaped\udcffbyte.md": "not valid Unicode",
    "n" * 256 + ".md": "longer than 255 bytes",
    "deep/" + "d" * 300 + "/x.md": "longer than 255 bytes",
    "folder/": "names a folder",
    "folder/.": "names a folder",
}


class Machine:
    def __init__(self, root: Path, name: str) -> None:
        project = root / name / "project"
        project.mkdir(parents=True)
        self.root = root / name
        self.engine = Engine.open(project, memory_dir=str(root / name / "memory"))
        self.team = Path(self.engine.locations.team_dir)
        self.team.mkdir(parents=True)
        self.state = SyncStateStore(root / name / "state")

    def client(self, url: str, **options) -> TeamSyncClient:
        return TeamSyncClient(
            server=url,
            repo=REPO,
            token=TOKEN,
            team_dir=self.engine.locations.team_dir,
            history=self.engine.history,
            state_store=self.state,
            **options,
        )

    def state_text(self) -> str:
        return "".join(p.read_text() for p in self.state.root.glob("*.json"))


@pytest.fixture
def alice(tmp_path: Path) -> Machine:
    return Machine(tmp_path, "alice")


def pull_body(entries: dict[str, str]) -> bytes:
    body = {
        "organizationId": "o",
        "repo": REPO,
        "version": 1,
        "lastModified": "2025-01-01T00:00:00.000Z",
        "checksum": "sha256:" + "ab" * 32,
        "content": {"entries": entries, "entryChecksums": {k: "sha256:0" for k in entries}},
    }
    # ensure_ascii writes a lone surrogate as the JSON escape \ud800, as any server would.
    return json.dumps(body).encode()


def serving(entries: dict[str, str]) -> FaultServer:
    return FaultServer(lambda _seen: Fault(200, body=pull_body(entries)))


# --- keys that cannot be file names -----------------------------------------------------------


async def test_a_lone_surrogate_key_is_refused_alone_and_the_pull_is_recorded(alice):
    entries = {"fine.md": "fine\n", "lone\ud800.md": "x\n", "sub/also-fine.md": "also\n"}
    with serving(entries) as server:
        async with alice.client(server.url) as client:
            first = await client.pull()
            again = await client.pull(skip_etag_cache=True)
            history = list(client.state.history)
        state_text = alice.state_text()
    assert first.written == ("fine.md", "sub/also-fine.md")
    assert again.written == () and again.unchanged == 2
    for result in (first, again):  # a retry does not fail the same way: it does the same
        assert result.status == "ok"
        [skipped] = result.skipped
        assert skipped.key == "lone\\ud800.md" and skipped.reason == "invalid_key"
        assert "lone surrogate" in skipped.detail
    assert [h["status"] for h in history] == ["ok", "ok"]
    assert (alice.team / "fine.md").read_text() == "fine\n"
    assert "\\ud800" not in state_text and "lone\\" not in state_text


@pytest.mark.parametrize("key", list(UNWRITABLE_KEYS), ids=range(len(UNWRITABLE_KEYS)))
async def test_keys_that_cannot_be_file_names_are_refused_with_a_reason(alice, key):
    with serving({key: "x\n", "fine.md": "fine\n"}) as server:
        async with alice.client(server.url) as client:
            result = await client.pull()
    assert result.status == "ok" and result.written == ("fine.md",)
    [skipped] = result.skipped
    assert skipped.key == display_key(key)
    assert skipped.reason == "invalid_key"
    assert UNWRITABLE_KEYS[key] in skipped.detail
    assert sorted(p.name for p in alice.team.iterdir()) == ["fine.md"]


def test_sync_pull_with_a_surrogate_key_exits_0_with_json_that_prints(alice, capsys, monkeypatch):
    project = alice.engine.locations.project_root
    with serving({"lone\ud800.md": "x\n", "fine.md": "fine\n"}) as server:
        monkeypatch.setenv("TEAM_MEMORY_SYNC_URL", server.url)
        monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", TOKEN)
        argv = ["sync", "pull", "--project", str(project), "--repo", REPO]
        argv += ["--memory-dir", str(alice.root / "memory")]
        code = main([*argv, "--json"])
        out, err = capsys.readouterr()
        code_text = main(argv)
        out_text, err_text = capsys.readouterr()
    assert code == 0 and err == "" and "internal error" not in out
    pulled = json.loads(out)
    assert pulled["skipped"] == [
        {
            "key": "lone\\ud800.md",
            "reason": "invalid_key",
            "detail": "it is not valid Unicode (it holds a lone surrogate)",
        }
    ]
    assert code_text == 0 and "internal error" not in out_text + err_text


# --- credentials in keys: push ----------------------------------------------------------------


def secret_names() -> dict[str, str]:
    """Team files whose names hold a credential, as (relative path -> rule id)."""
    pat = make_token("github-pat", "name")
    ant = make_token("anthropic-api-key", "name")  # needs a terminator: ".md" is none
    aws = make_token("aws-access-token", "name")
    return {
        f"notes/{pat}.md": "github-pat",
        f"{ant}.md": "anthropic-api-key",
        f"creds-{aws}/readme.md": "aws-access-token",
    }


@pytest.fixture
def server(tmp_path: Path):
    with TeamServer(tmp_path / "server.sqlite3", [TOKEN]) as srv:
        yield srv


def server_keys(server: TeamServer) -> set[str]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    response = httpx.get(server.url + PATH, params={"repo": REPO}, headers=headers)
    return set(response.json()["content"]["entries"]) if response.status_code == 200 else set()


async def test_a_credential_in_a_file_name_is_never_uploaded(server, alice):
    names = secret_names()
    for name in names:
        (alice.team / name).parent.mkdir(parents=True, exist_ok=True)
        (alice.team / name).write_text("an innocent body\n")
    (alice.team / "fine.md").write_text("fine\n")
    async with alice.client(server.url) as client:
        result = await client.push()
        status = client.status()
    assert result.status == "ok" and result.uploaded_keys == ("fine.md",)
    assert server_keys(server) == {"fine.md"}
    reported = {s.rule_id: s for s in result.skipped_secrets}
    assert set(reported) == set(names.values())
    assert {s.found_in for s in reported.values()} == {"name"}
    assert reported["github-pat"].path == "notes/[REDACTED].md"
    assert reported["aws-access-token"].path == "[REDACTED]/readme.md"
    shown = json.dumps([result.to_json(), status.to_json()]) + alice.state_text()
    for rule in names.values():
        assert make_token(rule, "name") not in shown


def test_sync_push_text_names_the_file_without_its_secret(server, alice, capsys, monkeypatch):
    names = secret_names()
    for name in names:
        (alice.team / name).parent.mkdir(parents=True, exist_ok=True)
        (alice.team / name).write_text("body\n")
    monkeypatch.setenv("TEAM_MEMORY_SYNC_URL", server.url)
    monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", TOKEN)
    project = alice.engine.locations.project_root
    argv = ["--project", str(project), "--repo", REPO, "--memory-dir", str(alice.root / "memory")]
    assert main(["sync", "push", *argv]) == 1  # files were held back: the user must act
    assert main(["sync", "status", *argv]) == 0
    out, err = capsys.readouterr()
    assert "[REDACTED]" in out
    for rule in ("github-pat", "anthropic-api-key", "aws-access-token"):
        assert make_token(rule, "name") not in out + err


# --- credentials in keys and contents: pull ---------------------------------------------------


async def test_a_pulled_key_or_body_holding_a_credential_is_refused_and_reported(server, alice):
    pat = make_token("github-pat", "pulled")
    slack = make_token("slack-bot-token", "pulled")
    entries = {f"notes/{pat}.md": "innocent\n", "leak.md": f"token {slack}\n", "ok.md": "ok\n"}
    headers = {"Authorization": f"Bearer {TOKEN}"}
    # Another client that does not scan put them there; the server stores what it is sent.
    put = httpx.put(
        server.url + PATH, params={"repo": REPO}, json={"entries": entries}, headers=headers
    )
    assert put.status_code == 200
    async with alice.client(server.url) as client:
        result = await client.pull()
        status = client.status()
    assert result.status == "ok" and result.written == ("ok.md",)
    skipped = {s.reason: s for s in result.skipped}
    assert skipped["secret_in_key"].key == "notes/[REDACTED].md"
    assert "GitHub PAT" in skipped["secret_in_key"].detail
    assert skipped["secret_in_content"].key == "leak.md"
    assert sorted(str(p.relative_to(alice.team)) for p in alice.team.rglob("*")) == ["ok.md"]
    shown = json.dumps([result.to_json(), status.to_json()]) + alice.state_text()
    assert pat not in shown and slack not in shown


# --- the key helpers ------------------------------------------------------------------------


def test_redaction_keeps_what_holds_no_secret():
    from workbench.engine.team.secrets import scan_for_secrets

    pat = make_token("github-pat", "helper")
    assert secret_in_key("notes/plain.md", scan_for_secrets) is None
    assert redacted_key(f"a/b/{pat}.md", scan_for_secrets) == "a/b/[REDACTED].md"
    assert redacted_key(f"{pat}/x.md", scan_for_secrets) == "[REDACTED]/x.md"
    assert display_key("line\nbreak\x00.md") == "line\\x0abreak\\x00.md"


def test_keys_scanned_together_find_what_keys_scanned_alone_find():
    from workbench.engine.team.secrets import scan_for_secrets
    from workbench.engine.team.sync.keys import secrets_in_keys

    keys = [f"topic-{i:04}.md" for i in range(600)]
    keys[5] = f"a/{make_token('anthropic-api-key', 'many')}.md"
    keys[590] = f"{make_token('stripe-access-token', 'many')}/notes.md"
    keys[300] = "ends-with-" + make_token("npm-access-token", "many")
    alone = {k: m for k in keys if (m := secret_in_key(k, scan_for_secrets)) is not None}
    assert set(alone) == {keys[5], keys[590], keys[300]}
    assert secrets_in_keys(keys, scan_for_secrets) == alone
