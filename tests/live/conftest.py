"""A project beside Claude Code: a memory folder, a session transcript, and hook JSON."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from workbench.cli import main
from workbench.devtools.synth import SessionBuilder
from workbench.engine import Engine

SESSION = "5e55a0e1-aaaa-4bbb-8ccc-0123456789ab"
MEMORY = (
    "---\nname: Testing\ndescription: how the user wants tests run\ntype: feedback\n---\n\n"
    "Run pytest -q before committing.\n\n**Why:** CI is slow.\n\n**How to apply:** always.\n"
)


@dataclass
class LiveProject:
    root: Path
    config_home: Path
    engine: Engine
    builder: SessionBuilder
    transcript: Path

    @property
    def memory_dir(self) -> Path:
        return Path(self.engine.locations.memory_dir)

    def hook_input(self, event: str, **extra: Any) -> dict[str, Any]:
        """Hook JSON shaped like what Claude Code sends for `event`."""
        return {
            "session_id": self.builder.session_id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.root),
            "permission_mode": "default",
            "hook_event_name": event,
            **extra,
        }

    def write(self) -> Path:
        return self.builder.write(self.transcript)


@pytest.fixture
def live_project(tmp_path: Path, isolated_env: Path) -> LiveProject:
    """A project with one memory, an index, and a session that worked on a retry bug."""
    root = tmp_path / "proj"
    root.mkdir()
    config_home = isolated_env / "claude"
    engine = Engine.open(root)
    memory = Path(engine.locations.memory_dir)
    memory.mkdir(parents=True)
    (memory / "feedback_testing.md").write_text(MEMORY, encoding="utf-8")
    (memory / "MEMORY.md").write_text(
        "- [Testing](feedback_testing.md) — run pytest -q\n", encoding="utf-8"
    )
    builder = SessionBuilder(seed=5, session_id=SESSION)
    builder.prompt("Fix the retry logic in src/net/retry.py; the timeout is 170,251 ms")
    builder.tool_call(
        "Read", {"file_path": str(root / "src/net/retry.py")}, "def retry():\n    pass\n" * 30
    )
    builder.tool_call("Bash", {"command": "pytest tests/net -k test_backoff -q"}, "3 failed")
    builder.reply(
        "The `RetryPolicy` sets max_attempts and backoff_factor 2.5; the fix goes in "
        "src/net/retry.py"
    )
    transcript = Path(engine.locations.transcript_path(SESSION))
    project = LiveProject(root, config_home, engine, builder, transcript)
    project.write()
    return project


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Run `workbench ARGS` in-process with `stdin`; returns (code, stdout, stderr)."""

    def run(*argv: str, stdin: str | dict[str, Any] | None = None) -> tuple[int, str, str]:
        text = json.dumps(stdin) if isinstance(stdin, dict) else (stdin or "")
        monkeypatch.setattr("sys.stdin", io.StringIO(text))
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def hook_env() -> dict[str, str]:
    """The environment a hook subprocess inherits (the test's isolated folders)."""
    keep = ("HOME", "PATH", "WORKBENCH_HOME", "CLAUDE_CONFIG_DIR", "TZ", "WORKBENCH_CONFIG")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["NO_COLOR"] = "1"
    return env


CliRunner = Callable[..., tuple[int, str, str]]
