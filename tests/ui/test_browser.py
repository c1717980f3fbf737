"""The demo in a real browser: `workbench serve --demo` driven through Debian's Chromium.

Playwright's Python package drives `/usr/bin/chromium` (no browser download). The terminal is
drawn on a canvas, so the test reads two other signals instead of page text: the server's own
lines (`listening on`, `session N started`/`ended`) and the bytes the app sent to the page
(recorded by a script added to the page before it loads), and it polls screenshots for a
change. The first key is pressed without clicking anywhere: only the focus script that
`workbench serve` adds makes it reach the app.

With CI=true a missing Chromium is installed from Debian's packages (CI runs as root);
elsewhere the test is skipped with the command that enables it. The screenshots are kept in
`test-artifacts/browser/` at the top of the checkout (git ignores it); the path is printed.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
INSTALL_COMMAND = "apt-get install -y --no-install-recommends chromium"
LAUNCH_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = REPO / "test-artifacts" / "browser"
TIMEOUT = 60.0  # generous: a loaded two-core machine; these are bounds, not speeds

# Recorded in the page: every byte the app's websocket delivers, decoded as text.
CAPTURE_SCRIPT = """
(() => {
  window.__appText = "";
  const decoder = new TextDecoder();
  const Original = window.WebSocket;
  window.WebSocket = function (...args) {
    const socket = new Original(...args);
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") {
        window.__appText += decoder.decode(new Uint8Array(event.data), { stream: true });
        if (window.__appText.length > 4000000) window.__appText = window.__appText.slice(-2000000);
      }
    });
    return socket;
  };
  window.WebSocket.prototype = Original.prototype;
  Object.assign(window.WebSocket, Original);
})();
"""
_ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.")


def _install_chromium() -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update"], env=env, check=False, timeout=900)
    subprocess.run(INSTALL_COMMAND.split(), env=env, check=True, timeout=1800)


@pytest.fixture(scope="session")
def chromium() -> str:
    if not os.path.exists(CHROMIUM) and os.environ.get("CI") == "true":
        _install_chromium()
    if not os.path.exists(CHROMIUM):
        reason = (
            f"Debian Chromium ({CHROMIUM}) is not installed; to run this test: "
            f"apt-get update && {INSTALL_COMMAND}"
        )
        print(f"\n{reason}", file=sys.stderr)
        pytest.skip(reason)
    return CHROMIUM


class ServerLines:
    """The serve process's stdout, line by line, read on a thread."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert process.stdout is not None
        stdout = process.stdout

        def read() -> None:
            for line in stdout:
                self.lines.put(line.rstrip("\n"))

        threading.Thread(target=read, daemon=True).start()

    def wait_for(self, pattern: str, timeout: float = TIMEOUT) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        for line in self.seen:
            if found := regex.search(line):
                return found
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            self.seen.append(line)
            if found := regex.search(line):
                return found
        raise AssertionError(f"the server never printed {pattern!r}; it printed {self.seen}")


