"""`workbench mcp`: the engine as a Model Context Protocol server, on the `mcp` SDK (2.x).

Tools (schemas from the signatures, descriptions written for a model) and resources
(MEMORY.md and every memory file) over one engine. Stdio by default; `--http PORT` serves
streamable HTTP on loopback, and another host only with a bearer token. Failures come back
as tool errors with one line of text; unknown resources as MCP errors.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import Resource, ToolAnnotations
from pydantic import Field, ValidationError

from workbench import __version__
from workbench.engine.errors import UserInputError, WorkbenchError
from workbench.live.mcp_tools import RESOURCE_PREFIX, MemoryTools, is_resource_uri

if TYPE_CHECKING:
    from starlette import types as asgi

    from workbench.engine import Engine

SERVER_NAME = "memory-workbench"
log = logging.getLogger("workbench.mcp")

INSTRUCTIONS = (
    "Memory Workbench reads and explains Claude Code's memory for this project: which "
    "memories recall would pick for a prompt and why, what of MEMORY.md loads, lint "
    "findings, how full the context is, and what a compaction would keep or lose. Reading "
    "tools never change anything. save_memory, update_memory and delete_memory change "
    "memory files; unless the server was started with --allow-writes they only queue the "
    "change for the user to review, and say so in their result."
)

MemoryType = Literal["user", "feedback", "project", "reference"]
Scope = Literal["all", "private", "team", "log"]
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DELETES = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def _one_line(text: str) -> str:
    """An error as one line, with any secret it names redacted (errors quote paths and the
    arguments they refuse, and a file name can hold a credential)."""
    from workbench.engine.team.secrets.redaction import redact_secrets

    return redact_secrets(" ".join(text.split()))


def _validation_message(exc: ValidationError) -> str:
    """Which arguments were wrong and why, never their values (they may hold secrets)."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "invalid arguments: " + "; ".join(parts)


class WorkbenchMCPServer(MCPServer):
    """The SDK's server with one-line errors and a resource list read from disk per call."""

    def __init__(self, tools: MemoryTools, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.memory_tools = tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_validation_message(exc.__cause__)) from None
            raise ToolError(_one_line(str(exc))) from None

    async def list_resources(self) -> list[Resource]:
        return [
            Resource(uri=r.uri, name=r.name, description=r.description, mime_type="text/markdown")
            for r in self.memory_tools.resources()
        ]

    async def read_resource(self, uri: Any, context: Any = None) -> Iterable[ReadResourceContents]:
        text = str(uri)
        if not is_resource_uri(text):
            raise ResourceNotFoundError(_one_line(f"Unknown resource: {text}"))
        try:
            content = self.memory_tools.read_resource(text)
        except WorkbenchError as exc:
            raise ResourceNotFoundError(_one_line(str(exc))) from None
        return [ReadResourceContents(content=content, mime_type="text/markdown")]


def _guarded(call: Callable[[], Any]) -> Any:
    """Run a tool body: workbench errors become one-line tool errors, and so does anything
    unexpected (logged on one line, never a traceback to the model)."""
    try:
        return call()
    except WorkbenchError as exc:
        raise ToolError(_one_line(str(exc))) from None
    except (OSError, ValueError) as exc:
        raise ToolError(_one_line(f"{exc.__class__.__name__}: {exc}")) from None
    except Exception as exc:  # noqa: BLE001 - the model gets one line, the log one line
        log.warning("tool failed unexpectedly: %s: %s", exc.__class__.__name__, exc)
        raise ToolError(f"internal error ({exc.__class__.__name__})") from None


async def _guarded_async(call: Callable[[], Awaitable[Any]]) -> Any:
    try:
        return await call()
    except WorkbenchError as exc:
        raise ToolError(_one_line(str(exc))) from None
    except (OSError, ValueError) as exc:
        raise ToolError(_one_line(f"{exc.__class__.__name__}: {exc}")) from None
    except Exception as exc:  # noqa: BLE001
        log.warning("tool failed unexpectedly: %s: %s", exc.__class__.__name__, exc)
        raise ToolError(f"internal error ({exc.__class__.__name__})") from None


