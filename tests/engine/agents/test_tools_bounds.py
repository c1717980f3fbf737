"""Every agent tool call ends, and holds little, whatever it is pointed at (issue 10).

Bash output is capped while it is read; the command runs under a time limit, a memory limit
and a zero file-size limit. Read, Grep and Write refuse pipes, devices and sockets without
ever blocking on them. Deadlines here are generous bounds, not speeds.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile import make_socket
from workbench.engine.agents.bounded_run import run_bounded
from workbench.engine.agents.permissions import create_auto_mem_can_use_tool
from workbench.engine.agents.tools import (
    BASH_MAX_OUTPUT_CHARS,
    BASH_MEMORY_BYTES,
    AgentTools,
    Workspace,
    bash_environment,
)
from workbench.engine.llm import ToolOutcome

BOUND_S = 15.0
"""Far above what any of these calls needs; only a hang reaches it."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "a.md").write_text("needle in a\n")
    return root


def _tools(project: Path, **kw: float) -> AgentTools:
    return AgentTools(Workspace(project_root=str(project)), **kw)


def _call(tools: AgentTools, name: str, **tool_input: object) -> ToolOutcome:
    produced = tools.handlers()[name](dict(tool_input))
    return produced if isinstance(produced, ToolOutcome) else ToolOutcome(produced)


def _within_bound(fn: Callable[[], ToolOutcome], unblock: Callable[[], None] = lambda: None):
    """Run `fn` in a thread; fail if it has not returned within BOUND_S (then unblock it)."""
    box: list[ToolOutcome] = []
    thread = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(BOUND_S)
    if thread.is_alive():
        unblock()
        thread.join(5)
        pytest.fail(f"the tool call was still running after {BOUND_S:g} s")
    return box[0], time.monotonic() - started


def _fifo(path: Path) -> Callable[[], None]:
    """Make a FIFO at `path`; returns a function that releases a reader blocked on it."""
    os.mkfifo(path)

    def unblock() -> None:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)

    return unblock


# --- Bash ------------------------------------------------------------------------------------


def test_endless_output_is_cut_while_reading_and_slow_commands_are_killed(project: Path) -> None:
    tools = _tools(project, bash_timeout_s=60)
    out, elapsed = _within_bound(lambda: _call(tools, "Bash", command="cat /dev/zero"))
    assert not out.is_error
    assert "output cut at 30,000 characters" in out.content
    assert "stopped" in out.content
    assert len(out.content) < BASH_MAX_OUTPUT_CHARS + 200
    assert elapsed < BOUND_S  # the 60 s time limit was not what ended it
    # A command past its time limit is killed with everything it started.
    quick = _tools(project, bash_timeout_s=1)
    out, _ = _within_bound(lambda: _call(quick, "Bash", command="sleep 60.4821 | cat"))
    assert out.is_error and "stopped after 1 s" in out.content
    leftover = subprocess.run(["pgrep", "-f", "sleep 60.4821"], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="needs /proc limits")
def test_commands_run_under_a_memory_and_file_size_limit(project: Path) -> None:
    out = _call(_tools(project), "Bash", command="cat /proc/self/limits")
    lines = {line[:26].strip(): line[26:].split() for line in out.content.splitlines()[1:]}
    assert lines["Max address space"][:2] == [str(BASH_MEMORY_BYTES)] * 2
    assert lines["Max file size"][:2] == ["0", "0"]


def test_a_write_the_judge_missed_cannot_grow_a_file(tmp_path: Path) -> None:
    run = run_bounded(
        "printf 'data' > written.txt",
        cwd=str(tmp_path),
        env=bash_environment(),
        timeout_s=10,
        max_output_bytes=1000,
        memory_bytes=BASH_MEMORY_BYTES,
    )
    assert run.returncode != 0
    assert not (tmp_path / "written.txt").exists() or (tmp_path / "written.txt").stat().st_size == 0


