"""`workbench serve`: the app in a browser, through textual-serve.

textual-serve starts one app process per browser tab (Textual's web driver speaks to the page
over a websocket) and draws it with xterm.js. This module wraps its server to add what a
shared link needs:

- **A token off loopback.** On a loopback address the page is for this machine's user; on any
  other address every request needs the token: `?token=…` once (it is then kept in an
  HTTP-only, same-site cookie and the page reloads without it in the address bar), or the
  cookie. Anything else, the page, its scripts and the websocket alike, gets 403. The token
  is compared in constant time and never passed to the app.
- **No cross-site websocket.** A page from another origin could open a websocket to a loopback
  port and type into the app; the websocket accepts only requests whose `Origin` is this
  server.
- **The first key works.** Keys reach the app only through xterm's hidden textarea, which has
  no focus when the page loads; a small script focuses it as soon as it exists and whenever
  the window gets the focus back.
- **Sessions end cleanly.** Closing the tab closes the websocket; the app is told to quit and
  the server waits for its process, so `workbench demo` removes its folder and stops its team
  server as it does in a terminal. Stopping the server (ctrl+c) ends every session the same
  way. The server prints `session N started` / `session N ended` lines as it goes.
- **"listening" means listening.** The socket is bound and the site started before the line
  `listening on URL` is printed, so a script can wait for that line and connect at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import itertools
import logging
import os
import secrets
import shlex
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server

TOKEN_COOKIE = "workbench_serve_token"
TOKEN_ENV = "WORKBENCH_SERVE_TOKEN"
APP_EXIT_TIMEOUT = 15.0
"""Seconds an app process gets to quit (and clean up) after its tab closed."""

FOCUS_SCRIPT = """
<script>
// Added by workbench serve: keys reach the app only through the terminal's hidden textarea,
// which has no focus when the page loads. Focus it once it exists, and again whenever the
// window or the tab comes back to the front.
(() => {
  const focusTerminal = () => {
    const box = document.querySelector("#terminal textarea");
    if (box && document.activeElement !== box) box.focus();
    return box !== null;
  };
  const watcher = new MutationObserver(() => {
    if (focusTerminal()) watcher.disconnect();
  });
  watcher.observe(document.documentElement, { childList: true, subtree: true });
  window.addEventListener("focus", focusTerminal);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) focusTerminal();
  });
})();
</script>
"""

log = logging.getLogger("workbench.serve")


def is_loopback(host: str) -> bool:
    """Whether `host` names only this machine (`localhost`, 127.0.0.0/8, ::1)."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def token_for(host: str, token: str | None) -> str | None:
    """The token requests must carry: the one given; off loopback, a new one if none was."""
    if token is None and not is_loopback(host):
        return secrets.token_urlsafe(24)
    return token


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    return socket.create_server((host.strip("[]"), port), family=family, reuse_port=False)


def app_command(argv: Sequence[str]) -> str:
    """The shell command textual-serve runs for each tab: this Python, this workbench.

    `exec`, so the process textual-serve holds is the app itself, not a shell in front of it:
    killing a stuck app would otherwise kill only the shell, and the orphaned app kept the
    session's pipes (and so the session) open.
    """
    return "exec " + shlex.join([sys.executable, "-m", "workbench", *argv])


