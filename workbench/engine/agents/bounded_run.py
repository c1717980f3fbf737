"""Run a shell command with a ceiling on time, output and memory (the agents' Bash tool).

The output is read as it arrives and never held past the cap plus one read's worth; when the
cap is reached or the deadline passes, the whole process group is killed. The shell sets its
own limits before it runs the command: an address-space ceiling, and no file may grow (a
read-only command has nothing to write, so a write the judge missed fails instead).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass

READ_CHUNK = 64 * 1024

# `ulimit -f 0` only where bash keeps small here-documents in a pipe (5.1 and later); older
# shells write them to a temporary file, which the limit would break.
_LIMITS = (
    "ulimit -S -c 0 2>/dev/null; ulimit -v {kib} 2>/dev/null; "
    "if (( BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1) )); "
    "then ulimit -f 0 2>/dev/null; fi; "
    'exec bash --noprofile --norc -c "$1"'
)


@dataclass(frozen=True)
class BoundedRun:
    """What a bounded command produced."""

    output: bytes
    """stdout and stderr together, at most `max_output_bytes`."""
    returncode: int | None
    timed_out: bool = False
    truncated: bool = False
    """The output reached the cap; the command was stopped there."""


def run_bounded(
    command: str,
    *,
    cwd: str,
    env: dict[str, str],
    timeout_s: float,
    max_output_bytes: int,
    memory_bytes: int,
) -> BoundedRun:
    """Run `command` with bash; raises OSError when the shell cannot start."""
    wrapper = _LIMITS.format(kib=max(1, memory_bytes // 1024))
    process = subprocess.Popen(
        ["bash", "--noprofile", "--norc", "-c", wrapper, "bash", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,  # so one signal stops the command and everything it started
    )
    deadline = time.monotonic() + timeout_s
    assert process.stdout is not None
    fd = process.stdout.fileno()
    chunks: list[bytes] = []
    size = 0
    timed_out = truncated = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            data = os.read(fd, READ_CHUNK)
            if not data:
                break
            room = max_output_bytes - size
            if len(data) > room:
                chunks.append(data[:room])
                size += room
                truncated = True
                break
            chunks.append(data)
            size += len(data)
        if not (timed_out or truncated):
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True  # it closed its output but kept running
    finally:
        if timed_out or truncated or process.poll() is None:
            _kill_group(process)
        process.stdout.close()
        returncode = process.wait()
    return BoundedRun(b"".join(chunks), returncode, timed_out=timed_out, truncated=truncated)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
