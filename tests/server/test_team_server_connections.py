"""The team server's connections have Nagle's algorithm off.

With Nagle on, uvicorn's two writes per response (headers, then body) made every request after
the first on a kept-alive connection wait ~40 ms for the client's delayed ACK. The speed itself
is measured by benchmarks/bench_server_rps.py; these tests check the socket option, which is
what decides it.
"""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from workbench.server import TeamServer
from workbench.server.runner import bind_socket

TOKEN = "-".join(["nodelay", "test", "token"])
PATH = "/api/claude_code/team_memory"


def _nodelay(sock: socket.socket) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_connections_accepted_on_a_bound_socket_have_nodelay():
    listener = bind_socket("127.0.0.1", 0)
    try:
        with socket.create_connection(listener.getsockname()[:2], timeout=10):
            accepted, _ = listener.accept()
            with accepted:
                assert _nodelay(accepted) != 0
    finally:
        listener.close()


def _old_style_socket() -> socket.socket:
    # Protocol 0, as the demo (and the server before this fix) made it: asyncio then never
    # sets TCP_NODELAY on accepted connections by itself.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


@pytest.mark.parametrize("given_socket", [False, True], ids=["own-socket", "given-socket"])
def test_served_keep_alive_connections_have_nodelay(tmp_path: Path, given_socket: bool):
    sock = _old_style_socket() if given_socket else None
    with TeamServer(tmp_path / "db.sqlite3", [TOKEN], sock=sock) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=server.url, headers=headers) as http:
            for _ in range(2):  # the second request rides the kept-alive connection
                assert http.get(PATH, params={"repo": "acme/widgets"}).status_code == 404
            # uvicorn's live connections; each protocol's transport holds the accepted socket.
            assert server._server is not None
            connections = list(server._server.server_state.connections)
            assert len(connections) == 1
            accepted = connections[0].transport.get_extra_info("socket")
            assert _nodelay(accepted) != 0
