"""A fake Anthropic Messages API: a real HTTP server on loopback for the real SDK.

Tests point the `anthropic` SDK at `server.base_url` and script what it answers:

    fake.reply_json({"selected_memories": ["a.md"]})
    fake.reply_tool_use([("Read", {"file_path": "/x"})])
    fake.reply_error(529, "overloaded_error", "busy")
    fake.reply_prompt_too_long(210_000, 200_000)
    fake.reply_text("late", delay=5)            # slow: the client's timeout fires first
    fake.reply_text("x" * 500, trickle=0.2)     # one byte every 0.2 s: no single read is slow

Replies are served in order to `POST /v1/messages`, as plain JSON or as a server-sent event
stream with the real event sequence when the request says `stream: true`. Every request
(headers and parsed body) is logged in `fake.requests`. An empty queue answers 500 with an
`api_error`, so an unscripted call is loud rather than silently "fine".

The oracle (`make oracle`) runs the real Claude Code CLI against the same fake, made with
`FakeMessagesAPI.for_cli(responder)`: a `responder` sees each parsed request first and may
choose its reply (a summary request, a main-thread call, a side query), queued replies come
next, then a short default text, so an unscripted side call never makes the CLI retry; the
CLI's probes (GET, HEAD) and other routes get an empty 200, and keys are never recorded.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)
_SECRET_HEADERS = ("x-api-key", "authorization", "cookie")


def fake_api_key() -> str:
    """A dummy key built at run time (it only has to be non-empty)."""
    return "fake-" + "key-" + secrets.token_hex(8)


@dataclass
class RecordedRequest:
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The parsed JSON body (None when the body was not JSON)."""
    raw_body: bytes = b""
    index: int = 0
    """Its place among every request the fake received."""

    @property
    def route(self) -> str:
        return self.path.split("?", 1)[0]

    @property
    def is_message(self) -> bool:
        return self.method == "POST" and self.route == "/v1/messages"

    @property
    def messages(self) -> list[dict[str, Any]]:
        value = self.body.get("messages") if isinstance(self.body, dict) else None
        return value if isinstance(value, list) else []

    @property
    def model(self) -> str:
        return str(self.body.get("model", "")) if isinstance(self.body, dict) else ""

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [t.get("name", "") for t in tools or [] if isinstance(t, dict)]

    def system_text(self) -> str:
        return blocks_text(self.body.get("system")) if isinstance(self.body, dict) else ""

    def first_user_text(self) -> str:
        users = [m for m in self.messages if m.get("role") == "user"]
        return blocks_text(users[0].get("content")) if users else ""

    def last_user_text(self) -> str:
        users = [m for m in self.messages if m.get("role") == "user"]
        return blocks_text(users[-1].get("content")) if users else ""


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


def usage_total(total: int, *, output_tokens: int = 5) -> dict[str, int]:
    """Usage whose context total (input + cache read + cache creation + output) is `total`,
    most of it reported as cache reads, as a long real session would."""
    cached = max(0, total - output_tokens - 10)
    return {
        "input_tokens": total - output_tokens - cached,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cached,
        "output_tokens": output_tokens,
    }


