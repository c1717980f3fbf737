"""A closed terminal quits the app even when no SIGHUP reaches it.

The kernel signals only a terminal's session leader. The app started under `make run`, a
wrapper script or `sh -c` is not that leader: when the window closed it got no signal, and
Textual's input thread read end-of-file from the hung-up terminal in a loop, a core at 100%,
for as long as the machine stayed up. Here the app runs on a pseudo-terminal that is not its
controlling terminal (so no signal can reach it), and the terminal is then closed.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import threading
import time

import pytest

from tests.ui.conftest import MemoryProject

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pseudo-terminals as on Linux")

STARTED_MARKER = b"Memories"
"""The memory tree's title: the app has drawn its first frame."""


class TerminalReader(threading.Thread):
    """Drains the terminal's output (a full buffer would block the app) until told to stop."""

    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.output = bytearray()
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                self.output.extend(chunk)


def test_the_app_quits_when_its_terminal_closes_without_a_signal(
    memory_project: MemoryProject, tmp_path
):
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "TEXTUAL_"))},
        "TERM": "xterm-256color",
        "WORKBENCH_HOME": str(tmp_path / "workbench-home"),
        "WORKBENCH_CONFIG": str(tmp_path / "config.toml"),
    }
    argv = ["tui", "--project", str(memory_project.root)]
    argv += ["--config-home", str(memory_project.config_home)]
    app = subprocess.Popen(
        [sys.executable, "-m", "workbench", *argv],
        stdin=follower,
        stdout=follower,
        stderr=follower,  # Textual draws on standard error
        env=env,
        # A session of its own without a controlling terminal: no hang-up signal can reach it.
        start_new_session=True,
    )
    os.close(follower)
    reader = TerminalReader(leader)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while STARTED_MARKER not in reader.output:
            assert app.poll() is None, "the app quit before drawing"
            assert time.monotonic() < deadline, "the app did not draw its first frame"
            time.sleep(0.05)
        reader.stopping.set()
        reader.join()
        os.close(leader)  # the window closes: the terminal hangs up
        assert app.wait(timeout=30) == 0
    finally:
        reader.stopping.set()
        if app.poll() is None:
            app.kill()
            app.wait()
