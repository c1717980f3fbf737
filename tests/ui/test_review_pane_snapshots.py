"""SVG snapshots of the review queue pane, fed deterministic proposals (dark and light).

The proposals are engine `Proposal` objects with diffs made by the engine's own
`unified_diff`; one carries a secret generated at run time (tests/secretgen), which the pane
shows redacted. Times are fixed offsets from a fixed "now".
"""

from __future__ import annotations

import pytest
from secretgen import make_token

from tests.ui.harness import PaneHarness
from workbench.engine.agents.models import ReviewItem
from workbench.engine.agents.review_queue import Proposal, unified_diff
from workbench.engine.jsutil import js_iso
from workbench.ui.panes.review import ReviewPane

NOW_MS = 1_800_000_000_000
SIZE = (100, 38)

TESTS_BEFORE = """---
name: Integration tests hit a real database
description: Never mock the database in integration tests
type: feedback
---

Integration tests must use the docker Postgres.

**Why:** a mocked migration hid a broken schema.

**How to apply:** start `make db` before `pytest -m integration`.
"""


def edited_testing_memory() -> str:
    token = make_token("github-pat", seed="review-snapshot")
    return TESTS_BEFORE.replace(
        "start `make db` before `pytest -m integration`.",
        "run `make db` first; CI pulls the image with the bot token\n"
        f"{token} (ask the user to move it to the vault).",
    ).replace(
        "a mocked migration hid a broken schema.",
        "a mocked migration hid a broken schema in 2025-11.",
    )


def proposal(
    pid: str,
    path: str,
    before: str | None,
    after: str,
    *,
    minutes_ago: float,
    source: str = "extract",
    note: str = "",
) -> Proposal:
    scope = "team" if path.startswith("team/") else "private"
    return Proposal(
        id=pid,
        created=js_iso(NOW_MS - minutes_ago * 60_000),
        source=source,
        abs_path=f"/m/{path}",
        path=path,
        scope=scope,
        base_sha256=None if before is None else "0" * 64,
        content=after,
        diff=unified_diff(before, after, path),
        note=note,
        group="3f9a2c1b" if source == "extract" else "d41e07aa",
    )


def queue() -> tuple[ReviewItem, ...]:
    index_before = (
        "- [User role](user_role.md) — staff engineer, payments\n"
        "- [Integration tests](feedback_integration_tests.md) — no DB mocks\n"
    )
    return (
        ReviewItem.from_proposal(
            proposal(
                "19b2c4e5f00-a1b2c3",
                "feedback_integration_tests.md",
                TESTS_BEFORE,
                edited_testing_memory(),
                minutes_ago=3,
                note="The user corrected how the integration database starts.",
            )
        ),
        ReviewItem.from_proposal(
            proposal(
                "19b2c4e5e00-d4e5f6",
                "feedback_uv.md",
                None,
                "---\nname: Use uv\ndescription: uv, not pip\ntype: feedback\n---\n\n"
                "Install with `uv sync`.\n",
                minutes_ago=3,
            )
        ),
        ReviewItem.from_proposal(
            proposal(
                "19b2c4e5d00-0718aa",
                "MEMORY.md",
                index_before,
                index_before + "- [Use uv](feedback_uv.md) — uv not pip\n",
                minutes_ago=3,
            )
        ),
        ReviewItem.from_proposal(
            proposal(
                "19b2c1a0000-99aa01",
                "team/project_api_v2.md",
                "---\nname: API v2\ntype: project\n---\n\nThe v2 API ships in Q2.\n",
                "---\nname: API v2\ntype: project\n---\n\nThe v2 API ships in March; "
                "v1 stays up until June.\n",
                minutes_ago=150,
                source="dream",
            ),
            changed_since=True,
        ),
    )


def pane() -> ReviewPane:
    return ReviewPane(proposals=queue(), now_ms=lambda: NOW_MS, id="review-pane")


@pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
def test_review_pane_with_an_edit_and_a_redacted_secret(snap_compare, theme: str):
    assert snap_compare(PaneHarness(pane, theme=theme), terminal_size=SIZE)


def test_review_pane_team_proposal_changed_since(snap_compare):
    async def pick_team(pilot) -> None:  # type: ignore[no-untyped-def]
        from textual.widgets import OptionList

        options = pilot.app.query_one(OptionList)
        options.focus()
        options.highlighted = 3
        await pilot.pause()

    app = PaneHarness(pane, theme="workbench-light")
    assert snap_compare(app, terminal_size=(100, 30), run_before=pick_team)


def test_review_pane_empty(snap_compare):
    app = PaneHarness(lambda: ReviewPane(proposals=(), id="review-pane"))
    assert snap_compare(app, terminal_size=(80, 16))