@dataclass
class ScriptedReply:
    """One scripted answer: a message (content blocks) or an error, optionally slow."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = "end_turn"
    status: int = 200
    error_type: str | None = None
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (for timeouts)."""
    trickle: float = 0.0
    """When set, the body (or event stream) is sent one byte at a time, this many seconds
    apart, after the headers: each read is quick, the whole answer is not."""
    raw_body: bytes | None = None
    """Sent verbatim instead of a JSON message (for malformed responses)."""
    stream_error: tuple[str, str] | None = None
    """`(type, message)` of an `error` event sent mid-stream, after the first block starts."""
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 42, "output_tokens": 7})
    """Sent as the message's usage (cache fields 0 unless given), in full in the stream's
    start and delta events, as the real API does."""

    @classmethod
    def text(cls, text: str, **kw: Any) -> ScriptedReply:
        """One text block, ending the turn."""
        return cls(content=[{"type": "text", "text": text}], **kw)

    @classmethod
    def tool_use(
        cls, calls: Iterable[tuple[str, Mapping[str, Any]]], *, text: str | None = None, **kw: Any
    ) -> ScriptedReply:
        """A turn that asks for tools: optional text, then one tool_use block per call."""
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for name, tool_input in calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_fake_{next(_ids):04d}",
                    "name": name,
                    "input": dict(tool_input),
                }
            )
        return cls(content=content, stop_reason="tool_use", **kw)

    @classmethod
    def error(
        cls,
        status: int,
        error_type: str,
        message: str = "scripted failure",
        *,
        headers: Mapping[str, str] | None = None,
        **kw: Any,
    ) -> ScriptedReply:
        """An HTTP error with an Anthropic error body `{type: error, error: {type, message}}`.

        `x-should-retry: false` is sent unless `headers` say otherwise, so the client does not
        spend seconds backing off.
        """
        merged = {"x-should-retry": "false", **(headers or {})}
        return cls(
            status=status, error_type=error_type, error_message=message, headers=merged, **kw
        )

    @classmethod
    def prompt_too_long(cls, actual: int, limit: int) -> ScriptedReply:
        """The 400 the API sends when the prompt exceeds the context window."""
        return cls.error(
            400, "invalid_request_error", f"prompt is too long: {actual} tokens > {limit} maximum"
        )


Responder = Callable[[RecordedRequest], "ScriptedReply | None"]
"""Chooses the reply to a parsed request, or None to fall back on the queue."""


