"""A scriptable fake Messages API for the real Claude Code CLI, on loopback.

Claude Code streams every call, probes the base URL with GET/HEAD, counts tokens, and makes
side calls (titles, topic checks) next to the main conversation. The fake answers all of it,
records every request, and decides each `POST /v1/messages` answer in this order:

1. the `responder` callable, when it returns a reply (it sees the parsed request, so a check
   can answer by what was asked: a summary request, a main-thread call, a side query);
2. the next reply in the queue (`fake.queue(...)`, `fake.queue_tool_use(...)`);
3. the default reply, a short text ending the turn, so an unscripted side call never makes
   the CLI retry for seconds.

Keys and authorisation headers are never kept in the recording.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)
_SECRET_HEADERS = ("x-api-key", "authorization", "cookie")


@dataclass
class Request:
    """One request the fake received (headers lower-cased, keys dropped)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float
    index: int

    @property
    def route(self) -> str:
        return self.path.split("?", 1)[0]

    @property
    def is_message(self) -> bool:
        return self.method == "POST" and self.route == "/v1/messages"

    @property
    def messages(self) -> list[dict[str, Any]]:
        body = self.body if isinstance(self.body, dict) else {}
        value = body.get("messages")
        return value if isinstance(value, list) else []

    @property
    def model(self) -> str:
        return str((self.body or {}).get("model", "")) if isinstance(self.body, dict) else ""

    @property
    def tool_names(self) -> list[str]:
        body = self.body if isinstance(self.body, dict) else {}
        return [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]

    def system_text(self) -> str:
        body = self.body if isinstance(self.body, dict) else {}
        return blocks_text(body.get("system"))

    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return blocks_text(message.get("content"))
        return ""

    def first_user_text(self) -> str:
        for message in self.messages:
            if message.get("role") == "user":
                return blocks_text(message.get("content"))
        return ""


def blocks_text(content: Any) -> str:
    """The text of a string or a list of content blocks (tool results included), joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(blocks_text(block.get("content")))
    return "\n".join(parts)


@dataclass
class Reply:
    """One answer: content blocks with usage, or an HTTP error."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = "end_turn"
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 50, "output_tokens": 5})
    status: int = 200
    error_type: str | None = None
    error_message: str = ""
    delay: float = 0.0

    @classmethod
    def text(cls, text: str, **kw: Any) -> Reply:
        return cls(content=[{"type": "text", "text": text}], **kw)

    @classmethod
    def tool_use(
        cls, calls: Iterable[tuple[str, Mapping[str, Any]]], *, text: str | None = None, **kw: Any
    ) -> Reply:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for name, tool_input in calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_oracle_{next(_ids):05d}",
                    "name": name,
                    "input": dict(tool_input),
                }
            )
        return cls(content=content, stop_reason="tool_use", **kw)

    @classmethod
    def error(cls, status: int, error_type: str, message: str) -> Reply:
        return cls(status=status, error_type=error_type, error_message=message)

    @classmethod
    def prompt_too_long(cls, actual: int, limit: int) -> Reply:
        return cls.error(
            400, "invalid_request_error", f"prompt is too long: {actual} tokens > {limit} maximum"
        )


def usage_total(total: int, *, output_tokens: int = 5) -> dict[str, int]:
    """Usage whose context total (input + cache read + cache creation + output) is `total`.

    Most of it is reported as cache reads, as a long real session would.
    """
    cached = max(0, total - output_tokens - 10)
    return {
        "input_tokens": total - output_tokens - cached,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cached,
        "output_tokens": output_tokens,
    }


Responder = Callable[[Request], "Reply | None"]


class FakeAPI:
    """The server, its script and its recording."""

    def __init__(self, responder: Responder | None = None, *, default: Reply | None = None) -> None:
        self.responder = responder
        self.default = default or Reply.text("ok")
        self.requests: list[Request] = []
        self.errors: list[str] = []
        """Responder exceptions (the CLI got a 500 for them)."""
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAPI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- scripting ---------------------------------------------------------------------

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def queue_text(self, text: str, **kw: Any) -> None:
        self.queue(Reply.text(text, **kw))

    def queue_tool_use(self, calls: Iterable[tuple[str, Mapping[str, Any]]], **kw: Any) -> None:
        self.queue(Reply.tool_use(calls, **kw))

    @property
    def message_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.is_message]

    def _decide(self, request: Request) -> Reply:
        if self.responder is not None:
            try:
                chosen = self.responder(request)
            except Exception as exc:  # a bug in a check must not hang the CLI
                self.errors.append(f"{type(exc).__name__}: {exc}")
                return Reply.error(500, "api_error", "the oracle's responder failed")
            if chosen is not None:
                return chosen
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self.default

    def _record(self, method: str, path: str, headers: Mapping[str, str], raw: bytes) -> Request:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        kept = {k.lower(): v for k, v in headers.items() if k.lower() not in _SECRET_HEADERS}
        with self._lock:
            request = Request(method, path, kept, body, time.monotonic(), len(self.requests))
            self.requests.append(request)
        return request


def _handler(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            pass

        def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
            api._record("HEAD", self.path, self.headers, b"")
            self._send(200, b"", body=False)

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            api._record("GET", self.path, self.headers, b"")
            self._send(200, b"{}")

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            request = api._record("POST", self.path, self.headers, raw)
            try:
                if request.route == "/v1/messages/count_tokens":
                    self._count_tokens(request.body)
                elif request.route == "/v1/messages":
                    self._message(request)
                else:
                    self._send(200, b"{}")
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _count_tokens(self, body: Any) -> None:
            # About four characters per token, as a stand-in for the real tokenizer.
            text = json.dumps(body, ensure_ascii=False) if body else ""
            self._send(200, json.dumps({"input_tokens": max(1, len(text) // 4)}).encode())

        def _message(self, request: Request) -> None:
            reply = api._decide(request)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.status != 200 or reply.error_type:
                payload = {
                    "type": "error",
                    "error": {
                        "type": reply.error_type or "api_error",
                        "message": reply.error_message,
                    },
                }
                self._send(reply.status, json.dumps(payload).encode(), {"x-should-retry": "false"})
                return
            body = request.body if isinstance(request.body, dict) else {}
            message = {
                "id": f"msg_oracle_{next(_ids):06d}",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "claude-fake"),
                "content": reply.content,
                "stop_reason": reply.stop_reason,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 0,
                    **reply.usage,
                },
            }
            if body.get("stream"):
                self._stream(message)
            else:
                self._send(200, json.dumps(message).encode())

        def _stream(self, message: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("request-id", f"req_oracle_{next(_ids):06d}")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            for event, data in stream_events(message):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        def _send(
            self,
            status: int,
            data: bytes,
            headers: Mapping[str, str] | None = None,
            *,
            body: bool = True,
        ) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", f"req_oracle_{next(_ids):06d}")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            if body:
                self.wfile.write(data)
            self.wfile.flush()

    return Handler


def stream_events(message: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    """The server-sent events the real API streams for `message`, usage in start and delta."""
    usage = message["usage"]
    start_usage = dict(usage, output_tokens=1)
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": dict(message, content=[], stop_reason=None, usage=start_usage),
        },
    )
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            for piece in _chunks(block["text"], 64):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
        elif block["type"] == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
            for piece in _chunks(json.dumps(block["input"]), 64):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": usage,
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
