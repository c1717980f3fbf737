"""Hostile files for tests, and a way to run the CLI that cannot hang or exhaust the machine.

The files are the ones an adversarial run found: a YAML alias bomb, named pipes and sockets
named like memories, links to /dev/zero, symlink loops, deep JSON. `run_cli` runs
`python -m workbench` in a child with an address-space cap and a wall-clock deadline, so a
regression shows up as a failed assertion, not a stuck or swapping test run.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

DEADLINE_S = 30.0
"""Generous: the fixed code answers each case in about a second on a quiet machine."""
MEMORY_CAP = 2 * 1024**3
"""Address space for one CLI child: the interpreter and its imports need a few hundred MB."""


def alias_bomb(description_alias: bool = True) -> str:
    """A 15-line memory whose frontmatter expands to 9**9 strings if aliases are followed."""
    lines = ["---", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for name, prev in zip("bcdefghi", "abcdefgh", strict=True):
        lines.append(f"{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    lines += ["description: *i" if description_alias else "description: boom", "name: *h"]
    lines += ["type: user", "---", "body"]
    return "\n".join(lines) + "\n"


def make_fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def make_socket(path: Path) -> Path:
    """A Unix socket file at `path` (the socket is closed; the file stays, as a stale one)."""
    sock = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    try:
        os.chdir(path.parent)  # a socket path is limited to ~107 bytes; bind a short name
        sock.bind(path.name)
    finally:
        os.chdir(here)
        sock.close()
    return path


def link_to_dev_zero(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


def make_loop(path: Path) -> Path:
    """A symlink that points at itself (ELOOP on open)."""
    path.symlink_to(path.name)
    return path


def deep_json(depth: int = 100_000, key: str | None = None) -> str:
    """A JSON document nesting arrays `depth` deep (inside an object under `key`)."""
    nested = "[" * depth + "]" * depth
    return f'{{"{key}": {nested}}}' if key else nested


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str
    seconds: float


# The child caps its own address space, then runs the CLI as `python -m workbench` would.
_BOOT = (
    "import resource, runpy, sys\n"
    f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_CAP}, {MEMORY_CAP}))\n"
    "sys.argv[0] = 'workbench'\n"
    "runpy.run_module('workbench', run_name='__main__', alter_sys=True)\n"
)


def run_cli(
    argv: Sequence[str],
    *,
    stdin: bytes | Path | None = None,
    cwd: Path | None = None,
    timeout: float = DEADLINE_S,
) -> Run:
    """`workbench ARGV` in a capped child; a run past the deadline fails the test."""
    start = time.monotonic()
    handle = open(stdin, "rb") if isinstance(stdin, Path) else None  # noqa: SIM115
    try:
        done = subprocess.run(
            [sys.executable, "-c", _BOOT, *argv],
            input=stdin if isinstance(stdin, bytes) else None,
            stdin=handle if handle is not None else (None if stdin else subprocess.DEVNULL),
            capture_output=True,
            timeout=timeout,
            cwd=cwd,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"workbench {' '.join(argv)} did not finish within {timeout:.0f} s")
    finally:
        if handle is not None:
            handle.close()
    return Run(
        done.returncode,
        done.stdout.decode("utf-8", errors="replace"),
        done.stderr.decode("utf-8", errors="replace"),
        time.monotonic() - start,
    )


def assert_clean(run: Run) -> None:
    """No traceback, no internal error, no out-of-memory: whatever stderr says is one line
    per message, each from the workbench."""
    assert "Traceback" not in run.err, run.err[-2000:]
    assert "internal error" not in run.err, run.err[-2000:]
    assert "MemoryError" not in run.err and "RecursionError" not in run.err, run.err[-2000:]
    assert run.code in (0, 1, 2), (run.code, run.err[-2000:])


def assert_one_line_error(run: Run, *needles: str) -> str:
    """Exit 2 with exactly one stderr line naming the problem; returns that line."""
    assert_clean(run)
    assert run.code == 2, (run.code, run.out[-500:], run.err[-500:])
    lines = run.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("workbench: "), run.err[-2000:]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# --- in-process runs with a per-case guard (the fuzz suite) ---------------------------------

CASE_DEADLINE_S = 20.0
"""Wall-clock bound for one fuzz case (a handful of in-process CLI runs on small inputs)."""
CASE_TRACED_CAP = 128 * 1024**2
"""Peak of Python allocations one case may reach (tracemalloc)."""
CASE_ADDRESS_HEADROOM = 1024**3
"""Address space a case may add to the test process before allocations fail outright, so a
regression that expands an alias bomb fails the case instead of swapping the machine."""


class CaseTimeout(BaseException):
    """Raised by the guard's alarm; a BaseException so no `except Exception` swallows it."""


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def guarded_case(
    deadline: float = CASE_DEADLINE_S,
    traced_cap: int = CASE_TRACED_CAP,
    headroom: int = CASE_ADDRESS_HEADROOM,
) -> Iterator[None]:
    """Bound one case in time (SIGALRM), address space (RLIMIT_AS) and traced memory.

    pytest-timeout's own alarm, if armed, is put back afterwards with what was left of it.
    """
    import resource
    import signal
    import tracemalloc

    def alarm(signum: int, frame: object) -> None:
        raise CaseTimeout(f"a fuzz case ran past {deadline:.0f} s")

    old_handler = signal.signal(signal.SIGALRM, alarm)
    old_timer = signal.setitimer(signal.ITIMER_REAL, deadline)
    old_limit = resource.getrlimit(resource.RLIMIT_AS)
    used = _address_space()
    if used is not None:
        soft = used + headroom
        if old_limit[1] != resource.RLIM_INFINITY:
            soft = min(soft, old_limit[1])
        resource.setrlimit(resource.RLIMIT_AS, (soft, old_limit[1]))
    tracemalloc.start()
    start = time.monotonic()
    try:
        yield
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        resource.setrlimit(resource.RLIMIT_AS, old_limit)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_timer[0] > 0:
            left = old_timer[0] - (time.monotonic() - start)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.01), old_timer[1])
    assert peak <= traced_cap, f"a fuzz case allocated {peak / 1024**2:.0f} MB at its peak"


def run_main(argv: Sequence[str], stdin: bytes | None = None) -> Run:
    """`main(argv)` in this process with stdout, stderr (and stdin) captured."""
    import io

    from workbench.cli import main

    # Encoded like a real terminal's streams (stdout strict, stderr backslashreplace), so
    # text a real stdout could not encode fails here too.
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8", errors="replace")
    sys.stdout, sys.stderr = out, err
    start = time.monotonic()
    try:
        code = main(list(argv))
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    texts = []
    for stream in (out, err):
        with contextlib.suppress(ValueError):  # a closed stream (a broken pipe) holds nothing
            stream.flush()
        raw = stream.buffer.getvalue() if not stream.closed else b""
        texts.append(raw.decode("utf-8", errors="replace"))
    return Run(int(code), texts[0], texts[1], time.monotonic() - start)


def assert_messages_are_lines(run: Run) -> None:
    """What `assert_clean` checks, plus: every stderr line is one workbench message, and a
    failure (exit 2) is exactly one line."""
    assert_clean(run)
    lines = [line for line in run.err.splitlines() if line.strip()]
    assert all(line.startswith("workbench: ") for line in lines), run.err[-2000:]
    if run.code == 2:
        assert len(lines) == 1, run.err[-2000:]