def test_git_in_a_repository_an_agent_wrote_runs_none_of_its_programs(tmp_path: Path) -> None:
    """A bare repository made of plain files (HEAD, config, objects/, refs/) whose config
    names a program: with git's own defaults `git -C` would find it and run the program."""
    evil = tmp_path / "memory" / "evil"
    (evil / "objects").mkdir(parents=True)
    (evil / "refs").mkdir()
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    marker = tmp_path / "ran"
    script = tmp_path / "prog.sh"
    script.write_text(f"#!/bin/sh\n: > {marker}\nexit 1\n")
    script.chmod(0o755)
    (evil / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
        f'[remote "x"]\n\turl = {evil}\n\tuploadpack = {script}\n'
    )
    tools = _tools(tmp_path)
    _call(tools, "Bash", command=f"git -C {evil} ls-remote x")
    _call(tools, "Bash", command=f"cd {evil} && git ls-remote x")
    assert not marker.exists()


# --- Read, Grep, Write, Glob -----------------------------------------------------------------


def test_read_refuses_a_fifo_in_the_memory_folder_without_blocking(project: Path) -> None:
    path = project / "memory" / "pipe.md"
    unblock = _fifo(path)
    tools = _tools(project)
    out, _ = _within_bound(lambda: _call(tools, "Read", file_path=str(path)), unblock)
    assert out.is_error and "named pipe" in out.content


def test_read_refuses_a_pipe_behind_proc_self_fd(project: Path) -> None:
    proc_fd = Path("/proc/self/fd")
    if not proc_fd.is_dir():
        pytest.skip("needs /proc/self/fd")
    read_end, write_end = os.pipe()
    try:
        tools = _tools(project)

        def release() -> None:
            os.write(write_end, b"x")
            os.close(write_end)

        out, _ = _within_bound(
            lambda: _call(tools, "Read", file_path=f"/proc/self/fd/{read_end}"), release
        )
    finally:
        os.close(read_end)
    assert out.is_error and "outside the folders this agent may read" in out.content


def test_read_refuses_devices_and_sockets(project: Path, tmp_path: Path) -> None:
    tools = _tools(project)
    zero = _call(tools, "Read", file_path="/dev/zero")
    assert zero.is_error and "outside the folders this agent may read" in zero.content
    inside = AgentTools(Workspace(project_root=str(project), read_roots=("/dev",)))
    zero = _call(inside, "Read", file_path="/dev/zero")
    assert zero.is_error and "a device" in zero.content
    # Bound by a short relative name: a socket's path is limited to about 107 bytes, and the
    # temp folder may be deeper than that.
    sock_path = make_socket(project / "s.md")
    out = _call(tools, "Read", file_path=str(sock_path))
    assert out.is_error and "a socket" in out.content


def test_grep_skips_a_fifo_and_still_finds_matches(project: Path) -> None:
    unblock = _fifo(project / "memory" / "b.md")
    tools = _tools(project)
    out, _ = _within_bound(
        lambda: _call(tools, "Grep", pattern="needle", path=str(project / "memory")), unblock
    )
    assert not out.is_error
    assert out.content.splitlines() == [str(project / "memory" / "a.md")]


def test_grep_on_a_fifo_itself_is_refused(project: Path) -> None:
    path = project / "memory" / "b.md"
    unblock = _fifo(path)
    tools = _tools(project)
    out, _ = _within_bound(lambda: _call(tools, "Grep", pattern="x", path=str(path)), unblock)
    assert out.is_error and "named pipe" in out.content


def test_a_pattern_that_backtracks_for_ever_is_stopped(project: Path) -> None:
    (project / "memory" / "long.md").write_text("a" * 5000 + "!\n")
    tools = _tools(project, grep_timeout_s=1)
    out, _ = _within_bound(
        lambda: _call(tools, "Grep", pattern="(a+)+$", path=str(project / "memory"))
    )
    assert out.is_error and "took longer than 1 s" in out.content


