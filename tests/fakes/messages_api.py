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
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


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


class FakeMessagesAPI:
    """The server, its script and its request log."""

    def __init__(self, *, api_key: str | None = None) -> None:
        self.api_key = api_key
        """When set, requests must present it (`x-api-key` or a bearer token), else 401."""
        self.requests: list[RecordedRequest] = []
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

    def reply_text(self, text: str, *, stop_reason: str = "end_turn", **kw: Any) -> ScriptedReply:
        """A reply with one text block."""
        return self.reply(
            ScriptedReply(content=[{"type": "text", "text": text}], stop_reason=stop_reason, **kw)
        )

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
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        for name, tool_input in calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_fake_{next(_ids):04d}",
                    "name": name,
                    "input": dict(tool_input),
                }
            )
        return self.reply(ScriptedReply(content=content, stop_reason="tool_use", **kw))

    def reply_error(
        self,
        status: int,
        error_type: str,
        message: str = "scripted failure",
        *,
        headers: Mapping[str, str] | None = None,
        **kw: Any,
    ) -> ScriptedReply:
        """An HTTP error with an Anthropic error body `{type: error, error: {type, message}}`.

        `x-should-retry: false` is sent unless `headers` say otherwise, so the SDK does not
        spend seconds backing off inside a test.
        """
        merged = {"x-should-retry": "false", **(headers or {})}
        return self.reply(
            ScriptedReply(
                status=status,
                error_type=error_type,
                error_message=message,
                headers=merged,
                **kw,
            )
        )

    def reply_prompt_too_long(self, actual: int, limit: int) -> ScriptedReply:
        """The 400 the API sends when the prompt exceeds the context window."""
        return self.reply_error(
            400,
            "invalid_request_error",
            f"prompt is too long: {actual} tokens > {limit} maximum",
        )

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

    def _next_reply(self) -> ScriptedReply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        return ScriptedReply(
            status=500,
            error_type="api_error",
            error_message="the fake API has no scripted reply",
            headers={"x-should-retry": "false"},
        )

    def _next_count(self) -> ScriptedReply | int | None:
        with self._lock:
            return self._count_replies.popleft() if self._count_replies else None

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

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            record = RecordedRequest(
                method="POST",
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                raw_body=raw,
            )
            with api._lock:
                api.requests.append(record)
            path = self.path.split("?")[0]
            try:
                if api.api_key is not None and _presented_key(record.headers) != api.api_key:
                    self._send_error(401, "authentication_error", "invalid x-api-key")
                elif path == "/v1/messages/count_tokens":
                    self._count_tokens(body)
                elif path == "/v1/messages":
                    self._messages(body)
                else:
                    self._send_error(404, "not_found_error", f"no route {path}")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout tests); nothing to answer

        def _messages(self, body: Any) -> None:
            problem = _validate(body)
            if problem:
                self._send_error(400, "invalid_request_error", problem)
                return
            scripted = api._next_reply()
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
            "input_tokens": scripted.usage.get("input_tokens", 0),
            "output_tokens": scripted.usage.get("output_tokens", 0),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
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
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
