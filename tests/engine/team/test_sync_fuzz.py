"""Fuzzing the sync client with hostile server responses.

Each example plays one server for a pull, a push or a sync: malformed JSON, right JSON with
wrong types, odd status codes, bodies over the size cap or cut short, bad ETags, hostile keys
(lone surrogates, traversals, NUL, over-long names, credentials, a symlink out of the team
folder). Whatever the server does, the client must:
- finish well within a deadline (no hang), raising nothing (no internal error);
- stay under a memory cap (tracemalloc peak, against a small response cap);
- give a one-line message for any error, and results that print as JSON;
- write nothing outside the team folder.

Most examples go through httpx.MockTransport (fast, deterministic); the faults only a socket
can produce (a lying Content-Length, a connection cut mid-body, 1xx answers, raw header bytes)
run against a loopback fault server, also through `workbench sync` itself. The examples are
derandomised and counted, so the suite is bounded in time and the same on every run.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakes.team_faults import Fault, FaultServer, repeated
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secretgen import make_token

from workbench.cli import main
from workbench.engine import Engine
from workbench.engine.folder_lock import LOCK_NAME
from workbench.engine.team.sync import client as sync_client
from workbench.engine.team.sync.client import TeamSyncClient
from workbench.engine.team.sync.state import SyncStateStore
from workbench.engine.team.sync.transport import MAX_PULL_RESPONSE_BYTES, MiB

REPO = "acme/widgets"
CAP = 256 * 1024
"""The response cap the fuzzed clients run with."""
MEMORY_CAP = 3 * CAP + 8 * MiB
"""Peak traced memory allowed for one example (the body, a parse of it, and slack)."""
DEADLINE = 2.0
HANG = 30.0
"""No example may take this long: a hang, not slowness."""

# --- strategies -------------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
key_pieces = st.one_of(
    st.sampled_from(
        [
            "..",
            "/",
            "\\",
            "%2e%2e%2f",
            "\x00",
            "\uff0e\uff0e\uff0f",
            ".",
            "",
            "linked/",
            "/etc/",
            "n" * 300,
            "\n",
            "\u202e",
        ]
    ),
    st.text(max_size=6),
    surrogates,
    st.sampled_from(["github-pat", "aws-access-token", "anthropic-api-key"]).map(
        lambda rule: make_token(rule, "fuzz")
    ),
)
hostile_keys = st.one_of(
    st.lists(key_pieces, min_size=1, max_size=4).map("".join),
    st.sampled_from(["ok.md", "sub/ok.md", "MEMORY.md"]),
)
entry_values = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=surrogates, min_size=1, max_size=3),
    st.sampled_from(["x" * 250_001, "token " + make_token("slack-bot-token", "fuzz") + "\n"]),
)


def good_body(entries: dict[str, Any]) -> dict[str, Any]:
    return {
        "organizationId": "org",
        "repo": REPO,
        "version": 2,
        "lastModified": "2025-01-01T00:00:00.000Z",
        "checksum": "sha256:" + "ab" * 32,
        "content": {"entries": entries, "entryChecksums": {k: "sha256:0" for k in entries}},
    }


@st.composite
def wrong_types(draw) -> bytes:
    """A valid body with one field (at any depth we know) replaced or removed."""
    body = good_body({"ok.md": "fine\n"})
    path = draw(
        st.sampled_from(
            [
                ("organizationId",),
                ("version",),
                ("checksum",),
                ("content",),
                ("content", "entries"),
                ("content", "entryChecksums"),
                ("content", "entries", "ok.md"),
                ("entryChecksums",),
            ]
        )
    )
    target = body
    for part in path[:-1]:
        target = target[part]
    if draw(st.booleans()):
        target.pop(path[-1], None)
    else:
        target[path[-1]] = draw(json_values)
    return json.dumps(body).encode()


@st.composite
def hostile_entries(draw) -> bytes:
    entries = draw(st.dictionaries(hostile_keys, entry_values, min_size=1, max_size=6))
    return json.dumps(good_body(entries)).encode()  # ensure_ascii: surrogates as \ud800


malformed_json = st.one_of(
    st.binary(max_size=64),
    st.sampled_from(
        [
            b"",
            b"{",
            b'{"content": {"entries": {"a.md": "x"',
            b"[" * 100_000 + b"]" * 100_000,
            b'{"a": 1,}',
            b"NaN",
            b"\xef\xbb\xbf{}",
            b"1" * 5000,
        ]
    ),
)
bodies = st.one_of(malformed_json, wrong_types(), hostile_entries())

statuses = st.one_of(
    st.sampled_from([200, 200, 200, 304, 404, 412, 413, 401, 429, 500, 503]),
    st.integers(min_value=100, max_value=599),
)
etags = st.one_of(
    st.none(),
    st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=30).filter(lambda b: b"\r" not in b and b"\n" not in b),
    st.just(b'"' + b"e" * 5000 + b'"'),
)


@st.composite
def responses(draw) -> httpx.Response:
    status = draw(statuses)
    headers: list[tuple[bytes, bytes]] = []
    etag = draw(etags)
    if etag is not None:
        headers.append((b"ETag", etag.replace(b"\r", b"").replace(b"\n", b"")))
    kind = draw(st.sampled_from(["body", "body", "body", "huge", "cut", "gzip"]))
    if kind == "huge":  # 64 MiB, far past the cap (finite, so a regression cannot eat the RAM)
        body = repeated(b"x" * 65536, 64 * MiB)
        return httpx.Response(status, headers=headers, stream=_Stream(body))
    body = draw(bodies)
    if kind == "cut":
        return httpx.Response(status, headers=headers, stream=_Stream(iter([body]), cut=True))
    if kind == "gzip":  # streamed, so the client (not the mock) decodes it
        headers.append((b"Content-Encoding", b"gzip"))
        body = gzip.compress(body) if draw(st.booleans()) else body[:10]
        return httpx.Response(status, headers=headers, stream=_Stream(iter([body])))
    return httpx.Response(status, headers=headers, content=body)


class _Stream(httpx.AsyncByteStream):
    """A response body streamed in chunks; `cut` ends it with a dropped connection."""

    def __init__(self, chunks, cut: bool = False) -> None:
        self._chunks, self._cut = chunks, cut

    async def __aiter__(self):
        for chunk in self._chunks:
            await asyncio.sleep(0)  # let a deadline cancel us, as a socket read would
            yield chunk
        if self._cut:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete body")


# --- the sandbox ------------------------------------------------------------------------------


class Sandbox:
    """A machine with a team folder, a symlink from it to a folder outside, and bait files."""

    def __init__(self, root: Path) -> None:
        shutil.rmtree(root, ignore_errors=True)
        self.root = root
        project = root / "project"
        project.mkdir(parents=True)
        self.engine = Engine.open(project, memory_dir=str(root / "memory"))
        self.team = Path(self.engine.locations.team_dir)
        self.team.mkdir(parents=True)
        (root / "outside").mkdir()
        (root / "outside" / "bait.md").write_text("outside\n")
        (self.team / "linked").symlink_to(root / "outside")
        (self.team / "local.md").write_text("my notes\n")
        (self.team / "MEMORY.md").write_text("- [notes](local.md)\n")
        self.state_dir = root / "state"

    def client(self, transport=None, url: str = "http://fuzz.invalid") -> TeamSyncClient:
        async def no_sleep(_seconds: float) -> None:
            return None

        return TeamSyncClient(
            server=url,
            repo=REPO,
            token="t",
            team_dir=self.engine.locations.team_dir,
            history=self.engine.history,
            state_store=SyncStateStore(self.state_dir),
            transport=transport,
            sleep=no_sleep,
            timeout=DEADLINE,
            max_response_bytes=CAP,
        )

    def outside(self) -> dict[str, bytes | str]:
        """Every file and link outside the team folder and the sync state."""
        found: dict[str, bytes | str] = {}
        for folder, dirs, files in os.walk(self.root):
            here = Path(folder)
            if here in (self.team, self.state_dir):
                dirs[:] = []
                continue
            for name in dirs + files:
                if name == LOCK_NAME:
                    continue  # the workbench's own write lock beside MEMORY.md, always empty
                path = here / name
                if path.is_symlink():
                    found[str(path)] = "-> " + os.readlink(path)
                elif path.is_file():
                    found[str(path)] = path.read_bytes()
        return found


def check_result(result: Any) -> None:
    """What every outcome must satisfy, whatever the server did."""
    error = getattr(result, "error", None)
    if error is not None:
        assert isinstance(error.message, str) and error.message
        assert "\n" not in error.message and "Traceback" not in error.message
        assert len(error.message) < 400
    # Prints as the CLI prints it: UTF-8 JSON without escapes (surrogates would fail here).
    json.dumps(result.to_json(), ensure_ascii=False).encode("utf-8")
    for skipped in getattr(result, "skipped", ()):
        assert "\n" not in skipped.key and len(skipped.key) <= 200


async def run_operation(sandbox: Sandbox, operation: str, script: list[httpx.Response]):
    served = iter(script)
    fallback = httpx.Response(500)

    def handler(request: httpx.Request) -> httpx.Response:
        return next(served, fallback)

    async with sandbox.client(httpx.MockTransport(handler)) as client:
        if operation == "pull":
            results = [await client.pull()]
        elif operation == "push":
            results = [await client.push()]
        else:
            pulled, pushed = await client.sync()
            results = [pulled] + ([pushed] if pushed is not None else [])
        results.append(client.status())
    return results


@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    operation=st.sampled_from(["pull", "push", "sync"]),
    script=st.lists(responses(), min_size=1, max_size=5),
)
def test_no_server_response_breaks_the_client(tmp_path, operation, script):
    sandbox = Sandbox(tmp_path / "box")
    before = sandbox.outside()
    tracemalloc.start()
    try:
        results = asyncio.run(asyncio.wait_for(run_operation(sandbox, operation, script), HANG))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    for result in results:
        check_result(result)
    assert peak < MEMORY_CAP
    assert sandbox.outside() == before, "nothing outside the team folder may change"
    state = list(sandbox.state_dir.glob("*.json"))
    assert len(state) == 1 and isinstance(json.loads(state[0].read_text("utf-8")), dict)


# --- over a real socket, through the command line --------------------------------------------


def _head_then_close(_seen) -> Fault:
    return Fault(200, body=b'{"organizationId": "o"', content_length=5000, close=True)


SOCKET_FAULTS = {
    "length-says-more-than-sent": _head_then_close,
    "length-says-less-than-sent": lambda _s: Fault(200, body=b"{}" * 100, content_length=3),
    "informational-then-nothing": lambda _s: Fault(
        100, body=b"", content_length=None, trickle=None, close=True
    ),
    "no-status-line": lambda _s: Fault(200, body=b"", headers=[(b"\x00\xff", b"\xfe")]),
    "raw-etag-bytes": lambda _s: Fault(
        200,
        body=json.dumps(good_body({"ok.md": "fine\n"})).encode(),
        headers=[(b"ETag", b'"\xc3\x28\xa0\xa1"')],
    ),
    "hostile-keys": lambda _s: Fault(
        200,
        body=json.dumps(
            good_body(
                {
                    "lone\ud800.md": "x",
                    "../escape.md": "x",
                    "linked/escape.md": "x",
                    "\n\u202e.md": "x",
                    make_token("github-pat", "cli") + ".md": "x",
                    "ok.md": "fine\n",
                }
            )
        ).encode(),
    ),
    "status-999": lambda _s: Fault(999, body=b"?"),
    "endless-body": lambda _s: Fault(
        200, body=repeated(b"[" * 65536, 256 * MiB), content_length=None
    ),
}


@pytest.mark.parametrize("action", ["pull", "push"])
def test_sync_commands_survive_socket_level_faults(tmp_path, capsys, monkeypatch, action):
    monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", "t")
    monkeypatch.setenv("WORKBENCH_SYNC_TIMEOUT", str(DEADLINE))
    # Every retry still meets the fault; only the back-off between them (0.5, 1, 2 s) is cut.
    monkeypatch.setattr(sync_client, "retry_delay", lambda _attempt, _rand: 0.01)
    broken = []
    for n, (name, responder) in enumerate(SOCKET_FAULTS.items()):
        sandbox = Sandbox(tmp_path / f"box{n}")
        before = sandbox.outside()
        with FaultServer(responder) as server:
            monkeypatch.setenv("TEAM_MEMORY_SYNC_URL", server.url)
            project = str(sandbox.engine.locations.project_root)
            args = ["sync", action, "--project", project, "--repo", REPO]
            args += ["--memory-dir", str(sandbox.root / "memory"), "--json"]
            tracemalloc.start()
            try:
                code = main(args)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
        out, err = capsys.readouterr()
        try:
            assert code in (0, 1, 2)
            assert peak < 3 * MAX_PULL_RESPONSE_BYTES, f"{peak} bytes traced"
            assert "internal error" not in err and "Traceback" not in err
            assert err.count("\n") <= 1
            json.loads(out)
            assert sandbox.outside() == before
        except (AssertionError, ValueError) as exc:
            broken.append(f"{name}: {' '.join(str(exc).split())[:200]}")
    assert not broken, broken