def test_write_and_edit_over_a_fifo_are_refused_without_blocking(project: Path) -> None:
    path = project / "memory" / "pipe.md"
    unblock = _fifo(path)
    tools = _tools(project)
    out, _ = _within_bound(lambda: _call(tools, "Write", file_path=str(path), content="x"), unblock)
    assert out.is_error and "named pipe" in out.content
    edit, _ = _within_bound(
        lambda: _call(tools, "Edit", file_path=str(path), old_string="", new_string="x"), unblock
    )
    assert edit.is_error
    assert tools.workspace.changed_files() == []


# --- writes that would give git a config to obey ----------------------------------------------


@pytest.mark.parametrize(
    "relative",
    [".git/config", ".git/hooks/pre-commit", "sub/.git", "sub/.GIT/config", "x/.git/HEAD"],
)
def test_nothing_under_a_git_name_may_be_written(tmp_path: Path, relative: str) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    check = create_auto_mem_can_use_tool(str(memory))
    for tool in ("Write", "Edit"):
        decision = check(tool, {"file_path": str(memory / relative), "content": "x"})
        assert not decision.allowed and ".git" in decision.message
    for look_alike in (".gitkeep", "notes/git.md", "my.git.md", ".github/x.md"):
        assert check("Write", {"file_path": str(memory / look_alike)}).allowed, look_alike


# --- allowed roots: the project, the memory folder, the transcripts ------------------------


@pytest.mark.parametrize(
    "target", ["/proc/self/environ", "/etc/hostname", "/sys/kernel/uevent_seqnum"]
)
def test_read_refuses_paths_outside_the_allowed_roots(project: Path, target: str) -> None:
    out = _call(_tools(project), "Read", file_path=target)
    assert _refused_as_outside(out), "the file was read"  # never show what was read


def test_links_to_special_files_are_refused_by_every_reading_tool(
    project: Path, tmp_path: Path
) -> None:
    (project / "env.md").symlink_to("/proc/self/environ")
    (project / "zero.md").symlink_to("/dev/zero")
    (project / "out").symlink_to("/sys")
    secret = f"WB_SECRET_{os.getpid()}"
    os.environ[secret] = "x"
    try:
        tools = _tools(project)
        for name in ("env.md", "zero.md"):
            out = _call(tools, "Read", file_path=str(project / name))
            assert _refused_as_outside(out), f"{name} was read"
        grep = _call(tools, "Grep", pattern=secret, path=str(project), output_mode="content")
        found = secret in grep.content
        assert not found, "Grep read the environment through a link"
        assert _call(tools, "Grep", pattern="x", path=str(project / "env.md")).is_error
        assert _call(tools, "Glob", pattern="*", path=str(project / "out")).is_error
        listed = _call(tools, "Glob", pattern="*.md", path=str(project)).content
        assert "env.md" not in listed and "zero.md" not in listed
    finally:
        del os.environ[secret]


def test_read_roots_extend_what_may_be_read(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "transcripts"
    elsewhere.mkdir()
    (elsewhere / "s.jsonl").write_text('{"a": 1}\n')
    tools = AgentTools(Workspace(project_root=str(project), read_roots=(str(elsewhere),)))
    assert "1\t" in _call(tools, "Read", file_path=str(elsewhere / "s.jsonl")).content
    assert _call(_tools(project), "Read", file_path=str(elsewhere / "s.jsonl")).is_error


def test_a_proc_file_inside_a_read_root_is_still_refused(tmp_path: Path) -> None:
    tools = AgentTools(Workspace(project_root=str(tmp_path), read_roots=("/proc/self",)))
    out = _call(tools, "Read", file_path="/proc/self/environ")
    assert out.is_error and "pseudo-file" in out.content


def _refused_as_outside(out: ToolOutcome) -> bool:
    """Refused for being outside the roots (a bool, so a failure never prints the content)."""
    return out.is_error and "outside the folders this agent may read" in out.content
