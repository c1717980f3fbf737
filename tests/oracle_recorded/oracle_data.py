"""Shared helpers for the tests on what real Claude Code releases did (tests/data/oracle).

The observations were recorded by `make oracle` (the harness in `oracle/`). These tests need
no download: they set the same inputs up again and ask the workbench. Every recorded case
must agree with what the release did, whatever verdict the recording gave the workbench of its
day; the few still known to differ are listed in KNOWN_DIFFERENCES with why.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterable, Mapping
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "tests" / "data" / "oracle"
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # the oracle package generates the recorded inputs

KNOWN_DIFFERENCES: dict[str, str] = {}
"""Cases where the workbench still differs from the recorded release, with why. Strict: once
the workbench agrees the case fails until it is taken off this list."""


def load(name: str) -> list[dict[str, Any]]:
    path = DATA / name
    if not path.exists():
        return []
    return json.loads(path.read_text(encoding="utf-8"))


def cases(rows: Iterable[dict[str, Any]], *, verdict_of=None, known=()) -> list[Any]:
    """pytest params, one per recorded row; rows Claude Code did not expose are left out.
    `known`: the ids of this test's cases that are expected to differ (KNOWN_DIFFERENCES)."""
    out = []
    for row in rows:
        verdict = verdict_of(row) if verdict_of else row["verdict"]
        if verdict not in ("agree", "differ"):
            continue
        case_id = f"{row['release']}-{row['case']}"
        reason = KNOWN_DIFFERENCES.get(case_id) if case_id in known else None
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        out.append(pytest.param(row, id=case_id, marks=marks))
    return out


def workbench_json(args: list[str], *, cwd: Path | None = None) -> Any:
    """Run the workbench CLI in-process and parse its JSON (exit 0 or 1 expected)."""
    import os

    from workbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            code = main([*args, "--json"])
    finally:
        os.chdir(old)
    assert code in (0, 1), f"workbench {' '.join(args)} exited {code}: {err.getvalue()}"
    return json.loads(out.getvalue())


def set_env(monkeypatch: pytest.MonkeyPatch, env: Mapping[str, str], release: str) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("WORKBENCH_CLAUDE_VERSION", release)


def fill(value: Any, root: str) -> Any:
    """Recorded `<sandbox>` placeholders, pointed at this test's own sandbox."""
    if isinstance(value, str):
        return value.replace("<sandbox>", root)
    if isinstance(value, list):
        return [fill(v, root) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, root) for k, v in value.items()}
    return value


def minimal_transcript(path: Path, model: str | None) -> Path:
    """A one-call session (or, without a model, one that has not called the API yet)."""
    rows: list[dict[str, Any]] = [
        {
            "type": "user",
            "uuid": "00000000-0000-4000-8000-000000000001",
            "parentUuid": None,
            "sessionId": "00000000-0000-4000-8000-00000000000a",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "hello"},
        }
    ]
    if model:
        rows.append(
            {
                "type": "assistant",
                "uuid": "00000000-0000-4000-8000-000000000002",
                "parentUuid": "00000000-0000-4000-8000-000000000001",
                "sessionId": "00000000-0000-4000-8000-00000000000a",
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {
                    "id": "msg_recorded_1",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": "ok"}],
                    "usage": {"input_tokens": 10, "output_tokens": 2},
                },
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
