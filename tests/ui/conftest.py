"""UI fixtures: a small memory project laid out where Claude Code keeps it, and the app built
with the same factory the CLI uses, with watchers, blinking and animation off."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.app import App
from textual.keys import KEY_NAME_REPLACEMENTS
from textual.worker import WorkerCancelled, WorkerFailed

from tests.ui.harness import TEST_SETTINGS
from tests.ui.snapshot_names import record_snapshot_names
from workbench.engine import Engine
from workbench.ui.app import WorkbenchApp, make_app

DAY = 86_400

MEMORIES: dict[str, tuple[float, str]] = {
    "user_role.md": (
        2,
        "---\nname: User role\ndescription: Staff engineer on the payments team, prefers Go\n"
        "type: user\n---\n\nThe user is a staff engineer who owns the checkout service.\n",
    ),
    "feedback_testing.md": (
        5,
        "---\nname: Integration tests hit a real database\ndescription: Never mock the database in "
        "integration tests\ntype: feedback\n---\n\nIntegration tests must use the docker Postgres.\n\n"
        "**Why:** a mocked migration hid a broken schema in 2025-11.\n\n"
        "**How to apply:** start `make db` before `pytest -m integration`.\n",
    ),
    "project_freeze.md": (
        47,
        "---\nname: Release freeze\ndescription: Merge freeze for the mobile release\n"
        "type: project\n---\n\nNo merges to main after Thursday.\n",
    ),
    "reference_dashboards.md": (
        12,
        "---\nname: Grafana boards\ndescription: Where checkout latency is graphed\n"
        "type: reference\n---\n\nSee the `checkout-latency` board in Grafana.\n",
    ),
    "notes_unindexed.md": (
        1,
        "---\nname: Loose note\ndescription: Nobody linked this one\ntype: project\n---\n\n"
        "A note without an index line.\n\n**Why:** testing.\n\n**How to apply:** never.\n",
    ),
    "team/project_deploy.md": (
        3,
        "---\nname: Deploy windows\ndescription: Deploys happen Tuesday and Thursday mornings\n"
        "type: project\n---\n\nDeploy windows are 09:00-11:00 UTC.\n\n**Why:** on-call cover.\n\n"
        "**How to apply:** schedule releases inside a window.\n",
    ),
    "logs/2026/03/2026-03-02.md": (4, "- Looked into the flaky checkout test.\n"),
}

INDEX = (
    "- [User role](user_role.md) — staff engineer, payments\n"
    "- [Integration tests hit a real database](feedback_testing.md) — no DB mocks\n"
    "- [Release freeze](project_freeze.md) — mobile release freeze\n"
    "- [Grafana boards](reference_dashboards.md) — latency boards\n"
    "- [Old runbook](runbook_old.md) — this file was deleted\n"
)
TEAM_INDEX = "- [Deploy windows](project_deploy.md) — Tuesday and Thursday mornings\n"


@dataclass(frozen=True)
class MemoryProject:
    """A project with memories where Claude Code keeps them."""

    root: Path
    config_home: Path
    memory_dir: Path
    now: float

    def engine(self) -> Engine:
        """A fresh engine with the store's clock fixed to `now`."""
        engine = Engine.open(self.root, config_home=str(self.config_home))
        engine.memories.now_ms = self.now * 1000
        return engine


def fixed_now() -> float:
    """A "now" for ages: whole seconds, so file mtimes hold it exactly and ages never drift."""
    return float(int(time.time()))


@pytest.fixture(autouse=True)
def colour_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root conftest sets NO_COLOR for CLI output; the app's snapshots need colour."""
    monkeypatch.delenv("NO_COLOR", raising=False)


def build_project(base: Path, *, index: str = INDEX, now: float | None = None) -> MemoryProject:
    """Write the fixture project under `base` with ages relative to `now`."""
    now = now if now is not None else fixed_now()
    root = base / "checkout-service"
    (root / ".git").mkdir(parents=True)
    config_home = base / "claude"
    engine = Engine.open(root, config_home=str(config_home))
    memory_dir = Path(engine.locations.memory_dir)
    for rel, (age_days, text) in MEMORIES.items():
        path = memory_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        stamp = now - age_days * DAY
        os.utime(path, (stamp, stamp))
    (memory_dir / "MEMORY.md").write_text(index, encoding="utf-8")
    (memory_dir / "team" / "MEMORY.md").write_text(TEAM_INDEX, encoding="utf-8")
    return MemoryProject(root, config_home, memory_dir, now)


