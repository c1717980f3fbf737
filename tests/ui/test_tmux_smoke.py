"""Real-terminal smoke test: the demo in tmux, every pane visited, the palette, quit.

Skipped when tmux is not installed. It drives `python -m workbench demo` through tmux key
presses and reads the screen back with `capture-pane`, so it exercises the real driver,
terminal parsing and rendering that Pilot tests bypass. Each pane must show something only it
shows, and the footer must carry that pane's own keys (the jump key moved the focus into it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from workbench.ui.actions import PANES

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    """One detached tmux session on a private socket."""

    def __init__(self, socket_dir: Path) -> None:
        self.socket = str(socket_dir / "tmux.sock")
        self.name = f"wb-{uuid.uuid4().hex[:8]}"

    def run(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=20
        )
        return out.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        return self.wait_until(lambda screen: text in screen, repr(text), timeout)

    def wait_until(self, check: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{what} never appeared; screen was:\n{screen}")

    def alive(self) -> bool:
        return self.name in self.run("list-sessions", "-F", "#{session_name}")


@pytest.fixture
def tmux():
    # The socket lives in a short folder of its own: a Unix socket's path is limited to about
    # 107 bytes, and pytest's temp folder may be deeper than that.
    socket_dir = Path(
        tempfile.mkdtemp(prefix="wb-tmux-", dir="/tmp" if os.path.isdir("/tmp") else None)
    )
    session = Tmux(socket_dir)
    yield session
    session.run("kill-server")
    shutil.rmtree(socket_dir, ignore_errors=True)


# For each pane: text only that pane shows once loaded (any of `|`-separated alternatives),
# and a footer label of its own keys.
PANE_MARKS: dict[str, tuple[str, str]] = {
    "memory": ("changed ", "Edit"),
    "index": ("headroom", "Team index"),
    "session": ("each up to 2,000 tokens", "Notes text"),
    "gauge": ("tokens used", "Follow"),
    "compaction": ("auto-compact at", "Check summary"),
    "recall": ("A prompt as the user would type it", "Engine"),
    "team": ("⇄", "Pull"),
    "review": ("proposals waiting|proposal waiting|review queue is empty", "Accept"),
    "instructions": ("Why files do not load", "Refresh"),
    "context": ("In context now", "Call"),
}


def test_demo_in_a_real_terminal(tmux: Tmux, tmp_path: Path):
    env = {
        "WORKBENCH_CONFIG": str(tmp_path / "config.toml"),
        "WORKBENCH_HOME": str(tmp_path / "home"),
        "TEXTUAL_ANIMATIONS": "none",
        "TERM": "xterm-256color",
        "TMPDIR": str(tmp_path),
    }
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    # COLUMNS / LINES from the test runner would override the tmux window's size.
    command = (
        f"cd {REPO} && env -u COLUMNS -u LINES {exports} {sys.executable} -m workbench demo; "
        "echo DEMO-EXITED-$?; sleep 30"
    )
    tmux.run("new-session", "-d", "-s", tmux.name, "-x", "130", "-y", "40", command)
    screen = tmux.wait_for("Memories")
    assert "legacy-billing" in tmux.wait_for("legacy-billing")
    assert "Traceback" not in screen

    assert set(PANE_MARKS) == {pane for pane, _tab, _title in PANES}
    seen: list[str] = []
    for number, (pane, tab, _title) in enumerate(PANES, start=1):
        tmux.keys(str(number % 10))
        text, key_label = PANE_MARKS[pane]
        screen = tmux.wait_until(
            lambda screen, text=text, key=key_label: (
                any(part in screen for part in text.split("|"))
                and key in screen.rstrip().splitlines()[-1]
            ),
            f"the {pane} pane ({text!r}, {key_label!r} in the footer)",
        )
        assert tab in screen
        assert "Traceback" not in screen
        seen.append(screen)
    assert len(set(seen)) == len(PANES)  # every key brought a different pane forward
    tmux.keys("2")
    assert "headroom" in tmux.wait_for("headroom")

    tmux.keys("C-p")
    tmux.wait_for("Search for commands")
    tmux.keys(*"Show MEMORY.md")
    tmux.wait_for("Pane: Show MEMORY.md load report")
    tmux.keys("Escape")
    time.sleep(0.5)
    # The panes' own verbs are in the palette too, and run on their pane.
    tmux.keys("C-p")
    tmux.wait_for("Search for commands")
    tmux.keys(*"toggle live follow")
    tmux.wait_for("Gauge: Toggle live follow")
    tmux.keys("Enter")
    assert "tokens used" in tmux.wait_for("tokens used")

    tmux.keys("C-q")
    tmux.wait_for("DEMO-EXITED-0")
    # The demo's temporary copy is gone once the app has quit.
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("workbench-demo-")]
    assert os.path.exists(tmux.socket)
