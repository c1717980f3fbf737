"""Pilot tests of the review queue pane over proposals made by the engine.

Proposals are staged with the engine's own API (`engine.agents.review.propose`, what extraction
and dream call), on a shipped sample project. Each test asserts the pane's state and the files
on disk: accepting writes through history (undoable), a changed file or a team secret is
refused with nothing overwritten, rejecting leaves the memory folder alone.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest
from secretgen import make_token
from textual.widgets import OptionList, Static

from tests.ui.conftest import Toasts, settle
from tests.ui.harness import EngineHarness
from workbench.engine import Engine
from workbench.engine.agents.tools import StagedFile
from workbench.ui.panes.review import PANE_ACTIONS, ReviewPane
from workbench.ui.screens.confirm import ConfirmModal
from workbench.ui.widgets.diff_view import DiffView

SIZE = (110, 40)


def snapshot_tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` with a hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def engine(sample_engine) -> Engine:  # type: ignore[no-untyped-def]
    return sample_engine("healthy")


@pytest.fixture
def memory(engine: Engine) -> Path:
    return Path(engine.locations.memory_dir)


def propose(engine: Engine, *files: tuple[str, str], source: str = "extract", note: str = ""):  # type: ignore[no-untyped-def]
    """Queue proposed writes the way extraction does: staged files against the disk."""
    memory = Path(engine.locations.memory_dir)
    staged = []
    for rel, content in files:
        path = memory / rel
        original = path.read_bytes() if path.exists() else None
        staged.append(StagedFile(path=str(path), original=original, content=content))
    made = engine.agents.review.propose(staged, source=source, note=note)
    time.sleep(0.002)  # proposals are ordered by creation time, to the millisecond
    return made


NEW_MEMORY = (
    "feedback_uv.md",
    "---\nname: Use uv\ndescription: The user wants uv, not pip\ntype: feedback\n---\n\n"
    "Install with `uv sync`.\n\n**Why:** faster and locked.\n\n**How to apply:** never pip.\n",
)


def index_with(memory: Path, line: str) -> tuple[str, str]:
    return ("MEMORY.md", (memory / "MEMORY.md").read_text() + line)


async def test_the_queue_lists_proposals_and_shows_the_selected_diff(engine, memory):
    propose(engine, NEW_MEMORY, index_with(memory, "- [Use uv](feedback_uv.md) — uv not pip\n"))
    app = EngineHarness(engine, lambda: ReviewPane(id="review-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ReviewPane)
        assert [p.path for p in pane.proposals] in (
            ["MEMORY.md", "feedback_uv.md"],
            ["feedback_uv.md", "MEMORY.md"],
        )
        assert "2 proposals waiting  ·  2 from extract" in str(
            pane.query_one(".review-summary", Static).render()
        )
        options = pane.query_one(OptionList)
        assert options.option_count == 2 and options.highlighted == 0
        first = pane.proposals[0]
        assert pane.selected_id == first.id

        # Move to the new file: the detail and the diff follow the cursor.
        target = next(i for i, p in enumerate(pane.proposals) if p.path == "feedback_uv.md")
        options.focus()
        options.highlighted = target
        await settle(app, pilot)
        assert pane.selected.path == "feedback_uv.md" and pane.selected.kind == "create"
        detail = str(pane.query_one(".review-detail", Static).render())
        assert "→ feedback_uv.md  private memory (this machine only)" in detail
        assert "a new file (+11 −0), proposed by extract" in detail
        assert "No MEMORY.md line points at it" not in detail  # the queued index edit does
        lines = pane.query_one(DiffView).lines
        assert [line.kind for line in lines[:3]] == ["header", "header", "hunk"]
        assert all(line.kind == "added" for line in lines[3:])
        assert lines[3].text == "---" and lines[3].new == 1


async def test_a_new_memory_no_index_line_points_at_says_so(engine, memory):
    propose(engine, NEW_MEMORY)  # the file alone, as a model that skipped the index leaves it
    app = EngineHarness(engine, lambda: ReviewPane(id="review-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ReviewPane)
        assert pane.selected is not None and pane.selected.unindexed
        detail = str(pane.query_one(".review-detail", Static).render())
        assert "▲ No MEMORY.md line points at it, here or in a queued index edit" in detail


async def test_accept_writes_through_history_and_undo_reverts_it(engine, memory):
    [proposal] = propose(engine, NEW_MEMORY)
    app = EngineHarness(engine, lambda: ReviewPane(id="review-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ReviewPane)
        await pilot.press("a")
        await settle(app, pilot)
        assert (memory / "feedback_uv.md").read_text() == NEW_MEMORY[1]
        assert [(o.summary, o.select) for o in app.applied] == [
            ("accepted the proposed feedback_uv.md", "feedback_uv.md")
        ]
        assert pane.proposals == () and not pane.has_content
        assert engine.agents.review.list() == []
        assert pane.check_action("accept_proposal", ()) is None

    [entry] = [e for e in engine.history.entries() if e.action == "extraction-apply"]
    assert proposal.id in entry.note
    engine.history.undo()
    assert not (memory / "feedback_uv.md").exists()


async def test_a_file_changed_since_is_refused_and_nothing_is_overwritten(engine, memory):
    target = memory / "user_role.md"
    propose(engine, ("user_role.md", target.read_text() + "\nMoved to the data team.\n"))
    app = EngineHarness(engine, lambda: ReviewPane(id="review-pane"))
    toasts = Toasts()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ReviewPane)
        assert not pane.selected.changed_since

        edited = target.read_text() + "\nEdited by hand meanwhile.\n"
        target.write_text(edited)
        await pilot.press("a")
        await settle(app, pilot)

        assert target.read_text() == edited
        [failure] = [t for t in toasts if t.severity == "error"]
        assert failure.title == "Not accepted: user_role.md changed since"
        assert "changed after the agent read it" in failure.message
        assert [(o.summary, o.select) for o in app.applied] == []
        assert len(pane.proposals) == 1 and pane.selected.changed_since
        detail = str(pane.query_one(".review-detail", Static).render())
        assert "The file changed after this was proposed" in detail
        assert pane.query_one(".review-detail").has_class("-blocked")
        assert "▲ changed since" in str(pane.query_one(OptionList).get_option_at_index(0).prompt)


async def test_a_team_secret_is_refused_and_never_shown(engine, memory):
    token = make_token("github-pat", seed="review-pane")
    propose(
        engine,
        ("team/reference_ci.md", f"---\nname: CI\ntype: reference\n---\n\nCI uses {token}.\n"),
        source="dream",
    )
    before = snapshot_tree(memory)
    app = EngineHarness(engine, lambda: ReviewPane(id="review-pane"))
    toasts = Toasts()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ReviewPane)
        selected = pane.selected
        assert selected.scope == "team" and selected.refusal and selected.hidden_secrets == 1
        assert "CI uses [REDACTED]." in selected.diff and token not in repr(pane.proposals)
        detail = str(pane.query_one(".review-detail", Static).render())
        assert "team memory: it syncs to every teammate" in detail
        assert "1 secret in this diff shown as [REDACTED]" in detail

        await pilot.press("a")
        await settle(app, pilot)
        assert snapshot_tree(memory) == before
        [failure] = [t for t in toasts if t.severity == "error"]
        assert failure.title == "Not accepted: team/reference_ci.md would hold a secret"
        assert token not in failure.message
        assert token not in app.export_screenshot()


async def test_reject_drops_the_proposal_and_leaves_the_folder_alone(engine, memory):
    propose(engine, NEW_MEMORY)
    before = snapshot_tree(memory)
    app = EngineHarness(engine, lambda: ReviewPane(id="review-pane"))
    toasts = Toasts()
    async with app.run_test(size=SIZE, notifications=True, message_hook=toasts) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ReviewPane)
        await pilot.press("x")
        await settle(app, pilot)
        assert pane.proposals == () and engine.agents.review.list() == []
        assert [t.message for t in toasts] == ["Rejected feedback_uv.md"]
        assert "review queue is empty" in str(pane.query_one(".pane-empty", Static).render())
    assert snapshot_tree(memory) == before


async def test_accept_all_asks_first_then_accepts_oldest_first(engine, memory):
    propose(engine, NEW_MEMORY)
    propose(engine, index_with(memory, "- [Use uv](feedback_uv.md) — uv not pip\n"))
    app = EngineHarness(engine, lambda: ReviewPane(id="review-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ReviewPane)
        await pilot.press("A")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        await settle(app, pilot)
        assert len(pane.proposals) == 2 and not (memory / "feedback_uv.md").exists()

        await pilot.press("A")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert (memory / "feedback_uv.md").exists()
        assert "feedback_uv.md" in (memory / "MEMORY.md").read_text()
        assert [(o.summary, o.select) for o in app.applied] == [
            ("accepted 2 proposals (feedback_uv.md, MEMORY.md)", None),
        ]
        assert pane.proposals == ()


async def test_reject_all_asks_first_and_keeps_the_folder(engine, memory):
    propose(engine, NEW_MEMORY)
    propose(engine, index_with(memory, "- [Use uv](feedback_uv.md) — uv not pip\n"))
    before = snapshot_tree(memory)
    app = EngineHarness(engine, lambda: ReviewPane(id="review-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ReviewPane)
        await pilot.press("X")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await settle(app, pilot)
        assert pane.proposals == () and engine.agents.review.list() == []
    assert snapshot_tree(memory) == before


async def test_refresh_picks_up_new_proposals(engine, memory):
    app = EngineHarness(engine, lambda: ReviewPane(id="review-pane"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        pane = app.query_one(ReviewPane)
        assert pane.proposals == () and pane.has_class("-empty")
        propose(engine, NEW_MEMORY)
        await pilot.press("f5")
        await settle(app, pilot)
        assert [p.path for p in pane.proposals] == ["feedback_uv.md"]
        assert pane.has_content


def test_actions_are_declared_once_with_unique_ids_and_keys():
    ids = [spec.id for spec in PANE_ACTIONS]
    keys = [spec.keys for spec in PANE_ACTIONS]
    assert len(set(ids)) == len(ids) and len(set(keys)) == len(keys)
    assert all(spec.title.startswith("Review: ") for spec in PANE_ACTIONS)
    bound = {binding.id for binding in ReviewPane.BINDINGS}  # type: ignore[union-attr]
    assert bound == set(ids)
    assert all(hasattr(ReviewPane, f"action_{spec.action}") for spec in PANE_ACTIONS)


def test_diff_lines_are_numbered_and_a_removed_dash_line_is_not_a_header():
    from workbench.ui.widgets.diff_view import parse_unified_diff

    diff = (
        "--- a/notes.md\n+++ b/notes.md\n@@ -1,3 +1,3 @@\n keep\n--- a rule\n+-- a rule\n"
        " tail\n\\ No newline at end of file\n"
    )
    lines = parse_unified_diff(diff)
    assert [(line.kind, line.text, line.old, line.new) for line in lines] == [
        ("header", "--- a/notes.md", None, None),
        ("header", "+++ b/notes.md", None, None),
        ("hunk", "@@ -1,3 +1,3 @@", None, None),
        ("context", "keep", 1, 1),
        ("removed", "-- a rule", 2, None),
        ("added", "-- a rule", None, 2),
        ("context", "tail", 3, 3),
        ("note", "No newline at end of file", None, None),
    ]


def test_ages_and_plurals_read_naturally():
    from workbench.engine.jsutil import js_iso
    from workbench.ui.formatting import plural
    from workbench.ui.panes.review_view import age_text

    now = 1_800_000_000_000
    assert age_text(js_iso(now - 20_000), now) == "just now"
    assert age_text(js_iso(now - 5 * 60_000), now) == "5 min ago"
    assert age_text(js_iso(now - 3 * 3_600_000), now) == "3 h ago"
    assert age_text(js_iso(now - 3 * 86_400_000), now) == "3 days ago"
    assert age_text("not a time", now) == "not a time"
    assert [plural(1, "entry"), plural(2, "entry"), plural(2, "day"), plural(0, "file")] == [
        "1 entry",
        "2 entries",
        "2 days",
        "0 files",
    ]