def _poll(check: Callable[[], object], what: str, timeout: float = TIMEOUT) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def served_demo(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update(
        TMPDIR=str(tmp_path),
        WORKBENCH_CONFIG=str(tmp_path / "config.toml"),
        WORKBENCH_HOME=str(tmp_path / "home"),
        TEXTUAL_ANIMATIONS="none",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench", "serve", "--demo", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )
    lines = ServerLines(process)
    try:
        yield process, lines
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_the_demo_in_a_real_browser(chromium: str, served_demo, tmp_path: Path):
    from playwright.sync_api import sync_playwright

    process, lines = served_demo
    url = lines.wait_for(r"listening on (http://\S+)").group(1)
    artifacts = ARTIFACTS
    artifacts.mkdir(parents=True, exist_ok=True)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.add_init_script(CAPTURE_SCRIPT)
            page.goto(url)
            lines.wait_for(r"session 1 started")

            def screen_text() -> str:
                return _ESCAPES.sub("", page.evaluate("window.__appText || ''"))

            _poll(lambda: "Memories" in screen_text(), "the memory tree's first frame")
            _poll(
                lambda: "-first-byte" in (page.evaluate("document.body.className") or ""),
                "the page to show the terminal",
            )
            before = _settled_screenshot(page)
            (artifacts / "first-frame.png").write_bytes(before)
            assert "Traceback" not in screen_text()

            # No click: the first key reaches the app only because the page focused it.
            page.keyboard.press("6")
            _poll(
                lambda: "A prompt as the user would type it" in screen_text(),
                "the recall pane after the first key press",
            )
            recall = _settled_screenshot(page)
            assert recall != before

            page.keyboard.press("i")
            page.keyboard.type("how do we deploy the billing service")
            page.keyboard.press("Enter")
            _poll(lambda: " selected of " in screen_text(), "a recall result")
            result = _settled_screenshot(page)
            assert result != recall
            shot = artifacts / "recall-result.png"
            shot.write_bytes(result)
            print(f"\nbrowser screenshots kept in {artifacts}", file=sys.stderr)

            page.keyboard.press("Control+q")
            lines.wait_for(r"session 1 ended")
            _poll(
                lambda: "-closed" in (page.evaluate("document.body.className") or ""),
                "the page to say the session ended",
            )
            # The tab's demo removed its temporary project and stopped its team server.
            assert not demo_folders(tmp_path)

            # Closing a tab ends its session the same way.
            second = browser.new_page()
            second.goto(url)
            lines.wait_for(r"session 2 started")
            _poll(lambda: demo_folders(tmp_path), "the second tab's demo folder")
            second.close()
            lines.wait_for(r"session 2 ended")
            assert not demo_folders(tmp_path)

            # Stopping the server with a tab open ends that session too.
            third = browser.new_page()
            third.goto(url)
            lines.wait_for(r"session 3 started")
            _poll(lambda: demo_folders(tmp_path), "the third tab's demo folder")
            assert process.poll() is None  # the server kept serving after tabs closed
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=TIMEOUT) == 0
            lines.wait_for(r"session 3 ended")
            assert not demo_folders(tmp_path)
        except AssertionError:
            # What the pages showed when a wait ran out, to look at after the run.
            pages = [open_page for context in browser.contexts for open_page in context.pages]
            for number, open_page in enumerate(pages):
                (artifacts / f"failure-{number}.png").write_bytes(open_page.screenshot())
                text = _ESCAPES.sub("", open_page.evaluate("window.__appText || ''"))
                (artifacts / f"failure-{number}.txt").write_text(text[-20_000:])
            print(f"\nthe pages at the failure are kept in {artifacts}", file=sys.stderr)
            raise
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000


def demo_folders(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith("workbench-demo-")]


def _settled_screenshot(page, timeout: float = TIMEOUT) -> bytes:
    """A screenshot once two in a row are the same (the app has finished drawing)."""
    deadline = time.monotonic() + timeout
    previous = page.screenshot()
    while time.monotonic() < deadline:
        time.sleep(0.3)
        current = page.screenshot()
        if current == previous:
            return current
        previous = current
    return previous


def test_the_page_without_the_focus_script_loses_the_first_key(chromium: str, tmp_path: Path):
    """Guards the test above: without focusing, a key press reaches nothing."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=LAUNCH_ARGS)
        try:
            page = browser.new_page()
            page.set_content(
                "<div id='terminal'><textarea id='box'></textarea></div>"
                "<script>window.keys = 0; document.getElementById('box')"
                ".addEventListener('keydown', () => window.keys++);</script>"
            )
            page.keyboard.press("6")
            assert page.evaluate("window.keys") == 0
            from workbench.webserve import FOCUS_SCRIPT

            page.set_content(
                "<body><div id='terminal'></div><script>window.keys = 0;</script>"
                + FOCUS_SCRIPT
                + "<script>setTimeout(() => { const box = document.createElement('textarea');"
                "box.addEventListener('keydown', () => window.keys++);"
                "document.getElementById('terminal').appendChild(box); }, 50);</script></body>"
            )
            _poll(
                lambda: page.evaluate("document.activeElement.tagName") == "TEXTAREA",
                "the focus script to focus the terminal's textarea",
            )
            page.keyboard.press("6")
            assert page.evaluate("window.keys") == 1
        finally:
            browser.close()
    assert shutil.which(chromium)