def build_server(engine: Engine, *, allow_writes: bool = False) -> WorkbenchMCPServer:
    """The server with every tool registered over `engine`."""
    tools = MemoryTools(engine, allow_writes=allow_writes)
    server = WorkbenchMCPServer(
        tools,
        name=SERVER_NAME,
        title="Memory Workbench",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
    )
    write_note = (
        "Writes to disk (atomic, recorded in the workbench's history, undoable)."
        if allow_writes
        else "Does not write: queues the change in the review queue for the user to accept."
    )

    @server.tool(annotations=READ_ONLY)
    async def recall_memories(
        query: Annotated[str, Field(description="The user's prompt, as Claude Code would see it")],
        engine: Annotated[
            Literal["auto", "offline", "llm"],
            Field(description="auto: the model when ANTHROPIC_API_KEY is set, else offline"),
        ] = "auto",
        recent_tools: Annotated[
            list[str], Field(description="Tools used successfully since the previous prompt")
        ] = [],  # noqa: B006 - pydantic copies defaults
        already_surfaced: Annotated[
            list[str], Field(description="Memory paths already shown this session")
        ] = [],  # noqa: B006
    ) -> dict[str, Any]:
        """Which memories Claude Code's recall would pick for a prompt, with the reasons,
        near misses, freshness notes and the exact text that would be injected."""
        return await _guarded_async(
            lambda: tools.recall(
                query, engine=engine, recent_tools=recent_tools, surfaced=already_surfaced
            )
        )

    @server.tool(annotations=READ_ONLY)
    def search_memories(
        query: Annotated[str, Field(description="Words that must all appear (any case)")],
        scope: Annotated[Scope, Field(description="Which memories to search")] = "all",
        limit: Annotated[int, Field(ge=1, le=50, description="Most results to return")] = 20,
    ) -> dict[str, Any]:
        """Search every memory file (name, description and text) for words; returns the
        matching files with the lines that match."""
        return _guarded(lambda: tools.search(query, scope=scope, limit=limit))

    @server.tool(annotations=READ_ONLY)
    def list_memories(
        scope: Annotated[Scope, Field(description="Which memories to list")] = "all",
    ) -> dict[str, Any]:
        """Every memory file, newest first, with name, description, type, age and whether
        MEMORY.md links to it."""
        return _guarded(lambda: tools.list_memories(scope=scope))

    @server.tool(annotations=READ_ONLY)
    def get_memory(
        path: Annotated[str, Field(description="Path relative to the memory folder")],
    ) -> dict[str, Any]:
        """One memory: frontmatter, body, lint findings, and the fingerprint that
        update_memory and delete_memory need."""
        return _guarded(lambda: tools.get(path))

    @server.tool(annotations=READ_ONLY)
    def memory_index_report(
        team: Annotated[
            bool, Field(description="The team index instead of the private one")
        ] = False,
    ) -> dict[str, Any]:
        """What of MEMORY.md Claude Code loads: the 200-line / 25,000-character cut, the
        entries past it, dangling links, orphan files and the headroom left."""
        return _guarded(lambda: tools.index_report(team=team))

    @server.tool(annotations=READ_ONLY)
    def lint_memories() -> dict[str, Any]:
        """Problems in the memory files and the index: broken frontmatter, missing
        descriptions or types, relative dates, over-long or dangling index lines, secrets in
        team memory."""
        return _guarded(tools.lint)

    @server.tool(annotations=READ_ONLY)
    def context_gauge(
        session: Annotated[
            str | None, Field(description="A session id or prefix; the newest when omitted")
        ] = None,
    ) -> dict[str, Any]:
        """How full a session's context is, against Claude Code's warning, auto-compact and
        blocking thresholds."""
        return _guarded(lambda: tools.gauge(session))

    @server.tool(annotations=READ_ONLY)
    def compaction_preview(
        session: Annotated[
            str | None, Field(description="A session id or prefix; the newest when omitted")
        ] = None,
    ) -> dict[str, Any]:
        """What a compaction of the session would do now: the path it takes, what is kept,
        summarised and restored, and the paths, commands and numbers a summary may lose."""
        return _guarded(lambda: tools.compaction_preview(session))

    @server.tool(annotations=READ_ONLY)
    def compaction_history(
        session: Annotated[
            str | None, Field(description="A session id or prefix; the newest when omitted")
        ] = None,
    ) -> dict[str, Any]:
        """The real compactions of a session recorded by the workbench's hooks, each with
        the facts its summary lost."""
        return _guarded(lambda: tools.compaction_history(session))

    @server.tool(
        annotations=WRITES, description=f"Save a new memory and its MEMORY.md line. {write_note}"
    )
    def save_memory(
        type: Annotated[MemoryType, Field(description="What kind of memory this is")],  # noqa: A002
        name: Annotated[str, Field(min_length=1, description="A short title")],
        description: Annotated[
            str, Field(min_length=1, description="One line: recall decides by it")
        ],
        body: Annotated[str, Field(description="The memory itself (markdown)")],
        team: Annotated[bool, Field(description="Team memory, shared with teammates")] = False,
        file: Annotated[
            str | None, Field(description="File name ending in .md (default: from type and name)")
        ] = None,
        hook: Annotated[
            str | None, Field(description="Text after the index link (default: the description)")
        ] = None,
    ) -> dict[str, Any]:
        return _guarded(
            lambda: tools.save(
                type=type,
                name=name,
                description=description,
                body=body,
                team=team,
                file=file,
                hook=hook,
            )
        )

    @server.tool(
        annotations=WRITES,
        description=f"Replace a memory file's whole text (frontmatter included). {write_note}",
    )
    def update_memory(
        path: Annotated[str, Field(description="Path relative to the memory folder")],
        content: Annotated[str, Field(description="The complete new text of the file")],
        fingerprint: Annotated[
            str, Field(description="The fingerprint get_memory returned; refused if it changed")
        ],
    ) -> dict[str, Any]:
        return _guarded(lambda: tools.update(path, content, fingerprint))

    @server.tool(
        annotations=DELETES,
        description=f"Delete a memory file and the MEMORY.md lines linking to it. {write_note}",
    )
    def delete_memory(
        path: Annotated[str, Field(description="Path relative to the memory folder")],
        fingerprint: Annotated[
            str | None, Field(description="From get_memory: refused if the file changed since")
        ] = None,
    ) -> dict[str, Any]:
        return _guarded(lambda: tools.delete(path, fingerprint))

    @server.resource(
        RESOURCE_PREFIX + "{+path}",
        name="memory",
        description="A memory file, or MEMORY.md, by its path in the memory folder",
        mime_type="text/markdown",
    )
    def memory_file(path: str) -> str:
        return server.memory_tools.read_resource(path)

    return server


