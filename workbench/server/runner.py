"""Running the team server: embedded in a background thread, or in the foreground for the CLI.

`TeamServer` is what tests and `workbench demo` use: it binds the socket itself (so port 0
yields a free port that is known before any request), runs uvicorn in a daemon thread and
returns from `start()` only once the server accepts connections.

Two details keep the server quick and honest. Every connection has Nagle's algorithm off
(`TCP_NODELAY`): uvicorn writes a response's headers and body as two sends, and with Nagle on the
second one waits for the client's delayed ACK, about 40 ms, on every request after the first on
a kept-alive connection. asyncio only turns Nagle off itself for sockets made with
`IPPROTO_TCP`, so the listening socket is made that way and has the option set (accepted
sockets inherit it). And the "listening" announcement of `serve_forever` comes only after
uvicorn has started serving, so a client that connects the instant it reads the URL is served.

`serve_forever` is `workbench team-server`: the app in this process, or with `--workers N`
that many processes under uvicorn's supervisor, all accepting on the one socket bound here
(so it is listening before any of them runs), each building the app with the factory from
the settings this process puts in their environment.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from workbench.server.app import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_ENTRIES,
    RateLimit,
    ServerStats,
    app_for_config,
    create_app,
)
from workbench.server.config import (
    DEFAULT_ORGANIZATION,
    DEFAULT_RATE_BURST,
    ConfigError,
    ServerConfig,
    parse_token_specs,
)
from workbench.server.database import parse_database
from workbench.server.store import Store

if TYPE_CHECKING:
    import uvicorn
    from starlette.applications import Starlette

__all__ = ["DEFAULT_ORGANIZATION", "TeamServer", "parse_token_specs", "serve_forever"]
START_TIMEOUT_S = 15.0
WORKER_START_TIMEOUT_S = 60.0
FACTORY = "workbench.server.app:create_app"


class ServerStartError(RuntimeError):
    """The workers of `serve_forever` did not all come up (their log says why)."""


def _token_map(tokens: Mapping[str, str] | Iterable[str]) -> dict[str, str]:
    if isinstance(tokens, Mapping):
        return dict(tokens)
    return parse_token_specs(tokens)


LISTEN_BACKLOG = 2048  # uvicorn's default


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0 picks a free one), Nagle off.

    It listens at once, so a connection made before the server's loop runs waits in the
    backlog instead of being refused.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError:
        sock.close()
        raise
    set_nodelay(sock)
    sock.set_inheritable(True)
    return sock


def set_nodelay(sock: socket.socket, enabled: bool = True) -> None:
    """Turn Nagle's algorithm off (or back on) for `sock` and the connections it accepts."""
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if enabled else 0)