class WorkbenchServer(Server):
    """textual-serve's server with a token, an origin check, the focus script and clean
    session ends."""

    def __init__(
        self,
        command: str,
        *,
        host: str,
        port: int,
        token: str | None,
        title: str,
        say: Callable[[str], None] = print,
    ) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.token = token
        self.say = say
        self._numbers = itertools.count(1)
        self._sessions: dict[int, web.WebSocketResponse] = {}
        self._ended: dict[int, asyncio.Event] = {}

    # --- textual-serve hooks ----------------------------------------------------------------

    def initialize_logging(self) -> None:
        logging.basicConfig(level=logging.WARNING, format="workbench serve: %(message)s")

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints a banner here; `workbench serve` prints its own lines."""

    async def on_shutdown(self, app: web.Application) -> None:
        """Close every session's websocket, then wait for their apps to quit."""
        for websocket in list(self._sessions.values()):
            with contextlib.suppress(Exception):
                await websocket.close()
        waits = [event.wait() for event in self._ended.values()]
        if waits:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits), APP_EXIT_TIMEOUT + 5)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        """The page, with URLs for the host the browser used and the focus script."""
        scheme = "https" if request.secure else "http"
        base = f"{scheme}://{request.host}"
        context: dict[str, Any] = {
            "font_size": _int(request.query.get("fontsize"), 16),
            "app_websocket_url": f"{'wss' if request.secure else 'ws'}://{request.host}/ws",
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
        }
        response = aiohttp_jinja2.render_template("app_index.html", request, context)
        response.text = (response.text or "").replace("</body>", FOCUS_SCRIPT + "</body>", 1)
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One tab: start its app, relay until either side closes, then wait for the app."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width = _int(request.query.get("width"), 80)
        height = _int(request.query.get("height"), 24)
        await websocket.prepare(request)  # not a websocket request: aiohttp answers 400
        number = next(self._numbers)
        ended = self._ended[number] = asyncio.Event()
        self._sessions[number] = websocket
        service: AppService | None = None

        async def close() -> None:  # AppService wants no result; aiohttp's close gives a bool
            await websocket.close()

        try:
            service = AppService(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            await service.start(width, height)
            self.say(f"session {number} started")
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await websocket.close()
        except Exception as error:  # noqa: BLE001 - one broken tab must not stop the server
            log.warning("session %d failed: %s", number, error)
        finally:
            self._sessions.pop(number, None)
            code = await end_session(service)
            self.say(f"session {number} ended" + (f" (exit {code})" if code else ""))
            ended.set()
            self._ended.pop(number, None)
        return websocket

    # --- the guard ---------------------------------------------------------------------------

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path == "/ws" and not _same_origin(request):
            return web.Response(
                status=403, text="workbench serve: cross-origin websocket refused\n"
            )
        if self.token is None:
            return await handler(request)
        offered = request.query.get("token")
        if offered is not None:
            if not hmac.compare_digest(offered.encode(), self.token.encode()):
                return _refused()
            # Keep the token in a cookie and drop it from the address bar.
            query = {k: v for k, v in request.query.items() if k != "token"}
            target = request.rel_url.with_query(query)
            response = web.HTTPFound(str(target))
            response.set_cookie(
                TOKEN_COOKIE, self.token, httponly=True, samesite="Strict", secure=request.secure
            )
            return response
        cookie = request.cookies.get(TOKEN_COOKIE, "")
        if not hmac.compare_digest(cookie.encode(), self.token.encode()):
            return _refused()
        return await handler(request)

    # --- running ----------------------------------------------------------------------------

    async def run(self, sock: socket.socket, url: str) -> None:
        """Serve on `sock` until SIGINT or SIGTERM; sessions end before this returns."""
        self.initialize_logging()
        app = await self._make_app()
        runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await runner.setup()
        site = web.SockSite(runner, sock, shutdown_timeout=APP_EXIT_TIMEOUT)
        await site.start()
        self.say(f"listening on {url}")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            self.say("stopping: ending every session")
            await runner.cleanup()


def _refused() -> web.Response:
    return web.Response(
        status=403,
        text="workbench serve: this server needs its token; open the URL it printed\n",
    )


def _same_origin(request: web.Request) -> bool:
    origin = request.headers.get("Origin")
    if origin is None:
        return True  # not a browser page (browsers always send Origin on websockets)
    return urlsplit(origin).netloc.lower() == (request.host or "").lower()


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


async def end_session(service: AppService | None) -> int | None:
    """Tell the app to quit and wait for its process (killed if it will not go)."""
    if service is None:
        return None
    process = service._process  # textual-serve keeps the process here
    try:
        # Bounded: stopping waits for the app's output to end, which a stuck app never does.
        await asyncio.wait_for(service.stop(), APP_EXIT_TIMEOUT)
    except TimeoutError:
        if process is not None and process.returncode is None:
            process.kill()
    except Exception:  # noqa: BLE001 - the pipes of a dead app: its exit code tells
        pass
    if process is None:
        return None
    try:
        return await asyncio.wait_for(process.wait(), APP_EXIT_TIMEOUT)
    except TimeoutError:
        process.kill()
        return await process.wait()


def serve(
    argv: Sequence[str],
    *,
    host: str,
    port: int,
    token: str | None,
    title: str,
    say: Callable[[str], None],
) -> None:
    """Bind, print the URL once listening, and serve until interrupted."""
    token = token_for(host, token)
    sock = bind(host, port)
    bound_port = sock.getsockname()[1]
    shown_host = host
    if host in ("0.0.0.0", "::", ""):
        shown_host = socket.gethostname()
    if ":" in shown_host:
        shown_host = f"[{shown_host}]"
    url = f"http://{shown_host}:{bound_port}/"
    if token is not None:
        url += f"?token={token}"
        if not is_loopback(host):
            say(
                f"{host} is not a loopback address: every request needs the token, "
                "which the URL below carries (share it only with whom you trust)"
            )
    os.environ.pop(TOKEN_ENV, None)  # the apps this server starts never see it
    server = WorkbenchServer(
        app_command(argv), host=host, port=bound_port, token=token, title=title, say=say
    )
    asyncio.run(server.run(sock, url))