def long_index(lines: int = 230) -> str:
    """An index past the 200-line cut: the fixture's lines, then filler entries."""
    filler = "".join(
        f"- [Note {n}](user_role.md) — filler entry number {n} to push the index past the cut\n"
        for n in range(1, lines - 4)
    )
    return INDEX + filler


@pytest.fixture
def memory_project(tmp_path: Path) -> MemoryProject:
    """The fixture project with a short index (one dangling link, one orphan)."""
    return build_project(tmp_path)


@pytest.fixture
def app_factory():
    """Build the app as the CLI does, with test settings and a fixed clock."""

    def build(project: MemoryProject, **settings: object) -> WorkbenchApp:
        engine = project.engine()
        return make_app(engine, TEST_SETTINGS.replace(**settings), now=project.now)

    return build


# Workers that wait on the user (a modal) or run for the app's lifetime (the file watchers).
OPEN_ENDED_GROUPS = ("ask", "review-ask", "watch")


async def settle(app: App[Any], pilot, *, skip: tuple[str, ...] = OPEN_ENDED_GROUPS) -> None:  # type: ignore[no-untyped-def]
    """The one settle helper of the pilot tests: let every worker outside `skip` finish and
    the screen catch up (by default never waits on open-ended workers).

    Quiet means quiet three rounds running, each round letting every node handle what is
    queued and the screen update (a pane shown by one update starts its loading worker on the
    Show event that update sends). Those rounds take no idle wait: one at the end covers what
    a thread hands back through the event loop. `Pilot.pause()` in every round cost 20 ms or
    more each, a fifth of the UI tests' time.
    """
    quiet = 0
    for _ in range(200):
        busy = [w for w in app.workers if not w.is_finished and w.group not in skip]
        if busy:
            quiet = 0
            await asyncio.wait([asyncio.ensure_future(_finished(w)) for w in busy], timeout=10)
        await pilot.pause(0)
        if any(not w.is_finished and w.group not in skip for w in app.workers):
            quiet = 0
            continue
        quiet += 1
        if quiet == 3:
            break
    await pilot.pause()


async def type_text(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    """Type `text` where the focus is, in one go, then settle once.

    Each character goes to the app as the key event a terminal sends for it, back to back.
    `Pilot.press` waits for the app to go idle after every key (40 ms or more a key); a test
    about the typed result need not, and keys that move the focus still go through `press`.
    """
    app = pilot.app
    for character in text:
        key = events.Key(key_name(character), character)
        key.set_sender(app)
        app.post_message(key)
    await settle(app, pilot)


def key_name(character: str) -> str:
    """The key a terminal reports for a printable character (`/` is `slash`, ` ` `space`)."""
    if character.isalnum():
        return character
    name = unicodedata.name(character).lower().replace("-", "_").replace(" ", "_")
    return KEY_NAME_REPLACEMENTS.get(name, name)


async def wait_until(pilot, condition: Callable[[], object], timeout: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    """Pause until `condition()` holds, for what runs on its own clock (a watcher, a thread);
    fails the test after `timeout` seconds, a generous bound rather than a speed."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the app"
        await pilot.pause(0.05)
    return True


async def _finished(worker) -> None:  # type: ignore[no-untyped-def]
    with contextlib.suppress(WorkerCancelled, WorkerFailed):
        await worker.wait()


class Toasts(list):  # type: ignore[type-arg]
    """A `message_hook` that keeps every notification the app shows."""

    def __call__(self, message: object) -> None:
        from textual.notifications import Notify

        if isinstance(message, Notify):
            self.append(message.notification)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Before `-k` or `-m` deselect any: the snapshot names the collected tests would use."""
    record_snapshot_names(config, items)
