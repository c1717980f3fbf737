"""`workbench mcp` driven by the `mcp` SDK's own client, over stdio and over HTTP: every tool
with its schema, calls that work, calls that fail cleanly, writes that land in the review
queue (and undo once accepted), and secrets that never come back."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from secretgen import make_token

from workbench.cli import main
from workbench.engine import Engine
from workbench.engine.agents.review_queue import ReviewQueue

from .conftest import LiveProject, hook_env

# The SDK is imported where it is used: it takes half a second to import, which every xdist
# worker would otherwise pay while collecting, though one of them runs this module.
if TYPE_CHECKING:
    from mcp import Client

TOOLS = {
    "recall_memories": {"query"},
    "search_memories": {"query"},
    "list_memories": set(),
    "get_memory": {"path"},
    "memory_index_report": set(),
    "lint_memories": set(),
    "context_gauge": set(),
    "compaction_preview": set(),
    "compaction_history": set(),
    "save_memory": {"type", "name", "description", "body"},
    "update_memory": {"path", "content", "fingerprint"},
    "delete_memory": {"path"},
}
START_TIMEOUT = 90.0


def server_args(project: LiveProject, *extra: str) -> list[str]:
    return ["-m", "workbench", "mcp", "--project", str(project.root), *extra]


@asynccontextmanager
async def stdio_client(project: LiveProject, *extra: str) -> AsyncIterator[Client]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=server_args(project, *extra), env=hook_env()
    )
    async with Client(params, cache=None, read_timeout_seconds=START_TIMEOUT) as client:
        yield client


@contextmanager
def http_server(project: LiveProject, *extra: str) -> Iterator[str]:
    """`workbench mcp --http 0` as a real process; yields its URL."""
    process = subprocess.Popen(
        [sys.executable, *server_args(project, "--http", "0", *extra)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=hook_env(),
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()  # printed once the server accepts requests
        if not url.startswith("http://127.0.0.1:"):
            process.kill()
            pytest.fail(
                f"the server did not start: {process.stderr.read() if process.stderr else ''}"
            )
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    text = json.loads(result.content[0].text)
    assert text == result.structured_content
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error
    [block] = result.content
    assert "\n" not in block.text and "Traceback" not in block.text
    return block.text


async def check_tools_listed(client: Client) -> None:
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == set(TOOLS)
    for name, required in TOOLS.items():
        tool = listed[name]
        assert tool.description and len(tool.description) > 30, name
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert set(schema.get("required", [])) == required, name
        for prop, spec in schema["properties"].items():
            assert spec.get("description"), f"{name}.{prop} has no description"
    save = listed["save_memory"].input_schema["properties"]["type"]
    assert save["enum"] == ["user", "feedback", "project", "reference"]
    assert listed["get_memory"].annotations.read_only_hint is True
    assert listed["delete_memory"].annotations.destructive_hint is True


async def check_reads(client: Client, project: LiveProject) -> None:
    listed = payload(await client.call_tool("list_memories", {}))
    assert [m["path"] for m in listed["memories"]] == ["feedback_testing.md"]
    memory = payload(await client.call_tool("get_memory", {"path": "feedback_testing.md"}))
    assert memory["frontmatter"]["type"] == "feedback" and len(memory["fingerprint"]) == 64
    assert memory["resource"] == "workbench://memory/feedback_testing.md"
    found = payload(await client.call_tool("search_memories", {"query": "PYTEST committing"}))
    assert [r["path"] for r in found["results"]] == ["feedback_testing.md"]
    assert found["results"][0]["lines"][0]["text"] == "Run pytest -q before committing."
    recall = payload(
        await client.call_tool("recall_memories", {"query": "how should I run the tests?"})
    )
    assert recall["engine"] == "offline" and recall["candidate_count"] == 1
    report = payload(await client.call_tool("memory_index_report", {}))
    assert report["line_count"] == 1 and report["entries"][0]["loaded"] is True
    lint = payload(await client.call_tool("lint_memories", {}))
    assert lint["errors"] == 0
    gauge = payload(await client.call_tool("context_gauge", {}))
    assert gauge["session_id"] == project.builder.session_id and gauge["used"] > 0
    assert gauge["thresholds"]["autocompact"] == 167_000
    preview = payload(await client.call_tool("compaction_preview", {"session": "5e55a0e1"}))
    assert preview["summarised_messages"] > 0
    assert "pytest tests/net -k test_backoff -q" in preview["facts_at_risk"]["commands"]


async def check_failures(client: Client) -> None:
    assert "no memory file nope.md" in error_text(
        await client.call_tool("get_memory", {"path": "nope.md"})
    )
    assert "outside the memory folder" in error_text(
        await client.call_tool("get_memory", {"path": "../../../etc/passwd.md"})
    )
    bad_type = error_text(
        await client.call_tool(
            "save_memory", {"type": "diary", "name": "x", "description": "y", "body": "z"}
        )
    )
    assert "invalid arguments: type:" in bad_type and "diary" not in bad_type
    assert "no session 'zzz'" in error_text(
        await client.call_tool("context_gauge", {"session": "zzz"})
    )
    assert "Unknown tool" in error_text(await client.call_tool("no_such_tool", {}))


async def test_stdio_lists_every_tool_reads_and_fails_cleanly(live_project: LiveProject) -> None:
    from mcp.shared.exceptions import MCPError

    async with stdio_client(live_project) as client:
        assert client.server_info is not None and client.server_info.name == "memory-workbench"
        await check_tools_listed(client)
        await check_reads(client, live_project)
        await check_failures(client)
        resources = {r.uri: r for r in (await client.list_resources()).resources}
        assert set(resources) == {
            "workbench://memory/MEMORY.md",
            "workbench://memory/feedback_testing.md",
        }
        index = await client.read_resource("workbench://memory/MEMORY.md")
        assert index.contents[0].text == "- [Testing](feedback_testing.md) — run pytest -q\n"
        with pytest.raises(MCPError, match="no memory file gone.md"):
            await client.read_resource("workbench://memory/gone.md")


async def test_writes_land_in_the_review_queue_and_undo_once_accepted(
    live_project: LiveProject,
) -> None:
    memory = live_project.memory_dir
    before = {p.name: p.read_bytes() for p in memory.iterdir()}
    async with stdio_client(live_project) as client:
        saved = payload(
            await client.call_tool(
                "save_memory",
                {
                    "type": "project",
                    "name": "Retry timeout",
                    "description": "the retry timeout this project uses",
                    "body": "The retry timeout is 170,251 ms.",
                },
            )
        )
        assert saved["status"] == "queued for review"
        assert sorted(p["path"] for p in saved["proposals"]) == [
            "MEMORY.md",
            "retry-timeout.md",
        ]
        assert {p.name: p.read_bytes() for p in memory.iterdir()} == before  # nothing written
        current = payload(await client.call_tool("get_memory", {"path": "feedback_testing.md"}))
        stale = error_text(
            await client.call_tool(
                "update_memory",
                {"path": "feedback_testing.md", "content": "x", "fingerprint": "0" * 64},
            )
        )
        assert "changed since it was read" in stale
        updated = payload(
            await client.call_tool(
                "update_memory",
                {
                    "path": "feedback_testing.md",
                    "content": current["text"].replace("pytest -q", "pytest -x -q"),
                    "fingerprint": current["fingerprint"],
                },
            )
        )
        assert [p["kind"] for p in updated["proposals"]] == ["modify"]
        deleted = payload(await client.call_tool("delete_memory", {"path": "feedback_testing.md"}))
        assert sorted(p["kind"] for p in deleted["proposals"]) == ["delete", "modify"]

    engine = Engine.open(live_project.root)
    queue = ReviewQueue(engine)
    assert len(queue.list()) == 5
    ids = {(p["path"], p["kind"]): p["id"] for p in saved["proposals"]}
    accepted = queue.accept(ids[("retry-timeout.md", "create")])
    queue.accept(ids[("MEMORY.md", "modify")])
    new_file = memory / "retry-timeout.md"
    assert "170,251 ms" in new_file.read_text()
    assert "(retry-timeout.md)" in (memory / "MEMORY.md").read_text()
    engine.history.undo(accepted.history_id)  # the file and its index line, as one change
    assert not new_file.exists()
    assert (memory / "MEMORY.md").read_bytes() == before["MEMORY.md"]

    ids = {p["kind"]: p["id"] for p in deleted["proposals"]}
    accepted = queue.accept(ids["delete"])
    assert not (memory / "feedback_testing.md").exists()
    engine.history.undo(accepted.history_id)
    assert (memory / "feedback_testing.md").read_bytes() == before["feedback_testing.md"]


async def test_a_team_write_with_a_secret_is_refused_and_secrets_never_come_back(
    live_project: LiveProject,
) -> None:
    token = make_token("github-pat")
    (live_project.memory_dir / "reference_deploy.md").write_text(
        "---\nname: Deploy\ndescription: how staging deploys\ntype: reference\n---\n\n"
        f"Staging uses {token} for now.\n",
        encoding="utf-8",
    )
    async with stdio_client(live_project, "--allow-writes") as client:
        refused = await client.call_tool(
            "save_memory",
            {
                "type": "reference",
                "name": "CI token",
                "description": "the token CI uses",
                "body": f"Use {token} in CI.",
                "team": True,
            },
        )
        message = error_text(refused)
        assert "GitHub" in message and token not in message
        assert not (live_project.memory_dir / "team").exists()
        for name, args in (
            ("get_memory", {"path": "reference_deploy.md"}),
            ("search_memories", {"query": "staging"}),
            ("recall_memories", {"query": "how does staging deploy"}),
        ):
            result = await client.call_tool(name, args)
            text = result.content[0].text
            assert token not in text and "[REDACTED]" in text, name
        resource = await client.read_resource("workbench://memory/reference_deploy.md")
        assert token not in resource.contents[0].text
    assert ReviewQueue(Engine.open(live_project.root)).list() == []


async def test_allow_writes_writes_through_the_store(live_project: LiveProject) -> None:
    async with stdio_client(live_project, "--allow-writes") as client:
        saved = payload(
            await client.call_tool(
                "save_memory",
                {
                    "type": "user",
                    "name": "Editor",
                    "description": "the user's editor",
                    "body": "Helix.",
                },
            )
        )
        got = payload(await client.call_tool("get_memory", {"path": "editor.md"}))
        same = {"path": "editor.md", "content": got["text"], "fingerprint": got["fingerprint"]}
        resaved = payload(await client.call_tool("update_memory", same))
    assert saved["status"] == "written" and saved["undo"].startswith("workbench undo ")
    # The same text again writes nothing: no new age for the memory, no undo step.
    assert resaved["status"] == "unchanged" and resaved["undo"] is None
    assert (live_project.memory_dir / "editor.md").is_file()
    engine = Engine.open(live_project.root)
    engine.history.undo(saved["undo"].split()[-1])
    assert not (live_project.memory_dir / "editor.md").exists()


async def test_http_serves_the_same_tools(live_project: LiveProject) -> None:
    from mcp import Client

    with http_server(live_project) as url:
        async with Client(url, cache=None) as client:
            await check_tools_listed(client)
            await check_reads(client, live_project)
            await check_failures(client)
            queued = payload(
                await client.call_tool(
                    "save_memory",
                    {"type": "user", "name": "Shell", "description": "fish", "body": "fish."},
                )
            )
            assert queued["status"] == "queued for review"


async def test_http_with_a_token_refuses_requests_without_it(live_project: LiveProject) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    secret = "tok-" + "x" * 20
    with http_server(live_project, "--token", secret) as url:
        async with httpx.AsyncClient() as plain:
            response = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert response.status_code == 401
        headers = {"Authorization": f"Bearer {secret}"}
        transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
        async with Client(transport, cache=None) as client:
            listed = payload(await client.call_tool("list_memories", {}))
            assert listed["count"] == 1


def test_non_loopback_hosts_need_a_token(capsys) -> None:
    code = main(["mcp", "--http", "0", "--host", "0.0.0.0"])
    err = capsys.readouterr().err
    assert code == 2 and "refusing to serve MCP on 0.0.0.0" in err


def test_mcp_stays_out_of_the_cli_start_up() -> None:
    code = (
        "import sys, workbench.cli\n"
        "workbench.cli.build_parser()\n"
        "print('mcp' in sys.modules or any(m.startswith('mcp.') for m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "False"


def test_stdio_keeps_stdout_for_the_protocol(live_project: LiveProject) -> None:
    # A client that sends nothing and hangs up: the server exits and printed nothing.
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, *server_args(live_project)],
        input="",
        capture_output=True,
        text=True,
        env=hook_env(),
        timeout=START_TIMEOUT,
        check=False,
    )
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert time.monotonic() - started < START_TIMEOUT
    assert Path(live_project.memory_dir / "MEMORY.md").exists()


async def test_a_secret_in_a_file_name_never_comes_back(live_project: LiveProject) -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from workbench.live.mcp_server import build_server

    token = make_token("github-pat", seed="mcp-file-name")
    name = f"tok-{token}.md"
    (live_project.memory_dir / name).write_text(
        "---\nname: Token note\ndescription: a note named after a token\ntype: reference\n---\n\n"
        "Rotate it.\n",
        encoding="utf-8",
    )
    server = build_server(Engine.open(live_project.root))
    async with Client(server) as client:
        listed = (await client.list_resources()).resources
        shown = json.dumps([r.model_dump(mode="json") for r in listed])
        assert token not in shown
        [secret] = [r for r in listed if "[REDACTED]" in r.name]
        assert secret.name == "tok-[REDACTED].md"
        assert "[REDACTED]" not in str(secret.uri)  # opaque, and it still resolves
        read = await client.read_resource(str(secret.uri))
        assert read.contents[0].text.endswith("Rotate it.\n")
        plain = {str(r.uri) for r in listed if r is not secret}
        assert plain == {"workbench://memory/MEMORY.md", "workbench://memory/feedback_testing.md"}

        got = payload(await client.call_tool("get_memory", {"path": name}))
        assert token not in json.dumps(got) and got["resource"] == str(secret.uri)
        for tool, args in (
            ("list_memories", {}),
            ("search_memories", {"query": "rotate"}),
            ("lint_memories", {}),
            ("memory_index_report", {}),
        ):
            result = await client.call_tool(tool, args)
            assert token not in result.content[0].text, tool
        # Errors name what they refuse; a secret in that name comes back redacted too.
        for tool, args in (
            ("get_memory", {"path": f"gone-{token}.md"}),
            (
                "save_memory",
                {"type": "user", "name": "n", "description": "d", "body": "b", "file": name},
            ),
        ):
            message = error_text(await client.call_tool(tool, args))
            assert token not in message and "[REDACTED]" in message, tool
        with pytest.raises(MCPError) as raised:
            await client.read_resource(f"workbench://memory/gone-{token}.md")
        assert token not in str(raised.value)
