"""A hostile team server on loopback, for faults the shipped server never produces.

Each request is answered by a responder (a function of the request) with a `Fault`: any status,
raw header bytes, a body given whole or as chunks, a Content-Length that lies, bytes trickled
one at a time with a pause between them, or a connection closed mid-body. It speaks just
enough HTTP/1.1 (keep-alive, Content-Length request bodies) for httpx to talk to it.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

REASONS = {200: "OK", 304: "Not Modified", 404: "Not Found", 412: "Precondition Failed"}


@dataclass(frozen=True)
class Seen:
    """One request as the fault server read it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass
class Fault:
    """How to answer one request."""

    status: int = 200
    body: bytes | Iterable[bytes] = b""
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    content_length: int | None | str = "auto"
    """"auto": the body's length (bytes bodies only); None: none sent, so the body ends when
    the connection closes; an int: sent as given, true or not."""
    trickle: float | None = None
    """Seconds between single bytes of everything sent, status line included."""
    close: bool = False
    """Close the connection after the body (always so without a Content-Length)."""


Responder = Callable[[Seen], Fault]


class FaultServer:
    """`with FaultServer(responder) as server:` then point a client at `server.url`."""

    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.requests: list[Seen] = []
        self.stopping = threading.Event()
        self._server: socketserver.ThreadingTCPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def __enter__(self) -> FaultServer:
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                while not outer.stopping.is_set():
                    seen = _read_request(self.rfile)
                    if seen is None:
                        return
                    outer.requests.append(seen)
                    if not outer._answer(self.connection, outer.responder(seen)):
                        return

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.02},  # shutdown() waits up to one poll interval
            daemon=True,
        )
        self._thread.start()
        host, port = server.server_address[:2]
        self.url = f"http://{host}:{port}"
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _answer(self, conn: socket.socket, fault: Fault) -> bool:
        """Send `fault`; False when the connection must close afterwards."""
        body = fault.body
        length = fault.content_length
        if length == "auto":
            length = len(body) if isinstance(body, bytes) else None
        reason = REASONS.get(fault.status, "Whatever")
        head = [f"HTTP/1.1 {fault.status} {reason}".encode()]
        head += [name + b": " + value for name, value in fault.headers]
        if length is not None:
            head.append(f"Content-Length: {length}".encode())
        closing = fault.close or length is None
        if closing:
            head.append(b"Connection: close")
        chunks = [b"\r\n".join(head) + b"\r\n\r\n"]
        try:
            self._send(conn, chunks, fault.trickle)
            self._send(conn, [body] if isinstance(body, bytes) else body, fault.trickle)
        except OSError:
            return False  # the client gave up: that is what many faults are for
        return not closing

    def _send(self, conn: socket.socket, chunks: Iterable[bytes], trickle: float | None) -> None:
        for chunk in chunks:
            if self.stopping.is_set():
                raise OSError("stopping")
            if trickle is None:
                conn.sendall(chunk)
                continue
            for i in range(len(chunk)):
                if self.stopping.wait(trickle):
                    raise OSError("stopping")
                conn.sendall(chunk[i : i + 1])


def _read_request(rfile) -> Seen | None:
    try:
        line = rfile.readline(65537)
        if not line:
            return None
        method, target, _ = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while True:
            raw = rfile.readline(65537)
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = rfile.read(int(headers.get("content-length", "0") or 0))
    except (OSError, ValueError):
        return None
    parts = urlsplit(target)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    return Seen(method, parts.path, query, headers, body)


def forever(chunk: bytes) -> Iterable[bytes]:
    """The same chunk again and again (a body that never ends)."""
    while True:
        yield chunk


def repeated(chunk: bytes, total: int) -> Iterable[bytes]:
    """`total` bytes made of `chunk`, generated as they are sent."""
    sent = 0
    while sent < total:
        piece = chunk[: total - sent]
        sent += len(piece)
        yield piece