# --- serving ------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Loopback always; any other address only with a token (clients must send it)."""
    if not is_loopback(host) and not token:
        raise UserInputError(
            f"refusing to serve MCP on {host}: that is reachable from other machines. Use "
            "127.0.0.1, or pass --token (or set WORKBENCH_MCP_TOKEN) so clients must send it"
        )


class BearerTokenGate:
    """ASGI middleware: every HTTP request needs `Authorization: Bearer <token>`."""

    def __init__(self, app: asgi.ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        if scope["type"] == "http":
            presented = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(presented, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")],
                    }
                )
                await send({"type": "http.response.body", "body": b"missing or wrong token\n"})
                return
        await self.app(scope, receive, send)


def serve_stdio(server: WorkbenchMCPServer) -> None:
    server.run("stdio")


def serve_http(
    server: WorkbenchMCPServer,
    *,
    host: str,
    port: int,
    token: str | None,
    on_listening: Callable[[str], None] | None = None,
) -> None:
    """Streamable HTTP at `http://host:port/mcp` until interrupted."""
    import copy

    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    from workbench.server.runner import bind_socket, url_for

    check_bind(host, token)
    app: asgi.ASGIApp = server.streamable_http_app(host=host)
    if token:
        app = BearerTokenGate(app, token)
    sock = bind_socket(host, port)
    # stdout carries the listening line only; every log line goes to stderr.
    log_config = copy.deepcopy(LOGGING_CONFIG)
    log_config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    config = uvicorn.Config(
        app,
        http="h11",
        loop="asyncio",
        lifespan="on",
        log_level="warning",
        log_config=log_config,
        timeout_graceful_shutdown=3,
    )
    uv = uvicorn.Server(config)
    if on_listening is not None:
        url = url_for(sock) + "/mcp"
        original = uv.startup

        async def startup(sockets: Any = None) -> None:
            await original(sockets=sockets)
            if uv.started:
                on_listening(url)

        uv.startup = startup  # type: ignore[method-assign]
    try:
        uv.run(sockets=[sock])
    finally:
        sock.close()


def stderr_line(message: str) -> None:
    sys.stderr.write(f"workbench: {message}\n")
    sys.stderr.flush()