def url_for(sock: socket.socket) -> str:
    """`http://host:port` for a bound socket."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


class TeamServer:
    """The team server on a background thread; use as a context manager or start()/stop()."""

    def __init__(
        self,
        db: str | os.PathLike[str],
        tokens: Mapping[str, str] | Iterable[str],
        max_entries: int = DEFAULT_MAX_ENTRIES,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        sock: socket.socket | None = None,
        tcp_nodelay: bool = True,
        rate_limit: float = 0.0,
        rate_burst: int = DEFAULT_RATE_BURST,
        pool_size: int = 4,
    ) -> None:
        self.database = parse_database(db)
        """`db` is a SQLite path (or `sqlite:///path`) or a `postgresql://` URL."""
        self.db_path = self.database.sqlite_path
        """The SQLite file, or None on PostgreSQL."""
        self.rate_limit = RateLimit(rate_limit, rate_burst)
        self.pool_size = pool_size
        self.tcp_nodelay = tcp_nodelay
        """False leaves a given socket's Nagle setting alone (the benchmark measures the old
        behaviour that way)."""
        self._given_socket = sock
        """A socket bound by someone else (the demo passes one across a process boundary)."""
        self.tokens = _token_map(tokens)
        self.max_entries = max_entries
        self.max_body_bytes = max_body_bytes
        self.host = host
        self.port = port
        self.stats = ServerStats()
        self.url = ""
        self._store: Store | None = None
        self.app: Starlette | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    def start(self) -> TeamServer:
        """Serve in a daemon thread; returns once connections are accepted."""
        import uvicorn

        if self._thread is not None:
            return self
        from workbench.server.database import open_store

        store = open_store(self.database, pool_size=self.pool_size)
        try:
            store.migrate()
        except BaseException:
            store.close()
            raise
        app = create_app(
            store,
            self.tokens,
            max_entries=self.max_entries,
            max_body_bytes=self.max_body_bytes,
            stats=self.stats,
            rate_limit=self.rate_limit,
        )
        self.app = app
        config = uvicorn.Config(
            app,
            log_config=None,  # never reconfigure the host process's logging (the TUI owns it)
            access_log=False,
            lifespan="off",
            http="h11",
            loop="asyncio",
            timeout_graceful_shutdown=3,
        )
        sock = self._given_socket or bind_socket(self.host, self.port)
        if self.tcp_nodelay:
            set_nodelay(sock)
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="team-server", daemon=True
        )
        self._store, self._server, self._socket, self._thread = store, server, sock, thread
        self.url = url_for(sock)
        self.port = sock.getsockname()[1]
        thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the team server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving, wait for the thread and close the database."""
        server, thread = self._server, self._thread
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        if self._store is not None:
            self._store.close()
        self._server = self._thread = self._socket = self._store = None

    def __enter__(self) -> TeamServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def serve_forever(
    config: ServerConfig,
    *,
    host: str,
    port: int,
    workers: int = 1,
    on_listening: Callable[[str], None] | None = None,
) -> None:
    """Serve in the foreground until interrupted (Ctrl-C / SIGTERM stop it cleanly).

    The caller has migrated the database. With one worker the app runs in this process; with
    more, uvicorn's supervisor runs that many processes on the one listening socket (each
    builds the app with the factory from the settings in its environment) and starts a new
    one when one dies. `on_listening` is called once every worker serves.
    """

    from workbench.server.observability import configure_logging, uvicorn_log_config

    configure_logging(config.log_format)
    sock = bind_socket(host, port)
    url = url_for(sock)
    common: dict[str, Any] = dict(
        http="h11",
        loop="asyncio",
        timeout_graceful_shutdown=5,
        log_config=uvicorn_log_config(config.log_format),
        access_log=False,  # the server logs each request itself, with its id
    )
    metrics_dir, own_dir = None, False
    if workers > 1 or os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        metrics_dir, own_dir = _metrics_folder()
    try:
        if workers <= 1:
            _serve_one(config, sock, url, common, on_listening)
        else:
            _serve_many(config, sock, url, workers, common, on_listening)
    finally:
        sock.close()
        if own_dir and metrics_dir:
            shutil.rmtree(metrics_dir, ignore_errors=True)


def _serve_one(
    config: ServerConfig,
    sock: socket.socket,
    url: str,
    common: dict[str, Any],
    on_listening: Callable[[str], None] | None,
) -> None:
    import uvicorn

    from workbench.server.database import open_store

    store = open_store(config.db, pool_size=config.pool_size)
    app = app_for_config(config, store)
    uv_config = uvicorn.Config(app, lifespan="off", **common)

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and on_listening is not None:
                on_listening(url)  # only now: the socket is served

    try:
        AnnouncingServer(uv_config).run(sockets=[sock])
    finally:
        store.close()


def _serve_many(
    config: ServerConfig,
    sock: socket.socket,
    url: str,
    workers: int,
    common: dict[str, Any],
    on_listening: Callable[[str], None] | None,
) -> None:
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    # Workers inherit these; the environment is readable only by this user (argv is not).
    os.environ.update(config.to_env())
    uv_config = uvicorn.Config(
        FACTORY,
        factory=True,
        workers=workers,
        lifespan="on",
        **common,
    )

    class AnnouncingSupervisor(Multiprocess):
        announced = False

        def init_processes(self) -> None:
            super().init_processes()
            for process in self.processes:
                if not process.wait_until_ready(WORKER_START_TIMEOUT_S, self.should_exit):
                    self.should_exit.set()
                    return
            self.announced = True
            if on_listening is not None:
                on_listening(url)

    supervisor = AnnouncingSupervisor(uv_config, sockets=[sock])
    supervisor.run()
    if not supervisor.announced and not supervisor.signal_queue:
        # Without this the command would end with status 0 and nothing said.
        raise ServerStartError(f"the team server's {workers} workers did not all start")


def _metrics_folder() -> tuple[str, bool]:
    """prometheus_client's multiprocess folder: the given one emptied, or a private one."""
    given = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if given:
        folder = Path(given)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for stale in folder.glob("*.db"):  # samples of an earlier run's processes
                stale.unlink(missing_ok=True)
        except OSError as exc:  # not the socket's fault, so not "cannot listen"
            reason = exc.strerror or str(exc)
            raise ConfigError(f"cannot use PROMETHEUS_MULTIPROC_DIR {given}: {reason}") from None
        return given, False
    made = tempfile.mkdtemp(prefix="workbench-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = made
    return made, True
