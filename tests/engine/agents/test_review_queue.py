"""The review queue: proposals as diffs, accept through history, reject, conflicts."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from workbench.engine import Engine
from workbench.engine.agents.review_queue import APPLY_ACTION, ReviewQueue
from workbench.engine.agents.tools import StagedFile
from workbench.engine.errors import (
    ConflictError,
    NotFoundError,
    PathTraversalError,
    RefusedWriteError,
    UserInputError,
)


def staged(path: Path, content: str) -> StagedFile:
    original = path.read_bytes() if path.exists() else None
    return StagedFile(path=str(path), original=original, content=content)


@pytest.fixture
def queue(agent_engine: Engine) -> ReviewQueue:
    return ReviewQueue(agent_engine)


@pytest.fixture
def memory(agent_engine: Engine) -> Path:
    return Path(agent_engine.locations.memory_dir)


def test_proposals_hold_a_diff_and_leave_the_folder_alone(
    queue: ReviewQueue, memory: Path, snapshot_tree
) -> None:
    before = snapshot_tree(memory)
    made = queue.propose(
        [
            staged(memory / "user_role.md", "---\nname: Role\n---\n\nData engineer.\n"),
            staged(
                memory / "MEMORY.md",
                (memory / "MEMORY.md").read_text() + "- [Role](user_role.md) — data engineer\n",
            ),
        ],
        source="extract",
    )
    assert snapshot_tree(memory) == before
    assert [p.kind for p in made] == ["create", "modify"]
    assert made[0].diff.startswith("--- /dev/null\n+++ b/user_role.md\n")
    assert "+- [Role](user_role.md) — data engineer" in made[1].diff
    assert made[1].diff_stats() == (1, 0)
    listed = queue.list()
    assert {p.id for p in listed} == {p.id for p in made}
    assert made[0].group == made[1].group
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in queue.folder.glob("*.json"))


def test_unchanged_files_are_not_proposed(queue: ReviewQueue, memory: Path) -> None:
    same = (memory / "MEMORY.md").read_text()
    assert queue.propose([staged(memory / "MEMORY.md", same)], source="extract") == []


def test_accept_writes_through_history_and_can_be_undone(
    agent_engine: Engine, queue: ReviewQueue, memory: Path
) -> None:
    (proposal,) = queue.propose([staged(memory / "project_x.md", "fact\n")], source="extract")
    result = queue.accept(proposal.id[:8])
    assert (memory / "project_x.md").read_text() == "fact\n"
    assert queue.list() == []
    entry = agent_engine.history.get(result.history_id)
    assert entry.action == APPLY_ACTION
    agent_engine.history.undo(entry.id)
    assert not (memory / "project_x.md").exists()


def test_accept_refuses_when_the_file_changed_since(queue: ReviewQueue, memory: Path) -> None:
    target = memory / "feedback_testing.md"
    (proposal,) = queue.propose([staged(target, "rewritten\n")], source="extract")
    target.write_text("someone else edited this\n")
    with pytest.raises(ConflictError):
        queue.accept(proposal.id)
    assert target.read_text() == "someone else edited this\n"
    assert [p.id for p in queue.list()] == [proposal.id]  # still pending


def test_accept_refuses_when_a_new_file_appeared(queue: ReviewQueue, memory: Path) -> None:
    (proposal,) = queue.propose([staged(memory / "new.md", "mine\n")], source="extract")
    (memory / "new.md").write_text("theirs\n")
    with pytest.raises(ConflictError):
        queue.accept(proposal.id)
    assert (memory / "new.md").read_text() == "theirs\n"


def test_reject_drops_the_proposal_only(queue: ReviewQueue, memory: Path, snapshot_tree) -> None:
    before = snapshot_tree(memory)
    (proposal,) = queue.propose([staged(memory / "x.md", "x\n")], source="dream")
    assert queue.reject(proposal.id).id == proposal.id
    assert queue.list() == []
    assert snapshot_tree(memory) == before
    with pytest.raises(NotFoundError):
        queue.accept(proposal.id)


def test_team_proposal_with_a_secret_is_refused_on_accept(queue: ReviewQueue, memory: Path) -> None:
    token = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (proposal,) = queue.propose(
        [staged(memory / "team" / "ci.md", f"CI token: {token}\n")], source="extract"
    )
    with pytest.raises(RefusedWriteError) as caught:
        queue.accept(proposal.id)
    assert token not in str(caught.value)
    assert not (memory / "team" / "ci.md").exists()


def test_paths_outside_the_folder_are_never_proposed_or_written(
    queue: ReviewQueue, memory: Path, tmp_path: Path
) -> None:
    with pytest.raises(PathTraversalError):
        queue.propose([staged(memory / ".." / "escape.md", "x")], source="extract")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, memory / "link")
    with pytest.raises(PathTraversalError):
        queue.propose([staged(memory / "link" / "x.md", "x")], source="extract")
    assert list(outside.iterdir()) == []


def test_symlink_planted_after_proposal_is_caught_on_accept(
    queue: ReviewQueue, memory: Path, tmp_path: Path
) -> None:
    (memory / "sub").mkdir()
    (proposal,) = queue.propose([staged(memory / "sub" / "x.md", "x\n")], source="extract")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (memory / "sub").rmdir()
    os.symlink(outside, memory / "sub")
    with pytest.raises(PathTraversalError):
        queue.accept(proposal.id)
    assert list(outside.iterdir()) == []


def test_bad_ids(queue: ReviewQueue) -> None:
    with pytest.raises(UserInputError):
        queue.get("../../etc")
    with pytest.raises(NotFoundError):
        queue.get("deadbeef")


def test_corrupt_proposal_files_are_skipped(queue: ReviewQueue, memory: Path) -> None:
    queue.propose([staged(memory / "ok.md", "ok\n")], source="extract")
    (queue.folder / "broken.json").write_text("{not json")
    assert len(queue.list()) == 1


def _race_at_the_check(monkeypatch, rival):  # type: ignore[no-untyped-def]
    """Run `rival()` in another thread the moment accept has hashed the file, and give it
    up to 3 s or until it finds the folder lock held: with the check under the folder lock
    the rival waits for the accept to end."""
    import threading

    import workbench.engine.folder_lock as folder_lock
    from workbench.engine.agents import review_queue

    real = review_queue.sha256_or_none
    outcome: list[str] = []
    blocked = threading.Event()
    """Set when the rival's thread finds the lock held by the accept's."""
    real_process_lock = folder_lock._process_lock

    class Watched:
        def __init__(self, lock) -> None:  # type: ignore[no-untyped-def]
            self.lock = lock

        def acquire(self, timeout: float = -1) -> bool:
            if self.lock.acquire(blocking=False):
                return True
            if threading.current_thread() in racing_threads:
                blocked.set()
            return self.lock.acquire(timeout=timeout)

        def release(self) -> None:
            self.lock.release()

    class WatchedProcessLock:
        def __init__(self, lock) -> None:  # type: ignore[no-untyped-def]
            self.__dict__["_real"] = lock
            self.__dict__["thread_lock"] = Watched(lock.thread_lock)

        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            return getattr(self._real, name)

        def __setattr__(self, name: str, value) -> None:  # type: ignore[no-untyped-def]
            setattr(self._real, name, value)

    monkeypatch.setattr(
        folder_lock, "_process_lock", lambda path: WatchedProcessLock(real_process_lock(path))
    )
    racing_threads: list[threading.Thread] = []

    def rival_run() -> None:
        try:
            rival()
            outcome.append("rival ok")
        except ConflictError:
            outcome.append("rival refused")

    def hashed(data):  # type: ignore[no-untyped-def]
        digest = real(data)
        if not outcome:
            outcome.append("checked")
            thread = threading.Thread(target=rival_run)
            racing_threads.append(thread)
            thread.start()
            # Waiting on the lock is the rival's last step before the accept ends.
            deadline = time.monotonic() + 3
            while thread.is_alive() and not blocked.is_set() and time.monotonic() < deadline:
                thread.join(0.01)
            racing.append(thread)
        return digest

    racing: list[threading.Thread] = []
    monkeypatch.setattr(review_queue, "sha256_or_none", hashed)
    return outcome, racing


def test_a_change_between_the_check_and_the_write_is_never_lost(
    agent_engine: Engine, queue: ReviewQueue, memory: Path, monkeypatch
) -> None:
    target = memory / "feedback_testing.md"
    (proposal,) = queue.propose([staged(target, "the agent's rewrite\n")], source="extract")
    seen = Engine.open(agent_engine.locations.project_root).memories.read(str(target))

    def teammate_save() -> None:  # a fingerprinted save from another engine, as the app does
        other = Engine.open(agent_engine.locations.project_root)
        other.memories.update(str(target), "the user's edit\n", seen.fingerprint)

    outcome, racing = _race_at_the_check(monkeypatch, teammate_save)
    queue.accept(proposal.id)
    racing[0].join(15)
    # The accept checked and wrote as one step; the save then found the file changed.
    assert outcome == ["checked", "rival refused"]
    assert target.read_text() == "the agent's rewrite\n"


def test_two_racing_accepts_of_one_proposal_write_once(
    agent_engine: Engine, queue: ReviewQueue, memory: Path, monkeypatch
) -> None:
    target = memory / "project_x.md"
    (proposal,) = queue.propose([staged(target, "fact\n")], source="extract")

    def second_accept() -> None:
        try:
            ReviewQueue(Engine.open(agent_engine.locations.project_root)).accept(proposal.id)
        except NotFoundError:
            raise ConflictError("already accepted") from None

    outcome, racing = _race_at_the_check(monkeypatch, second_accept)
    queue.accept(proposal.id)
    racing[0].join(15)
    assert outcome == ["checked", "rival refused"]
    writes = [e for e in agent_engine.history.entries(target) if e.action == APPLY_ACTION]
    assert len(writes) == 1 and queue.list() == []


def test_a_new_memory_without_an_index_line_is_flagged(
    agent_engine: Engine, queue: ReviewQueue, memory: Path
) -> None:
    # Accepted alone, a new memory no index line points at is not in the MEMORY.md Claude
    # Code loads: the item says so, until an index edit linking it is queued too.
    new = memory / "user_role.md"
    body = "---\nname: Role\ndescription: backend engineer\ntype: user\n---\n\nGo and SQL.\n"
    queue.propose([staged(new, body)], source="extract")
    (item,) = agent_engine.agents.review_items()
    assert item.unindexed and item.to_json()["unindexed"] is True
    index = memory / "MEMORY.md"
    line = "- [Role](user_role.md) — backend engineer\n"
    queue.propose([staged(index, index.read_text() + line)], source="extract")
    items = {i.path: i for i in agent_engine.agents.review_items()}
    assert not items["user_role.md"].unindexed and not items["MEMORY.md"].unindexed
    # An edit of an indexed memory, or a daily log, is never flagged.
    testing = memory / "feedback_testing.md"
    queue.propose([staged(testing, testing.read_text() + "Also ruff.\n")], source="extract")
    log = memory / "logs" / "2026" / "12" / "2026-12-05.md"
    queue.propose([staged(log, "- 09:00 note\n")], source="extract")
    flagged = [i.path for i in agent_engine.agents.review_items() if i.unindexed]
    assert flagged == []


def test_a_large_proposal_stays_reviewable(queue: ReviewQueue, memory: Path) -> None:
    """A 2.5 MB write makes a proposal file past 4 MiB (content, diff, escapes): it used to
    be skipped when read back, so it was queued yet never listed, shown or rejected."""
    big = "".join(f"line {n} of a long runbook, kept whole\n" for n in range(70_000))
    (proposal,) = queue.propose([staged(memory / "reference_big.md", big)], source="extract")
    stored = next(queue.folder.glob(f"{proposal.id}.json"))
    assert stored.stat().st_size > 4 * 1024 * 1024
    assert [p.id for p in queue.list()] == [proposal.id]
    queue.reject(proposal.id)
    assert queue.list() == []


def test_what_a_proposal_prints_never_holds_a_secret(queue: ReviewQueue, memory: Path) -> None:
    from tests.secretgen import make_token

    token = make_token("github-pat", 7)
    (proposal,) = queue.propose(
        [staged(memory / "private_ci.md", f"the CI token is {token}\n")], source="extract"
    )
    shown = proposal.to_json(with_content=True)
    assert token not in shown["diff"] and token not in shown["content"]
    assert "[REDACTED]" in shown["diff"]
    queue.accept(proposal.id)  # accepting writes what was proposed, as it was proposed
    assert token in (memory / "private_ci.md").read_text()


@pytest.mark.parametrize("mode", ["show", "propose"])
def test_an_agent_runs_changes_show_a_secret_redacted(
    agent_engine: Engine, memory: Path, mode: str
) -> None:
    from tests.secretgen import make_token
    from workbench.engine.agents.fork import settle_writes

    token = make_token("github-pat", 8)
    target = memory / "private_ci.md"
    (change,) = settle_writes(
        agent_engine, [staged(target, f"token {token}\n")], mode=mode, source="extract"
    )
    assert token not in change.diff and token not in str(change.to_json())
