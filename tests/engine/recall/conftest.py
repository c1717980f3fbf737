"""Fixtures for recall tests: a memory folder built file by file, with chosen ages."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from workbench.engine import Engine

DAY = 86_400


class MemoryFolder:
    """A project whose memory folder the test fills in."""

    def __init__(self, root: Path) -> None:
        self.project = root / "project"
        self.project.mkdir()
        self.dir = root / "memory"
        self.dir.mkdir()
        self.now = time.time()

    def engine(self, **env: str) -> Engine:
        base = {**os.environ, "HOME": str(self.project.parent), **env}
        return Engine.open(self.project, memory_dir=str(self.dir), env=base)

    def add(
        self,
        rel: str,
        description: str | None = None,
        *,
        type: str | None = "project",  # noqa: A002 - mirrors the frontmatter key
        name: str | None = None,
        body: str = "",
        age_days: float = 0.5,
        raw: str | None = None,
    ) -> Path:
        path = self.dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw is None:
            lines = ["---"]
            if name:
                lines.append(f"name: {name}")
            if description is not None:
                lines.append(f"description: {description}")
            if type:
                lines.append(f"type: {type}")
            lines += ["---", "", body]
            raw = "\n".join(lines) + "\n"
        path.write_text(raw, encoding="utf-8")
        stamp = self.now - age_days * DAY
        os.utime(path, (stamp, stamp))
        return path


@pytest.fixture
def memory_folder(tmp_path: Path) -> MemoryFolder:
    return MemoryFolder(tmp_path)


@pytest.fixture
def tidy_folder(memory_folder: MemoryFolder) -> MemoryFolder:
    """A small realistic folder: each memory has one obvious topic."""
    f = memory_folder
    f.add(
        "feedback_pnpm.md",
        "Use pnpm for installs; npm rewrites the lockfile",
        type="feedback",
        name="pnpm only",
        age_days=20,
    )
    f.add(
        "project_freeze.md",
        "No production deploys between 2026-12-15 and 2027-01-05",
        name="Holiday freeze",
        age_days=1.2,
    )
    f.add(
        "reference_grafana.md",
        "Grafana board Checkout Golden Signals shows latency",
        type="reference",
        name="Dashboards",
        age_days=40,
    )
    f.add(
        "user_role.md",
        "Senior backend engineer, new to React",
        type="user",
        name="Role",
        age_days=100,
    )
    f.add(
        "feedback_money.md",
        "Money is integer cents, never floats",
        type="feedback",
        name="Money in cents",
        age_days=3,
    )
    f.add(
        "team/reference_oncall.md",
        "Weekly on-call rotation in PagerDuty",
        type="reference",
        name="On-call",
        age_days=5,
    )
    return f
