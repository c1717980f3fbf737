"""A process killed in the middle of a save never leaves a torn file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

WRITER = r"""
import sys
from pathlib import Path
from workbench.engine.atomic import atomic_write_bytes
target = Path(sys.argv[1])
payloads = [bytes([65 + i]) * 3_000_000 for i in range(4)]
print("ready", flush=True)
i = 0
while True:
    atomic_write_bytes(target, payloads[i % 4])
    i += 1
"""


def test_sigkill_mid_write_leaves_the_old_or_the_new_file(tmp_path: Path):
    target = tmp_path / "memory.md"
    target.write_bytes(b"Z" * 3_000_000)
    valid = {bytes([65 + i]) * 3_000_000 for i in range(4)} | {b"Z" * 3_000_000}
    repo = Path(__file__).resolve().parents[3]
    for delay in (0.05, 0.11, 0.17, 0.23, 0.31):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(target)], cwd=repo, stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert target.read_bytes() in valid
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "memory.md"]
    assert all(name.endswith(".wbtmp") and name.startswith(".") for name in leftovers)
