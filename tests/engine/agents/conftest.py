"""Fixtures for the agent tests: an engine on a temporary project, and transcript builders."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workbench.engine import Engine


@pytest.fixture
def agent_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# demo project\n")
    return root


@pytest.fixture
def agent_engine(agent_project: Path) -> Engine:
    """An engine whose memory folder exists (with MEMORY.md and one memory)."""
    engine = Engine.open(agent_project)
    memory = Path(engine.locations.memory_dir)
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Testing](feedback_testing.md) — run pytest -q\n")
    (memory / "feedback_testing.md").write_text(
        "---\nname: Testing\ndescription: how the user wants tests run\ntype: feedback\n---\n\n"
        "Run pytest -q before committing.\n"
    )
    Path(engine.locations.transcripts_dir).mkdir(parents=True, exist_ok=True)
    return engine


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "message": {"role": "user", "content": text},
        **extra,
    }


def assistant(*blocks: dict[str, Any], message_id: str | None = None) -> dict[str, Any]:
    return {
        "type": "assistant",
        "uuid": str(uuid.uuid4()),
        "message": {
            "id": message_id or f"msg_{uuid.uuid4().hex[:8]}",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": list(blocks),
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, tool_input: dict[str, Any], tool_id: str | None = None) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": tool_id or f"toolu_{uuid.uuid4().hex[:8]}",
        "name": name,
        "input": tool_input,
    }


def tool_result(tool_id: str, content: str = "ok") -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": content}],
        },
    }


@pytest.fixture
def conversation() -> dict[str, Callable[..., dict[str, Any]]]:
    """Builders for transcript entries."""
    return {
        "user": user,
        "assistant": assistant,
        "text": text,
        "tool_use": tool_use,
        "tool_result": tool_result,
    }


@pytest.fixture
def write_transcript(agent_engine: Engine) -> Callable[..., Path]:
    """Write entries as `<transcripts>/<session>.jsonl` and return the path."""

    def write(entries: list[dict[str, Any]], session: str | None = None) -> Path:
        session = session or str(uuid.uuid4())
        path = Path(agent_engine.locations.transcript_path(session))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(e) + "\n" for e in entries))
        return path

    return write


@pytest.fixture
def simple_session(write_transcript: Callable[..., Path]) -> Path:
    """A short session where the user states a preference worth remembering."""
    return write_transcript(
        [
            user("Please always use uv instead of pip in this repo; pip broke our lockfile."),
            assistant(text("Understood, I'll use uv from now on.")),
            user("Thanks. Now add a test for the parser."),
            assistant(text("Done: tests/test_parser.py added.")),
        ]
    )


def tree_snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` with its bytes (to prove nothing else changed); the
    workbench's write lock beside MEMORY.md is bookkeeping, not content, and is left out."""
    out = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if name == ".workbench.lock":
                continue
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                out[str(path)] = path.read_bytes()
    return out


@pytest.fixture
def snapshot_tree() -> Callable[[Path], dict[str, bytes]]:
    return tree_snapshot


@pytest.fixture
def llm_engine(fake_messages_api, agent_engine: Engine) -> Engine:
    """The same project, with the environment pointing at the fake Messages API."""
    return Engine(agent_engine.locations, env=dict(os.environ))