class FakeMessagesAPI:
    """The server, its script and its request log."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        responder: Responder | None = None,
        default: ScriptedReply | None = None,
        stand_in: bool = False,
    ) -> None:
        self.api_key = api_key
        """When set, requests must present it (`x-api-key` or a bearer token), else 401."""
        self.responder = responder
        """Asked first for every message; an exception in it is kept in `errors`, answered 500."""
        self.default = default
        """The answer once the queue is empty (else a loud 500)."""
        self.stand_in = stand_in
        """Stands in for the whole service before a real client: probes (GET, HEAD) and other
        routes get an empty 200, and key headers are left out of the recording."""
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []
        self._replies: deque[ScriptedReply] = deque()
        self._count_replies: deque[ScriptedReply | int] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},  # shutdown() waits up to one poll interval
            name="fake-messages-api",
            daemon=True,
        )

    @classmethod
    def for_cli(
        cls, responder: Responder | None = None, *, default: ScriptedReply | None = None
    ) -> FakeMessagesAPI:
        """The fake a real CLI runs against (the oracle): see the module's docstring."""
        return cls(responder=responder, default=default or ScriptedReply.text("ok"), stand_in=True)

    # --- lifecycle ---------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeMessagesAPI:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; slow replies in flight give up at once."""
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- scripting ---------------------------------------------------------------------

    def reply(self, scripted: ScriptedReply) -> ScriptedReply:
        with self._lock:
            self._replies.append(scripted)
        return scripted

    def reply_text(self, text: str, **kw: Any) -> ScriptedReply:
        """A reply with one text block."""
        return self.reply(ScriptedReply.text(text, **kw))

    def reply_json(self, value: Any, **kw: Any) -> ScriptedReply:
        """Structured output: the JSON text in the first text block."""
        return self.reply_text(json.dumps(value), **kw)

    def reply_tool_use(
        self,
        calls: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        text: str | None = None,
        **kw: Any,
    ) -> ScriptedReply:
        """A turn that asks for tools: optional text, then one tool_use block per call."""
        return self.reply(ScriptedReply.tool_use(calls, text=text, **kw))

    def reply_error(
        self,
        status: int,
        error_type: str,
        message: str = "scripted failure",
        *,
        headers: Mapping[str, str] | None = None,
        **kw: Any,
    ) -> ScriptedReply:
        """An HTTP error (see `ScriptedReply.error`: no retry unless `headers` say so)."""
        return self.reply(ScriptedReply.error(status, error_type, message, headers=headers, **kw))

    def reply_prompt_too_long(self, actual: int, limit: int) -> ScriptedReply:
        """The 400 the API sends when the prompt exceeds the context window."""
        return self.reply(ScriptedReply.prompt_too_long(actual, limit))

    def reply_raw(
        self, body: bytes, *, status: int = 200, content_type: str = "application/json"
    ) -> ScriptedReply:
        """A verbatim body (malformed JSON, HTML from a proxy, …)."""
        return self.reply(
            ScriptedReply(status=status, raw_body=body, headers={"content-type": content_type})
        )

    def reply_count_tokens(self, value: int | ScriptedReply) -> None:
        """Script the next count-tokens answer (an int, an error reply, or a raw body)."""
        with self._lock:
            self._count_replies.append(value)

    @property
    def pending(self) -> int:
        """Scripted replies not yet served."""
        with self._lock:
            return len(self._replies)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """Requests to `POST /v1/messages` only."""
        return [r for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    # --- serving (called from the handler thread) ---------------------------------------

    def _next_reply(self, request: RecordedRequest) -> ScriptedReply:
        if self.responder is not None:
            try:
                chosen = self.responder(request)
            except Exception as exc:  # a bug in a responder must not hang the client
                self.errors.append(f"{type(exc).__name__}: {exc}")
                return ScriptedReply.error(500, "api_error", "the fake's responder failed")
            if chosen is not None:
                return chosen
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        if self.default is not None:
            return self.default
        return ScriptedReply(
            status=500,
            error_type="api_error",
            error_message="the fake API has no scripted reply",
            headers={"x-should-retry": "false"},
        )

    def _next_count(self) -> ScriptedReply | int | None:
        with self._lock:
            return self._count_replies.popleft() if self._count_replies else None

    def _record(
        self, method: str, path: str, headers: Mapping[str, str], raw: bytes
    ) -> RecordedRequest:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        kept = {k.lower(): v for k, v in headers.items()}
        if self.stand_in:
            kept = {k: v for k, v in kept.items() if k not in _SECRET_HEADERS}
        with self._lock:
            record = RecordedRequest(method, path, kept, body, raw, index=len(self.requests))
            self.requests.append(record)
        return record

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the server is stopping; True when the reply should still be sent."""
        return not self._stopping.wait(seconds) if seconds > 0 else True


def estimate_tokens(body: Any) -> int:
    """The fake's token count for a count-tokens body: about four characters per token."""
    if not isinstance(body, dict):
        return 0
    parts = [body.get("system"), body.get("messages"), body.get("tools")]
    text = json.dumps([p for p in parts if p], ensure_ascii=False)
    return max(1, len(text) // 4)


def _make_handler(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            pass  # keep test output clean

        def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
            self._probe(body=False)

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            self._probe(body=True)

        def _probe(self, *, body: bool) -> None:
            api._record(self.command, self.path, self.headers, b"")
            if api.stand_in:
                self._send(200, b"{}" if body else b"")
            else:
                self._send_error(404, "not_found_error", f"no route {self.command} {self.path}")

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            record = api._record("POST", self.path, self.headers, raw)
            presented = _presented_key({k.lower(): v for k, v in self.headers.items()})
            try:
                if api.api_key is not None and presented != api.api_key:
                    self._send_error(401, "authentication_error", "invalid x-api-key")
                elif record.route == "/v1/messages/count_tokens":
                    self._count_tokens(record.body)
                elif record.route == "/v1/messages":
                    self._messages(record)
                elif api.stand_in:
                    self._send(200, b"{}")
                else:
                    self._send_error(404, "not_found_error", f"no route {record.route}")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout tests); nothing to answer

        def _messages(self, record: RecordedRequest) -> None:
            body = record.body
            problem = _validate(body)
            if problem:
                self._send_error(400, "invalid_request_error", problem)
                return
            scripted = api._next_reply(record)
            if not api._wait(scripted.delay):
                return
            if scripted.raw_body is not None:
                self._send(scripted.status, scripted.raw_body, scripted.headers, scripted.trickle)
                return
            if scripted.status != 200 or scripted.error_type:
                self._send_error(
                    scripted.status,
                    scripted.error_type or "api_error",
                    scripted.error_message,
                    scripted.headers,
                )
                return
            message = _message_json(body, scripted)
            if body.get("stream"):
                self._stream(message, scripted)
            else:
                self._send(200, json.dumps(message).encode(), scripted.headers, scripted.trickle)

        def _count_tokens(self, body: Any) -> None:
            if not isinstance(body, dict) or "messages" not in body or "model" not in body:
                self._send_error(400, "invalid_request_error", "messages and model are required")
                return
            scripted = api._next_count()
            if isinstance(scripted, ScriptedReply) and scripted.raw_body is not None:
                self._send(scripted.status, scripted.raw_body, scripted.headers, scripted.trickle)
                return
            if isinstance(scripted, ScriptedReply):
                self._send_error(
                    scripted.status,
                    scripted.error_type or "api_error",
                    scripted.error_message,
                    scripted.headers,
                )
                return
            value = estimate_tokens(body) if scripted is None else scripted
            self._send(200, json.dumps({"input_tokens": value}).encode())

        def _stream(self, message: dict[str, Any], scripted: ScriptedReply) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("request-id", f"req_fake_{next(_ids):06d}")
            for key, value in scripted.headers.items():
                self.send_header(key, value)
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            for event, data in _stream_events(message, scripted):
                payload = f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
                if not self._write(payload, scripted.trickle):
                    return

        def _send_error(
            self,
            status: int,
            error_type: str,
            message: str,
            headers: Mapping[str, str] | None = None,
        ) -> None:
            payload = {"type": "error", "error": {"type": error_type, "message": message}}
            self._send(status, json.dumps(payload).encode(), headers)

        def _send(
            self,
            status: int,
            data: bytes,
            headers: Mapping[str, str] | None = None,
            trickle: float = 0.0,
        ) -> None:
            self.send_response(status)
            extra = dict(headers or {})
            self.send_header("content-type", extra.pop("content-type", "application/json"))
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", f"req_fake_{next(_ids):06d}")
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self._write(data, trickle)

        def _write(self, data: bytes, trickle: float) -> bool:
            """Send `data` (byte by byte when trickling); False once the server stops."""
            if trickle <= 0:
                self.wfile.write(data)
                self.wfile.flush()
                return True
            self.wfile.flush()
            for index in range(len(data)):
                if not api._wait(trickle):
                    return False
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
            return True

    return Handler


def _presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a request carries: `x-api-key`, or `Authorization: Bearer` (newer SDKs)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    auth = headers.get("authorization", "")
    return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None


def _validate(body: Any) -> str | None:
    """The checks the real API makes first, so malformed requests fail in tests too."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return f"{key}: Field required"
    if not isinstance(body["messages"], list) or not body["messages"]:
        return "messages: at least one message is required"
    if body["messages"][0].get("role") != "user":
        return "messages: the first message must use the user role"
    return None


def _message_json(body: dict[str, Any], scripted: ScriptedReply) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-fake"),
        "content": scripted.content,
        "stop_reason": scripted.stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            **scripted.usage,
        },
    }


def _stream_events(
    message: dict[str, Any], scripted: ScriptedReply
) -> Iterable[tuple[str, dict[str, Any]]]:
    """The event sequence the real API streams for `message`."""
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    yield "message_start", {"type": "message_start", "message": start}
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
            if index == 0:
                yield "ping", {"type": "ping"}
            if scripted.stream_error is not None:
                err_type, err_message = scripted.stream_error
                yield (
                    "error",
                    {"type": "error", "error": {"type": err_type, "message": err_message}},
                )
                return
            text = block["text"]
            for piece in _chunks(text, 12):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
        elif block["type"] == "tool_use":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": block["name"],
                        "input": {},
                    },
                },
            )
            for piece in _chunks(json.dumps(block["input"]), 16):
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
            "usage": message["usage"],
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
