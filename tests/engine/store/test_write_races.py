"""Real processes racing on one memory folder, killed mid-save, or pointed at a bad home.

Writes are serialised by the lock beside MEMORY.md, so no index line is lost and the
conflict check holds; a change and its history entry are one unit, so a kill between them is
rolled back by the next process and a retry never makes `_2.md`; temp files a kill left
behind are cleaned up by the next writer.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workbench.engine import Engine

DEADLINE = 120  # generous: a bound against hangs on a loaded machine, not a speed


@pytest.fixture(autouse=True)
def old_file_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file names spelled out here are 2.1.88's `type_name.md` (naming by release is
    tested in tests/engine/store/test_memory_formats.py)."""
    monkeypatch.setenv("WORKBENCH_CLAUDE_VERSION", "2.1.88")


def _paths(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    memory = tmp_path / "memory"
    project.mkdir(exist_ok=True)
    memory.mkdir(exist_ok=True)
    return project, memory


def _python(script: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or dict(os.environ),
    )


SAVER = """
import sys, time
from pathlib import Path
from workbench.engine import Engine
project, memory, tag, count, go = sys.argv[1:6]
engine = Engine.open(project, memory_dir=memory)
while not Path(go).exists():
    time.sleep(0.001)
for i in range(int(count)):
    engine.memories.save(
        type="project", name=f"{tag} note {i}", description=f"{tag} {i}", body="b"
    )
print("done")
"""


def test_four_processes_saving_at_once_keep_every_index_line(tmp_path: Path):
    project, memory = _paths(tmp_path)
    go = tmp_path / "go"
    workers = [_python(SAVER, str(project), str(memory), f"w{n}", "12", str(go)) for n in range(4)]
    go.touch()
    for worker in workers:
        out, err = worker.communicate(timeout=DEADLINE)
        assert worker.returncode == 0, err
    files = sorted(p.name for p in memory.glob("*.md") if p.name != "MEMORY.md")
    lines = (memory / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert len(files) == 48
    assert sorted(line.split("](")[1].split(")")[0] for line in lines) == files
    engine = Engine.open(project, memory_dir=str(memory))
    assert len(engine.history.entries()) == 96 and engine.history.problems == []


UPDATER = """
import sys
from workbench.engine import Engine
from workbench.engine.errors import ConflictError
project, memory, tag = sys.argv[1:4]
store = Engine.open(project, memory_dir=memory).memories
print("ready", flush=True)
for line in sys.stdin:
    fingerprint = line.strip()
    try:
        store.update("shared.md", f"edit by {tag}\\n", fingerprint)
        print("ok", flush=True)
    except ConflictError:
        print("conflict", flush=True)
"""


def test_two_processes_updating_with_one_fingerprint_exactly_one_wins(tmp_path: Path):
    project, memory = _paths(tmp_path)
    shared = memory / "shared.md"
    engine = Engine.open(project, memory_dir=str(memory))
    workers = [_python(UPDATER, str(project), str(memory), tag) for tag in ("a", "b")]
    for worker in workers:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    try:
        for trial in range(25):
            shared.write_text(f"base {trial}\n", encoding="utf-8")
            fingerprint = engine.memories.read("shared.md").fingerprint
            for worker in workers:
                assert worker.stdin is not None
                worker.stdin.write(fingerprint + "\n")
                worker.stdin.flush()
            answers = sorted(w.stdout.readline().strip() for w in workers)  # type: ignore[union-attr]
            assert answers == ["conflict", "ok"], f"trial {trial}"
            assert shared.read_text(encoding="utf-8") in ("edit by a\n", "edit by b\n")
    finally:
        for worker in workers:
            worker.communicate(timeout=DEADLINE)


KILLED_SAVE = """
import os, signal, sys
from workbench.engine import Engine
import workbench.engine.history as history

project, memory, where = sys.argv[1:4]
real_replace, real_append = os.replace, history.History._append

def replace(src, dst, *args, **kwargs):
    # Killed after the memory's temp file is written, before it is renamed into place.
    if where == "rename" and str(dst).endswith("feedback_use_pnpm.md"):
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst, *args, **kwargs)

def append(self, entries):
    # Killed after the files are written, before their history lines are.
    if where == "history":
        os.kill(os.getpid(), signal.SIGKILL)
    return real_append(self, entries)

os.replace, history.History._append = replace, append
Engine.open(project, memory_dir=memory).memories.save(
    type="feedback", name="use pnpm", description="pnpm, not npm", body="Use pnpm."
)
"""


def _killed_save(tmp_path: Path, where: str) -> None:
    project, memory = _paths(tmp_path)
    proc = _python(KILLED_SAVE, str(project), str(memory), where)
    _out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == -9, err


def test_a_kill_between_the_files_and_their_history_is_rolled_back(tmp_path: Path):
    _killed_save(tmp_path, "history")
    project, memory = _paths(tmp_path)
    assert (memory / "feedback_use_pnpm.md").exists()  # what the kill left: no history
    assert (memory / "MEMORY.md").exists()
    engine = Engine.open(project, memory_dir=str(memory))
    assert engine.history.entries() == []  # reading the history first finishes the job
    assert engine.history.recovered == ["rolled back an interrupted change to 2 files"]
    assert sorted(p.name for p in memory.iterdir()) == [".workbench.lock"]
    retry = engine.memories.save(
        type="feedback", name="use pnpm", description="pnpm, not npm", body="Use pnpm."
    )
    assert retry.path == "feedback_use_pnpm.md" and retry.notes == ()
    assert [e.action for e in engine.history.entries()] == ["index-edit", "save"]


def test_a_kill_mid_write_leaves_a_temp_file_the_next_writer_removes(tmp_path: Path):
    _killed_save(tmp_path, "rename")
    project, memory = _paths(tmp_path)
    leftovers = [p for p in memory.iterdir() if p.name.endswith(".wbtmp")]
    assert len(leftovers) == 1 and not (memory / "feedback_use_pnpm.md").exists()
    unrelated = memory / ".notes.md.12345678.tmp"  # not ours: left alone
    unrelated.write_text("x", encoding="utf-8")
    engine = Engine.open(project, memory_dir=str(memory))
    engine.memories.save(type="user", name="role", description="a role", body="b")
    assert [p for p in memory.iterdir() if p.name.endswith(".wbtmp")] == []
    assert unrelated.exists()
    assert not (memory / "feedback_use_pnpm.md").exists()


def test_workbench_home_that_is_a_file_fails_before_anything_is_written(tmp_path: Path):
    project, memory = _paths(tmp_path)
    home_file = tmp_path / "home-is-a-file"
    home_file.write_text("", encoding="utf-8")
    argv = ["-m", "workbench", "save", "--project", str(project), "--memory-dir", str(memory)]
    argv += ["--type", "user", "--name", "role", "--description", "a role"]
    env = dict(os.environ, WORKBENCH_HOME=str(home_file))
    bad = subprocess.run(
        [sys.executable, *argv], input="body\n", capture_output=True, text=True, env=env
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "not a folder" in bad.stderr and "nothing was written" in bad.stderr
    assert [p.name for p in memory.iterdir() if p.suffix == ".md"] == []
    good = subprocess.run(
        [sys.executable, *argv, "--json"], input="body\n", capture_output=True, text=True
    )
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["path"] == "user_role.md"


def test_a_held_lock_is_a_bounded_wait_and_a_clear_error(tmp_path: Path):
    project, memory = _paths(tmp_path)
    fd = os.open(memory / ".workbench.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        argv = ["-m", "workbench", "save", "--project", str(project), "--memory-dir", str(memory)]
        argv += ["--type", "user", "--name", "role", "--description", "a role"]
        env = dict(os.environ, WORKBENCH_LOCK_TIMEOUT="0.5")
        result = subprocess.run(
            [sys.executable, *argv],
            input="body\n",
            capture_output=True,
            text=True,
            env=env,
            timeout=DEADLINE,
        )
    finally:
        os.close(fd)
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "another workbench process is changing" in result.stderr
    assert "waited 0.5 s" in result.stderr
    assert [p.name for p in memory.iterdir() if p.suffix == ".md"] == []


def test_a_failed_index_step_rolls_back_the_memory_file(tmp_path: Path):
    project, memory = _paths(tmp_path)
    (memory / "MEMORY.md").mkdir()  # the index write fails: it is a folder
    engine = Engine.open(project, memory_dir=str(memory))
    with pytest.raises(OSError):
        engine.memories.save(type="user", name="role", description="a role", body="b")
    assert not (memory / "user_role.md").exists()
    assert engine.history.entries() == []
